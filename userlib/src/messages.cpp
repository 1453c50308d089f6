#include "messages.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace bsp::rt {

namespace {
// Bit of a contribution's kind byte: Contribution::ready.
constexpr unsigned kReadyBit = 0x80;
}  // namespace

void write_header(Writer &w, const MsgHeader &h) {
    w.put<std::uint32_t>(kMessagingMagic);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(h.type));
    w.put<std::uint64_t>(h.superstep);
    w.put<std::uint32_t>(h.aux);
}

MsgHeader read_header(Reader &r) {
    if (r.get<std::uint32_t>() != kMessagingMagic) {
        throw ProtocolError("messaging-layer message with a bad magic number");
    }
    MsgHeader h;
    auto t = r.get<std::uint8_t>();
    if (t < 1 || t > 3) {
        throw ProtocolError("messaging-layer message of unknown type");
    }
    h.type = static_cast<MsgType>(t);
    h.superstep = r.get<std::uint64_t>();
    h.aux = r.get<std::uint32_t>();
    return h;
}

bool same_calls(const Contribution &a, const Contribution &b) {
    return a.ops.push_sizes.size() == b.ops.push_sizes.size() &&
           a.ops.pop_slots == b.ops.pop_slots && a.tagsize_request == b.tagsize_request;
}

BarrierSummary summarize(std::uint32_t pid, const Contribution &c) {
    BarrierSummary s;
    s.first = pid;
    s.members = 1;
    s.ref = c;
    s.ref.row.clear();
    s.ref.gets = false;
    s.all_ready = c.ready;
    s.any_gets = c.gets;
    s.senders = std::any_of(c.row.begin(), c.row.end(), [](std::uint8_t b) { return b != 0; });
    if (!c.ops.push_sizes.empty()) {
        s.pushes.emplace_back(pid, c.ops.push_sizes);
    }
    return s;
}

namespace {

using Diff = std::optional<std::pair<std::uint32_t, Contribution>>;

// The lower of two candidates (by pid).
void keep_lowest(Diff &d, const Diff &c) {
    if (c && (!d || c->first < d->first)) {
        d = c;
    }
}

}  // namespace

void merge_summary(BarrierSummary &into, const BarrierSummary &other) {
    if (other.members == 0) {
        return;
    }
    if (into.members == 0) {
        into = other;
        return;
    }
    // lo holds the lowest pid of the union: its ref is the union's.
    const bool swap = other.first < into.first;
    const BarrierSummary &lo = swap ? other : into;
    const BarrierSummary &hi = swap ? into : other;
    BarrierSummary u;
    u.first = lo.first;
    u.members = lo.members + hi.members;
    u.ref = lo.ref;
    u.all_ready = lo.all_ready && hi.all_ready;
    u.senders = lo.senders + hi.senders;
    u.any_gets = lo.any_gets || hi.any_gets;
    // The lowest pid of hi that differs from lo's ref: hi's own ref if that differs
    // (it is hi's lowest pid), else the lowest that differs from hi's ref (equality is
    // transitive).
    u.kind_diff = lo.kind_diff;
    keep_lowest(u.kind_diff, hi.ref.kind != lo.ref.kind ? Diff{{hi.first, hi.ref}} : hi.kind_diff);
    u.calls_diff = lo.calls_diff;
    keep_lowest(u.calls_diff,
                !same_calls(hi.ref, lo.ref) ? Diff{{hi.first, hi.ref}} : hi.calls_diff);
    u.pushes.reserve(lo.pushes.size() + hi.pushes.size());
    std::merge(lo.pushes.begin(), lo.pushes.end(), hi.pushes.begin(), hi.pushes.end(),
               std::back_inserter(u.pushes),
               [](const auto &a, const auto &b) { return a.first < b.first; });
    if (std::adjacent_find(u.pushes.begin(), u.pushes.end(), [](const auto &a, const auto &b) {
            return a.first == b.first;
        }) != u.pushes.end()) {
        throw ProtocolError("barrier messages with the registrations of one process twice");
    }
    into = std::move(u);
}

namespace {

constexpr unsigned kAllReadyFlag = 1, kKindDiffFlag = 2, kCallsDiffFlag = 4, kAnyGetsFlag = 8;

void write_contribution(Writer &w, const Contribution &c) {
    w.put<std::uint8_t>(
        static_cast<std::uint8_t>(static_cast<unsigned>(c.kind) | (c.ready ? kReadyBit : 0u)));
    w.put<std::int32_t>(c.tagsize_request);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(c.ops.push_sizes.size()));
    for (auto s : c.ops.push_sizes) {
        w.put<std::int64_t>(s);
    }
    w.put<std::uint32_t>(static_cast<std::uint32_t>(c.ops.pop_slots.size()));
    for (auto s : c.ops.pop_slots) {
        w.put<std::uint32_t>(s);
    }
}

std::vector<std::int64_t> read_push_sizes(Reader &r) {
    const auto npush = r.get<std::uint32_t>();
    if (npush > r.remaining() / 8) {
        throw ProtocolError("barrier contribution with a bad push count");
    }
    std::vector<std::int64_t> sizes;
    sizes.reserve(npush);
    for (std::uint32_t k = 0; k < npush; ++k) {
        const auto size = r.get<std::int64_t>();
        if (size < 0) {
            throw ProtocolError("barrier contribution with a negative registration size");
        }
        sizes.push_back(size);
    }
    return sizes;
}

Contribution read_contribution(Reader &r) {
    Contribution c;
    auto kind = r.get<std::uint8_t>();
    c.ready = (kind & kReadyBit) != 0;
    kind &= static_cast<std::uint8_t>(~kReadyBit);
    if (kind > 1) {
        throw ProtocolError("barrier contribution of unknown kind");
    }
    c.kind = static_cast<SyncKind>(kind);
    c.tagsize_request = r.get<std::int32_t>();
    if (c.tagsize_request < -1) {  // -1: bsp_set_tagsize not called
        throw ProtocolError("barrier contribution with a negative tag size");
    }
    c.ops.push_sizes = read_push_sizes(r);
    const auto npop = r.get<std::uint32_t>();
    if (npop > r.remaining() / 4) {
        throw ProtocolError("barrier contribution with a bad pop count");
    }
    c.ops.pop_slots.reserve(npop);
    for (std::uint32_t k = 0; k < npop; ++k) {
        c.ops.pop_slots.push_back(r.get<std::uint32_t>());
    }
    return c;
}

}  // namespace

std::vector<std::byte> encode_barrier(std::uint64_t superstep, std::uint32_t round,
                                      const BarrierMsg &m) {
    const BarrierSummary &s = m.summary;
    std::vector<std::byte> out;
    out.reserve(barrier_msg_bytes(m.counters.size()));  // the usual size: one allocation
    Writer w(out);
    write_header(w, {MsgType::Barrier, superstep, round});
    w.put<std::uint32_t>(s.first);
    w.put<std::uint32_t>(s.members);
    w.put<std::uint32_t>(s.senders);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(
        (s.all_ready ? kAllReadyFlag : 0u) | (s.kind_diff ? kKindDiffFlag : 0u) |
        (s.calls_diff ? kCallsDiffFlag : 0u) | (s.any_gets ? kAnyGetsFlag : 0u)));
    write_contribution(w, s.ref);
    for (const Diff *d : {&s.kind_diff, &s.calls_diff}) {
        if (*d) {
            w.put<std::uint32_t>((*d)->first);
            write_contribution(w, (*d)->second);
        }
    }
    w.put<std::uint32_t>(static_cast<std::uint32_t>(s.pushes.size()));
    for (const auto &[pid, sizes] : s.pushes) {
        w.put<std::uint32_t>(pid);
        w.put<std::uint32_t>(static_cast<std::uint32_t>(sizes.size()));
        for (auto v : sizes) {
            w.put<std::int64_t>(v);
        }
    }
    w.put<std::uint32_t>(static_cast<std::uint32_t>(m.counters.size()));
    for (auto c : m.counters) {
        w.put<std::uint32_t>(c);
    }
    return out;
}

BarrierMsg decode_barrier(Reader &r, std::size_t nprocs) {
    BarrierMsg m;
    BarrierSummary &s = m.summary;
    s.first = r.get<std::uint32_t>();
    s.members = r.get<std::uint32_t>();
    s.senders = r.get<std::uint32_t>();
    if (s.first >= nprocs || s.members == 0 || s.members > nprocs - s.first ||
        s.senders > s.members) {
        throw ProtocolError("barrier message with an impossible set of processes");
    }
    const auto flags = r.get<std::uint8_t>();
    if (flags & ~(kAllReadyFlag | kKindDiffFlag | kCallsDiffFlag | kAnyGetsFlag)) {
        throw ProtocolError("barrier message with unknown flags");
    }
    s.all_ready = (flags & kAllReadyFlag) != 0;
    s.any_gets = (flags & kAnyGetsFlag) != 0;
    s.ref = read_contribution(r);
    for (auto [d, bit] :
         {std::pair{&s.kind_diff, kKindDiffFlag}, {&s.calls_diff, kCallsDiffFlag}}) {
        if (flags & bit) {
            const auto pid = r.get<std::uint32_t>();
            if (pid <= s.first || pid >= nprocs) {
                throw ProtocolError("barrier message naming an impossible process");
            }
            *d = std::pair{pid, read_contribution(r)};
        }
    }
    if (s.kind_diff && s.kind_diff->second.kind == s.ref.kind) {
        throw ProtocolError("barrier message naming a process that does not differ");
    }
    if (s.calls_diff && same_calls(s.calls_diff->second, s.ref)) {
        throw ProtocolError("barrier message naming a process that does not differ");
    }
    const auto nlists = r.get<std::uint32_t>();
    if (nlists > s.members || nlists > r.remaining() / 8) {
        throw ProtocolError("barrier message with a bad number of registrations");
    }
    s.pushes.reserve(nlists);
    for (std::uint32_t i = 0; i < nlists; ++i) {
        const auto pid = r.get<std::uint32_t>();
        if (pid < s.first || pid >= nprocs || (!s.pushes.empty() && pid <= s.pushes.back().first)) {
            throw ProtocolError("barrier message with registrations of an impossible process");
        }
        auto sizes = read_push_sizes(r);
        if (sizes.empty()) {
            throw ProtocolError("barrier message with an empty list of registrations");
        }
        s.pushes.emplace_back(pid, std::move(sizes));
    }
    const auto ncounters = r.get<std::uint32_t>();
    if (ncounters > nprocs || ncounters > r.remaining() / 4) {
        throw ProtocolError("barrier message with a bad number of counters");
    }
    m.counters.reserve(ncounters);
    for (std::uint32_t i = 0; i < ncounters; ++i) {
        const auto c = r.get<std::uint32_t>();
        if (c >= nprocs) {
            throw ProtocolError("barrier message with an impossible fan-in");
        }
        m.counters.push_back(c);
    }
    if (!r.done()) {
        throw ProtocolError("barrier message with trailing bytes");
    }
    return m;
}

std::vector<std::byte> encode_counts(std::uint64_t superstep, const Counts &c) {
    std::vector<std::byte> out;
    Writer w(out);
    write_header(w, {MsgType::Counts, superstep, 0});
    w.put<std::uint64_t>(c.data_bytes);
    w.put<std::uint32_t>(c.records);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(c.gets.size()));
    for (const auto &g : c.gets) {
        w.put<std::uint32_t>(g.id);
        w.put<std::uint32_t>(g.slot);
        w.put<std::uint64_t>(g.offset);
        w.put<std::uint64_t>(g.nbytes);
    }
    return out;
}

Counts decode_counts(Reader &r) {
    Counts c;
    c.data_bytes = r.get<std::uint64_t>();
    c.records = r.get<std::uint32_t>();
    auto n = r.get<std::uint32_t>();
    if (n > r.remaining() / kGetRequestBytes) {
        throw ProtocolError("counts message with a bad get count");
    }
    c.gets.resize(n);
    for (auto &g : c.gets) {
        g.id = r.get<std::uint32_t>();
        g.slot = r.get<std::uint32_t>();
        g.offset = r.get<std::uint64_t>();
        g.nbytes = r.get<std::uint64_t>();
    }
    return c;
}

UnitPacker::UnitPacker(std::uint64_t superstep, std::size_t unit_bytes, bool combine)
    : superstep_(superstep), unit_bytes_(unit_bytes), combine_(combine) {
    if (unit_bytes_ < kUnitHeaderBytes + kWideRecordHeaderBytes + 1) {
        throw std::invalid_argument("unit size too small for the messaging layer");
    }
    if (unit_bytes_ > 0xffffffffu) {
        throw std::invalid_argument("unit size too large for the messaging layer");
    }
}

void UnitPacker::open_unit() {
    if (units_.size() >= 0xffffffffu) {
        throw ProtocolError("more than 4294967295 data units to one process in one superstep");
    }
    units_.emplace_back();
    units_.back().reserve(
        static_cast<std::size_t>(std::min<std::uint64_t>(unit_bytes_, kUnitHeaderBytes + left_)));
    Writer w(units_.back());
    write_header(w, {MsgType::Data, superstep_, static_cast<std::uint32_t>(units_.size() - 1)});
    w.put<std::uint32_t>(0);  // number of units, patched by finish()
}

void write_record_header(Writer &w, RecordKind kind, std::uint32_t a, std::uint64_t b,
                         std::uint64_t total, std::uint64_t chunk_off, std::uint32_t len) {
    const bool wide = record_header_bytes(total) == kWideRecordHeaderBytes;
    w.put<std::uint8_t>(
        static_cast<std::uint8_t>(static_cast<std::uint8_t>(kind) | (wide ? kRecordWideFlag : 0)));
    w.put<std::uint32_t>(a);
    w.put<std::uint64_t>(b);
    if (wide) {
        w.put<std::uint64_t>(total);
        w.put<std::uint64_t>(chunk_off);
    } else {
        w.put<std::uint32_t>(static_cast<std::uint32_t>(total));
        w.put<std::uint32_t>(static_cast<std::uint32_t>(chunk_off));
    }
    w.put<std::uint32_t>(len);
}

void UnitPacker::add(RecordKind kind, std::uint32_t a, std::uint64_t b,
                     std::span<const std::byte> data) {
    std::size_t off = 0;
    bool fresh = !combine_;
    const std::size_t header = record_header_bytes(data.size());
    do {
        if (fresh || units_.empty() || units_.back().size() + header + 1 > unit_bytes_) {
            open_unit();
        }
        fresh = false;
        auto &u = units_.back();
        const std::size_t room = unit_bytes_ - u.size() - header;
        const std::size_t len = std::min(room, data.size() - off);
        Writer w(u);
        // len < unit_bytes_ < 2^32
        write_record_header(w, kind, a, b, data.size(), off, static_cast<std::uint32_t>(len));
        w.bytes(data.subspan(off, len));
        off += len;
        left_ -= std::min<std::uint64_t>(left_, header + len);
    } while (off < data.size());
}

std::vector<std::vector<std::byte>> UnitPacker::finish() {
    if (units_.empty()) {
        open_unit();  // a stream always has at least one unit
    }
    for (auto &u : units_) {
        Writer w(u);
        w.patch_u32(kMsgHeaderBytes, static_cast<std::uint32_t>(units_.size()));
    }
    return std::move(units_);
}

UnitInfo read_unit_info(Reader &r) {
    UnitInfo i;
    i.count = r.get<std::uint32_t>();
    if (i.count == 0) {
        throw ProtocolError("data unit of an empty stream");
    }
    return i;
}

std::optional<Record> next_record(Reader &r) {
    if (r.done()) {
        return std::nullopt;
    }
    Record rec;
    const auto k = r.get<std::uint8_t>();
    const bool wide = (k & kRecordWideFlag) != 0;
    const auto kind = static_cast<std::uint8_t>(k & ~kRecordWideFlag);
    if (kind < 1 || kind > 3) {
        throw ProtocolError("data record of unknown kind");
    }
    rec.kind = static_cast<RecordKind>(kind);
    rec.a = r.get<std::uint32_t>();
    rec.b = r.get<std::uint64_t>();
    if (wide) {
        rec.total = r.get<std::uint64_t>();
        rec.chunk_off = r.get<std::uint64_t>();
        if (rec.total <= 0xffffffffu) {
            throw ProtocolError("data record with a needlessly wide header");
        }
    } else {
        rec.total = r.get<std::uint32_t>();
        rec.chunk_off = r.get<std::uint32_t>();
    }
    const auto len = r.get<std::uint32_t>();
    if (rec.chunk_off > rec.total || len > rec.total - rec.chunk_off) {
        throw ProtocolError("data record chunk outside its record");
    }
    rec.chunk = r.bytes(len);
    return rec;
}

}  // namespace bsp::rt
