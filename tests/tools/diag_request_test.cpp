// Tests of tools/bsp-ss/diag_request.cpp: the exact bytes of the dump request.
#include "diag_request.hpp"

#include <gtest/gtest.h>
#include <linux/bsp.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include <cstring>

namespace {

TEST(DiagRequest, Layout) {
    auto b = bsp_ss::build_dump_request(23, 40000, BSP_DIAG_SHOW_PEER | BSP_DIAG_SHOW_STATS, 99);
    ASSERT_EQ(b.size(), NLMSG_LENGTH(sizeof(bsp_diag_req)));
    ASSERT_EQ(b.size(), 16u + 20u);
    nlmsghdr h;
    std::memcpy(&h, b.data(), sizeof(h));
    EXPECT_EQ(h.nlmsg_len, b.size());
    EXPECT_EQ(h.nlmsg_type, SOCK_DIAG_BY_FAMILY);
    EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
    EXPECT_EQ(h.nlmsg_seq, 99u);
    EXPECT_EQ(h.nlmsg_pid, 0u);
    bsp_diag_req r;
    std::memcpy(&r, b.data() + NLMSG_HDRLEN, sizeof(r));
    EXPECT_EQ(r.sdiag_family, 23);
    EXPECT_EQ(r.sdiag_protocol, 0);
    EXPECT_EQ(r.bdiag_port, 40000);
    EXPECT_EQ(r.bdiag_show, BSP_DIAG_SHOW_PEER | BSP_DIAG_SHOW_STATS);
    EXPECT_EQ(r.bdiag_ino, 0u);
    EXPECT_EQ(r.bdiag_cookie[0], 0u);
    EXPECT_EQ(r.bdiag_cookie[1], 0u);
}

TEST(DiagRequest, FamilyInEffectIsUsed) {
    auto b = bsp_ss::build_dump_request(41, 0, 0, 1);
    bsp_diag_req r;
    std::memcpy(&r, b.data() + NLMSG_HDRLEN, sizeof(r));
    EXPECT_EQ(r.sdiag_family, 41);
    EXPECT_EQ(r.bdiag_port, 0);
}

}  // namespace
