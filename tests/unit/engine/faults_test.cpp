// Exactly-once delivery under loss, bursts, reordering, duplication, corruption and small
// buffers, with engine memory use bounded by the configuration throughout.
#include <algorithm>

#include "bsp_workload.hpp"
extern "C" {
#include "bspe_internal.h"
}
#include "engine_test_util.hpp"

using namespace bspsim;
using namespace enginetest;

namespace {

// Runs a 4-node total exchange over `n` and checks exactly-once
// delivery and the memory bounds after every event.
bspe_stats run_faulty(NetCfg n, bspe_cfg c, int supersteps = 3) {
    c.nprocs = 4;
    Sim sim(n, c);
    uint64_t violations = 0;
    sim.after_event = [&] {
        for (int i = 0; i < sim.nodes(); i++) {
            const bspe_ep *ep = sim.node(i).ep();
            if (ep->outstanding > c.sndbuf_pkts)
                violations++;
            // reassembly + unconsumed: rcvbuf plus at most one next-expected message per channel
            if (ep->rx_reserved > uint64_t(c.rcvbuf) + uint64_t(c.max_chans) * c.max_msg)
                violations++;
        }
    };
    // (all traffic belongs to supersteps: the implicit rule relies on the barrier's premise)
    BspRun run(sim, total_exchange(supersteps, 3, 12000));
    EXPECT_TRUE(run.run(1000000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(violations, 0u);
    EXPECT_EQ(sim.pending(), 0u);
    return sim.total_stats();
}

}  // namespace

TEST(Faults, TenPercentIndependentLoss) {
    NetCfg n = net(4, 1, 7);
    n.rail[0].faults.loss = 0.10;
    bspe_stats t = run_faulty(n, test_cfg());
    EXPECT_GT(t.retx_hole + t.retx_prod + t.retx_timeout, 0u);
}

TEST(Faults, TenPercentLossOnTwoRails) {
    NetCfg n = net(4, 2, 8);
    n.rail[0].faults.loss = 0.10;
    n.rail[1].faults.loss = 0.10;
    n.rail[1].skew = 3;
    run_faulty(n, test_cfg());
}

TEST(Faults, BurstsOfEight) {
    NetCfg n = net(4, 1, 9);
    n.rail[0].faults.burst_start = 0.05;
    n.rail[0].faults.burst_len = 8;
    run_faulty(n, test_cfg());
}

TEST(Faults, ReorderingAndDuplication) {
    NetCfg n = net(4, 2, 10);
    for (auto &r : n.rail) {
        r.faults.reorder = 0.05;
        r.faults.reorder_ns = 20 * kUs;
        r.faults.duplicate = 0.05;
    }
    bspe_stats t = run_faulty(n, test_cfg());
    EXPECT_GT(t.dup_rx, 0u);
    EXPECT_EQ(t.drops[BSPE_DROP_DUP], t.dup_rx);
}

TEST(Faults, CorruptionCaughtByChecksum) {
    NetCfg n = net(4, 1, 11);
    n.rail[0].faults.corrupt = 0.03;
    bspe_cfg c = test_cfg();
    c.flags = BSPE_CFG_CSUM | BSPE_CFG_REQUIRE_CSUM;
    bspe_stats t = run_faulty(n, c);
    EXPECT_GT(t.drops[BSPE_DROP_CSUM], 0u);
}

TEST(Faults, EverythingAtOnce) {
    NetCfg n = net(4, 2, 12);
    for (auto &r : n.rail) {
        r.faults.loss = 0.05;
        r.faults.burst_start = 0.01;
        r.faults.burst_len = 8;
        r.faults.reorder = 0.02;
        r.faults.reorder_ns = 10 * kUs;
        r.faults.duplicate = 0.02;
        r.faults.corrupt = 0.01;
    }
    n.rail[1].skew = 3;
    bspe_cfg c = test_cfg();
    c.flags = BSPE_CFG_CSUM | BSPE_CFG_REQUIRE_CSUM;
    run_faulty(n, c);
}

// Tiny switch buffers and a small receive budget: packets are lost to overruns and refused
// for lack of buffers (only the next expected message is accepted), yet everything arrives.
// With 1 % random loss as well: since a lost resend is resent again without waiting for the
// timeout (Documentation/protocol.rst, "Resending a resend"), the overruns of this seed alone
// no longer leave a message incomplete while later ones arrive, and nothing was refused.
TEST(Faults, SmallBuffersRefuseButProgress) {
    NetCfg n = net(4, 1, 13);
    n.rail[0].buffer_bytes = 16 * 1024;
    n.rail[0].faults.loss = 0.01;
    bspe_cfg c = test_cfg();
    c.rcvbuf = 20000;
    bspe_stats t = run_faulty(n, c);
    EXPECT_GT(t.drops[BSPE_DROP_NOBUFS], 0u);
}

// Seeds vary the fault pattern; all must pass.
TEST(Faults, ManySeedsWithLoss) {
    for (uint64_t seed = 100; seed < 110; seed++) {
        NetCfg n = net(4, 2, seed);
        n.rail[0].faults.loss = 0.03;
        n.rail[1].faults.burst_start = 0.01;
        n.rail[1].faults.burst_len = 4;
        run_faulty(n, test_cfg(), 2);
    }
}

// The engine benchmark's symmetric total exchange (bench/engine_table: 8 nodes, 10 Gb/s, 5 us,
// 10 supersteps of 2 x 16 KiB to every peer, seed 42) with 1 % loss on one rail, every node
// expecting its peers' barrier messages as libbsp's messaging layer does: every loss is found
// by a prod, a hole report or a check, none waits for the sender timeout, nothing is resent
// that arrived. Prods, probes and data cross here (Documentation/protocol.rst, "Resending a
// resend"): an answer to a check says so (REPLY|PROBE), since a REPLY alone answers a prod and
// may predate the resend (taking the check's answer for a prod's: 30 timeouts); and it is
// matched to the probe it answers, since the answer to an older probe, still queued behind the
// peer's data when the check leaves, predates the resend too (taking it for the check's: one
// spurious resend).
TEST(Faults, TotalExchangeOnePercentLossNoTimeout) {
    NetCfg n = net(8, 1, 42);
    n.rail[0].gbps = 10;
    n.rail[0].latency_ns = 5 * kUs;
    n.rail[0].buffer_bytes = 1 << 20;
    n.rail[0].faults.loss = 0.01;
    bspe_cfg c;
    bspe_cfg_default(&c);
    c.max_chans = 16;
    c.frag_size = 1500 - BSPE_HDR_LEN;
    c.max_msg = 1 << 20;
    c.snd_wnd = 256;
    c.rcv_wnd = 256;
    c.msg_wnd = 64;
    c.sndbuf_pkts = 1024;
    c.rcvbuf = 4 << 20;
    c.nprocs = 8;
    c.rtt_init_ns = 50 * kUs;
    c.rtt_min_ns = 10 * kUs;
    c.rtt_max_ns = 10 * kMs;
    c.rto_min_ns = 20 * kMs;
    c.prod_max_ns = 50 * kMs;
    c.unreach_ns = 10000 * kMs;
    c.flags = BSPE_CFG_CSUM;
    Sim sim(n, c);
    BspRun run(sim, total_exchange(10, 2, 16384));
    ASSERT_TRUE(run.run(1000000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    const bspe_stats t = sim.total_stats();
    EXPECT_EQ(t.retx_hole + t.retx_prod + t.retx_timeout + t.retx_failover, sim.wire().data_lost);
    EXPECT_EQ(t.timeouts, 0u);
    EXPECT_EQ(t.spurious_rx, 0u);
}

// The reordering allowance's steps (bspe_reo_wnd): a quarter of the estimate, one quarter
// more per needless resend up to the whole estimate, and one quarter less after
// BSPE_REO_PERSIST real holes filled in a row; a needless resend restarts that count.
TEST(Faults, ReorderingAllowanceSteps) {
    bspe_chan ch{};
    ch.srtt = 400 * kUs;
    EXPECT_EQ(bspe_reo_wnd(&ch), 100 * kUs);
    bspe_reo_resend_in(&ch, 0);  // a real hole at the narrowest: nothing to narrow
    EXPECT_EQ(bspe_reo_wnd(&ch), 100 * kUs);
    for (int i = 1; i <= 5; i++) {
        bspe_reo_resend_in(&ch, 1);
        EXPECT_EQ(bspe_reo_wnd(&ch), std::min(i + 1, BSPE_REO_STEPS_MAX + 1) * 100 * kUs);
    }
    for (int i = 0; i < BSPE_REO_PERSIST - 1; i++)
        bspe_reo_resend_in(&ch, 0);
    EXPECT_EQ(bspe_reo_wnd(&ch), 400 * kUs);
    bspe_reo_resend_in(&ch, 1);  // at the widest: stays, and the count starts again
    for (int i = 0; i < BSPE_REO_PERSIST - 1; i++)
        bspe_reo_resend_in(&ch, 0);
    EXPECT_EQ(bspe_reo_wnd(&ch), 400 * kUs);
    bspe_reo_resend_in(&ch, 0);
    EXPECT_EQ(bspe_reo_wnd(&ch), 300 * kUs);
    for (int i = 0; i < 2 * BSPE_REO_PERSIST; i++)
        bspe_reo_resend_in(&ch, 0);
    EXPECT_EQ(bspe_reo_wnd(&ch), 100 * kUs);
}
