// Multirail ([ZHMM04]): striping, per-link rail choice, skew, rail failure and recovery.
#include <set>

#include "bsp_workload.hpp"
#include "engine_test_util.hpp"

using namespace bspsim;
using namespace enginetest;

namespace {

uint64_t retx(const bspe_stats &s) {
    return s.retx_hole + s.retx_prod + s.retx_timeout + s.retx_failover;
}

void skewed_total_exchange(int rails) {
    NetCfg n = net(4, rails);
    for (int r = 0; r < rails; r++)
        n.rail[r].skew = r % 2 ? 3.0 : 1.0;  // every other rail 3x slower
    bspe_cfg c = test_cfg();
    c.nprocs = 4;
    Sim sim(n, c);
    // mixed sizes: short (one rail per link) and large (striped) messages
    Workload w;
    w.name = "mixed";
    w.supersteps = 4;
    w.plan = [](int s, int i, int j) {
        return std::vector<uint32_t>{200, static_cast<uint32_t>(9000 + 1000 * ((s + i + j) % 5)),
                                     64000, 300};
    };
    BspRun run(sim, w);
    ASSERT_TRUE(run.run(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats t = sim.total_stats();
    EXPECT_EQ(retx(t), 0u);
    EXPECT_EQ(t.spurious_rx, 0u);
    EXPECT_EQ(t.dup_rx, 0u);
    for (int r = 0; r < rails; r++) {
        bspe_stats s{};
        for (int i = 0; i < 4; i++) {
            bspe_stats x = sim.node(i).stats(-1, r);
            s.data_tx += x.data_tx;
        }
        EXPECT_GT(s.data_tx, t.data_tx / rails / 2) << "rail " << r;
    }
}

}  // namespace

TEST(Multirail, TwoRailsWithSkewNoSpuriousRetransmission) {
    skewed_total_exchange(2);
}

TEST(Multirail, FourRailsWithSkewNoSpuriousRetransmission) {
    skewed_total_exchange(4);
}

// A large message is split evenly: one contiguous run of fragments per live rail.
TEST(Multirail, LargeMessageStripedEvenly) {
    Sim sim(net(2, 4), test_cfg());
    std::vector<std::vector<uint32_t>> offs(4);
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA)
            offs[w.rail].push_back(w.frag_off);
    };
    sim.send(0, 1, Sim::pattern(0, 1, 0, 10000));  // 10 fragments: 3, 3, 2, 2
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(offs[0], (std::vector<uint32_t>{0, 1000, 2000}));
    EXPECT_EQ(offs[1], (std::vector<uint32_t>{3000, 4000, 5000}));
    EXPECT_EQ(offs[2], (std::vector<uint32_t>{6000, 7000}));
    EXPECT_EQ(offs[3], (std::vector<uint32_t>{8000, 9000}));
    EXPECT_EQ(sim.node(0).stats().msgs_tx, 1u);  // completion reported once
    EXPECT_EQ(sim.node(1).stats().msgs_rx, 1u);
}

// Short messages go whole on one rail chosen per link, so links spread over the rails on
// both the sending and the receiving side.
TEST(Multirail, ShortMessagesSpreadLinksOverRails) {
    Sim sim(net(4, 2), test_cfg());
    std::vector<std::vector<int>> rail_of(4, std::vector<int>(4, -1));
    bool consistent = true;
    sim.tap = [&](const WirePkt &w) {
        if (w.type != BSPE_T_DATA)
            return;
        int &r = rail_of[w.src][w.dst];
        if (r >= 0 && r != w.rail)
            consistent = false;
        r = w.rail;
    };
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            if (i != j)
                for (int k = 0; k < 3; k++)
                    sim.send(i, j, Sim::pattern(i, j, k, 500));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_TRUE(consistent);
    for (int i = 0; i < 4; i++) {
        int out[2] = {0, 0}, in[2] = {0, 0};
        for (int j = 0; j < 4; j++) {
            if (i == j)
                continue;
            out[rail_of[i][j]]++;
            in[rail_of[j][i]]++;
        }
        // 3 links each way: 2 on one rail and 1 on the other
        EXPECT_GE(out[0], 1);
        EXPECT_GE(out[1], 1);
        EXPECT_GE(in[0], 1);
        EXPECT_GE(in[1], 1);
    }
}

// Rail 1 of node 1 dies while a striped message is in flight; the rail layer reports it
// (missed hellos) 200 us later. Everything arrives once, outstanding packets of the dead rail
// are resent on the live one, and no retransmission is needed beyond those.
TEST(Multirail, RailKilledMidMessageFailsOver) {
    NetCfg n = net(2, 2);
    RailDeath d;
    d.node = 1;
    d.rail = 1;
    d.at = 30 * kUs;
    d.notify_after = 200 * kUs;
    n.deaths.push_back(d);
    Sim sim(n, test_cfg());
    uint64_t after_death_on_rail1 = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.rail == 1 && sim.now() >= d.at + *d.notify_after)
            after_death_on_rail1++;
    };
    for (int k = 0; k < 4; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 100000));
    sim.send(1, 0, Sim::pattern(1, 0, 0, 100000));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_GT(a.retx_failover, 0u);
    EXPECT_GT(b.retx_failover, 0u);
    EXPECT_EQ(a.rail_down, 1u);
    EXPECT_EQ(b.rail_down, 1u);
    EXPECT_EQ(after_death_on_rail1, 0u);
    // every packet lost on the dead rail was outstanding there and was failed over; a
    // failover copy of a packet that had in fact arrived (unacknowledged) is the only
    // duplicate, recognised by (message, fragment) and not delivered twice
    EXPECT_LE(sim.wire().data_lost, a.retx_failover + b.retx_failover);
    EXPECT_EQ(a.dup_rx + b.dup_rx, a.spurious_rx + b.spurious_rx);
    EXPECT_LE(a.spurious_rx + b.spurious_rx + sim.wire().data_lost,
              a.retx_failover + b.retx_failover);
    EXPECT_EQ(a.retx_hole + a.retx_prod + b.retx_hole + b.retx_prod, 0u);
    EXPECT_EQ(bspe_live_rails(sim.node(0).ep(), 1), 1u);
}

// Without help from the rail layer the engine finds the dead rail itself: unanswered timeout
// probes on it, while another rail lives, declare it dead and trigger the failover.
TEST(Multirail, RailDeathDetectedByEngine) {
    NetCfg n = net(2, 2);
    RailDeath d;
    d.node = 1;
    d.rail = 0;
    d.at = 20 * kUs;
    n.deaths.push_back(d);
    Sim sim(n, test_cfg());
    std::vector<std::tuple<int, int, int, int>> events;
    for (int i = 0; i < 2; i++)
        sim.node(i).on_rail_event = [&](Node &nd, int peer, int rail, int up) {
            events.emplace_back(nd.id(), peer, rail, up);
        };
    for (int k = 0; k < 3; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 50000));
    // the suspected rail is probed again slowly forever: run for a while, not until idle
    sim.run_until(5000 * kMs);
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(bspe_live_rails(sim.node(0).ep(), 1), 1u);
    bspe_stats a = sim.node(0).stats();
    EXPECT_GT(a.retx_failover, 0u);
    EXPECT_EQ(a.rail_down, 1u);
    // rail_fail_probes unanswered probes, then the next timeout declares the rail dead
    EXPECT_EQ(sim.node(0).stats(1, 0).timeouts, test_cfg().rail_fail_probes + 1u);
    // then, once it is suspected, one revival probe every 8 timeouts (50 ms x 8)
    EXPECT_GE(sim.node(0).stats(1, 0).probes_tx, test_cfg().rail_fail_probes + 5u);
    ASSERT_GE(events.size(), 1u);
    EXPECT_EQ(events[0], std::make_tuple(0, 1, 0, 0));
}

// A rail that comes back is used again.
TEST(Multirail, RailThatComesBackIsUsedAgain) {
    NetCfg n = net(2, 2);
    RailDeath d;
    d.node = -1;
    d.rail = 1;
    d.at = 10 * kUs;
    d.revive_at = 2 * kMs;
    d.notify_after = 100 * kUs;
    n.deaths.push_back(d);
    Sim sim(n, test_cfg());
    uint64_t rail1_late = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.rail == 1 && sim.now() >= 3 * kMs)
            rail1_late++;
    };
    sim.send(0, 1, Sim::pattern(0, 1, 0, 200000));
    sim.at(3 * kMs, [&] { sim.send(0, 1, Sim::pattern(0, 1, 1, 200000)); });
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats();
    EXPECT_EQ(a.rail_down, 1u);
    EXPECT_EQ(a.rail_up, 1u);
    EXPECT_EQ(rail1_late, 100u);  // the second message striped again: half of 200 fragments
    EXPECT_EQ(bspe_live_rails(sim.node(0).ep(), 1), 2u);
}

// A rail the engine declared dead on its own evidence is probed again from time to time;
// once it answers, the engine uses it again and says so.
TEST(Multirail, SuspectedRailRevivedByEngine) {
    NetCfg n = net(2, 2);
    RailDeath d;
    d.node = 1;
    d.rail = 0;
    d.at = 20 * kUs;
    d.revive_at = 2000 * kMs;
    n.deaths.push_back(d);
    Sim sim(n, test_cfg());
    std::vector<std::tuple<int, int, int, int>> events;
    sim.node(0).on_rail_event = [&](Node &nd, int peer, int rail, int up) {
        events.emplace_back(nd.id(), peer, rail, up);
    };
    for (int k = 0; k < 3; k++)
        sim.send(0, 1, Sim::pattern(0, 1, k, 50000));
    sim.run_until(1500 * kMs);
    EXPECT_EQ(bspe_live_rails(sim.node(0).ep(), 1), 1u);
    sim.run_until(5000 * kMs);
    EXPECT_EQ(bspe_live_rails(sim.node(0).ep(), 1), 2u);
    uint64_t rail0 = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && w.rail == 0)
            rail0++;
    };
    sim.send(0, 1, Sim::pattern(0, 1, 3, 50000));
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(rail0, 25u);  // striped over both rails again
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0], std::make_tuple(0, 1, 0, 0));
    EXPECT_EQ(events[1], std::make_tuple(0, 1, 0, 1));
    bspe_stats a = sim.node(0).stats();
    EXPECT_EQ(a.rail_down, 1u);
    EXPECT_EQ(a.rail_up, 1u);
}

// A receiver that runs ahead on four rails: nothing came yet on the channel, so its prods go on
// the rail of the channel's short messages only (a sender still in an earlier phase is asked on
// one rail instead of four, and answers only the first; that rail carries every message not
// striped and a run of every striped one); every fourth round asks on every live rail, in case
// the peer sent on others (it counts other rails live, or moved data off a failed one). The
// message sent later arrives whole; nothing is resent.
TEST(Multirail, ReceiverRunningAheadProdsOneRail) {
    Sim sim(net(2, 4), test_cfg());
    std::vector<std::pair<uint64_t, int>> prods;  // time, rail
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_PROD)
            prods.emplace_back(sim.now(), w.rail);
    };
    Node &rx = sim.node(1);
    int c = rx.chan_to(0);
    bspe_expect(rx.ep(), c, 1, 0, 0);
    // 4 fragments of 1000 bytes: striped, one per rail
    sim.at(1 * kMs, [&] { sim.send(0, 1, Sim::pattern(0, 1, 0, 4000), BSPE_SEND_LAST); });
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    // rounds at 50, 150, 350 us on one rail (the interval doubles with each round), at
    // 750 us on all four; the message leaves at 1 ms
    ASSERT_EQ(prods.size(), 7u);
    const uint64_t at[] = {50, 150, 350, 750, 750, 750, 750};
    std::set<int> wide;
    for (size_t i = 0; i < prods.size(); i++) {
        EXPECT_EQ(prods[i].first, at[i] * kUs) << i;
        if (i < 3)
            EXPECT_EQ(prods[i].second, prods[0].second) << i;
        else
            wide.insert(prods[i].second);
    }
    EXPECT_EQ(wide, (std::set<int>{0, 1, 2, 3}));
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(b.prods_tx, 7u);
    // The first prod asks for an answer (the endpoint has no round-trip sample yet); the
    // later ones find nothing to tell and are not answered.
    EXPECT_EQ(b.prods_early, 1u);
    EXPECT_EQ(a.acks_tx, 1u);
    EXPECT_EQ(a.retx_prod + a.retx_hole + a.retx_timeout + a.retx_failover, 0u);
    EXPECT_EQ(a.data_tx, 4u);
}

// A striped message lost whole on every rail while its receiver expects it: the first prod
// (one rail) reveals that rail's lost fragment; the prod naming it brings the resend, and the
// rounds that follow, with a fragment in reassembly, ask on every rail: every fragment is
// resent exactly once, by a prod or a reported hole, well before the sender timeout (50 ms).
// The receiver prodded and found nothing first: the resent last packet asks for an answer at
// once (it waits), and that answer settles the message: no probe at all.
TEST(Multirail, StripedMessageLostWholeFoundByProds) {
    Sim sim(net(2, 4), test_cfg());
    sim.drop_filter = [](const WirePkt &w) {
        return w.type == BSPE_T_DATA && w.src == 0 && !(w.flags & BSPE_F_RETX);
    };
    uint64_t last_retx = 0, first_probe = 0;
    sim.tap = [&](const WirePkt &w) {
        if (w.type == BSPE_T_DATA && (w.flags & BSPE_F_RETX))
            last_retx = sim.now();
        if (w.src == 0 && bspe_asks_answer(w.flags) && !first_probe)
            first_probe = sim.now();
    };
    Node &rx = sim.node(1);
    bspe_expect(rx.ep(), rx.chan_to(0), 1, 0, 0);
    sim.send(0, 1, Sim::pattern(0, 1, 0, 8000), BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    bspe_stats a = sim.node(0).stats(), b = sim.node(1).stats();
    EXPECT_EQ(sim.wire().data_lost, 8u);
    EXPECT_EQ(a.data_tx, 16u);
    EXPECT_EQ(a.retx_prod + a.retx_hole, 8u);
    EXPECT_EQ(a.retx_timeout + a.retx_failover, 0u);
    EXPECT_LT(last_retx, 1 * kMs);
    EXPECT_EQ(first_probe, 0u);
    EXPECT_EQ(a.probes_tx, 0u);
    EXPECT_EQ(a.timeouts, 0u);
    EXPECT_EQ(b.dup_rx, 0u);
}
