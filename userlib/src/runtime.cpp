#include "runtime.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace bsp::rt {

namespace {

std::string ordinal(std::size_t i) {
    const std::size_t n = i + 1;
    const char *suffix = "th";
    if (n % 100 < 11 || n % 100 > 13) {
        if (n % 10 == 1) {
            suffix = "st";
        } else if (n % 10 == 2) {
            suffix = "nd";
        } else if (n % 10 == 3) {
            suffix = "rd";
        }
    }
    return std::to_string(n) + suffix;
}

std::string times(std::size_t n) {
    return n == 1 ? "1 time" : std::to_string(n) + " times";
}

// What a pop names (RegOps::pop_slots), for the messages of a registration mismatch.
std::string popped(std::uint32_t slot) {
    if (slot & kPendingPush) {
        return "the registration of its " + ordinal(slot & ~kPendingPush) +
               " bsp_push_reg of this superstep";
    }
    return "registration slot " + std::to_string(slot);
}

std::span<const std::byte> as_bytes(const void *p, std::size_t n) {
    return {static_cast<const std::byte *>(p), n};
}

// offset + nbytes <= size, for values from the network (no overflow).
bool within(std::uint64_t offset, std::uint64_t nbytes, std::int64_t size) {
    const auto s = static_cast<std::uint64_t>(size);
    return offset <= s && nbytes <= s - offset;
}

// Little-endian stores into a direct area (the layout of codec.hpp's Writer).
template <typename T>
std::byte *store_le(std::byte *at, T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        at[i] = static_cast<std::byte>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
    }
    return at + sizeof(T);
}

// The length before a direct area's records.
constexpr std::size_t kDirectLength = 8;

// Buffers larger than this are given back after a superstep instead of kept for the next.
constexpr std::size_t kKeepBytes = std::size_t{64} << 20;

}  // namespace

void Runtime::DestOps::clear() {
    records.clear();
    arena.clear();
    gets.clear();
    if (arena.capacity() > kKeepBytes) {
        arena.shrink_to_fit();
    }
    if (records.capacity() * sizeof(Buffered) > kKeepBytes) {
        records.shrink_to_fit();
    }
    if (gets.capacity() * sizeof(PendingGet) > kKeepBytes) {
        gets.shrink_to_fit();
    }
    direct = {};
    direct_used = 0;
    direct_closed = false;
}

Runtime::Runtime(int pid, int nprocs, Transport *transport, MessagingConfig cfg)
    : pid_(pid),
      nprocs_(nprocs),
      transport_(transport),
      messaging_(pid, nprocs, transport, cfg),
      ops_(static_cast<std::size_t>(nprocs)),
      start_(std::chrono::steady_clock::now()) {
    for (int j = 0; transport_ && j < nprocs_; ++j) {
        if (j != pid_) {
            ops_[static_cast<std::size_t>(j)].direct = transport_->direct_out(j, superstep_);
        }
    }
}

bool Runtime::put_direct(DestOps &d, RecordKind kind, std::uint32_t a, std::uint64_t b,
                         std::span<const std::byte> first, std::span<const std::byte> second) {
    if (d.direct_closed || d.direct.empty()) {
        return false;
    }
    const std::size_t len = first.size() + second.size();
    const std::size_t room = d.direct.size() - kDirectLength - d.direct_used;
    if (room < kRecordHeaderBytes || len > room - kRecordHeaderBytes) {
        d.direct_closed = true;
        return false;
    }
    // A whole record (chunk offset 0) with the header of a data unit's records; the
    // area is smaller than 4 GiB, so the record is not wide.
    std::byte *at = d.direct.data() + kDirectLength + d.direct_used;
    at = store_le<std::uint8_t>(at, static_cast<std::uint8_t>(kind));
    at = store_le<std::uint32_t>(at, a);
    at = store_le<std::uint64_t>(at, b);
    at = store_le<std::uint32_t>(at, static_cast<std::uint32_t>(len));
    at = store_le<std::uint32_t>(at, 0);
    at = store_le<std::uint32_t>(at, static_cast<std::uint32_t>(len));
    if (!first.empty()) {
        std::memcpy(at, first.data(), first.size());
    }
    if (!second.empty()) {
        std::memcpy(at + first.size(), second.data(), second.size());
    }
    d.direct_used += kRecordHeaderBytes + len;
    return true;
}

std::span<const std::byte> Runtime::direct_records(std::size_t src) const {
    if (!transport_) {
        return {};
    }
    const auto area = transport_->direct_in(static_cast<int>(src), superstep_);
    if (area.size() < kDirectLength) {
        return {};
    }
    Reader rd(area);
    const auto used = rd.get<std::uint64_t>();
    if (used > rd.remaining()) {
        throw ProtocolError("shared-memory direct area of process " + std::to_string(src) +
                            " is corrupt");
    }
    return area.subspan(kDirectLength, static_cast<std::size_t>(used));
}

double Runtime::time() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Runtime::check_pid(std::string_view call, int pid) const {
    if (pid < 0 || pid >= nprocs_) {
        throw Misuse(
            call, pid_,
            "bad pid " + std::to_string(pid) + " (nprocs is " + std::to_string(nprocs_) + ")");
    }
}

std::uint32_t Runtime::registered_slot(std::string_view call, const void *addr,
                                       std::string_view what) const {
    auto slot = registry_.find(addr);
    if (slot) {
        return *slot;
    }
    std::string reason(what);
    if (registry_.pending_push(addr)) {
        reason +=
            " area is not registered yet (a registration takes effect at the next "
            "bsp_sync)";
    } else {
        reason += " area is not registered (never registered, or deregistered by bsp_pop_reg)";
    }
    throw Misuse(call, pid_, reason);
}

void Runtime::check_range(std::string_view call, int pid, std::uint32_t slot, std::int64_t offset,
                          std::int64_t nbytes, std::string_view what) const {
    if (offset < 0) {
        throw Misuse(call, pid_, "negative offset " + std::to_string(offset));
    }
    if (nbytes < 0) {
        throw Misuse(call, pid_, "negative size " + std::to_string(nbytes));
    }
    const std::int64_t size = registry_.size_at(slot, pid);
    // Both are >= 0: this is offset + nbytes > size without overflowing.
    if (offset > size || nbytes > size - offset) {
        throw Misuse(call, pid_,
                     "offset " + std::to_string(offset) + " + " + std::to_string(nbytes) +
                         " bytes is outside the " + std::to_string(size) + " bytes of the " +
                         std::string(what) + " area registered by process " + std::to_string(pid));
    }
}

void Runtime::check_count(std::string_view call, int pid, std::size_t n,
                          std::string_view what) const {
    if (n >= 0xffffffffu) {
        throw Misuse(call, pid_,
                     "more than 4294967295 " + std::string(what) + " to process " +
                         std::to_string(pid) + " in one superstep");
    }
}

void Runtime::push_reg(std::string_view call, const void *ident, std::int64_t size) {
    if (size < 0) {
        throw Misuse(call, pid_, "negative size " + std::to_string(size));
    }
    registry_.push(ident, size);
}

void Runtime::pop_reg(std::string_view call, const void *ident) {
    if (auto err = registry_.pop(ident)) {
        throw Misuse(call, pid_, *err);
    }
}

void Runtime::put(std::string_view call, int pid, const void *src, void *dst, std::int64_t offset,
                  std::int64_t nbytes, bool hp) {
    check_pid(call, pid);
    const std::uint32_t slot = registered_slot(call, dst, "destination");
    check_range(call, pid, slot, offset, nbytes, "destination");
    if (nbytes == 0) {
        return;
    }
    if (src == nullptr) {
        throw Misuse(call, pid_, "source pointer is NULL");
    }
    DestOps &d = ops_[static_cast<std::size_t>(pid)];
    // Straight into shared memory when the destination has a direct area with room (a
    // bsp_hpput too: its source may be read at any time until the sync).
    if (put_direct(d, RecordKind::Put, slot, static_cast<std::uint64_t>(offset),
                   as_bytes(src, static_cast<std::size_t>(nbytes)))) {
        return;
    }
    check_count(call, pid, d.records.size(), "puts and sends");
    Buffered b;
    b.rec.kind = RecordKind::Put;
    b.rec.a = slot;
    b.rec.b = static_cast<std::uint64_t>(offset);
    b.len = static_cast<std::size_t>(nbytes);
    if (hp) {
        b.hp_src = src;  // unbuffered: read when the superstep's data is sent
    } else {
        b.arena_off = d.arena.size();
        auto s = as_bytes(src, b.len);
        d.arena.insert(d.arena.end(), s.begin(), s.end());
    }
    d.records.push_back(b);
}

void Runtime::get(std::string_view call, int pid, const void *src, std::int64_t offset, void *dst,
                  std::int64_t nbytes) {
    check_pid(call, pid);
    const std::uint32_t slot = registered_slot(call, src, "source");
    check_range(call, pid, slot, offset, nbytes, "source");
    if (nbytes == 0) {
        return;
    }
    if (dst == nullptr) {
        throw Misuse(call, pid_, "destination pointer is NULL");
    }
    DestOps &d = ops_[static_cast<std::size_t>(pid)];
    check_count(call, pid, d.gets.size(), "gets");
    PendingGet g;
    g.req.id = static_cast<std::uint32_t>(d.gets.size());
    g.req.slot = slot;
    g.req.offset = static_cast<std::uint64_t>(offset);
    g.req.nbytes = static_cast<std::uint64_t>(nbytes);
    g.dst = dst;
    g.seq = gets_issued_++;
    d.gets.push_back(g);
}

std::int64_t Runtime::set_tagsize(std::string_view call, std::int64_t tag_bytes) {
    if (tag_bytes < 0) {
        throw Misuse(call, pid_, "negative tag size " + std::to_string(tag_bytes));
    }
    if (tag_bytes > kMaxTagBytes) {
        throw Misuse(call, pid_,
                     "tag size " + std::to_string(tag_bytes) + " is larger than the largest, " +
                         std::to_string(kMaxTagBytes) + " bytes");
    }
    const std::int64_t previous = tagsize_request_ >= 0 ? tagsize_request_ : tagsize_;
    tagsize_request_ = tag_bytes;
    return previous;
}

void Runtime::send(std::string_view call, int pid, const void *tag, const void *payload,
                   std::int64_t nbytes) {
    check_pid(call, pid);
    if (nbytes < 0) {
        throw Misuse(call, pid_, "negative payload size " + std::to_string(nbytes));
    }
    if (tag == nullptr && tagsize_ > 0) {
        throw Misuse(call, pid_,
                     "tag pointer is NULL but the tag size is " + std::to_string(tagsize_));
    }
    if (payload == nullptr && nbytes > 0) {
        throw Misuse(call, pid_, "payload pointer is NULL");
    }
    DestOps &d = ops_[static_cast<std::size_t>(pid)];
    if (put_direct(d, RecordKind::Send, static_cast<std::uint32_t>(tagsize_), 0,
                   tagsize_ > 0 ? as_bytes(tag, static_cast<std::size_t>(tagsize_))
                                : std::span<const std::byte>{},
                   nbytes > 0 ? as_bytes(payload, static_cast<std::size_t>(nbytes))
                              : std::span<const std::byte>{})) {
        return;
    }
    check_count(call, pid, d.records.size(), "puts and sends");
    Buffered b;
    b.rec.kind = RecordKind::Send;
    b.rec.a = static_cast<std::uint32_t>(tagsize_);
    b.arena_off = d.arena.size();
    b.len = static_cast<std::size_t>(tagsize_) + static_cast<std::size_t>(nbytes);
    if (tagsize_ > 0) {
        auto t = as_bytes(tag, static_cast<std::size_t>(tagsize_));
        d.arena.insert(d.arena.end(), t.begin(), t.end());
    }
    if (nbytes > 0) {
        auto p = as_bytes(payload, static_cast<std::size_t>(nbytes));
        d.arena.insert(d.arena.end(), p.begin(), p.end());
    }
    d.records.push_back(b);
}

void Runtime::qsize(std::int64_t *nmessages, std::int64_t *accum_nbytes) const {
    if (nmessages) {
        *nmessages = static_cast<std::int64_t>(queue_.count());
    }
    if (accum_nbytes) {
        *accum_nbytes = static_cast<std::int64_t>(queue_.payload_total());
    }
}

std::int64_t Runtime::queue_tagsize() const {
    return queue_.empty() ? tagsize_ : static_cast<std::int64_t>(queue_.front().tag_bytes);
}

std::int64_t Runtime::get_tag(void *tag) const {
    if (queue_.empty()) {
        return -1;
    }
    const auto &m = queue_.front();
    if (m.tag_bytes > 0 && tag) {
        std::memcpy(tag, m.data.data(), m.tag_bytes);
    }
    return static_cast<std::int64_t>(m.payload_bytes());
}

void Runtime::move(std::string_view call, void *payload, std::int64_t reception_nbytes) {
    if (queue_.empty()) {
        throw Misuse(call, pid_, "the message queue is empty");
    }
    if (reception_nbytes < 0) {
        throw Misuse(call, pid_, "negative reception size " + std::to_string(reception_nbytes));
    }
    const auto &m = queue_.front();
    const std::size_t n = std::min(m.payload_bytes(), static_cast<std::size_t>(reception_nbytes));
    if (n > 0) {
        if (payload == nullptr) {
            throw Misuse(call, pid_, "payload pointer is NULL");
        }
        std::memcpy(payload, m.data.data() + m.tag_bytes, n);
    }
    queue_.pop();
}

std::int64_t Runtime::hpmove(void **tag_ptr, void **payload_ptr) {
    if (queue_.empty()) {
        return -1;
    }
    auto &m = queue_.front();
    if (tag_ptr) {
        *tag_ptr = m.data.data();
    }
    if (payload_ptr) {
        *payload_ptr = m.data.data() + m.tag_bytes;
    }
    const auto len = static_cast<std::int64_t>(m.payload_bytes());
    queue_.pop();
    return len;
}

void Runtime::fail_collective(int culprit, std::string_view call, const std::string &reason) {
    // Every process detects the same disagreement; the process it names reports it and
    // the others wait for the job to be torn down, so the program ends with one message.
    if (culprit == pid_ || nprocs_ == 1) {
        throw Misuse(call, culprit, reason);
    }
    for (;;) {
        if (!transport_->receive()) {
            throw TornDown();
        }
    }
}

static std::string_view kind_call(SyncKind k) {
    return k == SyncKind::End ? "bsp_end" : "bsp_sync";
}

void Runtime::validate(std::string_view call, SyncKind kind, const BarrierSummary &all) {
    (void)call;
    // The barrier found the lowest pid whose kind differs from process 0's, and the lowest
    // whose calls (pushes, pops, tag size) differ: every process reports the same one.
    const Contribution &first = all.ref;
    if (all.kind_diff) {
        const auto &[k, c] = *all.kind_diff;
        fail_collective(static_cast<int>(k), kind_call(c.kind),
                        "process " + std::to_string(k) + " called " +
                            std::string(kind_call(c.kind)) + " while process 0 called " +
                            std::string(kind_call(first.kind)));
    }
    const std::string_view at = kind_call(kind);
    if (all.calls_diff) {
        const auto &[k, c] = *all.calls_diff;
        const int pk = static_cast<int>(k);
        const auto &a = c.ops, &b = first.ops;
        if (a.push_sizes.size() != b.push_sizes.size()) {
            fail_collective(pk, at,
                            "registration mismatch: process " + std::to_string(k) +
                                " called bsp_push_reg " + times(a.push_sizes.size()) +
                                " in this superstep but process 0 called it " +
                                times(b.push_sizes.size()));
        }
        if (a.pop_slots.size() != b.pop_slots.size()) {
            fail_collective(pk, at,
                            "registration mismatch: process " + std::to_string(k) +
                                " called bsp_pop_reg " + times(a.pop_slots.size()) +
                                " in this superstep but process 0 called it " +
                                times(b.pop_slots.size()));
        }
        for (std::size_t i = 0; i < a.pop_slots.size(); ++i) {
            if (a.pop_slots[i] != b.pop_slots[i]) {
                fail_collective(
                    pk, at,
                    "registration mismatch: the " + ordinal(i) + " bsp_pop_reg of process " +
                        std::to_string(k) + " deregisters " + popped(a.pop_slots[i]) +
                        ", that of process 0 " +
                        ((b.pop_slots[i] & kPendingPush)
                             ? popped(b.pop_slots[i])
                             : "slot " + std::to_string(b.pop_slots[i])) +
                        " (registrations are matched by the order of bsp_push_reg calls)");
            }
        }
        if (c.tagsize_request != first.tagsize_request) {
            auto describe = [](std::int32_t t) {
                return t < 0 ? std::string("did not call bsp_set_tagsize")
                             : "set tag size " + std::to_string(t);
            };
            fail_collective(pk, at,
                            "tag size mismatch: in this superstep process " + std::to_string(k) +
                                " " + describe(c.tagsize_request) + ", process 0 " +
                                describe(first.tagsize_request) +
                                " (bsp_set_tagsize is collective)");
        }
        throw ProtocolError("barrier reported a difference it does not name");
    }
}

void Runtime::count_out(SuperstepProfile &sp) const {
    for (std::size_t j = 0; j < ops_.size(); ++j) {
        if (j == static_cast<std::size_t>(pid_)) {
            continue;
        }
        Reader rd(ops_[j].direct.empty() ? std::span<const std::byte>{}
                                         : std::span<const std::byte>(ops_[j].direct)
                                               .subspan(kDirectLength, ops_[j].direct_used));
        while (auto rec = next_record(rd)) {
            if (rec->kind == RecordKind::Put) {
                sp.out_put_bytes += rec->chunk.size();
                ++sp.out_put_n;
            } else {
                sp.out_send_bytes += rec->chunk.size();
                ++sp.out_send_n;
            }
        }
        for (const auto &b : ops_[j].records) {
            if (b.rec.kind == RecordKind::Put) {
                sp.out_put_bytes += b.len;
                ++sp.out_put_n;
            } else {
                sp.out_send_bytes += b.len;
                ++sp.out_send_n;
            }
        }
    }
}

void Runtime::count_in(const UnitsBySource &in, SuperstepProfile &sp) const {
    for (std::size_t src = 0; src < in.size(); ++src) {
        if (src == static_cast<std::size_t>(pid_)) {
            continue;
        }
        // The direct area first (its records are whole), then the units.
        for (std::size_t u = 0; u <= in[src].size(); ++u) {
            Reader rd(u == 0 ? direct_records(src) : std::span<const std::byte>(in[src][u - 1]));
            if (u > 0) {
                read_header(rd);
                read_unit_info(rd);
            }
            while (auto rec = next_record(rd)) {
                const std::uint64_t first = rec->chunk_off == 0 ? 1 : 0;
                switch (rec->kind) {
                    case RecordKind::Put:
                        sp.in_put_bytes += rec->chunk.size();
                        sp.in_put_n += first;
                        break;
                    case RecordKind::Send:
                        sp.in_send_bytes += rec->chunk.size();
                        sp.in_send_n += first;
                        break;
                    case RecordKind::Reply:
                        sp.in_reply_bytes += rec->chunk.size();
                        sp.in_reply_n += first;
                        break;
                }
            }
        }
    }
}

void Runtime::sync(std::string_view call, SyncKind kind, bool ready) {
    const auto n = static_cast<std::size_t>(nprocs_);
    SuperstepProfile sp;
    if (profile_) {
        sp.begin = superstep_begin_;
        sp.enter_sync = time();
        count_out(sp);
    }
    Contribution &mine = mine_;
    mine.kind = kind;
    mine.ready = ready;
    mine.tagsize_request = static_cast<std::int32_t>(tagsize_request_);  // <= kMaxTagBytes
    mine.ops = registry_.pending_ops();
    mine.row.assign(n, 0);
    mine.gets = false;
    for (std::size_t j = 0; j < n; ++j) {
        if (j != static_cast<std::size_t>(pid_) && !ops_[j].empty()) {
            mine.row[j] = 1;
            mine.gets = mine.gets || !ops_[j].gets.empty();
        }
    }

    // What goes to every other process (hp puts read their source when it is sent).
    std::vector<Outgoing> &out = out_;
    out.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
        out[j].records.clear();
        out[j].gets.clear();
        if (j == static_cast<std::size_t>(pid_)) {
            continue;
        }
        DestOps &d = ops_[j];
        for (auto &b : d.records) {
            OutRecord r = b.rec;
            r.data = b.hp_src ? as_bytes(b.hp_src, b.len)
                              : std::span<const std::byte>(d.arena).subspan(b.arena_off, b.len);
            out[j].records.push_back(r);
        }
        for (const auto &g : d.gets) {
            out[j].gets.push_back(g.req);
        }
    }
    // The length of every direct area of this superstep, written also when it is 0 (the
    // area may hold what an earlier superstep of the same parity wrote).
    for (std::size_t j = 0; j < n; ++j) {
        if (!ops_[j].direct.empty()) {
            store_le<std::uint64_t>(ops_[j].direct.data(), ops_[j].direct_used);
        }
    }
    const BarrierResult b = messaging_.barrier(superstep_, mine, &out);
    validate(call, kind, b.all);
    if (profile_) {
        sp.barrier_done = time();
    }
    all_ready_ = b.all.all_ready;
    // Every process pushed as often (validated): the sizes of each, from the barrier.
    std::vector<RegOps> reg;
    if (!mine.ops.push_sizes.empty()) {
        reg.resize(n);
        if (b.all.pushes.size() != n) {
            throw ProtocolError("barrier without the registrations of every process");
        }
        for (std::size_t k = 0; k < n; ++k) {
            const auto &[pid, sizes] = b.all.pushes[k];
            if (pid != k || sizes.size() != mine.ops.push_sizes.size()) {
                throw ProtocolError("barrier with registrations that disagree");
            }
            reg[k].push_sizes = sizes;
        }
    }
    registry_.commit_pushes(reg);

    const GetServer serve = [this, &sp](int requester, const GetRequest &g) {
        if (profile_ && requester != pid_) {
            sp.out_reply_bytes += g.nbytes;
            ++sp.out_reply_n;
        }
        if (!registry_.active(g.slot) ||
            !within(g.offset, g.nbytes, registry_.size_at(g.slot, pid_))) {
            throw ProtocolError("get request from process " + std::to_string(requester) +
                                " outside a registered area");
        }
        return as_bytes(static_cast<const std::byte *>(registry_.local_addr(g.slot)) + g.offset,
                        g.nbytes);
    };
    auto in = messaging_.exchange(superstep_, b, out, serve);
    deliver(in);
    if (profile_) {
        count_in(in, sp);
    }

    registry_.commit_pops();
    if (tagsize_request_ >= 0) {
        tagsize_ = tagsize_request_;
    }
    tagsize_request_ = -1;
    for (auto &d : ops_) {
        d.clear();
    }
    gets_issued_ = 0;
    if (profile_) {
        sp.end = time();
        profile_->write(superstep_, sp);
        superstep_begin_ = sp.end;
    }
    ++superstep_;
    for (std::size_t j = 0; j < n; ++j) {
        if (j != static_cast<std::size_t>(pid_)) {
            ops_[j].direct = transport_->direct_out(static_cast<int>(j), superstep_);
        }
    }
    if (kind == SyncKind::End) {
        messaging_.finish(superstep_);
    }
}

void Runtime::deliver(const UnitsBySource &in) {
    apply_gets(in);
    // Puts and sends, by source pid and then in the order they were issued.
    std::vector<BsmpQueue::Message> messages;
    for (std::size_t src = 0; src < in.size(); ++src) {
        if (src == static_cast<std::size_t>(pid_)) {
            apply_local(messages);
        } else {
            apply_remote(src, in[src], messages);
        }
    }
    queue_.reset(std::move(messages));
}

// Gets read their values at the end of the superstep, before any put is applied: remote
// gets were served during the exchange; local ones are read now. Then every get is
// written in the order the gets were issued, so that where destinations overlap the later
// get wins (the chunks of one get never overlap each other).
void Runtime::apply_gets(const UnitsBySource &in) {
    const DestOps &self = ops_[static_cast<std::size_t>(pid_)];
    struct GetWrite {
        std::uint64_t seq;
        std::byte *dst;
        std::span<const std::byte> data;
    };
    std::vector<GetWrite> writes;
    std::vector<std::vector<std::byte>> local_values;
    local_values.reserve(self.gets.size());
    for (const auto &g : self.gets) {
        auto *base = static_cast<const std::byte *>(registry_.local_addr(g.req.slot));
        local_values.emplace_back(base + g.req.offset, base + g.req.offset + g.req.nbytes);
        writes.push_back({g.seq, static_cast<std::byte *>(g.dst), local_values.back()});
    }
    for (std::size_t src = 0; src < in.size(); ++src) {
        for (const auto &unit : in[src]) {
            Reader rd(unit);
            read_header(rd);
            read_unit_info(rd);
            while (auto rec = next_record(rd)) {
                if (rec->kind != RecordKind::Reply) {
                    continue;
                }
                const auto &gets = ops_[src].gets;
                if (rec->a >= gets.size() || rec->total != gets[rec->a].req.nbytes) {
                    throw ProtocolError("get reply that matches no get request");
                }
                writes.push_back({gets[rec->a].seq,
                                  static_cast<std::byte *>(gets[rec->a].dst) + rec->chunk_off,
                                  rec->chunk});
            }
        }
    }
    std::stable_sort(writes.begin(), writes.end(),
                     [](const GetWrite &x, const GetWrite &y) { return x.seq < y.seq; });
    for (const auto &w : writes) {
        std::memcpy(w.dst, w.data.data(), w.data.size());
    }
}

// This process's own puts and sends, which never left it.
void Runtime::apply_local(std::vector<BsmpQueue::Message> &messages) {
    const DestOps &self = ops_[static_cast<std::size_t>(pid_)];
    for (const auto &b : self.records) {
        auto data = b.hp_src ? as_bytes(b.hp_src, b.len)
                             : std::span<const std::byte>(self.arena).subspan(b.arena_off, b.len);
        if (b.rec.kind == RecordKind::Put) {
            std::memmove(static_cast<std::byte *>(registry_.local_addr(b.rec.a)) + b.rec.b,
                         data.data(), data.size());
        } else {
            BsmpQueue::Message msg;
            msg.src = pid_;
            msg.tag_bytes = b.rec.a;
            msg.data.assign(data.begin(), data.end());
            messages.push_back(std::move(msg));
        }
    }
}

// The puts and sends of process @src: first those of its direct area (whole records,
// written before any of its records that went in units), then those of its data units. A
// peer's BSMP messages carry the superstep's tag size and arrive whole: memory is reserved
// for a message up to what the stream holds, never what it claims.
void Runtime::apply_remote(std::size_t src, const std::vector<DataUnit> &units,
                           std::vector<BsmpQueue::Message> &messages) {
    const std::string from = "process " + std::to_string(src);
    const std::span<const std::byte> direct = direct_records(src);
    std::size_t stream_bytes = direct.size();
    for (const auto &unit : units) {
        stream_bytes += unit.size();
    }
    std::uint64_t send_left = 0;  // bytes still due to the message being assembled
    for (std::size_t u = 0; u <= units.size(); ++u) {
        Reader rd(u == 0 ? direct : std::span<const std::byte>(units[u - 1]));
        if (u > 0) {
            read_header(rd);
            read_unit_info(rd);
        }
        while (auto rec = next_record(rd)) {
            if (u == 0 && (rec->kind == RecordKind::Reply || rec->chunk_off != 0 ||
                           rec->chunk.size() != rec->total)) {
                throw ProtocolError("shared-memory direct area of " + from +
                                    " with a record that is not a whole put or send");
            }
            if (rec->kind == RecordKind::Put) {
                if (!registry_.active(rec->a) ||
                    !within(rec->b, rec->total, registry_.size_at(rec->a, pid_))) {
                    throw ProtocolError("put from " + from + " outside a registered area");
                }
                std::memcpy(static_cast<std::byte *>(registry_.local_addr(rec->a)) + rec->b +
                                rec->chunk_off,
                            rec->chunk.data(), rec->chunk.size());
            }
            if (rec->kind != RecordKind::Send) {
                continue;
            }
            if (rec->chunk_off == 0) {
                if (send_left != 0) {
                    throw ProtocolError("BSMP message from " + from + " cut short");
                }
                if (rec->a != static_cast<std::uint64_t>(tagsize_)) {
                    throw ProtocolError("BSMP message from " + from + " with a tag of " +
                                        std::to_string(rec->a) + " bytes (the tag size is " +
                                        std::to_string(tagsize_) + ")");
                }
                if (rec->a > rec->total) {
                    throw ProtocolError("BSMP message shorter than its tag");
                }
                BsmpQueue::Message msg;
                msg.src = static_cast<int>(src);
                msg.tag_bytes = rec->a;
                msg.data.reserve(
                    static_cast<std::size_t>(std::min<std::uint64_t>(rec->total, stream_bytes)));
                messages.push_back(std::move(msg));
                send_left = rec->total;
            }
            if (messages.empty() || messages.back().src != static_cast<int>(src) ||
                messages.back().data.size() != rec->chunk_off) {
                throw ProtocolError("BSMP message continued out of order");
            }
            auto &d = messages.back().data;
            d.insert(d.end(), rec->chunk.begin(), rec->chunk.end());
            send_left -= rec->chunk.size();
        }
    }
    if (send_left != 0) {
        throw ProtocolError("BSMP message from " + from + " cut short");
    }
}

}  // namespace bsp::rt
