// Checks on the user-space API header kernel/include/uapi/linux/bsp.h.
#include <linux/bsp.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>

namespace {

// Families that in-tree code of Linux 6.1 passes to sock_register(), or that
// rtnetlink/sock_diag index by number (7 AF_BRIDGE, 28 AF_MPLS, 27 AF_IB
// used by rdma_cm addresses). AF_BSP must collide with none of them.
constexpr auto kTakenOn61 =
    std::to_array<int>({1,  2,  3,  5,  6,  7,  8,  9,  10, 11, 15, 16, 17, 20, 21, 24, 26, 27,
                        28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45});

TEST(Uapi, FamilyIsRegistrableAndFree) {
    EXPECT_GT(AF_BSP, 0);
    EXPECT_LT(AF_BSP, 46) << "sock_register() refuses numbers >= AF_MAX (46 on 6.1)";
    EXPECT_EQ(std::count(kTakenOn61.begin(), kTakenOn61.end(), AF_BSP), 0);
    EXPECT_EQ(PF_BSP, AF_BSP);
}

TEST(Uapi, EtherTypeIsLocalExperimental) {
    // IEEE 802 local experimental EtherTypes are 0x88B5 and 0x88B6.
    EXPECT_TRUE(ETH_P_BSP == 0x88B5 || ETH_P_BSP == 0x88B6);
}

}  // namespace
