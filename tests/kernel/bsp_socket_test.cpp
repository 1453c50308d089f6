// Same-node semantics of AF_BSP sockets (one namespace, no rail): run in
// the VM by tests/vm/cases/kernel_socket.sh with af_bsp.ko loaded.
//
//   bsp_socket_test            run every test
//   bsp_socket_test NAME...    run the named tests
//
// Prints "ok NAME" / "not ok NAME" per test; exits 0 only if all passed.
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ktest.hpp"

using ktest::addr;
using ktest::bound_socket;
using ktest::port_of;

namespace {

sockaddr *sa(sockaddr_bsp *a) {
    return reinterpret_cast<sockaddr *>(a);
}

ssize_t send_to(int fd, const void *buf, size_t len, uint16_t port, int flags = 0,
                uint32_t node = BSP_NODE_LOCAL) {
    sockaddr_bsp a = addr(node, port);
    return sendto(fd, buf, len, flags, sa(&a), sizeof(a));
}

void test_create() {
    int fd = socket(ktest::family(), SOCK_RDM, 0);
    CHECK(fd >= 0);
    close(fd);
    CHECK_ERRNO(socket(ktest::family(), SOCK_STREAM, 0), ESOCKTNOSUPPORT);
    CHECK_ERRNO(socket(ktest::family(), SOCK_DGRAM, 0), ESOCKTNOSUPPORT);
    CHECK_ERRNO(socket(ktest::family(), SOCK_RDM, 1), EPROTONOSUPPORT);
}

void test_bind() {
    int a = socket(ktest::family(), SOCK_RDM, 0);
    int b = socket(ktest::family(), SOCK_RDM, 0);
    sockaddr_bsp x = addr(BSP_NODE_LOCAL, 4242);
    CHECK_EQ(bind(a, sa(&x), sizeof(x)), 0);
    CHECK_ERRNO(bind(a, sa(&x), sizeof(x)), EINVAL);  // already bound
    CHECK_ERRNO(bind(b, sa(&x), sizeof(x)), EADDRINUSE);
    CHECK_ERRNO(bind(b, sa(&x), sizeof(x) - 1), EINVAL);
    sockaddr_bsp other = addr(ktest::node_id() + 1, 4243);
    CHECK_ERRNO(bind(b, sa(&other), sizeof(other)), EADDRNOTAVAIL);
    sockaddr_bsp wrong = x;
    wrong.sbsp_family = AF_INET;
    wrong.sbsp_port = 4244;
    CHECK_ERRNO(bind(b, sa(&wrong), sizeof(wrong)), EAFNOSUPPORT);
    sockaddr_bsp dirty = addr(BSP_NODE_LOCAL, 4245);
    dirty.sbsp_zero[3] = 1;
    CHECK_ERRNO(bind(b, sa(&dirty), sizeof(dirty)), EINVAL);
    // explicit own node id works like BSP_NODE_LOCAL
    sockaddr_bsp own = addr(ktest::node_id(), 4246);
    CHECK_EQ(bind(b, sa(&own), sizeof(own)), 0);

    sockaddr_bsp got{};
    socklen_t len = sizeof(got);
    CHECK_EQ(getsockname(a, sa(&got), &len), 0);
    CHECK_EQ(len, sizeof(got));
    CHECK_EQ(got.sbsp_family, ktest::family());
    CHECK_EQ(got.sbsp_port, 4242);
    CHECK_EQ(got.sbsp_node, ktest::node_id());
    close(a);
    close(b);
    // the port is free again after close
    int c = socket(ktest::family(), SOCK_RDM, 0);
    CHECK_EQ(bind(c, sa(&x), sizeof(x)), 0);
    close(c);
}

void test_autobind() {
    int a = bound_socket(0);
    int b = bound_socket(0);
    uint16_t pa = port_of(a), pb = port_of(b);
    CHECK(pa >= BSP_PORT_AUTO_MIN);
    CHECK(pb >= BSP_PORT_AUTO_MIN);
    CHECK(pa != pb);
    // an unbound socket gets a port on its first send
    int c = socket(ktest::family(), SOCK_RDM, 0);
    CHECK_EQ(port_of(c), 0);
    CHECK_EQ(send_to(c, "x", 1, pa), 1);
    uint16_t pc = port_of(c);
    CHECK(pc >= BSP_PORT_AUTO_MIN);
    char buf[4];
    sockaddr_bsp from{};
    socklen_t fl = sizeof(from);
    CHECK_EQ(recvfrom(a, buf, sizeof(buf), 0, sa(&from), &fl), 1);
    CHECK_EQ(from.sbsp_port, pc);
    CHECK_EQ(from.sbsp_node, ktest::node_id());
    close(a);
    close(b);
    close(c);
}

// Every size from 0 up to BSP_MSG_MAX in a ladder around page and chunk
// boundaries, byte-exact, with the sender's address.
void test_sizes() {
    int rx = bound_socket(0);
    int tx = bound_socket(0);
    int big = 4 << 20;
    CHECK_EQ(setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big)), 0);
    std::vector<size_t> sizes = {0,   1,    2,    3,    7,    8,    63,   64,
                                 100, 1000, 1356, 1428, 1500, 4095, 4096, 4097};
    for (size_t s : {size_t(65535), size_t(65536), size_t(65537), size_t(131072), size_t(200000),
                     size_t(524288), size_t(BSP_MSG_MAX - 1), size_t(BSP_MSG_MAX)})
        sizes.push_back(s);
    std::vector<uint8_t> out, in(BSP_MSG_MAX + 16);
    uint32_t seq = 0;
    for (size_t s : sizes) {
        out.resize(s);
        ktest::fill(out, 7, seq);
        CHECK_EQ(send_to(tx, out.data(), s, port_of(rx)), s);
        sockaddr_bsp from{};
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(rx, in.data(), in.size(), 0, sa(&from), &fl);
        CHECK_EQ(n, s);
        CHECK_EQ(ktest::verify(in.data(), s, 7, seq), -1);
        CHECK_EQ(from.sbsp_port, port_of(tx));
        ++seq;
    }
    std::vector<uint8_t> too(BSP_MSG_MAX + 1);
    CHECK_ERRNO(send_to(tx, too.data(), too.size(), port_of(rx)), EMSGSIZE);
    close(rx);
    close(tx);
}

void test_scatter_gather() {
    int rx = bound_socket(0);
    int tx = bound_socket(0);
    std::vector<uint8_t> msg(10000);
    ktest::fill(msg, 1, 1);
    iovec iov[4] = {
        {msg.data(), 1}, {msg.data() + 1, 4999}, {msg.data() + 5000, 0}, {msg.data() + 5000, 5000}};
    sockaddr_bsp to = addr(BSP_NODE_LOCAL, port_of(rx));
    msghdr mh{};
    mh.msg_name = &to;
    mh.msg_namelen = sizeof(to);
    mh.msg_iov = iov;
    mh.msg_iovlen = 4;
    CHECK_EQ(sendmsg(tx, &mh, 0), 10000);
    std::vector<uint8_t> a(3000), b(7000);
    iovec riov[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
    msghdr rh{};
    rh.msg_iov = riov;
    rh.msg_iovlen = 2;
    CHECK_EQ(recvmsg(rx, &rh, 0), 10000);
    a.insert(a.end(), b.begin(), b.end());
    CHECK_EQ(ktest::verify(a.data(), a.size(), 1, 1), -1);
    close(rx);
    close(tx);
}

void test_peek_trunc() {
    int rx = bound_socket(0);
    int tx = bound_socket(0);
    std::vector<uint8_t> m1(100), m2(50);
    ktest::fill(m1, 2, 1);
    ktest::fill(m2, 2, 2);
    CHECK_EQ(send_to(tx, m1.data(), m1.size(), port_of(rx)), 100);
    CHECK_EQ(send_to(tx, m2.data(), m2.size(), port_of(rx)), 50);
    int inq = -1;
    CHECK_EQ(ioctl(rx, SIOCINQ, &inq), 0);
    CHECK_EQ(inq, 100);
    uint8_t buf[200];
    CHECK_EQ(recv(rx, buf, sizeof(buf), MSG_PEEK), 100);
    CHECK_EQ(ktest::verify(buf, 100, 2, 1), -1);
    // MSG_TRUNC with a short buffer: real length returned, message consumed
    msghdr mh{};
    iovec iov = {buf, 10};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    CHECK_EQ(recvmsg(rx, &mh, MSG_TRUNC), 100);
    CHECK(mh.msg_flags & MSG_TRUNC);
    CHECK_EQ(ktest::verify(buf, 10, 2, 1), -1);
    // without MSG_TRUNC: the copied length, flag still set, rest discarded
    CHECK_EQ(send_to(tx, m1.data(), m1.size(), port_of(rx)), 100);
    mh.msg_flags = 0;
    iov = {buf, 60};
    CHECK_EQ(recvmsg(rx, &mh, 0), 50);  // m2 first: order kept
    CHECK(!(mh.msg_flags & MSG_TRUNC));
    CHECK_EQ(ktest::verify(buf, 50, 2, 2), -1);
    mh.msg_flags = 0;
    iov = {buf, 20};
    CHECK_EQ(recvmsg(rx, &mh, 0), 20);
    CHECK(mh.msg_flags & MSG_TRUNC);
    CHECK_ERRNO(recv(rx, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
    close(rx);
    close(tx);
}

void test_nonblock_timeout() {
    int rx = bound_socket(0);
    char c;
    CHECK_ERRNO(recv(rx, &c, 1, MSG_DONTWAIT), EAGAIN);
    timeval tv = {0, 200000};
    CHECK_EQ(setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
    CHECK_ERRNO(recv(rx, &c, 1, 0), EAGAIN);
    int fl = fcntl(rx, F_GETFL);
    CHECK_EQ(fcntl(rx, F_SETFL, fl | O_NONBLOCK), 0);
    CHECK_ERRNO(recv(rx, &c, 1, 0), EAGAIN);
    close(rx);
}

void test_errors() {
    int a = bound_socket(0);
    char c = 'x';
    CHECK_ERRNO(send(a, &c, 1, 0), EDESTADDRREQ);
    sockaddr_bsp peer{};
    socklen_t pl = sizeof(peer);
    CHECK_ERRNO(getpeername(a, sa(&peer), &pl), ENOTCONN);
    // no socket on that port of this node
    int b = bound_socket(0);
    uint16_t gone = port_of(b);
    close(b);
    CHECK_ERRNO(send_to(a, &c, 1, gone), ECONNREFUSED);
    // a node nobody knows
    CHECK_ERRNO(send_to(a, &c, 1, 5, 0, 0x7fff1234), EHOSTUNREACH);
    sockaddr_bsp far = addr(0x7fff1234, 5);
    CHECK_ERRNO(connect(a, sa(&far), sizeof(far)), EHOSTUNREACH);
    // port 0 is no destination
    CHECK_ERRNO(send_to(a, &c, 1, 0), EINVAL);
    CHECK_ERRNO(send(a, &c, 1, MSG_OOB), EOPNOTSUPP);
    CHECK_ERRNO(listen(a, 1), EOPNOTSUPP);
    CHECK_ERRNO(accept(a, nullptr, nullptr), EOPNOTSUPP);
    int one = 1;
    CHECK_ERRNO(setsockopt(a, SOL_BSP, 999, &one, sizeof(one)), ENOPROTOOPT);
    CHECK_ERRNO(setsockopt(a, IPPROTO_TCP, 1, &one, sizeof(one)), ENOPROTOOPT);
    close(a);
}

void test_connect() {
    int rx = bound_socket(0);
    int tx = socket(ktest::family(), SOCK_RDM, 0);
    sockaddr_bsp to = addr(BSP_NODE_LOCAL, port_of(rx));
    CHECK_EQ(connect(tx, sa(&to), sizeof(to)), 0);
    CHECK(port_of(tx) >= BSP_PORT_AUTO_MIN);  // connect binds
    sockaddr_bsp peer{};
    socklen_t pl = sizeof(peer);
    CHECK_EQ(getpeername(tx, sa(&peer), &pl), 0);
    CHECK_EQ(peer.sbsp_port, port_of(rx));
    sockaddr_bsp self{};
    socklen_t sl = sizeof(self);
    CHECK_EQ(getsockname(tx, sa(&self), &sl), 0);
    CHECK_EQ(peer.sbsp_node, self.sbsp_node);  // BSP_NODE_LOCAL is resolved
    CHECK_EQ(send(tx, "hello", 5, 0), 5);
    char buf[8];
    CHECK_EQ(recv(rx, buf, sizeof(buf), 0), 5);
    CHECK(memcmp(buf, "hello", 5) == 0);
    // an explicit address still overrides the default peer
    int rx2 = bound_socket(0);
    CHECK_EQ(send_to(tx, "x", 1, port_of(rx2)), 1);
    CHECK_EQ(recv(rx2, buf, sizeof(buf), 0), 1);
    sockaddr un{};
    un.sa_family = AF_UNSPEC;
    CHECK_EQ(connect(tx, &un, sizeof(un)), 0);
    CHECK_ERRNO(send(tx, "x", 1, 0), EDESTADDRREQ);
    close(rx);
    close(rx2);
    close(tx);
}

void test_shutdown() {
    int rx = bound_socket(0);
    int tx = bound_socket(0);
    signal(SIGPIPE, SIG_IGN);
    CHECK_EQ(shutdown(tx, SHUT_WR), 0);
    CHECK_ERRNO(send_to(tx, "x", 1, port_of(rx)), EPIPE);
    CHECK_EQ(shutdown(rx, SHUT_RD), 0);
    char c;
    CHECK_EQ(recv(rx, &c, 1, 0), 0);  // end of input, not a hang
    int tx2 = bound_socket(0);
    CHECK_ERRNO(send_to(tx2, "x", 1, port_of(rx)), ECONNREFUSED);
    close(rx);
    close(tx);
    close(tx2);
}

void test_poll() {
    int rx = bound_socket(0);
    int tx = bound_socket(0);
    pollfd p = {rx, POLLIN | POLLOUT, 0};
    CHECK_EQ(poll(&p, 1, 0), 1);
    CHECK_EQ(p.revents, POLLOUT);
    CHECK_EQ(send_to(tx, "x", 1, port_of(rx)), 1);
    p.revents = 0;
    CHECK_EQ(poll(&p, 1, 0), 1);
    CHECK_EQ(p.revents, POLLIN | POLLOUT);
    char c;
    CHECK_EQ(recv(rx, &c, 1, 0), 1);
    // a blocked poll wakes when a message arrives
    pid_t pid = fork();
    if (pid == 0) {
        usleep(100000);
        _exit(send_to(tx, "y", 1, port_of(rx)) == 1 ? 0 : 1);
    }
    pollfd q = {rx, POLLIN, 0};
    CHECK_EQ(poll(&q, 1, 10000), 1);
    CHECK_EQ(q.revents, POLLIN);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(rx);
    close(tx);
}

volatile sig_atomic_t g_alarm = 0;
void on_alarm(int) {
    g_alarm = 1;
}

void test_signal() {
    int rx = bound_socket(0);
    struct sigaction sa_ {};
    sa_.sa_handler = on_alarm;  // no SA_RESTART: the call fails with EINTR
    sigaction(SIGALRM, &sa_, nullptr);
    alarm(1);
    char c;
    CHECK_ERRNO(recv(rx, &c, 1, 0), EINTR);
    CHECK_EQ(g_alarm, 1);
    // a full receiver blocks a sender in sendmsg; a signal interrupts it
    int tx = bound_socket(0);
    int small = 4096;
    CHECK_EQ(setsockopt(tx, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
    CHECK_EQ(setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    std::vector<uint8_t> m(8000);
    int sent = 0;
    while (send_to(tx, m.data(), m.size(), port_of(rx), MSG_DONTWAIT) > 0)
        ++sent;
    CHECK_EQ(errno, EAGAIN);
    CHECK(sent >= 1);
    g_alarm = 0;
    alarm(1);
    CHECK_ERRNO(send_to(tx, m.data(), m.size(), port_of(rx)), EINTR);
    CHECK_EQ(g_alarm, 1);
    signal(SIGALRM, SIG_DFL);
    close(rx);
    close(tx);
}

// A slow receiver throttles its sender through the sender's send buffer;
// nothing is lost, nothing duplicated, order kept.
void test_flow_control() {
    int rx = bound_socket(0);
    int tx = bound_socket(0);
    int small = 8192;
    CHECK_EQ(setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    CHECK_EQ(setsockopt(tx, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
    std::vector<uint8_t> m(3000);
    uint32_t sent = 0;
    for (;;) {
        ktest::fill(m, 3, sent);
        if (send_to(tx, m.data(), m.size(), port_of(rx), MSG_DONTWAIT) < 0)
            break;
        ++sent;
    }
    CHECK_EQ(errno, EAGAIN);
    CHECK(sent >= 2);
    pollfd p = {tx, POLLOUT, 0};
    CHECK_EQ(poll(&p, 1, 0), 0);  // no POLLOUT while the send buffer is full
    std::vector<uint8_t> in(4000);
    for (uint32_t i = 0; i < sent; ++i) {
        CHECK_EQ(recv(rx, in.data(), in.size(), MSG_DONTWAIT), 3000);
        CHECK_EQ(ktest::verify(in.data(), 3000, 3, i), -1);
    }
    CHECK_ERRNO(recv(rx, in.data(), in.size(), MSG_DONTWAIT), EAGAIN);
    CHECK_EQ(poll(&p, 1, 0), 1);  // writable again
    // blocking sender and reader in two processes: 2000 messages exactly once
    const uint32_t n = 2000;
    pid_t pid = fork();
    if (pid == 0) {
        for (uint32_t i = 0; i < n; ++i) {
            ktest::fill(m, 4, i);
            if (send_to(tx, m.data(), 100 + i % 2900, port_of(rx)) != ssize_t(100 + i % 2900))
                _exit(1);
        }
        _exit(0);
    }
    for (uint32_t i = 0; i < n; ++i) {
        ssize_t r = recv(rx, in.data(), in.size(), 0);
        CHECK_EQ(r, 100 + i % 2900);
        if (r > 0)
            CHECK_EQ(ktest::verify(in.data(), size_t(r), 4, i), -1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_ERRNO(recv(rx, in.data(), in.size(), MSG_DONTWAIT), EAGAIN);
    close(rx);
    close(tx);
}

// Several processes of one node send to one receiver: every message
// exactly once, per-sender order kept.
void test_many_senders() {
    const int senders = 6;
    const uint32_t per = 300;
    int rx = bound_socket(0);
    std::vector<pid_t> pids;
    for (int s = 0; s < senders; ++s) {
        pid_t pid = fork();
        if (pid == 0) {
            int tx = bound_socket(uint16_t(5000 + s));
            std::vector<uint8_t> m;
            for (uint32_t i = 0; i < per; ++i) {
                m.resize(1 + (i * 37 + s) % 5000);
                ktest::fill(m, uint32_t(s), i);
                if (send_to(tx, m.data(), m.size(), port_of(rx)) != ssize_t(m.size()))
                    _exit(1);
            }
            _exit(0);
        }
        pids.push_back(pid);
    }
    std::map<uint16_t, uint32_t> next;
    std::vector<uint8_t> in(8000);
    for (uint32_t k = 0; k < senders * per; ++k) {
        sockaddr_bsp from{};
        socklen_t fl = sizeof(from);
        ssize_t r = recvfrom(rx, in.data(), in.size(), 0, sa(&from), &fl);
        int s = from.sbsp_port - 5000;
        CHECK(s >= 0 && s < senders);
        if (s < 0 || s >= senders)
            break;
        uint32_t i = next[from.sbsp_port]++;
        CHECK_EQ(r, 1 + (i * 37 + uint32_t(s)) % 5000);
        if (r > 0)
            CHECK_EQ(ktest::verify(in.data(), size_t(r), uint32_t(s), i), -1);
    }
    for (pid_t p : pids) {
        int st = 0;
        waitpid(p, &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    for (int s = 0; s < senders; ++s)
        CHECK_EQ(next[uint16_t(5000 + s)], per);
    CHECK_ERRNO(recv(rx, in.data(), in.size(), MSG_DONTWAIT), EAGAIN);
    close(rx);
}

// BSP_CHANNELS sizes the channel table before bind: a group with more remote members
// than the module's max_chans is refused (ENOBUFS) unless the socket asked for more.
void test_channels() {
    unsigned def = 0;
    FILE *f = std::fopen("/sys/module/af_bsp/parameters/max_chans", "r");
    CHECK(f != nullptr);
    if (f) {
        CHECK_EQ(std::fscanf(f, "%u", &def), 1);
        std::fclose(f);
    }
    const uint32_t members = def + 4;
    std::vector<uint8_t> g(sizeof(bsp_group) + members * sizeof(bsp_endpoint));
    auto *grp = reinterpret_cast<bsp_group *>(g.data());
    grp->count = members;
    for (uint32_t i = 0; i < members; ++i)
        grp->members[i] = {1000, uint16_t(100 + i), 0};  // a remote node: one channel each

    int a = socket(ktest::family(), SOCK_RDM, 0);
    uint32_t v = 0;
    socklen_t vl = sizeof(v);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_CHANNELS, &v, &vl), 0);
    CHECK_EQ(vl, sizeof(v));
    CHECK_EQ(v, def);
    v = 0;
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_CHANNELS, &v, sizeof(v)), EINVAL);
    v = BSP_GROUP_MAX + 1;
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_CHANNELS, &v, sizeof(v)), EINVAL);
    v = members;
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_CHANNELS, &v, sizeof(uint16_t)), EINVAL);
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_CHANNELS, &v, sizeof(v)), 0);
    v = 0;
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_CHANNELS, &v, &vl), 0);
    CHECK_EQ(v, members);
    sockaddr_bsp any = addr(BSP_NODE_LOCAL, BSP_PORT_ANY);
    CHECK_EQ(bind(a, sa(&any), sizeof(any)), 0);
    v = 0;
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_CHANNELS, &v, &vl), 0);
    CHECK_EQ(v, members);
    v = 2 * members;
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_CHANNELS, &v, sizeof(v)), EBUSY);
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_GROUP, g.data(), socklen_t(g.size())), 0);
    close(a);

    int b = bound_socket(0);
    CHECK_ERRNO(setsockopt(b, SOL_BSP, BSP_GROUP, g.data(), socklen_t(g.size())), ENOBUFS);
    close(b);

    // The same group set before bind: bind fails with ENOBUFS and leaves the socket unbound,
    // its port free for another socket (and for this one once the group fits).
    int c = socket(ktest::family(), SOCK_RDM, 0);
    CHECK_EQ(setsockopt(c, SOL_BSP, BSP_GROUP, g.data(), socklen_t(g.size())), 0);
    sockaddr_bsp fixed = addr(BSP_NODE_LOCAL, 9931);
    CHECK_ERRNO(bind(c, sa(&fixed), sizeof(fixed)), ENOBUFS);
    CHECK_EQ(port_of(c), 0);
    int d = socket(ktest::family(), SOCK_RDM, 0);
    CHECK_EQ(bind(d, sa(&fixed), sizeof(fixed)), 0);
    close(d);
    v = members;
    CHECK_EQ(setsockopt(c, SOL_BSP, BSP_CHANNELS, &v, sizeof(v)), 0);
    CHECK_EQ(bind(c, sa(&fixed), sizeof(fixed)), 0);
    CHECK_EQ(port_of(c), 9931);
    close(c);
}

// BSP_CHANNELS is a ceiling, not an allocation: bind holds about 12 bytes per channel of the
// ceiling and a group of BSP_GROUP_MAX remote members opens no channel. (Each of these sockets
// preallocated 219 MB before: 16 of them do not fit in the VM's 2 GiB.)
void test_channel_ceiling() {
    auto avail_kb = [] {
        long kb = -1;
        FILE *m = std::fopen("/proc/meminfo", "r");
        char line[128];
        while (m && std::fgets(line, sizeof line, m))
            if (std::sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
                break;
        if (m)
            std::fclose(m);
        return kb;
    };
    const long before = avail_kb();
    std::vector<uint8_t> g(sizeof(bsp_group) + BSP_GROUP_MAX * sizeof(bsp_endpoint));
    auto *grp = reinterpret_cast<bsp_group *>(g.data());
    grp->count = BSP_GROUP_MAX;
    for (uint32_t i = 0; i < BSP_GROUP_MAX; ++i)
        grp->members[i] = {1000 + i / 1000, uint16_t(100 + i % 1000), 0};
    std::vector<int> fds;
    for (int i = 0; i < 16; ++i) {
        int s = socket(ktest::family(), SOCK_RDM, 0);
        CHECK(s >= 0);
        uint32_t v = BSP_GROUP_MAX;
        CHECK_EQ(setsockopt(s, SOL_BSP, BSP_CHANNELS, &v, sizeof(v)), 0);
        sockaddr_bsp any = addr(BSP_NODE_LOCAL, BSP_PORT_ANY);
        CHECK_EQ(bind(s, sa(&any), sizeof(any)), 0);
        CHECK_EQ(setsockopt(s, SOL_BSP, BSP_GROUP, g.data(), socklen_t(g.size())), 0);
        fds.push_back(s);
    }
    const long after = avail_kb();
    std::printf(
        "16 bound sockets with BSP_CHANNELS %u and a group of %u remote members: "
        "MemAvailable %ld kB -> %ld kB\n",
        BSP_GROUP_MAX, BSP_GROUP_MAX, before, after);
    for (int s : fds)
        close(s);
}

void test_superstep_options() {
    int a = bound_socket(0);
    int b = bound_socket(0);
    uint32_t e = 1;
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_BARRIER_DONE, &e, sizeof(e)), ENOTCONN);  // no group
    int follow = 1;
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_FOLLOW, &follow, sizeof(follow)), ENOTCONN);
    // struct bsp_group with two members, as user space lays it out
    struct Group {
        uint32_t count, reserved;
        bsp_endpoint m[2];
    };
    static_assert(sizeof(Group) == sizeof(bsp_group) + 2 * sizeof(bsp_endpoint));
    Group grp{};
    grp.count = 2;
    grp.m[0] = {BSP_NODE_LOCAL, port_of(b), 0};
    grp.m[1] = {BSP_NODE_LOCAL, port_of(a), 0};
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_GROUP, &grp, sizeof(grp)), 0);
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_GROUP, &grp, sizeof(grp) - 1), EINVAL);
    Group dup = grp;
    dup.m[1] = dup.m[0];
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_GROUP, &dup, sizeof(dup)), EINVAL);
    Group got{};
    socklen_t gl = sizeof(got);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_GROUP, &got, &gl), 0);
    CHECK_EQ(gl, sizeof(got));
    CHECK_EQ(got.count, 2);
    // members come back sorted by (node, port)
    CHECK(got.m[0].port < got.m[1].port);
    socklen_t small = sizeof(bsp_group);
    CHECK_ERRNO(getsockopt(a, SOL_BSP, BSP_GROUP, &got, &small), ERANGE);
    CHECK_EQ(small, sizeof(got));

    uint32_t epoch = 99;
    socklen_t el = sizeof(epoch);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_EPOCH, &epoch, &el), 0);
    CHECK_EQ(epoch, 0);
    e = 1;
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_BARRIER_DONE, &e, sizeof(e)), 0);
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_BARRIER_DONE, &e, sizeof(e)), EINVAL);
    e = 3;
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_BARRIER_DONE, &e, sizeof(e)), 0);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_EPOCH, &epoch, &el), 0);
    CHECK_EQ(epoch, 3);

    // BSP_FOLLOW: set after a barrier, read back, cleared by the next barrier
    int fv = -1;
    socklen_t fl = sizeof(fv);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_FOLLOW, &fv, &fl), 0);
    CHECK_EQ(fv, 0);
    follow = 7;  // any non-zero value
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_FOLLOW, &follow, sizeof(follow)), 0);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_FOLLOW, &fv, &fl), 0);
    CHECK_EQ(fv, 1);
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_FOLLOW, &follow, 2), EINVAL);
    e = 4;
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_BARRIER_DONE, &e, sizeof(e)), 0);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_FOLLOW, &fv, &fl), 0);
    CHECK_EQ(fv, 0);
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_FOLLOW, &follow, sizeof(follow)), 0);
    follow = 0;
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_FOLLOW, &follow, sizeof(follow)), 0);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_FOLLOW, &fv, &fl), 0);
    CHECK_EQ(fv, 0);

    bsp_expect ex{};
    ex.peer = {BSP_NODE_LOCAL, port_of(b), 0};
    ex.messages = 4;
    ex.bytes = 4096;
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_EXPECT, &ex, sizeof(ex)), 0);
    ex.flags = BSP_EXPECT_SYNC;  // barrier traffic
    ex.messages = 1;
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_EXPECT, &ex, sizeof(ex)), 0);
    ex.flags = 0x2;  // unknown flag
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_EXPECT, &ex, sizeof(ex)), EINVAL);
    ex.flags = 0;
    ex.peer.port = 1;  // not a member
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_EXPECT, &ex, sizeof(ex)), ESRCH);

    uint64_t rate = 1000000, r2 = 0;
    socklen_t rl = sizeof(r2);
    CHECK_EQ(setsockopt(a, SOL_BSP, BSP_PACING_RATE, &rate, sizeof(rate)), 0);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_PACING_RATE, &r2, &rl), 0);
    CHECK_EQ(r2, 1000000);

    // the epoch travels with each message (BSP_CMSG_EPOCH)
    int on = 1;
    CHECK_EQ(setsockopt(b, SOL_BSP, BSP_RECVEPOCH, &on, sizeof(on)), 0);
    CHECK_EQ(send_to(a, "z", 1, port_of(b)), 1);
    char buf[4];
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(uint32_t))];
    iovec iov = {buf, sizeof(buf)};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof(cbuf);
    CHECK_EQ(recvmsg(b, &mh, 0), 1);
    cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    CHECK(cm != nullptr);
    if (cm) {
        CHECK_EQ(cm->cmsg_level, SOL_BSP);
        CHECK_EQ(cm->cmsg_type, BSP_CMSG_EPOCH);
        uint32_t got_epoch;
        memcpy(&got_epoch, CMSG_DATA(cm), sizeof(got_epoch));
        CHECK_EQ(got_epoch, 4);  // the last BSP_BARRIER_DONE above
    }
    // send flags travel as a control message; unknown flags are refused
    uint32_t sflags = BSP_SEND_LAST | BSP_SEND_SYNC;
    alignas(cmsghdr) char sbuf[CMSG_SPACE(sizeof(uint32_t))] = {};
    sockaddr_bsp to = addr(BSP_NODE_LOCAL, port_of(b));
    msghdr sh{};
    sh.msg_name = &to;
    sh.msg_namelen = sizeof(to);
    sh.msg_iov = &iov;
    sh.msg_iovlen = 1;
    sh.msg_control = sbuf;
    sh.msg_controllen = sizeof(sbuf);
    cmsghdr *sc = CMSG_FIRSTHDR(&sh);
    sc->cmsg_level = SOL_BSP;
    sc->cmsg_type = BSP_CMSG_SEND;
    sc->cmsg_len = CMSG_LEN(sizeof(uint32_t));
    memcpy(CMSG_DATA(sc), &sflags, sizeof(sflags));
    CHECK_EQ(sendmsg(a, &sh, 0), 4);
    sflags = 0x80;
    memcpy(CMSG_DATA(sc), &sflags, sizeof(sflags));
    CHECK_ERRNO(sendmsg(a, &sh, 0), EINVAL);

    bsp_sock_stats st{};
    socklen_t sl = sizeof(st);
    CHECK_EQ(getsockopt(a, SOL_BSP, BSP_SOCK_STATS, &st, &sl), 0);
    CHECK_EQ(st.tx_msgs, 2);
    CHECK_EQ(st.tx_bytes, 5);
    CHECK_EQ(st.tx_local_msgs, 2);
    CHECK_EQ(st.tx_remote_msgs, 0);
    CHECK_EQ(getsockopt(b, SOL_BSP, BSP_SOCK_STATS, &st, &sl), 0);
    CHECK_EQ(st.rx_msgs, 1);
    CHECK_EQ(st.rx_bytes, 1);
    CHECK_ERRNO(setsockopt(a, SOL_BSP, BSP_SOCK_STATS, &st, sl), EPERM);
    close(a);
    close(b);
}

// close() with messages queued on both sides frees everything.
void test_close_with_data() {
    int rx = bound_socket(0);
    int tx = bound_socket(0);
    int small = 4096;
    CHECK_EQ(setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    std::vector<uint8_t> m(1000);
    for (int i = 0; i < 20; ++i)
        CHECK_EQ(send_to(tx, m.data(), m.size(), port_of(rx), MSG_DONTWAIT), 1000);
    close(rx);  // queued and pending messages released
    int out = -1;
    CHECK_EQ(ioctl(tx, SIOCOUTQ, &out), 0);
    CHECK_EQ(out, 0);  // the sender's buffer is free again
    close(tx);
}

// sock_diag lists the namespace's AF_BSP sockets with their attributes.
void test_diag() {
    int a = bound_socket(0);
    int b = bound_socket(0);
    CHECK_EQ(send_to(a, "abc", 3, port_of(b)), 3);
    int nl = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);
    CHECK(nl >= 0);
    struct {
        nlmsghdr h;
        bsp_diag_req r;
    } req{};
    req.h.nlmsg_len = sizeof(req);
    req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.r.sdiag_family = uint8_t(ktest::family());
    req.r.bdiag_show = BSP_DIAG_SHOW_STATS | BSP_DIAG_SHOW_SUPERSTEP | BSP_DIAG_SHOW_MEMINFO;
    CHECK_EQ(send(nl, &req, sizeof(req), 0), sizeof(req));
    std::vector<char> buf(65536);
    int seen_a = 0, seen_b = 0, total = 0;
    uint32_t a_ino = 0, a_cookie[2] = {0, 0};
    bool done = false;
    while (!done) {
        ssize_t n = recv(nl, buf.data(), buf.size(), 0);
        CHECK(n > 0);
        if (n <= 0)
            break;
        for (nlmsghdr *h = reinterpret_cast<nlmsghdr *>(buf.data()); NLMSG_OK(h, size_t(n));
             h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_DONE) {
                done = true;
                break;
            }
            CHECK_EQ(h->nlmsg_type, SOCK_DIAG_BY_FAMILY);
            auto *m = static_cast<bsp_diag_msg *>(NLMSG_DATA(h));
            ++total;
            CHECK_EQ(m->bdiag_family, ktest::family());
            CHECK_EQ(m->bdiag_type, SOCK_RDM);
            CHECK_EQ(m->bdiag_node, ktest::node_id());
            bsp_sock_stats st{};
            bool have_stats = false;
            int alen = int(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
            for (nlattr *at = reinterpret_cast<nlattr *>(reinterpret_cast<char *>(m) +
                                                         NLMSG_ALIGN(sizeof(*m)));
                 alen >= int(sizeof(nlattr)) && at->nla_len >= sizeof(nlattr) &&
                 at->nla_len <= alen;
                 alen -= NLA_ALIGN(at->nla_len),
                        at = reinterpret_cast<nlattr *>(reinterpret_cast<char *>(at) +
                                                        NLA_ALIGN(at->nla_len))) {
                if ((at->nla_type & NLA_TYPE_MASK) == BSP_DIAG_STATS &&
                    at->nla_len == NLA_HDRLEN + sizeof(st)) {
                    memcpy(&st, reinterpret_cast<char *>(at) + NLA_HDRLEN, sizeof(st));
                    have_stats = true;
                }
            }
            CHECK(have_stats);
            if (m->bdiag_port == port_of(a)) {
                ++seen_a;
                a_ino = m->bdiag_ino;
                a_cookie[0] = m->bdiag_cookie[0];
                a_cookie[1] = m->bdiag_cookie[1];
                CHECK_EQ(st.tx_msgs, 1);
                CHECK_EQ(st.tx_bytes, 3);
            }
            if (m->bdiag_port == port_of(b)) {
                ++seen_b;
                CHECK_EQ(m->bdiag_rqueue > 0, 1);  // "abc" waits in b's queue
            }
        }
    }
    CHECK_EQ(seen_a, 1);
    CHECK_EQ(seen_b, 1);
    CHECK(total >= 2);

    // one socket by inode and cookie, every attribute: the answer has room for all of them
    req.h.nlmsg_flags = NLM_F_REQUEST;
    req.r.bdiag_ino = a_ino;
    req.r.bdiag_cookie[0] = a_cookie[0];
    req.r.bdiag_cookie[1] = a_cookie[1];
    req.r.bdiag_show = BSP_DIAG_SHOW_PEER | BSP_DIAG_SHOW_MEMINFO | BSP_DIAG_SHOW_STATS |
                       BSP_DIAG_SHOW_SUPERSTEP | BSP_DIAG_SHOW_PROTO;
    CHECK_EQ(send(nl, &req, sizeof(req), 0), sizeof(req));
    ssize_t n = recv(nl, buf.data(), buf.size(), 0);
    auto *h = reinterpret_cast<nlmsghdr *>(buf.data());
    CHECK(n > 0 && NLMSG_OK(h, size_t(n)));
    CHECK_EQ(h->nlmsg_type, SOCK_DIAG_BY_FAMILY);  // not an NLMSG_ERROR (EMSGSIZE)
    if (n > 0 && h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
        auto *m = static_cast<bsp_diag_msg *>(NLMSG_DATA(h));
        CHECK_EQ(m->bdiag_port, port_of(a));
        bool have_proto = false;
        int alen = int(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
        for (nlattr *at =
                 reinterpret_cast<nlattr *>(reinterpret_cast<char *>(m) + NLMSG_ALIGN(sizeof(*m)));
             alen >= int(sizeof(nlattr)) && at->nla_len >= sizeof(nlattr) && at->nla_len <= alen;
             alen -= NLA_ALIGN(at->nla_len),
                    at = reinterpret_cast<nlattr *>(reinterpret_cast<char *>(at) +
                                                    NLA_ALIGN(at->nla_len)))
            if ((at->nla_type & NLA_TYPE_MASK) == BSP_DIAG_PROTO &&
                at->nla_len == NLA_HDRLEN + sizeof(bsp_proto_stats))
                have_proto = true;
        CHECK(have_proto);
    }
    close(nl);
    close(a);
    close(b);
}

// net.bsp.<name> of this namespace; -1 if unreadable.
long read_sysctl(const char *name) {
    std::string path = std::string("/proc/sys/net/bsp/") + name;
    char buf[32] = {};
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    return n > 0 ? std::strtol(buf, nullptr, 10) : -1;
}

// Writes net.bsp.<name>; 0 or the errno of the write.
int write_sysctl(const char *name, const std::string &v) {
    std::string path = std::string("/proc/sys/net/bsp/") + name;
    int fd = open(path.c_str(), O_WRONLY);
    if (fd < 0)
        return errno;
    ssize_t n = write(fd, v.data(), v.size());
    int err = n == static_cast<ssize_t>(v.size()) ? 0 : errno;
    close(fd);
    return err;
}

int sockopt_int(int fd, int opt) {
    int v = -1;
    socklen_t len = sizeof(v);
    CHECK_EQ(getsockopt(fd, SOL_SOCKET, opt, &v, &len), 0);
    return v;
}

// A new socket's SO_RCVBUF and SO_SNDBUF are the namespace's net.bsp.rmem_default and
// net.bsp.wmem_default (4 MiB each by default: a superstep's messages to and from every peer
// are outstanding at once), which follow the sysctls, within the core's bounds of
// SO_RCVBUF/SO_SNDBUF; setsockopt still sets one socket's own, as for UDP.
void test_buffer_defaults() {
    const long r0 = read_sysctl("rmem_default"), w0 = read_sysctl("wmem_default");
    CHECK_EQ(r0, 4L << 20);
    CHECK_EQ(w0, 4L << 20);
    int a = socket(ktest::family(), SOCK_RDM, 0);
    CHECK(a >= 0);
    CHECK_EQ(sockopt_int(a, SO_RCVBUF), r0);
    CHECK_EQ(sockopt_int(a, SO_SNDBUF), w0);

    CHECK_EQ(write_sysctl("rmem_default", "1000000"), 0);
    CHECK_EQ(write_sysctl("wmem_default", "300000"), 0);
    int b = socket(ktest::family(), SOCK_RDM, 0);
    CHECK(b >= 0);
    CHECK_EQ(sockopt_int(b, SO_RCVBUF), 1000000);
    CHECK_EQ(sockopt_int(b, SO_SNDBUF), 300000);
    CHECK_EQ(sockopt_int(a, SO_RCVBUF), r0);  // sockets made before keep theirs

    // out of range: refused, the value stays
    CHECK_EQ(write_sysctl("rmem_default", "0"), EINVAL);
    CHECK_EQ(write_sysctl("wmem_default", "-1"), EINVAL);
    CHECK_EQ(write_sysctl("rmem_default", "2147483647"), EINVAL);
    CHECK_EQ(write_sysctl("wmem_default", "junk"), EINVAL);
    CHECK_EQ(read_sysctl("rmem_default"), 1000000);
    CHECK_EQ(read_sysctl("wmem_default"), 300000);

    // setsockopt: the core doubles the value (net.core.rmem_max bounds it, 208 KiB here)
    int small = 50000;
    CHECK_EQ(setsockopt(b, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    CHECK_EQ(sockopt_int(b, SO_RCVBUF), 2 * small);
    CHECK_EQ(setsockopt(b, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
    CHECK_EQ(sockopt_int(b, SO_SNDBUF), 2 * small);

    CHECK_EQ(write_sysctl("rmem_default", std::to_string(r0)), 0);
    CHECK_EQ(write_sysctl("wmem_default", std::to_string(w0)), 0);
    close(a);
    close(b);
}

const std::map<std::string, std::function<void()>> kTests = {
    {"diag", test_diag},
    {"create", test_create},
    {"bind", test_bind},
    {"autobind", test_autobind},
    {"sizes", test_sizes},
    {"scatter_gather", test_scatter_gather},
    {"peek_trunc", test_peek_trunc},
    {"nonblock_timeout", test_nonblock_timeout},
    {"errors", test_errors},
    {"connect", test_connect},
    {"shutdown", test_shutdown},
    {"poll", test_poll},
    {"signal", test_signal},
    {"flow_control", test_flow_control},
    {"many_senders", test_many_senders},
    {"superstep_options", test_superstep_options},
    {"channels", test_channels},
    {"channel_ceiling", test_channel_ceiling},
    {"close_with_data", test_close_with_data},
    {"buffer_defaults", test_buffer_defaults},
};

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> names;
    for (int i = 1; i < argc; ++i)
        names.emplace_back(argv[i]);
    if (names.empty())
        for (const auto &[n, f] : kTests)
            names.push_back(n);
    int bad = 0;
    for (const auto &n : names) {
        auto it = kTests.find(n);
        if (it == kTests.end()) {
            std::fprintf(stderr, "unknown test %s\n", n.c_str());
            return 2;
        }
        int before = ktest::failures();
        it->second();
        bool ok = ktest::failures() == before;
        std::printf("%s %s\n", ok ? "ok" : "not ok", n.c_str());
        std::fflush(stdout);
        bad += !ok;
    }
    std::printf("%d of %zu tests failed\n", bad, names.size());
    return bad ? 1 : 0;
}
