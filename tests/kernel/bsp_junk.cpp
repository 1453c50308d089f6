// Junk flood at a node's rail for tests/kernel/bench_junk.sh (not a test: it
// prints how much it sent). Two ways out:
//
//   bsp_junk DEV DST_MAC NODE SECONDS [SIZE]
//       inside the guest: frames leave DEV through an AF_PACKET socket that
//       bypasses the qdisc, in batches (sendmmsg), for SECONDS; prints one
//       line "JUNK sent=N secs=S pps=R".
//   bsp_junk --udp ADDR:PORT --ctl FILE [--pps N] [--src MAC] DST_MAC NODE [SIZE]
//       on the host: each frame is one UDP datagram to ADDR:PORT, where QEMU's
//       "socket" network backend of the guest NIC under test listens (the
//       wire of tests/kernel/bench_junk_wire.sh). Runs until killed; floods
//       while FILE exists (the guest creates and removes it in the writable
//       results share), at most N frames per second (0: as fast as it can),
//       or the number FILE holds if it holds one; when a flood ends it writes
//       "JUNK sent=N secs=S pps=R" to FILE.done.
//       Exits when FILE's directory is gone. The frames' source address is
//       MAC (a spoofed peer) or one no guest NIC has.
//
// Half of the frames look like AF_BSP (this version, a DATA/ACK/PROD type) with
// random bytes after the first 2 (destination node and port random); the
// other half are well-formed DATA headers for node NODE and a random port of
// 20000..29999 (unbound in the benchmark), from node 1. SIZE (default 512)
// is the frame's length after the Ethernet header.
#include <arpa/inet.h>
#include <linux/bsp.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "engine/bspe_wire.h"

namespace {

constexpr int kPool = 256;
constexpr size_t kBatch = 64;

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
// Not inlined: GCC 12 would see ETH_HLEN + size wrap to 0 for a size it
// cannot bound and warn (-Warray-bounds); callers pass 72..9000.
[[gnu::noinline]] std::vector<uint8_t> frame(std::mt19937 &rng, const uint8_t dst[6],
                                             const uint8_t src[6], uint32_t node, size_t size,
                                             bool wellformed) {
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

using Pool = std::vector<std::vector<uint8_t>>;

Pool make_pool(const uint8_t dst[6], const uint8_t src[6], uint32_t node, size_t size) {
    std::mt19937 rng(12345);
    Pool pool;
    for (int i = 0; i < kPool; i++)
        pool.push_back(frame(rng, dst, src, node, size, i % 2));
    return pool;
}

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Flood {
    unsigned long long sent = 0;
    double secs = 0;
};

// Sends batches from @pool on @fd until @go says stop, at most @pps frames per
// second (0: no limit). Returns what was sent, or sent = ~0 on a send error.
template <typename Go>
Flood flood(int fd, const Pool &pool, unsigned long pps, Go go) {
    std::vector<iovec> iov(kBatch);
    std::vector<mmsghdr> msgs(kBatch);
    auto t0 = std::chrono::steady_clock::now();
    Flood f;
    size_t next = 0;
    while (go(f.secs = since(t0))) {
        if (pps && double(f.sent) > double(pps) * f.secs) {
            timespec ts{0, long(1e9 * (double(f.sent) / double(pps) - f.secs))};
            nanosleep(&ts, nullptr);
            continue;
        }
        for (size_t i = 0; i < kBatch; i++) {
            const auto &fr = pool[next];
            next = (next + 1) % pool.size();
            iov[i] = {const_cast<uint8_t *>(fr.data()), fr.size()};
            msgs[i] = {};
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int n = sendmmsg(fd, msgs.data(), kBatch, 0);
        // a full device queue (AF_PACKET) or receiver (UDP: ECONNREFUSED
        // while QEMU is not up yet) is the flood's point, not an error
        if (n < 0 && errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED) {
            std::perror("bsp_junk: sendmmsg");
            f.sent = ~0ULL;
            return f;
        }
        if (n > 0)
            f.sent += unsigned(n);
    }
    return f;
}

bool exists(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

int usage() {
    std::fprintf(
        stderr,
        "usage: bsp_junk DEV DST_MAC NODE SECONDS [SIZE]\n"
        "       bsp_junk --udp ADDR:PORT --ctl FILE [--pps N] [--src MAC] DST_MAC NODE [SIZE]\n");
    return 2;
}

bool parse_size(const char *arg, size_t *size) {
    char *end;
    unsigned long v = std::strtoul(arg, &end, 0);
    if (*end || v < 72 || v > 9000) {
        std::fprintf(stderr, "bsp_junk: SIZE %s: expected 72..9000\n", arg);
        return false;
    }
    *size = v;
    return true;
}

// The host side: frames as UDP datagrams into a QEMU socket backend.
int main_udp(int argc, char **argv) {
    std::string where, ctl, src_mac;
    unsigned long pps = 0;
    // by default a locally administered source no guest NIC has
    uint8_t src[6] = {0x52, 0x54, 0x00, 0xb5, 0x00, 0xff};
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
        std::string opt = argv[i];
        if (opt == "--udp") {
            where = argv[i + 1];
        } else if (opt == "--ctl") {
            ctl = argv[i + 1];
        } else if (opt == "--src") {
            src_mac = argv[i + 1];
        } else if (opt == "--pps") {
            char *end;
            pps = std::strtoul(argv[i + 1], &end, 0);
            if (*end)
                return usage();
        } else {
            return usage();
        }
    }
    if (where.empty() || ctl.empty() || argc - i < 2 || argc - i > 3)
        return usage();
    uint8_t dst[6];
    if (!src_mac.empty() && !parse_mac(src_mac.c_str(), src)) {
        std::fprintf(stderr, "bsp_junk: bad MAC %s\n", src_mac.c_str());
        return 2;
    }
    if (!parse_mac(argv[i], dst)) {
        std::fprintf(stderr, "bsp_junk: bad MAC %s\n", argv[i]);
        return 2;
    }
    uint32_t node = uint32_t(std::strtoul(argv[i + 1], nullptr, 0));
    size_t size = 512;
    if (argc - i == 3 && !parse_size(argv[i + 2], &size))
        return 2;
    size_t colon = where.rfind(':');
    if (colon == std::string::npos) {
        std::fprintf(stderr, "bsp_junk: --udp %s: expected ADDR:PORT\n", where.c_str());
        return 2;
    }
    addrinfo hints{}, *ai = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    int rc =
        getaddrinfo(where.substr(0, colon).c_str(), where.substr(colon + 1).c_str(), &hints, &ai);
    if (rc) {
        std::fprintf(stderr, "bsp_junk: --udp %s: %s\n", where.c_str(), gai_strerror(rc));
        return 2;
    }
    int fd = socket(ai->ai_family, SOCK_DGRAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
        std::perror("bsp_junk: udp socket");
        freeaddrinfo(ai);
        return 1;
    }
    freeaddrinfo(ai);
    Pool pool = make_pool(dst, src, node, size);
    std::string dir = ctl.substr(0, ctl.rfind('/') == std::string::npos ? 0 : ctl.rfind('/'));
    if (dir.empty())
        dir = ".";
    for (;;) {
        while (!exists(ctl)) {
            if (!exists(dir))
                return 0;
            timespec ts{0, 5000000};
            nanosleep(&ts, nullptr);
        }
        // the file may name the rate of this flood (frames per second)
        unsigned long rate = pps;
        if (FILE *in = std::fopen(ctl.c_str(), "r")) {
            unsigned long v;
            if (std::fscanf(in, "%lu", &v) == 1)
                rate = v;
            std::fclose(in);
        }
        unsigned checks = 0;
        Flood f = flood(fd, pool, rate, [&](double) { return (++checks & 15) || exists(ctl); });
        if (f.sent == ~0ULL)
            return 1;
        std::string tmp = ctl + ".tmp";
        FILE *out = std::fopen(tmp.c_str(), "w");
        if (!out) {
            std::perror("bsp_junk: result file");
            return 1;
        }
        std::fprintf(out, "JUNK sent=%llu secs=%.3f pps=%.0f\n", f.sent, f.secs,
                     double(f.sent) / f.secs);
        std::fclose(out);
        if (std::rename(tmp.c_str(), (ctl + ".done").c_str())) {
            std::perror("bsp_junk: result file");
            return 1;
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (argc > 1 && argv[1][0] == '-' && argv[1][1] == '-')
        return main_udp(argc, argv);
    if (argc < 5 || argc > 6)
        return usage();
    uint8_t dst[6], src[6];
    if (!parse_mac(argv[2], dst)) {
        std::fprintf(stderr, "bsp_junk: bad MAC %s\n", argv[2]);
        return 2;
    }
    uint32_t node = uint32_t(std::strtoul(argv[3], nullptr, 0));
    double secs = std::atof(argv[4]);
    size_t size = 512;
    if (secs <= 0) {
        std::fprintf(stderr, "bsp_junk: SECONDS must be > 0\n");
        return 2;
    }
    if (argc == 6 && !parse_size(argv[5], &size))
        return 2;
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

    Pool pool = make_pool(dst, src, node, size);
    Flood f = flood(fd, pool, 0, [&](double t) { return t < secs; });
    close(fd);
    if (f.sent == ~0ULL)
        return 1;
    std::printf("JUNK sent=%llu secs=%.3f pps=%.0f\n", f.sent, f.secs, double(f.sent) / f.secs);
    return 0;
}
