// Slurm variables: host list, derived port, SlurmStep::from_environment.
#include "slurm_step.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace {

using namespace bsp::launch;

TEST(SlurmHostList, FirstHost) {
    EXPECT_EQ(first_host_of("node07"), "node07");
    EXPECT_EQ(first_host_of("node[03-05,9],login1"), "node03");
    EXPECT_EQ(first_host_of("login1,node[03-05]"), "login1");
    EXPECT_EQ(first_host_of("rack[1-2]-n[7,9]"), "rack1-n7");
    EXPECT_EQ(first_host_of("n[007]"), "n007");
    EXPECT_EQ(first_host_of("a[10-12]b"), "a10b");
}

TEST(SlurmHostList, MalformedListsAreErrors) {
    for (const char *bad : {"", ",a", "n[1-2", "n]1", "n[]", "n[x-y]"}) {
        EXPECT_THROW(first_host_of(bad), std::invalid_argument) << bad;
    }
}

TEST(SlurmPort, DerivedFromJobAndStep) {
    EXPECT_EQ(slurm_rendezvous_port(1234, 0), 20723);  // 10000 + 78976 mod 22751
    EXPECT_EQ(slurm_rendezvous_port(1234, 1), 20724);
    EXPECT_EQ(slurm_rendezvous_port(0, 0), 10000);
    EXPECT_EQ(slurm_rendezvous_port(355, 30), 32750);  // 64*355+30 = 22750
    EXPECT_EQ(slurm_rendezvous_port(355, 31), 10000);
    // Large ids do not overflow 64 * job_id.
    EXPECT_EQ(slurm_rendezvous_port(UINT64_MAX, 0),
              10000 + (64 * (UINT64_MAX % kSlurmPortModulus)) % kSlurmPortModulus);
}

// The old modulus 22768 = 16 * 1423 gave jobs 1423 apart the same port. Now steps 0..63 of
// any 355 consecutive job ids all get different ports, and steps 0 of two jobs share one
// only when the ids differ by a multiple of 22751.
TEST(SlurmPort, NoCollisionsAmongNearbyJobs) {
    for (std::uint64_t base : {0ull, 1ull, 1000ull, 123456789ull}) {
        std::set<std::uint16_t> seen;
        for (std::uint64_t job = base; job < base + 355; ++job) {
            for (std::uint64_t step = 0; step < 64; ++step) {
                auto port = slurm_rendezvous_port(job, step);
                EXPECT_GE(port, 10000);
                EXPECT_LE(port, 32750);
                EXPECT_TRUE(seen.insert(port).second) << "job " << job << " step " << step;
            }
        }
    }
    EXPECT_NE(slurm_rendezvous_port(5000, 0), slurm_rendezvous_port(5000 + 1423, 0));
    EXPECT_NE(slurm_rendezvous_port(5000, 0), slurm_rendezvous_port(5000 + 16 * 1423, 0));
    for (std::uint64_t k = 1; k < kSlurmPortModulus; ++k) {
        ASSERT_NE(slurm_rendezvous_port(5000, 0), slurm_rendezvous_port(5000 + k, 0)) << k;
    }
    EXPECT_EQ(slurm_rendezvous_port(5000, 0), slurm_rendezvous_port(5000 + kSlurmPortModulus, 0));
}

TEST(SlurmPort, FirstReservedPort) {
    EXPECT_EQ(first_reserved_port("12000-12003"), 12000);
    EXPECT_EQ(first_reserved_port("12007,12010-12011"), 12007);
    EXPECT_EQ(first_reserved_port("65535"), 65535);
    for (const char *bad : {"", "-12000", "x", "12000x-12003", "0", "65536", " 12000"}) {
        EXPECT_THROW(first_reserved_port(bad), std::invalid_argument) << bad;
    }
}

class SlurmEnvironment : public ::testing::Test {
  protected:
    void SetUp() override { clear(); }
    void TearDown() override { clear(); }
    static void clear() {
        for (const char *v :
             {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "SLURM_JOB_ID", "SLURM_JOBID",
              "SLURM_STEP_ID", "SLURM_STEPID", "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST",
              "SLURM_NODELIST", "SLURM_STEP_RESV_PORTS", "BSP_RENDEZVOUS"}) {
            ::unsetenv(v);
        }
    }
};

TEST_F(SlurmEnvironment, NotAStepWithoutStepId) {
    EXPECT_FALSE(SlurmStep::from_environment());
    ::setenv("SLURM_PROCID", "0", 1);
    ::setenv("SLURM_NTASKS", "4", 1);
    EXPECT_FALSE(SlurmStep::from_environment()) << "a batch script is not an srun step";
}

TEST_F(SlurmEnvironment, StepVariables) {
    ::setenv("SLURM_PROCID", "3", 1);
    ::setenv("SLURM_NTASKS", "8", 1);
    ::setenv("SLURM_STEP_NUM_TASKS", "4", 1);
    ::setenv("SLURM_JOB_ID", "1234", 1);
    ::setenv("SLURM_STEPID", "1", 1);
    ::setenv("SLURM_JOB_NODELIST", "x[1-9]", 1);
    ::setenv("SLURM_STEP_NODELIST", "cn[05-06]", 1);
    auto s = SlurmStep::from_environment();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->procid, 3);
    EXPECT_EQ(s->ntasks, 4) << "the step's task count wins over the job's";
    EXPECT_EQ(s->job_id, 1234u);
    EXPECT_EQ(s->step_id, 1u);
    EXPECT_EQ(s->token, "slurm-1234.1");
    EXPECT_EQ(s->rendezvous.to_string(), "tcp:cn05:20724");
    EXPECT_EQ(s->source, SlurmStep::Source::derived);

    // A port Slurm reserved for the step wins over the derived one.
    ::setenv("SLURM_STEP_RESV_PORTS", "12031-12032", 1);
    s = SlurmStep::from_environment();
    EXPECT_EQ(s->rendezvous.to_string(), "tcp:cn05:12031");
    EXPECT_EQ(s->source, SlurmStep::Source::reserved);
    ::setenv("SLURM_STEP_RESV_PORTS", "none", 1);
    try {
        SlurmStep::from_environment();
        ADD_FAILURE() << "a malformed SLURM_STEP_RESV_PORTS must be an error";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "bsp: SLURM_STEP_RESV_PORTS: 'none' does not start with a port");
    }

    // BSP_RENDEZVOUS wins over both.
    ::setenv("BSP_RENDEZVOUS", "tcp:head:4000", 1);
    s = SlurmStep::from_environment();
    EXPECT_EQ(s->rendezvous.to_string(), "tcp:head:4000");
    EXPECT_EQ(s->source, SlurmStep::Source::variable);
}

TEST_F(SlurmEnvironment, BadValuesAreErrors) {
    ::setenv("SLURM_PROCID", "0", 1);
    ::setenv("SLURM_STEP_ID", "0", 1);
    EXPECT_THROW(SlurmStep::from_environment(), std::runtime_error);  // no SLURM_NTASKS
    ::setenv("SLURM_NTASKS", "two", 1);
    EXPECT_THROW(SlurmStep::from_environment(), std::runtime_error);
    ::setenv("SLURM_NTASKS", "2", 1);
    EXPECT_THROW(SlurmStep::from_environment(), std::runtime_error);  // no SLURM_JOB_ID
    ::setenv("SLURM_JOB_ID", "9", 1);
    EXPECT_THROW(SlurmStep::from_environment(), std::runtime_error);  // no node list
    ::setenv("SLURM_STEP_NODELIST", "n[1-", 1);
    EXPECT_THROW(SlurmStep::from_environment(), std::runtime_error);
    ::setenv("SLURM_STEP_NODELIST", "n[1-2]", 1);
    EXPECT_EQ(SlurmStep::from_environment()->rendezvous.to_string(), "tcp:n1:10576");
    ::setenv("SLURM_PROCID", "2", 1);
    EXPECT_THROW(SlurmStep::from_environment(), std::runtime_error);
}

// Task counts and ids too large for the job are refused before anything is sized by them
// (4294967297 tasks used to become 1, 2000000000 sized the coordinator's tables).
TEST_F(SlurmEnvironment, TaskCountsAreBounded) {
    ::setenv("SLURM_STEP_ID", "0", 1);
    ::setenv("SLURM_JOB_ID", "9", 1);
    ::setenv("SLURM_STEP_NODELIST", "n[1-2]", 1);
    ::setenv("SLURM_PROCID", "0", 1);
    auto error = [](const char *ntasks) -> std::string {
        ::setenv("SLURM_NTASKS", ntasks, 1);
        try {
            SlurmStep::from_environment();
        } catch (const std::runtime_error &e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(error("4294967297"), "bsp: SLURM_NTASKS=4294967297 is outside 1..65535 tasks");
    EXPECT_EQ(error("2000000000"), "bsp: SLURM_NTASKS=2000000000 is outside 1..65535 tasks");
    EXPECT_EQ(error("65536"), "bsp: SLURM_NTASKS=65536 is outside 1..65535 tasks");
    EXPECT_EQ(error("0"), "bsp: SLURM_NTASKS=0 is outside 1..65535 tasks");
    EXPECT_EQ(error("65535"), "");
    ::setenv("SLURM_PROCID", "4294967296", 1);
    EXPECT_EQ(error("2"), "bsp: SLURM_PROCID=4294967296 is outside the 2 tasks");
}

}  // namespace
