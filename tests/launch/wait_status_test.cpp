#include "wait_status.hpp"

#include <sys/wait.h>

#include <gtest/gtest.h>

namespace {

using namespace bsp::launch;

TEST(WaitStatus, ExitAndSignal) {
    EXPECT_EQ(shell_status(W_EXITCODE(0, 0)), 0);
    EXPECT_EQ(shell_status(W_EXITCODE(3, 0)), 3);
    EXPECT_EQ(shell_status(W_EXITCODE(0, 11)), 139);
    EXPECT_EQ(describe_wait_status(W_EXITCODE(3, 0)), "exited with status 3");
    EXPECT_EQ(describe_wait_status(W_EXITCODE(0, 9)), "was killed by signal 9 (Killed)");
    EXPECT_EQ(describe_wait_status(W_EXITCODE(0, 11) | WCOREFLAG),
              "was killed by signal 11 (Segmentation fault), core dumped");
}

}  // namespace
