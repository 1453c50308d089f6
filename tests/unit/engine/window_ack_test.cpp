// Window acknowledgement (Documentation/protocol.rst "Window acknowledgement"): a sender
// streaming one way asks for an acknowledgement once per half window (WNDREQ) and at the end
// of the stream, the receiver answers at once, so the stream never waits on a full window for
// the sender's timeout; below half a window (a superstep's exchange) nothing changes.
#include <set>

#include "bsp_workload.hpp"
#include "engine_test_util.hpp"

using namespace bspsim;
using namespace enginetest;

namespace {

uint64_t retx(const bspe_stats &s) {
    return s.retx_hole + s.retx_prod + s.retx_timeout + s.retx_failover;
}

// What the wire carried from node 0 to node 1 (DATA) and back (explicit ACKs).
struct StreamLog {
    uint64_t wndreq = 0;                  // DATA 0->1 with WNDREQ
    std::vector<std::set<uint32_t>> req;  // per rail: seqs of the WNDREQ packets
    std::vector<uint32_t> last_seq;       // per rail: the last DATA seq 0->1 (first transmission)
    std::vector<uint16_t> last_flags;     // and its flags
    uint64_t acks_back = 0;               // ACK packets 1->0
    uint64_t other_wndreq = 0;            // WNDREQ on anything but DATA 0->1
    void attach(Sim &sim, int rails) {
        req.resize(rails);
        last_seq.resize(rails);
        last_flags.resize(rails);
        sim.tap = [this](const WirePkt &w) {
            bool data01 = w.type == BSPE_T_DATA && w.src == 0 && w.dst == 1;
            if ((w.flags & BSPE_F_WNDREQ) && !data01)
                other_wndreq++;
            if (data01 && !(w.flags & BSPE_F_RETX)) {
                last_seq[w.rail] = w.seq;
                last_flags[w.rail] = w.flags;
            }
            if (data01 && (w.flags & BSPE_F_WNDREQ)) {
                wndreq++;
                req[w.rail].insert(w.seq);
            }
            if (w.type == BSPE_T_ACK && w.src == 1)
                acks_back++;
        };
    }
};

// Sends `count` messages of `len` bytes 0 -> 1, all at once (the sim queues what the
// channel's message window does not take and submits it as messages complete).
void stream(Sim &sim, int count, size_t len) {
    for (int k = 0; k < count; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, len));
}

}  // namespace

// The stream of the unshaped benchmark in small: 64 messages of 100 fragments (25 windows of
// 256 packets) one way over a lossless rail. The sender asks at most once per half window and
// on its last packet, each request is answered by exactly one explicit ACK, and the stream
// ends without a timeout, a prod or a retransmission. Before the window rule the sender
// filled its window and waited (the receiver acknowledges on its own only after n/(2p) = 2353
// packets here) until the receiver, short of a message, prodded (24 times), and the end of
// the stream waited for the sender's timeout.
TEST(WindowAck, OneWayStreamNeverWaitsForTheTimeout) {
    Sim sim(net(2, 1), test_cfg());
    StreamLog log;
    log.attach(sim, 1);
    stream(sim, 64, 100000);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    const uint32_t pkts = 6400, half = 128;
    EXPECT_EQ(a.data_tx, pkts);
    EXPECT_EQ(a.msgs_tx, 64u);
    EXPECT_EQ(b.msgs_rx, 64u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(a.probes_tx, 0u);
    EXPECT_EQ(retx(a), 0u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.prods_tx, 0u);
    // The requests, exactly: 127 fills half the window; 199 ends the second message, the
    // newest one when it was sent (the test submits one message at a time, each pushed at
    // once, like sendmsg): a tail request; then one every half window; 6399 ends the stream.
    std::set<uint32_t> want = {half - 1, 199, pkts - 1};
    for (uint32_t s = 327; s < pkts - 1; s += half)
        want.insert(s);
    EXPECT_EQ(log.req[0], want);
    EXPECT_EQ(log.wndreq, want.size());  // 52: at most one per half window, and the tails
    EXPECT_LE(log.wndreq, 2 * (pkts / half + 1));
    // each request answered by exactly one explicit ACK, and nothing else sent back
    EXPECT_EQ(b.acks_tx, log.wndreq);
    EXPECT_EQ(log.acks_back, log.wndreq);
    EXPECT_EQ(log.other_wndreq, 0u);
    EXPECT_EQ(a.acked_piggy, pkts);
}

// The same over two rails: every message is striped, each rail asks for itself and each
// rail's request is answered on that rail.
TEST(WindowAck, StripedStreamAsksPerRail) {
    Sim sim(net(2, 2), test_cfg());
    StreamLog log;
    log.attach(sim, 2);
    stream(sim, 64, 100000);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.data_tx, 6400u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(retx(a), 0u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.prods_tx, 0u);
    for (int r = 0; r < 2; r++) {
        bspe_stats ar = sim.node(0).stats(1, r), br = sim.node(1).stats(0, r);
        EXPECT_EQ(ar.data_tx, 3200u) << "rail " << r;
        EXPECT_GE(log.req[r].size(), 3200u / 256) << "rail " << r;
        EXPECT_LE(log.req[r].size(), 3200u / 128 + 1) << "rail " << r;
        EXPECT_EQ(br.acks_tx, log.req[r].size()) << "rail " << r;
        EXPECT_TRUE(log.last_flags[r] & BSPE_F_WNDREQ) << "rail " << r;
    }
    EXPECT_EQ(log.acks_back, log.wndreq);
}

// Both ways at once over a slow link (1 Gb/s, so each direction's window queues for 2 ms):
// the answers ride on the reverse DATA or wait behind it, and still no timeout fires and
// nothing is resent; explicit ACKs stay at most one per request.
TEST(WindowAck, BothWaysAcksBehindDataNoSpuriousTimeout) {
    NetCfg n = net(2, 1);
    n.rail[0].gbps = 1;
    Sim sim(n, test_cfg());
    uint64_t wndreq = 0, acks = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && (w.flags & BSPE_F_WNDREQ))
            wndreq++;
        if (w.type == BSPE_T_ACK)
            acks++;
    };
    for (int k = 0; k < 32; k++) {
        sim.send(0, 1, Sim::pattern(0, 1, k, 100000));
        sim.send(1, 0, Sim::pattern(1, 0, k, 100000));
    }
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats t = sim.total_stats();
    EXPECT_EQ(t.data_tx, 6400u);
    EXPECT_EQ(t.timeouts, 0u);
    EXPECT_EQ(retx(t), 0u);
    EXPECT_EQ(t.dup_rx, 0u);
    EXPECT_EQ(t.prods_tx, 0u);
    EXPECT_GT(wndreq, 0u);
    EXPECT_LE(acks, wndreq);
    EXPECT_EQ(t.acks_tx, acks);
}

// With loss the stream still delivers every message exactly once, intact: the answer to the
// next request shows the hole (hole filling), a lost request is covered by the next one half
// a window later, and a hole the answers do not show is prodded for by the receiver.
TEST(WindowAck, LossyStreamRecoversExactly) {
    Sim sim(net(2, 1), test_cfg());
    // first transmissions of an ordinary packet, the first request (127), a packet right
    // after it, and the next request's neighbourhood
    std::set<uint32_t> lost = {50, 127, 128, 300, 2000};
    sim.drop_filter = [&](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && !(w.flags & BSPE_F_RETX) && lost.count(w.seq);
    };
    stream(sim, 64, 100000);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(sim.wire().data_lost, lost.size());
    EXPECT_EQ(b.data_rx, 6400u);
    EXPECT_EQ(a.timeouts, 0u);
    // 50 and 300: shown by the answer to the next request, resent once (hole). 127 and 128
    // (a request and its neighbour): prodded for by the receiver, resent once. 2000: resent
    // at the answer that showed it, once; the next answer, drawn by a request sent before
    // the resend while the resend still queued behind half a window, shows the hole again
    // but is not acted on (only the answer to a check probe behind the resend would be).
    EXPECT_EQ(a.retx_hole, 3u);
    EXPECT_EQ(a.retx_prod, 2u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.spurious_rx, 0u);
}

// Random loss (0.5 %) in both directions, many seeds: exact delivery every time.
TEST(WindowAck, RandomLossExactDelivery) {
    for (uint64_t seed = 1; seed <= 8; seed++) {
        NetCfg n = net(2, 2, seed);
        for (auto &r : n.rail)
            r.faults.loss = 0.005;
        Sim sim(n, test_cfg());
        stream(sim, 48, 100000);
        ASSERT_TRUE(sim.run_until_idle(1000000 * kMs)) << "seed " << seed;
        EXPECT_EQ(sim.verify_all_delivered(), "") << "seed " << seed;
        EXPECT_EQ(sim.node(1).stats().msgs_rx, 48u) << "seed " << seed;
    }
}

// A superstep's exchange below half a window per (channel, rail) asks nothing: the
// acknowledgements stay implicit (the window rule adds no explicit ACK to a BSP program).
TEST(WindowAck, SuperstepBelowHalfWindowAsksNothing) {
    bspe_cfg c = test_cfg();
    c.nprocs = 4;
    Sim sim(net(4, 2), c);
    uint64_t wndreq = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.flags & BSPE_F_WNDREQ)
            wndreq++;
    };
    Workload w;
    w.name = "below-half";
    w.supersteps = 4;
    // 120 000 bytes per pair and superstep: 121 packets, striped over 2 rails
    w.plan = [](int, int, int) { return std::vector<uint32_t>{200, 9000, 64000, 46800}; };
    BspRun run(sim, w);
    ASSERT_TRUE(run.run(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(wndreq, 0u);
    EXPECT_EQ(retx(sim.total_stats()), 0u);
}

// One superstep sending more than half a window to one peer on one rail: one request at
// half the window and one at the end of the stream, two explicit ACKs, no timeout.
TEST(WindowAck, LargeSuperstepMessageAsksTwice) {
    Sim sim(net(2, 1), test_cfg());
    uint64_t wndreq = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && (w.flags & BSPE_F_WNDREQ))
            wndreq++;
    };
    sim.send(0, 1, Sim::pattern(0, 1, 0, 200000), BSPE_SEND_LAST);  // 200 packets
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(wndreq, 2u);
    EXPECT_EQ(b.acks_tx, 2u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(retx(a), 0u);
}

// The channel's message window, not the packet window, may be what fills: 8-packet messages
// striped over 2 rails with a window of 16 messages hold at most 64 packets per rail, below
// half the packet window. The packet that ends the newest message on a rail while the message
// window is full asks, at most once per half of what the rail holds: the stream never waits
// for a prod or the timeout (before, the receiver prodded every time the window filled).
TEST(WindowAck, FullMessageWindowAsks) {
    bspe_cfg c = test_cfg();
    c.msg_wnd = 16;
    Sim sim(net(2, 2), c);
    StreamLog log;
    log.attach(sim, 2);
    stream(sim, 400, 8000);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.data_tx, 3200u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(retx(a), 0u);
    EXPECT_EQ(b.prods_tx, 0u);
    EXPECT_EQ(b.dup_rx, 0u);
    for (int r = 0; r < 2; r++) {
        // 64 packets per rail in flight: a request at most every 32 packets, and the end
        EXPECT_GE(log.req[r].size(), 1600u / 64) << "rail " << r;
        EXPECT_LE(log.req[r].size(), 1600u / 32 + 1) << "rail " << r;
        EXPECT_EQ(sim.node(1).stats(0, r).acks_tx, log.req[r].size()) << "rail " << r;
    }
    EXPECT_EQ(log.acks_back, log.wndreq);
}

// A paced sender on a slow rail (10 Mb/s, paced at 95 % of it, as the messaging layer paces):
// half a window of 1000-byte packets takes about 115 ms to leave, longer than the sender's
// timeout (50 ms), so the answer to a request comes later than that while the rail keeps
// taking new packets. The timeout counts from the last settle or first transmission: it
// never fires while the stream flows (before, it fired every time and each probe's answer
// only told the sender what the next request would have).
TEST(WindowAck, PacedStreamNoTimeoutWhileSending) {
    NetCfg n = net(2, 1);
    n.rail[0].gbps = 0.01;
    Sim sim(n, test_cfg());
    bspe_set_pacing(sim.node(0).ep(), 1187500, 0);
    StreamLog log;
    log.attach(sim, 1);
    stream(sim, 8, 100000);
    ASSERT_TRUE(sim.run_until_idle(1000000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(a.data_tx, 800u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(a.probes_tx, 0u);
    EXPECT_EQ(retx(a), 0u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.acks_tx, log.wndreq);
}

// A loss in mid-stream while the sender's queue holds more than a round trip of data: the
// answer to the next request shows the hole and the packet is resent; the answer to the
// request sent just before the resend arrives later than the round-trip estimate, still
// showing the hole, but it was built before the resend could arrive: nothing is resent on
// it. Each loss is resent exactly once, nothing arrives twice, no timeout. Before, 2000 was
// resent twice (a duplicate at the receiver).
TEST(WindowAck, MidStreamLossResentOnce) {
    Sim sim(net(2, 1), test_cfg());
    const std::set<uint32_t> lost = {2000, 3500, 5000};
    std::vector<uint32_t> resent;
    sim.drop_filter = [&](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && !(w.flags & BSPE_F_RETX) && lost.count(w.seq);
    };
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.src == 0 && (w.flags & BSPE_F_RETX))
            resent.push_back(w.seq);
    };
    stream(sim, 64, 100000);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(sim.wire().data_lost, lost.size());
    EXPECT_EQ(resent, std::vector<uint32_t>(lost.begin(), lost.end()));
    EXPECT_EQ(retx(a), lost.size());
    EXPECT_EQ(a.data_tx, 6400u + lost.size());
    EXPECT_EQ(b.data_rx, 6400u);
    EXPECT_EQ(b.msgs_rx, 64u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.spurious_rx, 0u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(b.prods_tx, 0u);
}

// The same loss whose resend is lost too: the report that arrives a round trip after the
// resend, still showing the hole, draws one check (a probe behind the resend); its answer
// shows the resend lost, and the packet is resent a second time, once. No timeout, nothing
// arrives twice.
TEST(WindowAck, LostResendResentAgainOnce) {
    Sim sim(net(2, 1), test_cfg());
    int tx2000 = 0;
    std::vector<uint32_t> resent;
    sim.drop_filter = [&](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && w.seq == 2000 && tx2000++ < 2;
    };
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.src == 0 && (w.flags & BSPE_F_RETX))
            resent.push_back(w.seq);
    };
    stream(sim, 64, 100000);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(sim.wire().data_lost, 2u);
    EXPECT_EQ(resent, (std::vector<uint32_t>{2000, 2000}));
    EXPECT_EQ(retx(a), 2u);
    EXPECT_EQ(a.probes_tx, 1u);  // the check
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(b.data_rx, 6400u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.spurious_rx, 0u);
    EXPECT_EQ(b.msgs_rx, 64u);
}

// The same lost resend whose check is lost as well: no answer to the check comes, and every
// later report (the receiver's window acknowledgements and prods, still showing the hole) may
// predate the resend's arrival. One check per resend would leave the packet to the sender
// timeout (50 ms here; in the scale benchmark a resend and its check lost at p = 256 x 2 rails
// held every process of the job for it, and the prods the receiver kept sending were each
// answered without a resend). A check unanswered for two round-trip estimates was lost, or its
// answer was: the next such report draws another. The second check's answer shows the hole and
// the packet is resent a second time, once; nothing times out.
TEST(WindowAck, LostResendAndLostCheckCheckedAgain) {
    Sim sim(net(2, 1), test_cfg());
    int tx2000 = 0, checks = 0;
    std::vector<uint32_t> resent;
    sim.drop_filter = [&](const WirePkt &w) {
        if (w.type == BSPE_T_ACK && w.src == 0 && bspe_asks_answer(w.flags))
            return checks++ == 0;
        return w.type == BSPE_T_DATA && w.src == 0 && w.seq == 2000 && tx2000++ < 2;
    };
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.src == 0 && (w.flags & BSPE_F_RETX))
            resent.push_back(w.seq);
    };
    stream(sim, 64, 100000);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(sim.wire().data_lost, 2u);
    EXPECT_EQ(resent, (std::vector<uint32_t>{2000, 2000}));
    EXPECT_EQ(retx(a), 2u);
    EXPECT_EQ(checks, 2);
    EXPECT_EQ(a.probes_tx, 2u);  // the lost check and the next
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(b.data_rx, 6400u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.spurious_rx, 0u);
    EXPECT_EQ(b.msgs_rx, 64u);
}

// The same lost resend while the sender also expects data from its peer (bspe_expect, which
// starts the prod interval without sending a prod, as the messaging layer does for the data
// of every sender, the very moment its check leaves). The answer to the check is not taken for
// the answer to a prod of ours: no prod is unanswered. Before, any prod time within two round
// trips of the check made the answer an ordinary report, the resend was not resent, and no
// second check followed: the packet waited for the sender timeout (50 ms here).
TEST(WindowAck, LostResendResentAgainWhileExpecting) {
    Sim sim(net(2, 1), test_cfg());
    int tx2000 = 0;
    std::vector<uint32_t> resent;
    sim.drop_filter = [&](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && w.seq == 2000 && tx2000++ < 2;
    };
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.src == 0 && (w.flags & BSPE_F_RETX))
            resent.push_back(w.seq);
        if (w.type == BSPE_T_ACK && w.src == 0 && bspe_asks_answer(w.flags))
            sim.at(sim.now(),
                   [&] { bspe_expect(sim.node(0).ep(), sim.node(0).chan_to(1), 0, 0, sim.now()); });
    };
    stream(sim, 64, 100000);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(sim.wire().data_lost, 2u);
    EXPECT_EQ(resent, (std::vector<uint32_t>{2000, 2000}));
    EXPECT_EQ(retx(a), 2u);
    EXPECT_EQ(a.probes_tx, 1u);  // the check
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(a.prods_tx, 0u);
    EXPECT_EQ(b.data_rx, 6400u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.msgs_rx, 64u);
}

// A loss in the last half window of a one-way stream, found by the answer to the stream's
// final request (its tail): the resend is the last packet the stream sends, so it asks for
// the acknowledgement itself and the stream settles without the sender's timeout. Before,
// nothing acknowledged the resend until the timeout probe (rto_min, 50 ms here).
TEST(WindowAck, TailLossAfterFinalRequestSettlesWithoutTimeout) {
    Sim sim(net(2, 1), test_cfg());
    const std::set<uint32_t> lost = {6390};
    std::vector<uint32_t> resent;
    sim.drop_filter = [&](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && !(w.flags & BSPE_F_RETX) && lost.count(w.seq);
    };
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.src == 0 && (w.flags & BSPE_F_RETX))
            resent.push_back(w.seq);
    };
    stream(sim, 64, 100000);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(sim.wire().data_lost, 1u);
    EXPECT_EQ(resent, std::vector<uint32_t>{6390});
    EXPECT_EQ(a.retx_hole, 1u);
    EXPECT_EQ(retx(a), 1u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(a.probes_tx, 0u);
    EXPECT_EQ(b.dup_rx, 0u);
    EXPECT_EQ(b.prods_tx, 0u);
    EXPECT_EQ(b.msgs_rx, 64u);
    EXPECT_EQ(a.msgs_tx, 64u);
    EXPECT_EQ(a.acked_piggy, 6400u);
}
