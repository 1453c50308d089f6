// The BSPlib messaging layer's traffic through the engine and the simulator at small p
// (tests/sim/msg_layer.hpp), the bounded version of bench/scale_table: exact outcomes, every
// counter as the scenario implies.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "engine_test_util.hpp"
#include "msg_layer.hpp"

using namespace bspsim;

namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint32_t kFrag = 1500 - BSPE_HDR_LEN;

bspe_cfg layer_cfg(int p, int rails) {
    bspe_cfg c;
    bspe_cfg_default(&c);
    c.nrails = static_cast<uint8_t>(rails);
    c.max_chans = static_cast<uint16_t>(p);
    c.frag_size = kFrag;
    c.max_msg = 1 << 20;
    c.nprocs = static_cast<uint32_t>(p);
    c.rtt_init_ns = 50 * kUs;
    c.rtt_min_ns = 10 * kUs;
    c.rtt_max_ns = 10 * kMs;
    c.rto_min_ns = 20 * kMs;
    c.prod_max_ns = 50 * kMs;
    c.flags = BSPE_CFG_CSUM;
    return c;
}

NetCfg layer_net(int p, int rails, double loss) {
    NetCfg n;
    n.nodes = p;
    n.rails = rails;
    n.seed = 7;
    n.lazy_chans = true;
    n.keep_history = false;  // the scale configuration: checked as delivered, not kept
    n.rail.resize(static_cast<size_t>(rails));
    for (auto &r : n.rail) {
        r.gbps = 10;
        r.latency_ns = 5 * kUs;
        r.faults.loss = loss;
    }
    return n;
}

uint32_t pkts(uint32_t len) {
    return len ? (len + kFrag - 1) / kFrag : 1;
}

// What the scenario implies: messages, packets and channels per process, from the
// messaging layer's rules (Documentation/messaging.rst) alone.
struct Expected {
    uint64_t barrier_msgs = 0, count_msgs = 0, data_units = 0, msgs = 0, pkts = 0, payload = 0;
    uint64_t end_msgs = 0;
    std::vector<std::set<int>> peers;  // channels each process opens
};

Expected expected(int p, const MsgPattern &pat, int supersteps) {
    Expected e;
    e.peers.resize(static_cast<size_t>(p));
    int q = 1, lq = 0;
    while (q * 2 <= p) {
        q *= 2;
        lq++;
    }
    const uint32_t contrib = 17 + static_cast<uint32_t>((p + 7) / 8);
    for (int b = 0; b < supersteps + 1; b++) {
        // contributions each process knows before each round: 1, +1 after the fold-in, then
        // doubling
        std::vector<uint32_t> known(static_cast<size_t>(p), 1);
        for (int i = q; i < p; i++) {
            e.barrier_msgs++;
            e.pkts += pkts(21 + contrib);
            known[static_cast<size_t>(i - q)]++;
            e.peers[static_cast<size_t>(i)].insert(i - q);
            e.peers[static_cast<size_t>(i - q)].insert(i);
        }
        for (int r = 1; r <= lq; r++) {
            std::vector<uint32_t> next = known;
            for (int i = 0; i < q; i++) {
                int partner = i ^ (1 << (r - 1));
                e.barrier_msgs++;
                e.pkts += pkts(21 + known[static_cast<size_t>(i)] * contrib);
                next[static_cast<size_t>(partner)] += known[static_cast<size_t>(i)];
                e.peers[static_cast<size_t>(i)].insert(partner);
            }
            known = next;
        }
        for (int i = q; i < p; i++) {
            e.barrier_msgs++;
            e.pkts += pkts(21 + static_cast<uint32_t>(p) * contrib);
        }
    }
    for (int s = 0; s < supersteps; s++)
        for (int i = 0; i < p; i++)
            for (const auto &[j, len] : pat.dests(i, p)) {
                e.count_msgs++;
                e.data_units++;
                e.pkts += 1 + pkts(21 + 25 + len);
                e.payload += len;
                e.peers[static_cast<size_t>(i)].insert(j);
                e.peers[static_cast<size_t>(j)].insert(i);
            }
    // the end of the job: one header-only message up and one down every edge of the tree
    e.end_msgs = 2 * static_cast<uint64_t>(p - 1);
    e.pkts += e.end_msgs;
    e.msgs = e.barrier_msgs + e.count_msgs + e.data_units + e.end_msgs;
    return e;
}

struct Outcome {
    std::string verify;
    bool ok = false;
    bspe_stats t{};
    MsgLayerStats layer;
    std::vector<std::string> errors;
    std::vector<uint64_t> chan_bytes;
    size_t chan_size = 0, fixed = 0;
    WireStats wire;
};

// follow: streams follow counts (libbsp without get requests); false: streams after all counts.
Outcome run(int p, int rails, double loss, const MsgPattern &pat, int supersteps,
            std::function<bool(const WirePkt &)> drop = nullptr, bool follow = true,
            std::function<void(const WirePkt &)> tap = nullptr) {
    Outcome o;
    bspe_cfg cfg = layer_cfg(p, rails);
    Sim sim(layer_net(p, rails, loss), cfg);
    sim.drop_filter = std::move(drop);
    sim.tap = std::move(tap);
    MsgLayerRun bsp(sim, pat, supersteps, uint64_t(10e9 / 8) * uint64_t(rails));
    bsp.streams_follow = follow;
    o.ok = bsp.run(100000 * kMs);
    o.verify = sim.verify_all_delivered();
    o.t = sim.total_stats();
    o.layer = bsp.stats();
    o.errors = bsp.errors;
    for (int i = 0; i < p; i++)
        o.chan_bytes.push_back(sim.node(i).chan_bytes);
    o.chan_size = bspe_chan_size(&cfg);
    o.fixed = bspe_mem_size(&cfg);
    o.wire = sim.wire();
    return o;
}

void check_exact(const Outcome &o, const Expected &e, int p) {
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.verify, "");  // every message delivered once, intact, in order; completed
    EXPECT_TRUE(o.errors.empty()) << o.errors.front();
    EXPECT_EQ(o.layer.barrier_msgs, e.barrier_msgs);
    EXPECT_EQ(o.layer.count_msgs, e.count_msgs);
    EXPECT_EQ(o.layer.data_units, e.data_units);
    EXPECT_EQ(o.layer.payload, e.payload);
    EXPECT_EQ(o.layer.end_msgs, e.end_msgs);
    EXPECT_EQ(o.t.msgs_tx, e.msgs);  // every message completed at its sender
    EXPECT_EQ(o.t.msgs_rx, e.msgs);  // and delivered once
    EXPECT_EQ(o.t.msgs_failed, 0u);
    EXPECT_EQ(o.t.data_rx, e.pkts);  // every fragment accepted exactly once
    // every transmission is a first one or a counted retransmission
    EXPECT_EQ(o.t.data_tx,
              e.pkts + o.t.retx_hole + o.t.retx_prod + o.t.retx_timeout + o.t.retx_failover);
    // channels: exactly the peers the layer talks to, each bspe_chan_size bytes
    for (int i = 0; i < p; i++)
        EXPECT_EQ(o.chan_bytes[static_cast<size_t>(i)],
                  e.peers[static_cast<size_t>(i)].size() * o.chan_size)
            << "node " << i;
}

}  // namespace

// p = 8 (a power of two: butterfly only), total exchange of 64 KiB per process, 2 rails, no
// loss: nothing is retransmitted, no sender times out during the supersteps.
TEST(MsgLayer, TotalExchangeExact) {
    const int p = 8;
    MsgPattern pat = msg_total_exchange(64 * 1024);
    Outcome o = run(p, 2, 0, pat, 2);
    Expected e = expected(p, pat, 2);
    check_exact(o, e, p);
    EXPECT_EQ(e.barrier_msgs, 3u * 8 * 3);  // 3 rounds, 8 processes, 2 supersteps + bsp_end
    EXPECT_EQ(e.count_msgs, 2u * 8 * 7);
    EXPECT_EQ(o.t.retx_hole + o.t.retx_prod + o.t.retx_timeout + o.t.retx_failover, 0u);
    EXPECT_EQ(o.wire.data_lost, 0u);
}

// p = 12 (fold-in and hand-back around q = 8), sparse pattern of 3 destinations, 1 rail: the
// channels are the pattern's and the barrier's peers only.
TEST(MsgLayer, SparseNonPowerOfTwoExact) {
    const int p = 12;
    MsgPattern pat = msg_sparse(12000, 3);
    Outcome o = run(p, 1, 0, pat, 3);
    Expected e = expected(p, pat, 3);
    check_exact(o, e, p);
    // 4 fold-ins, 8 x 3 butterfly messages, 4 hand-backs per barrier; 4 barriers
    EXPECT_EQ(e.barrier_msgs, 4u * (4 + 24 + 4));
    EXPECT_EQ(o.t.retx_hole + o.t.retx_prod + o.t.retx_timeout + o.t.retx_failover, 0u);
    for (int i = 0; i < p; i++)
        EXPECT_LT(e.peers[static_cast<size_t>(i)].size(), static_cast<size_t>(p - 1));
}

// With 1 % loss on 4 rails every message still arrives once and intact, and the packet counts
// are exact: every lost packet was resent (data_tx - retransmissions = the distinct packets).
TEST(MsgLayer, LossyExactlyOnce) {
    const int p = 8;
    MsgPattern pat = msg_total_exchange(64 * 1024);
    Outcome o = run(p, 4, 0.01, pat, 2);
    Expected e = expected(p, pat, 2);
    check_exact(o, e, p);
    EXPECT_GT(o.wire.data_lost, 0u);
    EXPECT_GE(o.t.retx_hole + o.t.retx_prod + o.t.retx_timeout + o.t.retx_failover,
              o.wire.data_lost);
}

// The fine-grained acknowledgement threshold follows the peers an endpoint has channels with,
// not the group size: the same traffic of 8 processes acknowledges exactly as often when the
// engine is told the group has 1024 processes (it acknowledged every requested packet then).
TEST(MsgLayer, AcksFollowActivePeersNotGroupSize) {
    MsgPattern pat = msg_sparse(64 * 1024, 3);
    auto acks = [&](uint32_t nprocs) {
        bspe_cfg cfg = layer_cfg(8, 2);
        cfg.nprocs = nprocs;
        Sim sim(layer_net(8, 2, 0), cfg);
        MsgLayerRun bsp(sim, pat, 2, uint64_t(10e9 / 8) * 2);
        EXPECT_TRUE(bsp.run(100000 * kMs));
        EXPECT_EQ(sim.verify_all_delivered(), "");
        return sim.total_stats().acks_tx;
    };
    uint64_t small = acks(8), large = acks(1024);
    EXPECT_EQ(large, small);
}

// The end of the job settles without a sender timeout: the last barrier's messages by the epoch
// rule when the end-of-job broadcast completes, the tree's own messages by one explicit
// acknowledgement each, except the report that completes the root's gather, which the root's
// broadcast to that child carries. Without loss the only explicit acknowledgements of the whole
// run are those 2 (p - 1) - 1, for p = 8 as for p = 64 (before: the last barrier's messages
// were probed for after the sender timeout, log2 p per process, and the probes answered).
TEST(MsgLayer, EndOfJobNeedsNoProbes) {
    for (int p : {8, 12, 64}) {
        MsgPattern pat = msg_sparse(16 * 1024, 3);
        Outcome o = run(p, 2, 0, pat, 2);
        Expected e = expected(p, pat, 2);
        check_exact(o, e, p);
        EXPECT_EQ(o.t.timeouts, 0u) << p;
        EXPECT_EQ(o.t.probes_tx, 0u) << p;
        EXPECT_EQ(o.t.acks_tx, 2u * static_cast<uint64_t>(p - 1) - 1) << p;
        EXPECT_EQ(o.t.acked_piggy + o.t.acked_implicit, o.t.data_tx) << p;
        EXPECT_EQ(o.t.retx_hole + o.t.retx_prod + o.t.retx_timeout + o.t.retx_failover, 0u);
    }
}

// With the data streams sent after all counts (a superstep with get requests): a count message
// is expected by nobody (the barrier tells a process how many senders it has,
// not which), and its sender sends nothing more to that destination until it has all of its
// own counts. Lost both ways between two processes, each waits for the other's: nothing
// revealed either loss, and before the guessed expectations only the sender timeout (rto_min,
// 20 ms here) found them, while every channel holding the superstep's packets timed out too.
// Now the receiver guesses and prods the channel: in the first superstep because it sent its
// own count there and the peer never sent data, in the second because the peer sent data in
// the previous superstep. The answer reveals the lost tail, the receiver reports the hole, and
// every loss is resent once; no sender times out (Documentation/protocol.rst, "Prods"). A prod
// that leaves the instant before the resend is answered with the hole still open; that answer
// may predate the resend, so it draws one check (a probe behind the resend, whose answer shows
// the hole filled) and no second resend: at most one check per resend, whether the timer or
// the answer comes first at that instant.
// The drop filter of both tests: the first transmission of the count messages between
// processes 0 and 1 in the first superstep and between 2 and 3 in the second.
static bool count_lost_both_ways(const WirePkt &w) {
    auto between = [&w](int a, int b, uint32_t epoch) {
        return w.type == BSPE_T_DATA && !(w.flags & (BSPE_F_SYNC | BSPE_F_RETX)) &&
               w.msg_len == 33 && w.epoch == epoch &&
               ((w.src == a && w.dst == b) || (w.src == b && w.dst == a));
    };
    return between(0, 1, 1) || between(2, 3, 2);
}

TEST(MsgLayer, CountsLostBothWaysFoundWithoutTimeout) {
    const int p = 4;
    MsgPattern pat = msg_total_exchange(16 * 1024);
    // the first prod between 2 and 3 in the second superstep (epoch 2), each way: a guess
    std::map<std::pair<int, int>, uint16_t> guess_flags;
    auto tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_PROD && w.epoch == 2 && w.src + w.dst == 5 && w.src >= 2)
            guess_flags.emplace(std::make_pair(w.src, w.dst), w.flags);
    };
    Outcome o = run(p, 2, 0, pat, 2, count_lost_both_ways, false, tap);
    Expected e = expected(p, pat, 2);
    check_exact(o, e, p);
    EXPECT_EQ(o.wire.data_lost, 4u);
    EXPECT_EQ(o.t.retx_hole, 4u);
    EXPECT_EQ(o.t.retx_hole + o.t.retx_prod + o.t.retx_timeout + o.t.retx_failover, 4u);
    EXPECT_EQ(o.t.timeouts, 0u);
    EXPECT_LE(o.t.probes_tx, o.t.retx_hole);
    // A guess asks for no answer (the endpoints have round-trip samples by then): the
    // prodded sender answers because it holds packets the prodder lacks.
    ASSERT_EQ(guess_flags.size(), 2u);
    for (const auto &[pair, flags] : guess_flags)
        EXPECT_EQ(flags & BSPE_F_ACKREQ, 0) << pair.first << "->" << pair.second;
}

// The same losses when streams follow counts (a superstep without get requests, libbsp's usual
// case): each lost count message has the data stream to the same destination right behind it,
// so the receiver finds the loss the way it finds any packet missing before others of its
// channel (a hole, or a later message waiting in reassembly), without a guess and without the
// sender timeout; every loss is resent exactly once.
TEST(MsgLayer, CountsLostBothWaysFoundByTheStreamBehindThem) {
    const int p = 4;
    MsgPattern pat = msg_total_exchange(16 * 1024);
    Outcome o = run(p, 2, 0, pat, 2, count_lost_both_ways, true);
    Expected e = expected(p, pat, 2);
    check_exact(o, e, p);
    EXPECT_EQ(o.wire.data_lost, 4u);
    EXPECT_EQ(o.t.retx_hole + o.t.retx_prod + o.t.retx_timeout + o.t.retx_failover, 4u);
    EXPECT_EQ(o.t.retx_timeout, 0u);
    EXPECT_EQ(o.t.timeouts, 0u);
    EXPECT_LE(o.t.probes_tx, o.t.retx_hole + o.t.retx_prod);
}

// The end of the job's messages (SYNC | LAST) are acknowledged at once by their receivers. A
// lost one was found by the sender timeout (rto_min, 20 ms here), and meanwhile every channel
// still holding the last barrier's messages timed out as well. Now the sender sends one tail
// loss probe when the acknowledgement is two round-trip estimates overdue: its answer shows the
// loss, resent once, and nothing times out (Documentation/protocol.rst, "Tail loss probe").
TEST(MsgLayer, EndOfJobTailLossFoundByTailProbe) {
    const int p = 4;
    MsgPattern pat = msg_sparse(16 * 1024, 3);
    int dropped = 0;
    // process 3 reports to its parent 2, which acknowledges the report at once
    Outcome o = run(p, 2, 0, pat, 2, [&](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 3 && w.dst == 2 && (w.flags & BSPE_F_LAST) &&
               (w.flags & BSPE_F_SYNC) && dropped++ == 0;
    });
    Expected e = expected(p, pat, 2);
    check_exact(o, e, p);
    EXPECT_EQ(dropped, 2);  // the resend passed the filter
    EXPECT_EQ(o.wire.data_lost, 1u);
    EXPECT_EQ(o.t.retx_hole, 1u);
    EXPECT_EQ(o.t.retx_hole + o.t.retx_prod + o.t.retx_timeout + o.t.retx_failover, 1u);
    EXPECT_EQ(o.t.timeouts, 0u);
    EXPECT_EQ(o.t.probes_tx, 1u);  // the tail loss probe
}

// Without loss nobody is prodded in the sparse pattern of bench/scale_table (each process sends
// to the next 8 of 256 and hears from the previous 8): its destinations never send data back,
// and a receiver guesses such a peer only while it waits for count messages with nothing
// expected (Documentation/protocol.rst, "Prods"). The only explicit acknowledgements are those
// of the end of the job. Before that condition every process prodded its 8 destinations once.
TEST(MsgLayer, SparseWithoutLossProdsNobody) {
    const int p = 256;
    MsgPattern pat = msg_sparse(64 * 1024, 8);
    Outcome o = run(p, 4, 0, pat, 2);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.verify, "");  // every message delivered once, intact, in order; completed
    EXPECT_TRUE(o.errors.empty()) << o.errors.front();
    EXPECT_EQ(o.t.msgs_failed, 0u);
    EXPECT_EQ(o.t.prods_tx, 0u);
    EXPECT_EQ(o.t.acks_tx, 2u * static_cast<uint64_t>(p - 1) - 1);
    EXPECT_EQ(o.t.timeouts, 0u);
    EXPECT_EQ(o.t.probes_tx, 0u);
}
