// Tests of tools/bsp-ss/xdp_stats.cpp: bsp-ss -X, the XDP pre-filter's counters.
#include "xdp_stats.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

TEST(XdpStats, CpuLists) {
    EXPECT_EQ(bsp_ss::count_cpu_list("0\n"), 1);
    EXPECT_EQ(bsp_ss::count_cpu_list("0-1"), 2);
    EXPECT_EQ(bsp_ss::count_cpu_list("0-3,6,8-9\n"), 7);
    EXPECT_EQ(bsp_ss::count_cpu_list(""), 0);
    EXPECT_EQ(bsp_ss::count_cpu_list("3-1"), 0);
    EXPECT_EQ(bsp_ss::count_cpu_list("0,"), 0);
    EXPECT_EQ(bsp_ss::count_cpu_list("x"), 0);
    EXPECT_EQ(bsp_ss::count_cpu_list("0--1"), 0);
}

TEST(XdpStats, SumsEveryCounterOverTheCpus) {
    size_t n = bsp_ss::xdp_counter_names().size();
    ASSERT_EQ(n, 11U);
    std::vector<uint64_t> raw(3 * n);
    for (size_t c = 0; c < 3; c++)
        for (size_t i = 0; i < n; i++)
            raw[c * n + i] = (c + 1) * 100 + i;
    std::vector<uint64_t> s = bsp_ss::sum_per_cpu(raw, 3);
    ASSERT_EQ(s.size(), n);
    for (size_t i = 0; i < n; i++)
        EXPECT_EQ(s[i], 600 + 3 * i) << bsp_ss::xdp_counter_names()[i];
}

TEST(XdpStats, TableAndJson) {
    std::vector<uint64_t> s = {8, 1, 3, 2, 1, 0, 0, 0, 0, 1, 5};
    bsp_ss::Options o;
    EXPECT_EQ(bsp_ss::render_xdp(s, o),
              "XDP pre-filter   frames\n"
              "seen             8\n"
              "hello            1\n"
              "passed           3\n"
              "steered          2\n"
              "drop_short       1\n"
              "drop_version     0\n"
              "drop_type        0\n"
              "drop_cluster     0\n"
              "drop_addr        0\n"
              "drop_no_port     1\n"
              "inactive         5\n");
    o.no_header = true;
    EXPECT_EQ(bsp_ss::render_xdp(s, o).substr(0, 18), "seen             8");
    o.json = true;
    EXPECT_EQ(bsp_ss::render_xdp(s, o),
              "{\"seen\": 8, \"hello\": 1, \"passed\": 3, \"steered\": 2, \"drop_short\": 1, "
              "\"drop_version\": 0, \"drop_type\": 0, \"drop_cluster\": 0, \"drop_addr\": 0, "
              "\"drop_no_port\": 1, \"inactive\": 5}\n");
}

TEST(XdpStats, MissingMapIsAClearError) {
    bsp_ss::XdpRead r = bsp_ss::read_xdp_counters("/nonexistent/bsp_xdp_counters");
    EXPECT_TRUE(r.sums.empty());
    EXPECT_NE(r.error, "");
}

}  // namespace
