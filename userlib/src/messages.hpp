// Messages of the BSPlib messaging layer (Documentation/messaging.rst): the barrier
// contributions, the total exchange of counts, and the repackaged data units. All are
// carried as whole transport messages; integers are little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "codec.hpp"
#include "registry.hpp"

namespace bsp::rt {

inline constexpr std::uint32_t kMessagingMagic = 0x4d505342;  // "BSPM"

enum class MsgType : std::uint8_t { Barrier = 1, Counts = 2, Data = 3 };

struct MsgHeader {
    MsgType type = MsgType::Barrier;
    std::uint64_t superstep = 0;
    std::uint32_t aux = 0;  // barrier round / data unit index
};
inline constexpr std::size_t kMsgHeaderBytes = 4 + 1 + 8 + 4;

void write_header(Writer &w, const MsgHeader &h);
MsgHeader read_header(Reader &r);

enum class SyncKind : std::uint8_t { Sync = 0, End = 1 };

// What one process brings to the barrier of a superstep.
struct Contribution {
    SyncKind kind = SyncKind::Sync;
    std::int32_t tagsize_request = -1;  // -1: bsp_set_tagsize not called
    // row[j] != 0: this process communicates with j. Never sent: the barrier adds the rows
    // up into fan-in counters (BarrierMsg::counters), it does not gather them.
    std::vector<std::uint8_t> row;
    RegOps ops;
    // The collectives library (bsc_sync(bsc_flush)) has nothing left to do on this
    // process: the epoch ends at the first barrier in which every process says so.
    bool ready = false;
    // This process has get requests for some process. Never sent as part of a contribution:
    // the barrier ORs it into BarrierSummary::any_gets.
    bool gets = false;
    bool operator==(const Contribution &) const = default;
};

// Whether two contributions agree in what the barrier checks collectively besides the kind:
// the number of pushes, the popped slots and the tag-size request (push sizes may differ).
bool same_calls(const Contribution &a, const Contribution &b);

// What the barrier has combined of a set of processes (Documentation/messaging.rst, "Inside
// bsp_sync"): its size does not depend on p except for the push sizes, which every process
// needs of every other (one entry per process that registered something).
struct BarrierSummary {
    std::uint32_t first = 0;    // lowest pid of the set
    std::uint32_t members = 0;  // processes in the set
    Contribution ref;           // the contribution of `first` (without its row)
    // The lowest pid of the set whose kind differs from ref's, and its contribution.
    std::optional<std::pair<std::uint32_t, Contribution>> kind_diff;
    // The lowest pid of the set whose calls differ from ref's (same_calls), and its
    // contribution.
    std::optional<std::pair<std::uint32_t, Contribution>> calls_diff;
    bool all_ready = true;      // every member is ready
    std::uint32_t senders = 0;  // members with a row bit set (they send to somebody)
    bool any_gets = false;      // some member has get requests (streams wait for counts)
    // (pid, push sizes) of the members with pushes, by ascending pid.
    std::vector<std::pair<std::uint32_t, std::vector<std::int64_t>>> pushes;
    bool operator==(const BarrierSummary &) const = default;
};

// The summary of one process.
BarrierSummary summarize(std::uint32_t pid, const Contribution &c);
// Adds the disjoint set `other` into `into` (the result does not depend on the order).
void merge_summary(BarrierSummary &into, const BarrierSummary &other);

// Barrier message: the summary of what the sender has combined so far and the fan-in
// counters of the slots it hands over to the receiver (messaging.cpp says which).
struct BarrierMsg {
    BarrierSummary summary;
    std::vector<std::uint32_t> counters;
    bool operator==(const BarrierMsg &) const = default;
};
std::vector<std::byte> encode_barrier(std::uint64_t superstep, std::uint32_t round,
                                      const BarrierMsg &m);
// Reads a barrier message (after read_header) of a job of nprocs processes.
BarrierMsg decode_barrier(Reader &r, std::size_t nprocs);
// Bytes of a barrier message without calls to report or registrations (the usual one).
inline constexpr std::size_t barrier_msg_bytes(std::size_t counters) {
    // header; first, members, senders; flags; ref: kind, tag size, 0 pushes, 0 pops;
    // 0 push lists; counters
    return kMsgHeaderBytes + 12 + 1 + (1 + 4 + 4 + 4) + 4 + 4 + 4 * counters;
}

struct GetRequest {
    std::uint32_t id = 0;  // index among the requester's gets to this process
    std::uint32_t slot = 0;
    std::uint64_t offset = 0;
    std::uint64_t nbytes = 0;
};
inline constexpr std::size_t kGetRequestBytes = 4 + 4 + 8 + 8;

// Total exchange of counts: what the sender will send to the receiver in this superstep.
struct Counts {
    std::uint64_t data_bytes = 0;  // payload bytes of puts and sends
    std::uint32_t records = 0;     // number of puts and sends
    std::vector<GetRequest> gets;
};
std::vector<std::byte> encode_counts(std::uint64_t superstep, const Counts &c);
Counts decode_counts(Reader &r);

enum class RecordKind : std::uint8_t { Put = 1, Send = 2, Reply = 3 };

// One record (or one chunk of a record split across units).
struct Record {
    RecordKind kind = RecordKind::Put;
    std::uint32_t a = 0;      // Put: slot; Send: tag bytes; Reply: get id
    std::uint64_t b = 0;      // Put: offset in the area
    std::uint64_t total = 0;  // total bytes of the record
    std::uint64_t chunk_off = 0;
    std::span<const std::byte> chunk;
};
// A record header carries its total length and chunk offset as u32 when the record is
// shorter than 4 GiB (kRecordHeaderBytes), else as u64 with kRecordWideFlag set in the
// kind byte (kWideRecordHeaderBytes): records of BSP_WIDE_TYPES sizes cost nothing to
// the usual small ones.
inline constexpr std::size_t kRecordHeaderBytes = 1 + 4 + 8 + 4 + 4 + 4;
inline constexpr std::size_t kWideRecordHeaderBytes = 1 + 4 + 8 + 8 + 8 + 4;
inline constexpr std::uint8_t kRecordWideFlag = 0x80;
inline constexpr std::size_t record_header_bytes(std::uint64_t total) {
    return total > 0xffffffffu ? kWideRecordHeaderBytes : kRecordHeaderBytes;
}
inline constexpr std::size_t kUnitHeaderBytes = kMsgHeaderBytes + 4;

// The header of one record chunk (record_header_bytes(total) bytes; chunk_off <= total),
// followed in the unit by the chunk's len bytes.
void write_record_header(Writer &w, RecordKind kind, std::uint32_t a, std::uint64_t b,
                         std::uint64_t total, std::uint64_t chunk_off, std::uint32_t len);

// Repackaging: packs the records for one destination into units of at most unit_bytes,
// splitting records across units where they do not fit. A stream holds at most 2^32 - 1
// units (the unit index is a u32): more throws ProtocolError rather than wrapping.
class UnitPacker {
  public:
    // combine == false starts a new unit for every record (the naive layer the probe
    // compares against: every put its own transport message). unit_bytes is at most
    // 2^32 - 1 (chunk lengths are u32).
    UnitPacker(std::uint64_t superstep, std::size_t unit_bytes, bool combine = true);
    void add(RecordKind kind, std::uint32_t a, std::uint64_t b, std::span<const std::byte> data);
    // Completes the units (each learns the number of units of the stream).
    std::vector<std::vector<std::byte>> finish();
    // The records to come carry `bytes` bytes of data in `records` records: units reserve
    // memory for what they will hold, not always unit_bytes (a hint; nothing depends on it).
    void expect(std::uint64_t bytes, std::uint64_t records) {
        left_ = bytes + records * kWideRecordHeaderBytes;
    }

  private:
    void open_unit();
    std::uint64_t superstep_;
    std::size_t unit_bytes_;
    bool combine_;
    std::uint64_t left_ = ~std::uint64_t{0};  // expect()'s bytes still to come
    std::vector<std::vector<std::byte>> units_;
};

// Reads a data unit: header (type Data), the number of units of its stream, records.
struct UnitInfo {
    std::uint64_t superstep = 0;
    std::uint32_t index = 0;
    std::uint32_t count = 0;
};
UnitInfo read_unit_info(Reader &r);  // after read_header
std::optional<Record> next_record(Reader &r);

}  // namespace bsp::rt
