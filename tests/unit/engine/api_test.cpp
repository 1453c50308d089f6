// Engine API contract: configuration, memory sizing, channels, send errors, teardown.
#include <arpa/inet.h>

#include <algorithm>
#include <vector>

#include "engine_test_util.hpp"

using namespace enginetest;

namespace {

struct Recorder {
    std::vector<bspe_xmit> tx;
    std::vector<std::pair<void *, int>> done;
    uint64_t timer = 0;
};

void rec_xmit(void *ctx, const bspe_xmit *x) {
    static_cast<Recorder *>(ctx)->tx.push_back(*x);
}
int rec_rx(void *, const bspe_rx_frag *) {
    return 0;
}
void rec_deliver(void *, const bspe_delivery *) {}
void rec_complete(void *ctx, void *msg, int status) {
    static_cast<Recorder *>(ctx)->done.emplace_back(msg, status);
}
void rec_timer(void *ctx, uint64_t when) {
    static_cast<Recorder *>(ctx)->timer = when;
}

const bspe_ops kOps = {rec_xmit, rec_rx,          rec_deliver,    nullptr, rec_complete, rec_timer,
                       nullptr,  heap_chan_alloc, heap_chan_free, nullptr, nullptr};

struct Ep {
    explicit Ep(const bspe_cfg &c) : mem(bspe_mem_size(&c) / 8 + 1) {
        ep = bspe_init(mem.data(), mem.size() * 8, &c, &kOps, &rec);
    }
    ~Ep() {
        if (ep)
            bspe_fini(ep);  // frees the channels still open
    }
    Ep(const Ep &) = delete;
    Ep &operator=(const Ep &) = delete;
    std::vector<uint64_t> mem;
    Recorder rec;
    bspe_ep *ep;
};

}  // namespace

TEST(Api, ConfigValidation) {
    bspe_cfg c = test_cfg();
    EXPECT_EQ(bspe_cfg_check(&c), 0);
    EXPECT_GT(bspe_mem_size(&c), 0u);
    bspe_cfg bad = c;
    bad.nrails = 0;
    EXPECT_EQ(bspe_cfg_check(&bad), -EINVAL);
    EXPECT_EQ(bspe_mem_size(&bad), 0u);
    bad = c;
    bad.nrails = BSPE_MAX_RAILS + 1;
    EXPECT_EQ(bspe_cfg_check(&bad), -EINVAL);
    bad = c;
    bad.snd_wnd = BSPE_MAX_WND + 1;
    EXPECT_EQ(bspe_cfg_check(&bad), -EINVAL);
    bad = c;
    bad.msg_wnd = 0;
    EXPECT_EQ(bspe_cfg_check(&bad), -EINVAL);
    bad = c;
    bad.max_msg = 1u << 31;  // more than BSPE_MAX_FRAGS fragments
    EXPECT_EQ(bspe_cfg_check(&bad), -EINVAL);
    bad = c;
    bad.rtt_min_ns = bad.rtt_max_ns + 1;
    EXPECT_EQ(bspe_cfg_check(&bad), -EINVAL);
}

TEST(Api, InitRefusesShortOrMisalignedMemory) {
    bspe_cfg c = test_cfg();
    size_t sz = bspe_mem_size(&c);
    std::vector<uint64_t> mem(sz / 8 + 2);
    Recorder r;
    EXPECT_EQ(bspe_init(mem.data(), sz - 1, &c, &kOps, &r), nullptr);
    EXPECT_EQ(bspe_init(reinterpret_cast<char *>(mem.data()) + 4, sz, &c, &kOps, &r), nullptr);
    bspe_ops no_xmit = kOps;
    no_xmit.xmit = nullptr;
    EXPECT_EQ(bspe_init(mem.data(), sz, &c, &no_xmit, &r), nullptr);
    EXPECT_NE(bspe_init(mem.data(), sz, &c, &kOps, &r), nullptr);
}

TEST(Api, MemoryGrowsWithLimitsOnly) {
    bspe_cfg c = test_cfg();
    size_t base = bspe_mem_size(&c);
    c.max_chans *= 2;
    EXPECT_GT(bspe_mem_size(&c), base);
    EXPECT_LT(bspe_mem_size(&c), 2 * base + 4096);
}

TEST(Api, Channels) {
    bspe_cfg c = test_cfg();
    c.max_chans = 2;
    c.node = 5;
    c.port = 9;
    Ep e(c);
    ASSERT_NE(e.ep, nullptr);
    EXPECT_EQ(bspe_chan_open(e.ep, 5, 9, 0, nullptr), -EINVAL);  // ourselves
    EXPECT_EQ(bspe_chan_open(e.ep, 1, 1, 0x80, nullptr), -EINVAL);
    int a = bspe_chan_open(e.ep, 1, 1, BSPE_CHAN_GROUP, nullptr);
    int b = bspe_chan_open(e.ep, 2, 1, 0, nullptr);
    EXPECT_EQ(a, 0);
    EXPECT_EQ(b, 1);
    EXPECT_EQ(bspe_chan_open(e.ep, 1, 1, 0, nullptr), a);  // existing
    EXPECT_EQ(bspe_chan_open(e.ep, 3, 1, 0, nullptr), -ENOSPC);
    EXPECT_EQ(bspe_chan_find(e.ep, 2, 1), b);
    EXPECT_EQ(bspe_chan_find(e.ep, 2, 2), -ENOENT);
    EXPECT_EQ(bspe_chan_close(e.ep, b, 0), 0);
    EXPECT_EQ(bspe_chan_close(e.ep, b, 0), -EINVAL);
    EXPECT_EQ(bspe_chan_find(e.ep, 2, 1), -ENOENT);
    EXPECT_EQ(bspe_chan_open(e.ep, 3, 1, 0, nullptr), 1);
}

TEST(Api, SendErrorsAndWindow) {
    bspe_cfg c = test_cfg();
    c.msg_wnd = 4;
    Ep e(c);
    int ch = bspe_chan_open(e.ep, 1, 1, 0, nullptr);
    int tag[8];
    EXPECT_EQ(bspe_send(e.ep, 7, &tag[0], 10, 0, 0), -EINVAL);
    EXPECT_EQ(bspe_send(e.ep, ch, &tag[0], 10, 0x100, 0), -EINVAL);
    EXPECT_EQ(bspe_send(e.ep, ch, &tag[0], c.max_msg + 1, 0, 0), -EMSGSIZE);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(bspe_send(e.ep, ch, &tag[i], 2500, 0, 0), 0);
    EXPECT_EQ(bspe_send(e.ep, ch, &tag[4], 10, 0, 0), -EAGAIN);
    // 4 messages of 3 fragments each went out at once, in order, with increasing seq
    ASSERT_EQ(e.rec.tx.size(), 12u);
    for (size_t i = 0; i < e.rec.tx.size(); i++) {
        const auto *h = reinterpret_cast<const bspe_hdr *>(e.rec.tx[i].hdr);
        EXPECT_EQ(ntohl(h->seq), i);
        EXPECT_EQ(ntohl(h->msg_id), i / 3);
        EXPECT_EQ(e.rec.tx[i].off, (i % 3) * 1000);
        EXPECT_EQ(e.rec.tx[i].len, i % 3 == 2 ? 500u : 1000u);
        EXPECT_EQ(e.rec.tx[i].msg, &tag[i / 3]);
    }
    // teardown completes every message once with -ECONNRESET
    bspe_fini(e.ep);
    ASSERT_EQ(e.rec.done.size(), 4u);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(e.rec.done[i], std::make_pair(static_cast<void *>(&tag[i]), -ECONNRESET));
}

TEST(Api, EmptyMessageIsOnePacket) {
    Ep e(test_cfg());
    int ch = bspe_chan_open(e.ep, 1, 1, 0, nullptr);
    int tag;
    ASSERT_EQ(bspe_send(e.ep, ch, &tag, 0, 0, 0), 0);
    ASSERT_EQ(e.rec.tx.size(), 1u);
    const auto *h = reinterpret_cast<const bspe_hdr *>(e.rec.tx[0].hdr);
    EXPECT_EQ(ntohs(h->payload_len), 0);
    EXPECT_EQ(ntohl(h->msg_len), 0u);
}

TEST(Api, DropNames) {
    EXPECT_STREQ(bspe_drop_name(BSPE_DROP_TRUNCATED), "truncated");
    EXPECT_STREQ(bspe_drop_name(BSPE_DROP_DUP), "dup");
    EXPECT_STREQ(bspe_drop_name(BSPE_DROP_MAX), "unknown");
}

// Pacing across channels, with the timer firing late (as a busy host does): channel A waits
// for tokens; channel B's send comes once tokens are back. Paced packets leave in submission
// order, so B's send releases A's packet, and B's must still be released by the timer. (A
// packet sent by one channel used to clear the pending wake-up of another, leaving it queued
// with nothing outstanding and no timer: a BSPlib job hung in a barrier.)
TEST(Api, PacingWakesEveryBlockedChannelAfterALateTimer) {
    bspe_cfg c = test_cfg();
    Ep e(c);
    ASSERT_NE(e.ep, nullptr);
    int a = bspe_chan_open(e.ep, 2, 7, 0, nullptr);
    int b = bspe_chan_open(e.ep, 3, 7, 0, nullptr);
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    const uint64_t rate = 1000000;  // one 1056-byte packet per 1.056 ms
    bspe_set_pacing(e.ep, rate, 0);
    char ma[100], mb[100];
    ASSERT_EQ(bspe_send(e.ep, a, ma, sizeof ma, 0, 0), 0);
    EXPECT_TRUE(e.rec.tx.empty());
    const uint64_t t = e.rec.timer;
    ASSERT_GT(t, 0u);
    // the timer is late; meanwhile B sends, which sends A's older packet with the token
    ASSERT_EQ(bspe_send(e.ep, b, mb, sizeof mb, 0, t + 10 * kUs), 0);
    ASSERT_EQ(e.rec.tx.size(), 1u);
    EXPECT_EQ(e.rec.tx[0].node, 2u);
    // from now on only the timer drives the endpoint
    uint64_t now = t + 20 * kUs;
    for (int i = 0; i < 100 && e.rec.tx.size() < 2; i++) {
        if (!e.rec.timer)
            break;
        now = std::max(now, e.rec.timer);
        e.rec.timer = 0;
        bspe_timer(e.ep, now);
    }
    ASSERT_EQ(e.rec.tx.size(), 2u) << "channel B stranded";
    EXPECT_EQ(e.rec.tx[1].node, 3u);
    // B left when the tokens allowed: A's 156-byte packet left 910 of the 1066 accumulated,
    // and a full packet (1056) needs 146 us more
    EXPECT_GE(now, t + 155 * kUs);
    bspe_fini(e.ep);
}
