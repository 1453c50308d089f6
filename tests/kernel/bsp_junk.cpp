// Junk flood at a node's rail for tests/kernel/bench_junk.sh (not a test: it
// prints how much it sent). Frames leave through an AF_PACKET socket that
// bypasses the qdisc, in batches (sendmmsg).
//
//   bsp_junk DEV DST_MAC NODE SECONDS [SIZE]
//
// Half of the frames look like AF_BSP (this version, a DATA/ACK/PROD type) with
// random bytes after the first 2 (destination node and port random); the
// other half are well-formed DATA headers for node NODE and a random port of
// 20000..29999 (unbound in the benchmark), from node 1. SIZE (default 512)
// is the frame's length after the Ethernet header. Prints one line
// "JUNK sent=N secs=S pps=R".
#include <arpa/inet.h>
#include <linux/bsp.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/bspe_wire.h"

namespace {

constexpr int kPool = 256;
constexpr int kBatch = 64;

bool parse_mac(const char *s, uint8_t mac[6]) {
    unsigned v[6];
    if (std::sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
        return false;
    for (int i = 0; i < 6; i++) {
        if (v[i] > 255)
            return false;
        mac[i] = uint8_t(v[i]);
    }
    return true;
}

void put16(uint8_t *p, uint16_t v) {
    v = htons(v);
    std::memcpy(p, &v, 2);
}

void put32(uint8_t *p, uint32_t v) {
    v = htonl(v);
    std::memcpy(p, &v, 4);
}

// The layout of struct bspe_hdr (kernel/engine/bspe_wire.h, Documentation/protocol.rst).
std::vector<uint8_t> frame(std::mt19937 &rng, const uint8_t dst[6], const uint8_t src[6],
                           uint32_t node, size_t size, bool wellformed) {
    std::vector<uint8_t> f(ETH_HLEN + size);
    std::memcpy(f.data(), dst, 6);
    std::memcpy(f.data() + 6, src, 6);
    put16(f.data() + 12, ETH_P_BSP);
    uint8_t *p = f.data() + ETH_HLEN;
    for (size_t i = 0; i < size; i++)
        p[i] = uint8_t(rng());
    p[0] = BSPE_VERSION;
    p[1] = uint8_t(1 + rng() % 3);  // DATA, ACK or PROD
    if (wellformed) {
        size_t payload = size > 72 ? size - 72 : 0;
        p[1] = 1;
        put16(p + 2, 0);                                 // flags
        put32(p + 4, 1);                                 // src_node
        put32(p + 8, node);                              // dst_node
        put16(p + 12, uint16_t(1000 + rng() % 1000));    // src_port
        put16(p + 14, uint16_t(20000 + rng() % 10000));  // dst_port
        p[16] = 0;
        p[17] = 0;
        put32(p + 20, 1);                                // src_inc
        put32(p + 52, uint32_t(payload));                // msg_len
        put32(p + 56, 0);                                // frag_off
        put16(p + 60, uint16_t(payload ? payload : 1));  // frag_unit
        put16(p + 62, uint16_t(payload));                // payload_len
    }
    return f;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 5 || argc > 6) {
        std::fprintf(stderr, "usage: bsp_junk DEV DST_MAC NODE SECONDS [SIZE]\n");
        return 2;
    }
    uint8_t dst[6], src[6];
    if (!parse_mac(argv[2], dst)) {
        std::fprintf(stderr, "bsp_junk: bad MAC %s\n", argv[2]);
        return 2;
    }
    uint32_t node = uint32_t(std::strtoul(argv[3], nullptr, 0));
    double secs = std::atof(argv[4]);
    size_t size = argc == 6 ? size_t(std::strtoul(argv[5], nullptr, 0)) : 512;
    if (secs <= 0 || size < 72 || size > 9000) {
        std::fprintf(stderr, "bsp_junk: SECONDS > 0, SIZE in 72..9000\n");
        return 2;
    }
    unsigned ifindex = if_nametoindex(argv[1]);
    if (!ifindex) {
        std::fprintf(stderr, "bsp_junk: no device %s\n", argv[1]);
        return 1;
    }
    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    if (fd < 0) {
        std::perror("bsp_junk: socket");
        return 1;
    }
    int one = 1;
    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_ifindex = int(ifindex);
    sll.sll_protocol = htons(ETH_P_BSP);
    if (bind(fd, reinterpret_cast<sockaddr *>(&sll), sizeof(sll))) {
        std::perror("bsp_junk: bind");
        return 1;
    }
    sockaddr_ll me{};
    socklen_t len = sizeof(me);
    getsockname(fd, reinterpret_cast<sockaddr *>(&me), &len);
    std::memcpy(src, me.sll_addr, 6);

    std::mt19937 rng(12345);
    std::vector<std::vector<uint8_t>> pool;
    for (int i = 0; i < kPool; i++)
        pool.push_back(frame(rng, dst, src, node, size, i % 2));
    std::vector<iovec> iov(kBatch);
    std::vector<mmsghdr> msgs(kBatch);

    auto t0 = std::chrono::steady_clock::now();
    unsigned long long sent = 0;
    int next = 0;
    double elapsed = 0;
    while (elapsed < secs) {
        for (int i = 0; i < kBatch; i++) {
            auto &f = pool[size_t(next)];
            next = (next + 1) % kPool;
            iov[size_t(i)] = {f.data(), f.size()};
            msgs[size_t(i)] = {};
            msgs[size_t(i)].msg_hdr.msg_iov = &iov[size_t(i)];
            msgs[size_t(i)].msg_hdr.msg_iovlen = 1;
        }
        int n = sendmmsg(fd, msgs.data(), kBatch, 0);
        if (n < 0 && errno != ENOBUFS && errno != EAGAIN) {
            std::perror("bsp_junk: sendmmsg");
            return 1;
        }
        if (n > 0)
            sent += unsigned(n);
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    std::printf("JUNK sent=%llu secs=%.3f pps=%.0f\n", sent, elapsed, double(sent) / elapsed);
    close(fd);
    return 0;
}
