// bspe_rx_ext(): what a caller may vouch for (BSPE_RX_CSUM_OK) and a packet whose payload is
// not contiguous with its header (BSPE_RX_HDR_ONLY), as the kernel hands over frames that never
// left the host (CHECKSUM_PARTIAL) and frames whose payload sits in page fragments.
#include <arpa/inet.h>

#include <cstring>
#include <vector>

extern "C" {
#include "bspe_internal.h"
}
#include "engine_test_util.hpp"

using namespace enginetest;

namespace {

struct Seen {
    int frags = 0;
    const void *data = nullptr;
    uint32_t off = 0, len = 0;
    int delivered = 0;
};

int rx_note(void *ctx, const bspe_rx_frag *f) {
    auto *s = static_cast<Seen *>(ctx);
    s->frags++;
    s->data = f->data;
    s->off = f->off;
    s->len = f->len;
    return 0;
}
void deliver_note(void *ctx, const bspe_delivery *) {
    static_cast<Seen *>(ctx)->delivered++;
}
void nop_xmit(void *, const bspe_xmit *) {}
void nop_complete(void *, void *, int) {}
void nop_timer(void *, uint64_t) {}
const bspe_ops kOps = {nop_xmit, rx_note,         deliver_note,   nullptr, nop_complete, nop_timer,
                       nullptr,  heap_chan_alloc, heap_chan_free, nullptr, nullptr};

const uint8_t kKey[BSPE_KEY_LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

class RxExt : public ::testing::Test {
  protected:
    void make(uint8_t flags) {
        cfg = test_cfg();
        cfg.node = 1;
        cfg.port = 1;
        cfg.nrails = 1;
        cfg.flags = flags | BSPE_CFG_AUTO_OPEN;
        std::memcpy(cfg.key, kKey, sizeof(kKey));
        mem.assign(bspe_mem_size(&cfg) / 8 + 1, 0);
        ep = bspe_init(mem.data(), mem.size() * 8, &cfg, &kOps, &seen);
        ASSERT_NE(ep, nullptr);
    }
    void TearDown() override {
        if (ep)
            bspe_fini(ep);
    }

    // DATA from (0, 1): the first fragment (1000 bytes) of a 1000-byte message, flags as given,
    // sealed as a sender would, unless the checksum is left as CHECKSUM_PARTIAL leaves it (0).
    std::vector<uint8_t> data(uint16_t flags, bool seal) {
        std::vector<uint8_t> p(BSPE_HDR_LEN + 1000);
        for (size_t i = BSPE_HDR_LEN; i < p.size(); i++)
            p[i] = uint8_t(i * 7);
        auto *h = reinterpret_cast<bspe_hdr *>(p.data());
        std::memset(h, 0, sizeof(*h));
        h->version = BSPE_VERSION;
        h->type = BSPE_T_DATA;
        h->flags = htons(flags);
        h->dst_node = htonl(1);
        h->src_port = htons(1);
        h->dst_port = htons(1);
        h->src_inc = htonl(5);
        h->msg_len = htonl(1000);
        h->frag_unit = htons(1000);
        h->payload_len = htons(1000);
        if (seal)
            bspe_seal_key(kKey, p.data(), p.data() + BSPE_HDR_LEN, 1000);
        return p;
    }

    int rx(const std::vector<uint8_t> &p, uint32_t rx_flags) {
        return bspe_rx_ext(ep, 0, p.data(), static_cast<uint32_t>(p.size()), rx_flags, 10);
    }
    // Only the header is handed over: the payload stays elsewhere (len still counts it).
    int rx_hdr(const std::vector<uint8_t> &p, uint32_t rx_flags) {
        std::vector<uint8_t> hdr(p.begin(), p.begin() + BSPE_HDR_LEN);
        return bspe_rx_ext(ep, 0, hdr.data(), static_cast<uint32_t>(p.size()),
                           rx_flags | BSPE_RX_HDR_ONLY, 10);
    }
    uint64_t drops(bspe_drop why) {
        bspe_stats s;
        bspe_stats_get(ep, -1, -1, &s);
        return s.drops[why];
    }

    bspe_cfg cfg;
    std::vector<uint64_t> mem;
    bspe_ep *ep = nullptr;
    Seen seen;
};

TEST_F(RxExt, UnsummedChecksumRefusedUnlessVouchedFor) {
    make(BSPE_CFG_CSUM | BSPE_CFG_REQUIRE_CSUM);
    auto p = data(BSPE_F_CSUM, false);
    EXPECT_EQ(rx(p, 0), -EBADMSG);
    EXPECT_EQ(bspe_rx(ep, 0, p.data(), uint32_t(p.size()), 10), -EBADMSG);
    EXPECT_EQ(drops(BSPE_DROP_CSUM), 2u);
    EXPECT_EQ(seen.frags, 0);
    EXPECT_EQ(rx(p, BSPE_RX_CSUM_OK), 0);
    EXPECT_EQ(seen.frags, 1);
    EXPECT_EQ(seen.data, p.data() + BSPE_HDR_LEN);
    EXPECT_EQ(seen.len, 1000u);
    EXPECT_EQ(seen.delivered, 1);
    EXPECT_EQ(drops(BSPE_DROP_CSUM), 2u);
}

TEST_F(RxExt, VouchingDoesNotWaiveTheRequiredFlag) {
    make(BSPE_CFG_CSUM | BSPE_CFG_REQUIRE_CSUM);
    EXPECT_EQ(rx(data(0, false), BSPE_RX_CSUM_OK), -EBADMSG);
    EXPECT_EQ(rx_hdr(data(0, false), BSPE_RX_CSUM_OK), -EBADMSG);
    EXPECT_EQ(drops(BSPE_DROP_CSUM), 2u);
    EXPECT_EQ(seen.frags, 0);
}

TEST_F(RxExt, HeaderOnlyLeavesThePayloadToTheCaller) {
    make(BSPE_CFG_CSUM | BSPE_CFG_REQUIRE_CSUM);
    auto p = data(BSPE_F_CSUM, false);
    // the engine cannot check a checksum it cannot read
    EXPECT_EQ(rx_hdr(p, 0), -EBADMSG);
    EXPECT_EQ(drops(BSPE_DROP_CSUM), 1u);
    EXPECT_EQ(seen.frags, 0);
    EXPECT_EQ(rx_hdr(p, BSPE_RX_CSUM_OK), 0);
    EXPECT_EQ(seen.frags, 1);
    EXPECT_EQ(seen.data, nullptr);
    EXPECT_EQ(seen.off, 0u);
    EXPECT_EQ(seen.len, 1000u);
    EXPECT_EQ(seen.delivered, 1);
    // the same packet again is a duplicate, whatever form it comes in
    EXPECT_EQ(rx(data(BSPE_F_CSUM, true), 0), -EALREADY);
    EXPECT_EQ(drops(BSPE_DROP_DUP), 1u);
}

TEST_F(RxExt, HeaderOnlyWithoutChecksumNeedsNoVouching) {
    make(0);
    EXPECT_EQ(rx_hdr(data(0, false), 0), 0);
    EXPECT_EQ(seen.frags, 1);
    EXPECT_EQ(seen.data, nullptr);
    EXPECT_EQ(seen.delivered, 1);
}

TEST_F(RxExt, HeaderOnlyNeverPassesAMacCheck) {
    make(BSPE_CFG_AUTH);
    auto p = data(BSPE_F_AUTH, true);
    EXPECT_EQ(rx_hdr(p, BSPE_RX_CSUM_OK), -EACCES);
    EXPECT_EQ(drops(BSPE_DROP_AUTH), 1u);
    EXPECT_EQ(seen.frags, 0);
    EXPECT_EQ(rx(p, BSPE_RX_CSUM_OK), 0);  // the whole packet: MAC checked, accepted
    EXPECT_EQ(seen.frags, 1);
    EXPECT_EQ(seen.data, p.data() + BSPE_HDR_LEN);
    auto forged = data(BSPE_F_AUTH, true);
    forged[BSPE_HDR_LEN + 3] ^= 1;
    // vouching for a checksum is no MAC
    EXPECT_EQ(bspe_rx_ext(ep, 0, forged.data(), uint32_t(forged.size()), BSPE_RX_CSUM_OK, 20),
              -EACCES);
    EXPECT_EQ(drops(BSPE_DROP_AUTH), 2u);
}

}  // namespace
