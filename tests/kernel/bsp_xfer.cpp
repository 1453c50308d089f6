// Message transfer between AF_BSP sockets of different nodes (namespaces)
// over the rails, checked byte for byte, exactly once and in order per
// sender. Used by tests/vm/cases/kernel_xfer*.sh and kernel_failover.sh.
//
//   bsp_xfer recv PORT SENDERS MSGS SIZES
//       bind PORT, receive MSGS messages from each of SENDERS distinct
//       sender sockets; message i of a sender has size SIZES(i) and the
//       pattern of (sender node, i); prints "recv ok N BYTES" on success.
//       Fails after 60 s without a message (times BSPVM_TIMEOUT_SCALE),
//       saying which senders' messages are missing.
//   bsp_xfer send NODE PORT MSGS SIZES [SOCKETS]
//       send MSGS messages to (NODE, PORT) from each of SOCKETS sockets
//       (default 1, one process each); waits until its messages are
//       acknowledged or failed, prints the socket counters and each failure
//       report (e.g. EHOSTUNREACH once the peer made no progress for
//       unreach_ms, as to a port nobody binds).
//
// SIZES: "ladder" (0 B .. BSP_MSG_MAX around page, fragment and chunk
// boundaries), "fixed:N", or "cycle:N" (1 .. N bytes, varying).
//
// recv honours two environment variables: XFER_RCVBUF (SO_RCVBUFFORCE,
// default 16 MiB) and XFER_START_FILE (bind, print "bound PORT", then read
// nothing until that file exists: a receiver that stops reading); send
// honours XFER_SNDBUF (SO_SNDBUFFORCE).
#include <time.h>

#include <linux/errqueue.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ktest.hpp"

namespace {

struct Sizes {
    std::vector<size_t> ladder;
    size_t fixed = 0;
    size_t cycle = 0;

    size_t at(uint32_t i) const {
        if (!ladder.empty())
            return ladder[i % ladder.size()];
        if (cycle)
            return 1 + (size_t(i) * 7919) % cycle;
        return fixed;
    }
    size_t max() const {
        if (!ladder.empty())
            return BSP_MSG_MAX;
        return cycle ? cycle : fixed;
    }
};

Sizes parse_sizes(const std::string &s) {
    Sizes z;
    if (s == "ladder") {
        z.ladder = {0,     1,     2,      3,      71,     72,     73,     1355,       1356,  1357,
                    1428,  1429,  2856,   2857,   4095,   4096,   4097,   9000,       65535, 65536,
                    65537, 99999, 131072, 262144, 500000, 524288, 786433, BSP_MSG_MAX};
    } else if (s.rfind("fixed:", 0) == 0) {
        z.fixed = std::strtoul(s.c_str() + 6, nullptr, 0);
    } else if (s.rfind("cycle:", 0) == 0) {
        z.cycle = std::strtoul(s.c_str() + 6, nullptr, 0);
    } else {
        std::fprintf(stderr, "bad SIZES %s\n", s.c_str());
        std::exit(2);
    }
    if (z.max() > BSP_MSG_MAX) {
        std::fprintf(stderr, "SIZES beyond BSP_MSG_MAX\n");
        std::exit(2);
    }
    return z;
}

void print_stats(int fd, const char *who) {
    bsp_sock_stats st{};
    socklen_t sl = sizeof(st);
    if (getsockopt(fd, SOL_BSP, BSP_SOCK_STATS, &st, &sl) != 0) {
        std::perror("BSP_SOCK_STATS");
        return;
    }
    std::printf(
        "%s stats: tx_msgs %llu rx_msgs %llu tx_remote %llu rx_remote %llu tx_errors %llu "
        "pkts_tx %llu pkts_rx %llu retransmits %llu failovers %llu acks_tx %llu acks_rx %llu "
        "rx_dropped %llu\n",
        who, (unsigned long long)st.tx_msgs, (unsigned long long)st.rx_msgs,
        (unsigned long long)st.tx_remote_msgs, (unsigned long long)st.rx_remote_msgs,
        (unsigned long long)st.tx_errors, (unsigned long long)st.pkts_tx,
        (unsigned long long)st.pkts_rx, (unsigned long long)st.retransmits,
        (unsigned long long)st.failovers, (unsigned long long)st.acks_tx,
        (unsigned long long)st.acks_rx, (unsigned long long)st.rx_dropped);
    // the engine's drops by reason (enum bsp_proto_drop), for the log of a failed run
    bsp_proto_stats ps{};
    socklen_t pl = sizeof(ps);
    if (getsockopt(fd, SOL_BSP, BSP_PROTO_STATS, &ps, &pl) != 0)
        return;
    for (unsigned i = 0; i < __BSP_PROTO_DROP_MAX; ++i)
        if (ps.drops[i])
            std::printf("%s drop %u: %llu\n", who, i, (unsigned long long)ps.drops[i]);
    std::printf(
        "%s engine: timeouts %llu probes_tx %llu msgs_failed %llu chan_restarts %llu "
        "msgs_abandoned %llu chan_resets %llu\n",
        who, (unsigned long long)ps.timeouts, (unsigned long long)ps.probes_tx,
        (unsigned long long)ps.msgs_failed, (unsigned long long)ps.chan_restarts,
        (unsigned long long)ps.msgs_abandoned, (unsigned long long)ps.chan_resets);
}

// BSP_PROTO_STATS agrees with BSP_SOCK_STATS and with what was received, and a short buffer
// gets a prefix. Returns false (with a message) on any disagreement.
bool check_proto_stats(int fd, uint64_t msgs, uint64_t bytes) {
    bsp_sock_stats st{};
    socklen_t sl = sizeof(st);
    bsp_proto_stats ps{};
    socklen_t pl = sizeof(ps);
    if (getsockopt(fd, SOL_BSP, BSP_SOCK_STATS, &st, &sl) != 0 ||
        getsockopt(fd, SOL_BSP, BSP_PROTO_STATS, &ps, &pl) != 0 || pl != sizeof(ps)) {
        std::perror("BSP_PROTO_STATS");
        return false;
    }
    uint64_t drops = 0;
    for (unsigned i = 0; i < BSP_PROTO_DROP_SLOTS; ++i)
        drops += ps.drops[i];
    uint64_t prefix[2] = {~0ull, ~0ull};
    socklen_t l8 = 8;
    bool ok = ps.msgs_rx == msgs && st.rx_remote_msgs == msgs && ps.bytes_rx == bytes &&
              ps.data_rx == st.pkts_rx && ps.dup_rx == ps.drops[BSP_PROTO_DROP_DUP] &&
              drops == st.rx_dropped && ps.acks_tx == st.acks_tx &&
              getsockopt(fd, SOL_BSP, BSP_PROTO_STATS, prefix, &l8) == 0 && l8 == 8 &&
              prefix[0] == ps.data_tx && prefix[1] == ~0ull;
    if (!ok)
        std::fprintf(stderr,
                     "BSP_PROTO_STATS disagrees: msgs_rx %llu (want %llu, sock %llu) bytes_rx %llu "
                     "(want %llu) data_rx %llu (sock %llu) dup_rx %llu (drops %llu) drops %llu "
                     "(sock %llu) prefix len %u\n",
                     (unsigned long long)ps.msgs_rx, (unsigned long long)msgs,
                     (unsigned long long)st.rx_remote_msgs, (unsigned long long)ps.bytes_rx,
                     (unsigned long long)bytes, (unsigned long long)ps.data_rx,
                     (unsigned long long)st.pkts_rx, (unsigned long long)ps.dup_rx,
                     (unsigned long long)ps.drops[BSP_PROTO_DROP_DUP], (unsigned long long)drops,
                     (unsigned long long)st.rx_dropped, unsigned(l8));
    return ok;
}

int do_recv(uint16_t port, int senders, uint32_t msgs, const Sizes &sizes) {
    const char *rb = std::getenv("XFER_RCVBUF");
    const char *start = std::getenv("XFER_START_FILE");
    int fd = ktest::bound_socket(port, rb ? atoi(rb) : 16 << 20, 0);
    if (start) {
        std::printf("bound %u\n", unsigned(port));
        std::fflush(stdout);
        while (access(start, F_OK) != 0)
            usleep(100000);
    }
    std::vector<uint8_t> buf(sizes.max() + 1);
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> next;
    uint64_t total = 0, bytes = 0;
    const uint64_t want = uint64_t(senders) * msgs;
    // A lost message must fail the run with what is missing, not leave it waiting.
    const int idle_s = 60 * ktest::time_scale();
    timeval tv = {idle_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    while (total < want) {
        sockaddr_bsp from{};
        socklen_t fl = sizeof(from);
        ssize_t r =
            recvfrom(fd, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr *>(&from), &fl);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            std::fprintf(stderr,
                         "recv: no message for %d s, %llu of %llu received; by sender:", idle_s,
                         (unsigned long long)total, (unsigned long long)want);
            for (const auto &[k, n] : next)
                std::fprintf(stderr, " %u:%u %u/%u", k.first, k.second, n, msgs);
            std::fprintf(stderr, " (%zu of %d senders seen)\n", next.size(), senders);
            print_stats(fd, "recv");
            return 1;
        }
        if (r < 0) {
            std::perror("recvfrom");
            return 1;
        }
        auto key = std::make_pair(from.sbsp_node, from.sbsp_port);
        if (!next.count(key) && next.size() == size_t(senders)) {
            std::fprintf(stderr, "message from unexpected sender %u:%u\n", key.first, key.second);
            return 1;
        }
        uint32_t i = next[key]++;
        if (i >= msgs) {
            std::fprintf(stderr, "sender %u:%u: more than %u messages (duplicate?)\n", key.first,
                         key.second, msgs);
            return 1;
        }
        if (size_t(r) != sizes.at(i)) {
            std::fprintf(stderr,
                         "sender %u:%u message %u: %zd bytes, expected %zu (order or loss)\n",
                         key.first, key.second, i, r, sizes.at(i));
            return 1;
        }
        long bad = ktest::verify(buf.data(), size_t(r), from.sbsp_node ^ from.sbsp_port, i);
        if (bad >= 0) {
            std::fprintf(stderr, "sender %u:%u message %u (%zd bytes): byte %ld wrong\n", key.first,
                         key.second, i, r, bad);
            return 1;
        }
        ++total;
        bytes += size_t(r);
    }
    print_stats(fd, "recv");
    if (!check_proto_stats(fd, total, bytes))
        return 1;
    bsp_proto_stats ps{};
    socklen_t pl = sizeof(ps);
    getsockopt(fd, SOL_BSP, BSP_PROTO_STATS, &ps, &pl);
    std::printf("recv nobufs %llu\n", (unsigned long long)ps.drops[BSP_PROTO_DROP_NOBUFS]);
    std::printf("recv ok %llu %llu\n", (unsigned long long)total, (unsigned long long)bytes);
    close(fd);
    return 0;
}

int send_one(uint32_t node, uint16_t port, uint32_t msgs, const Sizes &sizes) {
    // default SO_SNDBUF: a few messages in flight (XFER_SNDBUF: SO_SNDBUFFORCE)
    const char *sb = std::getenv("XFER_SNDBUF");
    int fd = ktest::bound_socket(0, 0, sb ? atoi(sb) : 0);
    uint32_t me = ktest::node_id() ^ ktest::port_of(fd);
    sockaddr_bsp to = ktest::addr(node, port);
    std::vector<uint8_t> m;
    for (uint32_t i = 0; i < msgs; ++i) {
        m.resize(sizes.at(i));
        ktest::fill(m, me, i);
        ssize_t r =
            sendto(fd, m.data(), m.size(), 0, reinterpret_cast<sockaddr *>(&to), sizeof(to));
        if (r != ssize_t(m.size())) {
            std::fprintf(stderr, "send %u of %zu bytes: %zd (%s)\n", i, m.size(), r,
                         strerror(errno));
            return 1;
        }
    }
    // Every message is acknowledged or fails (unreach_ms without progress) in bounded time.
    // The receiver is the judge of what arrived (a message reported failed may still have
    // arrived: its acknowledgements may be what was lost); the reports are printed for the
    // log of a receiver that misses messages.
    int left = ktest::wait_settled(fd, 120000 * ktest::time_scale());
    print_stats(fd, "send");
    for (;;) {
        alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(sock_extended_err))];
        msghdr mh{};
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof(cbuf);
        if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
            break;
        cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (!cm || cm->cmsg_level != SOL_BSP || cm->cmsg_type != BSP_CMSG_ERR)
            continue;
        sock_extended_err ee;
        std::memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
        std::printf("send failure report: message %u to %u:%u: %s\n", ee.ee_data, node,
                    unsigned(port), strerrorname_np(int(ee.ee_errno)));
    }
    if (left)
        std::printf("send: %d bytes not settled\n", left);
    close(fd);
    return 0;
}

int do_send(uint32_t node, uint16_t port, uint32_t msgs, const Sizes &sizes, int sockets) {
    std::vector<pid_t> pids;
    for (int s = 0; s < sockets; ++s) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(send_one(node, port, msgs, sizes));
        pids.push_back(pid);
    }
    int bad = 0;
    for (pid_t p : pids) {
        int st = 0;
        waitpid(p, &st, 0);
        bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    if (!bad)
        std::printf("send ok %d x %u\n", sockets, msgs);
    return bad ? 1 : 0;
}

// sendto and connect to NODE fail with EHOSTUNREACH at once.
int do_unreachable(uint32_t node, uint16_t port) {
    int fd = ktest::bound_socket(0);
    sockaddr_bsp to = ktest::addr(node, port);
    errno = 0;
    ssize_t r = sendto(fd, "x", 1, 0, reinterpret_cast<sockaddr *>(&to), sizeof(to));
    if (r != -1 || errno != EHOSTUNREACH) {
        std::fprintf(stderr, "sendto node %u: %zd (%s), expected EHOSTUNREACH\n", node, r,
                     strerror(errno));
        return 1;
    }
    errno = 0;
    int c = connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof(to));
    if (c != -1 || errno != EHOSTUNREACH) {
        std::fprintf(stderr, "connect node %u: %d (%s), expected EHOSTUNREACH\n", node, c,
                     strerror(errno));
        return 1;
    }
    close(fd);
    return 0;
}

volatile sig_atomic_t g_drain = 0;

// Bind PORT with the smallest receive buffer and do not read: the engine takes in about
// one message and refuses the rest, which stay unacknowledged at their sender. Waits
// until killed (the socket stays open: no CLOSE tells the sender anything), or until
// SIGUSR1: then reads, printing "got LEN" per message, until nothing came for 10 s.
int do_hold(uint16_t port) {
    struct sigaction sa = {};
    sa.sa_handler = [](int) { g_drain = 1; };
    sigaction(SIGUSR1, &sa, nullptr);
    int fd = ktest::bound_socket(port, 4096, 0);
    std::printf("holding %u\n", unsigned(port));
    std::fflush(stdout);
    while (!g_drain)
        pause();
    timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::vector<uint8_t> buf(BSP_MSG_MAX);
    unsigned n = 0;
    for (;;) {
        ssize_t r = recv(fd, buf.data(), buf.size(), 0);
        if (r < 0)
            break;
        std::printf("got %zd\n", r);
        ++n;
    }
    std::printf("drained %u\n", n);
    close(fd);
    return 0;
}

// After the stranded messages failed: once a rail to NODE lives again, one more message
// of 1000 bytes on the same socket, so on the same channel, which must be delivered.
int strand_again(int fd, const sockaddr_bsp &to) {
    bsp_proto_stats before{};
    socklen_t pl = sizeof(before);
    getsockopt(fd, SOL_BSP, BSP_PROTO_STATS, &before, &pl);
    std::vector<uint8_t> m(1000, 0x5a);
    int t = 0;
    for (; t < 300; ++t) {
        if (sendto(fd, m.data(), m.size(), 0, reinterpret_cast<const sockaddr *>(&to),
                   sizeof(to)) == ssize_t(m.size()))
            break;
        if (errno != EHOSTUNREACH) {
            std::fprintf(stderr, "send after the failures: %s\n", strerror(errno));
            return 1;
        }
        usleep(100000);
    }
    if (t == 300) {
        std::fprintf(stderr, "node still unreachable 30 s after the failures\n");
        return 1;
    }
    for (t = 0; t < 300; ++t) {
        bsp_proto_stats ps{};
        pl = sizeof(ps);
        getsockopt(fd, SOL_BSP, BSP_PROTO_STATS, &ps, &pl);
        if (ps.msgs_failed != before.msgs_failed) {
            std::fprintf(stderr, "the message after the failures failed too\n");
            return 1;
        }
        if (ps.msgs_tx == before.msgs_tx + 1) {
            std::printf("again delivered chan_restarts %llu\n",
                        (unsigned long long)ps.chan_restarts);
            return 0;
        }
        usleep(100000);
    }
    std::fprintf(stderr, "the message after the failures did not settle in 30 s\n");
    return 1;
}

// Send MSGS 1 MiB messages to (NODE, PORT), print "sent", then wait in
// recv: once the node became unreachable the stranded messages fail and
// recv returns EHOSTUNREACH (SO_ERROR); tx_errors counts them. With "again",
// then one more message on the same channel (strand_again).
int do_strand(uint32_t node, uint16_t port, uint32_t msgs, bool again) {
    int fd = ktest::bound_socket(0, 0, 64 << 20);
    timeval tv = {20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_bsp to = ktest::addr(node, port);
    std::vector<uint8_t> m(BSP_MSG_MAX);
    for (uint32_t i = 0; i < msgs; ++i) {
        if (sendto(fd, m.data(), m.size(), 0, reinterpret_cast<sockaddr *>(&to), sizeof(to)) !=
            ssize_t(m.size())) {
            std::fprintf(stderr, "send %u: %s\n", i, strerror(errno));
            return 1;
        }
    }
    std::printf("sent\n");
    std::fflush(stdout);
    // The socket is not connected: each failed message is reported on the error queue
    // (POLLERR), never as the socket's error.
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 30000) != 1 || !(p.revents & POLLERR)) {
        std::fprintf(stderr, "no POLLERR within 30 s (revents %#x)\n", unsigned(p.revents));
        return 1;
    }
    char c;
    errno = 0;
    ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);
    if (r != -1 || errno != EAGAIN) {
        std::fprintf(stderr, "recv: %zd (%s), expected EAGAIN (the failure is not the socket's)\n",
                     r, strerror(errno));
        return 1;
    }
    int soerr = -1;
    socklen_t el = sizeof(soerr);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el);
    if (soerr != 0) {
        std::fprintf(stderr, "SO_ERROR %d on an unconnected socket\n", soerr);
        return 1;
    }
    // Messages may fail in more than one go: collect reports until the last message's came
    // (bounded), then every failure counted in tx_errors must have exactly one report.
    uint64_t reports = 0;
    std::vector<bool> seen(msgs + 1);
    bsp_sock_stats st{};
    for (int round = 0; round < 30 && !seen[msgs]; ++round) {
        for (;;) {
            sockaddr_bsp from{};
            alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(sock_extended_err))];
            msghdr mh{};
            mh.msg_name = &from;
            mh.msg_namelen = sizeof(from);
            mh.msg_control = cbuf;
            mh.msg_controllen = sizeof(cbuf);
            if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
                if (errno == EAGAIN)
                    break;
                std::perror("recvmsg(MSG_ERRQUEUE)");
                return 1;
            }
            cmsghdr *cm = CMSG_FIRSTHDR(&mh);
            if (!cm || cm->cmsg_level != SOL_BSP || cm->cmsg_type != BSP_CMSG_ERR ||
                !(mh.msg_flags & MSG_ERRQUEUE) || mh.msg_namelen != sizeof(from)) {
                std::fprintf(stderr, "error report without BSP_CMSG_ERR\n");
                return 1;
            }
            sock_extended_err ee;
            std::memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
            if (ee.ee_errno != EHOSTUNREACH || ee.ee_origin != SO_EE_ORIGIN_LOCAL ||
                ee.ee_info != port || ee.ee_data < 1 || ee.ee_data > msgs || seen[ee.ee_data] ||
                from.sbsp_node != node || from.sbsp_port != port) {
                std::fprintf(stderr, "report: errno %u origin %u info %u data %u from %u:%u\n",
                             ee.ee_errno, ee.ee_origin, ee.ee_info, ee.ee_data, from.sbsp_node,
                             from.sbsp_port);
                return 1;
            }
            seen[ee.ee_data] = true;
            ++reports;
        }
        if (!seen[msgs])
            poll(&p, 1, 1000);
    }
    socklen_t sl = sizeof(st);
    getsockopt(fd, SOL_BSP, BSP_SOCK_STATS, &st, &sl);
    if (st.tx_errors == 0 || reports != st.tx_errors) {
        std::fprintf(stderr, "%llu error reports, tx_errors %llu\n", (unsigned long long)reports,
                     (unsigned long long)st.tx_errors);
        return 1;
    }
    // the last message failed (the earliest ones may have been acknowledged)
    if (!seen[msgs]) {
        std::fprintf(stderr, "no report for the last message %u\n", msgs);
        return 1;
    }
    std::printf("stranded ok tx_errors %llu reports %llu\n", (unsigned long long)st.tx_errors,
                (unsigned long long)reports);
    if (again && strand_again(fd, to))
        return 1;
    linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
    return 0;
}

// Connect to (NODE, PORT), send one message of SIZE bytes and wait (bounded) until it
// settles: "settle delivered" when acknowledged, "settle failed ERRNO" when it failed (SO_ERROR:
// the socket is connected). Never settling within 60 s is the failure this checks for.
int do_settle(uint32_t node, uint16_t port, size_t size) {
    int fd = ktest::bound_socket(0);
    sockaddr_bsp to = ktest::addr(node, port);
    if (connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof(to)) != 0) {
        std::perror("connect");
        return 1;
    }
    std::vector<uint8_t> m(size);
    ktest::fill(m, ktest::node_id() ^ ktest::port_of(fd), 0);
    if (send(fd, m.data(), m.size(), 0) != ssize_t(m.size())) {
        std::perror("send");
        return 1;
    }
    for (int t = 0; t < 600; ++t) {
        bsp_proto_stats ps{};
        socklen_t pl = sizeof(ps);
        getsockopt(fd, SOL_BSP, BSP_PROTO_STATS, &ps, &pl);
        if (ps.msgs_tx == 1) {
            std::printf("settle delivered probes %llu\n", (unsigned long long)ps.probes_tx);
            close(fd);
            return 0;
        }
        if (ps.msgs_failed == 1) {
            int e = 0;
            socklen_t el = sizeof(e);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
            std::printf("settle failed %s probes %llu after %.1f s\n", strerrorname_np(e),
                        (unsigned long long)ps.probes_tx, t / 10.0);
            close(fd);
            return 0;
        }
        usleep(100000);
    }
    std::printf("settle unsettled after 60 s\n");
    return 1;
}

}  // namespace

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc == 3 && !strcmp(argv[1], "hold"))
        return do_hold(uint16_t(atoi(argv[2])));
    if (argc >= 6 && !strcmp(argv[1], "recv"))
        return do_recv(uint16_t(atoi(argv[2])), atoi(argv[3]), uint32_t(atol(argv[4])),
                       parse_sizes(argv[5]));
    if (argc >= 6 && !strcmp(argv[1], "send"))
        return do_send(uint32_t(strtoul(argv[2], nullptr, 0)), uint16_t(atoi(argv[3])),
                       uint32_t(atol(argv[4])), parse_sizes(argv[5]),
                       argc >= 7 ? atoi(argv[6]) : 1);
    if (argc >= 5 && !strcmp(argv[1], "strand"))
        return do_strand(uint32_t(strtoul(argv[2], nullptr, 0)), uint16_t(atoi(argv[3])),
                         uint32_t(atol(argv[4])), argc >= 6 && !strcmp(argv[5], "again"));
    if (argc >= 5 && !strcmp(argv[1], "settle"))
        return do_settle(uint32_t(strtoul(argv[2], nullptr, 0)), uint16_t(atoi(argv[3])),
                         size_t(atol(argv[4])));
    if (argc >= 4 && !strcmp(argv[1], "unreachable"))
        return do_unreachable(uint32_t(strtoul(argv[2], nullptr, 0)), uint16_t(atoi(argv[3])));
    std::fprintf(stderr,
                 "usage: bsp_xfer recv PORT SENDERS MSGS SIZES\n"
                 "       bsp_xfer send NODE PORT MSGS SIZES [SOCKETS]\n"
                 "       bsp_xfer unreachable NODE PORT\n"
                 "       bsp_xfer strand NODE PORT MSGS [again]\n"
                 "       bsp_xfer hold PORT\n"
                 "       bsp_xfer settle NODE PORT SIZE\n");
    return 2;
}
