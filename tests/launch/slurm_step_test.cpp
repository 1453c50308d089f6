// Slurm variables: reserved ports, SlurmStep::from_environment.
#include "slurm_step.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace {

using namespace bsp::launch;

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
              "SLURM_NODELIST", "SLURM_STEP_RESV_PORTS", "BSP_RENDEZVOUS", "SLURM_STEP_NUM_NODES",
              "SLURM_NNODES", "SLURMD_NODENAME"}) {
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
    // One node: task 0 listens on loopback only, on a port the kernel picks.
    EXPECT_EQ(s->nodes, 1);
    EXPECT_EQ(s->rendezvous.to_string(), "tcp:127.0.0.1:0");
    EXPECT_EQ(s->source, SlurmStep::Source::own_node);

    // Several nodes: on this node's address (SLURMD_NODENAME).
    ::setenv("SLURM_STEP_NUM_NODES", "2", 1);
    ::setenv("SLURMD_NODENAME", "cn06", 1);
    s = SlurmStep::from_environment();
    EXPECT_EQ(s->nodes, 2);
    EXPECT_EQ(s->rendezvous.to_string(), "tcp:cn06:0");

    // A port Slurm reserved for the step is used.
    ::setenv("SLURM_STEP_RESV_PORTS", "12031-12032", 1);
    s = SlurmStep::from_environment();
    EXPECT_EQ(s->rendezvous.to_string(), "tcp:cn06:12031");
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
    EXPECT_EQ(SlurmStep::from_environment()->rendezvous.to_string(), "tcp:127.0.0.1:0");
    ::setenv("SLURM_STEP_NUM_NODES", "3", 1);  // more nodes than tasks
    EXPECT_THROW(SlurmStep::from_environment(), std::runtime_error);
    ::setenv("SLURM_STEP_NUM_NODES", "x", 1);
    EXPECT_THROW(SlurmStep::from_environment(), std::runtime_error);
    ::setenv("SLURM_STEP_NUM_NODES", "2", 1);
    ::setenv("SLURMD_NODENAME", "n1", 1);
    EXPECT_EQ(SlurmStep::from_environment()->rendezvous.to_string(), "tcp:n1:0");
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
