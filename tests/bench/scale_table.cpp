// How AF_BSP's cost grows with p: the protocol engine under the BSPlib messaging layer's traffic
// (tests/sim/msg_layer.hpp: butterfly barrier, total exchange of counts, latin-square schedule,
// pacing) on the simulated network, for p = 8 .. 1024 nodes x 1, 2, 4 rails, a total exchange
// and a sparse pattern of h = 64 KiB per process, at 0 % and 0.1 % loss. One row per
// configuration: time per superstep against the cost model's h.g + l, explicit acknowledgements
// per data packet, retransmissions, engine memory per node and engine CPU per packet, measured
// in the same run. Documentation/testing.rst ("Scale") explains the columns and the figures.
//
// Usage: scale_table [-p 8,64,256,1024] [-r 1,2,4] [-l 0,0.001] [-w total,sparse]
//                    [-s supersteps] [-h bytes] [-m GiB] [-S pkts] [-R seed] [-B] [-T]
// -m: a configuration whose nodes' channels would hold more than this much memory together in
// this one process in their base allocations (default 8 GiB) is skipped with a note.
// -S: the engine's send budget, sndbuf_pkts (default the module's: 4 per channel of the
// ceiling, at least 1024): a total exchange holds 2 (p - 1) packets or more until the next
// barrier.
// -R: the seed of the simulated network's random numbers (default 42): which packets are lost.
// A change to the engine moves every later loss, so compare over several seeds.
// -T: trace loss recovery and sender timeouts after each row (Documentation/testing.rst,
// "Scale"); BSP_TRACE_PAIR=a,b and BSP_TRACE_SLOW=1 in the environment add packet detail.
// -B: no process expects its barrier partner's message (bspe_expect), as libbsp's messaging
// layer did before it did: what expecting changes under loss.
// -F: every data stream after all of the process's counts arrived, as libbsp did before
// streams followed counts (and still does in a superstep with get requests).
// -E: with streams following counts, a sender's stream is expected once every count is here
// (as libbsp did before 30 Nov 2026), not as soon as its own count message is.
// Exit status 0 iff every run delivered every message exactly once and intact; the targets are
// printed, never asserted (a benchmark, not a test).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "msg_layer.hpp"

using namespace bspsim;

namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
double g_gbps = 10;                     // -g: link rate per rail
uint64_t g_latency = 5 * kUs;           // -L: one way, per hop pair (sim RailCfg::latency_ns)
uint64_t g_buffer = uint64_t(1) << 20;  // -q: bytes per egress queue and switch output port
bool g_module_timers = false;           // -K: the module's timer constants (bspe_cfg_default)

// The AF_BSP module's engine configuration (kernel/transport.c), with max_chans = p (the
// BSP_CHANNELS ceiling a BSPlib job sets) and the timer constants of engine_table.
bspe_cfg scale_cfg(int p) {
    bspe_cfg c;
    bspe_cfg_default(&c);
    c.max_chans = static_cast<uint16_t>(p);
    c.sndbuf_pkts = std::max<uint32_t>(c.sndbuf_pkts, 8 * c.max_chans);  // as the module sets it
    c.frag_size = 1500 - BSPE_HDR_LEN;
    c.max_msg = 1 << 20;
    c.nprocs = static_cast<uint32_t>(p);
    if (!g_module_timers) {
        c.rtt_init_ns = 50 * kUs;
        c.rtt_min_ns = 10 * kUs;
        c.rtt_max_ns = 10 * kMs;
        c.rto_min_ns = 20 * kMs;
        c.prod_max_ns = 50 * kMs;
    }
    c.unreach_ns = 10000 * kMs;
    c.flags = BSPE_CFG_CSUM;
    return c;
}

// Peak resident memory of this process so far (KiB): the simulated cluster's engines, the
// simulator's own state, and whatever earlier rows left in the allocator.
long peak_rss_kib() {
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

uint64_t cpu_ns() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ULL + uint64_t(ts.tv_nsec);
}

struct Row {
    std::string pattern;
    int p = 0, rails = 0;
    double loss = 0;
    bool ok = false;
    std::string err;
    double t_us = 0, model_us = 0, ratio = 0;
    double barrier_b = 0;  // barrier bytes a process sends per superstep
    double acks_per_data = 0;
    double acks_np_per_data = 0;  // the same without the answers to timeout probes
    uint64_t data_tx = 0, acks = 0, retx = 0, lost = 0, timeouts = 0;
    uint64_t prods = 0, prods_early = 0;  // PROD packets sent; answered "nothing"
    uint64_t mem_max = 0, chans_max = 0;
    double ns_per_pkt = 0;
    double wall_s = 0;
    long rss_mib = 0;  // peak RSS of the process after the run
};

bool g_expect_barrier = true;   // -B: false
bool g_follow = true;           // -F: false
bool g_expect_at_count = true;  // -E: false
bool g_trace = false;           // -T: trace loss recovery and sender timeouts

// -T: what happened to every lost packet and every sender timeout of a run, and which message
// ended each phase of each superstep last (the critical path), printed after the row.
class Trace {
  public:
    Trace(Sim &sim, MsgLayerRun &bsp) : sim_(sim) {
        if (const char *e = std::getenv("BSP_TRACE_PAIR"))
            std::sscanf(e, "%d,%d", &pair_[0], &pair_[1]);
        sim.on_lost = [this](const WirePkt &w) { lost(w); };
        sim.tap = [this](const WirePkt &w) { sent(w); };
        bsp.on_phase = [this](int i, int s, int phase, uint64_t t, int src, char tag) {
            ends_[{s, phase}].push_back(t);
            Last &l = last_[{s, phase}];
            if (t >= l.t)
                l = Last{t, i, src, tag};
        };
    }
    void print() const;

  private:
    static constexpr int kKinds = 5;   // barrier, count, data, end of job, control
    static constexpr int kCauses = 3;  // hole, prod, timeout (of the resend that arrived)
    struct Loss {
        uint64_t t = 0;       // first loss
        uint64_t resent = 0;  // the last resend so far
        int cause = -1;       // of the last resend
        int kind = 0;
        int resends = 0, lost = 1;
    };
    struct Last {
        uint64_t t = 0;
        int i = -1, src = -1;
        char tag = 0;
    };
    struct Prev {
        uint64_t hole = 0, prod = 0, timeout = 0, timeouts = 0;
    };
    using Key = std::tuple<int, int, int, uint32_t>;  // src, dst, rail, seq
    static int kind_of(const WirePkt &w) {
        if (w.type != BSPE_T_DATA)
            return 4;
        if ((w.flags & (BSPE_F_SYNC | BSPE_F_LAST)) == (BSPE_F_SYNC | BSPE_F_LAST))
            return 3;
        if (w.flags & BSPE_F_SYNC)
            return 0;
        return w.msg_len == 33 ? 1 : 2;
    }
    void lost(const WirePkt &w) {
        show("LOST", w);
        int k = kind_of(w);
        if (k == 4) {
            ctrl_lost_[w.type == BSPE_T_PROD      ? 0
                       : (w.flags & BSPE_F_REPLY) ? 2
                       : (w.flags & BSPE_F_PROBE) ? 1
                                                  : 3]++;
            return;
        }
        Key key{w.src, w.dst, w.rail, w.seq};
        auto it = losses_.find(key);
        if (it == losses_.end())
            losses_[key] = Loss{sim_.now(), 0, -1, k, 0, 1};
        else
            it->second.lost++;
    }
    // -T with BSP_TRACE_PAIR=a,b in the environment: every packet between a and b.
    void show(const char *what, const WirePkt &w) const {
        if (!((w.src == pair_[0] && w.dst == pair_[1]) || (w.src == pair_[1] && w.dst == pair_[0])))
            return;
        std::printf(
            "    %10.3f us %s %d->%d r%d type %d flags %#x seq %u ack %u eoh %u ep %u len %u\n",
            double(sim_.now()) / 1e3, what, w.src, w.dst, w.rail, w.type, w.flags, w.seq, w.ack,
            w.eoh, w.epoch, w.msg_len);
    }
    void sent(const WirePkt &w) {
        show("sent", w);
        classify_prod(w);
        bool probe = w.type == BSPE_T_ACK && (w.flags & BSPE_F_PROBE) && !(w.flags & BSPE_F_REPLY);
        bool retx = w.type == BSPE_T_DATA && (w.flags & BSPE_F_RETX);
        if (!probe && !retx)
            return;
        bspe_stats st = sim_.node(w.src).stats(w.dst, w.rail);
        Prev &pv = prev_[{w.src, w.dst, w.rail}];
        if (probe) {
            if (st.timeouts != pv.timeouts) {
                // a sender timeout: does its (channel, rail) hold a loss not yet resent?
                bool pending = false;
                for (auto it = losses_.lower_bound(Key{w.src, w.dst, w.rail, 0});
                     it != losses_.end() && std::get<0>(it->first) == w.src &&
                     std::get<1>(it->first) == w.dst && std::get<2>(it->first) == w.rail;
                     ++it)
                    pending = pending || it->second.resends < it->second.lost;
                (pending ? to_loss_ : to_wait_)++;
                to_times_.push_back(sim_.now());
            } else {
                checks_++;
            }
            pv.timeouts = st.timeouts;
            return;
        }
        int cause = st.retx_timeout != pv.timeout ? 2 : st.retx_prod != pv.prod ? 1 : 0;
        pv.hole = st.retx_hole;
        pv.prod = st.retx_prod;
        pv.timeout = st.retx_timeout;
        auto it = losses_.find(Key{w.src, w.dst, w.rail, w.seq});
        if (it == losses_.end()) {
            spurious_++;
            return;
        }
        it->second.resends++;
        it->second.resent = sim_.now();
        it->second.cause = cause;
    }
    // Every DATA packet a sender put on the wire to a receiver, by superstep (the packet's
    // epoch), and every prod classified by what its sender (the receiver of the data) was
    // waiting for at that moment: a packet of that peer lost and not yet resent (the prod can
    // find it), packets of the peer's current superstep that are on their way, or nothing
    // sent yet in the superstep the prodder is in (the peer has not reached it: premature).
    void classify_prod(const WirePkt &w) {
        if (w.type == BSPE_T_DATA) {
            if (kind_of(w) == 2 && !(w.flags & BSPE_F_RETX))
                sent_ep_[{w.src, w.dst}] = w.epoch;
            return;
        }
        if (w.type != BSPE_T_PROD)
            return;
        bool pending = false;
        for (auto it = losses_.lower_bound(Key{w.dst, w.src, 0, 0});
             it != losses_.end() && std::get<0>(it->first) == w.dst &&
             std::get<1>(it->first) == w.src && !pending;
             ++it)
            pending = it->second.resends < it->second.lost;
        auto it = sent_ep_.find({w.dst, w.src});
        uint32_t ep = w.epoch;
        int cls = pending ? 0 : (it != sent_ep_.end() && it->second >= ep) ? 1 : 2;
        prod_cls_[cls]++;
        prod_ackreq_[cls] += (w.flags & BSPE_F_ACKREQ) != 0;
        prod_rails_[{w.src, w.dst, ep}] |= 1u << w.rail;
    }
    Sim &sim_;
    std::map<std::pair<int, int>, uint32_t> sent_ep_;
    std::map<std::tuple<int, int, uint32_t>, unsigned> prod_rails_;
    uint64_t prod_cls_[3] = {};
    uint64_t prod_ackreq_[3] = {};  // of them, asking for an answer (ACKREQ)
    int pair_[2] = {-1, -1};
    bool verbose_ = std::getenv("BSP_TRACE_SLOW") != nullptr;  // losses resent after 100 us
    std::map<Key, Loss> losses_;
    std::map<std::tuple<int, int, int>, Prev> prev_;
    std::map<std::pair<int, int>, Last> last_;
    std::map<std::pair<int, int>, std::vector<uint64_t>> ends_;  // every process's end
    std::vector<uint64_t> to_times_;
    uint64_t to_loss_ = 0, to_wait_ = 0, checks_ = 0, spurious_ = 0;
    uint64_t ctrl_lost_[4] = {};
};

void Trace::print() const {
    static const char *kind[kKinds] = {"barrier", "count", "data", "end", "control"};
    static const char *cause[kCauses] = {"hole", "prod", "timeout"};
    // loss -> the resend that arrived: how many, by kind and cause, and how long it took
    uint64_t n[kKinds][kCauses] = {}, sum[kKinds][kCauses] = {}, mx[kKinds][kCauses] = {};
    uint64_t twice = 0;
    for (const auto &[k, l] : losses_) {
        if (l.cause < 0)
            continue;
        uint64_t d = l.resent - l.t;
        n[l.kind][l.cause]++;
        sum[l.kind][l.cause] += d;
        mx[l.kind][l.cause] = std::max(mx[l.kind][l.cause], d);
        twice += l.lost > 1;
    }
    std::printf(
        "  trace: losses by packet kind and the cause of the resend that arrived "
        "(count, mean and max us from the loss to that resend):\n");
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < kCauses; c++)
            if (n[k][c])
                std::printf("    %-8s %-8s %6lu %9.1f %9.1f\n", kind[k], cause[c],
                            (unsigned long)n[k][c], double(sum[k][c]) / double(n[k][c]) / 1e3,
                            double(mx[k][c]) / 1e3);
    std::printf(
        "  trace: %lu packets lost again after a resend; %lu resends of packets never "
        "lost; control packets lost: %lu prods, %lu probes, %lu replies, %lu acks\n",
        (unsigned long)twice, (unsigned long)spurious_, (unsigned long)ctrl_lost_[0],
        (unsigned long)ctrl_lost_[1], (unsigned long)ctrl_lost_[2], (unsigned long)ctrl_lost_[3]);
    for (const auto &[k, l] : losses_)
        if (l.cause == 2 || l.lost > 1 || (verbose_ && l.resent - l.t > 100 * kUs))
            std::printf(
                "    %s %d->%d rail %d seq %u: lost %lu times (first at %.1f us), "
                "resent %d times, last at %.1f us by %s\n",
                kind[l.kind], std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k),
                (unsigned long)l.lost, double(l.t) / 1e3, l.resends, double(l.resent) / 1e3,
                l.cause >= 0 ? cause[l.cause] : "-");
    std::printf(
        "  trace: %lu sender timeouts on a (channel, rail) holding a loss not yet "
        "resent, %lu on one that only waited; %lu checks\n",
        (unsigned long)to_loss_, (unsigned long)to_wait_, (unsigned long)checks_);
    if (!to_times_.empty()) {
        // timeouts in bursts: a new burst after 1 ms without one
        uint64_t start = to_times_.front(), prev = start, cnt = 0;
        for (size_t i = 0; i <= to_times_.size(); i++) {
            if (i == to_times_.size() || to_times_[i] - prev > kMs) {
                std::printf("    timeouts %.1f .. %.1f us: %lu\n", double(start) / 1e3,
                            double(prev) / 1e3, (unsigned long)cnt);
                if (i == to_times_.size())
                    break;
                start = to_times_[i];
                cnt = 0;
            }
            prev = to_times_[i];
            cnt++;
        }
    }
    const WireStats &ws = sim_.wire();
    std::printf(
        "  trace: on the wire: %lu data, %lu prods, %lu probes, %lu acks (replies "
        "included)\n",
        (unsigned long)ws.data, (unsigned long)ws.prods, (unsigned long)ws.probes,
        (unsigned long)ws.acks);
    std::printf(
        "  trace: prods while a packet of the peer was lost %lu (%lu asking for an answer), "
        "while its packets of this superstep were on their way %lu (%lu), before it sent any "
        "(premature) %lu (%lu); %lu (channel, superstep) pairs prodded\n",
        (unsigned long)prod_cls_[0], (unsigned long)prod_ackreq_[0], (unsigned long)prod_cls_[1],
        (unsigned long)prod_ackreq_[1], (unsigned long)prod_cls_[2], (unsigned long)prod_ackreq_[2],
        (unsigned long)prod_rails_.size());
    uint64_t rtt_n = 0, rtt_sum = 0, rtt_max = 0, rtt_min = ~0ULL;
    for (int i = 0; i < sim_.nodes(); i++)
        for (int j = 0; j < sim_.nodes(); j++) {
            int c = i == j ? -1 : bspe_chan_find(sim_.node(i).ep(), static_cast<uint32_t>(j), 1);
            if (c < 0)
                continue;
            uint64_t t = bspe_chan_rtt(sim_.node(i).ep(), c);
            rtt_n++;
            rtt_sum += t;
            rtt_max = std::max(rtt_max, t);
            rtt_min = std::min(rtt_min, t);
        }
    if (rtt_n)
        std::printf(
            "  trace: round-trip estimates of %lu channels: min %.1f, mean %.1f, max %.1f us\n",
            (unsigned long)rtt_n, double(rtt_min) / 1e3, double(rtt_sum) / double(rtt_n) / 1e3,
            double(rtt_max) / 1e3);
    static const char *phase[3] = {"barrier", "counts", "data"};
    for (const auto &[k, l] : last_) {
        std::vector<uint64_t> e = ends_.at(k);
        std::sort(e.begin(), e.end());
        std::printf(
            "  superstep %d %-7s ended at %9.1f / %9.1f / %9.1f / %9.1f us (first, median, "
            "90th percentile, last: process %d, on %c from %d)\n",
            k.first, phase[k.second], double(e.front()) / 1e3, double(e[e.size() / 2]) / 1e3,
            double(e[e.size() * 9 / 10]) / 1e3, double(l.t) / 1e3, l.i, l.tag ? l.tag : '-', l.src);
    }
}
uint32_t g_sndbuf_pkts = 0;  // -S: the engine's send budget (0: the module's default)
uint64_t g_seed = 42;        // -R: the simulated network's seed (which packets are lost)

Row run(const MsgPattern &pat, int p, int rails, double loss, int supersteps, uint32_t h) {
    Row r;
    r.pattern = pat.name;
    r.p = p;
    r.rails = rails;
    r.loss = loss;
    NetCfg n;
    n.nodes = p;
    n.rails = rails;
    n.seed = g_seed;
    n.lazy_chans = true;
    n.keep_history = false;
    n.rail.resize(static_cast<size_t>(rails));
    for (auto &rc : n.rail) {
        rc.gbps = g_gbps;
        rc.latency_ns = g_latency;
        rc.buffer_bytes = g_buffer;
        rc.faults.loss = loss;
    }
    bspe_cfg cfg = scale_cfg(p);
    cfg.nrails = static_cast<uint8_t>(rails);  // as the sim sets it, for bspe_chan_size
    if (g_sndbuf_pkts)
        cfg.sndbuf_pkts = g_sndbuf_pkts;
    uint64_t w0 = cpu_ns();
    Sim sim(n, cfg);
    sim.measure_cpu = true;
    // BSP_LINK_RATE: the node's link rate, all rails together, in bytes/s
    uint64_t link_rate = static_cast<uint64_t>(g_gbps * 1e9 / 8) * static_cast<uint64_t>(rails);
    MsgLayerRun bsp(sim, pat, supersteps, link_rate);
    bsp.expect_barrier = g_expect_barrier;
    bsp.streams_follow = g_follow;
    bsp.expect_at_count = g_expect_at_count;
    std::unique_ptr<Trace> trace;
    if (g_trace)
        trace = std::make_unique<Trace>(sim, bsp);
    r.ok = bsp.run(100000 * kMs);
    r.err = sim.verify_all_delivered();
    if (r.err.empty() && !bsp.errors.empty())
        r.err = bsp.errors.front();
    if (r.err.empty() && !r.ok)
        r.err = "did not finish";
    r.ok = r.ok && r.err.empty();
    r.t_us = double(bsp.end(supersteps) - bsp.end(0)) / supersteps / 1e3;
    // cost model: h.g + l with g = 1 / (node link rate), l = one one-way latency per barrier
    // round, one for the counts and one for the data
    double g_us = 1e6 / double(link_rate);
    double l_us = double((MsgLayerRun::barrier_rounds(p) + 2) * g_latency) / 1e3;
    r.model_us = h * g_us + l_us;
    r.ratio = r.t_us / r.model_us;
    r.barrier_b = double(bsp.stats().barrier_bytes) / p / (supersteps + 1);
    bspe_stats t = sim.total_stats();
    r.data_tx = t.data_tx;
    r.acks = t.acks_tx;
    r.acks_per_data = t.data_tx ? double(t.acks_tx) / double(t.data_tx) : 0;
    r.acks_np_per_data = t.data_tx && t.acks_tx > t.probes_tx
                             ? double(t.acks_tx - t.probes_tx) / double(t.data_tx)
                             : 0;
    r.retx = t.retx_hole + t.retx_prod + t.retx_timeout + t.retx_failover;
    r.lost = sim.wire().data_lost;
    r.timeouts = t.timeouts;
    r.prods = t.prods_tx;
    r.prods_early = t.prods_early;
    // a node's engine memory: its fixed part and the peak of its channels' (base allocations
    // and what they held in flight)
    size_t fixed = bspe_mem_size(&cfg);
    for (int i = 0; i < p; i++) {
        r.mem_max = std::max<uint64_t>(r.mem_max, fixed + sim.node(i).chan_bytes_max);
        r.chans_max = std::max<uint64_t>(r.chans_max, bspe_chan_count(sim.node(i).ep()));
    }
    r.ns_per_pkt = t.data_tx ? double(sim.engine_cpu_ns()) / double(t.data_tx) : 0;
    r.wall_s = double(cpu_ns() - w0) / 1e9;
    r.rss_mib = peak_rss_kib() / 1024;
    if (trace)
        trace->print();
    return r;
}

void print(const Row &r) {
    std::printf(
        "%-7s %5d %5d %5.1f%% %9.1f %9.1f %6.2fx %9.0f %8.4f %8.4f %6lu %6lu %5lu %9.1f %5lu %7.0f "
        "%7.1f %6ld %s\n",
        r.pattern.c_str(), r.p, r.rails, r.loss * 100, r.t_us, r.model_us, r.ratio, r.barrier_b,
        r.acks_per_data, r.acks_np_per_data, (unsigned long)r.retx, (unsigned long)r.lost,
        (unsigned long)r.timeouts, double(r.mem_max) / 1024, (unsigned long)r.chans_max,
        r.ns_per_pkt, r.wall_s, r.rss_mib, r.ok ? "ok" : ("FAILED: " + r.err).c_str());
    std::fflush(stdout);
    // not in the table: its columns are documented (Documentation/testing.rst)
    std::fprintf(stderr, "  %s p=%d rails=%d: prods %lu (answered nothing %lu)\n",
                 r.pattern.c_str(), r.p, r.rails, (unsigned long)r.prods,
                 (unsigned long)r.prods_early);
}

template <typename T>
std::vector<T> list(const char *s) {
    std::vector<T> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        v.push_back(static_cast<T>(std::atof(item.c_str())));
    return v;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<int> ps = {8, 64, 256, 1024}, rails = {1, 2, 4};
    std::vector<double> losses = {0, 0.001};
    std::vector<std::string> pats = {"total", "sparse"};
    int supersteps = 2;
    uint32_t h = 64 * 1024;
    double mem_gib = 8;  // engine memory the simulated cluster may hold
    for (int i = 1; i < argc; i += 2) {
        std::string o = argv[i];
        if (o == "-B" || o == "-T" || o == "-K" || o == "-F" || o == "-E") {  // no value
            if (o == "-K")
                g_module_timers = true;
            else if (o == "-F")
                g_follow = false;
            else if (o == "-E")
                g_expect_at_count = false;
            else
                (o == "-B" ? g_expect_barrier : g_trace) = o == "-T";
            i--;
            continue;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "%s: %s needs a value\n", argv[0], o.c_str());
            return 2;
        }
        if (o == "-p")
            ps = list<int>(argv[i + 1]);
        else if (o == "-r")
            rails = list<int>(argv[i + 1]);
        else if (o == "-l")
            losses = list<double>(argv[i + 1]);
        else if (o == "-s")
            supersteps = std::max(1, std::atoi(argv[i + 1]));
        else if (o == "-h")
            h = static_cast<uint32_t>(std::atol(argv[i + 1]));
        else if (o == "-m")
            mem_gib = std::atof(argv[i + 1]);
        else if (o == "-R")
            g_seed = std::strtoull(argv[i + 1], nullptr, 0);
        else if (o == "-g")
            g_gbps = std::atof(argv[i + 1]);
        else if (o == "-L")
            g_latency = static_cast<uint64_t>(std::atof(argv[i + 1]) * kUs);
        else if (o == "-q")
            g_buffer = std::strtoull(argv[i + 1], nullptr, 0);
        else if (o == "-S")
            g_sndbuf_pkts = static_cast<uint32_t>(std::max(1, std::atoi(argv[i + 1])));
        else if (o == "-w") {
            pats.clear();
            std::stringstream ss(argv[i + 1]);
            std::string item;
            while (std::getline(ss, item, ','))
                pats.push_back(item);
        } else {
            std::fprintf(
                stderr,
                "usage: %s [-p LIST] [-r LIST] [-l LIST] [-w total,sparse] "
                "[-s supersteps] [-h bytes] [-m GiB] [-S pkts] [-R seed] [-g Gb/s] [-L us] "
                "[-q bytes] [-B] [-E] [-F] [-K] [-T]\n",
                argv[0]);
            return 2;
        }
    }
    if (!(g_gbps > 0) || !g_latency || g_buffer < 1500) {
        std::fprintf(stderr, "%s: -g must be > 0, -L > 0 and -q >= 1500 bytes\n", argv[0]);
        return 2;
    }
    std::printf(
        "BSPlib messaging layer over the AF_BSP engine, simulated: %g Gb/s per rail, %g us "
        "one-way latency,\n%llu-byte switch buffers, 1428-byte fragments, latin-square schedule, "
        "paced at 95%% of the node's links;\nh = %u bytes per process per superstep, %d "
        "supersteps + bsp_end. T = time per superstep; model = h.g + l\n(g = 1 / node link "
        "rate, l = (barrier rounds + 2) one-way latencies); barrier = bytes a process sends in\n"
        "one barrier; acks/data = explicit acks per data packet (-probes: less the answers to "
        "sender\n"
        "timeout probes); mem = peak engine memory of the "
        "largest node\n(bspe_mem_size + its channels, with what they held in flight); chans = "
        "its open channels;\nns/pkt = engine CPU per data packet sent (all engine calls of the "
        "run); cpu s = host CPU of\nthe run; rss = peak resident memory of this process so far "
        "(MiB).\n\n",
        g_gbps, double(g_latency) / kUs, (unsigned long long)g_buffer, h, supersteps);
    if (!g_expect_barrier)
        std::printf("-B: no process expects its barrier partner's message (bspe_expect).\n\n");
    if (!g_follow)
        std::printf("-F: data streams after all counts, not right behind each count.\n\n");
    if (!g_expect_at_count)
        std::printf("-E: streams expected once every count is here.\n\n");
    if (g_seed != 42)
        std::printf("-R: seed %llu.\n\n", static_cast<unsigned long long>(g_seed));
    if (g_module_timers)
        std::printf("-K: the module's timer constants (rtt_init 1 ms, rto_min 200 ms).\n\n");
    if (g_sndbuf_pkts)
        std::printf("-S: send budget sndbuf_pkts = %u packets.\n\n", g_sndbuf_pkts);
    std::printf("%-7s %5s %5s %6s %9s %9s %7s %9s %8s %8s %6s %6s %5s %9s %5s %7s %7s %6s\n",
                "pattern", "p", "rails", "loss", "T us", "model us", "ratio", "barrier", "acks/dat",
                "-probes", "retx", "lost", "TOs", "mem KiB", "chans", "ns/pkt", "cpu s", "rss");
    std::map<std::string, Row> rows;
    bool all = true;
    for (const auto &pn : pats) {
        MsgPattern pat = pn == "sparse" ? msg_sparse(h, 8) : msg_total_exchange(h);
        for (int p : ps)
            for (int nr : rails)
                for (double loss : losses) {
                    // The simulator holds every node's engine in this one process: a total
                    // exchange opens p - 1 channels on each of p nodes.
                    bspe_cfg c = scale_cfg(p);
                    c.nrails = static_cast<uint8_t>(nr);
                    double chans = std::min<double>(p - 1, double(pat.dests(0, p).size() * 2 + 12));
                    double need = double(p) * chans * double(bspe_chan_size(&c)) / double(1 << 30);
                    if (need > mem_gib) {
                        std::printf(
                            "%-7s %5d %5d %5.1f%% skipped: the simulated cluster's channels would "
                            "hold %.0f GiB of engine memory (-m %.0f)\n",
                            pn.c_str(), p, nr, loss * 100, need, mem_gib);
                        continue;
                    }
                    Row r = run(pat, p, nr, loss, supersteps, h);
                    print(r);
                    all = all && r.ok;
                    char key[96];
                    std::snprintf(key, sizeof(key), "%s/%d/%d/%g", pn.c_str(), p, nr, loss);
                    rows[key] = r;
                }
    }
    std::printf("\nTargets:\n");
    if (auto it = rows.find("total/1024/4/0.001"); it != rows.end())
        std::printf(
            "  total exchange, p = 1024 x 4 rails, 0.1%% loss: %.2fx h.g + l (<= 1.1x): %s\n",
            it->second.ratio, it->second.ratio <= 1.1 ? "PASS" : "FAIL");
    for (const auto &[key, r] : rows) {
        if (r.p != 1024)
            continue;
        char k8[96];
        std::snprintf(k8, sizeof(k8), "%s/8/%d/%g", r.pattern.c_str(), r.rails, r.loss);
        auto it = rows.find(k8);
        if (it == rows.end())
            continue;
        double lim = 1.5 * it->second.acks_per_data;
        std::printf(
            "  %-6s %d rail%s %.1f%% loss: explicit acks per data packet %.4f at p = "
            "1024, %.4f at p = 8 (<= 1.5x): %s\n",
            r.pattern.c_str(), r.rails, r.rails > 1 ? "s" : " ", r.loss * 100, r.acks_per_data,
            it->second.acks_per_data, r.acks_per_data <= lim ? "PASS" : "FAIL");
    }
    for (const auto &[key, r] : rows)
        if (r.p == 1024 && r.pattern == "sparse")
            std::printf(
                "  sparse %d rail%s %.1f%% loss: engine memory per node %.2f MiB at p = "
                "1024 (< 4 MiB): %s\n",
                r.rails, r.rails > 1 ? "s" : " ", r.loss * 100, double(r.mem_max) / 1048576,
                r.mem_max < (4u << 20) ? "PASS" : "FAIL");
    return all ? 0 : 1;
}
