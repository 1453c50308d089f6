// Packet statistics of canonical BSP workloads through the protocol engine and the simulated
// network, in the shape of [DHS99] Table 5, plus the engine's own CPU cost per packet and the
// issue's targets, checked on the symmetric total exchange with 0.1% loss:
//   explicit acknowledgements < 2% of data packets, spurious retransmissions < 0.5%, and with
//   2 rails every retransmission explained by a real loss (no retransmission arrives twice).
//
// Usage: engine_table [--no-cost] [supersteps-scale]
//   The packet counts are deterministic; the exit status is 0 iff every run delivered
//   everything and the targets hold (ctest runs it with --no-cost). The CPU cost is printed
//   only, never asserted.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "bsp_workload.hpp"

using namespace bspsim;

namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint32_t kFrag = 1500 - BSPE_HDR_LEN;  // payload of an Ethernet MTU

bspe_cfg bench_cfg(int p) {
    bspe_cfg c;
    bspe_cfg_default(&c);
    c.max_chans = 16;
    c.frag_size = kFrag;
    c.max_msg = 1 << 20;
    c.snd_wnd = 256;
    c.rcv_wnd = 256;
    c.msg_wnd = 64;
    c.sndbuf_pkts = 1024;
    c.rcvbuf = 4 << 20;
    c.nprocs = static_cast<uint32_t>(p);
    c.rtt_init_ns = 50 * kUs;
    c.rtt_min_ns = 10 * kUs;
    c.rtt_max_ns = 10 * kMs;
    c.rto_min_ns = 20 * kMs;
    c.prod_max_ns = 50 * kMs;
    c.unreach_ns = 10000 * kMs;
    c.flags = BSPE_CFG_CSUM;
    return c;
}

struct Row {
    std::string name;
    int p, rails;
    double loss;
    bool ok;
    uint64_t data_tx, recvd, acks, drops, dups, implicit, retx, spurious, lost, prods, timeouts;
};

Row run(const std::string &name, const Workload &w, int p, int rails, double loss, uint64_t seed) {
    NetCfg n;
    n.nodes = p;
    n.rails = rails;
    n.seed = seed;
    n.rail.resize(rails);
    for (auto &r : n.rail) {
        r.gbps = 10;
        r.latency_ns = 5 * kUs;
        r.buffer_bytes = 1 << 20;
        r.faults.loss = loss;
    }
    Sim sim(n, bench_cfg(p));
    BspRun bsp(sim, w);
    Row r{name, p, rails, loss, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    r.ok = bsp.run(1000000 * kMs) && sim.verify_all_delivered().empty();
    bspe_stats t = sim.total_stats();
    r.data_tx = t.data_tx;
    r.recvd = t.data_rx;
    r.acks = t.acks_tx;
    for (uint64_t d : t.drops)
        r.drops += d;
    r.dups = t.dup_rx;
    r.implicit = t.acked_implicit;
    r.retx = t.retx_hole + t.retx_prod + t.retx_timeout + t.retx_failover;
    r.spurious = t.spurious_rx;
    r.lost = sim.wire().data_lost;
    r.prods = t.prods_tx;
    r.timeouts = t.timeouts;
    return r;
}

double pct(uint64_t a, uint64_t b) {
    return b ? 100.0 * double(a) / double(b) : 0;
}

void print(const Row &r) {
    std::printf(
        "%-15s %2d %5d %6.1f%% %9lu %8.2f%% %6lu %6lu %8.2f%% %6lu %6lu %7.2f%% %6lu %6lu %s\n",
        r.name.c_str(), r.p, r.rails, r.loss * 100, (unsigned long)r.recvd, pct(r.acks, r.data_tx),
        (unsigned long)r.drops, (unsigned long)r.dups, pct(r.implicit, r.data_tx),
        (unsigned long)r.retx, (unsigned long)r.lost, pct(r.spurious, r.data_tx),
        (unsigned long)r.prods, (unsigned long)r.timeouts, r.ok ? "ok" : "FAILED");
}

// ---------------------------------------------------------------------------------------------
// Engine CPU cost without the simulator: two endpoints in one thread, packets handed over
// directly, thread CPU time of the whole loop minus the same loop's byte copies.

uint64_t thread_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ULL + uint64_t(ts.tv_nsec);
}

struct Wire {
    struct P {
        uint8_t rail;
        uint32_t len;
        uint8_t bytes[1500];
    };
    std::vector<P> q;
    size_t head = 0;
    const std::vector<uint8_t> *msg = nullptr;
    const bspe_ep *ep = nullptr;
    std::vector<uint8_t> rx;
    uint64_t done = 0;
};

void w_xmit(void *ctx, const bspe_xmit *x) {
    auto *w = static_cast<Wire *>(ctx);
    Wire::P &p = w->q.emplace_back();
    p.rail = x->rail;
    p.len = BSPE_HDR_LEN + x->len;
    std::memcpy(p.bytes, x->hdr, BSPE_HDR_LEN);
    if (x->len)
        std::memcpy(p.bytes + BSPE_HDR_LEN, w->msg->data() + x->off, x->len);
    bspe_seal(w->ep, p.bytes, p.bytes + BSPE_HDR_LEN, x->len);
}
int w_rx(void *ctx, const bspe_rx_frag *f) {
    auto *w = static_cast<Wire *>(ctx);
    std::memcpy(w->rx.data() + f->off, f->data, f->len);
    return 0;
}
void w_deliver(void *, const bspe_delivery *) {}
void w_complete(void *ctx, void *, int) {
    static_cast<Wire *>(ctx)->done++;
}
void w_timer(void *, uint64_t) {}
void *w_chan_alloc(void *, size_t size) {
    return std::calloc(1, size);
}
void w_chan_free(void *, void *mem, size_t) {
    std::free(mem);
}
const bspe_ops kWireOps = {w_xmit,  w_rx,         w_deliver,   nullptr, w_complete, w_timer,
                           nullptr, w_chan_alloc, w_chan_free, nullptr, nullptr};

// Returns ns of engine CPU per data packet (its transmission plus its reception).
double engine_cost(int rails, bool csum, uint64_t *pkts_out) {
    bspe_cfg c = bench_cfg(2);
    c.nrails = static_cast<uint8_t>(rails);
    c.flags = csum ? BSPE_CFG_CSUM : 0;
    const uint32_t msg_len = 64 * 1024;
    std::vector<uint8_t> msg(msg_len, 0x5a);
    Wire wa, wb;
    wa.msg = wb.msg = &msg;
    wa.rx.resize(msg_len);
    wb.rx.resize(msg_len);
    wa.q.reserve(4096);
    wb.q.reserve(4096);
    std::vector<uint64_t> ma(bspe_mem_size(&c) / 8 + 1), mb(ma.size());
    c.node = 0;
    bspe_ep *a = bspe_init(ma.data(), ma.size() * 8, &c, &kWireOps, &wa);
    c.node = 1;
    bspe_ep *b = bspe_init(mb.data(), mb.size() * 8, &c, &kWireOps, &wb);
    wa.ep = a;
    wb.ep = b;
    int ca = bspe_chan_open(a, 1, 0, BSPE_CHAN_GROUP, nullptr);
    bspe_chan_open(b, 0, 0, BSPE_CHAN_GROUP, nullptr);
    const uint64_t nmsgs = 2000;
    uint64_t sent = 0, now = 1, t0 = thread_ns();
    uint32_t epoch = 0;
    while (wa.done < nmsgs) {
        while (sent < nmsgs && bspe_send(a, ca, &msg, msg_len, 0, now) == 0)
            sent++;
        bool moved = false;
        for (; wa.head < wa.q.size(); wa.head++, moved = true)
            bspe_rx(b, wa.q[wa.head].rail, wa.q[wa.head].bytes, wa.q[wa.head].len, now);
        wa.q.clear();  // everything b's answers make a send is appended after this
        wa.head = 0;
        for (; wb.head < wb.q.size(); wb.head++, moved = true)
            bspe_rx(a, wb.q[wb.head].rail, wb.q[wb.head].bytes, wb.q[wb.head].len, now);
        wb.q.clear();
        wb.head = 0;
        bspe_rx_consumed(b, 1u << 30, now);
        now += 1000;
        if (!moved) {  // a superstep ends: the epoch rule settles what is left
            epoch++;
            bspe_superstep_done(a, epoch, now);
            bspe_superstep_done(b, epoch, now);
        }
    }
    uint64_t total = thread_ns() - t0;
    bspe_stats sa, sb;
    bspe_stats_get(a, -1, -1, &sa);
    bspe_stats_get(b, -1, -1, &sb);
    uint64_t pkts = sa.data_tx;
    // the caller's share: copy in (xmit), checksum fill, copy out (rx_data), per packet
    std::vector<uint8_t> buf(1500), out(msg_len);
    reinterpret_cast<bspe_hdr *>(buf.data())->flags = bspe_htons(BSPE_F_CSUM);
    uint64_t t1 = thread_ns();
    for (uint64_t i = 0; i < pkts; i++) {
        std::memcpy(buf.data() + BSPE_HDR_LEN, msg.data() + (i % 40) * kFrag, kFrag);
        if (csum)
            bspe_seal(a, buf.data(), buf.data() + BSPE_HDR_LEN, kFrag);
        std::memcpy(out.data() + (i % 40) * kFrag, buf.data() + BSPE_HDR_LEN, kFrag);
        asm volatile("" : : "r"(buf.data()), "r"(out.data()) : "memory");
    }
    uint64_t copies = thread_ns() - t1;
    bspe_fini(a);
    bspe_fini(b);
    *pkts_out = pkts;
    return double(total > copies ? total - copies : 0) / double(pkts);
}

}  // namespace

int main(int argc, char **argv) {
    int scale = 1;
    bool cost = true;
    for (int i = 1; i < argc; i++) {
        if (std::string(argv[i]) == "--no-cost")
            cost = false;  // counts only: deterministic, used as a CI check
        else
            scale = std::max(1, std::atoi(argv[i]));
    }
    const int p = 8;
    struct W {
        std::string name;
        Workload w;
    } loads[] = {
        {"total-exchange", total_exchange(10 * scale, 2, 16384)},
        {"cyclic-shift", cyclic_shift(10 * scale, 8, 16384, p)},
        {"LU-like", lu_like(20 * scale, 64, 200, p)},
    };
    std::printf(
        "AF_BSP protocol engine over the simulated network: 10 Gb/s links, 5 us latency,\n"
        "1 MiB switch buffers, 1428-byte fragments, checksums on. Recvd = data packets\n"
        "accepted; ExplAck/ImplAck/Spur as %% of data packets sent; Retx = all causes;\n"
        "Lost = data packets the network really lost; Prods, TOs = prods and sender\n"
        "timeouts (one probe each; bsp_end's barrier messages end on one per link).\n\n");
    std::printf("%-15s %2s %5s %7s %9s %9s %6s %6s %9s %6s %6s %8s %6s %6s\n", "workload", "p",
                "rails", "loss", "Recvd", "ExplAck", "Drops", "Dups", "ImplAck", "Retx", "Lost",
                "Spur", "Prods", "TOs");
    Row te01[3] = {};
    for (auto &l : loads)
        for (int rails : {1, 2})
            for (double loss : {0.0, 0.001, 0.01}) {
                Row r = run(l.name, l.w, p, rails, loss, 42);
                print(r);
                if (l.name == "total-exchange" && loss == 0.001)
                    te01[rails] = r;
            }
    std::printf("\nTargets (symmetric total exchange, p=8, 0.1%% loss):\n");
    bool all = true;
    for (int rails : {1, 2}) {
        const Row &r = te01[rails];
        bool a = pct(r.acks, r.data_tx) < 2.0;
        bool s = pct(r.spurious, r.data_tx) < 0.5;
        std::printf(
            "  %d rail%s: explicit acks %.2f%% < 2%%: %s; spurious retransmissions %.2f%% "
            "< 0.5%%: %s\n",
            rails, rails > 1 ? "s" : " ", pct(r.acks, r.data_tx), a ? "PASS" : "FAIL",
            pct(r.spurious, r.data_tx), s ? "PASS" : "FAIL");
        all = all && a && s && r.ok;
    }
    const Row &r2 = te01[2];
    bool explained = r2.spurious == 0 && r2.retx <= r2.lost;
    std::printf(
        "  2 rails: every retransmission explained by a real loss (%lu retransmissions, "
        "%lu data packets lost, %lu received twice): %s\n",
        (unsigned long)r2.retx, (unsigned long)r2.lost, (unsigned long)r2.spurious,
        explained ? "PASS" : "FAIL");
    all = all && explained;
    if (!cost)
        return all ? 0 : 1;
    std::printf(
        "\nEngine CPU cost per data packet (its transmission + its reception, thread CPU\n"
        "time, two endpoints in one thread, 64 KiB messages, caller's byte copies\n"
        "subtracted; best of 5):\n");
    for (int rails : {1, 2})
        for (bool csum : {false, true}) {
            double best = 1e18;
            uint64_t pkts = 0;
            for (int rep = 0; rep < 5; rep++)
                best = std::min(best, engine_cost(rails, csum, &pkts));
            std::printf("  %d rail%s, checksum %-3s: %6.0f ns/packet (%lu packets)\n", rails,
                        rails > 1 ? "s" : " ", csum ? "on" : "off", best, (unsigned long)pkts);
        }
    return all ? 0 : 1;
}
