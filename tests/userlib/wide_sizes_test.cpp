// 64-bit sizes in the messaging layer's encodings (BSP_WIDE_TYPES, Documentation/
// messaging.rst): registration sizes in barrier messages, get sizes in counts messages,
// record headers of records of 4 GiB and more; and the int API's refusal to cut a result
// to 32 bits (c_api.hpp). The multi-process side is in programs/wide_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "c_api.hpp"
#include "codec.hpp"
#include "messages.hpp"
#include "misuse.hpp"

using namespace bsp::rt;

namespace {

constexpr std::uint64_t k4G = std::uint64_t{1} << 32;

// A data unit with one record written field by field: kind byte, a, b, then total and
// chunk offset as u64 (wide) or u32, then the chunk length and the chunk.
std::vector<std::byte> unit_with_record(std::uint8_t kind, bool wide, std::uint64_t total,
                                        std::uint64_t chunk_off, std::uint32_t len) {
    std::vector<std::byte> out;
    Writer w(out);
    write_header(w, {MsgType::Data, 5, 0});
    w.put<std::uint32_t>(1);
    w.put<std::uint8_t>(kind);
    w.put<std::uint32_t>(7);
    w.put<std::uint64_t>(3 * k4G + 1);
    if (wide) {
        w.put<std::uint64_t>(total);
        w.put<std::uint64_t>(chunk_off);
    } else {
        w.put<std::uint32_t>(static_cast<std::uint32_t>(total));
        w.put<std::uint32_t>(static_cast<std::uint32_t>(chunk_off));
    }
    w.put<std::uint32_t>(len);
    for (std::uint32_t i = 0; i < len; ++i)
        w.put<std::uint8_t>(static_cast<std::uint8_t>(i + 1));
    return out;
}

std::optional<Record> first_record(const std::vector<std::byte> &unit) {
    Reader r(unit);
    read_header(r);
    read_unit_info(r);
    auto rec = next_record(r);
    EXPECT_TRUE(r.done());
    return rec;
}

}  // namespace

TEST(WideSizes, BarrierCarriesRegistrationSizesAbove4GiB) {
    Contribution c;
    c.row = {0, 1};
    c.ops.push_sizes = {5 * static_cast<std::int64_t>(k4G) + 3, 0, 0x7fffffffffffffff};
    auto msg = encode_barrier(4, 1, BarrierMsg{summarize(1, c), {0}});
    Reader r(msg);
    read_header(r);
    const BarrierMsg got = decode_barrier(r, 2);
    EXPECT_EQ(got.summary.ref.ops.push_sizes, c.ops.push_sizes);
    ASSERT_EQ(got.summary.pushes.size(), 1u);
    EXPECT_EQ(got.summary.pushes[0].first, 1u);
    EXPECT_EQ(got.summary.pushes[0].second, c.ops.push_sizes);
}

TEST(WideSizes, BarrierWithANegativeRegistrationSizeIsRejected) {
    Contribution c;
    c.row = {0, 0};
    c.ops.push_sizes = {-1};
    auto msg = encode_barrier(4, 1, BarrierMsg{summarize(0, c), {0}});
    Reader r(msg);
    read_header(r);
    try {
        decode_barrier(r, 2);
        FAIL() << "accepted a negative size";
    } catch (const ProtocolError &e) {
        EXPECT_STREQ(e.what(), "barrier contribution with a negative registration size");
    }
}

TEST(WideSizes, CountsCarryGetSizesAbove4GiB) {
    Counts c;
    c.data_bytes = 6 * k4G;
    c.records = 2;
    c.gets = {{0, 1, 2 * k4G + 8, k4G + 5}, {1, 0, 0, 0xffffffffffffffff}};
    auto msg = encode_counts(3, c);
    EXPECT_EQ(msg.size(), kMsgHeaderBytes + 8 + 4 + 4 + 2 * kGetRequestBytes);
    Reader r(msg);
    read_header(r);
    Counts got = decode_counts(r);
    EXPECT_TRUE(r.done());
    EXPECT_EQ(got.data_bytes, c.data_bytes);
    ASSERT_EQ(got.gets.size(), 2u);
    EXPECT_EQ(got.gets[0].offset, 2 * k4G + 8);
    EXPECT_EQ(got.gets[0].nbytes, k4G + 5);
    EXPECT_EQ(got.gets[1].nbytes, 0xffffffffffffffff);
}

TEST(WideSizes, RecordHeaderIsWideOnlyFrom4GiB) {
    EXPECT_EQ(record_header_bytes(0), kRecordHeaderBytes);
    EXPECT_EQ(record_header_bytes(k4G - 1), kRecordHeaderBytes);
    EXPECT_EQ(record_header_bytes(k4G), kWideRecordHeaderBytes);
    EXPECT_EQ(kRecordHeaderBytes, 25u);
    EXPECT_EQ(kWideRecordHeaderBytes, 33u);
}

TEST(WideSizes, WideRecordChunkDecodes) {
    // The chunk of a put of 4 GiB + 10 bytes that starts 4 GiB into the record.
    auto unit = unit_with_record(static_cast<std::uint8_t>(RecordKind::Put) | kRecordWideFlag, true,
                                 k4G + 10, k4G, 10);
    auto rec = first_record(unit);
    ASSERT_TRUE(rec.has_value());
    EXPECT_EQ(rec->kind, RecordKind::Put);
    EXPECT_EQ(rec->a, 7u);
    EXPECT_EQ(rec->b, 3 * k4G + 1);
    EXPECT_EQ(rec->total, k4G + 10);
    EXPECT_EQ(rec->chunk_off, k4G);
    ASSERT_EQ(rec->chunk.size(), 10u);
    EXPECT_EQ(rec->chunk[9], std::byte{10});
}

TEST(WideSizes, RecordHeadersRoundTrip) {
    // What UnitPacker writes for a chunk of a record of 4 GiB + 10 bytes, and of one of
    // 4 GiB - 1 bytes (narrow), decoded back field by field.
    for (const std::uint64_t total : {k4G + 10, k4G - 1}) {
        std::vector<std::byte> unit;
        Writer w(unit);
        write_header(w, {MsgType::Data, 5, 0});
        w.put<std::uint32_t>(1);
        write_record_header(w, RecordKind::Reply, 9, 2 * k4G, total, total - 7, 7);
        EXPECT_EQ(unit.size(), kUnitHeaderBytes + record_header_bytes(total));
        for (int i = 0; i < 7; ++i)
            w.put<std::uint8_t>(static_cast<std::uint8_t>(0xa0 + i));
        auto rec = first_record(unit);
        ASSERT_TRUE(rec.has_value());
        EXPECT_EQ(rec->kind, RecordKind::Reply);
        EXPECT_EQ(rec->a, 9u);
        EXPECT_EQ(rec->b, 2 * k4G);
        EXPECT_EQ(rec->total, total);
        EXPECT_EQ(rec->chunk_off, total - 7);
        ASSERT_EQ(rec->chunk.size(), 7u);
        EXPECT_EQ(rec->chunk[6], std::byte{0xa6});
    }
}

TEST(WideSizes, NarrowRecordChunkDecodesAsBefore) {
    auto unit = unit_with_record(static_cast<std::uint8_t>(RecordKind::Send), false, 0xffffffff,
                                 0xfffffff0, 15);
    auto rec = first_record(unit);
    ASSERT_TRUE(rec.has_value());
    EXPECT_EQ(rec->kind, RecordKind::Send);
    EXPECT_EQ(rec->total, 0xffffffffu);
    EXPECT_EQ(rec->chunk_off, 0xfffffff0u);
    EXPECT_EQ(unit.size(), kUnitHeaderBytes + kRecordHeaderBytes + 15);
}

TEST(WideSizes, MalformedWideRecordsAreRejected) {
    struct Case {
        std::uint64_t total, chunk_off;
        std::uint32_t len;
        const char *error;
    };
    const std::uint8_t put = static_cast<std::uint8_t>(RecordKind::Put) | kRecordWideFlag;
    for (const Case &c : {
             Case{100, 0, 10, "data record with a needlessly wide header"},
             Case{k4G + 10, k4G + 1, 10, "data record chunk outside its record"},
             Case{k4G + 10, 2 * k4G, 0, "data record chunk outside its record"},
             // offset + length wraps around 2^64: still outside, not inside
             Case{k4G + 10, 0xfffffffffffffffb, 10, "data record chunk outside its record"},
         }) {
        auto unit = unit_with_record(put, true, c.total, c.chunk_off, c.len);
        try {
            first_record(unit);
            ADD_FAILURE() << "accepted total " << c.total << " chunk_off " << c.chunk_off;
        } catch (const ProtocolError &e) {
            EXPECT_STREQ(e.what(), c.error);
        }
    }
    auto unknown = unit_with_record(0x80 | 4, true, k4G, 0, 0);
    EXPECT_THROW(first_record(unknown), ProtocolError);
}

TEST(WideSizes, IntResultsAreNeverCut) {
    using bsp::capi::reported;
    EXPECT_EQ(reported<int>("bsp_qsize", 1, 2147483647, "the queue holds", "payload bytes"),
              2147483647);
    EXPECT_EQ(reported<std::int64_t>("bsp_qsize", 1, 3000000000, "the queue holds", "messages"),
              3000000000);
    try {
        reported<int>("bsp_get_tag", 2, 2147483648, "the first message has", "payload bytes");
        FAIL() << "cut to an int";
    } catch (const Misuse &m) {
        EXPECT_STREQ(m.what(),
                     "BSPlib error: bsp_get_tag on process 2: the first message has 2147483648 "
                     "payload bytes, more than an int can report (compile the program with "
                     "-DBSP_WIDE_TYPES for 64-bit sizes)");
    }
}
