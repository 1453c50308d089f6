// Channel memory model: channels allocated on demand through ops->chan_alloc (max_chans is a
// ceiling), opened for unknown senders only by packets that passed validation, found by a
// keyed hash, and per-packet / per-timer / per-pacing-tick work over the active channels only.
#include <cstring>
#include <map>
#include <vector>

extern "C" {
#include "bspe_internal.h"
}
#include "engine_test_util.hpp"

using namespace enginetest;

namespace {

// One endpoint driven by hand: its packets are collected, channel memory counted.
struct Ep {
    struct Pkt {
        std::vector<uint8_t> bytes;
        uint32_t node;
        uint8_t rail;
    };
    std::vector<uint64_t> mem;
    bspe_ep *ep = nullptr;
    std::vector<Pkt> out;
    std::map<void *, std::vector<uint64_t>> chans;  // chan_alloc'd memory
    uint64_t chan_bytes = 0, allocs = 0, frees = 0, delivered = 0, completed = 0, failed = 0;
    int refuse_alloc = 0;  // chan_alloc returns NULL this many times
    int refuse_new = 0;    // chan_new refuses this many times
    uint64_t timer_at = 0;

    static Ep &of(void *ctx) { return *static_cast<Ep *>(ctx); }
    static void xmit(void *ctx, const bspe_xmit *x) {
        Pkt p;
        p.bytes.assign(x->hdr, x->hdr + BSPE_HDR_LEN);
        p.bytes.resize(BSPE_HDR_LEN + x->len, 0x5a);  // payload: 0x5a bytes (messages are such)
        bspe_seal(of(ctx).ep, p.bytes.data(), p.bytes.data() + BSPE_HDR_LEN, x->len);
        p.node = x->node;
        p.rail = x->rail;
        of(ctx).out.push_back(std::move(p));
    }
    static int rx_data(void *, const bspe_rx_frag *) { return 0; }
    static void deliver(void *ctx, const bspe_delivery *) { of(ctx).delivered++; }
    static void complete(void *ctx, void *, int status) {
        of(ctx).completed++;
        if (status)
            of(ctx).failed++;
    }
    static void timer(void *ctx, uint64_t when) { of(ctx).timer_at = when; }
    static void *chan_alloc(void *ctx, size_t size) {
        Ep &e = of(ctx);
        if (e.refuse_alloc > 0) {
            e.refuse_alloc--;
            return nullptr;
        }
        std::vector<uint64_t> m((size + 7) / 8, 0xdeadbeefdeadbeefULL);  // engine must zero it
        void *p = m.data();
        e.chans.emplace(p, std::move(m));
        e.chan_bytes += size;
        e.allocs++;
        return p;
    }
    static void chan_free(void *ctx, void *mem, size_t size) {
        Ep &e = of(ctx);
        EXPECT_EQ(e.chans.erase(mem), 1u);
        e.chan_bytes -= size;
        e.frees++;
    }
    static int chan_new(void *ctx, uint32_t, uint16_t, void **, uint8_t *) {
        Ep &e = of(ctx);
        if (e.refuse_new > 0) {
            e.refuse_new--;
            return -EPERM;
        }
        return BSPE_CHAN_GROUP;
    }
    static constexpr bspe_ops kOps = {xmit,    rx_data,    deliver,   nullptr,  complete, timer,
                                      nullptr, chan_alloc, chan_free, chan_new, nullptr};

    explicit Ep(const bspe_cfg &c) : mem(bspe_mem_size(&c) / 8 + 1) {
        ep = bspe_init(mem.data(), mem.size() * 8, &c, &kOps, this);
    }
    ~Ep() {
        if (ep)
            bspe_fini(ep);
    }
    Ep(const Ep &) = delete;
    Ep &operator=(const Ep &) = delete;

    bspe_stats stats() const {
        bspe_stats s;
        bspe_stats_get(ep, -1, -1, &s);
        return s;
    }
    // Hands every collected packet to @to; returns how many were accepted.
    int move_to(Ep &to, uint64_t now) {
        auto pkts = std::move(out);
        out.clear();
        int ok = 0;
        for (auto &p : pkts)
            ok += bspe_rx(to.ep, p.rail, p.bytes.data(), static_cast<uint32_t>(p.bytes.size()),
                          now) == 0;
        return ok;
    }
};

bspe_cfg chan_cfg(uint32_t node, uint16_t port, uint16_t max_chans) {
    bspe_cfg c = test_cfg();
    c.node = node;
    c.port = port;
    c.max_chans = max_chans;
    c.flags = BSPE_CFG_CSUM | BSPE_CFG_REQUIRE_CSUM | BSPE_CFG_AUTO_OPEN;
    c.hash_key[0] = 0x0123456789abcdefULL;
    c.hash_key[1] = 0xfedcba9876543210ULL;
    c.nprocs = 1 << 20;  // p of n/(2p) is the open channels + 1 (Documentation/protocol.rst)
    return c;
}

size_t align8(size_t n) {
    return (n + 7) & ~size_t(7);
}

}  // namespace

// The fixed part is the endpoint plus 12 bytes per possible channel (table pointer, free-list
// entry, hash bucket); each open channel costs exactly bspe_chan_size(), allocated at open and
// returned at close.
TEST(Channels, MemoryIsFixedPartPlusOpenChannels) {
    bspe_cfg c = chan_cfg(0, 1, 4096);
    c.chan_priv = 100;
    const size_t fixed = bspe_mem_size(&c), per = bspe_chan_size(&c);
    EXPECT_EQ(fixed, align8(sizeof(bspe_ep)) + 4096 * sizeof(void *) + 4096 * 2 + 4096 * 2);
    EXPECT_GT(per, align8(sizeof(bspe_chan)) + align8(100));
    Ep e(c);
    ASSERT_NE(e.ep, nullptr);
    EXPECT_EQ(e.chan_bytes, 0u);  // nothing per channel before a channel opens
    int a = bspe_chan_open(e.ep, 1, 1, 0, nullptr);
    int b = bspe_chan_open(e.ep, 2, 1, 0, nullptr);
    int d = bspe_chan_open(e.ep, 3, 7, 0, nullptr);
    EXPECT_EQ(a, 0);
    EXPECT_EQ(b, 1);
    EXPECT_EQ(d, 2);
    EXPECT_EQ(bspe_chan_count(e.ep), 3u);
    EXPECT_EQ(e.chan_bytes, 3 * per);
    // The caller's private bytes are zeroed, 8-aligned, inside the channel's allocation.
    auto *priv = static_cast<uint8_t *>(bspe_chan_priv(e.ep, b));
    ASSERT_NE(priv, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(priv) % 8, 0u);
    for (int i = 0; i < 100; i++)
        EXPECT_EQ(priv[i], 0) << i;
    EXPECT_EQ(bspe_chan_close(e.ep, b, 0), 0);
    EXPECT_EQ(e.chan_bytes, 2 * per);
    EXPECT_EQ(bspe_chan_priv(e.ep, b), nullptr);
    EXPECT_EQ(bspe_chan_find(e.ep, 2, 1), -ENOENT);
    EXPECT_EQ(bspe_chan_find(e.ep, 3, 7), d);
    EXPECT_EQ(bspe_chan_open(e.ep, 4, 1, 0, nullptr), b);  // the index is reused
    bspe_fini(e.ep);
    e.ep = nullptr;
    EXPECT_EQ(e.chan_bytes, 0u);
    EXPECT_EQ(e.allocs, 4u);
    EXPECT_EQ(e.frees, 4u);

    // The kernel's default configuration (4 rails, 1 MiB messages, 1500-byte MTU): what a
    // socket with BSP_CHANNELS 4096 holds before and per peer.
    bspe_cfg k;
    bspe_cfg_default(&k);
    k.nrails = 4;
    k.max_msg = 1 << 20;
    k.frag_size = 1500 - BSPE_HDR_LEN;
    k.chan_priv = k.msg_wnd * sizeof(void *);
    k.max_chans = 4096;
    std::printf(
        "kernel config, BSP_CHANNELS 4096: fixed %zu bytes, %zu bytes per open channel "
        "(preallocating every channel took %zu)\n",
        bspe_mem_size(&k), bspe_chan_size(&k), bspe_mem_size(&k) + 4096 * bspe_chan_size(&k));
    EXPECT_LT(bspe_mem_size(&k), 64u * 1024);
}

// max_chans is a ceiling; a failed allocation is an error the caller sees and costs nothing.
TEST(Channels, CeilingAndAllocationFailure) {
    Ep e(chan_cfg(0, 1, 2));
    ASSERT_NE(e.ep, nullptr);
    e.refuse_alloc = 1;
    EXPECT_EQ(bspe_chan_open(e.ep, 1, 1, 0, nullptr), -ENOMEM);
    EXPECT_EQ(bspe_chan_count(e.ep), 0u);
    EXPECT_EQ(bspe_chan_open(e.ep, 1, 1, 0, nullptr), 0);
    EXPECT_EQ(bspe_chan_open(e.ep, 2, 1, 0, nullptr), 1);
    EXPECT_EQ(bspe_chan_open(e.ep, 3, 1, 0, nullptr), -ENOSPC);
    EXPECT_EQ(e.allocs, 2u);
}

// An unknown sender gets a channel only from a packet that passed every check: twenty frames
// with bad checksums (the reported exhaustion) and truncated ones allocate nothing; a refused
// sender (chan_new) or a failed allocation is counted and allocates nothing; the valid frame
// then opens exactly one channel and its message is delivered once.
TEST(Channels, OnlyValidPacketsOpenChannels) {
    Ep rx(chan_cfg(0, 1, 16));
    ASSERT_NE(rx.ep, nullptr);
    std::vector<Ep::Pkt> valid;
    for (uint16_t port = 2; port < 22; port++) {
        Ep tx(chan_cfg(1, port, 4));
        int c = bspe_chan_open(tx.ep, 0, 1, 0, nullptr);
        ASSERT_EQ(c, 0);
        static uint8_t bytes[100];
        ASSERT_EQ(bspe_send(tx.ep, c, bytes, sizeof bytes, BSPE_SEND_LAST, 0), 0);
        ASSERT_EQ(tx.out.size(), 1u);
        valid.push_back(tx.out[0]);
    }
    uint64_t csum = rx.stats().drops[BSPE_DROP_CSUM];
    for (auto p : valid) {
        p.bytes.back() ^= 1;  // payload corrupted
        EXPECT_EQ(bspe_rx(rx.ep, 0, p.bytes.data(), static_cast<uint32_t>(p.bytes.size()), 1),
                  -EBADMSG);
        EXPECT_EQ(bspe_rx(rx.ep, 0, p.bytes.data(), BSPE_HDR_LEN - 1, 1), -EBADMSG);
    }
    EXPECT_EQ(rx.stats().drops[BSPE_DROP_CSUM], csum + 20);
    EXPECT_EQ(rx.allocs, 0u);
    EXPECT_EQ(bspe_chan_count(rx.ep), 0u);

    rx.refuse_new = 1;
    auto &p0 = valid[0].bytes;
    EXPECT_EQ(bspe_rx(rx.ep, 0, p0.data(), static_cast<uint32_t>(p0.size()), 2), -ENOENT);
    EXPECT_EQ(rx.stats().drops[BSPE_DROP_NOCHAN], 1u);
    rx.refuse_alloc = 1;
    EXPECT_EQ(bspe_rx(rx.ep, 0, p0.data(), static_cast<uint32_t>(p0.size()), 2), -ENOMEM);
    EXPECT_EQ(rx.stats().drops[BSPE_DROP_NOMEM], 1u);
    EXPECT_EQ(rx.allocs, 0u);
    EXPECT_EQ(rx.delivered, 0u);

    for (size_t i = 0; i < valid.size(); i++)
        EXPECT_EQ(bspe_rx(rx.ep, 0, valid[i].bytes.data(),
                          static_cast<uint32_t>(valid[i].bytes.size()), 3),
                  i < 16 ? 0 : -ENOENT)
            << i;
    EXPECT_EQ(rx.allocs, 16u);  // the ceiling: 16 channels, the other 4 senders refused
    EXPECT_EQ(bspe_chan_count(rx.ep), 16u);
    EXPECT_EQ(rx.delivered, 16u);
    EXPECT_EQ(rx.stats().drops[BSPE_DROP_NOCHAN], 1u + 4u);
    // chan_new's flags were applied
    int c = bspe_chan_find(rx.ep, 1, 2);
    ASSERT_GE(c, 0);
    EXPECT_EQ(rx.ep->tab[c]->flags, BSPE_CHAN_GROUP);
}

// The lookup hash is keyed: the same addresses fall into other buckets under another key,
// and every channel is found.
TEST(Channels, KeyedLookup) {
    bspe_cfg c1 = chan_cfg(0, 1, 1024), c2 = c1;
    c2.hash_key[0] ^= 1;
    Ep a(c1), b(c2);
    for (uint16_t port = 0; port < 1024; port++) {
        ASSERT_EQ(bspe_chan_open(a.ep, 7, port, 0, nullptr), port);
        ASSERT_EQ(bspe_chan_open(b.ep, 7, port, 0, nullptr), port);
    }
    for (uint16_t port = 0; port < 1024; port++) {
        EXPECT_EQ(bspe_chan_find(a.ep, 7, port), port);
        EXPECT_EQ(bspe_chan_find(b.ep, 7, port), port);
    }
    EXPECT_EQ(bspe_chan_find(a.ep, 8, 0), -ENOENT);
    int same = 0, longest = 0;
    for (uint32_t i = 0; i < a.ep->nbuckets; i++) {
        same += a.ep->bucket[i] == b.ep->bucket[i];
        int n = 0;
        for (uint16_t k = a.ep->bucket[i]; k != BSPE_NIL; k = a.ep->tab[k]->hnext)
            n++;
        longest = std::max(longest, n);
    }
    EXPECT_LT(same, 1024 / 2);  // the key moves the buckets (chance: about 1/e each)
    EXPECT_LE(longest, 8);      // 1024 sequential ports spread over 1024 buckets
}

// 1 active channel among 3000 opened-and-idle ones: the timer, the epoch rule and the
// pacing release visit exactly the active channel, never the table.
TEST(Channels, WorkIsOverActiveChannelsOnly) {
    constexpr int kIdle = 3000;
    Ep r(chan_cfg(0, 1, 4096));
    ASSERT_NE(r.ep, nullptr);
    const uint32_t kN = r.ep->cfg.sndbuf_pkts + r.ep->cfg.rcvbuf / r.ep->cfg.frag_size;
    uint64_t now = 1000;
    // kIdle senders (node 1, ports 2..) each deliver one message to r, which acknowledges it.
    {
        bspe_cfg sc = chan_cfg(1, 2, 1);
        for (int i = 0; i < kIdle; i++) {
            sc.port = static_cast<uint16_t>(2 + i);
            Ep s(sc);
            static uint8_t bytes[300];
            int c = bspe_chan_open(s.ep, 0, 1, 0, nullptr);
            ASSERT_EQ(bspe_send(s.ep, c, bytes, sizeof bytes, BSPE_SEND_LAST, now), 0);
            ASSERT_EQ(s.move_to(r, now), 1);
            // r has channels with i + 1 peers: it acknowledges the LAST packet at once only
            // when n/(2p), p = i + 2, is down to 1 (Documentation/protocol.rst); before, the
            // sender's timeout probe is answered at once, and the answer settles its message.
            if (kN / (2 * static_cast<uint32_t>(i + 2)) > 1) {
                ASSERT_EQ(r.out.size(), 0u) << i;
                ASSERT_NE(s.timer_at, 0u);
                now = std::max(now, s.timer_at);
                bspe_timer(s.ep, now);
                ASSERT_EQ(s.move_to(r, now), 1);
            }
            ASSERT_EQ(r.move_to(s, now), 1);
            ASSERT_EQ(s.completed, 1u);
            ASSERT_EQ(s.failed, 0u);
            s.out.clear();
        }
    }
    ASSERT_EQ(bspe_chan_count(r.ep), static_cast<uint32_t>(kIdle));
    ASSERT_EQ(r.delivered, static_cast<uint64_t>(kIdle));
    EXPECT_EQ(r.chan_bytes, kIdle * bspe_chan_size(&r.ep->cfg));

    // The peer that stays active: node 2, port 1, a group member (its packets are lost).
    int rc = bspe_chan_open(r.ep, 2, 1, BSPE_CHAN_GROUP, nullptr);
    ASSERT_GE(rc, 0);

    auto visits = [&] { return r.stats().chan_visits; };
    uint64_t v0 = visits();
    bspe_timer(r.ep, now += 1000);
    EXPECT_EQ(visits() - v0, 0u);  // nothing is due anywhere

    // r sends 5000 bytes (5 packets) to p: the send pushes that channel alone; every timer
    // expiry while they are outstanding visits exactly that channel.
    static uint8_t msg[5000];
    v0 = visits();
    ASSERT_EQ(bspe_send(r.ep, rc, msg, sizeof msg, 0, now), 0);
    EXPECT_EQ(visits() - v0, 0u);
    EXPECT_EQ(r.out.size(), 5u);
    r.out.clear();  // lost
    for (int tick = 0; tick < 3; tick++) {
        ASSERT_GT(r.timer_at, now);
        now = r.timer_at;  // the sender timeout: a probe
        v0 = visits();
        bspe_timer(r.ep, now);
        EXPECT_EQ(visits() - v0, 1u) << tick;
        EXPECT_EQ(r.stats().probes_tx, static_cast<uint64_t>(tick + 1));
        r.out.clear();
    }
    // The epoch rule settles it: one visit (the channel with unsettled messages).
    v0 = visits();
    bspe_superstep_done(r.ep, 1, now);
    EXPECT_EQ(visits() - v0, 1u);
    EXPECT_EQ(r.completed, 1u);
    EXPECT_EQ(r.failed, 0u);
    // The channel's next deadline was its next probe (rto << 3 away): before then the timer
    // walks nothing; at it, one last look finds nothing due and takes it off the list.
    v0 = visits();
    bspe_timer(r.ep, now += 60 * kMs);
    EXPECT_EQ(visits() - v0, 0u);
    v0 = visits();
    bspe_timer(r.ep, now += 10000 * kMs);
    EXPECT_EQ(visits() - v0, 1u);
    v0 = visits();
    bspe_timer(r.ep, now += 60 * kMs);
    EXPECT_EQ(visits() - v0, 0u);

    // Paced: 3 messages of 5 packets at about 1000 packets/s; every pacing release visits
    // the one channel with unsent data (the push) and nothing else: the channel with packets
    // outstanding has no deadline before its probe, so the timer does not walk it.
    bspe_set_pacing(r.ep, 1000 * 1100, now);
    for (int k = 0; k < 3; k++)
        ASSERT_EQ(bspe_send(r.ep, rc, msg, sizeof msg, 0, now), 0);
    uint64_t sent = r.out.size();
    int ticks = 0;
    while (sent < 15 && ticks < 100) {
        ASSERT_NE(r.timer_at, 0u);
        now = std::max(now, r.timer_at);
        v0 = visits();
        bspe_timer(r.ep, now);
        // one push of the sending channel
        EXPECT_EQ(visits() - v0, 1u) << ticks;
        sent = r.out.size();
        ticks++;
    }
    EXPECT_EQ(sent, 15u);
    EXPECT_EQ(bspe_chan_count(r.ep), static_cast<uint32_t>(kIdle + 1));
}

// Lazy channels under loss, bursts, reordering and duplication: six nodes send in a ring, so
// each opens one channel to send (at its first send) and gets one from its first valid packet;
// every message arrives exactly once, and each node holds exactly two channels' memory.
TEST(Channels, LazyChannelsUnderFaultsDeliverExactlyOnce) {
    bspsim::NetCfg n = net(6, 2, 21);
    n.lazy_chans = true;
    for (auto &r : n.rail) {
        r.faults.loss = 0.05;
        r.faults.burst_start = 0.01;
        r.faults.burst_len = 4;
        r.faults.reorder = 0.05;
        r.faults.reorder_ns = 20 * kUs;
        r.faults.duplicate = 0.05;
    }
    bspe_cfg c = test_cfg();
    c.nprocs = 1 << 20;  // every ACKREQ answered at once
    bspsim::Sim sim(n, c);
    for (int i = 0; i < 6; i++)
        EXPECT_EQ(sim.node(i).chan_bytes, 0u);
    for (int k = 0; k < 20; k++)
        for (int i = 0; i < 6; i++)
            sim.send(i, (i + 1) % 6,
                     bspsim::Sim::pattern(i, (i + 1) % 6, k, 1 + (k * 977 + i * 131) % 9000),
                     BSPE_SEND_LAST);
    ASSERT_TRUE(sim.run_until_idle(100000 * kMs));
    EXPECT_EQ(sim.verify_all_delivered(), "");
    EXPECT_EQ(sim.pending(), 0u);
    const size_t per = bspe_chan_size(&sim.node(0).ep()->cfg);
    for (int i = 0; i < 6; i++) {
        auto &nd = sim.node(i);
        EXPECT_TRUE(nd.errors.empty()) << nd.errors.front();
        EXPECT_EQ(bspe_chan_count(nd.ep()), 2u) << i;
        EXPECT_EQ(nd.chan_bytes, 2 * per) << i;
        EXPECT_EQ(nd.chan_allocs, 2u) << i;
        EXPECT_GE(bspe_chan_find(nd.ep(), static_cast<uint32_t>((i + 1) % 6), 1), 0);
        EXPECT_GE(bspe_chan_find(nd.ep(), static_cast<uint32_t>((i + 5) % 6), 1), 0);
    }
    bspe_stats t = sim.total_stats();
    EXPECT_GT(t.dup_rx, 0u);
    EXPECT_GT(t.retx_hole + t.retx_prod + t.retx_timeout, 0u);
}
