// Every misuse the Runtime detects, with its exact message. The one process that is at
// fault reports; the others are torn down (as the launcher does with a real job).
#include <gtest/gtest.h>

#include "spmd_harness.hpp"

using bsp::rt::Runtime;
using bsp::test::run_spmd;
using bsp::test::single_error;

namespace {

std::string fails_with(int nprocs, const std::function<void(Runtime &)> &fn) {
    return single_error(run_spmd(nprocs, fn));
}

}  // namespace

TEST(Misuse, BadPid) {
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             int x = 0;
                             r.push_reg("bsp_push_reg", &x, 4);
                             r.sync("bsp_sync");
                             if (r.pid() == 1)
                                 r.put("bsp_put", 7, &x, &x, 0, 4, false);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_put on process 1: bad pid 7 (nprocs is 2)");
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             if (r.pid() == 0)
                                 r.send("bsp_send", -1, nullptr, nullptr, 0);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_send on process 0: bad pid -1 (nprocs is 2)");
}

TEST(Misuse, UnregisteredArea) {
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             int x = 0, y = 0;
                             r.push_reg("bsp_push_reg", &x, 4);
                             r.sync("bsp_sync");
                             if (r.pid() == 0)
                                 r.get("bsp_get", 1, &y, 0, &x, 4);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_get on process 0: source area is not registered (never "
              "registered, or deregistered by bsp_pop_reg)");
}

TEST(Misuse, AreaRegisteredInThisSuperstepNotYetUsable) {
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             int x = 0;
                             r.push_reg("bsp_pushregister", &x, 4);
                             if (r.pid() == 0)
                                 r.put("bsp_put", 1, &x, &x, 0, 4, false);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_put on process 0: destination area is not registered yet (a "
              "registration takes effect at the next bsp_sync)");
}

TEST(Misuse, PoppedArea) {
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             int x = 0;
                             r.push_reg("bsp_push_reg", &x, 4);
                             r.sync("bsp_sync");
                             r.pop_reg("bsp_pop_reg", &x);
                             r.sync("bsp_sync");
                             if (r.pid() == 1)
                                 r.put("bsp_hpput", 0, &x, &x, 0, 4, true);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_hpput on process 1: destination area is not registered "
              "(never registered, or deregistered by bsp_pop_reg)");
    EXPECT_EQ(fails_with(1,
                         [](Runtime &r) {
                             int x = 0;
                             r.pop_reg("bsp_popregister", &x);
                         }),
              "BSPlib error: bsp_popregister on process 0: area is not registered");
    EXPECT_EQ(fails_with(1,
                         [](Runtime &r) {
                             int x = 0;
                             r.push_reg("bsp_push_reg", &x, 4);
                             r.sync("bsp_sync");
                             r.pop_reg("bsp_pop_reg", &x);
                             r.pop_reg("bsp_pop_reg", &x);
                         }),
              "BSPlib error: bsp_pop_reg on process 0: area has already been deregistered in "
              "this superstep");
}

// A mismatch in what the pops of one superstep name, when one of them is a push of the
// same superstep.
TEST(Misuse, PopOfAPushOfThisSuperstepMismatched) {
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             int x = 0, y = 0;
                             r.push_reg("bsp_push_reg", &x, 4);
                             r.sync("bsp_sync");
                             r.push_reg("bsp_push_reg", &y, 4);
                             r.pop_reg("bsp_pop_reg", r.pid() == 0 ? &x : &y);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_sync on process 1: registration mismatch: the 1st bsp_pop_reg "
              "of process 1 deregisters the registration of its 1st bsp_push_reg of this "
              "superstep, that of process 0 slot 0 (registrations are matched by the order of "
              "bsp_push_reg calls)");
}

TEST(Misuse, OutOfBoundsOffsetOrSize) {
    // Sizes differ per process: process 1 registered only 8 bytes.
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             int x[4] = {};
                             r.push_reg("bsp_push_reg", x, r.pid() == 0 ? 16 : 8);
                             r.sync("bsp_sync");
                             if (r.pid() == 0)
                                 r.put("bsp_put", 1, x, x, 8, 4, false);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_put on process 0: offset 8 + 4 bytes is outside the 8 bytes "
              "of the destination area registered by process 1");
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             int x[4] = {};
                             r.push_reg("bsp_push_reg", x, 16);
                             r.sync("bsp_sync");
                             if (r.pid() == 1)
                                 r.get("bsp_hpget", 0, x, -4, x, 4);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_hpget on process 1: negative offset -4");
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             int x[4] = {};
                             r.push_reg("bsp_push_reg", x, 16);
                             r.sync("bsp_sync");
                             if (r.pid() == 1)
                                 r.get("bsp_get", 0, x, 0, x, -1);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_get on process 1: negative size -1");
    EXPECT_EQ(fails_with(1, [](Runtime &r) { r.push_reg("bsp_push_reg", nullptr, -3); }),
              "BSPlib error: bsp_push_reg on process 0: negative size -3");
}

TEST(Misuse, MismatchedRegistrationAcrossProcesses) {
    EXPECT_EQ(fails_with(3,
                         [](Runtime &r) {
                             int x = 0, y = 0;
                             r.push_reg("bsp_push_reg", &x, 4);
                             if (r.pid() == 2)
                                 r.push_reg("bsp_push_reg", &y, 4);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_sync on process 2: registration mismatch: process 2 called "
              "bsp_push_reg 2 times in this superstep but process 0 called it 1 time");
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             int x = 0, y = 0;
                             r.push_reg("bsp_push_reg", &x, 4);
                             r.push_reg("bsp_push_reg", &y, 4);
                             r.sync("bsp_sync");
                             // Process 1 pops in the other order: a different slot.
                             r.pop_reg("bsp_pop_reg", r.pid() == 0 ? &x : &y);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_sync on process 1: registration mismatch: the 1st bsp_pop_reg "
              "of process 1 deregisters registration slot 1, that of process 0 slot 0 "
              "(registrations are matched by the order of bsp_push_reg calls)");
}

TEST(Misuse, TagSize) {
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             r.set_tagsize("bsp_set_tagsize", r.pid() == 0 ? 4 : 8);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_sync on process 1: tag size mismatch: in this superstep "
              "process 1 set tag size 8, process 0 set tag size 4 (bsp_set_tagsize is "
              "collective)");
    EXPECT_EQ(fails_with(2,
                         [](Runtime &r) {
                             if (r.pid() == 1)
                                 r.set_tagsize("bsp_set_tag_size", 4);
                             r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_sync on process 1: tag size mismatch: in this superstep "
              "process 1 set tag size 4, process 0 did not call bsp_set_tagsize "
              "(bsp_set_tagsize is collective)");
    EXPECT_EQ(fails_with(1, [](Runtime &r) { r.set_tagsize("bsp_set_tagsize", -1); }),
              "BSPlib error: bsp_set_tagsize on process 0: negative tag size -1");
    EXPECT_EQ(fails_with(1,
                         [](Runtime &r) {
                             int t = 4;
                             r.set_tagsize("bsp_set_tagsize", t);
                             r.sync("bsp_sync");
                             r.send("bsp_send", 0, nullptr, &t, 4);
                         }),
              "BSPlib error: bsp_send on process 0: tag pointer is NULL but the tag size is 4");
}

TEST(Misuse, MoveFromEmptyQueue) {
    EXPECT_EQ(fails_with(1,
                         [](Runtime &r) {
                             char c;
                             r.move("bsp_move", &c, 1);
                         }),
              "BSPlib error: bsp_move on process 0: the message queue is empty");
}

TEST(Misuse, SyncAgainstEnd) {
    EXPECT_EQ(fails_with(3,
                         [](Runtime &r) {
                             r.sync("bsp_sync");
                             if (r.pid() == 2)
                                 r.sync("bsp_end", bsp::rt::SyncKind::End);
                             else
                                 r.sync("bsp_sync");
                         }),
              "BSPlib error: bsp_end on process 2: process 2 called bsp_end while process 0 "
              "called bsp_sync");
}
