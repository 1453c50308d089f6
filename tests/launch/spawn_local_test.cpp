// Session::spawn_local: a program started directly forks its own processes.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "process_harness.hpp"

namespace {

using launch_test::Result;
using launch_test::run;
using launch_test::sorted_lines;

void expect_clean(const Result &r) {
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.leftovers.empty()) << "left behind: " << ::testing::PrintToString(r.leftovers);
}

TEST(SpawnLocal, StartedDirectlyWithoutLauncherThereIsNoSession) {
    Result r = run({{PROBE_PATH, "gather", "1"}});
    expect_clean(r);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "started directly\n");
}

TEST(SpawnLocal, AllgatherWithOneToEightProcesses) {
    for (int p = 1; p <= 8; ++p) {
        SCOPED_TRACE("P=" + std::to_string(p));
        Result r = run({{PROBE_PATH, "--spawn", std::to_string(p), "gather", "3"}});
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

TEST(SpawnLocal, AbortByAChildEndsAllWithOneMessage) {
    Result r = run({{PROBE_PATH, "--spawn", "4", "abort", "2"}});
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "probe: process 2 aborts on purpose\n");
    EXPECT_EQ(r.out, "process 2: output before abort");
}

TEST(SpawnLocal, AbortByTheParentEndsAll) {
    Result r = run({{PROBE_PATH, "--spawn", "4", "abort-computing", "0"}});
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "probe: process 0 aborts on purpose\n");
}

TEST(SpawnLocal, DeadChildEndsTheJobWithItsStatus) {
    Result r = run({{PROBE_PATH, "--spawn", "4", "segv", "3"}});
    expect_clean(r);
    EXPECT_EQ(r.status, 128 + SIGSEGV);
    EXPECT_EQ(r.err,
              "bsp: process 3 was killed by signal 11 (Segmentation fault) before bsp_end\n");
}

TEST(SpawnLocal, DeadParentTakesTheChildrenWithIt) {
    Result r = run({{PROBE_PATH, "--spawn", "4", "kill", "0"}});
    expect_clean(r);
    EXPECT_EQ(r.status, 128 + SIGKILL);
    EXPECT_EQ(r.err, "");
}

// Processes that end after bsp_end are reaped at once, not left as zombies while process
// 0 goes on; process 0's own children keep their exit statuses (only the job's pids are
// ever waited for). "keep" leaves the session undestroyed at exit, as libbsp does.
TEST(SpawnLocal, EndedProcessesAreReapedWhileProcessZeroGoesOn) {
    for (const char *mode : {"", "keep"}) {
        SCOPED_TRACE(std::string("mode '") + mode + "'");
        launch_test::Spec s{{PROBE_PATH, "--spawn", "4", "reap"}};
        if (*mode != '\0') {
            s.argv.push_back(mode);
        }
        Result r = run(s);
        expect_clean(r);
        EXPECT_EQ(r.status, 0);
        EXPECT_EQ(r.err, "");
        EXPECT_EQ(sorted_lines(r.out),
                  (std::vector<std::string>{"process 0: children of the job left: none",
                                            "process 0: own child after the job exited with 43",
                                            "process 0: own child after the job killed by SIGTERM",
                                            "process 0: own child during the job exited with 42",
                                            "process 1 of 4: finished", "process 2 of 4: finished",
                                            "process 3 of 4: finished"}));
    }
}

TEST(SpawnLocal, ControlFdBecomesReadable) {
    launch_test::Spec s{{PROBE_PATH, "--spawn", "3", "control", "1"}};
    s.env = {"BSP_TEARDOWN_GRACE=30"};
    Result r = run(s);
    expect_clean(r);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "probe: process 1 aborts on purpose\n");
    EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"process 0: control_fd readable",
                                                             "process 2: control_fd readable"}));
}

}  // namespace
