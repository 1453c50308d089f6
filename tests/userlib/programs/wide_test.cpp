// BSP_WIDE_TYPES programs (wide.c, misuse_wide.c: compiled with -DBSP_WIDE_TYPES and
// linked against the same libbsp.so as the int programs) run as separate processes over
// UDP: exact bytes at offsets above 2^31 and 2^32 of 4 GiB areas, BSMP through the wide
// names, and every misuse message with the values the program passed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "program_runner.hpp"

using bsp::test::ProgramResult;
using bsp::test::run_program;
using bsp::test::sorted_lines;

namespace {

ProgramResult run_wide(const char *name, int nprocs, std::vector<std::string> args = {}) {
    std::vector<std::string> argv{std::string(BSP_PROGRAMS_DIR) + "/" + name};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, {{"BSP_NPROCS", std::to_string(nprocs)}, {"BSP_TRANSPORT", "udp"}});
}

// Processes print between the same syncs, so lines of different processes interleave
// differently from run to run: compare them sorted.

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kArea = 4 * kGiB + 4 * kMiB + 77;  // wide.c's AREA

std::string expected_wide_output(int p) {
    std::string want;
    for (int i = 0; i < p; ++i) {
        const std::string me = "[" + std::to_string(i) + "] ";
        const std::string left = std::to_string((i + p - 1) % p);
        const std::string right = std::to_string((i + 1) % p);
        want += me + "puts from " + left + ": " + std::to_string(16 + 24 + 40 + 8 + 3 * kMiB + 32) +
                " bytes at offsets up to " + std::to_string(kArea - 32) + ", 0 wrong\n";
        want += me + "gets from " + right + ": " + std::to_string(3 * kMiB + 40 + 8 + 32) +
                " bytes, 0 wrong\n";
        // Two messages from the left neighbour: tags 2^40 + 100 left + k, 5 + k bytes.
        const std::string t = std::to_string(100 * ((i + p - 1) % p));
        const std::string t1 = std::to_string(100 * ((i + p - 1) % p) + 1);
        want += me + "queue 2 messages 11 bytes (bsmp_info 2 11), first tag 2^40+" + t +
                " length 5, 0 wrong, hpmove tag 2^40+" + t1 + " length 6, 0 wrong, then -1\n";
        want += me + "previous tag size 8\n";
    }
    return want;
}

}  // namespace

class WideTypes : public ::testing::TestWithParam<int> {};

TEST_P(WideTypes, FourGiBAreasPutGetAndBsmpExactBytes) {
    const int p = GetParam();
    auto r = run_wide("wide", p);
    EXPECT_EQ(sorted_lines(r.out), sorted_lines(expected_wide_output(p)));
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_FALSE(r.timed_out);
    EXPECT_FALSE(r.leftovers);
}

// P = 1: every put and get is local (the runtime's own path, no messaging layer).
INSTANTIATE_TEST_SUITE_P(Procs, WideTypes, ::testing::Values(1, 3));

struct WideMisuseCase {
    const char *name;
    const char *message;  // the one line on stderr
};

class WideMisuse : public ::testing::TestWithParam<WideMisuseCase> {};

TEST_P(WideMisuse, EndsTheWholeProgramWithTheExactValues) {
    auto r = run_wide("misuse_wide", 3, {GetParam().name});
    EXPECT_EQ(r.err, std::string(GetParam().message) + "\n");
    EXPECT_NE(r.exit_status, 0);
    EXPECT_EQ(r.out.find("no error detected"), std::string::npos);
    EXPECT_FALSE(r.timed_out);
    EXPECT_FALSE(r.leftovers);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WideMisuse,
    ::testing::Values(
        WideMisuseCase{"push_negative",
                       "BSPlib error: bsp_push_reg on process 2: negative size -4294967296"},
        WideMisuseCase{"put_negative_offset",
                       "BSPlib error: bsp_put on process 0: negative offset -3000000000"},
        WideMisuseCase{"get_negative_size",
                       "BSPlib error: bsp_get on process 2: negative size -4294967301"},
        WideMisuseCase{"hpput_beyond_end",
                       "BSPlib error: bsp_hpput on process 0: offset 4294971396 + 8 bytes is "
                       "outside the 4294971400 bytes of the destination area registered by "
                       "process 1"},
        WideMisuseCase{"hpget_beyond_end",
                       "BSPlib error: bsp_hpget on process 1: offset 4294967300 + 4096 bytes is "
                       "outside the 4294971392 bytes of the source area registered by process 2"},
        WideMisuseCase{"put_offset_2_33",
                       "BSPlib error: bsp_put on process 1: offset 8589934592 + 1 bytes is "
                       "outside the 4294971392 bytes of the destination area registered by "
                       "process 0"},
        WideMisuseCase{"send_negative",
                       "BSPlib error: bsp_send on process 1: negative payload size -3000000000"},
        WideMisuseCase{"tagsize_too_large",
                       "BSPlib error: bsp_set_tagsize on process 0: tag size 3000000000 is larger "
                       "than the largest, 2147483647 bytes"},
        WideMisuseCase{"move_negative",
                       "BSPlib error: bsp_move on process 2: negative reception size "
                       "-2147483649"}),
    [](const ::testing::TestParamInfo<WideMisuseCase> &i) { return std::string(i.param.name); });

TEST(WideTypes, CxxLayerOverTheWideEntryPoints) {
    // cxx_api.cpp built with -DBSP_WIDE_TYPES: bsp.hpp calls bsp_put_wide and the others.
    auto r = run_wide("cxx_api_wide", 3);
    EXPECT_EQ(r.out,
              "[0] sum 4.5, left's entry 0.0, 1 message of 8 bytes, tag 102\n"
              "[1] sum 4.5, left's entry 1.5, 1 message of 8 bytes, tag 100\n"
              "[2] sum 4.5, left's entry 3.0, 1 message of 8 bytes, tag 101\n");
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_FALSE(r.timed_out);
    EXPECT_FALSE(r.leftovers);
}
