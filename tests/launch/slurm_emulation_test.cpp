// Session::join_from_environment under Slurm, emulated: the test starts the P tasks
// itself with the variables srun --mpi=pmi2 would set, and serves their PMI2 requests
// (pmi2_server.hpp) as slurmstepd would.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "pmi2_server.hpp"
#include "process_harness.hpp"
#include "rendezvous_address.hpp"

namespace {

using launch_test::Result;
using launch_test::run_all;
using launch_test::sorted_lines;
using launch_test::Spec;

// A job id per test run (nothing may depend on it: two runs may get the same).
unsigned long fresh_job_id() {
    static std::mt19937_64 rng(
        static_cast<unsigned long>(::getpid()) ^
        static_cast<unsigned long>(std::chrono::steady_clock::now().time_since_epoch().count()));
    return 100000 + rng() % 900000;
}

// The tasks of an srun --mpi=pmi2 step: each gets its PMI_FD from the emulated slurmstepd
// (pmi2_server.hpp) and the variables srun sets. pmi == nullptr: a step without PMI.
std::vector<Spec> tasks(pmi2::Server *pmi, int ntasks, std::vector<std::string> probe_args,
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
                 "SLURM_STEP_NUM_NODES=1",
                 "SLURM_STEP_NODELIST=localhost",
                 "SLURM_JOB_NODELIST=localhost"};
        if (pmi != nullptr) {
            s.pass_fd = pmi->task_fd(i);
            auto pmi_env = pmi->task_environment(i);
            s.env.insert(s.env.end(), pmi_env.begin(), pmi_env.end());
        }
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
        pmi2::Server pmi(p, "77.0");
        auto results = run_all(tasks(&pmi, p, {"gather", "3"}));
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
    pmi2::Server pmi(4, "77.0");
    auto results = run_all(tasks(&pmi, 4, {"abort", "2"}));
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
    pmi2::Server pmi(3, "77.0");
    auto results = run_all(tasks(&pmi, 3, {"kill", "2"}));
    expect_clean(results);
    EXPECT_EQ(results[2].status, 128 + SIGKILL);
    EXPECT_EQ(results[0].status, 1);
    EXPECT_EQ(results[1].status, 1);
    EXPECT_EQ(results[0].err,
              "bsp: process 2 lost its control connection before bsp_end (it died or was "
              "killed)\n");
    EXPECT_EQ(results[1].err, "");
}

TEST(SlurmEmulation, SingleTaskNeedsNoPortAndNoPmi) {
    // A one-task step has nobody to wire up with: it neither listens nor needs PMI2.
    auto specs = tasks(nullptr, 1, {"gather", "2"}, {"BSP_RENDEZVOUS=tcp:localhost:1"});
    auto results = run_all(specs);
    expect_clean(results);
    EXPECT_EQ(results[0].status, 0) << results[0].err;
    EXPECT_EQ(results[0].out, "process 0 of 1: 2 rounds ok\n");
}

// Without Slurm's PMI2 the tasks of a step cannot share a secret: a clear error, never a
// rendezvous derived from the job's ids.
TEST(SlurmEmulation, WithoutPmiIsAClearError) {
    auto results = run_all(tasks(nullptr, 2, {"gather", "1"}));
    expect_clean(results);
    for (const auto &r : results) {
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err,
                  "launch_probe: bsp: started by Slurm (SLURM_STEP_ID is set) without Slurm's "
                  "PMI2: PMI_FD is not set, so the tasks cannot exchange the job's address and "
                  "secret (run the step with srun --mpi=pmi2, or set MpiDefault=pmi2 in "
                  "slurm.conf)\n");
    }
}

// Task 0 publishes its address and a fresh secret through the PMI2 key-value space: a
// loopback address (one-node step) on a port the kernel chose, 32 random hex digits. Two
// steps of the same job id get different secrets, and nothing about either can be derived
// from the job's ids.
TEST(SlurmEmulation, AddressAndSecretComeFromPmi) {
    unsigned long job = fresh_job_id();
    std::map<std::string, std::string> kvs[2];
    for (int step = 0; step < 2; ++step) {
        pmi2::Server pmi(3, std::to_string(job) + ".0");
        auto results = run_all(tasks(&pmi, 3, {"gather", "2"}, {}, -1, job));
        expect_clean(results);
        for (int i = 0; i < 3; ++i) {
            const Result &r = results[static_cast<std::size_t>(i)];
            EXPECT_EQ(r.status, 0) << r.err;
            EXPECT_EQ(r.out, "process " + std::to_string(i) + " of 3: 2 rounds ok\n");
        }
        kvs[step] = pmi.kvs();
        // Every task initialized, fenced once and finalized; task 0 put two keys, the
        // others got them.
        auto log = pmi.log();
        for (int i = 0; i < 3; ++i) {
            std::vector<std::string> want = {"init", "fullinit"};
            if (i == 0) {
                want.insert(want.end(), {"kvs-put", "kvs-put", "kvs-fence"});
            } else {
                want.insert(want.end(), {"kvs-fence", "kvs-get", "kvs-get"});
            }
            want.push_back("finalize");
            std::vector<std::string> got;
            for (const auto &l : log) {
                if (l.starts_with(std::to_string(i) + " ")) {
                    got.push_back(l.substr(l.find(' ') + 1));
                }
            }
            EXPECT_EQ(got, want) << "task " << i;
        }
    }
    for (const auto &k : kvs) {
        ASSERT_EQ(k.size(), 2u);
        EXPECT_TRUE(std::regex_match(k.at("bsp-job"), std::regex("[0-9a-f]{32}")))
            << k.at("bsp-job");
        EXPECT_TRUE(std::regex_match(k.at("bsp-rendezvous"), std::regex(R"(tcp:127\.0\.0\.1:\d+)")))
            << k.at("bsp-rendezvous");
        EXPECT_EQ(k.at("bsp-job").find(std::to_string(job)), std::string::npos);
    }
    EXPECT_NE(kvs[0].at("bsp-job"), kvs[1].at("bsp-job"));
}

TEST(SlurmEmulation, TakenPortIsAClearError) {
    // Task 0 alone: it must fail at once, naming the address.
    auto holder = bsp::launch::listen_on(bsp::launch::RendezvousAddress::parse("tcp:127.0.0.1:0"));
    int port = bsp::launch::bound_tcp_port(holder.get());
    pmi2::Server pmi(2, "77.0");
    auto results = run_all(tasks(&pmi, 2, {"gather", "1"},
                                 {"BSP_RENDEZVOUS=tcp:127.0.0.1:" + std::to_string(port)}, 1));
    expect_clean(results);
    EXPECT_EQ(results[0].status, 2);
    EXPECT_EQ(results[0].err,
              "launch_probe: bsp: Slurm task 0 cannot listen for the job at "
              "tcp:127.0.0.1:" +
                  std::to_string(port) +
                  " (set BSP_RENDEZVOUS to choose another address): bind TCP port " +
                  std::to_string(port) + " of 127.0.0.1: Address already in use\n");
}

// With SLURM_STEP_RESV_PORTS the step listens on the first port Slurm reserved for it.
TEST(SlurmEmulation, ReservedPortIsUsed) {
    auto holder = bsp::launch::listen_on(bsp::launch::RendezvousAddress::parse("tcp:127.0.0.1:0"));
    int port = bsp::launch::bound_tcp_port(holder.get());
    holder.reset();  // a free port (for the moment), as Slurm would reserve one
    pmi2::Server pmi(3, "77.0");
    auto specs =
        tasks(&pmi, 3, {"gather", "2"},
              {"SLURM_STEP_RESV_PORTS=" + std::to_string(port) + "-" + std::to_string(port + 1)});
    auto results = run_all(specs);
    expect_clean(results);
    for (int i = 0; i < 3; ++i) {
        const Result &r = results[static_cast<std::size_t>(i)];
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, "process " + std::to_string(i) + " of 3: 2 rounds ok\n");
    }
    EXPECT_EQ(pmi.kvs().at("bsp-rendezvous"), "tcp:127.0.0.1:" + std::to_string(port));
}

// A `nobody` process cannot join a step: it can read neither the secret (in the PMI2
// key-value space and the tasks' environments, never on a command line) nor guess it (it
// is not derived from the job's ids); its hellos are refused and the step goes on.
TEST(SlurmEmulation, NobodyCannotJoin) {
    std::string gate =
        std::filesystem::temp_directory_path() / ("bsp-slurm-gate-" + std::to_string(::getpid()));
    std::filesystem::remove(gate);
    unsigned long job = fresh_job_id();
    pmi2::Server pmi(2, std::to_string(job) + ".0");
    auto specs = tasks(&pmi, 2, {"hold", gate}, {}, -1, job);
    std::string sessions[2];
    std::optional<Result> nobody;
    bool skipped = false, asked = false;
    for (int i = 0; i < 2; ++i) {
        specs[static_cast<std::size_t>(i)].signal_when = [&, i](const std::string &out) {
            std::smatch m;
            std::regex holding(R"(process \d: holding [0-9a-f]{32} session (\d+)\n)");
            if (sessions[i].empty() && std::regex_match(out, m, holding)) {
                sessions[i] = m[1];
            }
            if (!asked && !sessions[0].empty() && !sessions[1].empty()) {
                asked = true;
                nobody = launch_test::run_intruder_as_nobody(
                    {"--session", sessions[0], "--session", sessions[1], "--at",
                     pmi.kvs().at("bsp-rendezvous"), "--nprocs", "2", "--guess",
                     "slurm-" + std::to_string(job) + ".0"});
                skipped = !nobody;
                std::FILE *f = std::fopen(gate.c_str(), "w");
                if (f != nullptr) {
                    std::fclose(f);
                }
            }
            return false;
        };
    }
    auto results = run_all(specs, std::chrono::seconds(60));
    std::filesystem::remove(gate);
    expect_clean(results);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(results[static_cast<std::size_t>(i)].status, 0)
            << results[static_cast<std::size_t>(i)].err;
    }
    EXPECT_TRUE(results[0].out.ends_with("process 0: done\n")) << results[0].out;
    EXPECT_TRUE(results[1].out.ends_with("process 1: done\n")) << results[1].out;
    EXPECT_EQ(results[1].err, "");
    ASSERT_TRUE(asked);
    if (skipped) {
        GTEST_SKIP() << "not root: cannot run the intruder as nobody";
    }
    ASSERT_TRUE(nobody.has_value());
    EXPECT_EQ(nobody->out.find("found"), std::string::npos) << nobody->out;
    EXPECT_NE(nobody->out.find("readable environ: 0\n"), std::string::npos) << nobody->out;
    // Two tries (a random guess and the token of the old derivation), both refused.
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
    EXPECT_EQ(attempts, 2) << nobody->out;
    EXPECT_EQ(results[0].err,
              "bsp: refused a control connection that is not from this job\n"
              "bsp: refused 1 more control connection that is not from this job\n");
}

TEST(SlurmEmulation, ListenerThatIsNotACoordinatorIsAClearError) {
    // Something else listens at the address task 0 published: the task must not wait for
    // ever.
    auto holder = bsp::launch::listen_on(bsp::launch::RendezvousAddress::parse("tcp:127.0.0.1:0"));
    int port = bsp::launch::bound_tcp_port(holder.get());
    std::string address = "tcp:127.0.0.1:" + std::to_string(port);
    pmi2::Server pmi(2, "77.0");
    // Task 0 is the emulation itself: it put a foreign address and a secret, and fences.
    int fd = pmi.task_fd(0);
    auto send = [fd](const pmi2::Command &c) {
        std::string m = pmi2::encode(c);
        ASSERT_EQ(::write(fd, m.data(), m.size()), static_cast<ssize_t>(m.size()));
    };
    std::string init = "cmd=init pmi_version=2 pmi_subversion=0\n";
    ASSERT_EQ(::write(fd, init.data(), init.size()), static_cast<ssize_t>(init.size()));
    send({"fullinit", {{"pmijobid", "77.0"}, {"pmirank", "0"}, {"threaded", "FALSE"}}});
    send({"kvs-put", {{"key", "bsp-rendezvous"}, {"value", address}}});
    send({"kvs-put", {{"key", "bsp-job"}, {"value", "0123456789abcdef0123456789abcdef"}}});
    send({"kvs-fence", {}});
    auto specs = tasks(&pmi, 2, {"gather", "1"}, {"BSP_JOIN_TIMEOUT=0.3"});
    auto results = run_all({specs[1]});
    expect_clean(results);
    EXPECT_EQ(results[0].status, 2);
    EXPECT_EQ(results[0].err,
              "launch_probe: bsp: process 1: no answer from the job coordinator at " + address +
                  " (is something else listening there?)\n");
}

TEST(SlurmEmulation, RendezvousOverrideWithAUnixSocket) {
    std::string path = std::filesystem::temp_directory_path() /
                       ("bsp-slurm-" + std::to_string(::getpid()) + ".sock");
    pmi2::Server pmi(3, "77.0");
    auto results = run_all(tasks(&pmi, 3, {"gather", "2"}, {"BSP_RENDEZVOUS=unix:" + path}));
    std::filesystem::remove(path);
    expect_clean(results);
    for (const auto &r : results) {
        EXPECT_EQ(r.status, 0) << r.err;
    }
}

TEST(SlurmEmulation, MissingTasksAreReportedAfterTheJoinTimeout) {
    // Only task 0 starts (it joins its own coordinator at once).
    pmi2::Server pmi(3, "77.0");
    // Tasks 1 and 2 pass the fence (emulated) but never join.
    for (int i : {1, 2}) {
        int fd = pmi.task_fd(i);
        std::string m =
            "cmd=init pmi_version=2 pmi_subversion=0\n" +
            pmi2::encode(
                {"fullinit",
                 {{"pmijobid", "77.0"}, {"pmirank", std::to_string(i)}, {"threaded", "FALSE"}}}) +
            pmi2::encode({"kvs-fence", {}});
        ASSERT_EQ(::write(fd, m.data(), m.size()), static_cast<ssize_t>(m.size()));
    }
    auto results = run_all(tasks(&pmi, 3, {"gather", "1"}, {"BSP_JOIN_TIMEOUT=0.5"}, 1));
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
