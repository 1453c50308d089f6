// bsp_sysfuzz: targeted fuzzer of the AF_BSP socket API, run in the VM
// (tests/vm/cases/kernel_sysfuzz.sh). Several threads share a table of
// AF_BSP sockets and call, in a random order, every socket call the family
// implements on them: socket (every type, protocol, flag), bind/connect
// (every address form: valid, short, long, wrong family, AF_UNSPEC, non-zero
// padding, bad pointer), sendmsg/sendto/send/write/sendmmsg (sizes 0 to past
// BSP_MSG_MAX, up to 8 iovecs, bad pointers, every flag, valid and invalid
// control messages), recvmsg/recvfrom/recv/read/recvmmsg (every flag,
// MSG_ERRQUEUE, short names and control buffers), every SOL_BSP option and
// the SOL_SOCKET ones that matter (every length, random and structured
// contents: groups with duplicates, zero ports, more than BSP_GROUP_MAX
// members), getsockname/getpeername, ioctl, shutdown, poll, fcntl, close —
// including close of a socket another thread is using.
//
// Checks: every call returns success or an errno of the documented set
// (an unexpected errno is a failure, printed with the call); the program
// neither crashes nor hangs; afterwards two fresh sockets still exchange
// messages byte for byte. The kernel side (no splat, no leak, the module
// unloads) is checked by the VM case and the harness.
//
//   bsp_sysfuzz SEED THREADS CALLS [NODE...]
//
// NODE: other nodes' ids to address (besides BSP_NODE_LOCAL, this node and
// random ids). Prints the number of calls made, by operation and by errno.

#include "ktest.hpp"

#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace {

constexpr int kSlots = 12;
constexpr uint16_t kPortBase = 7400;
constexpr int kPorts = 8;
constexpr int kMaxErrno = 256;

enum Op {
    OP_SOCKET,
    OP_CLOSE,
    OP_BIND,
    OP_CONNECT,
    OP_SENDMSG,
    OP_SENDTO,
    OP_RECVMSG,
    OP_RECVFROM,
    OP_SETOPT_BSP,
    OP_GETOPT,
    OP_SETOPT_SOCK,
    OP_NAME,
    OP_IOCTL,
    OP_SHUTDOWN,
    OP_POLL,
    OP_MMSG,
    OP_FCNTL,
    OP_GROUP,
    OP_BARRIER,
    OP_EXPECT,
    OP_COUNT,
};

const char *const kOpNames[OP_COUNT] = {
    "socket",
    "close",
    "bind",
    "connect",
    "sendmsg",
    "sendto",
    "recvmsg",
    "recvfrom",
    "setsockopt(SOL_BSP)",
    "getsockopt",
    "setsockopt(SOL_SOCKET)",
    "get*name",
    "ioctl",
    "shutdown",
    "poll",
    "sendmmsg/recvmmsg",
    "fcntl",
    "BSP_GROUP",
    "BSP_BARRIER_DONE",
    "BSP_EXPECT",
};

// Errnos a call on an AF_BSP socket may return when fed garbage or raced.
bool allowed_errno(int e) {
    switch (e) {
        case EINVAL:
        case EFAULT:
        case EBADF:
        case ENOTSOCK:
        case EAFNOSUPPORT:
        case EADDRINUSE:
        case EADDRNOTAVAIL:
        case EHOSTUNREACH:
        case ECONNREFUSED:
        case EAGAIN:
        case EMSGSIZE:
        case EDESTADDRREQ:
        case ENOTCONN:
        case EPIPE:
        case EOPNOTSUPP:
        case ENOBUFS:
        case ENOPROTOOPT:
        case ESOCKTNOSUPPORT:
        case EPROTONOSUPPORT:
        case ERANGE:
        case ESRCH:
        case EBUSY:
        case EISCONN:
        case ECONNRESET:
        case EINTR:
        case ENOTTY:
        case EPERM:
        case EDOM:
        case ENODEV:
        case EPROTOTYPE:
        case ENODATA:  // SO_PEERGROUPS of a socket without peer credentials
            return true;
        default:
            return false;
    }
}

struct Shared {
    int fam = AF_BSP;
    uint32_t self = 0;
    std::vector<uint32_t> nodes;
    std::array<std::atomic<int>, kSlots> slots;
    std::array<std::atomic<uint64_t>, OP_COUNT> ops{};
    std::array<std::atomic<uint64_t>, kMaxErrno> errnos{};
    std::atomic<uint64_t> ok{0};
    std::atomic<uint64_t> unexpected{0};
};

class Worker {
  public:
    Worker(Shared &s, uint64_t seed) : s_(s), rng_(seed), buf_(BSP_MSG_MAX + 4096) {
        for (size_t i = 0; i < buf_.size(); i++)
            buf_[i] = uint8_t(i * 7 + 1);
    }

    void run(uint64_t calls) {
        for (uint64_t i = 0; i < calls; i++)
            step();
    }

  private:
    Shared &s_;
    std::mt19937_64 rng_;
    std::vector<uint8_t> buf_;
    Op op_ = OP_SOCKET;

    uint64_t r(uint64_t n) { return n ? rng_() % n : 0; }
    bool chance(unsigned pct) { return r(100) < pct; }

    // A socket of the table; an empty slot mostly gets a new one (a closed
    // or never opened descriptor only exercises EBADF).
    int fd() {
        auto &slot = s_.slots[r(kSlots)];
        int s = slot.load(std::memory_order_relaxed);
        if (s < 0 && chance(90)) {
            s = socket(s_.fam, SOCK_RDM | (chance(50) ? SOCK_NONBLOCK : 0), 0);
            if (s >= 0) {
                set_bounds(s);
                int old = slot.exchange(s);
                if (old >= 0)
                    close(old);
            }
        }
        return s;
    }

    // also_ok: one more errno this call may return (0: none).
    void result(long rc, const char *what, int also_ok = 0) {
        int e = errno;
        s_.ops[op_]++;
        if (rc >= 0) {
            s_.ok++;
            return;
        }
        if (e >= 0 && e < kMaxErrno)
            s_.errnos[e]++;
        if (!allowed_errno(e) && !(also_ok && e == also_ok)) {
            s_.unexpected++;
            std::fprintf(stderr, "unexpected errno %s from %s (%s)\n", strerrorname_np(e),
                         kOpNames[op_], what);
        }
    }

    uint32_t node() {
        switch (r(6)) {
            case 0:
                return BSP_NODE_LOCAL;
            case 1:
                return s_.self;
            case 2:
                return uint32_t(rng_());
            default:
                return s_.nodes.empty() ? s_.self : s_.nodes[r(s_.nodes.size())];
        }
    }

    uint16_t port() {
        switch (r(8)) {
            case 0:
                return 0;
            case 1:
                return uint16_t(rng_());
            case 2:
                return uint16_t(BSP_PORT_AUTO_MIN + r(64));
            default:
                return uint16_t(kPortBase + r(kPorts));
        }
    }

    // An address in one of its forms; returns the pointer to pass and sets len.
    const sockaddr *address(sockaddr_storage &ss, socklen_t &len) {
        std::memset(&ss, 0, sizeof(ss));
        auto *a = reinterpret_cast<sockaddr_bsp *>(&ss);
        a->sbsp_family = sa_family_t(s_.fam);
        a->sbsp_node = node();
        a->sbsp_port = port();
        len = sizeof(*a);
        switch (r(12)) {
            case 0:
                len = socklen_t(r(sizeof(*a)));
                break;
            case 1:
                len = socklen_t(sizeof(*a) + 1 + r(sizeof(ss) - sizeof(*a)));
                break;
            case 2:
                a->sbsp_family = AF_INET;
                break;
            case 3:
                a->sbsp_family = AF_UNSPEC;
                break;
            case 4:
                a->sbsp_zero[r(8)] = uint8_t(1 + r(255));
                break;
            case 5:
                return nullptr;
            case 6:
                return reinterpret_cast<const sockaddr *>(uintptr_t(8));
            case 7:
                a->sbsp_family = sa_family_t(rng_());
                break;
            default:
                break;
        }
        return reinterpret_cast<const sockaddr *>(&ss);
    }

    size_t size() {
        static const size_t sizes[] = {
            0,    1,    2,     7,     64,    1000,        1500,
            4095, 4096, 65535, 65536, 65537, BSP_MSG_MAX, BSP_MSG_MAX + 1};
        if (chance(25))
            return r(BSP_MSG_MAX + 1);
        if (chance(50))
            return r(2048);
        return sizes[r(sizeof(sizes) / sizeof(sizes[0]))];
    }

    int send_flags() {
        static const int flags[] = {0,           MSG_OOB,  MSG_NOSIGNAL, MSG_PEEK,     MSG_TRUNC,
                                    MSG_CONFIRM, MSG_MORE, MSG_EOR,      MSG_ZEROCOPY, MSG_WAITALL,
                                    MSG_FASTOPEN};
        int f = MSG_DONTWAIT | MSG_NOSIGNAL;
        if (chance(30))
            f |= flags[r(sizeof(flags) / sizeof(flags[0]))];
        if (chance(3))
            f |= int(rng_()) & ~(MSG_DONTWAIT | MSG_NOSIGNAL);
        // Blocking calls are bounded by the sockets' SO_SNDTIMEO.
        if (chance(10))
            f &= ~MSG_DONTWAIT;
        return f;
    }

    int recv_flags() {
        static const int flags[] = {0,           MSG_PEEK, MSG_TRUNC,        MSG_ERRQUEUE,
                                    MSG_WAITALL, MSG_OOB,  MSG_CMSG_CLOEXEC, MSG_PEEK | MSG_TRUNC};
        int f = MSG_DONTWAIT;
        if (chance(40))
            f |= flags[r(sizeof(flags) / sizeof(flags[0]))];
        if (chance(3))
            f |= int(rng_()) & ~MSG_DONTWAIT;
        if (chance(10))
            f &= ~MSG_DONTWAIT;
        return f;
    }

    // Gathers len bytes of buf_ into up to 8 iovecs (some bad).
    int iovecs(iovec *iov, size_t len) {
        int n = int(r(9));
        if (n == 0)
            return 0;
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            size_t part = (i == n - 1) ? len - off : r(len - off + 1);
            iov[i].iov_base = buf_.data() + off;
            iov[i].iov_len = part;
            off += part;
        }
        if (chance(3))
            iov[r(n)].iov_base = reinterpret_cast<void *>(uintptr_t(16));
        if (chance(3))
            iov[r(n)].iov_len = size_t(1) << (20 + r(40));
        return n;
    }

    // Control messages for sendmsg: valid BSP_CMSG_SEND, invalid ones.
    size_t control(uint8_t *c, size_t cap) {
        if (!chance(30))
            return 0;
        std::memset(c, 0, cap);
        auto *cm = reinterpret_cast<cmsghdr *>(c);
        cm->cmsg_level = chance(80) ? SOL_BSP : int(r(300));
        cm->cmsg_type = chance(70) ? BSP_CMSG_SEND : int(r(8));
        uint32_t f = chance(70) ? uint32_t(r(4)) : uint32_t(rng_());
        size_t dl = chance(80) ? sizeof(f) : r(16);
        cm->cmsg_len = CMSG_LEN(dl);
        std::memcpy(CMSG_DATA(cm), &f, std::min(sizeof(f), dl));
        size_t total = CMSG_SPACE(dl);
        if (chance(20) && total + CMSG_SPACE(4) <= cap) {
            auto *c2 = reinterpret_cast<cmsghdr *>(c + total);
            c2->cmsg_level = SOL_BSP;
            c2->cmsg_type = BSP_CMSG_SEND;
            c2->cmsg_len = CMSG_LEN(4);
            total += CMSG_SPACE(4);
        }
        if (chance(10))
            cm->cmsg_len = size_t(r(64));
        if (chance(10))
            total = r(total + 1);
        return total;
    }

    void set_bounds(int s) {
        timeval tv{0, 50000};
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        linger lg{1, 1};
        setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }

    void step() {
        op_ = Op(r(OP_COUNT));
        switch (op_) {
            case OP_SOCKET: {
                static const int types[] = {SOCK_RDM,   SOCK_RDM,    SOCK_RDM,
                                            SOCK_DGRAM, SOCK_STREAM, SOCK_SEQPACKET,
                                            SOCK_RAW,   0,           11};
                int type = types[r(sizeof(types) / sizeof(types[0]))];
                if (chance(30))
                    type |= SOCK_NONBLOCK;
                if (chance(30))
                    type |= SOCK_CLOEXEC;
                int proto = chance(85) ? 0 : int(rng_() % 300);
                int s = socket(s_.fam, type, proto);
                result(s, "socket");
                if (s >= 0) {
                    set_bounds(s);
                    int old = s_.slots[r(kSlots)].exchange(s);
                    if (old >= 0)
                        close(old);
                }
                break;
            }
            case OP_CLOSE: {
                int old = s_.slots[r(kSlots)].exchange(-1);
                if (old >= 0)
                    result(close(old), "close");
                break;
            }
            case OP_BIND:
            case OP_CONNECT: {
                sockaddr_storage ss;
                socklen_t len;
                const sockaddr *a = address(ss, len);
                if (op_ == OP_BIND)
                    result(bind(fd(), a, len), "bind");
                else
                    result(connect(fd(), a, len), "connect");
                break;
            }
            case OP_SENDMSG: {
                sockaddr_storage ss;
                socklen_t len = 0;
                const sockaddr *a = chance(80) ? address(ss, len) : nullptr;
                iovec iov[8];
                alignas(cmsghdr) uint8_t c[128];
                msghdr m{};
                m.msg_name = const_cast<sockaddr *>(a);
                m.msg_namelen = a ? len : 0;
                m.msg_iov = iov;
                m.msg_iovlen = size_t(iovecs(iov, size()));
                m.msg_controllen = control(c, sizeof(c));
                m.msg_control = m.msg_controllen ? c : nullptr;
                result(sendmsg(fd(), &m, send_flags()), "sendmsg");
                break;
            }
            case OP_SENDTO: {
                sockaddr_storage ss;
                socklen_t len;
                const sockaddr *a = address(ss, len);
                size_t n = size();
                switch (r(3)) {
                    case 0:
                        result(sendto(fd(), buf_.data(), n, send_flags(), a, len), "sendto");
                        break;
                    case 1:
                        result(send(fd(), buf_.data(), n, send_flags()), "send");
                        break;
                    default:
                        result(write(fd(), buf_.data(), std::min<size_t>(n, 65536)), "write");
                        break;
                }
                break;
            }
            case OP_RECVMSG: {
                sockaddr_storage ss;
                iovec iov[8];
                alignas(cmsghdr) uint8_t c[256];
                msghdr m{};
                m.msg_name = chance(80) ? &ss : nullptr;
                m.msg_namelen = chance(80) ? sizeof(ss) : socklen_t(r(sizeof(ss)));
                m.msg_iov = iov;
                m.msg_iovlen = size_t(iovecs(iov, size()));
                m.msg_control = chance(70) ? c : nullptr;
                m.msg_controllen = chance(70) ? sizeof(c) : r(sizeof(c));
                result(recvmsg(fd(), &m, recv_flags()), "recvmsg");
                break;
            }
            case OP_RECVFROM: {
                sockaddr_storage ss;
                socklen_t len = chance(80) ? sizeof(ss) : socklen_t(r(sizeof(ss)));
                size_t n = size();
                switch (r(3)) {
                    case 0:
                        result(recvfrom(fd(), buf_.data(), n, recv_flags(),
                                        chance(80) ? reinterpret_cast<sockaddr *>(&ss) : nullptr,
                                        &len),
                               "recvfrom");
                        break;
                    case 1:
                        result(recv(fd(), buf_.data(), n, recv_flags()), "recv");
                        break;
                    default: {
                        int s = fd();
                        int fl = fcntl(s, F_GETFL);
                        if (fl >= 0 && (fl & O_NONBLOCK))
                            result(read(s, buf_.data(), n), "read");
                        break;
                    }
                }
                break;
            }
            case OP_SETOPT_BSP: {
                int opt = chance(90) ? int(1 + r(BSP_FOLLOW)) : int(rng_() % 64);
                uint8_t v[64];
                for (auto &b : v)
                    b = uint8_t(chance(50) ? 0 : rng_());
                if (chance(40)) {
                    uint64_t small = r(70000);
                    std::memcpy(v, &small, sizeof(small));
                }
                socklen_t len = chance(60) ? socklen_t(1u << r(5)) : socklen_t(r(sizeof(v) + 1));
                const void *p = chance(95) ? static_cast<const void *>(v)
                                           : reinterpret_cast<const void *>(uintptr_t(24));
                int level = chance(95) ? SOL_BSP : int(r(400));
                result(setsockopt(fd(), level, opt, p, len), "setsockopt SOL_BSP");
                break;
            }
            case OP_GETOPT: {
                uint8_t v[512];
                socklen_t len;
                switch (r(4)) {
                    case 0:
                        len = sizeof(v);
                        break;
                    case 1:
                        len = socklen_t(r(sizeof(v)));
                        break;
                    case 2:
                        len = 0;
                        break;
                    default:
                        len = socklen_t(-int(1 + r(4)));
                        break;
                }
                if (len > sizeof(v) && int(len) > 0)
                    len = sizeof(v);
                int level = chance(70) ? SOL_BSP : SOL_SOCKET;
                int opt = level == SOL_BSP ? int(r(BSP_FOLLOW + 3)) : int(r(80));
                result(getsockopt(fd(), level, opt, v, &len), "getsockopt");
                break;
            }
            case OP_SETOPT_SOCK: {
                static const int opts[] = {
                    SO_SNDBUF,    SO_RCVBUF,    SO_SNDBUFFORCE, SO_RCVBUFFORCE,  SO_LINGER,
                    SO_RCVTIMEO,  SO_SNDTIMEO,  SO_PASSCRED,    SO_PRIORITY,     SO_MARK,
                    SO_RCVLOWAT,  SO_REUSEADDR, SO_KEEPALIVE,   SO_BINDTODEVICE, SO_BROADCAST,
                    SO_TIMESTAMP, SO_ZEROCOPY,  SO_BUSY_POLL};
                int opt = opts[r(sizeof(opts) / sizeof(opts[0]))];
                union {
                    int i;
                    linger lg;
                    timeval tv;
                    char name[16];
                } v{};
                socklen_t len = sizeof(int);
                if (opt == SO_LINGER) {
                    // Always on: without it close() may wait as long as a
                    // busy peer does not read.
                    v.lg = linger{1, int(r(2))};
                    len = sizeof(v.lg);
                } else if (opt == SO_RCVTIMEO || opt == SO_SNDTIMEO) {
                    v.tv = timeval{0, long(1 + r(100000))};  // never 0 (= forever)
                    if (chance(10))
                        v.tv.tv_usec = 2000000;  // EDOM
                    len = sizeof(v.tv);
                } else if (opt == SO_BINDTODEVICE) {
                    std::snprintf(v.name, sizeof(v.name), "%s", chance(50) ? "lo" : "eth0");
                    len = socklen_t(std::strlen(v.name));
                } else {
                    v.i = chance(50) ? int(r(1 << 22)) : int(rng_());
                }
                if (chance(10))
                    len = socklen_t(r(sizeof(v) + 1));
                result(setsockopt(fd(), SOL_SOCKET, opt, &v, len), "setsockopt SOL_SOCKET");
                break;
            }
            case OP_NAME: {
                sockaddr_storage ss;
                socklen_t len = chance(70) ? sizeof(ss) : socklen_t(r(sizeof(sockaddr_bsp) + 1));
                if (chance(50))
                    result(getsockname(fd(), reinterpret_cast<sockaddr *>(&ss), &len),
                           "getsockname");
                else
                    result(getpeername(fd(), reinterpret_cast<sockaddr *>(&ss), &len),
                           "getpeername");
                break;
            }
            case OP_IOCTL: {
                static const unsigned long cmds[] = {SIOCINQ,        SIOCOUTQ,   FIONBIO, FIONREAD,
                                                     SIOCGSTAMP_OLD, SIOCATMARK, 0x89f0};
                const bool listed = chance(90);
                unsigned long cmd = listed ? cmds[r(sizeof(cmds) / sizeof(cmds[0]))]
                                           : (unsigned long)(uint32_t(rng_()) & 0xffff);
                int v = int(r(2));
                // A command AF_BSP does not know goes on to the kernel's generic socket
                // ioctls, which any socket reaches: SIOCBRDELBR (0x89a2) of a bridge that
                // does not exist (the name read from v) answers ENXIO (br_del_bridge).
                result(ioctl(fd(), cmd, &v), "ioctl", listed ? 0 : ENXIO);
                break;
            }
            case OP_SHUTDOWN:
                result(shutdown(fd(), chance(90) ? int(r(3)) : int(rng_())), "shutdown");
                break;
            case OP_POLL: {
                pollfd p[3];
                for (auto &x : p)
                    x = pollfd{fd(), short(POLLIN | POLLOUT | POLLERR | POLLPRI), 0};
                result(poll(p, 3, int(r(3))), "poll");
                break;
            }
            case OP_MMSG: {
                mmsghdr mm[4]{};
                iovec iov[4][8];
                sockaddr_storage ss[4];
                for (int i = 0; i < 4; i++) {
                    socklen_t len = 0;
                    const sockaddr *a = address(ss[i], len);
                    mm[i].msg_hdr.msg_name = const_cast<sockaddr *>(a);
                    mm[i].msg_hdr.msg_namelen = a ? len : 0;
                    mm[i].msg_hdr.msg_iov = iov[i];
                    mm[i].msg_hdr.msg_iovlen = size_t(iovecs(iov[i], r(70000)));
                }
                unsigned n = unsigned(1 + r(4));
                if (chance(50)) {
                    result(sendmmsg(fd(), mm, n, send_flags()), "sendmmsg");
                } else {
                    timespec ts{0, 1000000};
                    result(recvmmsg(fd(), mm, n, recv_flags() | MSG_DONTWAIT, &ts), "recvmmsg");
                }
                break;
            }
            case OP_FCNTL: {
                int s = fd();
                int fl = fcntl(s, F_GETFL);
                if (fl >= 0)
                    result(fcntl(s, F_SETFL, fl ^ O_NONBLOCK), "fcntl");
                break;
            }
            case OP_GROUP: {
                uint32_t count;
                switch (r(6)) {
                    case 0:
                        count = 0;
                        break;
                    case 1:
                        count = BSP_GROUP_MAX + uint32_t(r(3));
                        break;
                    case 2:
                        count = uint32_t(rng_());
                        break;
                    default:
                        count = uint32_t(1 + r(8));
                        break;
                }
                uint32_t real = std::min<uint32_t>(count, 16);
                std::vector<uint8_t> g(sizeof(bsp_group) + 16 * sizeof(bsp_endpoint));
                auto *grp = reinterpret_cast<bsp_group *>(g.data());
                grp->count = count;
                grp->reserved = chance(95) ? 0 : 1;
                for (uint32_t i = 0; i < real; i++) {
                    grp->members[i].node = node();
                    grp->members[i].port = port();
                    grp->members[i].reserved = chance(97) ? 0 : 1;
                }
                if (real > 1 && chance(15))
                    grp->members[real - 1] = grp->members[0];
                socklen_t len = socklen_t(sizeof(bsp_group) + real * sizeof(bsp_endpoint));
                if (chance(15))
                    len = socklen_t(r(g.size() + 1));
                if (chance(70)) {
                    result(setsockopt(fd(), SOL_BSP, BSP_GROUP, g.data(), len), "set BSP_GROUP");
                } else {
                    socklen_t gl = chance(70) ? socklen_t(g.size()) : socklen_t(r(g.size()));
                    result(getsockopt(fd(), SOL_BSP, BSP_GROUP, g.data(), &gl), "get BSP_GROUP");
                }
                break;
            }
            case OP_BARRIER: {
                uint32_t e = chance(70) ? uint32_t(r(8)) : uint32_t(rng_());
                result(setsockopt(fd(), SOL_BSP, BSP_BARRIER_DONE, &e, sizeof(e)),
                       "BSP_BARRIER_DONE");
                break;
            }
            case OP_EXPECT: {
                bsp_expect x{};
                x.peer.node = node();
                x.peer.port = port();
                x.peer.reserved = chance(95) ? 0 : 1;
                x.messages = chance(70) ? uint32_t(r(16)) : uint32_t(rng_());
                x.flags = chance(95) ? (chance(50) ? BSP_EXPECT_SYNC : 0) : uint32_t(rng_());
                x.bytes = chance(70) ? r(1 << 20) : rng_();
                result(setsockopt(fd(), SOL_BSP, BSP_EXPECT, &x, sizeof(x)), "BSP_EXPECT");
                break;
            }
            case OP_COUNT:
                break;
        }
    }
};

// Two fresh sockets still exchange messages byte for byte.
bool sanity(int fam) {
    int a = socket(fam, SOCK_RDM, 0), b = socket(fam, SOCK_RDM, 0);
    CHECK(a >= 0 && b >= 0);
    sockaddr_bsp sa = ktest::addr(BSP_NODE_LOCAL, 0);
    CHECK(bind(a, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0);
    CHECK(bind(b, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0);
    sockaddr_bsp to = ktest::addr(BSP_NODE_LOCAL, ktest::port_of(b));
    for (uint32_t seq = 0; seq < 3; seq++) {
        std::vector<uint8_t> m(1000 + seq * 40000);
        ktest::fill(m, 1, seq);
        CHECK_EQ(sendto(a, m.data(), m.size(), 0, reinterpret_cast<sockaddr *>(&to), sizeof(to)),
                 m.size());
        std::vector<uint8_t> in(m.size() + 10);
        CHECK_EQ(recv(b, in.data(), in.size(), 0), m.size());
        CHECK_EQ(ktest::verify(in.data(), m.size(), 1, seq), -1);
    }
    close(a);
    close(b);
    return ktest::failures() == 0;
}

}  // namespace

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc < 4) {
        std::fprintf(stderr, "usage: bsp_sysfuzz SEED THREADS CALLS [NODE...]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    uint64_t seed = std::strtoull(argv[1], nullptr, 0);
    int threads = std::atoi(argv[2]);
    uint64_t calls = std::strtoull(argv[3], nullptr, 0);
    if (threads < 1 || threads > 64 || calls == 0) {
        std::fprintf(stderr, "bsp_sysfuzz: THREADS 1..64, CALLS > 0\n");
        return 2;
    }
    static Shared s;
    s.fam = ktest::family();
    s.self = ktest::node_id();
    for (int i = 4; i < argc; i++)
        s.nodes.push_back(uint32_t(std::strtoul(argv[i], nullptr, 0)));
    for (auto &slot : s.slots)
        slot = -1;

    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
        pool.emplace_back([t, seed, calls, threads] {
            Worker w(s, seed * 1000003 + uint64_t(t));
            w.run(calls / uint64_t(threads));
        });
    for (auto &t : pool)
        t.join();
    for (auto &slot : s.slots) {
        int old = slot.exchange(-1);
        if (old >= 0)
            close(old);
    }

    uint64_t total = 0;
    for (auto &c : s.ops)
        total += c;
    std::printf("sysfuzz seed %llu: %llu calls (%llu succeeded), %llu unexpected errnos\n",
                (unsigned long long)seed, (unsigned long long)total,
                (unsigned long long)s.ok.load(), (unsigned long long)s.unexpected.load());
    for (int i = 0; i < OP_COUNT; i++)
        std::printf("  %-24s %llu\n", kOpNames[i], (unsigned long long)s.ops[i].load());
    for (int e = 0; e < kMaxErrno; e++)
        if (s.errnos[e])
            std::printf("  errno %-16s %llu\n", strerrorname_np(e),
                        (unsigned long long)s.errnos[e].load());
    bool ok = sanity(s.fam);
    std::printf("sysfuzz: %s\n", ok && s.unexpected == 0 ? "ok" : "FAILED");
    return ok && s.unexpected == 0 ? 0 : 1;
}
