// libFuzzer target of the messaging layer's wire decoding (userlib/src/messages.cpp,
// codec.hpp) and of how the runtime applies what it decodes (messaging.cpp, runtime.cpp).
// The first byte picks one of five modes:
//   0  raw bytes through read_header and the decoder of the type it names: a malformed
//      message must end in ProtocolError, never in undefined behaviour, an out-of-bounds
//      access, an allocation sized by an unchecked count, or any other exception;
//      whatever decodes must satisfy the documented bounds (chunk inside its record,
//      ranges that do not wrap, non-negative registration sizes);
//   1  round trip of barrier messages: encode_barrier(x) decodes to x, and merging
//      summaries (merge_summary) does not depend on the order of the sets merged;
//   2  round trip of counts messages;
//   3  round trip of data units: UnitPacker's units respect the unit size, carry their
//      index and count, and their records reassemble to exactly what was added;
//   4  a whole BSPlib process (Runtime, pid chosen by the input, 2 to 4 processes) whose
//      peers are the input: barrier, counts and data messages built from fuzzer-chosen
//      fields (so they get past the header checks) or raw bytes, optionally with a byte
//      flipped. The process registers an area, puts, gets and sends, synchronises three
//      times and drains its BSMP queue into buffers of exactly the announced sizes: a
//      peer's message must never make it write or read outside them.
//
// Bounded run (tests/check.sh fuzz): build/fuzz/fuzz/messaging_fuzz -max_total_time=30
//   -max_len=4096 <corpus dir> build/fuzz/seeds/messaging_fuzz (tests/fuzz/make_corpus.sh)
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "messages.hpp"
#include "misuse.hpp"
#include "runtime.hpp"
#include "transport.hpp"

namespace {

using namespace bsp::rt;

[[noreturn]] void fail(const char *why) {
    std::fprintf(stderr, "messaging_fuzz: %s\n", why);
    std::abort();
}

std::vector<std::byte> take_bytes(FuzzedDataProvider &in, std::size_t max) {
    auto v = in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(0, max));
    std::vector<std::byte> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        out[i] = static_cast<std::byte>(v[i]);
    return out;
}

// A 64-bit value that is small, near a power of two, or near the top of the range.
std::uint64_t edgy_u64(FuzzedDataProvider &in) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            return in.ConsumeIntegralInRange<std::uint64_t>(0, 64);
        case 1:
            return std::numeric_limits<std::uint64_t>::max() -
                   in.ConsumeIntegralInRange<std::uint64_t>(0, 64);
        case 2:
            return (std::uint64_t{1} << in.ConsumeIntegralInRange<int>(0, 63)) +
                   in.ConsumeIntegralInRange<std::uint64_t>(0, 3) - 1;
        default:
            return in.ConsumeIntegral<std::uint64_t>();
    }
}

std::uint32_t edgy_u32(FuzzedDataProvider &in) {
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
        case 0:
            return in.ConsumeIntegralInRange<std::uint32_t>(0, 64);
        case 1:
            return std::numeric_limits<std::uint32_t>::max() -
                   in.ConsumeIntegralInRange<std::uint32_t>(0, 64);
        default:
            return in.ConsumeIntegral<std::uint32_t>();
    }
}

// ---- mode 0: raw bytes -----------------------------------------------------------------

void check_decoded(std::span<const std::byte> bytes, std::size_t nprocs) {
    Reader r(bytes);
    const MsgHeader h = read_header(r);
    switch (h.type) {
        case MsgType::Barrier: {
            const BarrierMsg m = decode_barrier(r, nprocs);
            const BarrierSummary &s = m.summary;
            if (s.first >= nprocs || s.members == 0 || s.first + s.members > nprocs ||
                s.senders > s.members)
                fail("barrier message with an impossible set accepted");
            if (m.counters.size() > nprocs)
                fail("barrier message with more counters than processes accepted");
            for (auto c : m.counters)
                if (c >= nprocs)
                    fail("barrier message with an impossible fan-in accepted");
            std::vector<const Contribution *> cs{&s.ref};
            for (const auto *d : {&s.kind_diff, &s.calls_diff})
                if (*d) {
                    if ((*d)->first <= s.first || (*d)->first >= nprocs)
                        fail("barrier message naming an impossible process accepted");
                    cs.push_back(&(*d)->second);
                }
            for (std::size_t i = 0; i < s.pushes.size(); ++i) {
                if (s.pushes[i].first >= nprocs || s.pushes[i].second.empty() ||
                    (i > 0 && s.pushes[i].first <= s.pushes[i - 1].first))
                    fail("barrier message with bad registration lists accepted");
                for (auto v : s.pushes[i].second)
                    if (v < 0)
                        fail("barrier message with a negative registration size accepted");
            }
            for (const Contribution *c : cs) {
                if (c->tagsize_request < -1)
                    fail("barrier contribution with a negative tag size accepted");
                for (auto v : c->ops.push_sizes)
                    if (v < 0)
                        fail("barrier contribution with a negative registration size accepted");
            }
            break;
        }
        case MsgType::Counts: {
            decode_counts(r);
            break;
        }
        case MsgType::Data: {
            const UnitInfo info = read_unit_info(r);
            if (info.count == 0)
                fail("data unit of an empty stream accepted");
            while (auto rec = next_record(r)) {
                if (std::uint64_t{rec->chunk_off} + rec->chunk.size() > rec->total)
                    fail("record chunk outside its record accepted");
                if (rec->chunk.data() < bytes.data() ||
                    rec->chunk.data() + rec->chunk.size() > bytes.data() + bytes.size())
                    fail("record chunk outside the unit");
            }
            break;
        }
    }
}

void raw_mode(FuzzedDataProvider &in) {
    const std::size_t nprocs = in.ConsumeIntegralInRange<std::size_t>(1, 70);
    auto bytes = in.ConsumeRemainingBytes<std::uint8_t>();
    try {
        check_decoded(std::as_bytes(std::span(bytes)), nprocs);
    } catch (const ProtocolError &) {
    }
}

// ---- modes 1-3: round trips ------------------------------------------------------------

Contribution make_contribution(FuzzedDataProvider &in, std::size_t nprocs) {
    Contribution c;
    c.kind = in.ConsumeBool() ? SyncKind::End : SyncKind::Sync;
    c.tagsize_request = in.ConsumeBool() ? -1 : in.ConsumeIntegralInRange<std::int32_t>(0, 1 << 30);
    c.row.resize(nprocs);
    for (auto &b : c.row)
        b = in.ConsumeBool() ? 1 : 0;
    const auto npush = in.ConsumeIntegralInRange<std::size_t>(0, 6);
    using Size = decltype(c.ops.push_sizes)::value_type;
    for (std::size_t k = 0; k < npush; ++k)
        c.ops.push_sizes.push_back(
            in.ConsumeIntegralInRange<Size>(0, std::numeric_limits<Size>::max()));
    const auto npop = in.ConsumeIntegralInRange<std::size_t>(0, 6);
    for (std::size_t k = 0; k < npop; ++k)
        c.ops.pop_slots.push_back(edgy_u32(in));
    return c;
}

// A set's summary built by merging its members one by one, in the order given.
BarrierSummary summary_of(const std::vector<std::pair<std::uint32_t, Contribution>> &members,
                          const std::vector<std::size_t> &order) {
    BarrierSummary s;
    for (std::size_t k : order)
        merge_summary(s, summarize(members[k].first, members[k].second));
    return s;
}

void barrier_round_trip(FuzzedDataProvider &in) {
    const std::size_t nprocs = in.ConsumeIntegralInRange<std::size_t>(1, 70);
    // A set of distinct processes (at least one) and their contributions; contributions are
    // often copies of an earlier one, so that most sets agree in part.
    std::vector<std::pair<std::uint32_t, Contribution>> members;
    for (std::size_t pid = 0; pid < nprocs; ++pid) {
        if (!in.ConsumeBool() && !(members.empty() && pid + 1 == nprocs))
            continue;
        Contribution c =
            !members.empty() && in.ConsumeBool()
                ? members[in.ConsumeIntegralInRange<std::size_t>(0, members.size() - 1)].second
                : make_contribution(in, nprocs);
        if (in.ConsumeBool())
            c.ready = !c.ready;
        if (in.ConsumeBool())
            c.row.assign(nprocs, 0);
        members.emplace_back(static_cast<std::uint32_t>(pid), std::move(c));
    }
    std::vector<std::size_t> order(members.size());
    for (std::size_t k = 0; k < order.size(); ++k)
        order[k] = k;
    BarrierMsg m;
    m.summary = summary_of(members, order);
    // The same set merged in another order, and as two halves merged either way round.
    for (std::size_t k = order.size(); k > 1; --k)
        std::swap(order[k - 1], order[in.ConsumeIntegralInRange<std::size_t>(0, k - 1)]);
    if (!(summary_of(members, order) == m.summary))
        fail("merging summaries depends on the order");
    const std::size_t cut = in.ConsumeIntegralInRange<std::size_t>(0, order.size());
    BarrierSummary a = summary_of(members, {order.begin(), order.begin() + cut});
    BarrierSummary b = summary_of(members, {order.begin() + cut, order.end()});
    BarrierSummary ab = a, ba = b;
    merge_summary(ab, b);
    merge_summary(ba, a);
    if (!(ab == m.summary) || !(ba == m.summary))
        fail("merging two halves of a set differs from merging its members");
    // What the summary must say: checked against the members directly.
    const BarrierSummary &s = m.summary;
    if (s.first != members.front().first || s.members != members.size())
        fail("summary of the wrong set");
    std::optional<std::uint32_t> kind_diff, calls_diff;
    std::uint32_t senders = 0;
    bool ready = true;
    for (const auto &[pid, c] : members) {
        if (!kind_diff && c.kind != members.front().second.kind)
            kind_diff = pid;
        if (!calls_diff && !same_calls(c, members.front().second))
            calls_diff = pid;
        senders += std::any_of(c.row.begin(), c.row.end(), [](auto x) { return x != 0; });
        ready = ready && c.ready;
    }
    if ((s.kind_diff ? std::optional(s.kind_diff->first) : std::nullopt) != kind_diff ||
        (s.calls_diff ? std::optional(s.calls_diff->first) : std::nullopt) != calls_diff ||
        s.senders != senders || s.all_ready != ready)
        fail("summary differs from its members");
    const auto ncounters = in.ConsumeIntegralInRange<std::size_t>(0, nprocs);
    for (std::size_t k = 0; k < ncounters; ++k)
        m.counters.push_back(
            in.ConsumeIntegralInRange<std::uint32_t>(0, static_cast<std::uint32_t>(nprocs - 1)));
    const std::uint64_t superstep = edgy_u64(in);
    const std::uint32_t round = edgy_u32(in);
    const auto msg = encode_barrier(superstep, round, m);
    Reader r(msg);
    const MsgHeader h = read_header(r);
    if (h.type != MsgType::Barrier || h.superstep != superstep || h.aux != round)
        fail("barrier header did not round-trip");
    const BarrierMsg got = decode_barrier(r, nprocs);
    if (!r.done() || !(got == m))
        fail("barrier message did not round-trip");
}

void counts_round_trip(FuzzedDataProvider &in) {
    Counts c;
    c.data_bytes = edgy_u64(in);
    c.records = edgy_u32(in);
    const auto n = in.ConsumeIntegralInRange<std::size_t>(0, 40);
    for (std::size_t k = 0; k < n; ++k) {
        GetRequest g;
        g.id = edgy_u32(in);
        g.slot = edgy_u32(in);
        g.nbytes = static_cast<decltype(g.nbytes)>(in.ConsumeBool() ? edgy_u64(in) : edgy_u32(in));
        g.offset = in.ConsumeIntegralInRange<std::uint64_t>(
            0, std::numeric_limits<std::uint64_t>::max() - g.nbytes);
        c.gets.push_back(g);
    }
    const std::uint64_t superstep = edgy_u64(in);
    const auto msg = encode_counts(superstep, c);
    Reader r(msg);
    const MsgHeader h = read_header(r);
    if (h.type != MsgType::Counts || h.superstep != superstep)
        fail("counts header did not round-trip");
    const Counts got = decode_counts(r);
    if (!r.done() || got.data_bytes != c.data_bytes || got.records != c.records ||
        got.gets.size() != c.gets.size())
        fail("counts did not round-trip");
    for (std::size_t k = 0; k < n; ++k)
        if (got.gets[k].id != c.gets[k].id || got.gets[k].slot != c.gets[k].slot ||
            got.gets[k].offset != c.gets[k].offset || got.gets[k].nbytes != c.gets[k].nbytes)
            fail("get request did not round-trip");
}

struct Added {
    RecordKind kind;
    std::uint32_t a;
    std::uint64_t b;
    std::vector<std::byte> data;
};

void units_round_trip(FuzzedDataProvider &in) {
    const std::uint64_t superstep = edgy_u64(in);
    const std::size_t unit_bytes = in.ConsumeIntegralInRange<std::size_t>(64, 600);
    const bool combine = in.ConsumeBool();
    UnitPacker packer(superstep, unit_bytes, combine);
    std::vector<Added> added;
    const auto n = in.ConsumeIntegralInRange<std::size_t>(0, 24);
    for (std::size_t k = 0; k < n; ++k) {
        Added x;
        x.kind = static_cast<RecordKind>(in.ConsumeIntegralInRange<int>(1, 3));
        x.a = edgy_u32(in);
        x.data = take_bytes(in, 700);
        x.b = in.ConsumeIntegralInRange<std::uint64_t>(
            0, std::numeric_limits<std::uint64_t>::max() - x.data.size());
        packer.add(x.kind, x.a, x.b, x.data);
        added.push_back(std::move(x));
    }
    const auto units = packer.finish();
    if (units.empty())
        fail("a stream without units");
    std::vector<Added> got;
    for (std::size_t u = 0; u < units.size(); ++u) {
        if (units[u].size() > unit_bytes)
            fail("unit larger than the unit size");
        Reader r(units[u]);
        const MsgHeader h = read_header(r);
        if (h.type != MsgType::Data || h.superstep != superstep || h.aux != u)
            fail("unit header did not round-trip");
        if (read_unit_info(r).count != units.size())
            fail("unit count did not round-trip");
        while (auto rec = next_record(r)) {
            if (rec->chunk_off == 0) {
                got.push_back({rec->kind, rec->a, rec->b, {}});
                got.back().data.reserve(rec->total);
            }
            if (got.empty() || got.back().kind != rec->kind || got.back().a != rec->a ||
                got.back().b != rec->b || got.back().data.size() != rec->chunk_off)
                fail("record chunks out of order");
            got.back().data.insert(got.back().data.end(), rec->chunk.begin(), rec->chunk.end());
            if (rec->chunk_off + rec->chunk.size() < rec->total && !r.done())
                fail("a record split before the end of its unit");
        }
    }
    if (got.size() != added.size())
        fail("number of records did not round-trip");
    for (std::size_t k = 0; k < got.size(); ++k)
        if (got[k].kind != added[k].kind || got[k].a != added[k].a || got[k].b != added[k].b ||
            got[k].data != added[k].data)
            fail("record did not round-trip");
    if (!combine && units.size() < std::max<std::size_t>(added.size(), 1))
        fail("without combining every record starts its own unit");
}

// ---- mode 4: a process whose peers are the input ---------------------------------------

class ScriptedPeers final : public Transport {
  public:
    explicit ScriptedPeers(std::deque<Received> script) : script_(std::move(script)) {}
    std::string name() const override { return "fuzz"; }
    std::string description() const override { return "fuzzer-scripted peers"; }
    std::size_t max_message_bytes() const override { return 1 << 16; }
    void send(int, std::vector<std::byte>, unsigned) override {}
    std::optional<Received> receive() override {
        if (script_.empty())
            return std::nullopt;  // the job is torn down
        Received r = std::move(script_.front());
        script_.pop_front();
        return r;
    }
    void flush_sends() override {}
    void barrier_completed(std::uint64_t) override {}
    void set_pacing_rate(std::uint64_t) override {}
    void expect_from(int, std::uint32_t, std::uint64_t) override {}
    void expect_barrier_message(int) override {}
    void serve_in_background() override {}
    void shutdown() override {}

  private:
    std::deque<Received> script_;
};

std::vector<std::vector<std::byte>> peer_messages(FuzzedDataProvider &in, int nprocs) {
    std::vector<std::vector<std::byte>> out;
    const std::uint64_t superstep = in.ConsumeIntegralInRange<std::uint64_t>(0, 3);
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            out.push_back(take_bytes(in, 300));
            break;
        case 1: {
            const auto n = static_cast<std::size_t>(nprocs);
            BarrierMsg m;
            for (std::size_t pid = 0; pid < n; ++pid) {
                if (!in.ConsumeBool())
                    continue;
                Contribution c = make_contribution(in, n);
                if (in.ConsumeBool()) {  // mostly what an honest peer would say
                    c.kind = SyncKind::Sync;
                    c.tagsize_request = -1;
                    c.ops.pop_slots.clear();
                    c.ops.push_sizes.resize(superstep == 0 ? 1 : 0);
                }
                merge_summary(m.summary, summarize(static_cast<std::uint32_t>(pid), c));
            }
            if (m.summary.members == 0)
                m.summary = summarize(0, Contribution{});
            const auto ncounters = in.ConsumeIntegralInRange<std::size_t>(0, n);
            for (std::size_t k = 0; k < ncounters; ++k)
                m.counters.push_back(
                    in.ConsumeIntegralInRange<std::uint32_t>(0, static_cast<std::uint32_t>(n - 1)));
            out.push_back(
                encode_barrier(superstep, in.ConsumeIntegralInRange<std::uint32_t>(0, 3), m));
            break;
        }
        case 2: {
            Counts c;
            c.data_bytes = edgy_u64(in);
            c.records = in.ConsumeIntegralInRange<std::uint32_t>(0, 4);
            const auto n = in.ConsumeIntegralInRange<std::size_t>(0, 3);
            for (std::size_t k = 0; k < n; ++k) {
                GetRequest g;
                g.id = static_cast<std::uint32_t>(k);
                g.slot = in.ConsumeIntegralInRange<std::uint32_t>(0, 2);
                g.offset = edgy_u64(in);
                g.nbytes = in.ConsumeIntegralInRange<std::uint32_t>(0, 80);
                c.gets.push_back(g);
            }
            out.push_back(encode_counts(superstep, c));
            break;
        }
        default: {
            UnitPacker packer(superstep, in.ConsumeIntegralInRange<std::size_t>(64, 400));
            const auto n = in.ConsumeIntegralInRange<std::size_t>(0, 6);
            for (std::size_t k = 0; k < n; ++k) {
                const auto kind = static_cast<RecordKind>(in.ConsumeIntegralInRange<int>(1, 3));
                const std::uint32_t a = in.ConsumeBool()
                                            ? in.ConsumeIntegralInRange<std::uint32_t>(0, 8)
                                            : edgy_u32(in);
                const std::uint64_t b = edgy_u64(in);
                const auto data = take_bytes(in, 200);
                // b + data.size() may wrap: the packer writes what it is given.
                packer.add(kind, a, b, data);
            }
            out = packer.finish();
            // Forge the announced count of units or a unit's index.
            if (in.ConsumeBool()) {
                auto &u = out[in.ConsumeIntegralInRange<std::size_t>(0, out.size() - 1)];
                const std::size_t pos =
                    in.ConsumeBool() ? kMsgHeaderBytes : kMsgHeaderBytes - 4;  // count, aux
                const std::uint32_t v = edgy_u32(in);
                for (std::size_t i = 0; i < 4; ++i)
                    u[pos + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
            }
            // Cut a unit short.
            if (in.ConsumeBool()) {
                auto &u = out[in.ConsumeIntegralInRange<std::size_t>(0, out.size() - 1)];
                u.resize(in.ConsumeIntegralInRange<std::size_t>(kUnitHeaderBytes, u.size()));
            }
            break;
        }
    }
    if (!out.empty() && !out[0].empty() && in.ConsumeBool()) {  // flip one byte
        auto &m = out[in.ConsumeIntegralInRange<std::size_t>(0, out.size() - 1)];
        if (!m.empty())
            m[in.ConsumeIntegralInRange<std::size_t>(0, m.size() - 1)] ^=
                static_cast<std::byte>(in.ConsumeIntegralInRange<int>(1, 255));
    }
    return out;
}

// Drains the BSMP queue into buffers of exactly the sizes it announces; tag_bytes is the
// tag size in effect in the superstep whose messages these are.
// The integer type of Runtime::qsize (int, or std::int64_t with wide types).
template <typename F>
struct QsizeArg;
template <typename C, typename A>
struct QsizeArg<void (C::*)(A *, A *) const> {
    using type = A;
};
using QsizeInt = QsizeArg<decltype(&Runtime::qsize)>::type;

void drain_queue(Runtime &rt, std::size_t tag_bytes, bool hp) {
    QsizeInt count = 0, total = 0;
    rt.qsize(&count, &total);
    if (count < 0 || total < 0)
        fail("negative queue size");
    QsizeInt sum = 0;
    for (QsizeInt i = 0; i < count; ++i) {
        const auto len = rt.get_tag(nullptr);  // the length alone (no tag copied)
        if (len < 0 || len > (1 << 20))
            fail("implausible payload length of a queued message");
        auto tag = std::make_unique<std::byte[]>(tag_bytes);
        if (rt.get_tag(tag.get()) != len)
            fail("get_tag answered two lengths");
        sum += len;
        auto payload = std::make_unique<std::byte[]>(static_cast<std::size_t>(len));
        if (hp) {  // bsp_hpmove: pointers into the queue, read through here
            void *tag_at = nullptr, *payload_at = nullptr;
            if (rt.hpmove(&tag_at, &payload_at) != len)
                fail("hpmove answered another length than get_tag");
            if (static_cast<std::byte *>(payload_at) !=
                static_cast<std::byte *>(tag_at) + tag_bytes)
                fail("hpmove's payload does not follow its tag");
            if (tag_bytes)
                std::memcpy(tag.get(), tag_at, tag_bytes);
            if (len)
                std::memcpy(payload.get(), payload_at, static_cast<std::size_t>(len));
        } else {
            rt.move("bsp_move", payload.get(), len);
        }
    }
    if (sum != total)
        fail("queue payload total differs from the sum of its messages");
    if (rt.get_tag(nullptr) != -1)
        fail("queue not empty after qsize() messages");
}

void runtime_mode(FuzzedDataProvider &in) {
    const int nprocs = in.ConsumeIntegralInRange<int>(2, 4);
    const int pid = in.ConsumeIntegralInRange<int>(0, nprocs - 1);
    std::deque<Received> script;
    const auto nmsg = in.ConsumeIntegralInRange<std::size_t>(0, 12);
    for (std::size_t k = 0; k < nmsg && in.remaining_bytes() > 0; ++k) {
        int src = in.ConsumeIntegralInRange<int>(0, nprocs - 2);
        if (src >= pid)
            ++src;  // any process but this one
        for (auto &m : peer_messages(in, nprocs))
            script.push_back({src, std::move(m)});
    }
    const std::size_t area_size = in.ConsumeIntegralInRange<std::size_t>(0, 64);
    const bool set_tag = in.ConsumeBool();
    const int new_tag = in.ConsumeIntegralInRange<int>(0, 16);
    const int op_mask = in.ConsumeIntegral<std::uint8_t>();
    const int nbytes = in.ConsumeIntegralInRange<int>(1, 16);
    const int offset = in.ConsumeIntegralInRange<int>(0, 16);

    ScriptedPeers transport(std::move(script));
    MessagingConfig cfg;
    cfg.unit_bytes = 128;
    Runtime rt(pid, nprocs, &transport, cfg);
    // The area lives on the heap at its exact size, so a write past it is caught.
    auto area = std::make_unique<std::byte[]>(area_size);
    std::vector<std::byte> src(64, std::byte{0x5a});
    std::vector<std::unique_ptr<std::byte[]>> get_dst;
    try {
        rt.push_reg("bsp_push_reg", area.get(), static_cast<int>(area_size));
        if (set_tag)
            rt.set_tagsize("bsp_set_tagsize", new_tag);
        std::size_t tag_in_step = static_cast<std::size_t>(rt.tagsize());
        rt.sync("bsp_sync");
        drain_queue(rt, tag_in_step, op_mask & 16);
        for (int j = 0; j < nprocs; ++j) {
            if (j == pid)
                continue;
            // Local operations may be refused (Misuse) when a peer announced a smaller
            // area: that is the runtime's checking, not a failure.
            try {
                if (op_mask & 1)
                    rt.put("bsp_put", j, src.data(), area.get(), offset, nbytes, op_mask & 2);
                if (op_mask & 4) {
                    get_dst.push_back(
                        std::make_unique<std::byte[]>(static_cast<std::size_t>(nbytes)));
                    rt.get("bsp_get", j, area.get(), offset, get_dst.back().get(), nbytes);
                }
                if (op_mask & 8)
                    rt.send("bsp_send", j, src.data(), src.data(), nbytes);
            } catch (const Misuse &) {
            }
        }
        tag_in_step = static_cast<std::size_t>(rt.tagsize());
        rt.sync("bsp_sync");
        drain_queue(rt, tag_in_step, op_mask & 16);
        tag_in_step = static_cast<std::size_t>(rt.tagsize());
        rt.sync("bsp_end", SyncKind::End);
        drain_queue(rt, tag_in_step, op_mask & 16);
    } catch (const ProtocolError &) {
    } catch (const TornDown &) {
    } catch (const Misuse &) {
        // fail_collective: the peers disagree on a collective and this process is named.
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
        case 0:
            raw_mode(in);
            break;
        case 1:
            barrier_round_trip(in);
            break;
        case 2:
            counts_round_trip(in);
            break;
        case 3:
            units_round_trip(in);
            break;
        default:
            runtime_mode(in);
            break;
    }
    return 0;
}
