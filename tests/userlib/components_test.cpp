// Building blocks of the messaging layer: schedules, pacing, repackaging, codec.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <set>

#include "messages.hpp"
#include "pacing.hpp"
#include "registry.hpp"
#include "runtime_config.hpp"
#include "schedule.hpp"

using namespace bsp::rt;

TEST(Schedule, LatinSquareIsALatinSquare) {
    for (int p = 1; p <= 9; ++p) {
        for (int t = 0; t < p - 1; ++t) {
            std::set<int> column;
            for (int i = 0; i < p; ++i)
                column.insert(
                    destination_order(Schedule::LatinSquare, i, p, 0)[static_cast<std::size_t>(t)]);
            EXPECT_EQ(column.size(), static_cast<std::size_t>(p)) << "p=" << p << " t=" << t;
        }
    }
    EXPECT_EQ(destination_order(Schedule::LatinSquare, 2, 4, 0), (std::vector<int>{3, 0, 1}));
    EXPECT_EQ(destination_order(Schedule::PidOrder, 2, 4, 0), (std::vector<int>{0, 1, 3}));
}

TEST(Schedule, RandomIsAPermutationReproducibleAndVariesBySuperstep) {
    auto a = destination_order(Schedule::Random, 3, 16, 5, 42);
    auto b = destination_order(Schedule::Random, 3, 16, 5, 42);
    auto c = destination_order(Schedule::Random, 3, 16, 6, 42);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    std::sort(a.begin(), a.end());
    std::vector<int> all;
    for (int j = 0; j < 16; ++j)
        if (j != 3)
            all.push_back(j);
    EXPECT_EQ(a, all);
}

TEST(Schedule, ParseNames) {
    EXPECT_EQ(parse_schedule("latin"), Schedule::LatinSquare);
    EXPECT_EQ(parse_schedule("random"), Schedule::Random);
    EXPECT_EQ(parse_schedule("pid"), Schedule::PidOrder);
    EXPECT_EQ(parse_schedule("fastest"), std::nullopt);
}

TEST(Pacing, RateFromSendersAndSchedule) {
    // A total exchange of 8: all 8 send.
    EXPECT_EQ(expected_concurrent_senders(Schedule::LatinSquare, 8, 8), 1);
    EXPECT_EQ(expected_concurrent_senders(Schedule::PidOrder, 8, 8), 7);
    EXPECT_EQ(expected_concurrent_senders(Schedule::Random, 8, 8), 1);
    EXPECT_EQ(pacing_rate(Schedule::LatinSquare, 8, 8, 1000000000), 950000000u);
    EXPECT_EQ(pacing_rate(Schedule::PidOrder, 8, 8, 700000000), 95000000u);
    EXPECT_EQ(pacing_rate(Schedule::LatinSquare, 8, 8, 0), 0u);
    // Pid order: no receiver has more senders than send at all, nor than p - 1.
    EXPECT_EQ(expected_concurrent_senders(Schedule::PidOrder, 8, 3), 3);
    EXPECT_EQ(expected_concurrent_senders(Schedule::PidOrder, 8, 0), 1);
    EXPECT_EQ(expected_concurrent_senders(Schedule::PidOrder, 1024, 1024), 1023);
}

TEST(Repackaging, UnitsRespectSizeAndRecordsReassemble) {
    UnitPacker packer(9, 200);
    std::vector<std::byte> big(1000);
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<std::byte>(i);
    std::vector<std::byte> small{std::byte{1}, std::byte{2}};
    packer.add(RecordKind::Put, 3, 16, small);
    packer.add(RecordKind::Send, 0, 0, big);
    packer.add(RecordKind::Send, 0, 0, {});
    auto units = packer.finish();
    std::vector<std::byte> reassembled;
    int records = 0, empties = 0;
    for (std::size_t u = 0; u < units.size(); ++u) {
        EXPECT_LE(units[u].size(), 200u);
        Reader r(units[u]);
        MsgHeader h = read_header(r);
        EXPECT_EQ(h.type, MsgType::Data);
        EXPECT_EQ(h.superstep, 9u);
        EXPECT_EQ(h.aux, u);
        EXPECT_EQ(read_unit_info(r).count, units.size());
        while (auto rec = next_record(r)) {
            ++records;
            if (rec->kind == RecordKind::Send && rec->total == 1000) {
                EXPECT_EQ(rec->chunk_off, reassembled.size());
                reassembled.insert(reassembled.end(), rec->chunk.begin(), rec->chunk.end());
            }
            if (rec->kind == RecordKind::Send && rec->total == 0)
                ++empties;
        }
    }
    EXPECT_EQ(reassembled, big);
    EXPECT_EQ(empties, 1);
    // 200-byte units carry 200 - 21 header bytes; each record chunk costs 25 header bytes.
    EXPECT_EQ(units.size(), 7u);
    EXPECT_EQ(records, 9);
}

TEST(Codec, TruncatedMessagesAreRejected) {
    Contribution c;
    c.row = {0, 1, 1};
    c.ops.push_sizes = {4, 8};
    Contribution d = c;
    d.kind = SyncKind::End;
    d.tagsize_request = 12;
    BarrierMsg m{summarize(1, c), {2, 1}};
    merge_summary(m.summary, summarize(2, d));
    ASSERT_TRUE(m.summary.kind_diff.has_value());
    ASSERT_TRUE(m.summary.calls_diff.has_value());
    auto msg = encode_barrier(2, 1, m);
    for (std::size_t cut = 0; cut < msg.size(); ++cut) {
        Reader r(std::span<const std::byte>(msg).first(cut));
        EXPECT_THROW(
            {
                read_header(r);
                decode_barrier(r, 3);
            },
            ProtocolError)
            << cut;
    }
    Reader r(msg);
    read_header(r);
    const BarrierMsg got = decode_barrier(r, 3);
    EXPECT_EQ(got, m);
    EXPECT_EQ(got.summary.first, 1u);
    EXPECT_EQ(got.summary.members, 2u);
    EXPECT_EQ(got.summary.senders, 2u);
    EXPECT_EQ(got.summary.kind_diff->first, 2u);
    EXPECT_EQ(got.summary.calls_diff->first, 2u);
    EXPECT_EQ(got.summary.pushes.size(), 2u);
    // One byte more is as bad as one less.
    msg.push_back(std::byte{0});
    Reader longer(msg);
    read_header(longer);
    EXPECT_THROW(decode_barrier(longer, 3), ProtocolError);
}

TEST(Config, Quantities) {
    EXPECT_EQ(parse_quantity("125M"), 125000000u);
    EXPECT_EQ(parse_quantity("10k"), 10000u);
    EXPECT_EQ(parse_quantity("1.5G"), 1500000000u);
    EXPECT_EQ(parse_quantity("12"), 12u);
    EXPECT_EQ(parse_quantity("12x"), std::nullopt);
    EXPECT_EQ(parse_quantity(""), std::nullopt);
}

// Found by tests/fuzz/text_parsers_fuzz: strtod accepts "nan", which passed both range
// checks and was converted to an integer (undefined behaviour).
TEST(Config, QuantitiesRejectNanAndInfinity) {
    for (const char *s : {"nan", "-nan", "NAN", "nank", "inf", "-inf", "infinity", "1e400", "-1"})
        EXPECT_EQ(parse_quantity(s), std::nullopt) << s;
    EXPECT_EQ(parse_quantity("1.8e19"), 18000000000000000000u);
    EXPECT_EQ(parse_quantity("0"), 0u);
}

// Found by the fuzz review: strtod also took leading spaces, signs and hexadecimal.
TEST(Config, QuantitiesAreDecimalNumbersOnly) {
    for (const char *s : {" 12", "+12", "0x10", "0x1p4", "12 ", "12k ", "\t5", "1e3x"})
        EXPECT_EQ(parse_quantity(s), std::nullopt) << s;
    EXPECT_EQ(parse_quantity("1e3"), 1000u);
    EXPECT_EQ(parse_quantity(".5k"), 500u);
}

TEST(Config, IntegersAreWholeAndInRange) {
    EXPECT_EQ(parse_integer("4", 1, 65535), 4);
    EXPECT_EQ(parse_integer("65535", 1, 65535), 65535);
    EXPECT_EQ(parse_integer("0001", 1, 65535), 1);
    for (const char *s :
         {"", "0", "65536", "4x", "4 ", " 4", "+4", "-4", "4.0", "0x4", "99999999999999999999999"})
        EXPECT_EQ(parse_integer(s, 1, 65535), std::nullopt) << '\'' << s << '\'';
}

namespace {

// Sets one environment variable for the lifetime of the object.
class ScopedEnv {
  public:
    ScopedEnv(const char *name, const char *value) : name_(name) { ::setenv(name, value, 1); }
    ~ScopedEnv() { ::unsetenv(name_); }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

  private:
    const char *name_;
};

std::string config_error() {
    std::string error;
    config_from_environment(&error);
    return error;
}

}  // namespace

TEST(Config, EnvironmentValuesAreCheckedWhole) {
    {
        ScopedEnv e("BSP_VERBOSE", "1");
        std::string error;
        EXPECT_TRUE(config_from_environment(&error).verbose);
        EXPECT_EQ(error, "");
    }
    for (const char *ok : {"0", ""}) {
        ScopedEnv e("BSP_VERBOSE", ok);
        std::string error;
        EXPECT_FALSE(config_from_environment(&error).verbose);
        EXPECT_EQ(error, "");
    }
    {
        ScopedEnv e("BSP_VERBOSE", "yes");
        EXPECT_EQ(config_error(), "BSP_VERBOSE=yes is invalid (expected 0 or 1)");
    }
    {
        ScopedEnv e("BSP_VERBOSE", "1x");
        EXPECT_EQ(config_error(), "BSP_VERBOSE=1x is invalid (expected 0 or 1)");
    }
    {
        ScopedEnv e("BSP_UNIT_BYTES", "4096junk");
        EXPECT_EQ(config_error(),
                  "BSP_UNIT_BYTES=4096junk is invalid (expected a size from 256 to 1G)");
    }
    {
        ScopedEnv e("BSP_LINK_RATE", " 125M");
        EXPECT_EQ(config_error(),
                  "BSP_LINK_RATE= 125M is invalid (expected bytes per second, e.g. 125M)");
    }
    {
        ScopedEnv e("BSP_UNIT_BYTES", "64k");
        std::string error;
        EXPECT_EQ(config_from_environment(&error).messaging.unit_bytes, 64000u);
        EXPECT_EQ(error, "");
    }
}

TEST(Registry, SlotsReusedLowestFirstIdenticallyEverywhere) {
    Registry r;
    int a = 0, b = 0, c = 0;
    r.push(&a, 4);
    r.push(&b, 4);
    r.commit_pushes({r.pending_ops()});
    r.commit_pops();
    EXPECT_EQ(r.find(&a), 0u);
    EXPECT_EQ(r.find(&b), 1u);
    EXPECT_EQ(r.pop(&a), std::nullopt);
    r.commit_pushes({r.pending_ops()});
    r.commit_pops();
    r.push(&c, 4);
    r.commit_pushes({r.pending_ops()});
    r.commit_pops();
    EXPECT_EQ(r.find(&c), 0u);
    EXPECT_EQ(r.find(&a), std::nullopt);
}

TEST(Repackaging, WithoutCombiningEveryRecordIsItsOwnUnit) {
    UnitPacker packer(1, 4096, false);
    std::vector<std::byte> four(4);
    for (int i = 0; i < 5; ++i)
        packer.add(RecordKind::Put, 0, static_cast<std::uint64_t>(4 * i), four);
    auto units = packer.finish();
    ASSERT_EQ(units.size(), 5u);
    for (const auto &u : units)
        EXPECT_EQ(u.size(), kUnitHeaderBytes + kRecordHeaderBytes + 4);
}
