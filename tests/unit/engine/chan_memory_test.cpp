// Channel memory sized by what a channel holds in flight (Documentation/protocol.rst, "Channel
// memory and work"): a channel's base allocation holds one send descriptor per rail, one
// message, one reassembly slot of one bitmap word and a failover queue for those descriptors;
// send rings, the message ring, reassembly slots and the failover queue grow through
// ops->chan_alloc (doubling, up to snd_wnd / msg_wnd / nrails * snd_wnd) when more is in
// flight, and go back when it settles. A refused growth allocation makes the send wait, or
// drops the fragment to be sent again: nothing is lost, and it is counted (grow_nomem).
#include <cstdio>
#include <vector>

extern "C" {
#include "bspe_internal.h"
}
#include "engine_test_util.hpp"

using namespace enginetest;

namespace {

size_t a8(size_t n) {
    return (n + 7) & ~size_t(7);
}

// The base allocation, part by part, from the structures' sizes.
size_t expected_chan_size(const bspe_cfg &c) {
    const size_t r = c.nrails;
    return a8(sizeof(bspe_chan)) +
           r * (a8(sizeof(bspe_srail)) + a8(sizeof(bspe_rrail)) + a8(sizeof(bspe_stats))) +
           r * (a8((c.rcv_wnd + 63) / 64 * 8) + a8(sizeof(bspe_spkt) * BSPE_RING_INLINE)) +
           2 * a8(sizeof(void *) * c.msg_wnd) + a8(sizeof(bspe_smsg)) + a8(sizeof(bspe_rslot)) + 8 +
           a8(sizeof(bspe_fofrag) * r * BSPE_RING_INLINE) + a8(c.chan_priv);
}

// The AF_BSP module's configuration (kernel/transport.c): 1 MiB messages, 1500-byte MTU.
bspe_cfg module_cfg(uint8_t rails) {
    bspe_cfg c = test_cfg();
    c.nrails = rails;
    c.frag_size = 1500 - BSPE_HDR_LEN;
    c.max_msg = 1 << 20;
    return c;
}

uint64_t grow_nomem(bspsim::Sim &sim) {
    return sim.total_stats().grow_nomem;
}

// Every node back to its channels' base allocations.
void expect_base(bspsim::Sim &sim) {
    for (int i = 0; i < sim.nodes(); i++) {
        auto &nd = sim.node(i);
        EXPECT_EQ(nd.chan_bytes, bspe_chan_count(nd.ep()) * bspe_chan_size(bspe_get_cfg(nd.ep())))
            << i;
        EXPECT_TRUE(nd.errors.empty()) << nd.errors.front();
    }
}

}  // namespace

// The base allocation is exactly its parts; with the module's configuration and 4 rails it
// is a few KB, where the preallocated rings took 53.6 KB (printed).
TEST(ChanMemory, BaseSizeIsTheSumOfItsParts) {
    for (uint8_t rails : {1, 2, 4}) {
        bspe_cfg c = module_cfg(rails);
        EXPECT_EQ(bspe_chan_size(&c), expected_chan_size(c)) << int(rails);
        c.chan_priv = 256;  // the module's 32 slot pointers
        EXPECT_EQ(bspe_chan_size(&c), expected_chan_size(c)) << int(rails);
        std::printf("module configuration, %d rail%s: %zu bytes per idle channel\n", rails,
                    rails > 1 ? "s" : "", bspe_chan_size(&c));
    }
    bspe_cfg c = module_cfg(4);
    EXPECT_LT(bspe_chan_size(&c), 4096u);
}

// A channel that holds one message of one fragment each way allocates nothing beyond its base,
// in flight or after.
TEST(ChanMemory, OneMessageChannelAllocatesNothingMore) {
    bspsim::NetCfg n = net(2, 4, 3);
    n.lazy_chans = true;
    bspsim::Sim sim(n, module_cfg(4));
    sim.send(0, 1, bspsim::Sim::pattern(0, 1, 0, 64));
    sim.send(1, 0, bspsim::Sim::pattern(1, 0, 0, 64));
    const size_t per = bspe_chan_size(bspe_get_cfg(sim.node(0).ep()));
    EXPECT_EQ(sim.node(0).chan_bytes, per);  // in flight
    ASSERT_TRUE(sim.run_until_idle(10000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    for (int i = 0; i < 2; i++) {
        EXPECT_EQ(sim.node(i).chan_bytes_max, per) << i;
        EXPECT_EQ(sim.node(i).grow_allocs, 0u) << i;
    }
    expect_base(sim);
}

// A window-filling one-way stream (large messages, losses, a rail dying mid-stream) grows the
// rings, the failover queue and the reassembly slots, delivers every byte exactly once, and
// gives it all back once settled. Peak memory stays within the old fixed maxima.
TEST(ChanMemory, WindowFillingStreamGrowsAndShrinks) {
    bspsim::NetCfg n = net(2, 2, 5);
    n.lazy_chans = true;
    for (auto &r : n.rail) {
        r.faults.loss = 0.01;
        r.faults.reorder = 0.01;
        r.faults.reorder_ns = 20 * kUs;
    }
    bspsim::RailDeath d;
    d.rail = 1;
    d.at = 2 * kMs;
    d.notify_after = 100 * kUs;
    n.deaths.push_back(d);
    bspe_cfg c = module_cfg(2);
    c.nprocs = 1 << 20;
    bspsim::Sim sim(n, c);
    for (int k = 0; k < 40; k++)
        sim.send(0, 1, bspsim::Sim::pattern(0, 1, k, 200000 + 977 * k), BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.pending(), 0u);
    const size_t per = bspe_chan_size(&c);
    // what the preallocated channel held: rings of snd_wnd, msg_wnd messages and slots with
    // full bitmaps, nrails * snd_wnd failover entries
    const size_t old_max =
        a8(sizeof(bspe_chan)) + c.nrails * (c.snd_wnd * sizeof(bspe_spkt) + c.rcv_wnd / 8) +
        c.msg_wnd *
            (sizeof(bspe_smsg) + sizeof(bspe_rslot) + (c.max_msg / c.frag_size + 64) / 64 * 8) +
        c.nrails * c.snd_wnd * sizeof(bspe_fofrag) + 2 * c.msg_wnd * sizeof(void *) +
        c.nrails * sizeof(bspe_stats) + sizeof(bspe_smsg) + sizeof(bspe_rslot) + 64;
    EXPECT_GT(sim.node(0).grow_allocs, 0u);
    EXPECT_GT(sim.node(1).grow_allocs, 0u);  // slots of 2+ bitmap words
    EXPECT_GT(sim.node(0).chan_bytes_max, per + c.snd_wnd / 2 * sizeof(bspe_spkt));
    EXPECT_LE(sim.node(0).chan_bytes_max, old_max);
    EXPECT_LE(sim.node(1).chan_bytes_max, old_max);
    EXPECT_GT(sim.total_stats().retx_failover, 0u);
    EXPECT_EQ(grow_nomem(sim), 0u);
    std::printf("stream: sender peak %lu bytes, receiver peak %lu, base %zu, old fixed %zu\n",
                (unsigned long)sim.node(0).chan_bytes_max,
                (unsigned long)sim.node(1).chan_bytes_max, per, old_max);
    expect_base(sim);
}

namespace {

// Refuses growth allocations of a node as @pick says; counts the refusals.
struct Refuser {
    uint64_t calls = 0, refused = 0;
    std::function<bool(uint64_t call, size_t size)> pick;
    void attach(bspsim::Node &nd) {
        nd.refuse_grow = [this](size_t size) {
            bool no = pick(calls++, size);
            refused += no;
            return no;
        };
    }
};

}  // namespace

// Send ring: every growth refused, a 20-fragment message goes out one packet at a time.
TEST(ChanMemory, RefusedRingGrowthWaits) {
    bspsim::NetCfg n = net(2, 1, 7);
    n.lazy_chans = true;
    bspsim::Sim sim(n, module_cfg(1));
    Refuser r;
    r.pick = [](uint64_t, size_t) { return true; };
    r.attach(sim.node(0));
    sim.send(0, 1, bspsim::Sim::pattern(0, 1, 0, 20 * 1428), BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_GT(r.refused, 0u);
    EXPECT_EQ(sim.node(0).stats().grow_nomem, r.refused);
    EXPECT_EQ(sim.node(0).grow_allocs, 0u);
    expect_base(sim);
}

// Failover queue: on the sender the first growth allocation is the send ring (cap 2), the
// second the failover queue (room for a second outstanding packet): refused, the send waits
// for the first packet's acknowledgement.
TEST(ChanMemory, RefusedFailoverQueueGrowthWaits) {
    bspsim::NetCfg n = net(2, 1, 8);
    n.lazy_chans = true;
    bspsim::Sim sim(n, module_cfg(1));
    Refuser r;
    std::vector<size_t> sizes;
    r.pick = [&sizes](uint64_t call, size_t size) {
        sizes.push_back(size);
        return call == 1;
    };
    r.attach(sim.node(0));
    sim.send(0, 1, bspsim::Sim::pattern(0, 1, 0, 20 * 1428), BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    ASSERT_GE(sizes.size(), 2u);
    EXPECT_EQ(sizes[0], 2 * sizeof(bspe_spkt));
    EXPECT_EQ(sizes[1], BSPE_FOQ_MIN * sizeof(bspe_fofrag));
    EXPECT_EQ(r.refused, 1u);
    EXPECT_EQ(sim.node(0).stats().grow_nomem, 1u);
    expect_base(sim);
}

// Message ring: the second message of a channel needs memory; refused, bspe_send says
// -EAGAIN (the sim keeps it queued) until the first completes.
TEST(ChanMemory, RefusedMessageWaitsForACompletion) {
    bspsim::NetCfg n = net(2, 1, 9);
    n.lazy_chans = true;
    bspsim::Sim sim(n, module_cfg(1));
    Refuser r;
    r.pick = [](uint64_t, size_t size) { return size == sizeof(bspe_smsg); };
    r.attach(sim.node(0));
    for (int k = 0; k < 5; k++)
        sim.send(0, 1, bspsim::Sim::pattern(0, 1, k, 100 + k), BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.pending(), 0u);
    EXPECT_GE(r.refused, 4u);
    EXPECT_EQ(sim.node(0).stats().grow_nomem, r.refused);
    expect_base(sim);
}

// Reassembly slot: a message of more than 64 fragments needs a slot with a larger bitmap; the
// receiver's first three allocations are refused: three fragments dropped (nomem), sent again.
TEST(ChanMemory, RefusedSlotDropsTheFragmentToBeSentAgain) {
    bspsim::NetCfg n = net(2, 1, 10);
    n.lazy_chans = true;
    bspe_cfg c = module_cfg(1);
    c.nprocs = 1 << 20;
    bspsim::Sim sim(n, c);
    Refuser r;
    r.pick = [](uint64_t call, size_t) { return call < 3; };
    r.attach(sim.node(1));
    sim.send(0, 1, bspsim::Sim::pattern(0, 1, 0, 100 * 1428), BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(r.refused, 3u);
    bspe_stats s = sim.node(1).stats();
    EXPECT_EQ(s.grow_nomem, 3u);
    EXPECT_EQ(s.drops[BSPE_DROP_NOMEM], 3u);
    expect_base(sim);
}

// Every growth point under loss, both ways, every third growth allocation refused on every
// node: every message delivered exactly once, every refusal counted once.
TEST(ChanMemory, RefusedGrowthLosesNothingAndIsCounted) {
    bspsim::NetCfg n = net(3, 2, 11);
    n.lazy_chans = true;
    for (auto &r : n.rail) {
        r.faults.loss = 0.02;
        r.faults.duplicate = 0.01;
    }
    bspsim::RailDeath d;
    d.node = 2;
    d.rail = 0;
    d.at = 1 * kMs;
    d.revive_at = 4 * kMs;
    d.notify_after = 50 * kUs;
    n.deaths.push_back(d);
    bspe_cfg c = module_cfg(2);
    c.nprocs = 1 << 20;
    bspsim::Sim sim(n, c);
    std::vector<Refuser> r(3);
    for (int i = 0; i < 3; i++) {
        r[i].pick = [](uint64_t call, size_t) { return call % 3 == 2; };
        r[i].attach(sim.node(i));
    }
    for (int k = 0; k < 30; k++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                if (i != j)
                    sim.send(i, j, bspsim::Sim::pattern(i, j, k, 1 + (k * 7919 + i * 131) % 150000),
                             BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.pending(), 0u);
    uint64_t refused = 0;
    for (int i = 0; i < 3; i++) {
        EXPECT_GT(r[i].refused, 0u) << i;
        EXPECT_EQ(sim.node(i).stats().grow_nomem, r[i].refused) << i;
        refused += r[i].refused;
    }
    EXPECT_EQ(grow_nomem(sim), refused);
    expect_base(sim);
}
