// Idle channel eviction (Documentation/protocol.rst "Idle channel eviction"): the EVICT
// handshake, its losses, a retransmission and a new message racing it, and a server that
// talks to many peers in turn holding channels for the active ones only. Every message is
// delivered exactly once with its bytes intact; counters are exact.
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

struct Pkt {
    uint32_t from, to;
    uint8_t rail;
    std::vector<uint8_t> bytes;
    bspe_hdr *hdr() { return reinterpret_cast<bspe_hdr *>(bytes.data()); }
    uint8_t type() const { return bytes[1]; }
    uint16_t flags() const { return static_cast<uint16_t>(bytes[2] << 8 | bytes[3]); }
};

struct Net;

// One endpoint on node @id, port 1, with its own timer.
struct End {
    uint32_t id = 0;
    bspe_cfg cfg{};
    std::vector<uint64_t> mem;
    bspe_ep *ep = nullptr;
    Net *net = nullptr;
    uint64_t timer_at = 0;
    std::map<void *, int> completed;
    std::vector<std::vector<uint8_t>> delivered;
    std::map<std::pair<int, uint32_t>, std::vector<uint8_t>> slots;

    static void cb_xmit(void *ctx, const bspe_xmit *x);
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
        static_cast<End *>(ctx)->slots.erase({chan, slot});
    }
    static void cb_complete(void *ctx, void *msg, int status) {
        auto *e = static_cast<End *>(ctx);
        EXPECT_EQ(e->completed.count(msg), 0u) << "completed twice";
        e->completed[msg] = status;
    }
    static void cb_timer(void *ctx, uint64_t when) { static_cast<End *>(ctx)->timer_at = when; }

    End() = default;
    End(const End &) = delete;
    End &operator=(const End &) = delete;
    ~End() {
        if (ep)
            bspe_fini(ep);
    }

    void init(uint32_t node, uint32_t inc, Net *n, uint64_t evict_ns) {
        static const bspe_ops ops = {cb_xmit,        cb_rx,    cb_deliver, cb_abort,
                                     cb_complete,    cb_timer, nullptr,    heap_chan_alloc,
                                     heap_chan_free, nullptr,  nullptr};
        id = node;
        net = n;
        cfg = test_cfg();
        cfg.node = node;
        cfg.port = 1;
        cfg.incarnation = inc;
        cfg.flags = BSPE_CFG_CSUM | BSPE_CFG_AUTO_OPEN;
        cfg.evict_ns = evict_ns;
        mem.assign(bspe_mem_size(&cfg) / 8 + 1, 0);
        ep = bspe_init(mem.data(), mem.size() * 8, &cfg, &ops, this);
        ASSERT_NE(ep, nullptr);
    }

    bspe_stats stats() const {
        bspe_stats s;
        bspe_stats_get(ep, -1, -1, &s);
        return s;
    }
    uint64_t drops() const {
        bspe_stats s = stats();
        uint64_t n = 0;
        for (uint64_t d : s.drops)
            n += d;
        return n;
    }
};

// The wire between the endpoints: packets in order, a filter that may lose them, a clock.
struct Net {
    std::map<uint32_t, End *> ends;
    std::deque<Pkt> wire;
    std::function<bool(const Pkt &)> lose;
    std::vector<std::shared_ptr<std::vector<uint8_t>>> keep;
    uint64_t now = 1;
    uint64_t lost = 0;

    void add(End &e) { ends[e.id] = &e; }

    // Delivers what is on the wire (and what that provokes), then fires due timers.
    void step() {
        for (int i = 0; i < 1000 && !wire.empty(); i++) {
            Pkt p = std::move(wire.front());
            wire.pop_front();
            if (lose && lose(p)) {
                lost++;
                continue;
            }
            auto it = ends.find(p.to);
            if (it != ends.end())
                bspe_rx(it->second->ep, p.rail, p.bytes.data(),
                        static_cast<uint32_t>(p.bytes.size()), now);
        }
        for (auto &[id, e] : ends)
            if (e->timer_at && e->timer_at <= now) {
                e->timer_at = 0;
                bspe_timer(e->ep, now);
            }
    }

    // Runs until @t, one millisecond at a time.
    void run(uint64_t t) {
        while (now < t) {
            step();
            step();
            now = std::min(t, now + kMs);
        }
        step();
        step();
    }

    std::shared_ptr<std::vector<uint8_t>> message(size_t n, uint8_t seed) {
        auto m = std::make_shared<std::vector<uint8_t>>(n);
        for (size_t i = 0; i < n; i++)
            (*m)[i] = static_cast<uint8_t>(seed + i * 7);
        keep.push_back(m);
        return m;
    }

    // @from sends a message of @n bytes to @to; returns bspe_send's result.
    int send(End &from, End &to, size_t n, uint8_t seed) {
        int c = bspe_chan_find(from.ep, to.id, 1);
        if (c < 0)
            c = bspe_chan_open(from.ep, to.id, 1, 0, nullptr);
        if (c < 0)
            return c;
        auto m = message(n, seed);
        return bspe_send(from.ep, c, m.get(), static_cast<uint32_t>(n), 0, now);
    }

    // Runs one millisecond at a time until @done (at most @limit).
    bool until(const std::function<bool()> &done, uint64_t limit = 2000 * kMs) {
        uint64_t end = now + limit;
        while (!done() && now < end) {
            now += kMs;
            step();
        }
        return done();
    }

    // Takes the first queued packet of @from with @flag set (removed from the wire).
    bool take(uint32_t from, uint16_t flag, Pkt *out = nullptr) {
        for (auto it = wire.begin(); it != wire.end(); ++it)
            if (it->from == from && (it->flags() & flag)) {
                if (out)
                    *out = *it;
                wire.erase(it);
                return true;
            }
        return false;
    }
    size_t count(uint32_t from, uint8_t type, uint16_t flag = 0) const {
        size_t n = 0;
        for (const auto &p : wire)
            if (p.from == from && p.type() == type && (!flag || (p.flags() & flag)))
                n++;
        return n;
    }
};

void End::cb_xmit(void *ctx, const bspe_xmit *x) {
    auto *e = static_cast<End *>(ctx);
    Pkt p{e->id, x->node, x->rail, std::vector<uint8_t>(BSPE_HDR_LEN + x->len)};
    std::memcpy(p.bytes.data(), x->hdr, BSPE_HDR_LEN);
    if (x->len)
        std::memcpy(p.bytes.data() + BSPE_HDR_LEN,
                    static_cast<const std::vector<uint8_t> *>(x->msg)->data() + x->off, x->len);
    bspe_seal(e->ep, p.bytes.data(), p.bytes.data() + BSPE_HDR_LEN, x->len);
    e->net->wire.push_back(std::move(p));
}

// Longer than test_cfg's rto_min (50 ms): the last message of an exchange is settled by
// the sender's timeout probe (the receiver acknowledges only every n/(2p) packets), so a
// channel becomes idle one probe after the exchange.
constexpr uint64_t kEvict = 100 * kMs;

class Evict : public ::testing::Test {
  protected:
    void SetUp() override {
        a.init(1, 100, &net, kEvict);
        b.init(2, 200, &net, kEvict);
        net.add(a);
        net.add(b);
    }

    // a and b exchange one message each way and settle everything.
    void exchange(uint8_t seed) {
        ASSERT_EQ(net.send(a, b, 2500, seed), 0);
        net.run(net.now + kMs);
        ASSERT_EQ(net.send(b, a, 700, static_cast<uint8_t>(seed + 1)), 0);
        net.run(net.now + kMs);
    }

    void expect_all_completed(const End &e, size_t n) {
        EXPECT_EQ(e.completed.size(), n);
        for (const auto &[m, st] : e.completed)
            EXPECT_EQ(st, 0);
    }

    Net net;
    End a, b;
};

}  // namespace

// Both sides idle: a's EVICT is answered, both free the channel; the next message opens a
// channel with a newer incarnation, numbered from zero, and is delivered once.
TEST_F(Evict, IdleChannelIsEvictedByHandshake) {
    exchange(1);
    ASSERT_EQ(bspe_chan_count(a.ep), 1u);
    ASSERT_EQ(bspe_chan_count(b.ep), 1u);
    // nothing happens before the idle time is up
    net.run(net.now + kEvict / 2);
    EXPECT_EQ(bspe_chan_count(a.ep), 1u);
    net.run(net.now + 2 * kEvict);
    EXPECT_EQ(bspe_chan_count(a.ep), 0u);
    EXPECT_EQ(bspe_chan_count(b.ep), 0u);
    bspe_stats sa = a.stats(), sb = b.stats();
    // both timers expired within the same millisecond: each asked, one asked first
    EXPECT_EQ(sa.chans_evicted + sb.chans_evicted, 2u);
    EXPECT_EQ(sa.chans_evicted, 1u);
    EXPECT_EQ(sb.chans_evicted, 1u);
    // both idle times ended in the same millisecond: the EVICTs crossed, each side agreed
    // to the other's and freed, so each answer found its channel gone (stale)
    EXPECT_EQ(sa.evicts_tx, 1u);
    EXPECT_EQ(sb.evicts_tx, 1u);
    EXPECT_EQ(sa.drops[BSPE_DROP_STALE], 1u);
    EXPECT_EQ(sb.drops[BSPE_DROP_STALE], 1u);
    EXPECT_EQ(a.drops() + b.drops(), 2u);
    ASSERT_EQ(b.delivered.size(), 1u);
    ASSERT_EQ(a.delivered.size(), 1u);
    // a new message: a fresh channel, newer incarnation, msg_id 0
    ASSERT_EQ(net.send(a, b, 1500, 9), 0);
    ASSERT_FALSE(net.wire.empty());
    EXPECT_TRUE(bspe_inc_newer(ntohl(net.wire.front().hdr()->src_inc), 100));
    EXPECT_EQ(ntohl(net.wire.front().hdr()->msg_id), 0u);
    EXPECT_EQ(ntohl(net.wire.front().hdr()->dst_inc), 0u);
    net.run(net.now + kMs);
    ASSERT_EQ(b.delivered.size(), 2u);
    EXPECT_EQ(b.delivered[0], *net.keep[0]);
    EXPECT_EQ(b.delivered[1], *net.keep[2]);
    EXPECT_EQ(a.delivered[0], *net.keep[1]);
    net.run(net.now + kEvict);
    expect_all_completed(a, 2);
    expect_all_completed(b, 1);
    EXPECT_EQ(a.drops() + b.drops(), 2u);
}

// Only a evicts (b's idle time is longer): the EVICT is lost once, retried after a timeout
// and answered; exact counters on both sides.
TEST_F(Evict, LostEvictIsRetried) {
    b.cfg.evict_ns = 0;
    b.ep->cfg.evict_ns = 0;
    exchange(1);
    int lost = 0;
    net.lose = [&](const Pkt &p) {
        return p.from == a.id && (p.flags() & BSPE_F_EVICT) && lost++ == 0;
    };
    ASSERT_TRUE(net.until([&] { return net.lost == 1; }));
    EXPECT_EQ(bspe_chan_count(a.ep), 1u);  // waiting for the answer
    EXPECT_TRUE(a.ep->tab[bspe_chan_find(a.ep, b.id, 1)]->evicting);
    EXPECT_EQ(bspe_chan_count(b.ep), 1u);
    net.run(net.now + 60 * kMs);  // one rto later: asked again
    EXPECT_EQ(bspe_chan_count(a.ep), 0u);
    EXPECT_EQ(bspe_chan_count(b.ep), 0u);
    EXPECT_EQ(a.stats().evicts_tx, 2u);
    EXPECT_EQ(a.stats().chans_evicted, 1u);
    EXPECT_EQ(b.stats().chans_evicted, 1u);
    EXPECT_EQ(b.stats().evicts_gone, 0u);
    EXPECT_EQ(a.drops() + b.drops(), 0u);
}

// b agrees and frees its side, the answer is lost: a asks again, b no longer holds the
// channel and says so (evicts_gone); a frees. Nothing is dropped but the lost frame.
TEST_F(Evict, LostAnswerIsGivenAgainWithoutTheChannel) {
    b.cfg.evict_ns = 0;
    b.ep->cfg.evict_ns = 0;
    exchange(1);
    int lost = 0;
    net.lose = [&](const Pkt &p) {
        return p.from == b.id && (p.flags() & BSPE_F_EVICT) && lost++ == 0;
    };
    ASSERT_TRUE(net.until([&] { return net.lost == 1; }));
    net.step();
    EXPECT_EQ(bspe_chan_count(a.ep), 1u);
    EXPECT_EQ(bspe_chan_count(b.ep), 0u);
    net.run(net.now + 60 * kMs);
    EXPECT_EQ(bspe_chan_count(a.ep), 0u);
    EXPECT_EQ(a.stats().evicts_tx, 2u);
    EXPECT_EQ(b.stats().evicts_gone, 1u);
    EXPECT_EQ(a.stats().chans_evicted, 1u);
    EXPECT_EQ(b.stats().chans_evicted, 1u);
    EXPECT_EQ(a.drops() + b.drops(), 0u);
}

// b agreed and freed, the answer is lost, and b sends a new message before a asks again:
// its newer incarnation tells a that the channel was released; a starts afresh, delivers
// the message once, and a's later retry-free state has no evicting channel left.
TEST_F(Evict, NewMessageFromPeerAfterALostAnswer) {
    b.cfg.evict_ns = 0;
    b.ep->cfg.evict_ns = 0;
    exchange(1);
    int lost = 0;
    net.lose = [&](const Pkt &p) {
        return p.from == b.id && (p.flags() & BSPE_F_EVICT) && lost++ == 0;
    };
    ASSERT_TRUE(net.until([&] { return net.lost == 1; }));
    ASSERT_EQ(bspe_chan_count(b.ep), 0u);
    ASSERT_EQ(net.send(b, a, 3000, 40), 0);
    net.run(net.now + 2 * kMs);
    ASSERT_EQ(a.delivered.size(), 2u);
    EXPECT_EQ(a.delivered[1], *net.keep[2]);
    int c = bspe_chan_find(a.ep, b.id, 1);
    ASSERT_GE(c, 0);
    EXPECT_FALSE(a.ep->tab[c]->evicting);
    net.run(net.now + 3 * kEvict);
    expect_all_completed(b, 2);
    EXPECT_EQ(a.delivered.size(), 2u);
    EXPECT_EQ(b.delivered.size(), 1u);
    EXPECT_EQ(a.drops() + b.drops(), 0u);
}

// A retransmission racing an eviction: b delivered a's message but every acknowledgement
// to a is lost, so a still holds it. b's EVICT is refused (KEEP, a has it unsettled); a's
// timeout probe settles it; only then do the channels go. Delivered exactly once.
TEST_F(Evict, UnsettledMessageRefusesTheEviction) {
    a.cfg.evict_ns = 0;
    a.ep->cfg.evict_ns = 0;
    b.ep->cfg.evict_ns = 30 * kMs;  // before a's first probe (50 ms)
    bool ack_lost = true;
    net.lose = [&](const Pkt &p) {
        return ack_lost && p.from == b.id && !(p.flags() & BSPE_F_EVICT);
    };
    ASSERT_EQ(net.send(a, b, 4000, 3), 0);
    net.run(net.now + 40 * kMs);
    ASSERT_EQ(b.delivered.size(), 1u);
    EXPECT_EQ(b.stats().evicts_tx, 1u);
    EXPECT_EQ(b.stats().evicts_kept, 1u);  // a refused: it holds the message
    EXPECT_EQ(bspe_chan_count(b.ep), 1u);
    EXPECT_EQ(a.completed.size(), 0u);
    ack_lost = false;
    net.run(net.now + 400 * kMs);
    expect_all_completed(a, 1);
    EXPECT_EQ(b.delivered.size(), 1u);
    EXPECT_EQ(b.delivered[0], *net.keep[0]);
    EXPECT_EQ(bspe_chan_count(a.ep), 0u);
    EXPECT_EQ(bspe_chan_count(b.ep), 0u);
    EXPECT_EQ(b.stats().chans_evicted, 1u);
    EXPECT_EQ(a.stats().chans_evicted, 1u);
}

// A channel that restarted after its messages failed (Documentation/protocol.rst, "Rail
// failure and recovery") is not idle while it announces the restart to a reachable peer:
// b holds a second message whole behind the failed first one. a's first announcements are
// lost and its idle time runs out meanwhile; before, a freed the channel at once (it had
// forgotten b's incarnation) and b learned of it only if it happened to prod. Now the next
// announcement gets through, b resets and delivers the message, and only then does a
// evict the channel.
TEST_F(Evict, RestartIsAnnouncedBeforeTheChannelIsEvicted) {
    b.cfg.evict_ns = 0;
    b.ep->cfg.evict_ns = 0;
    a.ep->cfg.unreach_ns = 500 * kMs;
    uint64_t restarted = 0;
    net.lose = [&](const Pkt &p) {
        if (p.from != a.id)
            return false;
        const auto *h = reinterpret_cast<const bspe_hdr *>(p.bytes.data());
        if (p.type() == BSPE_T_DATA && ntohl(h->msg_id) == 0 && ntohl(h->frag_off) == 2000)
            return true;  // the first message never arrives whole
        if (!restarted && a.stats().chan_restarts)
            restarted = net.now;
        // the announcements of the first 250 ms, longer than a's idle time (100 ms), are lost
        return restarted && net.now < restarted + 250 * kMs;
    };
    ASSERT_EQ(net.send(a, b, 3000, 1), 0);
    ASSERT_EQ(net.send(a, b, 700, 2), 0);
    ASSERT_TRUE(net.until([&] { return a.completed.size() == 2; }));
    EXPECT_EQ(a.completed.at(net.keep[0].get()), -EHOSTUNREACH);
    EXPECT_EQ(a.stats().chan_restarts, 1u);
    ASSERT_TRUE(b.delivered.empty());
    net.run(net.now + 240 * kMs);
    EXPECT_EQ(bspe_chan_count(a.ep), 1u);
    EXPECT_EQ(a.stats().chans_evicted, 0u);
    EXPECT_TRUE(b.delivered.empty());
    ASSERT_TRUE(net.until([&] { return b.delivered.size() == 1; }, 500 * kMs));
    EXPECT_GE(net.now, restarted + 250 * kMs);
    EXPECT_EQ(b.delivered[0], *net.keep[1]);
    EXPECT_EQ(b.stats().chan_resets, 1u);
    EXPECT_EQ(b.stats().msgs_abandoned, 1u);
    net.run(net.now + 400 * kMs);
    EXPECT_EQ(a.stats().chans_evicted, 1u);
    EXPECT_EQ(bspe_chan_count(a.ep), 0u);
    EXPECT_EQ(b.delivered.size(), 1u);
}

// An eviction racing a new message: a's user sends while a's EVICT is out. The message is
// held (nothing leaves), then goes on the fresh channel once b agreed: msg_id 0, a newer
// incarnation, delivered once.
TEST_F(Evict, NewMessageDuringTheHandshakeIsHeld) {
    b.cfg.evict_ns = 0;
    b.ep->cfg.evict_ns = 0;
    exchange(1);
    // the EVICT is left on the wire when it appears
    ASSERT_TRUE(net.until([&] { return net.count(a.id, BSPE_T_ACK, BSPE_F_EVICT) == 1; }));
    ASSERT_EQ(net.count(a.id, BSPE_T_ACK, BSPE_F_EVICT), 1u);
    ASSERT_EQ(net.send(a, b, 2500, 50), 0);
    EXPECT_EQ(net.count(a.id, BSPE_T_DATA), 0u);  // held
    net.run(net.now + 2 * kMs);
    ASSERT_EQ(b.delivered.size(), 2u);
    EXPECT_EQ(b.delivered[1], *net.keep[2]);
    EXPECT_EQ(a.stats().chans_evicted, 1u);  // renewed in place
    EXPECT_EQ(b.stats().chans_evicted, 1u);
    int c = bspe_chan_find(a.ep, b.id, 1);
    ASSERT_GE(c, 0);
    EXPECT_TRUE(bspe_inc_newer(a.ep->tab[c]->my_inc, 100));
    EXPECT_EQ(a.ep->tab[c]->snd_msg_id, 1u);
    net.run(net.now + kEvict / 2);
    expect_all_completed(a, 2);
    EXPECT_EQ(a.drops() + b.drops(), 0u);
}

// The peer refuses while a holds a message: a resumes on the old channel (message ids go on),
// nothing is lost or doubled.
TEST_F(Evict, RefusedEvictionReleasesTheHeldMessage) {
    b.cfg.evict_ns = 0;
    b.ep->cfg.evict_ns = 0;
    exchange(1);
    ASSERT_TRUE(net.until([&] { return net.count(a.id, BSPE_T_ACK, BSPE_F_EVICT) == 1; }));
    ASSERT_EQ(net.count(a.id, BSPE_T_ACK, BSPE_F_EVICT), 1u);
    ASSERT_EQ(net.send(a, b, 2500, 60), 0);  // held
    // b has sent something a has not acknowledged yet: it refuses
    ASSERT_EQ(net.send(b, a, 100, 61), 0);
    Pkt data;
    ASSERT_TRUE(net.take(b.id, 0xffff, &data) || true);
    net.wire.push_front(data);
    Pkt evict;
    ASSERT_TRUE(net.take(a.id, BSPE_F_EVICT, &evict));
    net.wire.push_front(evict);  // reaches b before b's data reaches a
    net.run(net.now + 2 * kMs);
    EXPECT_EQ(a.stats().evicts_kept, 1u);
    ASSERT_EQ(b.delivered.size(), 2u);
    EXPECT_EQ(b.delivered[1], *net.keep[2]);
    ASSERT_EQ(a.delivered.size(), 2u);
    EXPECT_EQ(a.delivered[1], *net.keep[3]);
    int c = bspe_chan_find(a.ep, b.id, 1);
    ASSERT_GE(c, 0);
    EXPECT_EQ(a.ep->tab[c]->my_inc, 100u);  // the old channel
    EXPECT_EQ(a.ep->tab[c]->snd_msg_id, 2u);
    net.run(net.now + kEvict / 2);
    expect_all_completed(a, 2);
    expect_all_completed(b, 2);
    EXPECT_EQ(a.drops() + b.drops(), 0u);
}

// A late frame of an evicted channel (a retransmission of a's first message, delayed past
// the eviction) is dropped as stale, never delivered again.
TEST_F(Evict, LateFrameOfAnEvictedChannelIsStale) {
    ASSERT_EQ(net.send(a, b, 900, 70), 0);
    Pkt late = net.wire.front();  // first contact: dst_inc 0
    net.run(net.now + kMs);
    ASSERT_EQ(net.send(b, a, 900, 71), 0);
    ASSERT_EQ(net.send(a, b, 900, 72), 0);
    Pkt late2;
    ASSERT_TRUE(net.take(a.id, 0xffff, &late2) || true);
    net.wire.push_front(late2);
    net.run(net.now + kMs);
    net.run(net.now + 3 * kEvict);
    ASSERT_EQ(bspe_chan_count(b.ep), 0u);
    ASSERT_EQ(b.delivered.size(), 2u);
    uint64_t stale = b.stats().drops[BSPE_DROP_STALE];
    bspe_rx(b.ep, 0, late.bytes.data(), static_cast<uint32_t>(late.bytes.size()), net.now);
    bspe_rx(b.ep, 0, late2.bytes.data(), static_cast<uint32_t>(late2.bytes.size()), net.now);
    EXPECT_EQ(b.stats().drops[BSPE_DROP_STALE], stale + 2);
    EXPECT_EQ(b.delivered.size(), 2u);
    EXPECT_EQ(bspe_chan_count(b.ep), 0u);
}

// A server talks to 40 clients in turn, each exchange followed by silence. With eviction it
// holds channels only for the clients of the last idle period; at the end none. With 10%
// of the frames lost too, every message arrives once, intact.
static void many_peers(uint64_t loss_every) {
    Net net;
    End s;
    s.init(1000, 7, &net, kEvict);
    net.add(s);
    std::vector<std::unique_ptr<End>> cl;
    uint64_t n = 0;
    if (loss_every)
        net.lose = [&](const Pkt &) { return ++n % loss_every == 0; };
    uint32_t most = 0;
    const int kClients = 40;
    for (int i = 0; i < kClients; i++) {
        cl.push_back(std::make_unique<End>());
        End &c = *cl.back();
        c.init(static_cast<uint32_t>(i + 1), 100 + static_cast<uint32_t>(i), &net, kEvict);
        net.add(c);
        ASSERT_EQ(net.send(c, s, 3000, static_cast<uint8_t>(i)), 0);
        net.run(net.now + kMs);
        ASSERT_EQ(net.send(s, c, 500, static_cast<uint8_t>(i + 100)), 0);
        for (int t = 0; t < 50; t++) {
            net.run(net.now + kMs);
            most = std::max(most, bspe_chan_count(s.ep));
        }
    }
    net.run(net.now + 1000 * kMs);  // losses recovered by probes, then everything idle
    EXPECT_EQ(bspe_chan_count(s.ep), 0u);
    // a client every 50 ms, 100 ms idle time plus one probe (50 ms) to settle the last
    // message: 3 clients at once (4 allowed); losses add probe back-offs: 6 allowed
    EXPECT_LE(most, loss_every ? 6u : 4u);
    EXPECT_EQ(s.stats().chans_evicted, static_cast<uint64_t>(kClients));
    ASSERT_EQ(s.delivered.size(), static_cast<size_t>(kClients));
    for (int i = 0; i < kClients; i++) {
        End &c = *cl[static_cast<size_t>(i)];
        EXPECT_EQ(bspe_chan_count(c.ep), 0u) << i;
        ASSERT_EQ(c.delivered.size(), 1u) << i;
        EXPECT_EQ(c.delivered[0], *net.keep[static_cast<size_t>(2 * i + 1)]) << i;
        EXPECT_EQ(c.completed.size(), 1u) << i;
        EXPECT_EQ(c.completed.begin()->second, 0) << i;
    }
    // the server got each client's message once (order of arrival = order of the clients)
    for (int i = 0; i < kClients; i++)
        EXPECT_EQ(s.delivered[static_cast<size_t>(i)], *net.keep[static_cast<size_t>(2 * i)]);
    EXPECT_EQ(s.completed.size(), static_cast<size_t>(kClients));
    for (const auto &[m, st] : s.completed)
        EXPECT_EQ(st, 0);
    std::printf(
        "many peers (loss 1/%llu): at most %u of %d channels open at once, %llu "
        "frames lost\n",
        static_cast<unsigned long long>(loss_every), most, kClients,
        static_cast<unsigned long long>(net.lost));
}

TEST(EvictMany, ServerHoldsChannelsForActivePeersOnly) {
    many_peers(0);
}

TEST(EvictMany, ServerHoldsChannelsForActivePeersOnlyUnderLoss) {
    many_peers(10);
}

// Without eviction (evict_ns 0, the default) nothing changes: channels stay.
TEST(EvictMany, OffByDefault) {
    bspe_cfg c;
    bspe_cfg_default(&c);
    EXPECT_EQ(c.evict_ns, 0u);
}
