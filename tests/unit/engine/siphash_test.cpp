// SipHash-2-4 of the engine (bspe_siphash.c): the 64 reference test vectors of the
// SipHash authors (key 00..0f, messages 00..n-1 for n = 0..63), the streaming form
// against the one-shot form for every split of the input, the packet seal and MAC check,
// the hello MAC and the key derivation.
#include <arpa/inet.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "engine_test_util.hpp"

namespace {

// From the reference implementation (github.com/veorq/SipHash, vectors.h), as 64-bit values.
const uint64_t kVectors[64] = {
    0x726fdb47dd0e0e31ull, 0x74f839c593dc67fdull, 0x0d6c8009d9a94f5aull, 0x85676696d7fb7e2dull,
    0xcf2794e0277187b7ull, 0x18765564cd99a68dull, 0xcbc9466e58fee3ceull, 0xab0200f58b01d137ull,
    0x93f5f5799a932462ull, 0x9e0082df0ba9e4b0ull, 0x7a5dbbc594ddb9f3ull, 0xf4b32f46226bada7ull,
    0x751e8fbc860ee5fbull, 0x14ea5627c0843d90ull, 0xf723ca908e7af2eeull, 0xa129ca6149be45e5ull,
    0x3f2acc7f57c29bdbull, 0x699ae9f52cbe4794ull, 0x4bc1b3f0968dd39cull, 0xbb6dc91da77961bdull,
    0xbed65cf21aa2ee98ull, 0xd0f2cbb02e3b67c7ull, 0x93536795e3a33e88ull, 0xa80c038ccd5ccec8ull,
    0xb8ad50c6f649af94ull, 0xbce192de8a85b8eaull, 0x17d835b85bbb15f3ull, 0x2f2e6163076bcfadull,
    0xde4daaaca71dc9a5ull, 0xa6a2506687956571ull, 0xad87a3535c49ef28ull, 0x32d892fad841c342ull,
    0x7127512f72f27cceull, 0xa7f32346f95978e3ull, 0x12e0b01abb051238ull, 0x15e034d40fa197aeull,
    0x314dffbe0815a3b4ull, 0x027990f029623981ull, 0xcadcd4e59ef40c4dull, 0x9abfd8766a33735cull,
    0x0e3ea96b5304a7d0ull, 0xad0c42d6fc585992ull, 0x187306c89bc215a9ull, 0xd4a60abcf3792b95ull,
    0xf935451de4f21df2ull, 0xa9538f0419755787ull, 0xdb9acddff56ca510ull, 0xd06c98cd5c0975ebull,
    0xe612a3cb9ecba951ull, 0xc766e62cfcadaf96ull, 0xee64435a9752fe72ull, 0xa192d576b245165aull,
    0x0a8787bf8ecb74b2ull, 0x81b3e73d20b49b6full, 0x7fa8220ba3b2eceaull, 0x245731c13ca42499ull,
    0xb78dbfaf3a8d83bdull, 0xea1ad565322a1a0bull, 0x60e61c23a3795013ull, 0x6606d7e446282b93ull,
    0x6ca4ecb15c5f91e1ull, 0x9f626da15c9625f3ull, 0xe51b38608ef25f57ull, 0x958a324ceb064572ull,
};

std::vector<uint8_t> ref_key() {
    std::vector<uint8_t> k(BSPE_KEY_LEN);
    for (unsigned i = 0; i < k.size(); i++)
        k[i] = static_cast<uint8_t>(i);
    return k;
}

}  // namespace

TEST(SipHash, ReferenceVectors) {
    auto key = ref_key();
    uint8_t msg[64];
    for (unsigned n = 0; n < 64; n++) {
        msg[n] = static_cast<uint8_t>(n);
        EXPECT_EQ(bspe_siphash(key.data(), msg, n), kVectors[n]) << "length " << n;
    }
}

TEST(SipHash, StreamingEqualsOneShotForEverySplit) {
    auto key = ref_key();
    uint8_t msg[64];
    for (unsigned i = 0; i < sizeof(msg); i++)
        msg[i] = static_cast<uint8_t>(i);
    for (unsigned n = 0; n <= 64; n++)
        for (unsigned a = 0; a <= n; a++)
            for (unsigned b = a; b <= n; b++) {
                struct bspe_siphash s;
                bspe_siphash_init(&s, key.data());
                bspe_siphash_update(&s, msg, a);
                bspe_siphash_update(&s, msg + a, b - a);
                bspe_siphash_update(&s, msg + b, n - b);
                ASSERT_EQ(bspe_siphash_final(&s),
                          n < 64 ? kVectors[n] : bspe_siphash(key.data(), msg, n))
                    << n << " split at " << a << ", " << b;
            }
}

// A sealed packet verifies; every single bit flip of header or payload fails the MAC;
// another key fails; the streaming seal equals the one-shot seal for odd splits.
TEST(SipHash, PacketMacCoversHeaderAndPayload) {
    auto key = ref_key();
    std::vector<uint8_t> pkt(BSPE_HDR_LEN + 37);
    for (size_t i = 0; i < pkt.size(); i++)
        pkt[i] = static_cast<uint8_t>(i * 13 + 1);
    auto *h = reinterpret_cast<bspe_hdr *>(pkt.data());
    h->flags = htons(BSPE_F_AUTH);
    bspe_seal_key(key.data(), pkt.data(), pkt.data() + BSPE_HDR_LEN, 37);
    EXPECT_EQ(h->csum, 0);
    EXPECT_NE(h->mac, 0u);
    uint32_t len = static_cast<uint32_t>(pkt.size());
    ASSERT_TRUE(bspe_mac_ok(key.data(), pkt.data(), len));
    for (size_t bit = 0; bit < pkt.size() * 8; bit++) {
        pkt[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        // the csum field is outside the MAC by definition (zero when sealed)
        bool in_csum =
            bit / 8 == offsetof(bspe_hdr, csum) || bit / 8 == offsetof(bspe_hdr, csum) + 1;
        EXPECT_EQ(bspe_mac_ok(key.data(), pkt.data(), len), in_csum) << bit;
        pkt[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    }
    auto other = key;
    other[15] ^= 0x80;
    EXPECT_FALSE(bspe_mac_ok(other.data(), pkt.data(), len));
    EXPECT_FALSE(bspe_mac_ok(key.data(), pkt.data(), len - 1));  // a truncated payload
    std::vector<uint8_t> q(pkt);
    bspe_seal_ctx s;
    bspe_seal_key_begin(&s, key.data(), q.data());
    bspe_seal_update(&s, q.data() + BSPE_HDR_LEN, 5);
    bspe_seal_update(&s, q.data() + BSPE_HDR_LEN + 5, 0);
    bspe_seal_update(&s, q.data() + BSPE_HDR_LEN + 5, 32);
    bspe_seal_final(&s, q.data());
    EXPECT_EQ(q, pkt);
}

// The streaming checksum of odd-length pieces equals the one-shot checksum.
TEST(SipHash, StreamingChecksumOfOddPieces) {
    std::vector<uint8_t> pkt(BSPE_HDR_LEN + 101);
    for (size_t i = 0; i < pkt.size(); i++)
        pkt[i] = static_cast<uint8_t>(i * 29 + 7);
    pkt[2] = 0;
    pkt[3] = BSPE_F_CSUM;
    std::vector<uint8_t> q(pkt);
    bspe_seal_key(nullptr, pkt.data(), pkt.data() + BSPE_HDR_LEN, 101);
    ASSERT_TRUE(bspe_csum_ok(pkt.data(), static_cast<uint32_t>(pkt.size())));
    bspe_seal_ctx s;
    bspe_seal_key_begin(&s, nullptr, q.data());
    for (uint32_t off = 0, step = 1; off < 101; off += step, step += 2)
        bspe_seal_update(&s, q.data() + BSPE_HDR_LEN + off, std::min(step, 101 - off));
    bspe_seal_final(&s, q.data());
    EXPECT_EQ(q, pkt);
}

TEST(SipHash, HelloMac) {
    auto key = ref_key();
    bspe_hello_info in{7, 3, 1, 2, 9000, BSPE_CAP_CSUM, 0x12345678, 99, 100};
    uint8_t buf[BSPE_HELLO_LEN], plain[BSPE_HELLO_LEN];
    bspe_hello_build(buf, &in, key.data());
    bspe_hello_build(plain, &in, nullptr);
    bspe_hello_info out{};
    EXPECT_EQ(bspe_hello_parse(buf, sizeof(buf), &out, key.data()), 0);
    EXPECT_EQ(out.incarnation, 0x12345678u);
    EXPECT_EQ(bspe_hello_parse(plain, sizeof(plain), &out, key.data()), -EACCES);  // no MAC
    EXPECT_EQ(bspe_hello_parse(buf, sizeof(buf), &out, nullptr), -EACCES);         // unexpected MAC
    auto other = key;
    other[0] ^= 1;
    EXPECT_EQ(bspe_hello_parse(buf, sizeof(buf), &out, other.data()), -EACCES);  // wrong key
}

TEST(SipHash, KeyDerivation) {
    const char secret[] = "0123456789abcdef0123456789abcdef";
    uint8_t k1[BSPE_KEY_LEN], k2[BSPE_KEY_LEN], k3[BSPE_KEY_LEN];
    bspe_key_derive(secret, 32, k1);
    bspe_key_derive(secret, 32, k2);
    EXPECT_EQ(std::memcmp(k1, k2, sizeof(k1)), 0);  // deterministic
    bspe_key_derive(secret, 31, k3);
    EXPECT_NE(std::memcmp(k1, k3, sizeof(k1)), 0);
    EXPECT_NE(std::memcmp(k1, secret, sizeof(k1)), 0);  // never the secret itself
    // pinned: user space and any other implementation must derive the same key
    const uint8_t zero[16] = {};
    bspe_key_derive(zero, 16, k3);
    uint64_t lo = 0, hi = 0;
    for (int i = 7; i >= 0; i--) {
        lo = lo << 8 | k3[i];
        hi = hi << 8 | k3[8 + i];
    }
    uint8_t label_then_zero[20 + 16] = {};
    std::memcpy(label_then_zero, "AF_BSP v2 packet key", 20);
    const uint8_t kdf0[16] = {'A', 'F', '_', 'B', 'S', 'P', ' ', 'k',
                              'd', 'f', ' ', 'k', 'e', 'y', ' ', '0'};
    const uint8_t kdf1[16] = {'A', 'F', '_', 'B', 'S', 'P', ' ', 'k',
                              'd', 'f', ' ', 'k', 'e', 'y', ' ', '1'};
    EXPECT_EQ(lo, bspe_siphash(kdf0, label_then_zero, sizeof(label_then_zero)));
    EXPECT_EQ(hi, bspe_siphash(kdf1, label_then_zero, sizeof(label_then_zero)));
}
