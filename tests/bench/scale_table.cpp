// How AF_BSP's cost grows with p: the protocol engine under the BSPlib messaging layer's traffic
// (tests/sim/msg_layer.hpp: butterfly barrier, total exchange of counts, latin-square schedule,
// pacing) on the simulated network, for p = 8 .. 1024 nodes x 1, 2, 4 rails, a total exchange
// and a sparse pattern of h = 64 KiB per process, at 0 % and 0.1 % loss. One row per
// configuration: time per superstep against the cost model's h.g + l, explicit acknowledgements
// per data packet, retransmissions, engine memory per node and engine CPU per packet, measured
// in the same run. Documentation/testing.rst ("Scale") explains the columns and the figures.
//
// Usage: scale_table [-p 8,64,256,1024] [-r 1,2,4] [-l 0,0.001] [-w total,sparse]
//                    [-s supersteps] [-h bytes] [-m GiB] [-S pkts] [-B]
// -m: a configuration whose nodes' channels would hold more than this much memory together in
// this one process in their base allocations (default 8 GiB) is skipped with a note.
// -S: the engine's send budget, sndbuf_pkts (default the module's: 4 per channel of the
// ceiling, at least 1024): a total exchange holds 2 (p - 1) packets or more until the next
// barrier.
// -B: no process expects its barrier partner's message (bspe_expect), as libbsp's messaging
// layer did before it did: what expecting changes under loss.
// Exit status 0 iff every run delivered every message exactly once and intact; the targets are
// printed, never asserted (a benchmark, not a test).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "msg_layer.hpp"

using namespace bspsim;

namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr double kGbps = 10;            // per rail
constexpr uint64_t kLatency = 5 * kUs;  // one way, per hop pair (sim RailCfg::latency_ns)

// The AF_BSP module's engine configuration (kernel/transport.c), with max_chans = p (the
// BSP_CHANNELS ceiling a BSPlib job sets) and the timer constants of engine_table.
bspe_cfg scale_cfg(int p) {
    bspe_cfg c;
    bspe_cfg_default(&c);
    c.max_chans = static_cast<uint16_t>(p);
    c.sndbuf_pkts = std::max<uint32_t>(c.sndbuf_pkts, 4 * c.max_chans);  // as the module sets it
    c.frag_size = 1500 - BSPE_HDR_LEN;
    c.max_msg = 1 << 20;
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
    uint64_t mem_max = 0, chans_max = 0;
    double ns_per_pkt = 0;
    double wall_s = 0;
    long rss_mib = 0;  // peak RSS of the process after the run
};

bool g_expect_barrier = true;  // -B: false
uint32_t g_sndbuf_pkts = 0;    // -S: the engine's send budget (0: the module's default)

Row run(const MsgPattern &pat, int p, int rails, double loss, int supersteps, uint32_t h) {
    Row r;
    r.pattern = pat.name;
    r.p = p;
    r.rails = rails;
    r.loss = loss;
    NetCfg n;
    n.nodes = p;
    n.rails = rails;
    n.seed = 42;
    n.lazy_chans = true;
    n.keep_history = false;
    n.rail.resize(static_cast<size_t>(rails));
    for (auto &rc : n.rail) {
        rc.gbps = kGbps;
        rc.latency_ns = kLatency;
        rc.buffer_bytes = 1 << 20;
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
    uint64_t link_rate = static_cast<uint64_t>(kGbps * 1e9 / 8) * static_cast<uint64_t>(rails);
    MsgLayerRun bsp(sim, pat, supersteps, link_rate);
    bsp.expect_barrier = g_expect_barrier;
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
    double l_us = double((MsgLayerRun::barrier_rounds(p) + 2) * kLatency) / 1e3;
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
        if (o == "-B") {
            g_expect_barrier = false;  // a flag: no value
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
        else if (o == "-S")
            g_sndbuf_pkts = static_cast<uint32_t>(std::max(1, std::atoi(argv[i + 1])));
        else if (o == "-w") {
            pats.clear();
            std::stringstream ss(argv[i + 1]);
            std::string item;
            while (std::getline(ss, item, ','))
                pats.push_back(item);
        } else {
            std::fprintf(stderr,
                         "usage: %s [-p LIST] [-r LIST] [-l LIST] [-w total,sparse] "
                         "[-s supersteps] [-h bytes] [-m GiB] [-S pkts] [-B]\n",
                         argv[0]);
            return 2;
        }
    }
    std::printf(
        "BSPlib messaging layer over the AF_BSP engine, simulated: %.0f Gb/s per rail, %lu us "
        "one-way latency,\n1 MiB switch buffers, 1428-byte fragments, latin-square schedule, "
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
        kGbps, (unsigned long)(kLatency / kUs), h, supersteps);
    if (!g_expect_barrier)
        std::printf("-B: no process expects its barrier partner's message (bspe_expect).\n\n");
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
