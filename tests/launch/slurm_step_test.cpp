// Slurm variables: host list, derived port, SlurmStep::from_environment.
#include "slurm_step.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
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
    EXPECT_EQ(slurm_rendezvous_port(1234, 0), 20672);  // 10000 + 78976 mod 22768
    EXPECT_EQ(slurm_rendezvous_port(1234, 1), 20673);
    EXPECT_EQ(slurm_rendezvous_port(0, 0), 10000);
    EXPECT_EQ(slurm_rendezvous_port(355, 47), 32767);  // 64*355+47 = 22767
    EXPECT_EQ(slurm_rendezvous_port(355, 48), 10000);
}

class SlurmEnvironment : public ::testing::Test {
  protected:
    void SetUp() override { clear(); }
    void TearDown() override { clear(); }
    static void clear() {
        for (const char *v :
             {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "SLURM_JOB_ID", "SLURM_JOBID",
              "SLURM_STEP_ID", "SLURM_STEPID", "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST",
              "SLURM_NODELIST", "BSP_RENDEZVOUS"}) {
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
    EXPECT_EQ(s->rendezvous.to_string(), "tcp:cn05:20673");

    ::setenv("BSP_RENDEZVOUS", "tcp:head:4000", 1);
    EXPECT_EQ(SlurmStep::from_environment()->rendezvous.to_string(), "tcp:head:4000");
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

}  // namespace
