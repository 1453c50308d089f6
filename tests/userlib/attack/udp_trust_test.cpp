// Another local user against a running BSPlib job over UDP (Documentation/security.rst,
// "Authenticated packets" and "Bounded state in the messaging layer"): forged, truncated
// and replayed datagrams and ACK|CLOSE floods sent to the job's ports change nothing, the
// job's results are exact, it exits 0, and every datagram is counted as dropped. The
// attacker runs as user nobody when the test runs as root (setpriv), else as the test's
// user, which the job equally refuses. The victim is udp_victim.c, the attacker
// udp_attacker.cpp.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bspe_wire.h"

namespace {

using namespace std::chrono_literals;

std::string slurp(const std::string &path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool have_setpriv() {
    return access("/usr/bin/setpriv", X_OK) == 0 || access("/bin/setpriv", X_OK) == 0;
}

// Runs argv (as nobody when we are root and unless keep_privileges), waits for it, returns
// its exit status and standard output.
std::pair<int, std::string> run_tool(std::vector<std::string> argv, bool keep_privileges) {
    if (geteuid() == 0 && !keep_privileges && have_setpriv())
        argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
    char tmpl[] = "/tmp/udp-attacker-XXXXXX";
    const int out = mkstemp(tmpl);
    if (out < 0)
        return {-1, ""};
    const pid_t child = fork();
    if (child == 0) {
        dup2(out, 1);
        std::vector<char *> args;
        for (auto &a : argv)
            args.push_back(a.data());
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    close(out);
    std::string text = slurp(tmpl);
    unlink(tmpl);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), text};
}

// UDP ports of a process's sockets: its /proc/<pid>/fd socket inodes in /proc/net/udp.
std::vector<int> udp_ports_of(int ospid) {
    std::vector<std::string> inodes;
    const std::string fds = "/proc/" + std::to_string(ospid) + "/fd";
    if (DIR *d = opendir(fds.c_str())) {
        while (dirent *e = readdir(d)) {
            char target[256] = {};
            const std::string link = fds + "/" + e->d_name;
            const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
            std::string t(target, n > 0 ? static_cast<std::size_t>(n) : 0);
            if (t.rfind("socket:[", 0) == 0)
                inodes.push_back(t.substr(8, t.size() - 9));
        }
        closedir(d);
    }
    std::vector<int> ports;
    std::istringstream udp(slurp("/proc/net/udp"));
    std::string line;
    std::getline(udp, line);  // header
    while (std::getline(udp, line)) {
        std::istringstream f(line);
        std::string sl, local, remote, st, queues, tr, retr, uid, timeout, inode;
        f >> sl >> local >> remote >> st >> queues >> tr >> retr >> uid >> timeout >> inode;
        for (const auto &i : inodes)
            if (i == inode)
                ports.push_back(std::stoi(local.substr(local.find(':') + 1), nullptr, 16));
    }
    return ports;
}

// Bytes waiting in the receive queue of the UDP socket bound to `port` (-1: no socket).
long udp_rx_queue(int port) {
    std::istringstream udp(slurp("/proc/net/udp"));
    std::string line;
    std::getline(udp, line);  // header
    while (std::getline(udp, line)) {
        std::istringstream f(line);
        std::string sl, local, remote, st, queues;
        f >> sl >> local >> remote >> st >> queues;
        if (std::stoi(local.substr(local.find(':') + 1), nullptr, 16) == port)
            return std::stol(queues.substr(queues.find(':') + 1), nullptr, 16);
    }
    return -1;
}

long rss_kib(int ospid) {
    std::istringstream s(slurp("/proc/" + std::to_string(ospid) + "/status"));
    std::string line;
    while (std::getline(s, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stol(line.substr(6));
    return -1;
}

// Datagrams on the loopback interface, as a capturing attacker with CAP_NET_RAW sees them
// (root only): every UDP datagram to 127.0.0.1 from the moment of construction until
// stop(), with its ports. The socket sees all loopback traffic of the host (other tests' too)
// and its reader may lag behind: stop() reads what is still queued, and complete() says
// whether the kernel dropped any for a full queue (then the capture is not the job's traffic).
class LoopbackCapture {
  public:
    struct Datagram {
        int from_port = 0, to_port = 0;
        std::vector<std::uint8_t> bytes;
    };
    LoopbackCapture() {
        fd_ = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));
        if (fd_ < 0)
            return;
        sockaddr_ll sll{};
        sll.sll_family = AF_PACKET;
        sll.sll_protocol = htons(ETH_P_IP);
        sll.sll_ifindex = static_cast<int>(if_nametoindex("lo"));
        if (bind(fd_, reinterpret_cast<sockaddr *>(&sll), sizeof sll) != 0) {
            close(fd_);
            fd_ = -1;
            return;
        }
        const int bytes = 64 << 20;
        (void)setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes);
        thread_ = std::thread([this] { run(); });
    }
    ~LoopbackCapture() {
        stop();
        if (fd_ >= 0)
            close(fd_);
    }
    bool ok() const { return fd_ >= 0; }
    void stop() {
        stop_ = true;
        if (thread_.joinable())
            thread_.join();
        if (fd_ < 0 || drained_)
            return;
        std::vector<std::uint8_t> buf(70000);
        while (take(buf, MSG_DONTWAIT)) {
        }
        tpacket_stats st{};
        socklen_t len = sizeof st;
        if (getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
            dropped_ = st.tp_drops;
        drained_ = true;
    }
    // After stop(): nothing was dropped, every datagram of the interval is in between().
    bool complete() const { return drained_ && dropped_ == 0; }
    unsigned dropped() const { return dropped_; }
    // The captured datagrams from port `from` to port `to` (after stop()).
    std::vector<std::vector<std::uint8_t>> between(int from, int to) const {
        std::vector<std::vector<std::uint8_t>> r;
        for (const auto &d : got_)
            if (d.from_port == from && d.to_port == to)
                r.push_back(d.bytes);
        return r;
    }

  private:
    void run() {
        std::vector<std::uint8_t> buf(70000);
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, 20) > 0)
                take(buf, 0);
        }
    }
    // Reads one queued packet, keeps it if it is a UDP datagram to 127.0.0.1; false when
    // there was none.
    bool take(std::vector<std::uint8_t> &buf, int flags) {
        sockaddr_ll from{};
        socklen_t len = sizeof from;
        const ssize_t n =
            recvfrom(fd_, buf.data(), buf.size(), flags, reinterpret_cast<sockaddr *>(&from), &len);
        if (n < 0)
            return false;
        // Loopback shows every packet twice (outgoing and incoming): keep one.
        if (n < static_cast<ssize_t>(sizeof(iphdr) + sizeof(udphdr)) ||
            from.sll_pkttype == PACKET_OUTGOING)
            return true;
        const auto *ip = reinterpret_cast<const iphdr *>(buf.data());
        const std::size_t ihl = ip->ihl * 4u;
        if (ip->protocol != IPPROTO_UDP || ip->daddr != htonl(INADDR_LOOPBACK) ||
            static_cast<std::size_t>(n) < ihl + sizeof(udphdr))
            return true;
        const auto *udp = reinterpret_cast<const udphdr *>(buf.data() + ihl);
        Datagram d;
        d.from_port = ntohs(udp->source);
        d.to_port = ntohs(udp->dest);
        d.bytes.assign(buf.begin() + static_cast<std::ptrdiff_t>(ihl + sizeof(udphdr)),
                       buf.begin() + n);
        got_.push_back(std::move(d));
        return true;
    }
    int fd_ = -1;
    bool drained_ = false;
    unsigned dropped_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    std::vector<Datagram> got_;
};

// Writes datagrams in udp_attacker's replay format (u32 length, bytes) to a new file.
std::string replay_file(const std::vector<std::vector<std::uint8_t>> &dgrams) {
    char tmpl[] = "/tmp/udp-replay-XXXXXX";
    const int fd = mkstemp(tmpl);
    for (const auto &d : dgrams) {
        const auto len = static_cast<std::uint32_t>(d.size());
        (void)!write(fd, &len, sizeof len);
        (void)!write(fd, d.data(), d.size());
    }
    fchmod(fd, 0644);  // the attacker (nobody) reads it: it stands for what it captured
    close(fd);
    return tmpl;
}

// A run of udp_victim with p processes: started, then stopped in its second superstep
// (process 0 waits for the go file) until go() is called.
class Victim {
  public:
    explicit Victim(int nprocs, std::vector<std::pair<std::string, std::string>> env = {})
        : nprocs_(nprocs) {
        char tmpl[] = "/tmp/udp-victim-XXXXXX";
        dir_ = mkdtemp(tmpl);
        // The attacker (nobody) reads nothing here; the directory is the test's.
        child_ = fork();
        if (child_ == 0) {
            setpgid(0, 0);
            const int out = open((dir_ + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            const int err = open((dir_ + "/err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(out, 1);
            dup2(err, 2);
            setenv("BSP_NPROCS", std::to_string(nprocs).c_str(), 1);
            setenv("BSP_TRANSPORT", "udp", 1);
            setenv("BSP_STATS", "1", 1);
            unsetenv("BSP_PID");
            for (const auto &[k, v] : env)
                setenv(k.c_str(), v.c_str(), 1);
            const std::string go = dir_ + "/go";
            execl(BSP_UDP_VICTIM, BSP_UDP_VICTIM, go.c_str(), static_cast<char *>(nullptr));
            _exit(127);
        }
        setpgid(child_, child_);
    }
    ~Victim() {
        if (child_ > 0 && !reaped_) {
            kill(-child_, SIGKILL);
            waitpid(child_, nullptr, 0);
        }
        for (const char *f : {"/out", "/err", "/go"})
            unlink((dir_ + f).c_str());
        rmdir(dir_.c_str());
    }

    // Waits (at most 60 s) until every process printed "ready"; ospid[pid], ports[pid].
    bool wait_ready() {
        const std::regex ready("ready ([0-9]+) ([0-9]+)");
        for (int i = 0; i < 6000; ++i) {
            const std::string out = slurp(dir_ + "/out");
            std::map<int, int> found;
            for (std::sregex_iterator it(out.begin(), out.end(), ready), end; it != end; ++it)
                found[std::stoi((*it)[1])] = std::stoi((*it)[2]);
            if (static_cast<int>(found.size()) == nprocs_) {
                // A process may hold a second UDP socket for a moment (the launch layer's
                // address lookup): poll until each has exactly its transport's socket.
                ospid.clear();
                ports.clear();
                for (const auto &[pid, os] : found) {
                    ospid.push_back(os);
                    const auto p = udp_ports_of(os);
                    if (p.size() == 1)
                        ports.push_back(p[0]);
                }
                if (static_cast<int>(ports.size()) == nprocs_)
                    return true;
            }
            if (waitpid(child_, &status_, WNOHANG) == child_) {
                reaped_ = true;
                return false;
            }
            std::this_thread::sleep_for(10ms);
        }
        return false;
    }

    // Lets process 0 go on and waits (at most 60 s) for the job to end: its exit status.
    int go() {
        std::ofstream(dir_ + "/go") << "go\n";
        for (int i = 0; i < 6000 && !reaped_; ++i) {
            if (waitpid(child_, &status_, WNOHANG) == child_)
                reaped_ = true;
            else
                std::this_thread::sleep_for(10ms);
        }
        if (!reaped_)
            return -1;  // the destructor kills it
        // Process 0 is the one reaped; the others print their counters as they leave.
        for (int i = 0; i < 6000 && kill(-child_, 0) == 0; ++i)
            std::this_thread::sleep_for(10ms);
        return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
    }

    std::string out() const { return slurp(dir_ + "/out"); }
    std::string err() const { return slurp(dir_ + "/err"); }

    // The counter `name` of the "bsp: udp stats of process <pid>" line (0 when absent).
    long udp_counter(int pid, const std::string &name) const {
        return counter("udp stats of process " + std::to_string(pid) + ":", name);
    }
    long messaging_counter(int pid, const std::string &name) const {
        return counter("messaging stats of process " + std::to_string(pid) + ":", name);
    }

    std::vector<int> ospid, ports;

  private:
    long counter(const std::string &prefix, const std::string &name) const {
        std::istringstream s(err());
        std::string line;
        while (std::getline(s, line)) {
            const auto at = line.find(prefix);
            if (at == std::string::npos)
                continue;
            std::istringstream f(line.substr(at + prefix.size()));
            std::string k;
            long v;
            while (f >> k >> v)
                if (k == name)
                    return v;
            return 0;
        }
        return -1;  // no stats line
    }

    int nprocs_;
    std::string dir_;
    pid_t child_ = -1;
    int status_ = 0;
    bool reaped_ = false;
};

// What a correct run prints: x on process 1, the checksums of the total exchange.
void expect_exact_results(const Victim &v, int nprocs) {
    const std::string out = v.out();
    EXPECT_NE(out.find("x = 1234\n"), std::string::npos) << out;
    for (int p = 0; p < nprocs; ++p)
        EXPECT_NE(out.find("total " + std::to_string(p) + " = " +
                           std::to_string(15L * nprocs * (nprocs + 1) / 2) + "\n"),
                  std::string::npos)
            << out;
}

std::string port(int p) {
    return std::to_string(p);
}

// The attack: three forged datagrams (process 0's barrier, counts and a put of
// "AAAA") made process 1 read x = 1094795585 instead of 1234, and the job exited 0.
TEST(UdpTrust, ForgedPutFromAnotherUserChangesNothing) {
    Victim v(2);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    const auto [rc, said] = run_tool({BSP_UDP_ATTACKER, "put", port(v.ports[1])}, false);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(said, "sent 3\n");
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, 2);
    EXPECT_EQ(v.udp_counter(1, "drop_source"), 3) << v.err();
    EXPECT_EQ(v.udp_counter(0, "drop_source"), 0) << v.err();
}

// The ACK|CLOSE flood: eighteen forged datagrams (every process "closing" towards
// every other, three times) ended a 3-process job with "Connection reset by peer".
TEST(UdpTrust, AckCloseFloodFromAnotherUserChangesNothing) {
    constexpr int kP = 3, kTimes = 3;
    Victim v(kP);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    for (int dst = 0; dst < kP; ++dst)
        for (int src = 0; src < kP; ++src) {
            if (src == dst)
                continue;
            const auto [rc, said] =
                run_tool({BSP_UDP_ATTACKER, "close", port(v.ports[static_cast<std::size_t>(dst)]),
                          std::to_string(src), std::to_string(dst), std::to_string(kTimes)},
                         false);
            ASSERT_EQ(rc, 0);
            ASSERT_EQ(said, "sent " + std::to_string(kTimes) + "\n");
        }
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, kP);
    for (int p = 0; p < kP; ++p)
        EXPECT_EQ(v.udp_counter(p, "drop_source"), (kP - 1) * kTimes) << v.err();
}

// Datagrams cut inside the header (too short to name a sender) or after it.
TEST(UdpTrust, TruncatedDatagramsAreCountedAndChangeNothing) {
    constexpr int kN = 500;
    Victim v(2);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    const auto [rc, said] =
        run_tool({BSP_UDP_ATTACKER, "trunc", port(v.ports[1]), std::to_string(kN)}, false);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(said, "sent " + std::to_string(kN) + "\n");
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, 2);
    EXPECT_EQ(v.udp_counter(1, "drop_source"), kN) << v.err();
}

// The stash flood: 2,500 forged 64 KB barrier messages of a later superstep grew a
// process from 3.9 MB to 160 MB and hung the job. Its memory stays flat now.
TEST(UdpTrust, StashFloodLeavesMemoryFlat) {
    constexpr int kN = 2500;
    constexpr long kBoundKiB = 16 << 10;  // 16 MiB: a tenth of what the flood carries
    Victim v(2);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    const long before = rss_kib(v.ospid[1]);
    const auto [rc, said] = run_tool(
        {BSP_UDP_ATTACKER, "flood", port(v.ports[1]), "0", "1", std::to_string(kN), "65536", "2"},
        false);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(said, "sent " + std::to_string(kN * 4) + "\n");  // 4 packets each
    // The victim drains its socket while it waits: the RSS once it has taken everything.
    for (int i = 0; i < 6000 && udp_rx_queue(v.ports[1]) != 0; ++i)
        std::this_thread::sleep_for(10ms);
    ASSERT_EQ(udp_rx_queue(v.ports[1]), 0);
    const long after = rss_kib(v.ospid[1]);
    std::printf("process 1 RSS: %ld KiB before the flood, %ld KiB after (bound +%ld KiB)\n", before,
                after, kBoundKiB);
    EXPECT_GT(before, 0);
    EXPECT_LT(after - before, kBoundKiB);
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, 2);
    // The socket buffer may overflow under the flood: what arrived is counted.
    EXPECT_GT(v.udp_counter(1, "drop_source"), 0) << v.err();
    EXPECT_LE(v.udp_counter(1, "drop_source"), kN * 4) << v.err();
}

// The rest needs CAP_NET_RAW (root): an attacker that sends with the source address of a
// job process (a raw socket), which the address check accepts. Only the packet MAC keyed
// from the job secret tells these forgeries (Documentation/security.rst).
#define REQUIRE_RAW()                                                                   \
    do {                                                                                \
        if (geteuid() != 0)                                                             \
            GTEST_SKIP() << "sending with another process's source address needs root"; \
    } while (0)

std::vector<std::string> spoofed(int from_port, std::vector<std::string> args) {
    args.insert(args.begin(), {BSP_UDP_ATTACKER, "--spoof", port(from_port)});
    return args;
}

TEST(UdpTrust, ForgedPutWithAProcessSourceAddressIsRefusedByTheMac) {
    REQUIRE_RAW();
    Victim v(2);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    const auto [rc, said] = run_tool(spoofed(v.ports[0], {"put", port(v.ports[1])}), true);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(said, "sent 3\n");
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, 2);
    EXPECT_EQ(v.udp_counter(1, "drop_auth"), 3) << v.err();
    EXPECT_EQ(v.udp_counter(1, "drop_source"), 0) << v.err();
}

TEST(UdpTrust, AckCloseFloodWithProcessSourceAddressesIsRefusedByTheMac) {
    REQUIRE_RAW();
    constexpr int kP = 3, kTimes = 3;
    Victim v(kP);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    for (int dst = 0; dst < kP; ++dst)
        for (int src = 0; src < kP; ++src) {
            if (src == dst)
                continue;
            const auto [rc, said] = run_tool(
                spoofed(v.ports[static_cast<std::size_t>(src)],
                        {"close", port(v.ports[static_cast<std::size_t>(dst)]), std::to_string(src),
                         std::to_string(dst), std::to_string(kTimes)}),
                true);
            ASSERT_EQ(rc, 0);
            ASSERT_EQ(said, "sent " + std::to_string(kTimes) + "\n");
        }
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, kP);
    for (int p = 0; p < kP; ++p)
        EXPECT_EQ(v.udp_counter(p, "drop_auth"), (kP - 1) * kTimes) << v.err();
}

// Cut datagrams with process 0's address: those too short to name a sender (under 8
// bytes) are the transport's, the others the engine's (truncated, before the MAC).
TEST(UdpTrust, TruncatedDatagramsWithAProcessSourceAddressAreCounted) {
    REQUIRE_RAW();
    constexpr int kN = 500;
    Victim v(2);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    const auto [rc, said] =
        run_tool(spoofed(v.ports[0], {"trunc", port(v.ports[1]), std::to_string(kN)}), true);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(said, "sent " + std::to_string(kN) + "\n");
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, 2);
    // udp_attacker cuts datagram i to i % (header + 64 - 1) + 1 bytes.
    const int whole = BSPE_HDR_LEN;
    int short_ones = 0;
    for (int i = 0; i < kN; ++i)
        short_ones += i % (whole + 64 - 1) + 1 < 8;
    EXPECT_EQ(v.udp_counter(1, "drop_source"), short_ones) << v.err();
    EXPECT_EQ(v.udp_counter(1, "drop_truncated"), kN - short_ones) << v.err();
}

// Datagrams captured from an earlier job, replayed into a new one with the same ports'
// roles: another job's secret, another key, refused by the MAC; from the attacker's own
// socket, refused by the address check first.
TEST(UdpTrust, DatagramsOfAnEarlierJobReplayedAreRefused) {
    REQUIRE_RAW();
    LoopbackCapture cap;
    ASSERT_TRUE(cap.ok());
    std::vector<std::vector<std::uint8_t>> earlier;
    {
        Victim a(2);
        ASSERT_TRUE(a.wait_ready()) << a.err();
        EXPECT_EQ(a.go(), 0) << a.err();
        expect_exact_results(a, 2);
        cap.stop();
        ASSERT_TRUE(cap.complete()) << cap.dropped() << " packets dropped by the capture";
        earlier = cap.between(a.ports[0], a.ports[1]);
    }
    ASSERT_GT(earlier.size(), 10u);
    const std::string file = replay_file(earlier);
    Victim v(2);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    const std::string n = "sent " + std::to_string(earlier.size()) + "\n";
    const auto [rc1, said1] = run_tool({BSP_UDP_ATTACKER, "replay", port(v.ports[1]), file}, false);
    EXPECT_EQ(rc1, 0);
    EXPECT_EQ(said1, n);
    const auto [rc2, said2] =
        run_tool(spoofed(v.ports[0], {"replay", port(v.ports[1]), file}), true);
    EXPECT_EQ(rc2, 0);
    EXPECT_EQ(said2, n);
    unlink(file.c_str());
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, 2);
    EXPECT_EQ(v.udp_counter(1, "drop_source"), static_cast<long>(earlier.size())) << v.err();
    EXPECT_EQ(v.udp_counter(1, "drop_auth"), static_cast<long>(earlier.size())) << v.err();
}

// The job's own datagrams of its first supersteps, replayed with process 0's address:
// the MAC is right, the engine's sequence numbers make them duplicates.
TEST(UdpTrust, DatagramsOfTheSameJobReplayedChangeNothing) {
    REQUIRE_RAW();
    LoopbackCapture cap;
    ASSERT_TRUE(cap.ok());
    Victim v(2);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    cap.stop();
    ASSERT_TRUE(cap.complete()) << cap.dropped() << " packets dropped by the capture";
    const auto own = cap.between(v.ports[0], v.ports[1]);
    ASSERT_GT(own.size(), 0u);
    const std::string file = replay_file(own);
    const auto [rc, said] = run_tool(spoofed(v.ports[0], {"replay", port(v.ports[1]), file}), true);
    unlink(file.c_str());
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(said, "sent " + std::to_string(own.size()) + "\n");
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, 2);
    EXPECT_EQ(v.udp_counter(1, "drop_auth"), 0) << v.err();
    EXPECT_EQ(v.udp_counter(1, "drop_source"), 0) << v.err();
    // Every replayed DATA packet is a duplicate; ACKs repeat what is known.
    long data = 0;
    for (const auto &d : own)
        data += d.size() > 1 && d[1] == BSPE_T_DATA;
    EXPECT_EQ(v.udp_counter(1, "drop_dup"), data) << v.err();
}

// The stash flood with process 0's address: refused by the MAC, memory flat.
TEST(UdpTrust, StashFloodWithAProcessSourceAddressLeavesMemoryFlat) {
    REQUIRE_RAW();
    constexpr int kN = 2500;
    constexpr long kBoundKiB = 16 << 10;
    Victim v(2);
    ASSERT_TRUE(v.wait_ready()) << v.err();
    const long before = rss_kib(v.ospid[1]);
    const auto [rc, said] = run_tool(spoofed(v.ports[0], {"flood", port(v.ports[1]), "0", "1",
                                                          std::to_string(kN), "65536", "2"}),
                                     true);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(said, "sent " + std::to_string(kN * 4) + "\n");
    for (int i = 0; i < 6000 && udp_rx_queue(v.ports[1]) != 0; ++i)
        std::this_thread::sleep_for(10ms);
    ASSERT_EQ(udp_rx_queue(v.ports[1]), 0);
    const long after = rss_kib(v.ospid[1]);
    std::printf("process 1 RSS: %ld KiB before the flood, %ld KiB after (bound +%ld KiB)\n", before,
                after, kBoundKiB);
    EXPECT_LT(after - before, kBoundKiB);
    EXPECT_EQ(v.go(), 0) << v.err();
    expect_exact_results(v, 2);
    EXPECT_GT(v.udp_counter(1, "drop_auth"), 0) << v.err();
    EXPECT_LE(v.udp_counter(1, "drop_auth"), kN * 4) << v.err();
}

}  // namespace
