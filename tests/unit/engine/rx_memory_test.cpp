// Receive memory accounted by the caller (BSPE_CFG_EXT_RCVBUF): refused fragments stay
// unacknowledged and arrive after bspe_rx_resume; stalled reassemblies expire.
#include <cerrno>

#include "engine_test_util.hpp"

using namespace enginetest;

namespace {

bspe_cfg ext_cfg() {
    bspe_cfg c = test_cfg();
    c.flags |= BSPE_CFG_EXT_RCVBUF;
    return c;
}

}  // namespace

// A receiver that is full refuses every new message (-ENOBUFS from rx_data): nothing is
// acknowledged or lost, the sender keeps its messages; once room is back and the engine is
// told so, its prods bring everything, exactly once and intact.
TEST(RxMemory, RefusedMessagesWaitAndArriveAfterResume) {
    bspsim::Sim sim(net(2, 1), ext_cfg());
    bool full = false;
    int admitted = 0;
    sim.node(1).rx_gate = [&](const bspe_rx_frag &f) {
        if (!f.first)
            return 0;
        if (full)
            return -ENOBUFS;
        if (++admitted == 2)
            full = true;  // room for two messages only
        return 0;
    };
    for (int i = 0; i < 20; ++i)
        sim.send(0, 1, bspsim::Sim::pattern(0, 1, i, 50000));
    sim.run_until(300 * kMs);
    EXPECT_EQ(sim.node(1).delivered.size(), 2u);
    EXPECT_EQ(sim.pending(), 18u);
    bspe_stats r = sim.node(1).stats();
    EXPECT_GT(r.drops[BSPE_DROP_NOBUFS], 0u);
    EXPECT_EQ(r.drops[BSPE_DROP_NOMEM], 0u);
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 0u);

    uint64_t prods = r.prods_tx;
    sim.at(sim.now() + 1, [&] {
        full = false;
        admitted = -1000;
        bspe_rx_resume(sim.node(1).ep(), sim.now());
    });
    sim.run_until(sim.now() + 2);
    EXPECT_GT(sim.node(1).stats().prods_tx, prods);  // at once, not after a timeout
    ASSERT_TRUE(sim.run_until_idle(20000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 0u);
    for (int n = 0; n < 2; ++n)
        EXPECT_TRUE(sim.node(n).errors.empty());
}

// A message whose fragments stop coming is ended by bspe_rx_expire after the idle time, not
// before: its channel is closed (the partial buffer aborted), counted once.
TEST(RxMemory, ExpireClosesStalledReassembly) {
    bspsim::Sim sim(net(2, 1), ext_cfg());
    // Only the first fragment of the message ever arrives.
    sim.drop_filter = [](const bspsim::WirePkt &p) { return p.type == BSPE_T_DATA && p.frag_off; };
    int aborts_seen = 0;
    sim.send(0, 1, bspsim::Sim::pattern(0, 1, 0, 50000));
    sim.run_until(10 * kMs);
    bspe_ep *ep = sim.node(1).ep();
    uint64_t t0 = sim.now();
    uint32_t closed = 1;
    sim.at(t0 + 1, [&] { closed = bspe_rx_expire(ep, 500 * kMs, sim.now()); });
    sim.run_until(t0 + 2);
    EXPECT_EQ(closed, 0u);  // quiet for less than the idle time: kept
    sim.at(t0 + 600 * kMs, [&] {
        closed = bspe_rx_expire(ep, 500 * kMs, sim.now());
        aborts_seen = bspe_chan_find(ep, 0, 1) < 0;
    });
    sim.run_until(t0 + 600 * kMs + 1);
    EXPECT_EQ(closed, 1u);
    EXPECT_EQ(aborts_seen, 1);
    EXPECT_TRUE(sim.node(1).delivered.empty());
    sim.at(sim.now() + 1, [&] { closed = bspe_rx_expire(ep, 500 * kMs, sim.now()); });
    sim.run_until(sim.now() + 2);
    EXPECT_EQ(closed, 0u);
}

// A peer that answers every probe but never gets a DATA packet (they do not reach it, as with
// an MTU it cannot receive) does not keep a message alive: the answers acknowledge nothing,
// the probes keep counting, and the message fails with -EHOSTUNREACH once nothing progressed
// for unreach_ns after rail_fail_probes probes.
TEST(RxMemory, AnsweredProbesWithoutProgressFail) {
    bspsim::Sim sim(net(2, 1), ext_cfg());
    sim.drop_filter = [](const bspsim::WirePkt &p) { return p.type == BSPE_T_DATA; };
    int status = 1;
    sim.node(0).on_complete = [&](bspsim::Node &, uint64_t, int st) { status = st; };
    sim.send(0, 1, bspsim::Sim::pattern(0, 1, 0, 5000));
    const bspe_cfg c = ext_cfg();
    // the first timeout after unreach_ns with rail_fail_probes probes made: the back-off
    // doubles the timeout up to 64 rto
    sim.run_until(c.unreach_ns + 64 * c.rto_min_ns);
    EXPECT_EQ(status, -EHOSTUNREACH);
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 1u);
    EXPECT_GE(sim.node(0).stats().probes_tx, uint64_t(c.rail_fail_probes));
    EXPECT_TRUE(sim.node(1).delivered.empty());
}

// A receiver out of memory answers probes with BUSY: its sender keeps the messages (no failure
// however long the reader pauses) and completes them once the receiver resumes. Meanwhile the
// sender resends one packet per timeout (the window probe) and nothing else, and the receiver
// prods for nothing it refused itself: the BUSY answer to a check, or a prod for the refused
// hole, drew a resend refused again every round trip (1.66 million in these 20 s).
TEST(RxMemory, BusyReceiverKeepsMessagesAlive) {
    bspsim::Sim sim(net(2, 1), ext_cfg());
    bool full = true;
    sim.node(1).rx_gate = [&](const bspe_rx_frag &f) { return full && f.first ? -ENOBUFS : 0; };
    for (int i = 0; i < 4; ++i)
        sim.send(0, 1, bspsim::Sim::pattern(0, 1, i, 20000));
    const bspe_cfg c = ext_cfg();
    sim.run_until(10 * c.unreach_ns);
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 0u);
    EXPECT_EQ(sim.pending(), 4u);
    EXPECT_TRUE(sim.node(1).delivered.empty());
    EXPECT_GT(sim.node(0).stats().probes_tx, 0u);
    const bspe_stats busy0 = sim.node(0).stats(), busy1 = sim.node(1).stats();
    EXPECT_EQ(busy0.retx_hole + busy0.retx_prod, 0u);
    EXPECT_EQ(busy0.retx_timeout, busy0.timeouts);
    EXPECT_EQ(busy1.prods_tx, 0u);
    sim.at(sim.now() + 1, [&] {
        full = false;
        bspe_rx_resume(sim.node(1).ep(), sim.now());
    });
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 20000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 0u);
}

// A reader that starts late, with a receive buffer (64 KiB) far below what its sender has in
// flight (256 KiB messages, a window of 256 packets per rail), the receiver's accounting as
// the module's (bsp_rx_admit: a message is taken while less than the buffer is held, and the
// next one to deliver when nothing waits to be read; the engine is resumed when the reader
// makes room). Each resume brings the next message; the
// holes of a message taken are resent at once although their packets were refused before
// (the receiver's reports stop at the first packet it refused, BUSY or not). It took 14 s of
// sender timeouts (one packet per timeout) when BUSY answers asked for nothing.
class SmallRcvbuf : public ::testing::TestWithParam<int> {};

TEST_P(SmallRcvbuf, LateReaderGetsEverythingWithoutTimeouts) {
    bspe_cfg c = ext_cfg();
    c.frag_size = 1500 - BSPE_HDR_LEN;
    c.rto_min_ns = 200 * kMs;
    c.rtt_init_ns = 1 * kMs;
    c.unreach_ns = 10000 * kMs;
    auto nc = net(2, GetParam());
    for (auto &r : nc.rail) {
        r.gbps = 1;
        r.latency_ns = 50 * kUs;
    }
    bspsim::Sim sim(nc, c);
    const uint64_t rcvbuf = 64 * 1024, start = 2100 * kMs;
    const int msgs = 40;
    uint64_t admitted = 0, consumed = 0;
    bool refused = false;
    sim.node(1).consume_delay_ns = 100 * kUs;
    sim.node(1).rx_gate = [&](const bspe_rx_frag &f) {
        if (!f.first)
            return 0;
        // the next message to deliver is taken beyond the buffer when nothing waits to be
        // read: the reader could never make room otherwise
        bool over = f.next && sim.node(1).rx_bytes_held == 0;
        if (sim.now() < start || (admitted - consumed >= rcvbuf && !over)) {
            refused = true;
            return -ENOBUFS;
        }
        admitted += f.msg_len;
        return 0;
    };
    sim.node(1).on_consume = [&](bspsim::Node &n, uint32_t len) {
        consumed += len;
        if (refused && admitted - consumed < rcvbuf) {
            refused = false;
            bspe_rx_resume(n.ep(), sim.now());
        }
    };
    for (int i = 0; i < msgs; ++i)
        sim.send(0, 1, bspsim::Sim::pattern(0, 1, i, 256 * 1024));
    sim.run_until(start - 1);
    EXPECT_TRUE(sim.node(1).delivered.empty());
    const bspe_stats before = sim.node(0).stats();
    sim.at(start, [&] {
        refused = false;
        bspe_rx_resume(sim.node(1).ep(), sim.now());
    });
    // 10 MiB at 1 Gbit/s takes 84 ms on the wire; a sender timeout alone is 200 ms
    sim.run_until(start + c.rto_min_ns);
    EXPECT_EQ(sim.node(1).delivered.size(), size_t(msgs));
    EXPECT_EQ(sim.node(0).stats().timeouts, before.timeouts);
    ASSERT_TRUE(sim.run_until_idle(start + 20000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 0u);
    EXPECT_EQ(consumed, uint64_t(msgs) * 256 * 1024);
    for (int n = 0; n < 2; ++n)
        EXPECT_TRUE(sim.node(n).errors.empty());
}

INSTANTIATE_TEST_SUITE_P(Rails, SmallRcvbuf, ::testing::Values(1, 2));
