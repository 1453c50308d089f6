// Randomized (but seeded, hence reproducible) configurations, workloads and faults: for every
// seed the BSP program completes with every message delivered once, intact and in order, and
// completed once with status 0. Each seed draws: 2-6 nodes, 1-3 rails with independent and
// burst loss, reordering, duplication, corruption, skew and buffer size; fragment size and
// every window; sometimes a rail death (permanent or temporary, reported by the rail layer or
// left for the engine to find). A failing seed is printed with its parameters.
#include <sstream>

#include "bsp_workload.hpp"
#include "engine_test_util.hpp"

using namespace bspsim;
using namespace enginetest;

namespace {

struct Case {
    NetCfg net;
    bspe_cfg cfg;
    Workload work;
    std::string describe;
};

Case draw(uint64_t seed) {
    Rng pick(seed * 7919 + 1);
    Case c;
    NetCfg &n = c.net;
    n.nodes = 2 + static_cast<int>(pick.below(5));
    n.rails = 1 + static_cast<int>(pick.below(3));
    n.rail.resize(n.rails);
    n.seed = seed;
    for (auto &r : n.rail) {
        r.faults.loss = static_cast<double>(pick.below(100)) / 1000.0;
        r.faults.burst_start = static_cast<double>(pick.below(20)) / 1000.0;
        r.faults.burst_len = 1 + static_cast<int>(pick.below(10));
        r.faults.reorder = static_cast<double>(pick.below(30)) / 1000.0;
        r.faults.reorder_ns = pick.below(50 * kUs);
        r.faults.duplicate = static_cast<double>(pick.below(30)) / 1000.0;
        r.faults.corrupt = static_cast<double>(pick.below(20)) / 1000.0;
        r.skew = 1.0 + static_cast<double>(pick.below(4));
        r.buffer_bytes = 8192 + pick.below(1 << 20);
    }
    std::ostringstream d;
    d << "seed " << seed << ": " << n.nodes << " nodes, " << n.rails << " rails";
    if (n.rails > 1 && pick.below(2)) {
        RailDeath rd;
        rd.node = static_cast<int>(pick.below(n.nodes));
        rd.rail = static_cast<int>(pick.below(n.rails));
        rd.at = pick.below(2 * kMs);
        if (pick.below(2))
            rd.revive_at = rd.at + pick.below(5 * kMs);
        if (pick.below(2))
            rd.notify_after = pick.below(500 * kUs);
        n.deaths.push_back(rd);
        d << ", rail " << rd.rail << " of node " << rd.node << " dies at " << rd.at << " ns"
          << (rd.notify_after ? " (reported)" : " (unreported)");
    }
    bspe_cfg &b = c.cfg;
    b = test_cfg();
    b.frag_size = static_cast<uint16_t>(200 + pick.below(1300));
    b.rcvbuf = static_cast<uint32_t>(20000 + pick.below(1 << 20));
    b.nprocs = static_cast<uint32_t>(n.nodes);
    b.snd_wnd = static_cast<uint16_t>(8 + pick.below(200));
    b.rcv_wnd = static_cast<uint16_t>(8 + pick.below(200));
    b.msg_wnd = static_cast<uint16_t>(2 + pick.below(30));
    b.sndbuf_pkts = static_cast<uint32_t>(16 + pick.below(500));
    b.rto_min_ns = 20 * kMs;
    b.prod_max_ns = 50 * kMs;
    b.unreach_ns = 20000 * kMs;
    b.flags = BSPE_CFG_CSUM | BSPE_CFG_REQUIRE_CSUM;
    if (pick.below(3) == 0)
        c.work = lu_like(4, 20, static_cast<uint32_t>(100 + pick.below(500)), n.nodes);
    else
        c.work = total_exchange(3, 1 + static_cast<int>(pick.below(4)),
                                static_cast<uint32_t>(1 + pick.below(30000)));
    d << ", " << c.work.name << ", frag " << b.frag_size << ", snd_wnd " << b.snd_wnd
      << ", rcv_wnd " << b.rcv_wnd << ", msg_wnd " << b.msg_wnd << ", rcvbuf " << b.rcvbuf;
    c.describe = d.str();
    return c;
}

}  // namespace

TEST(Soak, RandomConfigurationsAndFaults) {
    for (uint64_t seed = 0; seed < 120; seed++) {
        Case c = draw(seed);
        Sim sim(c.net, c.cfg);
        BspRun run(sim, c.work);
        // a suspected rail is re-probed forever: a generous horizon, not "until idle"
        bool done = run.run(60000 * kMs);
        ASSERT_TRUE(done) << c.describe;
        ASSERT_EQ(sim.verify_all_delivered(), "") << c.describe;
    }
}
