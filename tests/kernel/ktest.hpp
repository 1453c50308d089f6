// Small helpers shared by the af_bsp guest-side test programs: checks that
// report the failing expression with errno, AF_BSP socket and address
// helpers, and the deterministic payload pattern used to verify bytes.
#pragma once

#include <linux/bsp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ktest {

// Number of failed checks so far.
int failures();

// Records a failure with a formatted message (printf-style).
void fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// The family in effect (module parameter), read from sysfs.
int family();

// This namespace's node id (net.bsp.node_id).
uint32_t node_id();

sockaddr_bsp addr(uint32_t node, uint16_t port);

// socket(AF_BSP, SOCK_RDM, 0), bound to port (0 = automatic); exits on
// error. Non-zero buffer sizes are forced (SO_*BUFFORCE) before bind,
// where they size the socket's protocol engine endpoint.
int bound_socket(uint16_t port = 0, int rcvbuf = 0, int sndbuf = 0);

uint16_t port_of(int fd);

// Waits until every message the socket sent is acknowledged or has failed (SIOCOUTQ is 0),
// at most ms milliseconds; returns the bytes still unsettled (0: all settled).
int wait_settled(int fd, int ms);

// The VM harness's time-limit factor (BSPVM_TIMEOUT_SCALE: 1 on the stock kernel, 3 on the
// debug kernel unless overridden), for the limits a test program sets itself.
int time_scale();

// Byte i of message (src, seq) of length len: a pattern that makes any
// misplaced, duplicated or foreign byte detectable.
uint8_t pattern(uint32_t src, uint32_t seq, size_t i);
void fill(std::vector<uint8_t> &buf, uint32_t src, uint32_t seq);
// Index of the first wrong byte or -1.
long verify(const uint8_t *buf, size_t len, uint32_t src, uint32_t seq);

}  // namespace ktest

#define CHECK(cond)                                                                             \
    do {                                                                                        \
        if (!(cond))                                                                            \
            ktest::fail(__FILE__, __LINE__, "%s (errno %d %s)", #cond, errno, strerror(errno)); \
    } while (0)

// Checks that expr == -1 with errno == e.
#define CHECK_ERRNO(expr, e)                                                         \
    do {                                                                             \
        errno = 0;                                                                   \
        long r_ = static_cast<long>(expr);                                           \
        int err_ = errno;                                                            \
        if (r_ != -1 || err_ != (e))                                                 \
            ktest::fail(__FILE__, __LINE__, "%s: expected -1/%s, got %ld/%s", #expr, \
                        strerrorname_np(e), r_, err_ ? strerrorname_np(err_) : "0"); \
    } while (0)

#define CHECK_EQ(a, b)                                                                           \
    do {                                                                                         \
        long long a_ = static_cast<long long>(a), b_ = static_cast<long long>(b);                \
        if (a_ != b_)                                                                            \
            ktest::fail(__FILE__, __LINE__, "%s == %s: %lld != %lld (errno %s)", #a, #b, a_, b_, \
                        errno ? strerrorname_np(errno) : "0");                                   \
    } while (0)
