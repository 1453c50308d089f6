// Hostile input: every header field at extreme values, truncated packets, wrong version.
// Each is refused with the right errno, counted under the right reason, and leaves the
// engine's state (everything but the counters) bit for bit unchanged.
#include <arpa/inet.h>

#include <cstring>
#include <vector>

extern "C" {
#include "bspe_internal.h"
}
#include "engine_test_util.hpp"

using namespace enginetest;

namespace {

constexpr uint32_t kPeerInc = 5;  // incarnation of the hand-built packets' sender

int rx_ok(void *, const bspe_rx_frag *) {
    return 0;
}
void nop_xmit(void *, const bspe_xmit *) {}
void nop_deliver(void *, const bspe_delivery *) {}
void nop_complete(void *, void *, int) {}
void nop_timer(void *, uint64_t) {}
const bspe_ops kOps = {nop_xmit, rx_ok,           nop_deliver,    nullptr, nop_complete, nop_timer,
                       nullptr,  heap_chan_alloc, heap_chan_free, nullptr, nullptr};

class Hostile : public ::testing::Test {
  protected:
    void SetUp() override {
        cfg = test_cfg();
        cfg.node = 1;
        cfg.port = 1;
        cfg.nrails = 2;
        cfg.flags = 0;
        mem.assign(bspe_mem_size(&cfg) / 8 + 1, 0);
        ep = bspe_init(mem.data(), mem.size() * 8, &cfg, &kOps, nullptr);
        ASSERT_NE(ep, nullptr);
        ASSERT_EQ(bspe_chan_open(ep, 0, 1, BSPE_CHAN_GROUP, nullptr), 0);
        // some state: one message received, epoch 1
        bspe_superstep_done(ep, 1, 0);
        auto p = valid();
        ASSERT_EQ(bspe_rx(ep, 0, p.data(), static_cast<uint32_t>(p.size()), 10), 0);
    }

    // A valid DATA packet from (0, 1): message 1, 1500 bytes, first fragment, seq 1, rail 0.
    std::vector<uint8_t> valid(uint32_t msg_id = 0, uint32_t seq = 0) {
        std::vector<uint8_t> p(BSPE_HDR_LEN + 1000, 0xab);
        auto *h = reinterpret_cast<bspe_hdr *>(p.data());
        std::memset(h, 0, sizeof(*h));
        h->version = BSPE_VERSION;
        h->type = BSPE_T_DATA;
        h->src_node = htonl(0);
        h->dst_node = htonl(1);
        h->src_port = htons(1);
        h->dst_port = htons(1);
        h->src_inc = htonl(kPeerInc);
        h->seq = htonl(seq);
        h->epoch = htonl(1);
        h->msg_id = htonl(msg_id);
        h->msg_len = htonl(1500);
        h->frag_unit = htons(1000);
        h->payload_len = htons(1000);
        return p;
    }

    bspe_hdr *hdr(std::vector<uint8_t> &p) { return reinterpret_cast<bspe_hdr *>(p.data()); }

    void TearDown() override {
        if (ep)
            bspe_fini(ep);  // frees the channels
    }

    // Engine memory (fixed part, then every open channel's) with every counter zeroed.
    std::vector<uint64_t> state() {
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

    uint64_t drops(bspe_drop why) {
        bspe_stats s;
        bspe_stats_get(ep, -1, -1, &s);
        return s.drops[why];
    }

    // Feeds p (len bytes), expects errno err and one more drop of reason why, state unchanged.
    void refused(std::vector<uint8_t> p, int err, bspe_drop why, size_t len = SIZE_MAX) {
        auto before = state();
        uint64_t d = drops(why);
        uint32_t n = static_cast<uint32_t>(std::min(len, p.size()));
        EXPECT_EQ(bspe_rx(ep, 0, p.data(), n, 20), err);
        EXPECT_EQ(drops(why), d + 1) << bspe_drop_name(why);
        auto after = state();
        size_t diff = 0;
        while (diff < after.size() && after[diff] == before[diff])
            diff++;
        EXPECT_EQ(diff, after.size()) << "state changed for " << bspe_drop_name(why) << " at byte "
                                      << diff * 8 << " of " << after.size() * 8;
    }

    bspe_cfg cfg;
    std::vector<uint64_t> mem;
    bspe_ep *ep = nullptr;
};

}  // namespace

TEST_F(Hostile, TruncatedPackets) {
    auto p = valid(1, 1);
    for (size_t len = 0; len < BSPE_HDR_LEN; len++)
        refused(p, -EBADMSG, BSPE_DROP_TRUNCATED, len);
    refused(p, -EBADMSG, BSPE_DROP_TRUNCATED, BSPE_HDR_LEN + 999);
    auto q = valid(1, 1);
    hdr(q)->payload_len = htons(0xffff);
    refused(q, -EBADMSG, BSPE_DROP_TRUNCATED);
}

TEST_F(Hostile, WrongVersionAndType) {
    for (uint8_t v : {0, 1, 2, 4, 255}) {
        auto p = valid(1, 1);
        hdr(p)->version = v;
        refused(p, -EPROTONOSUPPORT, BSPE_DROP_VERSION);
    }
    for (uint8_t t : {0, 4, 5, 255}) {
        auto p = valid(1, 1);
        hdr(p)->type = t;
        refused(p, -EBADMSG, BSPE_DROP_TYPE);
    }
}

TEST_F(Hostile, FlagsAddressesRails) {
    auto p = valid(1, 1);
    hdr(p)->flags = htons(0xffff & ~BSPE_F_AUTH);
    refused(p, -EBADMSG, BSPE_DROP_FLAGS);
    p = valid(1, 1);
    hdr(p)->flags = htons(0xffff);  // a MAC this endpoint does not expect comes first
    refused(p, -EACCES, BSPE_DROP_AUTH);
    p = valid(1, 1);
    hdr(p)->flags = htons(BSPE_F_PROBE);  // probe bit on DATA
    refused(p, -EBADMSG, BSPE_DROP_FLAGS);
    p = valid(1, 1);
    hdr(p)->dst_node = htonl(0xffffffff);
    refused(p, -EBADMSG, BSPE_DROP_ADDR);
    p = valid(1, 1);
    hdr(p)->dst_port = htons(0xffff);
    refused(p, -EBADMSG, BSPE_DROP_ADDR);
    p = valid(1, 1);
    hdr(p)->src_node = htonl(0xffffffff);
    refused(p, -ENOENT, BSPE_DROP_NOCHAN);
    p = valid(1, 1);
    hdr(p)->src_port = htons(0xffff);
    refused(p, -ENOENT, BSPE_DROP_NOCHAN);
    p = valid(1, 1);
    hdr(p)->rail = 0xff;
    refused(p, -EBADMSG, BSPE_DROP_RAIL);
    p = valid(1, 1);
    hdr(p)->ack_rail = 2;
    refused(p, -EBADMSG, BSPE_DROP_RAIL);
    p = valid(1, 1);
    hdr(p)->rail = 1;  // a rail that exists, but the packet came on rail 0
    refused(p, -EBADMSG, BSPE_DROP_RAIL);
}

TEST_F(Hostile, SequenceFieldsAtExtremes) {
    auto p = valid(1, 1);
    hdr(p)->seq = htonl(0xffffffff);  // seq - base far beyond any window
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);
    p = valid(1, 1);
    hdr(p)->eoh = htonl(0xffffffff);  // hole longer than any window
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);
    p = valid(1, 1);
    hdr(p)->seq = htonl(4000);  // within the wire bound, beyond our receive window
    hdr(p)->base = htonl(0);
    refused(p, -ENOBUFS, BSPE_DROP_SEQ_WINDOW);
    p = valid(1, 1);  // base far ahead: would make the receiver skip 2^31 numbers
    hdr(p)->seq = htonl(0x7fffffff);
    hdr(p)->base = htonl(0x7ffffff0);
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);
    p = valid(1, 1);  // acknowledges what was never sent: ignored, data still taken
    hdr(p)->ack = htonl(0xfffffff0);
    hdr(p)->eoh = htonl(0xfffffff0);
    EXPECT_EQ(bspe_rx(ep, 0, p.data(), static_cast<uint32_t>(p.size()), 20), 0);
    p = valid(1, 1);
    hdr(p)->epoch = htonl(0xffffffff);
    refused(p, -EBADMSG, BSPE_DROP_EPOCH);
    p = valid(1, 1);
    hdr(p)->epoch = htonl(3);  // ours is 1: a member cannot be at 3
    refused(p, -EBADMSG, BSPE_DROP_EPOCH);
}

TEST_F(Hostile, MessageFieldsAtExtremes) {
    auto p = valid(0x7fffffff, 1);  // far ahead
    refused(p, -ENOBUFS, BSPE_DROP_MSG_WINDOW);
    p = valid(0x80000000, 1);  // far behind: no sender still holds it
    refused(p, -ENOBUFS, BSPE_DROP_MSG_WINDOW);
    p = valid(1, 1);
    hdr(p)->msg_len = htonl(0xffffffff);
    refused(p, -EBADMSG, BSPE_DROP_TOOBIG);
    p = valid(1, 1);
    hdr(p)->frag_off = htonl(0xffffffff);
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);
    p = valid(1, 1);
    hdr(p)->frag_off = htonl(500);  // not a multiple of the unit
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);
    p = valid(1, 1);
    hdr(p)->frag_unit = 0;
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);
    p = valid(1, 1);
    hdr(p)->frag_unit = htons(1);  // 1500 fragments > what the receiver tracks per message
    hdr(p)->payload_len = htons(1);
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);
    p = valid(1, 1);
    hdr(p)->payload_len = htons(999);  // not min(unit, len - off)
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);
    // a fragment of message 0 (being reassembled, 1500 bytes) that claims another length
    p = valid(0, 1);
    hdr(p)->msg_len = htonl(3000);
    hdr(p)->frag_off = htonl(1000);
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);
}

TEST_F(Hostile, ControlPacketsWithDataFields) {
    auto p = valid(1, 1);
    hdr(p)->type = BSPE_T_ACK;
    refused(p, -EBADMSG, BSPE_DROP_MALFORMED);  // carries msg fields and payload
    std::vector<uint8_t> q(BSPE_HDR_LEN, 0);
    auto *h = hdr(q);
    h->version = BSPE_VERSION;
    h->type = BSPE_T_PROD;
    h->dst_node = htonl(1);
    h->dst_port = htons(1);
    h->src_port = htons(1);
    h->src_inc = htonl(kPeerInc);
    h->flags = htons(BSPE_F_PROBE);
    refused(q, -EBADMSG, BSPE_DROP_MALFORMED);
    h->flags = htons(BSPE_F_SYNC);
    refused(q, -EBADMSG, BSPE_DROP_FLAGS);
    h->flags = htons(BSPE_F_WNDREQ);  // a request for the window: DATA only
    refused(q, -EBADMSG, BSPE_DROP_FLAGS);
    h->type = BSPE_T_ACK;
    refused(q, -EBADMSG, BSPE_DROP_FLAGS);
}

TEST_F(Hostile, ChecksumWrongOrMissing) {
    auto p = valid(1, 1);
    hdr(p)->flags = htons(BSPE_F_CSUM);
    bspe_seal(ep, p.data(), p.data() + BSPE_HDR_LEN, 1000);
    p[BSPE_HDR_LEN + 10] ^= 1;
    refused(p, -EBADMSG, BSPE_DROP_CSUM);
    ep->cfg.flags |= BSPE_CFG_REQUIRE_CSUM;
    refused(valid(1, 1), -EBADMSG, BSPE_DROP_CSUM);
}

TEST_F(Hostile, DuplicateIsCountedNotDelivered) {
    auto p = valid(0, 0);  // the packet SetUp delivered (first fragment of message 0)
    uint64_t d = drops(BSPE_DROP_DUP);
    EXPECT_EQ(bspe_rx(ep, 0, p.data(), static_cast<uint32_t>(p.size()), 30), -EALREADY);
    EXPECT_EQ(drops(BSPE_DROP_DUP), d + 1);
}

TEST_F(Hostile, RandomGarbageNeverCrashes) {
    bspsim::Rng rng(5);
    std::vector<uint8_t> buf(2000);
    for (int i = 0; i < 20000; i++) {
        size_t len = rng.below(buf.size());
        for (size_t k = 0; k < len; k++)
            buf[k] = static_cast<uint8_t>(rng.next());
        if (len >= 4 && rng.chance(0.5))
            buf[0] = BSPE_VERSION;
        bspe_rx(ep, 0, buf.data(), static_cast<uint32_t>(len), 40 + i);
    }
    EXPECT_LE(ep->outstanding, cfg.sndbuf_pkts);
}
