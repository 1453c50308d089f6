#include "ktest.hpp"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace ktest {
namespace {
int g_failures = 0;
}

int failures() {
    return g_failures;
}

void fail(const char *file, int line, const char *fmt, ...) {
    ++g_failures;
    std::fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
}

static long read_number(const char *path) {
    std::ifstream in(path);
    long v = -1;
    if (!(in >> v)) {
        std::fprintf(stderr, "cannot read %s\n", path);
        std::exit(2);
    }
    return v;
}

int family() {
    static int f = static_cast<int>(read_number(BSP_FAMILY_PARAM_PATH));
    return f;
}

uint32_t node_id() {
    return static_cast<uint32_t>(read_number("/proc/sys/net/bsp/node_id"));
}

sockaddr_bsp addr(uint32_t node, uint16_t port) {
    sockaddr_bsp a{};
    a.sbsp_family = static_cast<sa_family_t>(family());
    a.sbsp_node = node;
    a.sbsp_port = port;
    return a;
}

int bound_socket(uint16_t port, int rcvbuf, int sndbuf) {
    int fd = socket(family(), SOCK_RDM, 0);
    if (fd < 0) {
        std::perror("socket(AF_BSP)");
        std::exit(2);
    }
    if ((rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0) ||
        (sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) != 0)) {
        std::perror("SO_RCVBUFFORCE/SO_SNDBUFFORCE");
        std::exit(2);
    }
    sockaddr_bsp a = addr(BSP_NODE_LOCAL, port);
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) {
        std::perror("bind");
        std::exit(2);
    }
    return fd;
}

int wait_settled(int fd, int ms) {
    int outq = 0;
    for (int t = 0;; t += 10) {
        if (ioctl(fd, SIOCOUTQ, &outq) != 0) {
            std::perror("SIOCOUTQ");
            std::exit(2);
        }
        if (outq == 0 || t >= ms)
            return outq;
        usleep(10000);
    }
}

int time_scale() {
    const char *s = std::getenv("BSPVM_TIMEOUT_SCALE");
    int n = s ? std::atoi(s) : 1;
    return n >= 1 && n <= 99 ? n : 1;
}

uint16_t port_of(int fd) {
    sockaddr_bsp a{};
    socklen_t len = sizeof(a);
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
        std::perror("getsockname");
        std::exit(2);
    }
    return a.sbsp_port;
}

uint8_t pattern(uint32_t src, uint32_t seq, size_t i) {
    uint64_t x = (static_cast<uint64_t>(src) << 32) ^
                 (static_cast<uint64_t>(seq) * 0x9E3779B97F4A7C15ull) ^ i;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return static_cast<uint8_t>(x);
}

void fill(std::vector<uint8_t> &buf, uint32_t src, uint32_t seq) {
    for (size_t i = 0; i < buf.size(); ++i)
        buf[i] = pattern(src, seq, i);
}

long verify(const uint8_t *buf, size_t len, uint32_t src, uint32_t seq) {
    for (size_t i = 0; i < len; ++i)
        if (buf[i] != pattern(src, seq, i))
            return static_cast<long>(i);
    return -1;
}

}  // namespace ktest
