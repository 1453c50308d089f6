// Endpoint behaviour around the protocol core: pacing, unreachable peers, channel close,
// refused placements, automatic channels, receive budget.
#include <cstring>

#include "bsp_workload.hpp"
#include "engine_test_util.hpp"
extern "C" {
#include "bspe_internal.h"
}

using namespace bspsim;
using namespace enginetest;

// Pacing enforces the rate the messaging layer chose: 1 MB at 100 MB/s cannot leave before
// 10 ms of (simulated) time, while the unpaced link would send it in about 1 ms.
TEST(Endpoint, PacingLimitsTheRate) {
    Sim sim(net(2, 1), test_cfg());
    uint64_t last_tx = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.src == 0)
            last_tx = sim.now();
    };
    bspe_set_pacing(sim.node(0).ep(), 100ull * 1000 * 1000, 0);
    for (int k = 0; k < 4; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 250000));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    // 1000 packets of 1056 bytes on the wire budget: 10.56 ms, minus the initial burst
    EXPECT_GE(last_tx, 10 * kMs);
    EXPECT_LE(last_tx, 11 * kMs);
    bspe_set_pacing(sim.node(0).ep(), 0, sim.now());
    uint64_t start = sim.now();
    for (int k = 0; k < 4; k++)
        sim.send(0, 1, Sim::pattern(0, 1, 10 + k, 250000));
    ASSERT_TRUE(sim.run_until_idle(start + 100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_LE(last_tx - start, 2 * kMs);
}

// With every rail to a node dead (as the rail layer reports), messages wait, then fail with
// -EHOSTUNREACH after unreach_ns, each exactly once; new sends are refused.
TEST(Endpoint, UnreachablePeerFailsMessages) {
    NetCfg n = net(2, 1);
    RailDeath d;
    d.node = 1;
    d.rail = 0;
    d.at = 0;
    d.notify_after = 1 * kUs;
    n.deaths.push_back(d);
    bspe_cfg c = test_cfg();
    c.unreach_ns = 500 * kMs;
    Sim sim(n, c);
    sim.run_until(10 * kUs);
    uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 5000));
    uint64_t b = sim.send(0, 1, Sim::pattern(0, 1, 1, 100));
    sim.run_until(400 * kMs);
    EXPECT_EQ(sim.node(0).completed.count(a), 0u);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.node(0).completed[a], -EHOSTUNREACH);
    EXPECT_EQ(sim.node(0).completed[b], -EHOSTUNREACH);
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 2u);
    EXPECT_EQ(sim.node(0).stats().data_tx, 0u);
    int tag;
    EXPECT_EQ(bspe_send(sim.node(0).ep(), sim.node(0).chan_to(1), &tag, 10, 0, sim.now()),
              -EHOSTUNREACH);
    EXPECT_TRUE(sim.node(0).errors.empty());
}

// A single rail that silently stops: the sender's probes go unanswered; after unreach_ns
// without progress the messages fail rather than wait forever.
TEST(Endpoint, SilentSingleRailGivesUp) {
    NetCfg n = net(2, 1);
    RailDeath d;
    d.node = 1;
    d.rail = 0;
    d.at = 0;
    n.deaths.push_back(d);
    bspe_cfg c = test_cfg();
    c.unreach_ns = 1000 * kMs;
    Sim sim(n, c);
    uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 5000));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.node(0).completed[a], -EHOSTUNREACH);
    bspe_stats s = sim.node(0).stats();
    EXPECT_GE(s.timeouts, uint64_t(c.rail_fail_probes) + 1);
    EXPECT_EQ(s.rail_down, 0u);  // the only rail is never declared dead by the engine
}

// A message that failed (no progress for unreach_ns) must not take the channel with it: the
// sender restarts the channel (newer incarnation, numbering from zero), so a message sent
// once the network heals is delivered, intact and once. Before, the receiver waited for the
// abandoned message for good, held the next one behind it and acknowledged it: the sender saw
// it complete with status 0 and it was never delivered.
TEST(Endpoint, MessageAfterAFailureIsDelivered) {
    bspe_cfg c = test_cfg();
    c.unreach_ns = 500 * kMs;
    Sim sim(net(2, 1), c);
    bool cut = true;
    sim.drop_filter = [&](const WirePkt &w) { return cut && w.src == 0; };
    uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 3000));
    sim.run_until(2000 * kMs);
    ASSERT_EQ(sim.node(0).completed.count(a), 1u);
    EXPECT_EQ(sim.node(0).completed[a], -EHOSTUNREACH);
    cut = false;
    std::vector<uint8_t> want = Sim::pattern(0, 1, 1, 3000);
    uint64_t b = sim.send(0, 1, want);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
    ASSERT_EQ(sim.node(0).completed.count(b), 1u);
    EXPECT_EQ(sim.node(0).completed[b], 0);
    expect_delivered(sim.node(1), {want});
    EXPECT_EQ(sim.node(0).stats().chan_restarts, 1u);
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 1u);
    EXPECT_TRUE(sim.node(0).errors.empty());
    EXPECT_TRUE(sim.node(1).errors.empty());
}

// The receiver holds two messages whole behind a first one whose last fragment never gets
// through; the sender saw both complete. When the first fails, the restart reaches the
// receiver (the sender announces it by a probe, nothing else being sent): the two are
// delivered in order, the partial one is dropped and counted, and the channel carries the
// next message on its fresh incarnation.
TEST(Endpoint, RestartDeliversWhatArrivedWholeBehindTheFailedMessage) {
    bspe_cfg c = test_cfg();
    c.unreach_ns = 500 * kMs;
    Sim sim(net(2, 1), c);
    bool cut = true;
    sim.drop_filter = [&](const WirePkt &w) {
        return cut && w.type == BSPE_T_DATA && w.src == 0 && w.msg_id == 0 && w.frag_off == 2000;
    };
    uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 3000));
    std::vector<uint8_t> mb = Sim::pattern(0, 1, 1, 2500), mc = Sim::pattern(0, 1, 2, 100);
    uint64_t b = sim.send(0, 1, mb);
    uint64_t cc = sim.send(0, 1, mc);
    sim.run_until(100 * kMs);
    EXPECT_EQ(sim.node(0).completed[b], 0);
    EXPECT_EQ(sim.node(0).completed[cc], 0);
    EXPECT_TRUE(sim.node(1).delivered.empty());
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
    EXPECT_EQ(sim.node(0).completed[a], -EHOSTUNREACH);
    expect_delivered(sim.node(1), {mb, mc});
    EXPECT_EQ(sim.node(0).stats().chan_restarts, 1u);
    EXPECT_EQ(sim.node(1).stats().chan_resets, 1u);
    EXPECT_EQ(sim.node(1).stats().msgs_abandoned, 1u);
    cut = false;
    std::vector<uint8_t> md = Sim::pattern(0, 1, 3, 3000);
    uint64_t d = sim.send(0, 1, md);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
    EXPECT_EQ(sim.node(0).completed[d], 0);
    expect_delivered(sim.node(1), {mb, mc, md});
    EXPECT_EQ(sim.node(1).stats().chan_resets, 1u);
    EXPECT_EQ(sim.node(0).stats().chan_restarts, 1u);
    EXPECT_TRUE(sim.node(0).errors.empty());
    EXPECT_TRUE(sim.node(1).errors.empty());
}

// A link that carries nothing from node 0 to node 1 from the start while the other way
// works: node 1's messages reach node 0 (which delivers them; its acknowledgements are
// lost), node 0's never reach node 1, and both sides' messages fail. Node 1 restarts its
// channel; node 0, whose packets node 1 never named, restarts only its sending side, and
// then resets on node 1's newer incarnation. Once the link heals, a message each way is
// delivered exactly once, and node 0 has delivered node 1's first two messages once (node
// 1 could not know: they failed).
TEST(Endpoint, OneWayCutFailsBothSidesAndBothRecover) {
    bspe_cfg c = test_cfg();
    c.unreach_ns = 500 * kMs;
    Sim sim(net(2, 1), c);
    bool cut = true;
    sim.drop_filter = [&](const WirePkt &w) { return cut && w.src == 0; };
    uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 3000));
    std::vector<uint8_t> b1 = Sim::pattern(1, 0, 0, 2500), b2 = Sim::pattern(1, 0, 1, 500);
    uint64_t b = sim.send(1, 0, b1), bb = sim.send(1, 0, b2);
    sim.run_until(3000 * kMs);
    EXPECT_EQ(sim.node(0).completed[a], -EHOSTUNREACH);
    EXPECT_EQ(sim.node(1).completed[b], -EHOSTUNREACH);  // delivered, not known to be
    EXPECT_EQ(sim.node(1).completed[bb], -EHOSTUNREACH);
    ASSERT_EQ(sim.node(0).delivered.size(), 2u);
    EXPECT_TRUE(sim.node(1).delivered.empty());
    cut = false;
    std::vector<uint8_t> a2 = Sim::pattern(0, 1, 1, 3000), b3 = Sim::pattern(1, 0, 2, 700);
    uint64_t x = sim.send(0, 1, a2), y = sim.send(1, 0, b3);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
    EXPECT_EQ(sim.node(0).completed[x], 0);
    EXPECT_EQ(sim.node(1).completed[y], 0);
    expect_delivered(sim.node(1), {a2});
    expect_delivered(sim.node(0), {b1, b2, b3});
    EXPECT_EQ(sim.node(0).stats().chan_restarts, 1u);
    EXPECT_EQ(sim.node(1).stats().chan_restarts, 1u);
    EXPECT_EQ(sim.node(0).stats().chan_resets, 1u);  // on node 1's newer incarnation
    EXPECT_EQ(sim.node(1).stats().chan_resets, 0u);
    EXPECT_TRUE(sim.node(0).errors.empty());
    EXPECT_TRUE(sim.node(1).errors.empty());
}

// Node 0's messages fail (nothing of it reaches node 1) while node 1, more patient, still
// resends one whose packets node 0 took, never having heard of node 0 (its packets carry no
// dst_inc). Node 0 restarts only its sending side: node 1's message is acknowledged once the
// link heals, completes with status 0 and is delivered once. A whole restart would have
// taken node 1's packets for those of a stranger: refused (tombstone) until node 1's
// message failed too, or, without the tombstone, delivered a second time (found by
// engine_fuzz).
TEST(Endpoint, RestartKeepsTheReceivingSideOfAPeerThatNeverNamedUs) {
    bspe_cfg c = test_cfg();
    c.unreach_ns = 500 * kMs;
    Sim sim(net(2, 1), c);
    sim.node(1).ep()->cfg.unreach_ns = 5000 * kMs;
    bool cut = true;
    sim.drop_filter = [&](const WirePkt &w) { return cut && w.src == 0; };
    std::vector<uint8_t> m1 = Sim::pattern(1, 0, 0, 2500);
    uint64_t b = sim.send(1, 0, m1);
    uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 3000));
    sim.run_until(2000 * kMs);
    EXPECT_EQ(sim.node(0).completed[a], -EHOSTUNREACH);
    EXPECT_EQ(sim.node(0).stats().chan_restarts, 1u);
    EXPECT_EQ(sim.node(1).completed.count(b), 0u);
    ASSERT_EQ(sim.node(0).delivered.size(), 1u);
    cut = false;
    std::vector<uint8_t> a2 = Sim::pattern(0, 1, 1, 1500), b2 = Sim::pattern(1, 0, 1, 700);
    uint64_t x = sim.send(0, 1, a2), y = sim.send(1, 0, b2);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
    EXPECT_EQ(sim.node(1).completed[b], 0);
    EXPECT_EQ(sim.node(0).completed[x], 0);
    EXPECT_EQ(sim.node(1).completed[y], 0);
    expect_delivered(sim.node(0), {m1, b2});
    expect_delivered(sim.node(1), {a2});
    EXPECT_EQ(sim.node(1).stats().msgs_failed, 0u);
    EXPECT_EQ(sim.node(0).stats().chan_resets + sim.node(1).stats().chan_resets, 0u);
}

// The other side of that case: node 1 took node 0's packets (it knows node 0's incarnation)
// but everything it sent afterwards was lost, so node 0 never saw it name its incarnation.
// Node 0's message fails, and node 0 restarts only its sending side, on a newer incarnation;
// node 1 sees it name node 1's current incarnation and starts only its receiving side afresh
// (the message it took stays delivered). Both keep the other direction as it was: node 1's
// next message is delivered too. Before, the sending side restarted on the same
// incarnation, its next message took message number 0 again, and node 1 refused it as the
// one it had delivered until it failed.
TEST(Endpoint, SendingSideRestartIsSeenByAPeerThatKnowsUs) {
    bspe_cfg c = test_cfg();
    c.unreach_ns = 500 * kMs;
    Sim sim(net(2, 1), c);
    bool healed = false;
    sim.drop_filter = [&](const WirePkt &w) {
        return !healed && w.src == 1 && !sim.node(0).delivered.empty();
    };
    std::vector<uint8_t> m1 = Sim::pattern(1, 0, 0, 2500), ma = Sim::pattern(0, 1, 0, 3000);
    uint64_t b = sim.send(1, 0, m1);
    sim.run_until(10 * kMs);
    ASSERT_EQ(sim.node(0).delivered.size(), 1u);
    EXPECT_EQ(sim.node(1).completed[b], 0);
    uint64_t a = sim.send(0, 1, ma);
    sim.run_until(2000 * kMs);
    EXPECT_EQ(sim.node(0).completed[a], -EHOSTUNREACH);
    EXPECT_EQ(sim.node(0).stats().chan_restarts, 1u);
    ASSERT_EQ(sim.node(1).delivered.size(), 1u);  // it did arrive: a failure says "maybe"
    healed = true;
    std::vector<uint8_t> a2 = Sim::pattern(0, 1, 1, 1500), b2 = Sim::pattern(1, 0, 1, 700);
    uint64_t x = sim.send(0, 1, a2);
    sim.run_until(sim.now() + 10 * kMs);
    uint64_t y = sim.send(1, 0, b2);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
    EXPECT_EQ(sim.node(0).completed[x], 0);
    EXPECT_EQ(sim.node(1).completed[y], 0);
    expect_delivered(sim.node(1), {ma, a2});
    expect_delivered(sim.node(0), {m1, b2});
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 1u);
    EXPECT_EQ(sim.node(1).stats().msgs_failed, 0u);
    EXPECT_EQ(sim.node(0).stats().chan_restarts, 1u);
    EXPECT_EQ(sim.node(1).stats().chan_resets, 1u);  // its receiving side, once
    EXPECT_EQ(sim.node(0).stats().chan_resets, 0u);
    EXPECT_TRUE(sim.node(0).errors.empty());
    EXPECT_TRUE(sim.node(1).errors.empty());
}

// The same, but node 1 also has a message of its own to node 0 out while its packets are
// lost, and node 0's announcements of its restart are lost too. Node 1 (patient: 20 s)
// probes node 0 once the link heals, naming node 0's incarnation before the restart. Node 0
// takes those packets for its receiving side, which goes on (their acknowledgement fields,
// about its old numbering, ignored), and answers them from its new incarnation, which makes
// node 1 reset only its receiving side. Before, node 0 answered "gone": node 1 reset its
// channel (its message failed with -ECONNRESET), and node 1's next packets, no longer
// naming node 0, reset node 0's in turn (node 0's next message failed with -ECONNRESET).
TEST(Endpoint, PeerStillNamingTheIncarnationBeforeASendingSideRestartIsHeard) {
    bspe_cfg c = test_cfg();
    c.unreach_ns = 500 * kMs;
    Sim sim(net(2, 1), c);
    sim.node(1).ep()->cfg.unreach_ns = 20000 * kMs;
    bool healed = false;
    sim.drop_filter = [&](const WirePkt &w) {
        return !healed && ((w.src == 1 && !sim.node(0).delivered.empty()) ||
                           (w.src == 0 && sim.node(0).stats().chan_restarts > 0));
    };
    std::vector<uint8_t> m1 = Sim::pattern(1, 0, 0, 2500), ma = Sim::pattern(0, 1, 0, 3000);
    std::vector<uint8_t> m2 = Sim::pattern(1, 0, 1, 2000);
    uint64_t b = sim.send(1, 0, m1);
    sim.run_until(10 * kMs);
    ASSERT_EQ(sim.node(0).delivered.size(), 1u);
    uint64_t a = sim.send(0, 1, ma);
    uint64_t b2 = sim.send(1, 0, m2);  // lost with everything node 1 sends
    sim.run_until(2000 * kMs);
    EXPECT_EQ(sim.node(0).completed[a], -EHOSTUNREACH);
    EXPECT_EQ(sim.node(0).stats().chan_restarts, 1u);
    EXPECT_EQ(sim.node(1).completed.count(b2), 0u);
    healed = true;
    std::vector<uint8_t> a2 = Sim::pattern(0, 1, 1, 1500);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));  // node 1 probes first
    uint64_t x = sim.send(0, 1, a2);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
    EXPECT_EQ(sim.node(1).completed[b], 0);
    EXPECT_EQ(sim.node(1).completed[b2], 0);
    EXPECT_EQ(sim.node(0).completed[x], 0);
    expect_delivered(sim.node(0), {m1, m2});
    expect_delivered(sim.node(1), {ma, a2});
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 1u);
    EXPECT_EQ(sim.node(1).stats().msgs_failed, 0u);
    EXPECT_EQ(sim.node(0).stats().chan_resets, 0u);
    EXPECT_EQ(sim.node(1).stats().chan_resets, 1u);  // its receiving side, once
    EXPECT_TRUE(sim.node(0).errors.empty());
    EXPECT_TRUE(sim.node(1).errors.empty());
}

// A link that carries nothing for 2 s, then heals: the sender's timeouts have backed off (at
// 50, 150, 350, 750 and 1550 ms, then 3150 ms). The answer to the 3150 ms probe draws the
// resends, which arrive; the last asks for an answer at once, and the message completes with
// status 0 a round trip later. Before, nothing asked: the acknowledgment waited for the next
// timeout, at 6350 ms, which found 6.35 s without progress and failed the message with
// -EHOSTUNREACH (unreach_ns 5 s), although it had been delivered 3 s earlier.
TEST(Endpoint, ResendAfterALongOutageIsAcknowledgedAtOnce) {
    bspe_cfg c = test_cfg();
    c.unreach_ns = 5000 * kMs;
    Sim sim(net(2, 1), c);
    bool cut = true;
    sim.drop_filter = [&](const WirePkt &) { return cut; };
    std::vector<uint8_t> m = Sim::pattern(0, 1, 0, 3000);
    uint64_t a = sim.send(0, 1, m);
    uint64_t t_done = 0;
    sim.node(0).on_complete = [&](Node &, uint64_t, int) { t_done = sim.now(); };
    sim.run_until(2000 * kMs);
    cut = false;
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
    ASSERT_EQ(sim.node(0).completed.count(a), 1u);
    EXPECT_EQ(sim.node(0).completed[a], 0);
    expect_delivered(sim.node(1), {m});
    EXPECT_GT(t_done, 3150 * kMs);
    EXPECT_LT(t_done, 3160 * kMs);
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 0u);
    EXPECT_EQ(sim.node(0).stats().retx_timeout, 3u);  // the three fragments, once each
}

// A machine that stops running for longer than unreach_ns (both nodes stalled: a real-time
// hog, a suspended VM) must not take its own stall for its peer's silence. The sender had
// probed three times in vain (the answers lost) when the stall began; when it runs again, its
// timer comes before the packets that waited: the overdue timeout probes but does not judge,
// the answer shows the message arrived, and it completes with status 0. Before, that timeout
// failed it with -EHOSTUNREACH although it had been delivered. The control: a peer that stays
// silent still fails the message, judged afresh from the end of the stall.
TEST(Endpoint, OwnStallIsNotTakenForThePeersSilence) {
    for (bool silent : {false, true}) {
        SCOPED_TRACE(silent ? "peer silent after the stall" : "peer answers after the stall");
        Sim sim(net(2, 1), test_cfg());  // rto_min 50 ms, 3 probes, unreach_ns 2 s
        bool cut = true;
        sim.drop_filter = [&](const WirePkt &w) { return cut && w.src == 1; };
        uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 3000));
        uint64_t t_done = 0;
        sim.node(0).on_complete = [&](Node &, uint64_t, int) { t_done = sim.now(); };
        sim.run_until(400 * kMs);  // probes at 50, 150 and 350 ms, unanswered
        EXPECT_EQ(sim.node(0).stats().probes_tx, 3u);
        ASSERT_EQ(sim.node(1).delivered.size(), 1u);
        cut = silent;
        sim.stall(0, 3000 * kMs);
        sim.stall(1, 3000 * kMs);
        sim.run_until(3000 * kMs + 10 * kUs);
        EXPECT_EQ(sim.node(0).stats().probes_tx, 4u);
        ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
        ASSERT_EQ(sim.node(0).completed.count(a), 1u);
        EXPECT_EQ(sim.node(0).completed[a], silent ? -EHOSTUNREACH : 0);
        EXPECT_EQ(sim.node(0).stats().msgs_failed, silent ? 1u : 0u);
        EXPECT_EQ(sim.node(1).delivered.size(), 1u);
        // judged afresh from the end of the stall: probes at 3.0 (late), 3.05, 3.15, 3.35,
        // 3.75 and 4.55 s, and the first timeout 2 s (unreach_ns) after 3.0 s, at 6.15 s
        if (silent) {
            EXPECT_EQ(t_done, 6150 * kMs);
        }
    }
}

// The same stall, but the answers keep coming late after it (the queue that filled before
// the stall drains first: kernel_stall's 500 ms of tbf queue): the sender had probed twice
// in vain, its overdue timeout probes, and the next ones run in time while the answers are
// still on their way. The time without progress restarts with the endpoint: before, the
// second timeout after the stall (probes 3, and 3.6 s since the last progress, the stall
// included) failed the message, as in kernel_stall's CI failure of 30 Nov.
TEST(Endpoint, NoProgressClockRestartsAfterOwnStall) {
    Sim sim(net(2, 1), test_cfg());  // rto_min 50 ms, 3 probes, unreach_ns 2 s
    uint64_t answers_from = 0;
    sim.drop_filter = [&](const WirePkt &w) { return w.src == 1 && sim.now() < answers_from; };
    answers_from = 200 * kMs;
    uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 3000));
    sim.run_until(190 * kMs);  // probes at 50 and 150 ms, unanswered
    EXPECT_EQ(sim.node(0).stats().probes_tx, 2u);
    answers_from = 3700 * kMs;  // the answers of the first 700 ms after the stall are lost
    sim.stall(0, 3000 * kMs);
    sim.stall(1, 3000 * kMs);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
    ASSERT_EQ(sim.node(0).completed.count(a), 1u);
    EXPECT_EQ(sim.node(0).completed[a], 0);
    EXPECT_EQ(sim.node(0).stats().msgs_failed, 0u);
    EXPECT_EQ(sim.node(0).stats().chan_restarts, 0u);
    EXPECT_EQ(sim.node(1).delivered.size(), 1u);
}

// The peer stalls (its timer and input wait) for longer than unreach_ns while the sender
// runs on time: to the sender the peer is silent, and its messages fail with -EHOSTUNREACH,
// as they must. The channel restarts; what it sends after the failure, during the stall
// and after it, is delivered once and completes with 0 when the peer runs again, which
// then also takes the restart's announcement behind the old incarnation's packets.
TEST(Endpoint, PeerStalledLongerThanUnreachFailsThenRecovers) {
    for (uint32_t rails : {1u, 2u}) {
        SCOPED_TRACE(rails);
        Sim sim(net(2, rails), test_cfg());  // rto_min 50 ms, 3 probes, unreach_ns 2 s
        std::vector<uint64_t> before, after;
        for (uint32_t i = 0; i < 8; i++)
            before.push_back(sim.send(0, 1, Sim::pattern(0, 1, i, 65536)));
        sim.run_until(20 * kUs);  // the first fragments are on the wire
        sim.stall(1, 5000 * kMs);
        sim.run_until(4500 * kMs);  // failed at the timeout of 3.15 s
        for (uint64_t m : before) {
            ASSERT_EQ(sim.node(0).completed.count(m), 1u);
            EXPECT_EQ(sim.node(0).completed[m], -EHOSTUNREACH);
        }
        std::vector<std::vector<uint8_t>> want;
        for (uint32_t i = 0; i < 3; i++) {
            want.push_back(Sim::pattern(0, 1, 10 + i, 65536));
            after.push_back(sim.send(0, 1, want.back()));
        }
        sim.run_until(5500 * kMs);
        for (uint32_t i = 0; i < 3; i++) {
            want.push_back(Sim::pattern(0, 1, 20 + i, 65536));
            after.push_back(sim.send(0, 1, want.back()));
        }
        ASSERT_TRUE(sim.run_until_idle(sim.now() + 100000 * kMs));
        for (uint64_t m : after) {
            ASSERT_EQ(sim.node(0).completed.count(m), 1u);
            EXPECT_EQ(sim.node(0).completed[m], 0);
        }
        // The peer takes, when it runs again, what reached it whole of the failed messages
        // (a failure says "maybe not delivered", as a TCP timeout does): a prefix of them,
        // in order; then the later ones, in order, each once.
        const auto &got = sim.node(1).delivered;
        ASSERT_GE(got.size(), want.size());
        size_t old = got.size() - want.size();
        EXPECT_LE(old, before.size());
        for (size_t i = 0; i < old; i++)
            EXPECT_EQ(got[i].data, Sim::pattern(0, 1, static_cast<uint32_t>(i), 65536));
        for (size_t i = 0; i < want.size(); i++)
            EXPECT_EQ(got[old + i].data, want[i]);
        printf("old %zu abandoned %llu\n", old,
               (unsigned long long)sim.node(1).stats().msgs_abandoned);
        EXPECT_EQ(sim.node(0).stats().msgs_failed, 8u);
        EXPECT_EQ(sim.node(0).stats().chan_restarts, 1u);
        EXPECT_TRUE(sim.node(0).errors.empty());
        EXPECT_TRUE(sim.node(1).errors.empty());
    }
}

// Closing a channel completes pending messages with -ECONNRESET and aborts reassembly.
TEST(Endpoint, CloseAbortsBothDirections) {
    Sim sim(net(2, 1), test_cfg());
    sim.drop_filter = [](const WirePkt &w) { return w.type == BSPE_T_DATA && w.frag_off == 2000; };
    uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 5000));
    sim.run_until(30 * kUs);  // node 1 holds a partial message, node 0 an unacked one
    Node &n1 = sim.node(1);
    EXPECT_EQ(bspe_chan_close(n1.ep(), n1.chan_to(0), sim.now()), 0);
    EXPECT_EQ(bspe_chan_close(sim.node(0).ep(), sim.node(0).chan_to(1), sim.now()), 0);
    EXPECT_EQ(sim.node(0).completed[a], -ECONNRESET);
    EXPECT_TRUE(n1.delivered.empty());
    EXPECT_TRUE(n1.errors.empty());
}

// The caller may refuse to place a fragment (no memory): it is counted and not acknowledged,
// so the sender resends it and the message still arrives intact.
TEST(Endpoint, RefusedPlacementIsRecovered) {
    // Exercise the engine directly: two endpoints, packets moved by hand.
    bspe_cfg c = test_cfg();
    c.port = 1;
    std::vector<bspe_xmit> out;
    std::vector<std::vector<uint8_t>> placed(1, std::vector<uint8_t>(3000));
    int delivered = 0, refused = 1;
    struct Ctx {
        std::vector<bspe_xmit> *out;
        std::vector<std::vector<uint8_t>> *placed;
        int *delivered, *refused;
    } ctx{&out, &placed, &delivered, &refused};
    bspe_ops ops = {
        [](void *cx, const bspe_xmit *x) { static_cast<Ctx *>(cx)->out->push_back(*x); },
        [](void *cx, const bspe_rx_frag *f) -> int {
            auto *k = static_cast<Ctx *>(cx);
            if (f->off == 1000 && *k->refused > 0) {
                --*k->refused;
                return -ENOMEM;
            }
            std::memcpy((*k->placed)[0].data() + f->off, f->data, f->len);
            return 0;
        },
        [](void *cx, const bspe_delivery *) { ++*static_cast<Ctx *>(cx)->delivered; },
        nullptr,
        [](void *, void *, int) {},
        [](void *, uint64_t) {},
        nullptr,
        heap_chan_alloc,
        heap_chan_free,
        nullptr,
        nullptr,
    };
    std::vector<uint64_t> ma(bspe_mem_size(&c) / 8 + 1), mb(ma.size());
    c.node = 0;
    bspe_ep *a = bspe_init(ma.data(), ma.size() * 8, &c, &ops, &ctx);
    c.node = 1;
    bspe_ep *b = bspe_init(mb.data(), mb.size() * 8, &c, &ops, &ctx);
    int ca = bspe_chan_open(a, 1, 1, 0, nullptr), cb = bspe_chan_open(b, 0, 1, 0, nullptr);
    ASSERT_GE(ca, 0);
    ASSERT_GE(cb, 0);
    auto msg = Sim::pattern(0, 1, 0, 3000);
    ASSERT_EQ(bspe_send(a, ca, msg.data(), 3000, 0, 0), 0);
    auto move = [&](bspe_ep *to, uint64_t now) {
        auto pkts = out;
        out.clear();
        for (auto &x : pkts) {
            std::vector<uint8_t> p(BSPE_HDR_LEN + x.len);
            std::memcpy(p.data(), x.hdr, BSPE_HDR_LEN);
            if (x.len)
                std::memcpy(p.data() + BSPE_HDR_LEN, static_cast<uint8_t *>(x.msg) + x.off, x.len);
            bspe_seal(to == b ? a : b, p.data(), p.data() + BSPE_HDR_LEN, x.len);
            bspe_rx(to, x.rail, p.data(), static_cast<uint32_t>(p.size()), now);
        }
    };
    move(b, 10);  // fragment 1 refused: a hole for the sender
    bspe_stats sb;
    bspe_stats_get(b, -1, -1, &sb);
    EXPECT_EQ(sb.drops[BSPE_DROP_NOMEM], 1u);
    EXPECT_EQ(delivered, 0);
    bspe_expect(b, cb, 1, 0, 10);
    bspe_timer(b, 10 + 100 * kUs);  // b prods with ack 1 / eoh 2
    ASSERT_EQ(out.size(), 1u);
    move(a, 20 + 100 * kUs);  // a resends fragment 1
    ASSERT_EQ(out.size(), 1u);
    move(b, 30 + 100 * kUs);
    EXPECT_EQ(delivered, 1);
    EXPECT_EQ(placed[0], msg);
    bspe_fini(a);
    bspe_fini(b);
}

// Unknown senders get a channel when the endpoint allows it.
TEST(Endpoint, AutoOpenChannel) {
    bspe_cfg c = test_cfg();
    c.flags |= BSPE_CFG_AUTO_OPEN;
    NetCfg n = net(3, 1);
    Sim sim(n, c);
    Node &n2 = sim.node(2);
    bspe_chan_close(n2.ep(), n2.chan_to(0), 0);
    EXPECT_EQ(bspe_chan_find(n2.ep(), 0, 1), -ENOENT);
    sim.send(0, 2, Sim::pattern(0, 2, 0, 3000));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_GE(bspe_chan_find(n2.ep(), 0, 1), 0);
}

// When the receive budget is exhausted only the next expected message is accepted: later
// messages are refused (counted) and recovered after the reader consumed.
TEST(Endpoint, LowBuffersAcceptOnlyNextExpected) {
    bspe_cfg c = test_cfg();
    c.rcvbuf = 8000;
    Sim sim(net(3, 1), c);
    sim.node(2).consume_delay_ns = 300 * kUs;  // a slow reader
    // message 0 from node 0 loses a fragment, so its later messages are not next expected
    sim.drop_filter = [](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && w.msg_id == 0 && w.frag_off == 2000 &&
               !(w.flags & BSPE_F_RETX);
    };
    for (int k = 0; k < 6; k++) {
        sim.send(0, 2, Sim::pattern(0, 2, k, 5000));
        sim.send(1, 2, Sim::pattern(1, 2, k, 5000));
    }
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats s = sim.node(2).stats();
    EXPECT_GT(s.drops[BSPE_DROP_NOBUFS], 0u);
    EXPECT_EQ(s.msgs_rx, 12u);
}

// Pacing over several rails: the rate is the socket's total and the packets alternate between
// the rails, so each gets its share. 16 x 256 KiB to one peer over 2 rails of 20 Mbit/s with
// 512 KiB queues, paced at 95% of their sum: no packet is lost in a queue, both rails carry
// half, and the last packet leaves when the paced rate says (it once drained one rail's runs
// first at the whole rate, overflowing that rail's queue).
TEST(Endpoint, PacingAcrossRailsOverrunsNoRail) {
    NetCfg n = net(2, 2);
    for (auto &r : n.rail) {
        r.gbps = 0.02;
        r.latency_ns = 50 * kUs;
        r.buffer_bytes = 512 * 1024;
    }
    bspe_cfg c = test_cfg();
    c.frag_size = 8944;
    c.rto_min_ns = 200 * kMs;
    c.rtt_max_ns = 100 * kMs;
    Sim sim(n, c);
    uint64_t last_tx = 0, wire_bytes = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.src == 0 && w.type == BSPE_T_DATA) {
            last_tx = sim.now();
            wire_bytes += w.payload_len + BSPE_HDR_LEN;
        }
    };
    const uint64_t rate = 2 * 20000000 / 8 * 95 / 100;
    bspe_set_pacing(sim.node(0).ep(), rate, 0);
    for (int k = 0; k < 16; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 256 * 1024));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.wire().lost_buffer, 0u);
    bspe_stats t = sim.total_stats();
    EXPECT_EQ(t.retx_hole + t.retx_prod + t.retx_timeout, 0u);
    for (int r = 0; r < 2; r++)
        EXPECT_EQ(sim.node(0).stats(-1, r).data_tx, t.data_tx / 2) << "rail " << r;
    // paced: the last packet leaves at wire_bytes / rate, less the initial burst of 4 packets
    const uint64_t paced_ns = wire_bytes * 1000000000ull / rate;
    EXPECT_GE(last_tx, paced_ns - 5 * 9000 * 1000000000ull / rate);
    EXPECT_LE(last_tx, paced_ns + paced_ns / 50);
}

// A paced stream arrives slower than a round trip: the receiver must not take every gap for
// a stall. 200 packets at one per 0.5 ms over a 10 us link: without loss, no prod at all and
// nothing resent (a prod per packet, each answered, was the behaviour before the receiver
// learned the arrival gap).
TEST(Endpoint, PacedStreamDrawsNoProds) {
    Sim sim(net(2, 1), test_cfg());
    bspe_set_pacing(sim.node(0).ep(), 2000000, 0);  // 1056-byte packets: one per 0.53 ms
    for (int k = 0; k < 4; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 50000));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats t = sim.total_stats();
    EXPECT_EQ(t.data_rx, 200u);
    EXPECT_LE(t.prods_tx, 4u);  // at most one per message start, before a gap is known
    EXPECT_EQ(t.retx_hole + t.retx_prod + t.retx_timeout, 0u);
}

// A new rate while packets wait for the old one: they leave at the new rate. (Setting the rate
// used to forget the pending wake-up, stranding the queued messages with no timer armed; the
// messaging layer sets a rate every superstep.)
TEST(Endpoint, NewPacingRateReleasesWaitingPackets) {
    Sim sim(net(2, 1), test_cfg());
    bspe_set_pacing(sim.node(0).ep(), 1000000, 0);
    for (int k = 0; k < 4; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 5000));
    sim.run_until(2 * kMs);
    bspe_set_pacing(sim.node(0).ep(), 2000000, sim.now());
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.total_stats().msgs_rx, 4u);
}

// Pacing with several channels: packets of one channel waiting for tokens are released by the
// timer even if another channel sends in between (pushed by its incoming traffic). Node 0 is
// paced and exchanges messages both ways with nodes 1 and 2; everything arrives.
TEST(Endpoint, PacingReleasesEveryWaitingChannel) {
    Sim sim(net(3, 1), test_cfg());
    bspe_set_pacing(sim.node(0).ep(), 1000000, 0);
    for (int k = 0; k < 20; k++) {
        sim.send(0, 1, Sim::pattern(0, 1, k, 3000));
        sim.send(0, 2, Sim::pattern(0, 2, k, 3000));
        sim.send(1, 0, Sim::pattern(1, 0, k, 500));
        sim.send(2, 0, Sim::pattern(2, 0, k, 500));
        sim.run_until(sim.now() + 700 * kUs);
    }
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.total_stats().msgs_rx, 80u);
}

// A slow rate (a packet every 53 ms, longer than the engine's 16 ms refill step) holds:
// the tokens a late or sparse refill finds must not be cut to 16 ms worth (a paced pid-order
// total exchange ran at about half its rate that way).
TEST(Endpoint, PacingHoldsSlowRates) {
    Sim sim(net(2, 1), test_cfg());
    uint64_t last_tx = 0, wire_bytes = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.src == 0) {
            last_tx = sim.now();
            wire_bytes += w.payload_len + BSPE_HDR_LEN;
        }
    };
    const uint64_t rate = 20000;  // bytes/s: 1056-byte packets 52.8 ms apart
    bspe_set_pacing(sim.node(0).ep(), rate, 0);
    sim.send(0, 1, Sim::pattern(0, 1, 0, 100000));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    // 100 packets: the last leaves at wire_bytes / rate, less the initial burst of 4
    const uint64_t paced_ns = wire_bytes * 1000000000ull / rate;
    EXPECT_GE(last_tx, paced_ns - 5 * 1056 * 1000000000ull / rate);
    EXPECT_LE(last_tx, paced_ns + paced_ns / 50);
}

// Paced packets leave in the order their messages were submitted, across channels: a
// messaging layer's destination schedule (latin square) survives pacing. Node 0 sends to
// 3, then 1, then 2 (channel indices 2, 0, 1); the engine used to drain channels by index
// whenever the pacing timer fired, so node 1's data overtook node 3's.
TEST(Endpoint, PacedPacketsLeaveInSubmissionOrderAcrossChannels) {
    Sim sim(net(4, 1), test_cfg());
    std::vector<int> dst_of_data;
    sim.tap = [&](const WirePkt &w) {
        if (w.src == 0 && w.type == BSPE_T_DATA && !(w.flags & BSPE_F_RETX))
            dst_of_data.push_back(w.dst);
    };
    bspe_set_pacing(sim.node(0).ep(), 10ull * 1000 * 1000, 0);
    const int order[] = {3, 1, 2};
    for (int d : order)
        sim.send(0, d, Sim::pattern(0, d, 0, 20000));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    ASSERT_EQ(dst_of_data.size(), 60u);
    for (size_t k = 0; k < dst_of_data.size(); k++)
        ASSERT_EQ(dst_of_data[k], order[k / 20]) << "packet " << k;
}

// The scenario of [DHS99] Table 1 at packet level: 8 nodes, total exchange of 64 KiB per
// pair in latin-square order, every node paced just below its link rate, and switch output
// ports that hold only 8 KiB. In a latin square no two senders share a receiver at a step,
// so nothing may overflow and nothing may be resent.
static void paced_latin_square(int rails) {
    NetCfg n = net(8, rails);
    for (auto &r : n.rail) {
        r.gbps = 0.001;  // 1 Mbit/s per port
        r.latency_ns = 100 * kUs;
        r.buffer_bytes = 8 * 1024;            // switch output port (the VM's tbf)
        r.egress_buffer_bytes = 1024 * 1024;  // the sender's qdisc
    }
    bspe_cfg c = test_cfg();
    c.nprocs = 8;
    c.frag_size = 1400;
    c.rto_min_ns = 200 * kMs;
    c.rtt_max_ns = 100 * kMs;
    c.prod_max_ns = 1000 * kMs;
    Sim sim(n, c);
    const uint64_t rate = static_cast<uint64_t>(rails) * 1000000 / 8 * 95 / 100;
    for (int i = 0; i < 8; i++)
        bspe_set_pacing(sim.node(i).ep(), rate, 0);
    BspRun run(sim, total_exchange(2, 1, 64 * 1024));
    ASSERT_TRUE(run.run(1000000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.wire().lost_buffer, 0u);
    bspe_stats t = sim.total_stats();
    EXPECT_EQ(t.retx_hole + t.retx_prod + t.retx_timeout, 0u);
}

TEST(Endpoint, PacedLatinSquareOverflowsNoPortOneRail) {
    paced_latin_square(1);
}

TEST(Endpoint, PacedLatinSquareOverflowsNoPortTwoRails) {
    paced_latin_square(2);
}

// An endpoint that closes says so (ACK with BSPE_F_CLOSE on each live rail): its peer settles
// what it acknowledged, fails what can no longer be delivered with -ECONNRESET at once (not
// after unreach_ns), frees the channel and keeps its counters.
TEST(Endpoint, PeerCloseSettlesAndFreesTheChannel) {
    Sim sim(net(2, 2), test_cfg());
    // the second message never gets through
    sim.drop_filter = [](const WirePkt &w) { return w.type == BSPE_T_DATA && w.msg_id == 1; };
    uint64_t a = sim.send(0, 1, Sim::pattern(0, 1, 0, 3000));
    uint64_t b = sim.send(0, 1, Sim::pattern(0, 1, 1, 3000));
    sim.run_until(5 * kMs);
    ASSERT_EQ(sim.node(1).delivered.size(), 1u);
    EXPECT_EQ(sim.node(0).completed.count(a) + sim.node(0).completed.count(b), 0u);
    const uint64_t data_tx = sim.node(0).stats().data_tx;
    sim.at(sim.now() + 1, [&] { bspe_close_notify(sim.node(1).ep(), sim.now()); });
    sim.run_until(sim.now() + 1 * kMs);
    EXPECT_EQ(sim.node(0).completed.at(a), 0);
    EXPECT_EQ(sim.node(0).completed.at(b), -ECONNRESET);
    EXPECT_LT(bspe_chan_find(sim.node(0).ep(), 1, 1), 0);
    bspe_stats s = sim.node(0).stats();
    EXPECT_EQ(s.chan_closes, 1u);
    EXPECT_EQ(s.msgs_tx, 1u);
    EXPECT_EQ(s.msgs_failed, 1u);
    EXPECT_GE(s.data_tx, data_tx);  // the closed channel's counts stay in the totals
}
