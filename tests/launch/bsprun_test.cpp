// bsprun end to end: jobs of the probe program (tests/launch/launch_probe.cpp).
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "process_harness.hpp"
#include "rendezvous_address.hpp"

namespace {

using launch_test::Result;
using launch_test::run;
using launch_test::sorted_lines;
using launch_test::Spec;

std::vector<std::string> bsprun(std::vector<std::string> args) {
    args.insert(args.begin(), BSPRUN_PATH);
    return args;
}

void expect_clean(const Result &r) {
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.leftovers.empty()) << "left behind: " << ::testing::PrintToString(r.leftovers);
}

TEST(Bsprun, AllgatherWithOneToEightProcesses) {
    for (int p = 1; p <= 8; ++p) {
        SCOPED_TRACE("P=" + std::to_string(p));
        Result r = run({bsprun({"-n", std::to_string(p), PROBE_PATH, "gather", "3"})});
        expect_clean(r);
        EXPECT_EQ(r.status, 0);
        EXPECT_EQ(r.err, "");
        std::vector<std::string> want;
        for (int i = 0; i < p; ++i) {
            want.push_back("process " + std::to_string(i) + " of " + std::to_string(p) +
                           ": 3 rounds ok");
        }
        std::sort(want.begin(), want.end());
        EXPECT_EQ(sorted_lines(r.out), want);
    }
}

TEST(Bsprun, BsplibProcessCountSpellings) {
    for (auto spelling :
         {std::vector<std::string>{"-np", "3"}, {"-npes", "3"}, {"-n3"}, {"--nprocs=3"}}) {
        auto args = spelling;
        args.insert(args.end(), {PROBE_PATH, "gather", "1"});
        Result r = run({bsprun(args)});
        expect_clean(r);
        EXPECT_EQ(r.status, 0);
        EXPECT_EQ(sorted_lines(r.out).size(), 3u) << r.out;
    }
}

TEST(Bsprun, ReturnsTheExitStatusOfAProcessAfterANormalEnd) {
    Result r = run({bsprun({"-n", "4", PROBE_PATH, "exit-after-finish", "2", "5"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 5);
    EXPECT_EQ(r.err, "");
}

TEST(Bsprun, AbortEndsEveryProcessWithOneMessage) {
    Result r = run({bsprun({"-n", "4", PROBE_PATH, "abort", "2"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "probe: process 2 aborts on purpose\n");
    // Buffered output of the aborting process (no newline, never flushed by it).
    EXPECT_EQ(r.out, "process 2: output before abort");
}

TEST(Bsprun, AbortEndsProcessesThatAreComputing) {
    Result r = run({bsprun({"-n", "4", "--grace", "30", PROBE_PATH, "abort-computing", "1"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "probe: process 1 aborts on purpose\n");
    EXPECT_EQ(sorted_lines(r.out),
              (std::vector<std::string>{"process 0: computing", "process 2: computing",
                                        "process 3: computing"}));
}

TEST(Bsprun, ControlFdBecomesReadableAndLateAbortsStayQuiet) {
    // A long teardown grace: the processes must see control_fd and end by themselves.
    Spec s{bsprun({"-n", "4", "--grace", "30", PROBE_PATH, "control", "3"})};
    s.env = {"BSP_TEARDOWN_GRACE=30"};
    Result r = run(s);
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "probe: process 3 aborts on purpose\n");
    EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"process 0: control_fd readable",
                                                             "process 1: control_fd readable",
                                                             "process 2: control_fd readable"}));
}

TEST(Bsprun, SegfaultEndsTheJob) {
    Result r = run({bsprun({"-n", "4", "--grace", "30", PROBE_PATH, "segv", "1"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 128 + SIGSEGV);
    EXPECT_EQ(r.err,
              "bsprun: process 1 was killed by signal 11 (Segmentation fault) before bsp_end\n");
}

TEST(Bsprun, KilledProcessEndsTheJob) {
    Result r = run({bsprun({"-n", "3", "--grace", "30", PROBE_PATH, "kill", "0"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 128 + SIGKILL);
    EXPECT_EQ(r.err, "bsprun: process 0 was killed by signal 9 (Killed) before bsp_end\n");
}

TEST(Bsprun, ExitWithoutFinishEndsTheJob) {
    Result r = run({bsprun({"-n", "4", PROBE_PATH, "exit", "1", "7"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 7);
    EXPECT_EQ(r.err, "bsprun: process 1 exited with status 7 before bsp_end\n");

    r = run({bsprun({"-n", "2", PROBE_PATH, "exit", "1", "0"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 1) << "leaving early with status 0 is still a failure";
    EXPECT_EQ(r.err, "bsprun: process 1 exited with status 0 before bsp_end\n");
}

TEST(Bsprun, NoJoinLimitUnlessAsked) {
    // Process 0 reads its input before it joins (as BSPedupack programs do): bsprun
    // imposes no join limit by default, BSP_JOIN_TIMEOUT sets one.
    Spec s{bsprun({"-n", "3", PROBE_PATH, "latejoin", "1.5"})};
    s.env = {"BSP_TEARDOWN_GRACE=30"};
    Result r = run(s);
    expect_clean(r);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(sorted_lines(r.out).size(), 3u);

    // Process 0 now takes far longer than the limit (it is ended while it waits).
    s = Spec{bsprun({"-n", "3", PROBE_PATH, "latejoin", "1000"})};
    s.env = {"BSP_JOIN_TIMEOUT=3"};
    r = run(s);
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "bsprun: only 2 of 3 processes joined the job within 3 s (missing: 0)\n");
}

TEST(Bsprun, ProcessThatNeverJoinsEndsTheJob) {
    Result r = run({bsprun({"-n", "3", PROBE_PATH, "nojoin", "2"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err,
              "bsprun: process 2 exited without joining the job (it never called bsp_begin)\n");
}

TEST(Bsprun, MismatchedCollectivesAreReported) {
    Result r = run({bsprun({"-n", "2", PROBE_PATH, "mismatch"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err,
              "bsprun: processes disagree on the next collective: process(es) 0 ended the job "
              "(finish) while process(es) 1 wait in an allgather (collective calls must "
              "match)\n");
}

TEST(Bsprun, StandardInputGoesToProcessZeroOnly) {
    Spec s{bsprun({"-n", "3", PROBE_PATH, "stdin"})};
    s.input = "3\nhello world\n";
    Result r = run(s);
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(sorted_lines(r.out),
              (std::vector<std::string>{"hello world", "process 0 read 14 bytes: 3",
                                        "process 1 stdin empty", "process 2 stdin empty"}));
}

TEST(Bsprun, LabelPrefixesEveryLineWithThePid) {
    Result r = run({bsprun({"-n", "3", "-l", PROBE_PATH, "lines", "200"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    std::vector<int> next(3, 0);
    std::regex line(R"(\[(\d)\] line (\d+) of process (\d))");
    std::istringstream in(r.out);
    std::string l;
    int count = 0;
    while (std::getline(in, l)) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(l, m, line)) << l;
        int label = std::stoi(m[1]), i = std::stoi(m[2]), p = std::stoi(m[3]);
        EXPECT_EQ(label, p);
        EXPECT_EQ(i, next[static_cast<std::size_t>(p)]++) << "lines of one process keep order";
        ++count;
    }
    EXPECT_EQ(count, 600);
}

TEST(Bsprun, ShowPrintsTheCommandsAndRunsNothing) {
    std::string marker =
        std::filesystem::temp_directory_path() / ("bsprun-show-" + std::to_string(::getpid()));
    Result r = run({bsprun({"-n", "2", "--show", "/usr/bin/touch", marker})});
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    EXPECT_FALSE(std::filesystem::exists(marker));
    // The job secret is never shown (nor on any command line).
    std::regex want(R"(BSP_PID=(\d) BSP_NPROCS=2 )"
                    R"(BSP_RENDEZVOUS=unix:\S+/bsprun\.XXXXXX/control /usr/bin/touch \S+)");
    auto lines = sorted_lines(r.out);
    ASSERT_EQ(lines.size(), 2u);
    for (int i = 0; i < 2; ++i) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(lines[static_cast<std::size_t>(i)], m, want))
            << lines[static_cast<std::size_t>(i)];
        EXPECT_EQ(std::stoi(m[1]), i);
    }

    r = run({bsprun({"-n", "3", "--hosts", "n0,n1", "--launch", "ip netns exec {host}", "--show",
                     "prog", "a b"})});
    EXPECT_EQ(r.status, 0);
    lines = sorted_lines(r.out);
    ASSERT_EQ(lines.size(), 3u);
    std::regex netns(R"(ip netns exec (n\d) env BSP_PID=(\d) BSP_NPROCS=3 )"
                     R"(BSP_RENDEZVOUS=unix:\S+ BSP_HOST=(n\d) prog 'a b')");
    const char *hosts[] = {"n0", "n1", "n0"};
    for (const auto &l : lines) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(l, m, netns)) << l;
        EXPECT_EQ(m[1], hosts[std::stoi(m[2])]);
        EXPECT_EQ(m[3], m[1]);
    }
}

TEST(Bsprun, TcpRendezvousHostForms) {
    auto shown = [](const char *rendezvous) {
        Result r = run({bsprun({"-n", "1", "--rendezvous", rendezvous, "--show", "prog"})});
        EXPECT_EQ(r.status, 0) << rendezvous << ": " << r.err;
        auto at = r.out.find("BSP_RENDEZVOUS=");
        if (at == std::string::npos)
            return r.out;
        at = r.out.rfind(' ', at) + 1;  // the whole word, with its quotes
        return r.out.substr(at, r.out.find(' ', at) - at);
    };
    EXPECT_EQ(shown("tcp:127.0.0.1"), "'BSP_RENDEZVOUS=tcp:127.0.0.1:<port>'");
    EXPECT_EQ(shown("tcp:[::1]"), "'BSP_RENDEZVOUS=tcp:[::1]:<port>'");
    EXPECT_EQ(shown("tcp:[::1]:7"), "'BSP_RENDEZVOUS=tcp:[::1]:7'");
    EXPECT_EQ(shown("tcp:[node1]"), "'BSP_RENDEZVOUS=tcp:node1:<port>'");
    for (auto [bad, reason] : {std::pair<const char *, const char *>{
                                   "tcp:h:99999",
                                   "--rendezvous: rendezvous address 'tcp:h:99999': bad port "
                                   "'99999'"},
                               {"tcp:[[x]]:1",
                                "--rendezvous: rendezvous address 'tcp:[[x]]:1': "
                                "'[' and ']' may only enclose the whole host, as "
                                "in tcp:[::1]:PORT"},
                               {"tcp:[[x]]",
                                "--rendezvous 'tcp:[[x]]': expected tcp:HOST or "
                                "tcp:HOST:PORT (an IPv6 host in brackets, "
                                "tcp:[::1])"},
                               {"tcp:",
                                "--rendezvous 'tcp:': expected tcp:HOST or "
                                "tcp:HOST:PORT (an IPv6 host in brackets, tcp:[::1])"}}) {
        Result r = run({bsprun({"-n", "1", "--rendezvous", bad, "--show", "prog"})});
        EXPECT_EQ(r.status, 2) << bad;
        EXPECT_EQ(r.err, "bsprun: " + std::string(reason) + "\nTry 'bsprun --help'.\n");
    }
}

TEST(Bsprun, HostListWithLaunchPrefixOnOneMachine) {
    Result r = run({bsprun({"-n", "6", "--hosts", "a,b,c", "--map", "block", "--launch",
                            "env BSP_TEST_HOST={host}", PROBE_PATH, "where"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(sorted_lines(r.out),
              (std::vector<std::string>{"process 0 host a test a", "process 1 host a test a",
                                        "process 2 host b test b", "process 3 host b test b",
                                        "process 4 host c test c", "process 5 host c test c"}));

    r = run({bsprun({"-n", "4", "--hosts", "a,b,c", "--launch",
                     "sh -c 'BSP_TEST_HOST=$0 exec \"$@\"' {host}", PROBE_PATH, "where"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(sorted_lines(r.out),
              (std::vector<std::string>{"process 0 host a test a", "process 1 host b test b",
                                        "process 2 host c test c", "process 3 host a test a"}));
}

TEST(Bsprun, HostfileAndTcpRendezvous) {
    std::string file =
        std::filesystem::temp_directory_path() / ("bsprun-hosts-" + std::to_string(::getpid()));
    {
        std::FILE *f = std::fopen(file.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs("# test hosts\nx1\n\nx2  # second\n", f);
        std::fclose(f);
    }
    Result r = run({bsprun({"--hostfile", file, "--launch", "env BSP_TEST_HOST={host}",
                            "--rendezvous", "tcp:127.0.0.1", PROBE_PATH, "where"})});
    std::filesystem::remove(file);
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(sorted_lines(r.out),
              (std::vector<std::string>{"process 0 host x1 test x1", "process 1 host x2 test x2"}));
}

TEST(Bsprun, SshLaunchQuotesTheRemoteCommand) {
    // fake_ssh/ssh runs "ssh HOST COMMAND" through sh locally, as sshd would.
    std::string ssh = std::string(LAUNCH_TEST_SOURCE_DIR) + "/fake_ssh/ssh {host}";
    std::string cwd = std::filesystem::current_path();
    Result r = run({bsprun({"-n", "3", "--hosts", "h1,h2", "--launch", ssh, "--rendezvous",
                            "tcp:127.0.0.1", PROBE_PATH, "args", "a b", "it's", "$HOME", ""})});
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.err, "");
    std::vector<std::string> want;
    for (auto [pid, host] : {std::pair{0, "h1"}, {1, "h2"}, {2, "h1"}}) {
        want.push_back("process " + std::to_string(pid) + " in " + cwd + " on " + host +
                       " [a b] [it's] [$HOME] []");
    }
    EXPECT_EQ(sorted_lines(r.out), want);

    // By default an ssh launch rendezvous over TCP at this machine's host name.
    char name[256] = {};
    addrinfo *ai = nullptr;
    if (::gethostname(name, sizeof name - 1) == 0 &&
        ::getaddrinfo(name, nullptr, nullptr, &ai) == 0) {
        ::freeaddrinfo(ai);
        r = run({bsprun({"-n", "3", "--hosts", "h1,h2", "--launch", ssh, "-v", PROBE_PATH, "args",
                         "a b", "it's", "$HOME", ""})});
        expect_clean(r);
        EXPECT_EQ(r.status, 0);
        EXPECT_EQ(sorted_lines(r.out), want);
        EXPECT_NE(r.err.find(std::string("rendezvous tcp:") + name + ":"), std::string::npos)
            << r.err;
    }
}

// Over ssh the job secret travels on ssh's standard input: no command line of any process
// of the job shows it (checked by a scan of /proc as the job's own user, which does find it
// in the processes' environments), and a `nobody` process scanning /proc finds it nowhere
// and cannot join.
TEST(Bsprun, SshJobSecretIsOnNoCommandLineAndNobodyCannotJoin) {
    std::string ssh = std::string(LAUNCH_TEST_SOURCE_DIR) + "/fake_ssh/ssh {host}";
    std::string gate =
        std::filesystem::temp_directory_path() / ("bsprun-gate-" + std::to_string(::getpid()));
    std::filesystem::remove(gate);
    std::string secret;
    std::optional<Result> control;
    std::optional<Result> nobody;
    bool skipped = false;
    Spec s{bsprun({"-n", "3", "--hosts", "h1,h2", "--launch", ssh, "--rendezvous", "tcp:127.0.0.1",
                   PROBE_PATH, "hold", gate})};
    s.signal_when = [&](const std::string &out) {
        auto lines = sorted_lines(out);
        if (control || lines.size() < 3) {
            return false;
        }
        std::regex holding(R"(process (\d): holding ([0-9a-f]{32}) session (\d+))");
        std::set<std::string> secrets, sessions;
        for (const auto &l : lines) {
            std::smatch m;
            if (std::regex_match(l, m, holding)) {
                secrets.insert(m[2]);
                sessions.insert(m[3]);
            }
        }
        EXPECT_EQ(secrets.size(), 1u) << out;  // one secret, the same in every process
        EXPECT_EQ(sessions.size(), 1u) << out;
        if (secrets.size() == 1 && sessions.size() == 1) {
            secret = *secrets.begin();
            control = run({{INTRUDER_PATH, "--session", *sessions.begin(), "--no-join"}});
            nobody = launch_test::run_intruder_as_nobody({"--session", *sessions.begin()});
            skipped = !nobody;
        }
        std::FILE *f = std::fopen(gate.c_str(), "w");
        if (f != nullptr) {
            std::fclose(f);
        }
        return false;
    };
    Result r = run(s, std::chrono::seconds(60));
    std::filesystem::remove(gate);
    expect_clean(r);
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<std::string> done;
    for (int p = 0; p < 3; ++p) {
        done.push_back("process " + std::to_string(p) + ": done");
    }
    std::vector<std::string> ended;
    for (const auto &l : sorted_lines(r.out)) {
        if (l.ends_with(": done")) {
            ended.push_back(l);
        }
    }
    EXPECT_EQ(ended, done);
    ASSERT_TRUE(control.has_value());
    ASSERT_EQ(secret.size(), 32u);
    // As the job's user: the secret is in the environment of the processes (the scan
    // works), in no command line.
    EXPECT_NE(control->out.find("found " + secret + " in environ of"), std::string::npos)
        << control->out;
    EXPECT_EQ(control->out.find("found " + secret + " in cmdline"), std::string::npos)
        << control->out;
    if (skipped) {
        GTEST_SKIP() << "not root: cannot run the intruder as nobody";
    }
    ASSERT_TRUE(nobody.has_value());
    EXPECT_EQ(nobody->status, 0) << nobody->err;
    EXPECT_EQ(nobody->out.find("found"), std::string::npos) << nobody->out;
    EXPECT_NE(nobody->out.find("readable environ: 0\n"), std::string::npos) << nobody->out;
    std::regex join(R"(join tcp:127\.0\.0\.1:\d+: (.*))");
    int attempts = 0;
    for (const auto &l : sorted_lines(nobody->out)) {
        std::smatch m;
        if (std::regex_match(l, m, join)) {
            ++attempts;
            EXPECT_EQ(m[1],
                      "refused (1) it is the coordinator of another job (job token mismatch)");
        }
    }
    EXPECT_EQ(attempts, 1) << nobody->out;
}

// A free TCP port of 127.0.0.1 (free for the moment).
int free_port() {
    auto l = bsp::launch::listen_on(bsp::launch::RendezvousAddress::parse("tcp:127.0.0.1:0"));
    return bsp::launch::bound_tcp_port(l.get());
}

bsp::launch::UniqueFd connect_port(int port) {
    return bsp::launch::connect_to(
        bsp::launch::RendezvousAddress::parse("tcp:127.0.0.1:" + std::to_string(port)),
        std::chrono::steady_clock::now() + std::chrono::seconds(20));
}

void touch(const std::string &path) {
    std::FILE *f = std::fopen(path.c_str(), "w");
    if (f != nullptr) {
        std::fclose(f);
    }
}

std::vector<std::string> gather_lines(int p, int rounds) {
    std::vector<std::string> want;
    for (int i = 0; i < p; ++i) {
        want.push_back("process " + std::to_string(i) + " of " + std::to_string(p) + ": " +
                       std::to_string(rounds) + " rounds ok");
    }
    return want;
}

// A job whose processes join once `attack` (run on a thread while bsprun runs, given its
// rendezvous port) has returned; its bsprun's peak RSS and CPU time, and those of the same
// job without attack.
struct Flood {
    Result attacked, baseline;
};

// What bsprun says about the baseline's one connection (that only checks it listens).
const std::string kProbedOnce =
    "bsprun: refused a control connection that is not from this job (it closed the "
    "connection before its hello)\n";

Flood run_under_attack(const std::function<void(int port)> &attack,
                       std::optional<unsigned long> nofile = std::nullopt) {
    std::string gate =
        std::filesystem::temp_directory_path() / ("bsprun-flood-" + std::to_string(::getpid()));
    Flood f;
    for (bool attacked : {false, true}) {
        std::filesystem::remove(gate);
        int port = free_port();
        Spec s{bsprun({"-n", "2", "--rendezvous", "tcp:127.0.0.1:" + std::to_string(port),
                       PROBE_PATH, "joinafter", gate})};
        s.nofile = nofile;
        std::thread attacker([&] {
            if (attacked) {
                attack(port);
            } else {
                connect_port(port);  // bsprun listens: the baseline job may start
            }
            touch(gate);
        });
        Result r = run(s, std::chrono::seconds(120));
        attacker.join();
        std::filesystem::remove(gate);
        (attacked ? f.attacked : f.baseline) = r;
    }
    return f;
}

// Four connections each announce a 63 MiB frame before any hello (issue: bsprun grew from
// 3.4 MB to 316 MB). Before its hello a connection may send only what a hello needs: each
// is refused at its header, the job completes, bsprun's memory stays where it was.
TEST(Bsprun, RendezvousRefusesLargeFramesBeforeTheHello) {
    constexpr std::uint32_t kAnnounced = 63u << 20;
    Flood f = run_under_attack([](int port) {
        std::vector<char> chunk(1 << 20, 'A');
        for (int i = 0; i < 4; ++i) {
            auto fd = connect_port(port);
            std::uint32_t header[2] = {htonl(1), htonl(kAnnounced)};
            ::send(fd.get(), header, sizeof header, MSG_NOSIGNAL);
            for (std::uint32_t sent = 0; sent < kAnnounced;) {
                ssize_t n = ::send(fd.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL);
                if (n <= 0) {
                    break;  // refused: bsprun closed the connection
                }
                sent += static_cast<std::uint32_t>(n);
            }
        }
    });
    std::printf(
        "63 MiB frames: bsprun peak RSS %ld KiB (without attack %ld KiB), CPU %ld ms "
        "(without attack %ld ms)\n",
        f.attacked.max_rss_kib, f.baseline.max_rss_kib, f.attacked.cpu_ms, f.baseline.cpu_ms);
    for (const Result *r : {&f.baseline, &f.attacked}) {
        expect_clean(*r);
        EXPECT_EQ(r->status, 0) << r->err;
        EXPECT_EQ(sorted_lines(r->out), gather_lines(2, 3));
    }
    EXPECT_EQ(f.baseline.err, kProbedOnce);
    EXPECT_EQ(f.attacked.err,
              "bsprun: refused a control connection that is not from this job (control protocol: "
              "message of 66060288 bytes exceeds the limit of 272)\n"
              "bsprun: refused 3 more control connections that are not from this job\n");
    // Nothing of the 252 MiB announced is kept: at most 16 MiB more than without attack.
    EXPECT_LE(f.attacked.max_rss_kib, f.baseline.max_rss_kib + 16 * 1024);
}

// A flood of 70 connections that never say hello, held idle for 1.5 s before the job's
// processes join (a spinning accept loop would burn that time on a CPU), with bsprun
// limited to @fds descriptors. Checks what both such floods must show: the job runs as
// without the attack, all 70 are refused, the memory and CPU of a quiet job.
Flood idle_flood(int fds) {
    std::vector<bsp::launch::UniqueFd> held;
    Flood f = run_under_attack(
        [&held](int port) {
            held.clear();
            for (int i = 0; i < 70; ++i) {
                held.push_back(connect_port(port));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        },
        fds);
    held.clear();
    std::printf(
        "70 idle connections, %d descriptors: bsprun peak RSS %ld KiB (without attack %ld "
        "KiB), CPU %ld ms (without attack %ld ms)\n",
        fds, f.attacked.max_rss_kib, f.baseline.max_rss_kib, f.attacked.cpu_ms, f.baseline.cpu_ms);
    for (const Result *r : {&f.baseline, &f.attacked}) {
        expect_clean(*r);
        EXPECT_EQ(r->status, 0) << r->err;
        EXPECT_EQ(sorted_lines(r->out), gather_lines(2, 3));
    }
    EXPECT_EQ(f.baseline.err, kProbedOnce);
    EXPECT_LE(f.attacked.max_rss_kib, f.baseline.max_rss_kib + 16 * 1024);
    // 1.5 s of idle attack: a spinning accept loop would add about that much CPU time.
    EXPECT_LE(f.attacked.cpu_ms, f.baseline.cpu_ms + 500);
    return f;
}

// 70 connections that never say hello, under a limit of 64 descriptors (issue: 92% CPU,
// the job's processes failed). At most 32 wait at once (the oldest makes room for a new
// one), out of descriptors accept() backs off instead of spinning: the job completes, all
// 70 are refused, bsprun's CPU time stays that of a quiet job.
TEST(Bsprun, RendezvousSurvivesIdleConnectionsUnderADescriptorLimit) {
    Flood f = idle_flood(64);
    EXPECT_EQ(f.attacked.err,
              "bsprun: refused a control connection that is not from this job (closed to make "
              "room: at most 32 connections may wait for their hello)\n"
              "bsprun: refused 69 more control connections that are not from this job\n");
}

// The same with only 20 descriptors: accept() fails with EMFILE long before 32 strangers
// wait; each time the oldest stranger makes room. The job completes, all 70 are refused.
TEST(Bsprun, RendezvousMakesRoomWhenOutOfDescriptors) {
    Flood f = idle_flood(20);
    EXPECT_EQ(f.attacked.err,
              "bsprun: refused a control connection that is not from this job (closed to make "
              "room: out of file descriptors)\n"
              "bsprun: refused 69 more control connections that are not from this job\n");
}

TEST(Bsprun, TimeLimitEndsTheJob) {
    Result r = run({bsprun({"-n", "3", "--timeout", "0.5", PROBE_PATH, "sleep"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 124);
    EXPECT_EQ(r.err, "bsprun: time limit of 0.5 s exceeded; job ended\n");
}

TEST(Bsprun, SigtermIsForwardedAndEndsTheJob) {
    Spec s{bsprun({"-n", "3", PROBE_PATH, "sleep"})};
    s.signal_when = [](const std::string &out) { return sorted_lines(out).size() == 3; };
    s.signal = SIGTERM;
    Result r = run(s);
    expect_clean(r);
    EXPECT_EQ(r.status, 128 + SIGTERM);
    EXPECT_EQ(r.err, "bsprun: received TERM; job ended\n");
}

TEST(Bsprun, SigintIsForwardedAndEndsTheJob) {
    Spec s{bsprun({"-n", "2", PROBE_PATH, "sleep"})};
    s.signal_when = [](const std::string &out) { return sorted_lines(out).size() == 2; };
    s.signal = SIGINT;
    Result r = run(s);
    expect_clean(r);
    EXPECT_EQ(r.status, 128 + SIGINT);
    EXPECT_EQ(r.err, "bsprun: received INT; job ended\n");
}

TEST(Bsprun, ProcessesDieWithAKilledBsprun) {
    // bsprun gets no chance to clean up: PR_SET_PDEATHSIG ends its processes.
    std::filesystem::path tmp =
        std::filesystem::temp_directory_path() / ("bsprun-killed-" + std::to_string(::getpid()));
    std::filesystem::create_directory(tmp);
    Spec s{bsprun({"-n", "3", PROBE_PATH, "sleep"})};
    s.env = {"TMPDIR=" + tmp.string()};
    s.signal_when = [](const std::string &out) { return sorted_lines(out).size() == 3; };
    s.signal = SIGKILL;
    Result r = run(s);
    expect_clean(r);
    EXPECT_EQ(r.status, 128 + SIGKILL);
    // The killed processes may still be removing their files from tmp while it is
    // being removed: retry instead of throwing (which would abort the whole suite).
    std::error_code ec;
    for (int i = 0; i < 100; ++i) {
        std::filesystem::remove_all(tmp, ec);
        if (!ec)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_FALSE(ec) << "removing " << tmp << ": " << ec.message();
}

TEST(Bsprun, NoOrphanIsLeftBehind) {
    Result r = run({bsprun({"-n", "3", "--grace", "1", PROBE_PATH, "orphan", "1"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "probe: process 1 aborts with a child running\n");
}

TEST(Bsprun, ProcessWithAnotherJobTokenIsRefused) {
    // A process presenting another job's token is refused with a clear error, and ends
    // this job like any process that leaves before joining.
    Result r = run({bsprun({"-n", "2", PROBE_PATH, "badtoken", "1"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 2);
    std::regex want(
        "bsprun: refused a control connection that is not from this job\n"
        "launch_probe: bsp: process 1: the job coordinator at unix:\\S+/control refused this "
        "process: it is the coordinator of another job \\(job token mismatch\\); BSP_JOB or "
        "BSP_RENDEZVOUS of this process is wrong\n"
        "bsprun: process 1 exited with status 2 before joining the job\n");
    EXPECT_TRUE(std::regex_match(r.err, want)) << r.err;
}

TEST(Bsprun, RunsProgramsThatAreNotBspPrograms) {
    Result r = run({bsprun({"-n", "3", "/bin/echo", "hi"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "hi\nhi\nhi\n");
}

TEST(Bsprun, MissingProgramIsAClearError) {
    Result r = run({bsprun({"-n", "2", "/nonexistent/prog"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 127);
    EXPECT_EQ(r.err,
              "bsprun: cannot run '/nonexistent/prog' for process 0: No such file or directory\n");
}

TEST(Bsprun, UsageErrorsAndVersion) {
    Result r = run({bsprun({PROBE_PATH, "gather", "1"})});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "bsprun: say how many processes to start with -n P\nTry 'bsprun --help'.\n");
    r = run({bsprun({"-n", "0", PROBE_PATH})});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err,
              "bsprun: -n expects a positive number of processes, not '0'\nTry 'bsprun --help'.\n");
    // Refused before anything is planned (it used to die of std::bad_alloc).
    r = run({bsprun({"-n", "2000000000", PROBE_PATH})});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err,
              "bsprun: -n 2000000000: at most 65535 processes are supported\nTry 'bsprun "
              "--help'.\n");
    r = run({bsprun({"--version"})});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "bsprun (AF_BSP) " BSPRUN_VERSION "\n");
}

TEST(Bsprun, VerbosePrintsTheLayoutAndPassesBspVerbose) {
    Result r = run({bsprun({"-n", "2", "-v", "/usr/bin/env"})});
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    auto lines = sorted_lines(r.out);
    EXPECT_EQ(std::count(lines.begin(), lines.end(), "BSP_VERBOSE=1"), 2);
    EXPECT_NE(r.err.find("bsprun: 2 processes, rendezvous unix:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bsprun: process 1 on this machine: BSP_PID=1 "), std::string::npos);
    EXPECT_NE(r.err.find("bsprun: job ended with exit status 0\n"), std::string::npos);
}

}  // namespace
