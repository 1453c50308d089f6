// Session::join_from_environment under Slurm, emulated: the test starts the P tasks
// itself with the variables srun would set.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "process_harness.hpp"
#include "rendezvous_address.hpp"
#include "slurm_step.hpp"

namespace {

using launch_test::Result;
using launch_test::run_all;
using launch_test::sorted_lines;
using launch_test::Spec;

// A job id per test run, so that the derived ports of concurrent runs differ.
unsigned long fresh_job_id() {
    static std::mt19937_64 rng(
        static_cast<unsigned long>(::getpid()) ^
        static_cast<unsigned long>(std::chrono::steady_clock::now().time_since_epoch().count()));
    return 100000 + rng() % 900000;
}

std::vector<Spec> tasks(int ntasks, std::vector<std::string> probe_args,
                        std::vector<std::string> extra_env = {}, int started = -1,
                        unsigned long job = fresh_job_id()) {
    std::vector<Spec> specs;
    for (int i = 0; i < (started < 0 ? ntasks : started); ++i) {
        Spec s;
        s.argv = {PROBE_PATH};
        s.argv.insert(s.argv.end(), probe_args.begin(), probe_args.end());
        s.env = {"SLURM_PROCID=" + std::to_string(i),
                 "SLURM_NTASKS=" + std::to_string(ntasks),
                 "SLURM_JOB_ID=" + std::to_string(job),
                 "SLURM_STEP_ID=0",
                 "SLURM_STEP_NODELIST=localhost,otherhost[01-04]",
                 "SLURM_JOB_NODELIST=localhost,otherhost[01-04]"};
        s.env.insert(s.env.end(), extra_env.begin(), extra_env.end());
        specs.push_back(s);
    }
    return specs;
}

void expect_clean(const std::vector<Result> &results) {
    for (const auto &r : results) {
        EXPECT_FALSE(r.timed_out);
        EXPECT_TRUE(r.leftovers.empty())
            << "left behind: " << ::testing::PrintToString(r.leftovers);
    }
}

TEST(SlurmEmulation, AllgatherWithOneToEightTasks) {
    for (int p = 1; p <= 8; ++p) {
        SCOPED_TRACE("P=" + std::to_string(p));
        auto results = run_all(tasks(p, {"gather", "3"}));
        expect_clean(results);
        for (int i = 0; i < p; ++i) {
            const Result &r = results[static_cast<std::size_t>(i)];
            EXPECT_EQ(r.status, 0) << r.err;
            EXPECT_EQ(r.err, "");
            EXPECT_EQ(r.out, "process " + std::to_string(i) + " of " + std::to_string(p) +
                                 ": 3 rounds ok\n");
        }
    }
}

TEST(SlurmEmulation, AbortEndsEveryTaskWithOneMessage) {
    auto results = run_all(tasks(4, {"abort", "2"}));
    expect_clean(results);
    std::string all_err;
    for (const auto &r : results) {
        EXPECT_EQ(r.status, 1);
        all_err += r.err;
    }
    EXPECT_EQ(all_err, "probe: process 2 aborts on purpose\n");
    EXPECT_EQ(results[0].err, all_err) << "task 0 runs the coordinator and prints";
}

TEST(SlurmEmulation, DeadTaskEndsTheJob) {
    auto results = run_all(tasks(3, {"kill", "2"}));
    expect_clean(results);
    EXPECT_EQ(results[2].status, 128 + SIGKILL);
    EXPECT_EQ(results[0].status, 1);
    EXPECT_EQ(results[1].status, 1);
    EXPECT_EQ(results[0].err,
              "bsp: process 2 lost its control connection before bsp_end (it died or was "
              "killed)\n");
    EXPECT_EQ(results[1].err, "");
}

TEST(SlurmEmulation, SingleTaskNeedsNoPort) {
    // The derived port is taken by someone else: a one-task step does not care.
    auto specs = tasks(1, {"gather", "2"}, {"BSP_RENDEZVOUS=tcp:localhost:1"});
    auto results = run_all(specs);
    expect_clean(results);
    EXPECT_EQ(results[0].status, 0) << results[0].err;
    EXPECT_EQ(results[0].out, "process 0 of 1: 2 rounds ok\n");
}

TEST(SlurmEmulation, TakenPortIsAClearError) {
    // Task 0 alone: it must fail at once, naming the address.
    auto holder = bsp::launch::listen_on(bsp::launch::RendezvousAddress::parse("tcp:x:0"));
    int port = bsp::launch::bound_tcp_port(holder.get());
    auto results = run_all(
        tasks(2, {"gather", "1"}, {"BSP_RENDEZVOUS=tcp:localhost:" + std::to_string(port)}, 1));
    expect_clean(results);
    EXPECT_EQ(results[0].status, 2);
    EXPECT_EQ(results[0].err,
              "launch_probe: bsp: Slurm task 0 cannot listen for the job at "
              "tcp:localhost:" +
                  std::to_string(port) +
                  " (set BSP_RENDEZVOUS to choose another address): bind TCP "
                  "port " +
                  std::to_string(port) + ": Address already in use\n");
}

// Two steps on one node whose job ids give the same derived port. The first step's task 0
// listens there; the second step's task 0 finds the port taken, its task 1 reaches the
// first step's coordinator, which refuses it (another job token). Both fail at once with an
// error that says what to do; the first step is not disturbed.
TEST(SlurmEmulation, DerivedPortCollisionIsAClearError) {
    unsigned long job = fresh_job_id();
    unsigned long other = job + bsp::launch::kSlurmPortModulus;
    int port = bsp::launch::slurm_rendezvous_port(job, 0);
    ASSERT_EQ(port, bsp::launch::slurm_rendezvous_port(other, 0));
    // The first step's task 1 joins 3 s late, so its coordinator listens all that time;
    // the second step's task 0 starts listening 1 s late, after the first step's.
    auto first = tasks(2, {"joinlate", "1", "3"}, {}, -1, job);
    auto second = tasks(2, {"joinlate", "0", "1"}, {}, -1, other);
    auto results = run_all({first[0], first[1], second[0], second[1]});
    expect_clean(results);
    for (int i : {0, 1}) {
        EXPECT_EQ(results[static_cast<std::size_t>(i)].status, 0);
        EXPECT_EQ(results[static_cast<std::size_t>(i)].out,
                  "process " + std::to_string(i) + " of 2: 1 rounds ok\n");
    }
    EXPECT_EQ(results[0].err, "bsp: refused a control connection that is not from this job\n");
    EXPECT_EQ(results[1].err, "");
    const std::string hint =
        "; another job step uses the port derived from its Slurm job and step ids: give this "
        "step a free one with BSP_RENDEZVOUS=tcp:HOST:PORT, or let Slurm reserve ports for it "
        "(srun --resv-ports, or MpiParams=ports=... in slurm.conf)\n";
    const std::string address = "tcp:localhost:" + std::to_string(port);
    EXPECT_EQ(results[2].status, 2);
    EXPECT_EQ(results[2].err, "launch_probe: bsp: Slurm task 0 cannot listen for the job at " +
                                  address + ": bind TCP port " + std::to_string(port) +
                                  ": Address already in use" + hint);
    EXPECT_EQ(results[3].status, 2);
    EXPECT_EQ(results[3].err, "launch_probe: bsp: process 1: the job coordinator at " + address +
                                  " refused this process: it is the coordinator of another job "
                                  "(job token mismatch)" +
                                  hint);
}

// With SLURM_STEP_RESV_PORTS the step listens on the first port Slurm reserved for it.
TEST(SlurmEmulation, ReservedPortIsUsed) {
    auto holder = bsp::launch::listen_on(bsp::launch::RendezvousAddress::parse("tcp:x:0"));
    int port = bsp::launch::bound_tcp_port(holder.get());
    holder.reset();  // a free port (for the moment), as Slurm would reserve one
    auto specs =
        tasks(3, {"gather", "2"},
              {"SLURM_STEP_RESV_PORTS=" + std::to_string(port) + "-" + std::to_string(port + 1)});
    auto results = run_all(specs);
    expect_clean(results);
    for (int i = 0; i < 3; ++i) {
        const Result &r = results[static_cast<std::size_t>(i)];
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, "process " + std::to_string(i) + " of 3: 2 rounds ok\n");
    }
}

TEST(SlurmEmulation, ListenerThatIsNotACoordinatorIsAClearError) {
    // Something else listens at the address: the task must not wait for ever.
    auto holder = bsp::launch::listen_on(bsp::launch::RendezvousAddress::parse("tcp:x:0"));
    int port = bsp::launch::bound_tcp_port(holder.get());
    auto specs =
        tasks(2, {"gather", "1"},
              {"BSP_RENDEZVOUS=tcp:localhost:" + std::to_string(port), "BSP_JOIN_TIMEOUT=0.3"});
    auto results = run_all({specs[1]});
    expect_clean(results);
    EXPECT_EQ(results[0].status, 2);
    EXPECT_EQ(results[0].err,
              "launch_probe: bsp: process 1: no answer from the job coordinator at "
              "tcp:localhost:" +
                  std::to_string(port) + " (is something else listening there?)\n");
}

TEST(SlurmEmulation, RendezvousOverrideWithAUnixSocket) {
    std::string path = std::filesystem::temp_directory_path() /
                       ("bsp-slurm-" + std::to_string(::getpid()) + ".sock");
    auto results = run_all(tasks(3, {"gather", "2"}, {"BSP_RENDEZVOUS=unix:" + path}));
    std::filesystem::remove(path);
    expect_clean(results);
    for (const auto &r : results) {
        EXPECT_EQ(r.status, 0) << r.err;
    }
}

TEST(SlurmEmulation, MissingTasksAreReportedAfterTheJoinTimeout) {
    // Only task 0 starts (it joins its own coordinator at once).
    auto results = run_all(tasks(3, {"gather", "1"}, {"BSP_JOIN_TIMEOUT=0.5"}, 1));
    expect_clean(results);
    EXPECT_EQ(results[0].status, 1);
    EXPECT_EQ(results[0].err,
              "bsp: only 1 of 3 processes joined the job within 0.5 s (missing: 1, 2)\n");
}

TEST(SlurmEmulation, BatchScriptWithoutStepIsADirectStart) {
    Spec s{{PROBE_PATH, "gather", "1"}};
    s.env = {"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_JOB_ID=77"};
    auto results = run_all({s});
    expect_clean(results);
    EXPECT_EQ(results[0].status, 0);
    EXPECT_EQ(results[0].out, "started directly\n");
}

TEST(SlurmEmulation, BadVariablesAreClearErrors) {
    Spec s{{PROBE_PATH, "gather", "1"}};
    s.env = {"SLURM_PROCID=5", "SLURM_NTASKS=4", "SLURM_JOB_ID=77", "SLURM_STEP_ID=0",
             "SLURM_STEP_NODELIST=n1"};
    auto results = run_all({s});
    EXPECT_EQ(results[0].status, 2);
    EXPECT_EQ(results[0].err, "launch_probe: bsp: SLURM_PROCID=5 is outside the 4 tasks\n");

    s.env = {"BSP_PID=0", "BSP_RENDEZVOUS=unix:/nonexistent", "BSP_JOB=x"};  // no BSP_NPROCS
    results = run_all({s});
    EXPECT_EQ(results[0].status, 2);
    EXPECT_EQ(results[0].err,
              "launch_probe: bsp: BSP_PID is set (started by bsprun) but BSP_NPROCS is "
              "missing\n");

    s.env = {"BSP_PID=0", "BSP_NPROCS=70000", "BSP_RENDEZVOUS=unix:/nonexistent", "BSP_JOB=x"};
    results = run_all({s});
    EXPECT_EQ(results[0].status, 2);
    EXPECT_EQ(results[0].err, "launch_probe: bsp: BSP_NPROCS=70000 is more than 65535 processes\n");
}

}  // namespace
