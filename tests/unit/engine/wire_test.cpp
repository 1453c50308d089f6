// Wire format helpers: sizes, field offsets, hello frames, checksum, packet type.
#include <cstddef>
#include <cstring>

#include "engine_test_util.hpp"

TEST(Wire, HeaderLayoutIsPinned) {
    EXPECT_EQ(BSPE_VERSION, 3);
    EXPECT_EQ(sizeof(bspe_hdr), 72u);
    EXPECT_EQ(offsetof(bspe_hdr, flags), 2u);
    EXPECT_EQ(offsetof(bspe_hdr, src_node), 4u);
    EXPECT_EQ(offsetof(bspe_hdr, dst_port), 14u);
    EXPECT_EQ(offsetof(bspe_hdr, rail), 16u);
    EXPECT_EQ(offsetof(bspe_hdr, csum), 18u);
    EXPECT_EQ(offsetof(bspe_hdr, src_inc), 20u);
    EXPECT_EQ(offsetof(bspe_hdr, dst_inc), 24u);
    EXPECT_EQ(offsetof(bspe_hdr, seq), 28u);
    EXPECT_EQ(offsetof(bspe_hdr, eoh), 40u);
    EXPECT_EQ(offsetof(bspe_hdr, epoch), 44u);
    EXPECT_EQ(offsetof(bspe_hdr, frag_off), 56u);
    EXPECT_EQ(offsetof(bspe_hdr, payload_len), 62u);
    EXPECT_EQ(offsetof(bspe_hdr, mac), 64u);
    EXPECT_EQ(sizeof(bspe_hello), 40u);
    EXPECT_EQ(offsetof(bspe_hello, incarnation), 20u);
    EXPECT_EQ(offsetof(bspe_hello, interval_ms), 28u);
    EXPECT_EQ(offsetof(bspe_hello, mac), 32u);
    EXPECT_EQ(BSPE_F_AUTH, 0x0200);
    EXPECT_EQ(BSPE_F_EVICT, 0x0800);
    EXPECT_EQ(BSPE_F_KEEP, 0x1000);
    EXPECT_EQ(BSPE_F_WNDREQ, 0x2000);
    EXPECT_EQ(BSPE_F_ALL, 0x3fff);
}

TEST(Wire, HelloRoundTripIsBigEndian) {
    bspe_hello_info in{0x01020304, 7, 1, 2, 1500, BSPE_CAP_CSUM, 0xdeadbeef, 42, 100};
    uint8_t buf[BSPE_HELLO_LEN];
    bspe_hello_build(buf, &in, nullptr);
    EXPECT_EQ(buf[0], BSPE_VERSION);
    EXPECT_EQ(buf[1], BSPE_T_HELLO);
    EXPECT_EQ(buf[4], 0x01);
    EXPECT_EQ(buf[7], 0x04);
    EXPECT_EQ(buf[14], 1500 >> 8);
    bspe_hello_info out{};
    ASSERT_EQ(bspe_hello_parse(buf, sizeof(buf), &out, nullptr), 0);
    EXPECT_EQ(out.cluster_id, in.cluster_id);
    EXPECT_EQ(out.node_id, 7u);
    EXPECT_EQ(out.rail, 1);
    EXPECT_EQ(out.nrails, 2);
    EXPECT_EQ(out.mtu, 1500);
    EXPECT_EQ(out.caps, BSPE_CAP_CSUM);
    EXPECT_EQ(out.incarnation, 0xdeadbeefu);
    EXPECT_EQ(out.hello_seq, 42u);
    EXPECT_EQ(out.interval_ms, 100);
    EXPECT_EQ(bspe_pkt_type(buf, sizeof(buf)), BSPE_T_HELLO);
}

// Recomputes the checksum of a hello edited by a test, so that the edit itself is
// what the parser judges.
static void reseal(uint8_t *h) {
    h[30] = h[31] = 0;
    auto c = bspe_csum_fold(bspe_csum_add(h, BSPE_HELLO_LEN, 0));
    std::memcpy(h + 30, &c, sizeof(c));
}

TEST(Wire, HelloRejectsBadFrames) {
    bspe_hello_info in{1, 2, 0, 1, 1500, 0, 1, 1, 100};
    uint8_t buf[BSPE_HELLO_LEN];
    bspe_hello_info out{};
    bspe_hello_build(buf, &in, nullptr);
    EXPECT_EQ(bspe_hello_parse(buf, BSPE_HELLO_LEN - 1, &out, nullptr), -EBADMSG);
    uint8_t bad[BSPE_HELLO_LEN];
    std::memcpy(bad, buf, sizeof(bad));
    bad[0] = 1;  // version 1 is refused
    EXPECT_EQ(bspe_hello_parse(bad, sizeof(bad), &out, nullptr), -EPROTONOSUPPORT);
    std::memcpy(bad, buf, sizeof(bad));
    bad[1] = BSPE_T_DATA;
    reseal(bad);
    EXPECT_EQ(bspe_hello_parse(bad, sizeof(bad), &out, nullptr), -EBADMSG);
    std::memcpy(bad, buf, sizeof(bad));
    bad[3] = 2;  // undefined flag
    reseal(bad);
    EXPECT_EQ(bspe_hello_parse(bad, sizeof(bad), &out, nullptr), -EBADMSG);
    std::memcpy(bad, buf, sizeof(bad));
    bad[12] = 1;  // rail 1 of 1
    reseal(bad);
    EXPECT_EQ(bspe_hello_parse(bad, sizeof(bad), &out, nullptr), -EBADMSG);
    std::memcpy(bad, buf, sizeof(bad));
    bad[14] = 0;
    bad[15] = 10;  // mtu below one header
    reseal(bad);
    EXPECT_EQ(bspe_hello_parse(bad, sizeof(bad), &out, nullptr), -EBADMSG);
    // a resealed edit of a legal field is accepted: the checks above are the
    // parser's own, not the checksum's
    std::memcpy(bad, buf, sizeof(bad));
    bad[23] ^= 1;  // incarnation
    reseal(bad);
    EXPECT_EQ(bspe_hello_parse(bad, sizeof(bad), &out, nullptr), 0);
    EXPECT_EQ(out.incarnation, in.incarnation ^ 1u);
}

TEST(Wire, HelloChecksumCatchesEveryBitFlip) {
    // A corrupted incarnation would reset every channel to the sender and a
    // corrupted node id would invent a peer: no single flipped bit may pass.
    bspe_hello_info in{7, 3, 1, 2, 9000, BSPE_CAP_CSUM, 0x12345678, 99, 100};
    uint8_t buf[BSPE_HELLO_LEN];
    bspe_hello_build(buf, &in, nullptr);
    for (unsigned bit = 0; bit < 8 * BSPE_HELLO_LEN; bit++) {
        uint8_t bad[BSPE_HELLO_LEN];
        std::memcpy(bad, buf, sizeof(bad));
        bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        bspe_hello_info out{};
        int err = bspe_hello_parse(bad, sizeof(bad), &out, nullptr);
        EXPECT_TRUE(err == -EBADMSG || err == -EPROTONOSUPPORT) << "bit " << bit;
    }
}

TEST(Wire, PacketType) {
    uint8_t p[4] = {BSPE_VERSION, BSPE_T_PROD, 0, 0};
    EXPECT_EQ(bspe_pkt_type(p, 4), BSPE_T_PROD);
    EXPECT_EQ(bspe_pkt_type(p, 3), -EBADMSG);
    p[1] = 0;
    EXPECT_EQ(bspe_pkt_type(p, 4), -EBADMSG);
    p[1] = 5;
    EXPECT_EQ(bspe_pkt_type(p, 4), -EBADMSG);
    p[0] = 9;
    EXPECT_EQ(bspe_pkt_type(p, 4), -EPROTONOSUPPORT);
}

TEST(Wire, ChecksumDetectsEveryBitFlip) {
    std::vector<uint8_t> pkt(BSPE_HDR_LEN + 33);
    for (size_t i = 0; i < pkt.size(); i++)
        pkt[i] = static_cast<uint8_t>(i * 7 + 3);
    pkt[2] = 0;
    pkt[3] = BSPE_F_CSUM;
    bspe_seal_key(nullptr, pkt.data(), pkt.data() + BSPE_HDR_LEN, 33);
    ASSERT_TRUE(bspe_csum_ok(pkt.data(), static_cast<uint32_t>(pkt.size())));
    for (size_t bit = 0; bit < pkt.size() * 8; bit++) {
        pkt[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        EXPECT_FALSE(bspe_csum_ok(pkt.data(), static_cast<uint32_t>(pkt.size()))) << bit;
        pkt[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    }
}
