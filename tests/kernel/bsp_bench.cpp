// AF_BSP benchmark endpoints (not a test: it prints figures). Driven by
// tests/kernel/bench_rails.sh inside the VM.
//
//   bsp_bench sink PORT COUNT SIZE       receive COUNT messages; print the
//                                        throughput from first to last
//   bsp_bench source NODE PORT COUNT SIZE [PACING]
//                                        PACING: BSP_PACING_RATE in bytes/s
//   bsp_bench echo PORT COUNT            send every message back
//   bsp_bench ping NODE PORT COUNT SIZE [LOCAL_PORT [HOLD_MS]]  ping-pong; print the median
//                                        half round trip
//
// Output lines start with "RESULT " followed by key=value pairs.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ktest.hpp"

namespace {

double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

sockaddr *sa(sockaddr_bsp *a) {
    return reinterpret_cast<sockaddr *>(a);
}

// One "STATS role k=v ..." line with the socket's engine counters, so a
// figure can be read together with what the protocol did to reach it.
void print_stats(int fd, const char *role) {
    bsp_proto_stats st{};
    socklen_t len = sizeof(st);
    if (getsockopt(fd, SOL_BSP, BSP_PROTO_STATS, &st, &len) != 0) {
        std::perror("BSP_PROTO_STATS");
        return;
    }
    static const char *const drop[] = {
        "truncated",  "version", "type",      "flags",  "csum",  "addr",
        "rail",       "nochan",  "malformed", "toobig", "epoch", "seq_window",
        "msg_window", "nobufs",  "nomem",     "dup",    "auth",  "stale"};
    static_assert(sizeof(drop) / sizeof(drop[0]) == __BSP_PROTO_DROP_MAX);
    std::printf(
        "STATS %s data_tx=%llu data_rx=%llu retx_hole=%llu retx_prod=%llu retx_timeout=%llu "
        "dup_rx=%llu acks_tx=%llu acks_rx=%llu ackreq_tx=%llu prods_tx=%llu prods_rx=%llu "
        "probes_tx=%llu timeouts=%llu chan_closes=%llu msgs_rx=%llu srtt_us=%llu "
        "chans_evicted=%llu evicts_tx=%llu evicts_kept=%llu evicts_gone=%llu",
        role, (unsigned long long)st.data_tx, (unsigned long long)st.data_rx,
        (unsigned long long)st.retx_hole, (unsigned long long)st.retx_prod,
        (unsigned long long)st.retx_timeout, (unsigned long long)st.dup_rx,
        (unsigned long long)st.acks_tx, (unsigned long long)st.acks_rx,
        (unsigned long long)st.ackreq_tx, (unsigned long long)st.prods_tx,
        (unsigned long long)st.prods_rx, (unsigned long long)st.probes_tx,
        (unsigned long long)st.timeouts, (unsigned long long)st.chan_closes,
        (unsigned long long)st.msgs_rx, (unsigned long long)(st.srtt_max_ns / 1000),
        (unsigned long long)st.chans_evicted, (unsigned long long)st.evicts_tx,
        (unsigned long long)st.evicts_kept, (unsigned long long)st.evicts_gone);
    for (unsigned i = 0; i < __BSP_PROTO_DROP_MAX; ++i)
        if (st.drops[i])
            std::printf(" drop_%s=%llu", drop[i], (unsigned long long)st.drops[i]);
    std::printf("\n");
}

int sink(uint16_t port, long count, size_t size) {
    int fd = ktest::bound_socket(port, 32 << 20, 0);
    timeval tv = {120, 0};  // a lost message ends the run instead of hanging it
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::vector<uint8_t> buf(size + 1);
    double first = 0, last = 0;
    for (long i = 0; i < count; ++i) {
        ssize_t r = recv(fd, buf.data(), buf.size(), 0);
        if (r != ssize_t(size)) {
            std::fprintf(stderr, "recv %ld: %zd (%s)\n", i, r, strerror(errno));
            return 1;
        }
        last = now_s();
        if (i == 0)
            first = last;
    }
    double secs = last - first;
    double mbit = secs > 0 ? double(count - 1) * double(size) * 8 / secs / 1e6 : 0;
    std::printf("RESULT size=%zu count=%ld seconds=%.3f mbit=%.2f\n", size, count, secs, mbit);
    print_stats(fd, "sink");
    close(fd);
    return 0;
}

// BSP_BENCH_HOLD=FILE: the source sends its last message only once FILE
// exists (at most 10 minutes), so that a test can act while the transfer is
// certainly still running, however slow the kernel.
bool hold_last() {
    const char *file = std::getenv("BSP_BENCH_HOLD");
    if (!file || !*file) {
        return true;
    }
    for (int i = 0; i < 60000; ++i) {
        if (access(file, F_OK) == 0) {
            return true;
        }
        usleep(10000);
    }
    std::fprintf(stderr, "BSP_BENCH_HOLD: %s did not appear in 10 minutes\n", file);
    return false;
}

int source(uint32_t node, uint16_t port, long count, size_t size, uint64_t pacing) {
    int fd = ktest::bound_socket(0, 0, 32 << 20);
    if (pacing && setsockopt(fd, SOL_BSP, BSP_PACING_RATE, &pacing, sizeof(pacing)) != 0) {
        std::perror("BSP_PACING_RATE");
        return 1;
    }
    sockaddr_bsp to = ktest::addr(node, port);
    std::vector<uint8_t> m(size, 0x5a);
    for (long i = 0; i < count; ++i) {
        if (i == count - 1 && !hold_last()) {
            return 1;
        }
        if (sendto(fd, m.data(), size, 0, sa(&to), sizeof(to)) != ssize_t(size)) {
            std::fprintf(stderr, "send %ld: %s\n", i, strerror(errno));
            return 1;
        }
    }
    // Wait (bounded) until every message is acknowledged, then report.
    ktest::wait_settled(fd, 30000);
    print_stats(fd, "source");
    close(fd);  // lingers until acknowledged
    return 0;
}

int echo(uint16_t port, long count) {
    int fd = ktest::bound_socket(port);
    std::vector<uint8_t> buf(BSP_MSG_MAX);
    for (long i = 0; i < count; ++i) {
        sockaddr_bsp from{};
        socklen_t fl = sizeof(from);
        ssize_t r = recvfrom(fd, buf.data(), buf.size(), 0, sa(&from), &fl);
        if (r < 0 || sendto(fd, buf.data(), size_t(r), 0, sa(&from), fl) != r) {
            std::perror("echo");
            return 1;
        }
    }
    print_stats(fd, "echo");
    close(fd);
    return 0;
}

int ping(uint32_t node, uint16_t port, long count, size_t size, uint16_t local_port,
         unsigned hold_ms) {
    int fd = ktest::bound_socket(local_port);
    sockaddr_bsp to = ktest::addr(node, port);
    if (connect(fd, sa(&to), sizeof(to)) != 0) {
        std::perror("connect");
        return 1;
    }
    std::vector<uint8_t> m(size, 1), in(size + 1);
    std::vector<double> rtt;
    for (long i = 0; i < count; ++i) {
        for (size_t j = 0; j < size; ++j)
            m[j] = uint8_t(i * 7 + j);
        double t0 = now_s();
        if (send(fd, m.data(), size, 0) != ssize_t(size) ||
            recv(fd, in.data(), in.size(), 0) != ssize_t(size)) {
            std::perror("ping");
            return 1;
        }
        if (memcmp(in.data(), m.data(), size) != 0) {
            std::fprintf(stderr, "ping %ld: the echo differs from what was sent\n", i);
            return 1;
        }
        rtt.push_back(now_s() - t0);
    }
    std::sort(rtt.begin(), rtt.end());
    double med = rtt[rtt.size() / 2];
    std::printf("RESULT size=%zu count=%ld half_rtt_us=%.1f min_half_rtt_us=%.1f\n", size, count,
                med / 2 * 1e6, rtt.front() / 2 * 1e6);
    print_stats(fd, "ping");
    if (hold_ms) {
        // idle but open: the peer may evict the channel, never by CLOSE
        std::printf("HOLD %u ms\n", hold_ms);
        std::fflush(stdout);
        usleep(useconds_t(hold_ms) * 1000);
        print_stats(fd, "held");
    }
    close(fd);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc == 5 && !strcmp(argv[1], "sink"))
        return sink(uint16_t(atoi(argv[2])), atol(argv[3]), strtoul(argv[4], nullptr, 0));
    if ((argc == 6 || argc == 7) && !strcmp(argv[1], "source"))
        return source(uint32_t(strtoul(argv[2], nullptr, 0)), uint16_t(atoi(argv[3])),
                      atol(argv[4]), strtoul(argv[5], nullptr, 0),
                      argc == 7 ? strtoull(argv[6], nullptr, 0) : 0);
    if (argc == 4 && !strcmp(argv[1], "echo"))
        return echo(uint16_t(atoi(argv[2])), atol(argv[3]));
    if (argc >= 6 && argc <= 8 && !strcmp(argv[1], "ping"))
        return ping(uint32_t(strtoul(argv[2], nullptr, 0)), uint16_t(atoi(argv[3])), atol(argv[4]),
                    strtoul(argv[5], nullptr, 0), argc >= 7 ? uint16_t(atoi(argv[6])) : 0,
                    argc == 8 ? unsigned(strtoul(argv[7], nullptr, 0)) : 0);
    std::fprintf(stderr,
                 "usage: bsp_bench sink PORT COUNT SIZE | source NODE PORT COUNT SIZE [PACING] |\n"
                 "       echo PORT COUNT | ping NODE PORT COUNT SIZE [LOCAL_PORT [HOLD_MS]]\n");
    return 2;
}
