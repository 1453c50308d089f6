#include "messages.hpp"

#include <algorithm>
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

std::vector<std::byte> encode_barrier(std::uint64_t superstep, std::uint32_t round,
                                      const std::vector<std::optional<Contribution>> &known) {
    std::vector<std::byte> out;
    Writer w(out);
    write_header(w, {MsgType::Barrier, superstep, round});
    std::uint32_t n = 0;
    for (const auto &c : known) {
        n += c ? 1 : 0;
    }
    w.put<std::uint32_t>(n);
    for (std::size_t pid = 0; pid < known.size(); ++pid) {
        if (!known[pid]) {
            continue;
        }
        const Contribution &c = *known[pid];
        w.put<std::uint32_t>(static_cast<std::uint32_t>(pid));
        w.put<std::uint8_t>(
            static_cast<std::uint8_t>(static_cast<unsigned>(c.kind) | (c.ready ? kReadyBit : 0u)));
        w.put<std::int32_t>(c.tagsize_request);
        // The row as a bit vector.
        for (std::size_t j = 0; j < known.size(); j += 8) {
            std::uint8_t bits = 0;
            for (std::size_t k = 0; k < 8 && j + k < known.size(); ++k) {
                if (c.row[j + k]) {
                    bits |= static_cast<std::uint8_t>(1u << k);
                }
            }
            w.put<std::uint8_t>(bits);
        }
        w.put<std::uint32_t>(static_cast<std::uint32_t>(c.ops.push_sizes.size()));
        for (auto s : c.ops.push_sizes) {
            w.put<std::int64_t>(s);
        }
        w.put<std::uint32_t>(static_cast<std::uint32_t>(c.ops.pop_slots.size()));
        for (auto s : c.ops.pop_slots) {
            w.put<std::uint32_t>(s);
        }
    }
    return out;
}

void decode_barrier(Reader &r, std::vector<std::optional<Contribution>> &known) {
    const std::size_t nprocs = known.size();
    const std::uint32_t n = r.get<std::uint32_t>();
    if (n > nprocs) {
        throw ProtocolError("barrier message with too many contributions");
    }
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t pid = r.get<std::uint32_t>();
        if (pid >= nprocs) {
            throw ProtocolError("barrier contribution of an unknown process");
        }
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
        c.row.assign(nprocs, 0);
        for (std::size_t j = 0; j < nprocs; j += 8) {
            auto bits = r.get<std::uint8_t>();
            for (std::size_t k = 0; k < 8 && j + k < nprocs; ++k) {
                c.row[j + k] = (bits >> k) & 1u;
            }
        }
        auto npush = r.get<std::uint32_t>();
        if (npush > r.remaining() / 8) {
            throw ProtocolError("barrier contribution with a bad push count");
        }
        for (std::uint32_t k = 0; k < npush; ++k) {
            const auto size = r.get<std::int64_t>();
            if (size < 0) {
                throw ProtocolError("barrier contribution with a negative registration size");
            }
            c.ops.push_sizes.push_back(size);
        }
        auto npop = r.get<std::uint32_t>();
        if (npop > r.remaining() / 4) {
            throw ProtocolError("barrier contribution with a bad pop count");
        }
        for (std::uint32_t k = 0; k < npop; ++k) {
            c.ops.pop_slots.push_back(r.get<std::uint32_t>());
        }
        if (known[pid] && !(*known[pid] == c)) {
            throw ProtocolError("two different barrier contributions of one process");
        }
        known[pid] = std::move(c);
    }
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
    units_.back().reserve(unit_bytes_);
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
