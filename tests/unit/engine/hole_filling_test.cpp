// Hole filling and prods ([DHS99] section 4.3), one rail, two nodes.
#include <algorithm>
#include <set>
#include <utility>

#include "engine_test_util.hpp"

using namespace bspsim;
using namespace enginetest;

namespace {

// Drops the first transmission of DATA packets 0->1 whose sequence number is in `lost`.
std::function<bool(const WirePkt &)> drop_first(std::set<uint32_t> lost) {
    return [lost](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && w.dst == 1 && !(w.flags & BSPE_F_RETX) &&
               lost.count(w.seq);
    };
}

// Records retransmitted sequence numbers 0->1 in order.
struct RetxLog {
    std::vector<uint32_t> seqs;
    void attach(Sim &sim) {
        sim.tap = [this](const WirePkt &w) {
            if (w.type == BSPE_T_DATA && w.src == 0 && (w.flags & BSPE_F_RETX))
                seqs.push_back(w.seq);
        };
    }
};

// Records the times of PROD packets, any direction.
struct ProdTimes {
    std::vector<uint64_t> at;
    void attach(Sim &sim) {
        sim.tap = [this, &sim](const WirePkt &w) {
            if (w.type == BSPE_T_PROD)
                at.push_back(sim.now());
        };
    }
};

void send_ten(Sim &sim) {
    for (int k = 0; k < 10; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 100), k == 9 ? BSPE_SEND_LAST : 0);
}

}  // namespace

// [DHS99]'s example: 0..9 sent, only 0,1,4,5,6,9 arrive. Reverse traffic piggybacks
// ack 2 / end-of-hole 4, then ack 7 / end-of-hole 9: the sender resends 2,3 then 7,8.
TEST(HoleFilling, SeedExampleWithReverseTraffic) {
    Sim sim(net(2, 1), test_cfg());
    sim.drop_filter = drop_first({2, 3, 7, 8});
    RetxLog log;
    log.attach(sim);
    send_ten(sim);
    std::vector<std::pair<uint32_t, uint32_t>> acks_seen;
    sim.at(20 * kUs, [&] { sim.send(1, 0, Sim::pattern(1, 0, 0, 100)); });
    sim.at(40 * kUs, [&] { sim.send(1, 0, Sim::pattern(1, 0, 1, 100)); });
    sim.at(60 * kUs, [&] { sim.send(1, 0, Sim::pattern(1, 0, 2, 100)); });
    auto prev = sim.tap;
    sim.tap = [&](const WirePkt &w) {
        prev(w);
        if (w.src == 1 && w.type == BSPE_T_DATA)
            acks_seen.emplace_back(w.ack, w.eoh);
    };
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(log.seqs, (std::vector<uint32_t>{2, 3, 7, 8}));
    ASSERT_EQ(acks_seen.size(), 3u);
    EXPECT_EQ(acks_seen[0], std::make_pair(2u, 4u));
    EXPECT_EQ(acks_seen[1], std::make_pair(7u, 9u));
    EXPECT_EQ(acks_seen[2], std::make_pair(10u, 10u));
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.data_tx, 14u);
    EXPECT_EQ(a.retx_hole, 4u);
    EXPECT_EQ(a.retx_prod, 0u);
    EXPECT_EQ(a.retx_timeout, 0u);
    EXPECT_EQ(a.acked_piggy, 10u);
    EXPECT_EQ(a.msgs_tx, 10u);
    EXPECT_EQ(b.prods_tx, 0u);
    EXPECT_EQ(b.data_rx, 10u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.spurious_rx, 0u);
    EXPECT_EQ(sim.wire().data_lost, 4u);
}

// The same loss without reverse traffic: the receiver prods (no more than once per round
// trip); each prod carries the current hole and the sender resends exactly it.
TEST(HoleFilling, SeedExampleRecoveredByProds) {
    Sim sim(net(2, 1), test_cfg());
    sim.drop_filter = drop_first({2, 3, 7, 8});
    RetxLog log;
    log.attach(sim);
    std::vector<std::pair<uint32_t, uint32_t>> prods;
    std::vector<uint64_t> prod_times;
    auto prev = sim.tap;
    sim.tap = [&](const WirePkt &w) {
        prev(w);
        if (w.type == BSPE_T_PROD) {
            prods.emplace_back(w.ack, w.eoh);
            prod_times.push_back(sim.now());
        }
    };
    send_ten(sim);
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(log.seqs, (std::vector<uint32_t>{2, 3, 7, 8}));
    ASSERT_EQ(prods.size(), 2u);
    EXPECT_EQ(prods[0], std::make_pair(2u, 4u));
    EXPECT_EQ(prods[1], std::make_pair(7u, 9u));
    // no more often than once per round-trip estimate (50 us initially)
    EXPECT_GE(prod_times[1] - prod_times[0], 10 * kUs);
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.data_tx, 14u);
    EXPECT_EQ(a.retx_prod, 4u);
    EXPECT_EQ(a.retx_hole, 0u);
    EXPECT_EQ(a.retx_timeout, 0u);
    EXPECT_EQ(a.prods_rx, 2u);
    EXPECT_EQ(b.prods_tx, 2u);
    EXPECT_EQ(b.prods_early, 0u);
    EXPECT_EQ(b.dup_rx, 0u);
    // The sender's buffers are finally freed by its conservative timeout probe, answered at
    // once by an explicit ack; nothing is resent for it.
    EXPECT_EQ(a.timeouts, 1u);
    EXPECT_EQ(a.probes_tx, 1u);
    EXPECT_EQ(b.acks_tx, 1u);
    EXPECT_EQ(a.msgs_tx, 10u);
}

// A receiver that runs ahead: it expects a message the sender has not sent yet. The prod
// interval doubles with each round. Only the first prod is answered (a plain acknowledgement
// showing no hole): it asks for an answer, the endpoint's first round-trip sample; the
// sender leaves the later ones, for data merely expected, unanswered, as it has nothing to
// tell.
TEST(HoleFilling, ReceiverRunningAheadBacksOff) {
    Sim sim(net(2, 1), test_cfg());
    std::vector<uint64_t> prod_times;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_PROD)
            prod_times.push_back(sim.now());
    };
    Node &rx = sim.node(1);
    bspe_expect(rx.ep(), rx.chan_to(0), 1, 0, 0);
    sim.at(1 * kMs, [&] { sim.send(0, 1, Sim::pattern(0, 1, 0, 3000), BSPE_SEND_LAST); });
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    ASSERT_EQ(prod_times.size(), 4u);
    // intervals 50, 100, 200, 400 us: first prod one interval after the expectation
    EXPECT_EQ(prod_times[0], 50 * kUs);
    EXPECT_EQ(prod_times[1] - prod_times[0], 100 * kUs);
    EXPECT_EQ(prod_times[2] - prod_times[1], 200 * kUs);
    EXPECT_EQ(prod_times[3] - prod_times[2], 400 * kUs);
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(b.prods_tx, 4u);
    EXPECT_EQ(b.prods_early, 1u);
    EXPECT_EQ(a.prods_rx, 4u);
    EXPECT_EQ(a.acks_tx, 1u);  // the answer to the first prod only
    EXPECT_EQ(a.retx_prod + a.retx_hole + a.retx_timeout, 0u);
    EXPECT_EQ(a.data_tx, 3u);
}

// The same on a channel without a round-trip sample of its own, on an endpoint that has one
// (from an exchange with another peer): the channel takes the endpoint's estimate, and even
// its first prod for data merely expected does not ask for an answer. None is answered, the
// rounds back off as if answered "nothing", and the message sent later arrives.
TEST(HoleFilling, ReceiverRunningAheadWithEndpointSampleProdsUnanswered) {
    bspe_cfg cfg = test_cfg();
    cfg.nprocs = 3;
    Sim sim(net(3, 1), cfg);
    std::vector<std::pair<uint64_t, uint16_t>> prods;  // to node 0: time, flags
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_PROD && w.dst == 0)
            prods.emplace_back(sim.now(), w.flags);
    };
    Node &rx = sim.node(1);
    // node 1's last barrier message to node 2 is acknowledged at once: the endpoint's first
    // round-trip sample; node 0's first message opens the channel (no sample at node 1: it
    // sent nothing on it)
    sim.send(1, 2, Sim::pattern(1, 2, 0, 500), BSPE_SEND_LAST | BSPE_SEND_SYNC);
    sim.send(0, 1, Sim::pattern(0, 1, 0, 500), 0);
    sim.run_until(200 * kUs);
    ASSERT_EQ(sim.node(2).stats().acks_tx, 1u);
    ASSERT_EQ(rx.stats().prods_tx, 0u);
    uint64_t t0 = sim.now();
    // two messages in this superstep in all, the first delivered already
    bspe_expect(rx.ep(), rx.chan_to(0), 2, 0, t0);
    sim.at(t0 + 1 * kMs, [&] { sim.send(0, 1, Sim::pattern(0, 1, 1, 3000), BSPE_SEND_LAST); });
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    // rounds 50, 100, 200, 400 us apart, as after answers "nothing"; none asks for an answer
    ASSERT_EQ(prods.size(), 4u);
    const uint64_t at[] = {50, 150, 350, 750};
    for (size_t i = 0; i < prods.size(); i++) {
        EXPECT_EQ(prods[i].first, t0 + at[i] * kUs) << i;
        EXPECT_EQ(prods[i].second & BSPE_F_ACKREQ, 0) << i;
    }
    bspe_stats a = sim.node(0).stats(), b = rx.stats();
    EXPECT_EQ(b.prods_tx, 4u);
    EXPECT_EQ(a.prods_rx, 4u);
    EXPECT_EQ(b.prods_early, 0u);  // no prod answered
    EXPECT_EQ(a.acks_tx, 0u);
    EXPECT_EQ(a.retx_prod + a.retx_hole + a.retx_timeout, 0u);
    EXPECT_EQ(a.data_tx, 4u);  // the first message and the three packets of the second
}

// A receiver that runs ahead, and the message it expects, sent while the sender leaves its prods
// unanswered (it had nothing to tell), is lost whole. The sender knows its receiver waits (it
// prodded and drew nothing): the message's last packet asks for an answer at once, and when
// none came two round trips later its tail loss probe's answer shows the loss, resent as holes
// (Documentation/protocol.rst, "Tail loss probe"); before, the next prod round found it, 550 us
// after the loss, and the sender's timeout probe settled the resend.
TEST(HoleFilling, MessageLostWholeAfterUnansweredProdsFoundByTailProbe) {
    Sim sim(net(2, 1), test_cfg());
    std::vector<std::pair<uint64_t, uint16_t>> prods;  // time, flags
    std::vector<uint64_t> resent;
    uint16_t last_flags = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_PROD)
            prods.emplace_back(sim.now(), w.flags);
        if (w.type == BSPE_T_DATA && (w.flags & BSPE_F_RETX))
            resent.push_back(sim.now());
        if (w.type == BSPE_T_DATA && !(w.flags & BSPE_F_RETX) && (w.flags & BSPE_F_LAST))
            last_flags = w.flags;
    };
    sim.drop_filter = [](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && !(w.flags & BSPE_F_RETX);
    };
    Node &rx = sim.node(1);
    bspe_expect(rx.ep(), rx.chan_to(0), 1, 0, 0);
    sim.at(1 * kMs, [&] { sim.send(0, 1, Sim::pattern(0, 1, 0, 3000), BSPE_SEND_LAST); });
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.wire().data_lost, 3u);
    // rounds at 50, 150, 350, 750 us (the first asks for an answer: the endpoint has no
    // round-trip sample yet), all before the message is sent at 1 ms; none after it
    ASSERT_EQ(prods.size(), 4u);
    const uint64_t at[] = {50, 150, 350, 750};
    for (size_t i = 0; i < 4; i++)
        EXPECT_EQ(prods[i].first, at[i] * kUs) << i;
    EXPECT_EQ(prods[0].second & BSPE_F_ACKREQ, BSPE_F_ACKREQ);
    for (size_t i = 1; i < 4; i++)
        EXPECT_EQ(prods[i].second & BSPE_F_ACKREQ, 0) << i;
    EXPECT_EQ(last_flags & (BSPE_F_ACKREQ | BSPE_F_WNDREQ), BSPE_F_ACKREQ | BSPE_F_WNDREQ);
    // the three packets resent together, two round-trip estimates and ack_delay after the
    // loss plus the probe's round trip (110 us): a seventh of the receiver's prod interval
    // by then (800 us)
    ASSERT_EQ(resent.size(), 3u);
    EXPECT_EQ(resent[0], resent[2]);
    EXPECT_GT(resent[0], 1 * kMs);
    EXPECT_LT(resent[0], 1 * kMs + 150 * kUs);
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.retx_hole, 3u);
    EXPECT_EQ(a.retx_prod + a.retx_timeout, 0u);
    // one check (the tail loss probe), no timeout: the resend's last packet asks for an
    // answer at once too, which settles the message
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(a.probes_tx, 1u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.msgs_rx, 1u);
}

// A lost tail (the last packets, nothing after them) with an expectation: prods reveal it.
TEST(HoleFilling, TailLossRecoveredByProd) {
    Sim sim(net(2, 1), test_cfg());
    sim.drop_filter = drop_first({8, 9});
    Node &rx = sim.node(1);
    bspe_expect(rx.ep(), rx.chan_to(0), 10, 0, 0);
    send_ten(sim);
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.retx_prod, 2u);
    EXPECT_EQ(a.retx_hole + a.retx_timeout, 0u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(a.data_tx, 12u);
}

// Lost tail, no expectation, no reverse traffic: only the sender's timeout probe finds it,
// counted separately; the probe's answer shows exactly what is missing (packet 9), which is
// resent asking for an answer at once (WNDREQ: below the n/(2p) threshold the receiver does
// not acknowledge on its own), which settles it: one timeout, one probe, two answers. Before
// the resend asked, a second probe one timeout later collected that acknowledgement.
TEST(HoleFilling, TailLossRecoveredByTimeoutProbe) {
    Sim sim(net(2, 1), test_cfg());
    sim.drop_filter = drop_first({9});
    send_ten(sim);
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.timeouts, 1u);
    EXPECT_EQ(a.probes_tx, 1u);
    EXPECT_EQ(b.acks_tx, 2u);
    EXPECT_EQ(a.retx_timeout, 1u);
    EXPECT_EQ(a.retx_prod + a.retx_hole, 0u);
    EXPECT_EQ(b.dup_rx, 0u);
}

namespace {

uint64_t all_retx(const bspe_stats &s) {
    return s.retx_hole + s.retx_prod + s.retx_timeout + s.retx_failover;
}

// Two streams, 0 -> 1 and 1 -> 0 (every DATA packet piggybacks a report), of 40 messages of
// 20 fragments each, on one rail that delays 10% of the packets by 2 us (a packet overtaken
// by the next two or three: one rail's frames processed on two CPUs at once).
NetCfg reordering_net(uint64_t seed) {
    NetCfg n = net(2, 1, seed);
    n.rail[0].faults.reorder = 0.1;
    n.rail[0].faults.reorder_ns = 2 * kUs;
    return n;
}

void one_stream(Sim &sim) {
    for (int k = 0; k < 40; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 20000));
}

void two_streams(Sim &sim) {
    for (int k = 0; k < 40; k++) {
        sim.send(0, 1, Sim::pattern(0, 1, k, 20000));
        sim.send(1, 0, Sim::pattern(1, 0, k, 20000));
    }
}

// two_streams over a network that reorders and loses nothing: runs them to the end, checks
// that every message arrived intact, once, and returns the two nodes' stats.
std::pair<bspe_stats, bspe_stats> two_streams_reordered(Sim &sim) {
    two_streams(sim);
    EXPECT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.wire().data_lost, 0u);
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.msgs_rx, 40u);
    EXPECT_EQ(b.msgs_rx, 40u);
    return {a, b};
}

}  // namespace

// Reordering inside one rail is not loss (Documentation/protocol.rst "Hole filling",
// reordering allowance): a hole younger than a quarter of the round-trip estimate is not
// reported, so nothing is resent and every message arrives exactly once. Before the
// allowance the first report after an overtaken packet showed a hole and the sender resent
// it at once (here 30-odd needless retransmissions, each a duplicate at the receiver).
TEST(HoleFilling, ReorderingInsideARailResendsNothing) {
    Sim sim(reordering_net(21), test_cfg());
    auto [a, b] = two_streams_reordered(sim);
    EXPECT_GT(sim.wire().reordered, 50u);
    EXPECT_EQ(all_retx(a), 0u);
    EXPECT_EQ(all_retx(b), 0u);
    EXPECT_EQ(a.dup_rx + b.dup_rx, 0u);
    EXPECT_EQ(a.timeouts + b.timeouts, 0u);
    EXPECT_EQ(a.data_tx, 800u);
    EXPECT_EQ(b.data_tx, 800u);
}

// Real loss under the same reordering, one stream 0 -> 1 (reports: the answers to its window
// requests): each lost packet is reported once its hole is older than the allowance (by the
// next report, or by the explicit ACK the receiver makes due for a hole it hid) and resent
// exactly once, without the timeout (150 and 151 by a prod: they are found missing while the
// sender's window is full and no request is outstanding, as without reordering).
TEST(HoleFilling, LossUnderReorderingResentExactlyOnceWithoutTimeout) {
    Sim sim(reordering_net(22), test_cfg());
    const std::set<uint32_t> lost = {3, 150, 151};
    sim.drop_filter = drop_first(lost);
    RetxLog log;
    log.attach(sim);
    one_stream(sim);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_GT(sim.wire().reordered, 50u);
    EXPECT_EQ(sim.wire().data_lost, lost.size());
    std::vector<uint32_t> sorted = log.seqs;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, std::vector<uint32_t>(lost.begin(), lost.end()));
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.retx_hole, 1u);  // 3
    EXPECT_EQ(a.retx_prod, 2u);  // 150 and 151: the window was full, nothing was requested
    EXPECT_EQ(a.retx_timeout + a.retx_failover, 0u);
    EXPECT_EQ(all_retx(b), 0u);
    EXPECT_EQ(a.timeouts + b.timeouts, 0u);
    EXPECT_EQ(a.dup_rx + b.dup_rx, 0u);
    EXPECT_EQ(b.spurious_rx, 0u);
    EXPECT_EQ(a.data_tx, 800u + lost.size());
    EXPECT_EQ(b.msgs_rx, 40u);
}

// The lost tail of a message whose first packets arrived, while the receiver is busy with
// another sender's stream: a message's fragments leave back to back, so once its channel is
// quiet for a prod interval the rest is lost, whatever the other channels receive. The
// receiver prods at once (the answer reveals the tail, the next prod carries it, as soon as
// it is older than the reordering allowance) and the packet is resent once, by the prod.
// Before, the prod waited until the whole endpoint was quiet (here the 10 ms stream), and
// the sender's timeout (5 ms here) found the loss first.
TEST(HoleFilling, PartialMessageTailProddedWhileEndpointBusy) {
    NetCfg n = net(3, 1);
    n.rail[0].gbps = 1;  // node 1's stream of 1200 packets takes 10 ms
    bspe_cfg c = test_cfg();
    c.nprocs = 3;
    c.rto_min_ns = 5 * kMs;
    Sim sim(n, c);
    sim.drop_filter = [](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && w.dst == 2 && w.seq == 2 &&
               !(w.flags & BSPE_F_RETX);
    };
    for (int k = 0; k < 12; k++)
        sim.send(1, 2, Sim::pattern(1, 2, k, 100000));
    sim.at(1 * kMs, [&] { sim.send(0, 2, Sim::pattern(0, 2, 0, 3000)); });
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.wire().data_lost, 1u);
    bspe_stats a = sim.node(0).stats(), s = sim.node(1).stats(), b = sim.node(2).stats();
    EXPECT_EQ(a.data_tx, 4u);
    EXPECT_EQ(a.retx_prod, 1u);
    EXPECT_EQ(a.retx_hole + a.retx_timeout, 0u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(s.timeouts, 0u);
    EXPECT_EQ(all_retx(s), 0u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.msgs_rx, 13u);
}

// A message striped over two rails loses its last packet, the only one on rail 1 after the
// others. The receiver prods on both rails; rail 0's answer comes first and shows nothing
// missing there, rail 1's shows the lost tail. Each rail's answer speaks for its rail: the
// tail is prodded for a reordering allowance after rail 1's answer, not one (doubled) prod
// interval later because rail 0's answer had closed the round.
TEST(HoleFilling, TailShownByTheSecondRailsAnswerProddedAtOnce) {
    Sim sim(net(2, 2), test_cfg());
    bool dropped = false;
    sim.drop_filter = [&](const WirePkt &w) {
        if (dropped || w.type != BSPE_T_DATA || w.src != 0 || w.rail != 1 || w.frag_off == 0 ||
            w.frag_off + w.payload_len != w.msg_len)
            return false;
        return dropped = true;
    };
    std::vector<std::pair<uint64_t, int>> prods;  // time, rail
    uint64_t resent_at = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_PROD)
            prods.emplace_back(sim.now(), w.rail);
        if (w.type == BSPE_T_DATA && (w.flags & BSPE_F_RETX))
            resent_at = sim.now();
    };
    Node &rx = sim.node(1);
    bspe_expect(rx.ep(), rx.chan_to(0), 1, 0, 0);
    // 6 fragments of test_cfg's 1000 bytes: rails 0, 1, 0, 1, 0, 1; the last (on rail 1) is lost
    sim.send(0, 1, Sim::pattern(0, 1, 0, 5612), BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    ASSERT_TRUE(dropped);
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    // the round (both rails), then the prod that carries rail 1's hole
    ASSERT_EQ(prods.size(), 3u);
    EXPECT_EQ(prods[0].first, prods[1].first);
    EXPECT_EQ(prods[2].second, 1);
    uint64_t first = prods[0].first, ivl = first;  // the expectation was set at 0
    // a round trip (the answers) and the reordering allowance, well inside the interval
    // (before: the next prod one doubled interval after the round, at 3 x first)
    EXPECT_LT(prods[2].first - first, ivl);
    EXPECT_LT(resent_at - first, ivl);
    EXPECT_EQ(a.retx_prod, 1u);
    EXPECT_EQ(a.retx_hole + a.retx_timeout, 0u);
    // the prodded sender knows its receiver waits: the resent last packet asks for an answer
    // at once, which frees the sender's buffers (before: its conservative timeout probe)
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(a.probes_tx, 0u);
    EXPECT_EQ(b.prods_tx, 3u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.msgs_rx, 1u);
}

// A channel opened after the endpoint measured its round trips starts from the endpoint's
// estimate, not from rtt_init (50 us here over links of 10 us round trip): the first prod for
// data expected from a new peer comes one measured round trip after the expectation.
TEST(HoleFilling, NewChannelStartsFromTheEndpointsRoundTrip) {
    NetCfg n = net(3, 1);
    n.lazy_chans = true;
    Sim sim(n, test_cfg());
    std::vector<std::pair<uint64_t, int>> prods;  // time, destination
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_PROD && w.src == 1)
            prods.emplace_back(sim.now(), w.dst);
    };
    Node &rx = sim.node(1);
    // node 1 runs ahead of node 0: its prods, answered, measure the round trip
    bspe_expect(rx.ep(), rx.chan_to(0), 1, 0, 0);
    sim.at(1 * kMs, [&] { sim.send(0, 1, Sim::pattern(0, 1, 0, 3000), BSPE_SEND_LAST); });
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    ASSERT_FALSE(prods.empty());
    EXPECT_EQ(prods[0].first, 50 * kUs);  // rtt_init: nothing measured yet
    uint64_t t0 = sim.now() + 1 * kMs;
    size_t before = prods.size();
    sim.at(t0, [&] { bspe_expect(rx.ep(), rx.chan_to(2), 1, 0, sim.now()); });
    sim.at(t0 + 1 * kMs, [&] { sim.send(2, 1, Sim::pattern(2, 1, 0, 3000), BSPE_SEND_LAST); });
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    ASSERT_GT(prods.size(), before);
    EXPECT_EQ(prods[before].second, 2);
    // one measured round trip (10 us links both ways, at least rtt_min), not 50 us
    EXPECT_GE(prods[before].first - t0, 10 * kUs);
    EXPECT_LT(prods[before].first - t0, 20 * kUs);
}

// Reordering wider than a quarter of the round-trip estimate (a slow link: two frames swapped
// before a 1 Mbit/s port arrive a frame time apart; here 10% of the packets delayed by 20 us):
// the first holes it shows are reported and resent for nothing, and each such resend, a
// duplicate at the receiver, widens that receiver's allowance by another quarter of its
// estimate (RFC 8985's reordering window steps, Documentation/protocol.rst "Hole filling"),
// so the needless resends stop after a few instead of following the overtaken packets all
// along (16 with the fixed quarter: 9 and 7).
TEST(HoleFilling, SpuriousResendsWidenTheReorderingAllowance) {
    NetCfg n = reordering_net(23);
    n.rail[0].faults.reorder_ns = 20 * kUs;
    Sim sim(n, test_cfg());
    auto [a, b] = two_streams_reordered(sim);
    EXPECT_GT(sim.wire().reordered, 150u);
    // every resend was needless, and came from a hole report or a prod, never a timeout
    EXPECT_EQ(all_retx(a), b.spurious_rx);
    EXPECT_EQ(all_retx(b), a.spurious_rx);
    EXPECT_EQ(a.dup_rx, a.spurious_rx);
    EXPECT_EQ(b.dup_rx, b.spurious_rx);
    EXPECT_EQ(a.retx_timeout + b.retx_timeout, 0u);
    // the reordering exceeds the first allowance, and widening it stops the resends
    EXPECT_GT(a.spurious_rx + b.spurious_rx, 0u);
    EXPECT_LE(a.spurious_rx, 4u);
    EXPECT_LE(b.spurious_rx, 4u);
    EXPECT_EQ(a.data_tx, 800u + all_retx(a));
    EXPECT_EQ(b.data_tx, 800u + all_retx(b));
}

// bspe_expect takes the messages of the superstep in all, those delivered already included:
// messages the engine delivered before the caller learnt how many come (and the caller may not
// have read yet) are not expected again. Three messages of epoch 0 delivered, then "3 in all":
// nothing is expected, no prod, the endpoint goes idle; "4 in all": node 1 prods until the
// fourth came, and not after it.
TEST(HoleFilling, ExpectationIsATotalOfTheSuperstep) {
    Sim sim(net(2, 1), test_cfg());
    ProdTimes log;
    log.attach(sim);
    const std::vector<uint64_t> &prods = log.at;
    Node &rx = sim.node(1);
    for (int k = 0; k < 3; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 500), k == 2 ? BSPE_SEND_LAST : 0);
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    ASSERT_EQ(rx.delivered.size(), 3u);
    EXPECT_EQ(bspe_expect(rx.ep(), rx.chan_to(0), 3, 0, sim.now()), 0);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 10000 * kMs));
    EXPECT_TRUE(prods.empty());
    EXPECT_EQ(bspe_expect(rx.ep(), rx.chan_to(0), 4, 0, sim.now()), 0);
    const uint64_t t0 = sim.now();
    sim.at(t0 + 2 * kMs, [&] { sim.send(0, 1, Sim::pattern(0, 1, 3, 500), BSPE_SEND_LAST); });
    ASSERT_TRUE(sim.run_until_idle(t0 + 10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    ASSERT_FALSE(prods.empty());
    for (uint64_t t : prods)
        EXPECT_LT(t, t0 + 2 * kMs);  // none after the fourth message came
    EXPECT_EQ(rx.stats().prods_tx, prods.size());
}

// Totals are per superstep (the endpoint's epoch, against the epoch each message carries):
// two messages of epoch 0 do not count toward the two expected in epoch 1, which node 1 prods
// for until they come. Barrier traffic (BSPE_SEND_SYNC) counts apart: a barrier message here
// satisfies an expectation with BSPE_EXPECT_SYNC and not one of data.
TEST(HoleFilling, ExpectationTotalsArePerSuperstepAndClass) {
    Sim sim(net(2, 1), test_cfg());
    ProdTimes log;
    log.attach(sim);
    const std::vector<uint64_t> &prods = log.at;
    Node &rx = sim.node(1);
    const int c = rx.chan_to(0);
    EXPECT_EQ(bspe_expect(rx.ep(), c, 1, 0x80, 0), -EINVAL);
    EXPECT_EQ(bspe_expect(rx.ep(), 4242, 1, 0, 0), -EINVAL);
    sim.send(0, 1, Sim::pattern(0, 1, 0, 500), 0);
    sim.send(0, 1, Sim::pattern(0, 1, 1, 500), BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    for (int i = 0; i < 2; i++)
        bspe_superstep_done(sim.node(i).ep(), 1, sim.now());
    // the barrier of superstep 2 has begun: node 0's barrier message of it came
    sim.send(0, 1, Sim::pattern(0, 1, 2, 100), BSPE_SEND_SYNC | BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 10000 * kMs));
    ASSERT_EQ(rx.delivered.size(), 3u);
    EXPECT_EQ(bspe_expect(rx.ep(), c, 1, BSPE_EXPECT_SYNC, sim.now()), 0);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 10000 * kMs));
    EXPECT_TRUE(prods.empty());
    // data of epoch 1: none yet, whatever came in epoch 0 or as barrier traffic
    EXPECT_EQ(bspe_expect(rx.ep(), c, 2, 0, sim.now()), 0);
    const uint64_t t0 = sim.now();
    sim.at(t0 + 2 * kMs, [&] {
        sim.send(0, 1, Sim::pattern(0, 1, 3, 500), 0);
        sim.send(0, 1, Sim::pattern(0, 1, 4, 500), BSPE_SEND_LAST);
    });
    ASSERT_TRUE(sim.run_until_idle(t0 + 10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    ASSERT_FALSE(prods.empty());
    for (uint64_t t : prods)
        EXPECT_LT(t, t0 + 2 * kMs);
    // a peer past the epoch has sent all of it: nothing expected
    bspe_superstep_done(sim.node(0).ep(), 2, sim.now());
    sim.send(0, 1, Sim::pattern(0, 1, 5, 100), BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 10000 * kMs));
    const size_t before = prods.size();
    EXPECT_EQ(bspe_expect(rx.ep(), c, 9, 0, sim.now()), 0);
    ASSERT_TRUE(sim.run_until_idle(sim.now() + 10000 * kMs));
    EXPECT_EQ(prods.size(), before);
}

// The same for a barrier message: a receiver waiting for its partner's message of the barrier
// prods it in vain, then the message is lost. Its end asks for an answer at once (barrier
// traffic is otherwise acknowledged by the next superstep only, and its partner in the round
// sends nothing back to it before then), so the tail loss probe finds the loss two round trips
// later, not the receiver's backed-off prods.
TEST(HoleFilling, BarrierMessageLostAfterUnansweredProdsFoundByTailProbe) {
    Sim sim(net(2, 1), test_cfg());
    std::vector<uint64_t> prods, resent;
    uint16_t sent_flags = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_PROD)
            prods.push_back(sim.now());
        if (w.type == BSPE_T_DATA && (w.flags & BSPE_F_RETX))
            resent.push_back(sim.now());
        if (w.type == BSPE_T_DATA && !(w.flags & BSPE_F_RETX))
            sent_flags = w.flags;
    };
    sim.drop_filter = [](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && !(w.flags & BSPE_F_RETX);
    };
    Node &rx = sim.node(1);
    ASSERT_EQ(bspe_expect(rx.ep(), rx.chan_to(0), 1, BSPE_EXPECT_SYNC, 0), 0);
    sim.at(1 * kMs, [&] { sim.send(0, 1, Sim::pattern(0, 1, 0, 300), BSPE_SEND_SYNC); });
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.wire().data_lost, 1u);
    ASSERT_FALSE(prods.empty());
    for (uint64_t t : prods)
        EXPECT_LT(t, 1 * kMs);  // all before the message was sent
    EXPECT_EQ(sent_flags & (BSPE_F_SYNC | BSPE_F_ACKREQ | BSPE_F_WNDREQ),
              BSPE_F_SYNC | BSPE_F_ACKREQ | BSPE_F_WNDREQ);
    ASSERT_EQ(resent.size(), 1u);
    EXPECT_LT(resent[0], 1 * kMs + 150 * kUs);
    bspe_stats a = sim.node(0).stats();
    EXPECT_EQ(a.retx_hole, 1u);
    EXPECT_EQ(a.retx_prod + a.retx_timeout, 0u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(a.probes_tx, 1u);
    EXPECT_EQ(rx.stats().msgs_rx, 1u);
}
