// Wire format version 2 rules, one test each (Documentation/protocol.rst "Packet
// authentication", "Incarnations", "Closing"): forged, missing and wrongly keyed MACs,
// replayed DATA/ACK/CLOSE, stale dst_inc, older src_inc, a newer src_inc that resets the
// channel, tombstones, the arrival rail, silence after close_notify, and the re-group
// epoch reset. Every refused packet is counted under its exact reason and leaves the
// receiver's state (all memory but the counters) unchanged.
#include <arpa/inet.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

extern "C" {
#include "bspe_internal.h"
}
#include "engine_test_util.hpp"

using namespace enginetest;

namespace {

const uint8_t kKey[BSPE_KEY_LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
const uint8_t kOtherKey[BSPE_KEY_LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17};

struct Pkt {
    int from;
    uint8_t rail;
    std::vector<uint8_t> bytes;
    bspe_hdr *hdr() { return reinterpret_cast<bspe_hdr *>(bytes.data()); }
    uint8_t type() const { return bytes[1]; }
    uint16_t flags() const { return static_cast<uint16_t>(bytes[2] << 8 | bytes[3]); }
};

// One endpoint: its memory, what it sent, what it delivered, completed and aborted.
struct End {
    int id = 0;
    bspe_cfg cfg{};
    std::vector<uint64_t> mem;
    bspe_ep *ep = nullptr;
    std::deque<Pkt> *wire = nullptr;
    std::map<void *, int> completed;
    std::vector<std::vector<uint8_t>> delivered;
    std::map<std::pair<int, uint32_t>, std::vector<uint8_t>> slots;
    int aborts = 0;
    uint64_t xmits = 0;

    static void cb_xmit(void *ctx, const bspe_xmit *x) {
        auto *e = static_cast<End *>(ctx);
        e->xmits++;
        Pkt p{e->id, x->rail, std::vector<uint8_t>(BSPE_HDR_LEN + x->len)};
        std::memcpy(p.bytes.data(), x->hdr, BSPE_HDR_LEN);
        if (x->len)
            std::memcpy(p.bytes.data() + BSPE_HDR_LEN,
                        static_cast<const std::vector<uint8_t> *>(x->msg)->data() + x->off, x->len);
        bspe_seal(e->ep, p.bytes.data(), p.bytes.data() + BSPE_HDR_LEN, x->len);
        e->wire->push_back(std::move(p));
    }
    static int cb_rx(void *ctx, const bspe_rx_frag *f) {
        auto *e = static_cast<End *>(ctx);
        auto &b = e->slots[{f->chan, f->slot}];
        if (f->first)
            b.assign(f->msg_len, 0);
        std::memcpy(b.data() + f->off, f->data, f->len);
        return 0;
    }
    static void cb_deliver(void *ctx, const bspe_delivery *d) {
        auto *e = static_cast<End *>(ctx);
        e->delivered.push_back(e->slots[{d->chan, d->slot}]);
        e->slots.erase({d->chan, d->slot});
    }
    static void cb_abort(void *ctx, int chan, uint32_t slot) {
        auto *e = static_cast<End *>(ctx);
        e->aborts++;
        e->slots.erase({chan, slot});
    }
    static void cb_complete(void *ctx, void *msg, int status) {
        auto *e = static_cast<End *>(ctx);
        EXPECT_EQ(e->completed.count(msg), 0u) << "completed twice";
        e->completed[msg] = status;
    }
    static void cb_timer(void *, uint64_t) {}

    End() = default;
    End(const End &) = delete;
    End &operator=(const End &) = delete;
    // The channels come from heap_chan_alloc: an endpoint is always finished.
    ~End() { fini(); }
    void fini() {
        if (ep)
            bspe_fini(ep);
        ep = nullptr;
    }

    void init(int node, uint32_t inc, uint8_t flags, const uint8_t *key, std::deque<Pkt> *w,
              uint8_t nrails = 1) {
        fini();
        static const bspe_ops ops = {cb_xmit,        cb_rx,    cb_deliver, cb_abort,
                                     cb_complete,    cb_timer, nullptr,    heap_chan_alloc,
                                     heap_chan_free, nullptr,  nullptr};
        id = node;
        wire = w;
        cfg = test_cfg();
        cfg.node = static_cast<uint32_t>(node);
        cfg.port = 1;
        cfg.nrails = nrails;
        cfg.incarnation = inc;
        cfg.flags = flags;
        if (key)
            std::memcpy(cfg.key, key, BSPE_KEY_LEN);
        mem.assign(bspe_mem_size(&cfg) / 8 + 1, 0);
        ep = bspe_init(mem.data(), mem.size() * 8, &cfg, &ops, this);
        ASSERT_NE(ep, nullptr);
        completed.clear();
        delivered.clear();
        slots.clear();
        aborts = 0;
        xmits = 0;
    }

    bspe_stats stats() const {
        bspe_stats s;
        bspe_stats_get(ep, -1, -1, &s);
        return s;
    }

    // Engine memory with every counter zeroed (what must not change on a refusal).
    std::vector<uint64_t> state() const {
        std::vector<uint64_t> s = mem;
        auto *e = reinterpret_cast<bspe_ep *>(s.data());
        std::memset(&e->st, 0, sizeof(e->st));
        const size_t words = bspe_chan_size(&cfg) / 8;
        for (int c = 0; c < cfg.max_chans; c++) {
            const bspe_chan *ch = ep->tab[c];
            if (!ch)
                continue;
            const auto *w = reinterpret_cast<const uint64_t *>(ch);
            size_t at = s.size();
            s.insert(s.end(), w, w + words);
            // the per-rail counters, in the channel's allocation after the struct
            auto *copy = reinterpret_cast<uint8_t *>(s.data() + at);
            std::memset(copy + (reinterpret_cast<const uint8_t *>(ch->st) -
                                reinterpret_cast<const uint8_t *>(ch)),
                        0, sizeof(bspe_stats) * cfg.nrails);
        }
        return s;
    }
};

constexpr uint8_t kAuth = BSPE_CFG_AUTH | BSPE_CFG_AUTO_OPEN;
constexpr uint8_t kPlain = BSPE_CFG_CSUM | BSPE_CFG_AUTO_OPEN;

class Trust : public ::testing::Test {
  protected:
    // Delivers every queued packet sent by @from to @to (others stay queued), in order.
    // Returns how many were delivered.
    int move(End &from, End &to, uint64_t now = 10,
             const std::function<bool(Pkt &)> &keep = nullptr) {
        int n = 0;
        std::deque<Pkt> rest;
        while (!wire.empty()) {
            Pkt p = std::move(wire.front());
            wire.pop_front();
            if (p.from != from.id || (keep && !keep(p))) {
                rest.push_back(std::move(p));
                continue;
            }
            bspe_rx(to.ep, p.rail, p.bytes.data(), static_cast<uint32_t>(p.bytes.size()), now);
            n++;
        }
        wire = std::move(rest);
        return n;
    }

    // Runs both ways until nothing is in flight.
    void settle(End &a, End &b, uint64_t now = 10) {
        for (int i = 0; i < 20 && !wire.empty(); i++) {
            move(a, b, now);
            move(b, a, now);
        }
    }

    // @x sends a message to @y and @y one back: each learns the other's incarnation.
    void exchange(End &x, End &y, uint8_t seed) {
        int cx = bspe_chan_open(x.ep, static_cast<uint32_t>(y.id), 1, 0, nullptr);
        ASSERT_EQ(send(x, cx, 100, seed), 0);
        settle(x, y);
        int cy = bspe_chan_find(y.ep, static_cast<uint32_t>(x.id), 1);
        ASSERT_GE(cy, 0);
        ASSERT_EQ(send(y, cy, 100, static_cast<uint8_t>(seed + 1)), 0);
        settle(x, y);
        ASSERT_EQ(x.ep->tab[cx]->peer_inc, y.cfg.incarnation);
        ASSERT_EQ(y.ep->tab[cy]->peer_inc, x.cfg.incarnation);
    }

    // Feeds @p to @to: refused with @err, counted once under @why (nothing else), and the
    // receiver's state is unchanged.
    void refused(End &to, Pkt p, int err, bspe_drop why, uint64_t now = 20) {
        auto before = to.state();
        bspe_stats s0 = to.stats();
        uint64_t xmits = to.xmits;
        EXPECT_EQ(
            bspe_rx(to.ep, p.rail, p.bytes.data(), static_cast<uint32_t>(p.bytes.size()), now),
            err);
        bspe_stats s1 = to.stats();
        for (int d = 0; d < BSPE_DROP_MAX; d++)
            EXPECT_EQ(s1.drops[d], s0.drops[d] + (d == why)) << bspe_drop_name(bspe_drop(d));
        EXPECT_EQ(to.state(), before) << "state changed for " << bspe_drop_name(why);
        EXPECT_EQ(to.xmits, xmits);
    }

    std::shared_ptr<std::vector<uint8_t>> message(size_t n, uint8_t seed) {
        auto m = std::make_shared<std::vector<uint8_t>>(n);
        for (size_t i = 0; i < n; i++)
            (*m)[i] = static_cast<uint8_t>(seed + i * 7);
        keep.push_back(m);
        return m;
    }

    int send(End &from, int chan, size_t n, uint8_t seed, uint64_t now = 1) {
        auto m = message(n, seed);
        return bspe_send(from.ep, chan, m.get(), static_cast<uint32_t>(n), 0, now);
    }

    // The first queued packet of @from of @type (removed from the wire), as sent.
    Pkt take(End &from, uint8_t type, uint16_t flag = 0) {
        for (auto it = wire.begin(); it != wire.end(); ++it)
            if (it->from == from.id && it->type() == type && (!flag || (it->flags() & flag))) {
                Pkt p = *it;
                wire.erase(it);
                return p;
            }
        ADD_FAILURE() << "no such packet";
        return Pkt{};
    }

    std::deque<Pkt> wire;
    std::vector<std::shared_ptr<std::vector<uint8_t>>> keep;
    End a, b;
};

}  // namespace

// Authenticated endpoints exchange messages; the packets carry AUTH and a MAC, no checksum.
TEST_F(Trust, AuthenticatedEndpointsTalk) {
    a.init(0, 100, kAuth, kKey, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    int c = bspe_chan_open(a.ep, 1, 1, 0, nullptr);
    ASSERT_EQ(send(a, c, 2500, 3), 0);
    ASSERT_EQ(wire.size(), 3u);
    for (auto &p : wire) {
        EXPECT_EQ(p.flags() & (BSPE_F_AUTH | BSPE_F_CSUM), BSPE_F_AUTH);
        EXPECT_EQ(ntohl(p.hdr()->src_inc), 100u);
        EXPECT_EQ(ntohl(p.hdr()->dst_inc), 0u);  // a has not heard from b yet
        EXPECT_TRUE(bspe_mac_ok(kKey, p.bytes.data(), static_cast<uint32_t>(p.bytes.size())));
    }
    settle(a, b);
    ASSERT_EQ(b.delivered.size(), 1u);
    EXPECT_EQ(b.delivered[0], *keep[0]);
    int cb = bspe_chan_find(b.ep, 0, 1);
    ASSERT_GE(cb, 0);
    ASSERT_EQ(send(b, cb, 10, 9), 0);
    Pkt reply = take(b, BSPE_T_DATA);
    EXPECT_EQ(ntohl(reply.hdr()->dst_inc), 100u);  // b learned a's incarnation
    EXPECT_EQ(a.stats().drops[BSPE_DROP_AUTH] + b.stats().drops[BSPE_DROP_AUTH], 0u);
}

// A forged packet (a valid one with one bit changed anywhere, MAC kept) is dropped as auth
// before anything else, changing nothing; so is one without a MAC or under another key.
TEST_F(Trust, ForgedMissingOrWronglyKeyedMacIsRefused) {
    a.init(0, 100, kAuth, kKey, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    int c = bspe_chan_open(a.ep, 1, 1, 0, nullptr);
    ASSERT_EQ(send(a, c, 1500, 3), 0);
    Pkt first = take(a, BSPE_T_DATA);
    ASSERT_EQ(bspe_rx(b.ep, 0, first.bytes.data(), static_cast<uint32_t>(first.bytes.size()), 10),
              0);
    Pkt second = take(a, BSPE_T_DATA);
    for (size_t byte = 0; byte < second.bytes.size(); byte += 3) {
        if (byte == offsetof(bspe_hdr, csum) || byte == offsetof(bspe_hdr, csum) + 1)
            continue;  // outside the MAC by definition; covered below
        Pkt f = second;
        f.bytes[byte] ^= 0x10;
        if (byte >= 4 || byte == 2 || byte == 3)  // version/type edits fail their own checks
        {
            SCOPED_TRACE("byte " + std::to_string(byte));
            refused(b, f, -EACCES, BSPE_DROP_AUTH);
        }
    }
    Pkt csum = second;
    csum.hdr()->csum = htons(0x1234);  // not covered by the MAC: must be zero with AUTH
    refused(b, csum, -EBADMSG, BSPE_DROP_MALFORMED);
    csum.hdr()->flags = htons(ntohs(csum.hdr()->flags) | BSPE_F_CSUM);
    bspe_seal_key(kKey, csum.bytes.data(), csum.bytes.data() + BSPE_HDR_LEN,
                  static_cast<uint32_t>(csum.bytes.size() - BSPE_HDR_LEN));
    refused(b, csum, -EBADMSG, BSPE_DROP_FLAGS);  // sealed, but AUTH with CSUM
    Pkt nomac = second;
    nomac.hdr()->flags = htons(ntohs(nomac.hdr()->flags) & ~BSPE_F_AUTH);
    nomac.hdr()->mac = 0;
    refused(b, nomac, -EACCES, BSPE_DROP_AUTH);
    Pkt other = second;
    bspe_seal_key(kOtherKey, other.bytes.data(), other.bytes.data() + BSPE_HDR_LEN,
                  static_cast<uint32_t>(other.bytes.size() - BSPE_HDR_LEN));
    refused(b, other, -EACCES, BSPE_DROP_AUTH);
    // the genuine packet still goes through and completes the message
    ASSERT_EQ(bspe_rx(b.ep, 0, second.bytes.data(), static_cast<uint32_t>(second.bytes.size()), 10),
              0);
    ASSERT_EQ(b.delivered.size(), 1u);
    EXPECT_EQ(b.delivered[0], *keep[0]);
}

// Mixed configurations never talk: a plain endpoint's packets are refused by an
// authenticated one, and an authenticated endpoint's packets by a plain one (mismatch).
TEST_F(Trust, ConfigurationMismatchIsRefusedBothWays) {
    a.init(0, 100, kPlain, nullptr, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    ASSERT_EQ(send(a, bspe_chan_open(a.ep, 1, 1, 0, nullptr), 10, 1), 0);
    refused(b, take(a, BSPE_T_DATA), -EACCES, BSPE_DROP_AUTH);
    ASSERT_EQ(send(b, bspe_chan_open(b.ep, 0, 1, 0, nullptr), 10, 2), 0);
    refused(a, take(b, BSPE_T_DATA), -EACCES, BSPE_DROP_AUTH);
    EXPECT_TRUE(a.delivered.empty());
    EXPECT_TRUE(b.delivered.empty());
}

// Replays of genuine packets change nothing that matters: a replayed DATA is a counted
// duplicate, never delivered twice; a replayed old ACK resends and settles nothing.
TEST_F(Trust, ReplayedDataAndAckAreHarmless) {
    a.init(0, 100, kAuth, kKey, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    int c = bspe_chan_open(a.ep, 1, 1, 0, nullptr);
    ASSERT_EQ(send(a, c, 100, 1), 0);
    Pkt data = wire.front();
    settle(a, b);
    ASSERT_EQ(b.delivered.size(), 1u);
    EXPECT_EQ(bspe_rx(b.ep, 0, data.bytes.data(), static_cast<uint32_t>(data.bytes.size()), 20),
              -EALREADY);
    EXPECT_EQ(b.delivered.size(), 1u);
    EXPECT_EQ(b.stats().drops[BSPE_DROP_DUP], 1u);
    // an ACK of b acknowledging message 0, replayed after message 1 is outstanding
    bspe_timer(b.ep, 10 * kMs);
    int cb = bspe_chan_find(b.ep, 0, 1);
    ASSERT_EQ(send(b, cb, 10, 2), 0);
    Pkt back = take(b, BSPE_T_DATA);
    ASSERT_EQ(bspe_rx(a.ep, 0, back.bytes.data(), static_cast<uint32_t>(back.bytes.size()), 30), 0);
    ASSERT_EQ(send(a, c, 100, 3), 0);
    wire.clear();  // message 1's packet is lost
    uint64_t tx = a.stats().data_tx;
    auto before = a.state();
    ASSERT_EQ(bspe_rx(a.ep, 0, back.bytes.data(), static_cast<uint32_t>(back.bytes.size()), 40),
              -EALREADY);
    EXPECT_EQ(a.stats().data_tx, tx);
    EXPECT_EQ(a.completed.size(), 1u);  // message 0 only: message 1 is not settled by it
    (void)before;
}

// A CLOSE frees the channel and leaves a tombstone: a late DATA of the closed endpoint is
// dropped as stale (no channel opened, nothing delivered), and a replayed CLOSE cannot
// close the channel to the endpoint's successor.
TEST_F(Trust, TombstoneKeepsLateFramesOfAClosedEndpointOut) {
    a.init(0, 100, kAuth, kKey, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    exchange(a, b, 1);
    int c = bspe_chan_find(a.ep, 1, 1);
    ASSERT_EQ(send(a, c, 100, 2), 0);
    Pkt late = take(a, BSPE_T_DATA);  // delayed in the network
    bspe_close_notify(a.ep, 20);
    Pkt close = take(a, BSPE_T_ACK, BSPE_F_CLOSE);
    ASSERT_EQ(bspe_rx(b.ep, 0, close.bytes.data(), static_cast<uint32_t>(close.bytes.size()), 30),
              0);
    EXPECT_LT(bspe_chan_find(b.ep, 0, 1), 0);
    EXPECT_EQ(b.stats().chan_closes, 1u);
    refused(b, late, -ESTALE, BSPE_DROP_STALE, 40);
    EXPECT_LT(bspe_chan_find(b.ep, 0, 1), 0);
    EXPECT_EQ(b.delivered.size(), 1u);
    a.delivered.clear();
    // the successor of a on the same address talks to b at once
    a.fini();
    End a2;
    a2.init(0, 101, kAuth, kKey, &wire);
    ASSERT_EQ(send(a2, bspe_chan_open(a2.ep, 1, 1, 0, nullptr), 50, 9), 0);
    Pkt first = take(a2, BSPE_T_DATA);
    ASSERT_EQ(bspe_rx(b.ep, 0, first.bytes.data(), static_cast<uint32_t>(first.bytes.size()), 50),
              0);
    ASSERT_EQ(b.delivered.size(), 2u);
    EXPECT_EQ(b.delivered[1], *keep.back());
    refused(b, close, -ESTALE, BSPE_DROP_STALE, 60);  // the old CLOSE, replayed
    refused(b, late, -ESTALE, BSPE_DROP_STALE, 60);
    EXPECT_GE(bspe_chan_find(b.ep, 0, 1), 0);
    // a channel closed by b itself leaves no tombstone, but the late frame names b's channel
    // (dst_inc), which b no longer holds: it stays out after the TIME-WAIT too (version 3)
    bspe_chan_close(b.ep, bspe_chan_find(b.ep, 0, 1), 70);
    refused(b, late, -ESTALE, BSPE_DROP_STALE, 30 + b.cfg.timewait_ns - 1);
    refused(b, late, -ESTALE, BSPE_DROP_STALE, 30 + b.cfg.timewait_ns);
    EXPECT_LT(bspe_chan_find(b.ep, 0, 1), 0);
}

// Packets for an earlier endpoint on our port (dst_inc of the old one) are dropped: a late
// frame for a closed endpoint is never delivered to a new endpoint on the same port.
TEST_F(Trust, StaleDstIncIsNeverDeliveredToASuccessor) {
    a.init(0, 100, kAuth, kKey, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    exchange(a, b, 1);
    ASSERT_EQ(send(a, bspe_chan_find(a.ep, 1, 1), 100, 2), 0);
    Pkt late = take(a, BSPE_T_DATA);
    EXPECT_EQ(ntohl(late.hdr()->dst_inc), 200u);
    b.fini();
    End b2;
    b2.init(1, 201, kAuth, kKey, &wire);
    refused(b2, late, -ESTALE, BSPE_DROP_STALE);
    EXPECT_TRUE(b2.delivered.empty());
    EXPECT_LT(bspe_chan_find(b2.ep, 0, 1), 0);
}

// Once a channel knows its peer's incarnation, an older one is stale.
TEST_F(Trust, OlderSrcIncIsStale) {
    a.init(0, 100, kAuth, kKey, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    ASSERT_EQ(send(a, bspe_chan_open(a.ep, 1, 1, 0, nullptr), 100, 1), 0);
    settle(a, b);
    End old;
    old.init(0, 99, kAuth, kKey, &wire);  // an earlier endpoint on a's address
    ASSERT_EQ(send(old, bspe_chan_open(old.ep, 1, 1, 0, nullptr), 100, 2), 0);
    refused(b, take(old, BSPE_T_DATA), -ESTALE, BSPE_DROP_STALE);
    // serial arithmetic: 100 - (2^31 - 1) is older than 100 although larger as a number, and
    // an incarnation exactly 2^31 away is neither older nor newer: refused too
    for (uint32_t inc : {100u + 0x80000001u, 100u + 0x80000000u}) {
        End wrapped;
        wrapped.init(0, inc, kAuth, kKey, &wire);
        ASSERT_EQ(send(wrapped, bspe_chan_open(wrapped.ep, 1, 1, 0, nullptr), 100, 3), 0);
        refused(b, take(wrapped, BSPE_T_DATA), -ESTALE, BSPE_DROP_STALE);
    }
    EXPECT_EQ(b.delivered.size(), 1u);
}

// A newer incarnation of the peer resets the channel: b's outstanding messages to the old
// peer complete with -ECONNRESET exactly once, its partial reassembly is aborted, and the
// new peer's message is delivered on the fresh channel.
TEST_F(Trust, NewerSrcIncResetsTheChannel) {
    a.init(0, 100, kAuth, kKey, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    int c = bspe_chan_open(a.ep, 1, 1, 0, nullptr);
    ASSERT_EQ(send(a, c, 100, 1), 0);
    settle(a, b);
    ASSERT_EQ(send(a, c, 3000, 2), 0);  // 3 fragments, only the first arrives
    move(a, b, 20, [](Pkt &p) { return ntohl(p.hdr()->frag_off) == 0; });
    wire.clear();
    int cb = bspe_chan_find(b.ep, 0, 1);
    auto m1 = message(100, 5), m2 = message(2000, 6);
    ASSERT_EQ(bspe_send(b.ep, cb, m1.get(), 100, 0, 20), 0);
    ASSERT_EQ(bspe_send(b.ep, cb, m2.get(), 2000, 0, 20), 0);
    wire.clear();  // lost: a is gone
    EXPECT_EQ(b.aborts, 0);
    End a2;
    a2.init(0, 101, kAuth, kKey, &wire);
    ASSERT_EQ(send(a2, bspe_chan_open(a2.ep, 1, 1, 0, nullptr), 50, 9), 0);
    Pkt first = take(a2, BSPE_T_DATA);
    ASSERT_EQ(bspe_rx(b.ep, 0, first.bytes.data(), static_cast<uint32_t>(first.bytes.size()), 30),
              0);
    EXPECT_EQ(b.completed.size(), 2u);
    EXPECT_EQ(b.completed.at(m1.get()), -ECONNRESET);
    EXPECT_EQ(b.completed.at(m2.get()), -ECONNRESET);
    EXPECT_EQ(b.aborts, 1);
    ASSERT_EQ(b.delivered.size(), 2u);
    EXPECT_EQ(b.delivered[1], *keep.back());
    EXPECT_EQ(bspe_chan_find(b.ep, 0, 1), cb);  // same channel, fresh state
    bspe_stats s = b.stats();
    EXPECT_EQ(s.chan_resets, 1u);
    EXPECT_EQ(s.msgs_failed, 2u);
    EXPECT_EQ(s.msgs_rx, 2u);  // the counters of the old channel stay in the totals
    EXPECT_EQ(b.ep->tab[bspe_chan_find(b.ep, 0, 1)]->peer_inc, 101u);
}

// The rail in the header is a claim; the rail a packet arrives on is a fact.
TEST_F(Trust, HeaderRailMustBeTheArrivalRail) {
    a.init(0, 100, kAuth, kKey, &wire, 2);
    b.init(1, 200, kAuth, kKey, &wire, 2);
    ASSERT_EQ(send(a, bspe_chan_open(a.ep, 1, 1, 0, nullptr), 100, 1), 0);
    Pkt p = take(a, BSPE_T_DATA);
    p.rail = static_cast<uint8_t>(1 - p.rail);
    refused(b, p, -EBADMSG, BSPE_DROP_RAIL);
    p.rail = static_cast<uint8_t>(1 - p.rail);
    EXPECT_EQ(bspe_rx(b.ep, p.rail, p.bytes.data(), static_cast<uint32_t>(p.bytes.size()), 10), 0);
}

// After close_notify the endpoint sends its CLOSEs and nothing more: no DATA, probe, prod or
// ACK, whatever happens to it; bspe_send refuses.
TEST_F(Trust, NothingLeavesAfterCloseNotify) {
    a.init(0, 100, kAuth, kKey, &wire, 2);
    b.init(1, 200, kAuth, kKey, &wire, 2);
    int c = bspe_chan_open(a.ep, 1, 1, 0, nullptr);
    ASSERT_EQ(send(a, c, 100, 1), 0);
    settle(a, b);
    ASSERT_EQ(send(a, c, 5000, 2), 0);  // outstanding, lost
    wire.clear();
    int cb = bspe_chan_find(b.ep, 0, 1);
    ASSERT_EQ(send(b, cb, 3000, 3), 0);  // a will receive part of it
    move(b, a, 20, [](Pkt &p) { return ntohl(p.hdr()->frag_off) == 0; });
    bspe_expect(a.ep, c, 2, 0, 20);
    wire.clear();
    uint64_t x0 = a.xmits;
    bspe_close_notify(a.ep, 30);
    EXPECT_EQ(a.xmits - x0, 2u);  // one CLOSE per live rail
    for (auto &p : wire)
        EXPECT_TRUE(p.type() == BSPE_T_ACK && (p.flags() & BSPE_F_CLOSE));
    wire.clear();
    x0 = a.xmits;
    for (uint64_t t = 40; t < 20 * 1000 * kMs; t += 7 * kMs)
        bspe_timer(a.ep, t);           // probes, prods, acks would all be due
    ASSERT_EQ(send(b, cb, 10, 4), 0);  // more data, a prod and a probe arrive
    bspe_expect(b.ep, cb, 5, 0, 20 * 1000 * kMs);
    bspe_timer(b.ep, 21 * 1000 * kMs);
    bspe_timer(b.ep, 22 * 1000 * kMs);
    move(b, a, 23 * 1000 * kMs);
    bspe_superstep_done(a.ep, 1, 23 * 1000 * kMs);
    bspe_rail_set(a.ep, 1, 1, 0, 23 * 1000 * kMs);
    bspe_rail_set(a.ep, 1, 1, 1, 23 * 1000 * kMs);
    EXPECT_EQ(send(a, c, 10, 5, 23 * 1000 * kMs), -ESHUTDOWN);
    EXPECT_EQ(a.xmits, x0);
    EXPECT_TRUE(wire.empty() ||
                std::all_of(wire.begin(), wire.end(), [](const Pkt &p) { return p.from != 0; }));
}

// A re-group (BSP_GROUP) resets the engine's epoch with the socket's: after 5 supersteps in
// one group, a new member at epoch 0 accepts a's packets; without the reset it drops them all
// as epoch. Former members lose the group flag: their epochs are neither checked nor used to
// settle packets.
TEST_F(Trust, RegroupResetsTheEpochAndFormerMembersLeave) {
    a.init(0, 100, kAuth, kKey, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    End old;
    old.init(2, 300, kAuth, kKey, &wire);
    int c_old = bspe_chan_open(a.ep, 2, 1, BSPE_CHAN_GROUP, nullptr);
    ASSERT_GE(c_old, 0);
    for (uint32_t e = 1; e <= 5; e++)
        bspe_superstep_done(a.ep, e, e);
    ASSERT_EQ(bspe_chan_open(b.ep, 0, 1, BSPE_CHAN_GROUP, nullptr), 0);
    int c = bspe_chan_open(a.ep, 1, 1, BSPE_CHAN_GROUP, nullptr);
    // the socket layer's epoch restarted from 0, the engine's did not: refused as epoch
    ASSERT_EQ(send(a, c, 100, 1), 0);
    refused(b, take(a, BSPE_T_DATA), -EBADMSG, BSPE_DROP_EPOCH);
    // a message to the old member is outstanding across the re-group
    auto m = message(100, 7);
    ASSERT_EQ(bspe_send(a.ep, c_old, m.get(), 100, 0, 6), 0);
    wire.clear();
    bspe_group_reset(a.ep, 7);
    EXPECT_EQ(a.ep->epoch, 0u);
    EXPECT_EQ(a.ep->tab[c_old]->flags & BSPE_CHAN_GROUP, 0);
    EXPECT_EQ(a.ep->tab[c]->flags & BSPE_CHAN_GROUP, 0);
    ASSERT_EQ(bspe_chan_open(a.ep, 1, 1, BSPE_CHAN_GROUP, nullptr), c);
    ASSERT_EQ(send(a, c, 100, 2), 0);
    Pkt p = take(a, BSPE_T_DATA);
    EXPECT_EQ(ntohl(p.hdr()->epoch), 0u);
    EXPECT_EQ(bspe_rx(b.ep, 0, p.bytes.data(), static_cast<uint32_t>(p.bytes.size()), 10), 0);
    EXPECT_EQ(b.stats().data_rx, 1u);  // message 1; message 0 waits for its retransmission
    EXPECT_EQ(b.stats().drops[BSPE_DROP_EPOCH], 1u);
    // the former member is at epoch 9 of its own group: not checked, settles nothing
    bspe_superstep_done(old.ep, 9, 8);
    ASSERT_EQ(send(old, bspe_chan_open(old.ep, 0, 1, 0, nullptr), 10, 3), 0);
    Pkt q = take(old, BSPE_T_DATA);
    EXPECT_EQ(bspe_rx(a.ep, 0, q.bytes.data(), static_cast<uint32_t>(q.bytes.size()), 10), 0);
    EXPECT_EQ(a.stats().drops[BSPE_DROP_EPOCH], 0u);
    // new group: two barriers settle message 1 (sent in it), but neither the old member's
    // message nor message 0 to b, both sent before the re-group
    bspe_superstep_done(a.ep, 1, 11);
    bspe_superstep_done(a.ep, 2, 12);
    EXPECT_EQ(a.completed.count(m.get()), 0u);
    EXPECT_EQ(a.completed.count(keep[0].get()), 0u);
    EXPECT_EQ(a.completed.count(keep[2].get()), 1u);
    EXPECT_EQ(a.stats().acked_implicit, 1u);
}

// Control packets of a sender that has not heard from us (dst_inc 0) are processed without
// their ack fields, a PROD is answered (telling our incarnation), and a CLOSE is honoured
// only by a channel that knows the sender already.
TEST_F(Trust, FirstContactControlPackets) {
    a.init(0, 100, kAuth, kKey, &wire);
    b.init(1, 200, kAuth, kKey, &wire);
    int cb = bspe_chan_open(b.ep, 0, 1, 0, nullptr);
    bspe_expect(b.ep, cb, 1, 0, 0);
    bspe_timer(b.ep, 50 * kMs);  // b prods a, which it never heard from
    Pkt prod = take(b, BSPE_T_PROD);
    EXPECT_EQ(ntohl(prod.hdr()->dst_inc), 0u);
    ASSERT_EQ(bspe_rx(a.ep, 0, prod.bytes.data(), static_cast<uint32_t>(prod.bytes.size()), 60), 0);
    Pkt reply = take(a, BSPE_T_ACK, BSPE_F_REPLY);
    EXPECT_EQ(ntohl(reply.hdr()->dst_inc), 200u);
    // a CLOSE from an endpoint b never heard from (dst_inc 0, channel without incarnation)
    End c;
    c.init(2, 300, kAuth, kKey, &wire);
    ASSERT_GE(bspe_chan_open(c.ep, 1, 1, 0, nullptr), 0);
    int bc = bspe_chan_open(b.ep, 2, 1, 0, nullptr);
    bspe_close_notify(c.ep, 70);
    refused(b, take(c, BSPE_T_ACK, BSPE_F_CLOSE), -ESTALE, BSPE_DROP_STALE);
    EXPECT_EQ(bspe_chan_find(b.ep, 2, 1), bc);
}
