// Whole BSPlib programs (C, linked against libbsp) run as separate processes over the
// UDP transport: started directly (bsp_begin forks through spawn_local) with exact
// expected output, exit status, and no process left behind.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <string>
#include <utility>

#include "program_runner.hpp"

using bsp::test::ProgramResult;
using bsp::test::run_program;
using bsp::test::sorted_lines;

namespace {

std::string program(const char *name) {
    return std::string(BSP_PROGRAMS_DIR) + "/" + name;
}

// How the programs are started: directly (bsp_begin forks through spawn_local) or by
// bsprun -n P (every process joins the job from the environment).
bool g_use_bsprun = false;

ProgramResult run(const char *name, int nprocs, std::vector<std::string> args = {},
                  std::vector<std::pair<std::string, std::string>> env = {}) {
    std::vector<std::string> argv;
    if (g_use_bsprun)
        argv = {BSPRUN_PATH, "-n", std::to_string(nprocs)};
    argv.push_back(program(name));
    argv.insert(argv.end(), args.begin(), args.end());
    // Defaults first: the test's own variables are set after them and win.
    env.insert(env.begin(), {{"BSP_NPROCS", std::to_string(nprocs)}, {"BSP_TRANSPORT", "udp"}});
    return run_program(argv, env);
}

void expect_clean(const ProgramResult &r) {
    EXPECT_FALSE(r.timed_out);
    EXPECT_FALSE(r.leftovers);
}

}  // namespace

const char *const kPrimitivesOutput =
    "[0] a = 0 201 102, got 20, hpget 10\n"
    "[1] a = 100 0 202, got 0, hpget 20\n"
    "[2] a = 200 101 0, got 10, hpget 0\n"
    "[0] previous tag size 0, queue 3 messages 15 bytes: 0:m0>0 10:m1>0 20:m2>0\n"
    "[1] previous tag size 0, queue 3 messages 15 bytes: 1:m0>1 11:m1>1 21:m2>1\n"
    "[2] previous tag size 0, queue 3 messages 15 bytes: 2:m0>2 12:m1>2 22:m2>2\n"
    "[0] hpmove 3 then -1, bsmp_info 0 0, previous tag size 4\n"
    "[1] hpmove 3 then -1, bsmp_info 0 0, previous tag size 4\n"
    "[2] hpmove 3 then -1, bsmp_info 0 0, previous tag size 4\n"
    "[0] nprocs before begin 3, time ok 1\n"
    "[1] nprocs before begin 3, time ok 1\n"
    "[2] nprocs before begin 3, time ok 1\n"
    "process 0 continues alone after bsp_end\n";

class SeedPrograms : public ::testing::TestWithParam<int> {};

TEST_P(SeedPrograms, AllSumsVersion1) {
    const int p = GetParam();
    auto r = run("allsums_v1", p);
    std::string want;
    for (int i = 0; i < p; ++i)
        want += "allsums1 on process " + std::to_string(i) + ": " +
                std::to_string((i + 1) * (i + 2) / 2) + "\n";
    EXPECT_EQ(r.out, want);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

TEST_P(SeedPrograms, AllSumsVersion2) {
    const int p = GetParam();
    auto r = run("allsums_v2", p);
    std::string want;
    for (int i = 0; i < p; ++i)
        want += "allsums2 on process " + std::to_string(i) + ": " +
                std::to_string((i + 1) * (i + 2) / 2) + "\n";
    EXPECT_EQ(r.out, want);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

TEST_P(SeedPrograms, AllSumsOnAnArray) {
    const int p = GetParam();
    auto r = run("allsums_array", p);
    std::string want;
    for (int i = 0; i < p; ++i) {
        want += "On process " + std::to_string(i) + ": ";
        for (int j = 1; j <= 100; ++j)
            want += std::to_string(100 * i + j) + " ";
        want += "\n";
    }
    EXPECT_EQ(r.out, want);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

INSTANTIATE_TEST_SUITE_P(Procs, SeedPrograms, ::testing::Values(1, 2, 3, 4, 8));

TEST(Programs, EveryPrimitiveInInitMode) {
    auto r = run("primitives", 3);
    EXPECT_EQ(r.out, kPrimitivesOutput);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

TEST(Programs, VerboseReportsTheTransport) {
    auto r = run("allsums_v1", 2, {}, {{"BSP_VERBOSE", "1"}});
    EXPECT_EQ(r.err,
              "bsp: nprocs=2 transport=udp schedule=latin-square (protocol engine over 1 UDP "
              "rail [127.0.0.1], fragment 16384 bytes, packets authenticated)\n");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

TEST(Programs, BadEnvironmentIsReported) {
    auto r = run("allsums_v1", 2, {}, {{"BSP_SCHEDULE", "fastest"}});
    EXPECT_EQ(r.err,
              "BSPlib error: bsp_begin on process 0: BSP_SCHEDULE=fastest is invalid (expected "
              "latin, random or pid)\n");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
}

TEST(Programs, EverySchedulePacedOrNotGivesTheSameResult) {
    for (const char *s : {"latin", "random", "pid"}) {
        auto r = run("allsums_array", 4, {}, {{"BSP_SCHEDULE", s}, {"BSP_LINK_RATE", "1G"}});
        EXPECT_EQ(r.exit_status, 0) << s;
        std::string want;
        for (int i = 0; i < 4; ++i) {
            want += "On process " + std::to_string(i) + ": ";
            for (int j = 1; j <= 100; ++j)
                want += std::to_string(100 * i + j) + " ";
            want += "\n";
        }
        EXPECT_EQ(r.out, want) << s;
        expect_clean(r);
    }
}

struct MisuseCase {
    const char *name;
    const char *message;  // the one line on stderr
};

class Misuse : public ::testing::TestWithParam<MisuseCase> {};

TEST_P(Misuse, EndsTheWholeProgramWithOneMessage) {
    auto r = run("misuse", 3, {GetParam().name});
    EXPECT_EQ(r.err, std::string(GetParam().message) + "\n");
    EXPECT_NE(r.exit_status, 0);
    EXPECT_EQ(r.out.find("no error detected") == std::string::npos ||
                  std::string(GetParam().name) == "missing_end",
              true);
    expect_clean(r);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Misuse,
    ::testing::Values(
        MisuseCase{"bad_pid", "BSPlib error: bsp_put on process 1: bad pid 3 (nprocs is 3)"},
        MisuseCase{"unregistered",
                   "BSPlib error: bsp_get on process 2: source area is not registered (never "
                   "registered, or deregistered by bsp_pop_reg)"},
        MisuseCase{"out_of_bounds",
                   "BSPlib error: bsp_put on process 0: offset 4 + 8 bytes is outside the 8 "
                   "bytes of the destination area registered by process 1"},
        MisuseCase{"negative_offset", "BSPlib error: bsp_hpget on process 2: negative offset -4"},
        MisuseCase{"reg_mismatch",
                   "BSPlib error: bsp_sync on process 2: registration mismatch: process 2 called "
                   "bsp_push_reg 1 time in this superstep but process 0 called it 0 times"},
        MisuseCase{"pop_mismatch",
                   "BSPlib error: bsp_sync on process 1: registration mismatch: the 1st "
                   "bsp_pop_reg of process 1 deregisters registration slot 0, that of process "
                   "0 slot 1 (registrations are matched by the order of bsp_push_reg calls)"},
        MisuseCase{"popped",
                   "BSPlib error: bsp_put on process 2: destination area is not registered "
                   "(never registered, or deregistered by bsp_pop_reg)"},
        MisuseCase{"tagsize_mismatch",
                   "BSPlib error: bsp_sync on process 2: tag size mismatch: in this superstep "
                   "process 2 set tag size 8, process 0 set tag size 4 (bsp_set_tagsize is "
                   "collective)"},
        MisuseCase{"tagsize_negative",
                   "BSPlib error: bsp_set_tag_size on process 1: negative tag size -2"},
        MisuseCase{"move_empty", "BSPlib error: bsp_move on process 0: the message queue is empty"},
        MisuseCase{"qsize_null_count",
                   "BSPlib error: bsp_qsize on process 1: message count pointer is NULL"},
        MisuseCase{"qsize_null_bytes",
                   "BSPlib error: bsp_qsize on process 2: byte count pointer is NULL"},
        MisuseCase{"get_tag_null",
                   "BSPlib error: bsp_get_tag on process 0: tag pointer is NULL but the tag size "
                   "is 4"},
        MisuseCase{"bsc_bad_root",
                   "BSPlib error: bsc_bcast on process 0: root 7 is not a member of the group"},
        MisuseCase{"bsc_bad_algorithm",
                   "BSPlib error: bsc_bcast on process 1: BSC_ALGORITHM=fastest is invalid "
                   "(expected auto, direct, two-phase or tree)"},
        MisuseCase{"bsc_bad_neighbour",
                   "BSPlib error: bsc_group_create_neighbourhood on process 2: bad pid 5 in the "
                   "neighbour list (nprocs is 3)"},
        MisuseCase{"hpmove_null_tag", "BSPlib error: bsp_hpmove on process 1: tag pointer is NULL"},
        MisuseCase{"hpmove_null_payload",
                   "BSPlib error: bsp_hpmove on process 0: payload pointer is NULL"},
        MisuseCase{"abort", "process 1 gives up: no solution"},
        MisuseCase{"sync_vs_end",
                   "BSPlib error: bsp_end on process 1: process 1 called bsp_end while process 0 "
                   "called bsp_sync"},
        MisuseCase{"missing_end",
                   "BSPlib error: bsp_end on process 2: the process is ending without calling "
                   "bsp_end"},
        MisuseCase{"begin_twice",
                   "BSPlib error: bsp_begin on process 0: called twice (only one "
                   "bsp_begin/bsp_end pair is allowed)"},
        MisuseCase{"before_begin", "BSPlib error: bsp_put: called before bsp_begin"},
        MisuseCase{"pid_before_begin", "BSPlib error: bsp_pid: called before bsp_begin"},
        MisuseCase{"after_end", "BSPlib error: bsp_sync on process 0: called after bsp_end"}),
    [](const ::testing::TestParamInfo<MisuseCase> &i) { return std::string(i.param.name); });

// bsp_nprocs() before bsp_begin reads BSP_NPROCS when no launcher started the program: a
// malformed value used to be read by atoi ("3x" as 3, "x" as the number of processors).
TEST(Environment, MalformedBspNprocsEndsTheProgramWithOneMessage) {
    for (const char *bad : {"3x", "x", "0", "-2", " 3", "65536", "99999999999"}) {
        auto r =
            run_program({program("allsums_v1")}, {{"BSP_NPROCS", bad}, {"BSP_TRANSPORT", "udp"}});
        EXPECT_EQ(r.err, "BSPlib error: bsp_nprocs: BSP_NPROCS=" + std::string(bad) +
                             " is invalid (expected 1 to 65535 processes)\n")
            << bad;
        EXPECT_EQ(r.out, "") << bad;
        EXPECT_NE(r.exit_status, 0) << bad;
        expect_clean(r);
    }
    auto r = run_program({program("allsums_v1")}, {{"BSP_NPROCS", "2"}, {"BSP_TRANSPORT", "udp"}});
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

class Examples : public ::testing::TestWithParam<int> {};

TEST_P(Examples, InnerProductSortMatrixVector) {
    const int p = GetParam();
    const std::string ps = std::to_string(p);
    const std::vector<std::pair<std::string, std::string>> env{{"BSP_NPROCS", ps},
                                                               {"BSP_TRANSPORT", "udp"}};
    const std::string dir = BSP_EXAMPLES_DIR;
    long long dot = 0;  // the exact values, computed here independently
    for (long long i = 0; i < 100000; ++i)
        dot += (i % 7 + 1) * (i % 5 + 1);
    long long checksum = 0;
    for (long long i = 0; i < 300; ++i) {
        long long y = 0;
        for (long long j = 0; j < 300; ++j)
            y += ((i + 2 * j) % 11 - 5) * (j % 13 - 6);
        checksum += (i % 17 + 1) * y;
    }
    auto r = run_program({dir + "/inprod", "100000"}, env);
    EXPECT_EQ(r.out, "inner product of n=100000 on " + ps + " processes: " + std::to_string(dot) +
                         " (correct)\n");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    r = run_program({dir + "/sort", "20000"}, env);
    EXPECT_EQ(r.out, "sorted " + std::to_string(20000 * p) + " keys on " + ps + " processes: ok\n");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    r = run_program({dir + "/matvec", "300"}, env);
    EXPECT_EQ(r.out, "y = A x for n=300 on " + ps + " processes: checksum " +
                         std::to_string(checksum) + " (correct)\n");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}
INSTANTIATE_TEST_SUITE_P(Procs, Examples, ::testing::Values(1, 2, 5, 8));

// The same programs, started by bsprun: the environment a launcher gives. bsprun relays
// every process's output through its own pipe, so lines of different processes may be
// interleaved differently from the order of the supersteps: compare them as sets.
class UnderBsprun : public ::testing::Test {
  protected:
    void SetUp() override { g_use_bsprun = true; }
    void TearDown() override { g_use_bsprun = false; }
};

TEST_F(UnderBsprun, SeedProgramsAndPrimitives) {
    auto r = run("allsums_array", 4);
    std::string want;
    for (int i = 0; i < 4; ++i) {
        want += "On process " + std::to_string(i) + ": ";
        for (int j = 1; j <= 100; ++j)
            want += std::to_string(100 * i + j) + " ";
        want += "\n";
    }
    EXPECT_EQ(sorted_lines(r.out), sorted_lines(want));
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    r = run("primitives", 3);
    EXPECT_EQ(sorted_lines(r.out), sorted_lines(kPrimitivesOutput));
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

// The examples read their argument on every process: under bsprun the processes other
// than 0 never run main's sequential part (they used the default size before).
TEST_F(UnderBsprun, ExamplesReadTheirArgumentOnEveryProcess) {
    const std::string dir = BSP_EXAMPLES_DIR;
    auto r =
        run_program({BSPRUN_PATH, "-n", "3", dir + "/sort", "2000"}, {{"BSP_TRANSPORT", "udp"}});
    EXPECT_EQ(r.out, "sorted 6000 keys on 3 processes: ok\n");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    r = run_program({BSPRUN_PATH, "-n", "3", dir + "/matvec", "30"}, {{"BSP_TRANSPORT", "udp"}});
    EXPECT_EQ(r.out.substr(0, 28), "y = A x for n=30 on 3 proces");
    EXPECT_NE(r.out.find("(correct)"), std::string::npos) << r.out;
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    r = run_program({BSPRUN_PATH, "-n", "3", dir + "/inprod", "1000"}, {{"BSP_TRANSPORT", "udp"}});
    EXPECT_NE(r.out.find("(correct)"), std::string::npos) << r.out;
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

TEST_F(UnderBsprun, MisuseEndsTheJobWithOneMessage) {
    auto r = run("misuse", 3, {"out_of_bounds"});
    EXPECT_EQ(r.err,
              "BSPlib error: bsp_put on process 0: offset 4 + 8 bytes is outside the 8 bytes of "
              "the destination area registered by process 1\n");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
    r = run("misuse", 3, {"missing_end"});
    EXPECT_EQ(r.err,
              "BSPlib error: bsp_end on process 2: the process is ending without calling "
              "bsp_end\n");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
    r = run("misuse", 3, {"abort"});
    EXPECT_EQ(r.err, "process 1 gives up: no solution\n");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
    r = run("misuse", 3, {"killed"});
    EXPECT_EQ(r.exit_status, 128 + SIGKILL);  // process 1's status (launch.rst)
    EXPECT_EQ(r.out.find("no error detected"), std::string::npos);
    expect_clean(r);
}

// bsp_begin(3) in a job of 4: the job runs with 3 processes (process 3 leaves quietly),
// so pid 3 is a bad pid (it was "the job has 4 processes but bsp_begin asked for at most 3").
TEST_F(UnderBsprun, MoreProcessesThanBspBeginAskedFor) {
    auto r = run("misuse", 4, {"bad_pid"});  // misuse.c calls bsp_begin(3)
    EXPECT_EQ(r.err, "BSPlib error: bsp_put on process 1: bad pid 3 (nprocs is 3)\n");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
}

// BSPedupack's start: bsp_init(spmd, argc, argv), P read on process 0 only, bsp_begin(P)
// on every process (the others pass 0). Under bsprun -n 4, answering 4 and answering 2:
// the extra processes leave in bsp_begin with status 0.
std::string edupack_output(int p) {
    std::string want = "How many processes? (at most 4)\n";
    for (int i = 0; i < p; ++i)
        want += "process " + std::to_string(i) + " of " + std::to_string(p) + ": sum " +
                std::to_string(p * (p + 1) / 2) + "\n";
    return want + "process 0 continues after bsp_end\n";
}

TEST_F(UnderBsprun, BspEdupackStartAnswering4And2) {
    for (int answer : {4, 2, 1}) {
        auto r = run_program({BSPRUN_PATH, "-n", "4", program("compat"), "edupack"},
                             {{"BSP_TRANSPORT", "udp"}}, 60, std::to_string(answer) + "\n");
        EXPECT_EQ(sorted_lines(r.out), sorted_lines(edupack_output(answer))) << answer;
        EXPECT_EQ(r.err, "") << answer;
        EXPECT_EQ(r.exit_status, 0) << answer;
        expect_clean(r);
    }
}

TEST(Programs, BspEdupackStartedDirectly) {
    auto r = run_program({program("compat"), "edupack"},
                         {{"BSP_NPROCS", "4"}, {"BSP_TRANSPORT", "udp"}}, 60, "3\n");
    EXPECT_EQ(sorted_lines(r.out), sorted_lines(edupack_output(3)));
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

// Registration calls take effect at the next bsp_sync in issue order: a push and a pop of
// one area in one superstep (it stopped with "area is not registered yet").
TEST(Programs, PushAndPopInOneSuperstep) {
    auto r = run("compat", 3, {"push_pop"});
    EXPECT_EQ(sorted_lines(r.out), sorted_lines("[0] a = 42 0, b = 12, c = 32\n"
                                                "[1] a = 40 0, b = 10, c = 30\n"
                                                "[2] a = 41 0, b = 11, c = 31\n"
                                                "process 0 continues after bsp_end\n"));
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

// Gets whose destinations overlap are applied in issue order: the later get wins (the
// local get and then the replies by source pid won before).
TEST(Programs, OverlappingGetsLaterWins) {
    auto r = run("compat", 3, {"overlapping_gets"});
    EXPECT_EQ(sorted_lines(r.out), sorted_lines("[0] dst = 200 101 3 200\n"
                                                "[1] dst = 0 201 103 0\n"
                                                "[2] dst = 100 1 203 100\n"
                                                "process 0 continues after bsp_end\n"));
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

// Every collective of bsc.h with every algorithm, on bsc_all, partition groups and a
// neighbourhood, against the naive reference of collectives.c, for p = 1 .. 12, and the
// BSP_WIDE_TYPES build of the program (the _wide entry points) for p = 3 and 12.
struct CollectivesRun {
    const char *program;
    int nprocs;
};

// The parameter as CTest shows it (instead of its bytes, a pointer among them).
void PrintTo(const CollectivesRun &r, std::ostream *os) {
    *os << r.program << " under bsprun -n " << r.nprocs;
}

class Collectives : public UnderBsprun, public ::testing::WithParamInterface<CollectivesRun> {};

TEST_P(Collectives, EveryAlgorithmAgainstTheNaiveReference) {
    const auto [name, p] = GetParam();
    auto r = run(name, p);
    const auto lines = sorted_lines(r.out);
    ASSERT_EQ(lines.size(), static_cast<std::size_t>(p)) << r.out << r.err;
    std::vector<std::string> pids, want;
    for (const auto &l : lines) {
        const auto at = l.find("] collectives: ");
        ASSERT_NE(at, std::string::npos) << l;
        pids.push_back(l.substr(1, at - 1));
        EXPECT_EQ(l.substr(l.size() - 9), ", 0 wrong") << l;
        EXPECT_EQ(l.find(": 0 checks"), std::string::npos) << l;
    }
    for (int i = 0; i < p; ++i)
        want.push_back(std::to_string(i));
    std::sort(pids.begin(), pids.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(pids, want);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

INSTANTIATE_TEST_SUITE_P(
    Procs, Collectives,
    ::testing::Values(CollectivesRun{"collectives", 1}, CollectivesRun{"collectives", 2},
                      CollectivesRun{"collectives", 3}, CollectivesRun{"collectives", 4},
                      CollectivesRun{"collectives", 5}, CollectivesRun{"collectives", 6},
                      CollectivesRun{"collectives", 7}, CollectivesRun{"collectives", 8},
                      CollectivesRun{"collectives", 9}, CollectivesRun{"collectives", 10},
                      CollectivesRun{"collectives", 11}, CollectivesRun{"collectives", 12},
                      CollectivesRun{"collectives_wide", 3},
                      CollectivesRun{"collectives_wide", 12}),
    [](const ::testing::TestParamInfo<CollectivesRun> &i) {
        return std::string(i.param.program) + "_p" + std::to_string(i.param.nprocs);
    });

// BSP_PROFILE: [SHM97]'s allsums on an array with 4 processes. Superstep 1: process i
// puts 4 bytes to each of the processes after it; superstep 2: process i gets 4 bytes
// from process i - 1. Every counter of every superstep is exact; bspprof summarises the
// traces against the cost model and draws one bar per non-zero volume.
std::vector<std::vector<std::string>> trace_rows(const std::string &path) {
    std::vector<std::vector<std::string>> rows;
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        std::istringstream in(line);
        std::vector<std::string> cols;
        for (std::string c; in >> c;)
            cols.push_back(c);
        rows.push_back(cols);
    }
    return rows;
}

TEST(Programs, ProfileRecordsEverySuperstepAndBspprofSummarisesIt) {
    char dir[] = "/tmp/bspprof-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string prefix = std::string(dir) + "/trace";
    auto r = run("allsums_array", 4, {}, {{"BSP_PROFILE", prefix}});
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_EQ(r.err, "");
    const int p = 4;
    // The registration, the puts, the gets, one sync per process of the printing loop,
    // and bsp_end.
    const std::size_t nsteps = 8;
    for (int i = 0; i < p; ++i) {
        const auto rows = trace_rows(prefix + "." + std::to_string(i));
        ASSERT_EQ(rows.size(), nsteps) << "process " << i;
        for (std::size_t s = 0; s < rows.size(); ++s) {
            ASSERT_EQ(rows[s].size(), 18u);
            EXPECT_EQ(rows[s][0], std::to_string(s));
            // out: put bytes, n, send bytes, n, reply bytes, n; in: the same
            std::vector<std::string> want(12, "0");
            if (s == 1) {
                want[0] = std::to_string(4 * (p - 1 - i));
                want[1] = std::to_string(p - 1 - i);
                want[6] = std::to_string(4 * i);
                want[7] = std::to_string(i);
            }
            if (s == 2) {
                want[4] = i < p - 1 ? "4" : "0";
                want[5] = i < p - 1 ? "1" : "0";
                want[10] = i > 0 ? "4" : "0";
                want[11] = i > 0 ? "1" : "0";
            }
            EXPECT_EQ(std::vector<std::string>(rows[s].begin() + 5, rows[s].begin() + 17), want)
                << "process " << i << " superstep " << s;
            EXPECT_NE(rows[s][17].find("/allsums_array+0x"), std::string::npos) << rows[s][17];
            // begin <= enter_sync <= barrier_done <= end
            EXPECT_LE(std::stod(rows[s][1]), std::stod(rows[s][2]));
            EXPECT_LE(std::stod(rows[s][2]), std::stod(rows[s][3]));
            EXPECT_LE(std::stod(rows[s][3]), std::stod(rows[s][4]));
        }
    }
    auto t =
        run_program({BSPPROF_PATH, "-g", "0.5", "-l", "100", "--svg", prefix + ".svg", prefix}, {});
    EXPECT_EQ(t.exit_status, 0) << t.err;
    EXPECT_EQ(t.err, "");
    EXPECT_EQ(t.out.substr(0, t.out.find('\n')),
              "bspprof: 4 processes, 8 supersteps, g = 0.5000 us/word, l = 100.0 us");
    // Superstep 1: h = 12 bytes (process 0 sends 3 puts), at the bsp_sync of line 18.
    EXPECT_NE(t.out.find("\n        1  allsums_array.c:18 (bsp_allsums2)"), std::string::npos)
        << t.out;
    EXPECT_NE(t.out.find("furthest from the model"), std::string::npos);
    std::ifstream svg(prefix + ".svg");
    std::string pic((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    EXPECT_EQ(pic.substr(0, 4), "<svg");
    EXPECT_EQ(pic.substr(pic.size() - 7), "</svg>\n");
    std::size_t bars = 0;
    for (auto at = pic.find("<title>"); at != std::string::npos; at = pic.find("<title>", at + 1))
        ++bars;
    EXPECT_EQ(bars, 12u);  // 3 put senders, 3 receivers, 3 get servers, 3 getters
    // The PNG is the same picture: PNG signature, IHDR with the SVG's width and height.
    auto png_run =
        run_program({BSPPROF_PATH, "-g", "0.5", "-l", "100", "--png", prefix + ".png", prefix}, {});
    EXPECT_EQ(png_run.exit_status, 0) << png_run.err;
    EXPECT_EQ(png_run.err, "");
    std::ifstream pngf(prefix + ".png", std::ios::binary);
    std::string png((std::istreambuf_iterator<char>(pngf)), std::istreambuf_iterator<char>());
    ASSERT_GE(png.size(), 24u);
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(png.substr(12, 4), "IHDR");
    auto be32 = [&](std::size_t at) {
        std::uint32_t v = 0;
        for (std::size_t i = 0; i < 4; ++i)
            v = v << 8 | static_cast<unsigned char>(png[at + i]);
        return v;
    };
    auto attr = [&](const char *name) {
        auto at = pic.find(std::string(" ") + name + "=\"");
        return at == std::string::npos ? 0ul : std::stoul(pic.substr(at + std::strlen(name) + 3));
    };
    EXPECT_EQ(be32(16), attr("width"));
    EXPECT_EQ(be32(20), attr("height"));
    std::filesystem::remove_all(dir);
}

#ifdef BSPPROBE_PATH
// bspprobe with the smallest -h: its n1/2 exchanges send 4096 words per process, which
// overran the -h sized areas ("offset 256 + 4 bytes is outside the 256 bytes").
TEST(Programs, BspprobeWithTheSmallestH) {
    auto r = run_program({BSPPROBE_PATH, "-p", "1,2", "-h", "64"}, {}, 110);
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("h = 64 32-bit words"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n  1 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n  2 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("for the collectives (p = 2): export BSP_G="), std::string::npos) << r.out;
}
#endif

TEST(Programs, ProfileFileThatCannotBeWrittenIsAClearError) {
    auto r = run("allsums_v1", 1, {}, {{"BSP_PROFILE", "/nonexistent-dir/trace"}});
    EXPECT_EQ(r.err,
              "BSPlib error: bsp_begin on process 0: BSP_PROFILE: cannot write "
              "/nonexistent-dir/trace.0: No such file or directory\n");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
}

TEST(Programs, AfBspRequestedWithoutTheModuleIsAClearError) {
    if (access("/sys/module/af_bsp/parameters/family", R_OK) == 0)
        GTEST_SKIP() << "the af_bsp module is loaded here";
    auto r = run("allsums_v1", 3, {}, {{"BSP_TRANSPORT", "afbsp"}});
    EXPECT_EQ(r.err,
              "BSPlib error: bsp_begin on process 0: BSP_TRANSPORT=afbsp: the af_bsp module is "
              "not loaded (/sys/module/af_bsp/parameters/family is missing)\n");
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
}

TEST(Programs, BadUdpFragmentSizeIsAClearError) {
    for (const char *v : {"1400x", "", "63", "65437", "99999999999999999999", " 1400", "+1400"}) {
        auto r = run("allsums_v1", 2, {}, {{"BSP_TRANSPORT", "udp"}, {"BSP_UDP_FRAG", v}});
        EXPECT_EQ(r.err, std::string("BSPlib error: bsp_begin on process 0: BSP_UDP_FRAG=") + v +
                             " is invalid (expected 64 to 65436 bytes)\n")
            << "BSP_UDP_FRAG=" << v;
        EXPECT_EQ(r.out, "");
        EXPECT_NE(r.exit_status, 0);
        expect_clean(r);
    }
}

// A process that computes for longer than its peers' unreach time without calling BSPlib
// (4 s against BSP_UDP_UNREACH_MS=1000: its peer's fourth timeout, at 3 s, would fail it)
// while process 0 sends it 256 KiB and waits in bsp_sync: the UDP transport's background
// thread answers for it. Before, process 0's messages failed ("No route to host") and the
// job ended. The program checks first that a signal sent to the process while its thread
// blocks it is not taken by that background thread (it blocks every signal).
TEST(Programs, LongComputationDoesNotMakeTheProcessUnreachable) {
    auto r = run("longstep", 2, {"4000"},
                 {{"BSP_TRANSPORT", "udp"}, {"BSP_SHM", "0"}, {"BSP_UDP_UNREACH_MS", "1000"}});
    EXPECT_EQ(r.out, "longstep ok\n");
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

TEST(Programs, BadUdpUnreachIsAClearError) {
    for (const char *v : {"", "99", "86400001", "1s", " 500"}) {
        auto r = run("allsums_v1", 2, {}, {{"BSP_TRANSPORT", "udp"}, {"BSP_UDP_UNREACH_MS", v}});
        EXPECT_EQ(r.err, std::string("BSPlib error: bsp_begin on process 0: BSP_UDP_UNREACH_MS=") +
                             v + " is invalid (expected 100 to 86400000 milliseconds)\n")
            << "BSP_UDP_UNREACH_MS=" << v;
        EXPECT_EQ(r.out, "");
        EXPECT_NE(r.exit_status, 0);
        expect_clean(r);
    }
}

// BSP_UDP_AUTH (Documentation/bsplib.rst): 1 or 0, nothing else.
TEST(Programs, BadUdpAuthIsAClearError) {
    for (const char *v : {"", "yes", "2", " 1", "0x"}) {
        auto r = run("allsums_v1", 2, {}, {{"BSP_TRANSPORT", "udp"}, {"BSP_UDP_AUTH", v}});
        EXPECT_EQ(r.err, std::string("BSPlib error: bsp_begin on process 0: BSP_UDP_AUTH=") + v +
                             " is invalid (expected 1, or 0 to send and accept packets without "
                             "a MAC: insecure)\n")
            << "BSP_UDP_AUTH=" << v;
        EXPECT_EQ(r.out, "");
        EXPECT_NE(r.exit_status, 0);
        expect_clean(r);
    }
}

// Without the MAC (BSP_UDP_AUTH=0, insecure, for measurements) a job still runs, and says
// so with BSP_VERBOSE.
TEST(Programs, UdpWithoutAuthRunsAndSaysSo) {
    auto r = run("allsums_v1", 2, {}, {{"BSP_UDP_AUTH", "0"}, {"BSP_VERBOSE", "1"}});
    EXPECT_EQ(r.out, "allsums1 on process 0: 1\nallsums1 on process 1: 3\n");
    EXPECT_EQ(r.err,
              "bsp: nprocs=2 transport=udp schedule=latin-square (protocol engine over 1 UDP "
              "rail [127.0.0.1], fragment 16384 bytes, packets NOT authenticated "
              "(BSP_UDP_AUTH=0))\n");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

// Processes that disagree about the MAC could never understand each other: bsp_begin
// ends the job with the variable's name (bsprun starts process 0 with BSP_UDP_AUTH=1 and
// process 1 with 0, through its launch prefix and two host names).
TEST(Programs, UdpAuthDifferingBetweenProcessesIsAClearError) {
    auto r = run_program({BSPRUN_PATH, "-n", "2", "--hosts", "1,0", "--launch",
                          "env BSP_UDP_AUTH={host}", program("allsums_v1")},
                         {{"BSP_TRANSPORT", "udp"}});
    EXPECT_NE(r.err.find("BSP_UDP_AUTH differs between the processes"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
}

TEST(Programs, AutoChoosesUdpWithoutTheModule) {
    if (access("/sys/module/af_bsp/parameters/family", R_OK) == 0)
        GTEST_SKIP() << "the af_bsp module is loaded here";
    // Between hosts (on one host, auto takes shared memory: SharedMemory tests).
    auto r = run("allsums_v1", 2, {},
                 {{"BSP_TRANSPORT", "auto"}, {"BSP_SHM", "0"}, {"BSP_VERBOSE", "1"}});
    EXPECT_EQ(r.err.substr(0, 34), "bsp: nprocs=2 transport=udp schedu");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

TEST(Programs, CxxLayer) {
    auto r = run("cxx_api", 3);
    EXPECT_EQ(r.out,
              "[0] sum 4.5, left's entry 0.0, 1 message of 8 bytes, tag 102\n"
              "[1] sum 4.5, left's entry 1.5, 1 message of 8 bytes, tag 100\n"
              "[2] sum 4.5, left's entry 3.0, 1 message of 8 bytes, tag 101\n");
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

TEST(Programs, AProcessKilledInASuperstepEndsTheJob) {
    // Processes 0 and 2 wait in bsp_sync for process 1, which is SIGKILLed: the job must
    // end within the bounded time with a failure status and nothing left behind.
    auto r = run("misuse", 3, {"killed"});
    EXPECT_EQ(r.exit_status, 128 + SIGKILL);  // process 1's status (launch.rst)
    EXPECT_EQ(r.out.find("no error detected"), std::string::npos);
    expect_clean(r);
}

// The shared-memory transport between the processes of one host (Documentation/
// messaging.rst, "Shared memory between the processes of a host"): BSP_SHM=1 uses it under
// the explicit BSP_TRANSPORT=udp of these tests, BSP_SHM_HOSTS emulates several hosts on
// this one (shared memory inside an emulated host, UDP between them).
namespace {

std::vector<std::string> dev_shm_entries() {
    std::vector<std::string> names;
    for (const auto &e : std::filesystem::directory_iterator("/dev/shm")) {
        names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

TEST(SharedMemory, EveryPrimitiveIntactAndExactlyOnce) {
    auto r = run("primitives", 3, {}, {{"BSP_SHM", "1"}});
    EXPECT_EQ(r.out, kPrimitivesOutput);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

TEST(SharedMemory, VerboseReportsSharedMemoryAndAutoChoosesIt) {
    auto r = run("allsums_v1", 3, {}, {{"BSP_SHM", "1"}, {"BSP_VERBOSE", "1"}});
    EXPECT_EQ(r.err,
              "bsp: nprocs=3 transport=shm schedule=latin-square (shared memory between 3 "
              "processes of this host, 1024 KiB ring per pair, superstep board, 1024 KiB "
              "direct area per pair)\n");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    r = run("allsums_v1", 3, {}, {{"BSP_SHM", "1"}, {"BSP_SHM_DIRECT", "0"}, {"BSP_VERBOSE", "1"}});
    EXPECT_EQ(r.err,
              "bsp: nprocs=3 transport=shm schedule=latin-square (shared memory between 3 "
              "processes of this host, 1024 KiB ring per pair, superstep board)\n");
    EXPECT_EQ(r.exit_status, 0);
    // Chosen automatically with the transport, and turned off by BSP_SHM=0.
    r = run("allsums_v1", 2, {}, {{"BSP_TRANSPORT", "auto"}, {"BSP_VERBOSE", "1"}});
    EXPECT_EQ(r.err.substr(0, 34), "bsp: nprocs=2 transport=shm schedu");
    EXPECT_EQ(r.exit_status, 0);
    r = run("allsums_v1", 2, {},
            {{"BSP_TRANSPORT", "auto"}, {"BSP_SHM", "0"}, {"BSP_VERBOSE", "1"}});
    EXPECT_EQ(r.err.substr(0, 33), "bsp: nprocs=2 transport=udp sched");
    EXPECT_EQ(r.exit_status, 0);
}

TEST(SharedMemory, BadSettingsAreClearErrors) {
    auto r = run("allsums_v1", 2, {}, {{"BSP_SHM", "yes"}});
    EXPECT_EQ(r.err,
              "BSPlib error: bsp_begin on process 0: BSP_SHM=yes is invalid (expected auto, 1 "
              "or 0)\n");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
    r = run("allsums_v1", 2, {}, {{"BSP_SHM", "1"}, {"BSP_SHM_RING", "1000"}});
    EXPECT_EQ(r.err,
              "BSPlib error: bsp_begin on process 0: BSP_SHM_RING=1000 is invalid (expected a "
              "power of two from 4k to 1024M bytes)\n");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
    r = run("allsums_v1", 2, {}, {{"BSP_SHM", "1"}, {"BSP_SHM_DIRECT", "1000"}});
    EXPECT_EQ(r.err,
              "BSPlib error: bsp_begin on process 0: BSP_SHM_DIRECT=1000 is invalid (expected "
              "a power of two from 4k to 1024M bytes, or 0)\n");
    EXPECT_NE(r.exit_status, 0);
    expect_clean(r);
}

TEST(SharedMemory, SeedProgramsAndCollectivesOnUpTo8Processes) {
    for (int p : {2, 5, 8}) {
        auto r = run("allsums_v1", p, {}, {{"BSP_SHM", "1"}});
        std::string want;
        for (int i = 0; i < p; ++i) {
            want += "allsums1 on process " + std::to_string(i) + ": " +
                    std::to_string((i + 1) * (i + 2) / 2) + "\n";
        }
        EXPECT_EQ(sorted_lines(r.out), sorted_lines(want)) << "p=" << p;
        EXPECT_EQ(r.exit_status, 0);
        expect_clean(r);
    }
}

// Two emulated hosts: processes 0 and 1 share memory, process 2 is reached over UDP.
TEST(SharedMemory, MixedLocalAndRemoteRouting) {
    auto r = run("primitives", 3, {}, {{"BSP_SHM", "1"}, {"BSP_SHM_HOSTS", "a,a,b"}});
    EXPECT_EQ(r.out, kPrimitivesOutput);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    r = run("allsums_v1", 4, {},
            {{"BSP_SHM", "1"}, {"BSP_SHM_HOSTS", "x,y,x,y"}, {"BSP_VERBOSE", "1"}});
    EXPECT_EQ(r.out,
              "allsums1 on process 0: 1\nallsums1 on process 1: 3\nallsums1 on process 2: "
              "6\nallsums1 on process 3: 10\n");
    EXPECT_EQ(r.err,
              "bsp: nprocs=4 transport=shm+udp schedule=latin-square (shared memory between 2 "
              "processes of this host, 1024 KiB ring per pair; other hosts: udp (protocol "
              "engine over 1 UDP rail [127.0.0.1], fragment 16384 bytes, packets "
              "authenticated))\n");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    // A process alone on its host takes part in the set-up and uses UDP only.
    r = run("primitives", 3, {}, {{"BSP_SHM", "1"}, {"BSP_SHM_HOSTS", "a,b,b"}});
    EXPECT_EQ(r.out, kPrimitivesOutput);
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

#ifdef BSP_EXCHANGE_PATH
// 64 KiB per pair through 4 KiB rings: the senders wait for room, nothing is lost (the
// exchange checks every byte it receives), locally and with an emulated remote host. On
// one host the puts go in the direct areas (1 MiB by default) unless they are off
// (BSP_SHM_DIRECT=0) or too small for them (4k: the 64 KiB puts go in the rings, the
// exchange's small puts of its results in the areas).
TEST(SharedMemory, RingsFarSmallerThanTheDataLoseNothing) {
    const std::pair<const char *, const char *> cases[] = {
        {"", "0"}, {"", "4k"}, {"", "1M"}, {"a,a,a,b", "1M"}};
    for (const auto &[hosts, direct] : cases) {
        auto r =
            run_program({BSP_EXCHANGE_PATH, "-n", "65536", "-r", "3"}, {{"BSP_NPROCS", "4"},
                                                                        {"BSP_TRANSPORT", "udp"},
                                                                        {"BSP_SHM", "1"},
                                                                        {"BSP_SHM_RING", "4k"},
                                                                        {"BSP_SHM_DIRECT", direct},
                                                                        {"BSP_SHM_HOSTS", hosts}});
        EXPECT_NE(r.out.find("exchange total p=4 bytes=65536 reps=3 schedule=latin: "),
                  std::string::npos)
            << r.out;
        EXPECT_NE(r.out.find(" us/superstep, ok\n"), std::string::npos) << r.out << r.err;
        EXPECT_EQ(r.err, "");
        EXPECT_EQ(r.exit_status, 0);
        expect_clean(r);
    }
}
#endif

// A process killed while its peers wait on the rings: the job ends, and nothing is left
// in /dev/shm (the rings are memfds that no file system names; they go with the last
// process that maps them).
TEST(SharedMemory, AKilledProcessEndsTheJobAndLeavesNoSharedMemoryFile) {
    const auto before = dev_shm_entries();
    auto r = run("misuse", 3, {"killed"}, {{"BSP_SHM", "1"}});
    EXPECT_EQ(r.exit_status, 128 + SIGKILL);
    EXPECT_EQ(r.out.find("no error detected"), std::string::npos);
    expect_clean(r);
    EXPECT_EQ(dev_shm_entries(), before);
}

TEST_F(UnderBsprun, SharedMemoryWithEveryPrimitive) {
    auto r = run("primitives", 3, {}, {{"BSP_SHM", "1"}});
    EXPECT_EQ(sorted_lines(r.out), sorted_lines(kPrimitivesOutput));
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    r = run("primitives", 3, {}, {{"BSP_SHM", "1"}, {"BSP_SHM_HOSTS", "a,b,a"}});
    EXPECT_EQ(sorted_lines(r.out), sorted_lines(kPrimitivesOutput));
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
}

#ifdef BSP_EXCHANGE_PATH
// The UDP transport batches (Documentation/messaging.rst, "Batching over UDP"): 256 KiB per
// pair leave in sendmmsg calls of UDP_SEGMENT super-datagrams and arrive through recvmmsg,
// coalesced by UDP_GRO (loopback keeps a super-datagram whole up to the receiving socket),
// every packet still with its MAC (the exchange checks every byte).
TEST(Programs, UdpBatchesWithGsoAndGro) {
    auto r = run_program(
        {BSP_EXCHANGE_PATH, "-n", "262144", "-r", "2"},
        {{"BSP_NPROCS", "2"}, {"BSP_TRANSPORT", "udp"}, {"BSP_SHM", "0"}, {"BSP_STATS", "1"}});
    EXPECT_NE(r.out.find(" us/superstep, ok\n"), std::string::npos) << r.out << r.err;
    EXPECT_EQ(r.exit_status, 0);
    expect_clean(r);
    for (int p = 0; p < 2; ++p) {
        const std::string prefix = "bsp: udp stats of process " + std::to_string(p) + ":";
        const auto at = r.err.find(prefix);
        ASSERT_NE(at, std::string::npos) << r.err;
        std::istringstream line(r.err.substr(at + prefix.size(), r.err.find('\n', at) - at));
        std::map<std::string, long> c;
        std::string k;
        long v = 0;
        while (line >> k >> v)
            c[k] = v;
        EXPECT_GT(c["sendmmsg"], 0) << "process " << p;
        EXPECT_GT(c["tx_gso"], 0) << "process " << p;
        EXPECT_GT(c["recvmmsg"], 0) << "process " << p;
        EXPECT_GT(c["rx_gro"], 0) << "process " << p;
        EXPECT_EQ(c.count("drop_auth"), 0u) << "process " << p;
    }
}
#endif
