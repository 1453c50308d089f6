#include "messaging.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "pacing.hpp"

namespace bsp::rt {

std::uint64_t Outgoing::bytes() const {
    std::uint64_t n = 0;
    for (const auto &r : records) {
        n += r.data.size();
    }
    return n;
}

namespace {

// The butterfly of barrier(): the largest power of two q <= p and its number of rounds.
struct Butterfly {
    int q = 1;
    std::uint32_t rounds = 0;
    explicit Butterfly(int nprocs) {
        while (q * 2 <= nprocs) {
            q *= 2;
        }
        for (int d = 1; d < q; d *= 2) {
            ++rounds;
        }
    }
    std::uint32_t last_round() const { return rounds + 1; }
};

// The tree of finish(): process i's parent (-1: the root, process 0) and children. Every edge
// is a butterfly channel: for i >= q the parent is i - q (the fold-in partner); for i < q the
// binomial tree over q (the parent is i without its lowest set bit), plus the child i + q.
int end_parent(int i, int q) {
    if (i >= q) {
        return i - q;
    }
    return i == 0 ? -1 : (i & (i - 1));
}

std::vector<int> end_children(int i, int q, int nprocs) {
    std::vector<int> c;
    if (i >= q) {
        return c;
    }
    const int low = i == 0 ? q : (i & -i);
    for (int d = 1; d < low; d *= 2) {
        c.push_back(i + d);
    }
    if (i + q < nprocs) {
        c.push_back(i + q);
    }
    return c;
}

// Rounds of finish()'s messages (the header's aux), beyond any butterfly round.
constexpr std::uint32_t kEndUp = 0xfffffffeU;
constexpr std::uint32_t kEndDown = 0xffffffffU;

// The smallest unit a process may use (BSP_UNIT_BYTES, Documentation/bsplib.rst).
constexpr std::uint64_t kSmallestUnitBytes = 256;

}  // namespace

Messaging::Messaging(int pid, int nprocs, Transport *transport, MessagingConfig cfg)
    : pid_(pid), nprocs_(nprocs), transport_(transport), cfg_(cfg) {
    if (nprocs_ > 1 && cfg_.unit_bytes == 0) {
        cfg_.unit_bytes = transport_->max_message_bytes();
    }
    // The (sender, round) pairs of the barrier messages this process receives.
    const Butterfly b(nprocs_);
    if (pid_ >= b.q) {
        barrier_from_.insert({pid_ - b.q, b.last_round()});
    } else {
        if (pid_ + b.q < nprocs_) {
            barrier_from_.insert({pid_ + b.q, 0});
        }
        std::uint32_t round = 1;
        for (int d = 1; d < b.q; d *= 2, ++round) {
            barrier_from_.insert({pid_ ^ d, round});
        }
    }
    for (int c : end_children(pid_, b.q, nprocs_)) {
        barrier_from_.insert({c, kEndUp});
    }
    if (const int parent = end_parent(pid_, b.q); parent >= 0 && nprocs_ > 1) {
        barrier_from_.insert({parent, kEndDown});
    }
    peers_.resize(static_cast<std::size_t>(nprocs_));
}

void Messaging::finish(std::uint64_t superstep) {
    // A job on one host with a shared board has no engine to settle anything.
    if (nprocs_ == 1 || !transport_ || transport_->board_blob_bytes() > 0) {
        return;
    }
    start_superstep(superstep);
    in_barrier_ = true;
    const Butterfly b(nprocs_);
    const int parent = end_parent(pid_, b.q);
    const std::vector<int> children = end_children(pid_, b.q, nprocs_);
    // Acknowledged at once by the receiver: no later traffic would (Documentation/protocol.rst).
    const unsigned flags = Transport::kSync | Transport::kLast;
    auto message = [&](std::uint32_t round) {
        std::vector<std::byte> out;
        Writer w(out);
        write_header(w, {MsgType::Barrier, superstep, round});
        return out;
    };
    auto receive = [&](std::uint32_t round, int from) {
        Received r = take(MsgType::Barrier, superstep, round, from);
        Reader rd(r.bytes);
        read_header(rd);
        if (rd.remaining() != 0) {
            throw ProtocolError("end-of-job message with a body");
        }
    };
    for (int c : children) {
        receive(kEndUp, c);
    }
    if (parent >= 0) {
        send(parent, message(kEndUp), flags);
        receive(kEndDown, parent);
    }
    // Every process completed the last barrier (and received its messages): the transport
    // settles them (the epoch rule for barrier traffic).
    in_barrier_ = false;
    transport_->barrier_completed(superstep);
    for (int c : children) {
        send(c, message(kEndDown), flags);
    }
}

std::uint64_t Messaging::stream_bound(const PeerStep &p) const {
    // UnitPacker: every chunk of a record but its first and last fills a fresh unit's room
    // (unit minus unit header minus record header), so a stream of R records (puts, sends
    // and replies to our gets) of D bytes has at most 2R + D / room + 1 chunks, hence
    // units, each with its headers. The sender's unit is at least kSmallestUnitBytes.
    const std::uint64_t records = p.records + p.our_gets;
    const std::uint64_t bytes = p.data_bytes + p.our_get_bytes;
    const std::uint64_t unit = std::min<std::uint64_t>(cfg_.unit_bytes, kSmallestUnitBytes);
    const std::uint64_t headers = kUnitHeaderBytes + kWideRecordHeaderBytes;
    const std::uint64_t room = unit > headers ? unit - headers : 1;
    const std::uint64_t chunks = 2 * records + bytes / room + 1;
    return bytes + chunks * headers;
}

void Messaging::start_superstep(std::uint64_t superstep) {
    if (superstep == cur_) {
        return;
    }
    cur_ = superstep;
    std::fill(peers_.begin(), peers_.end(), PeerStep{});
    fan_in_ = 0;
    counts_seen_ = 0;
    barrier_seen_.erase(barrier_seen_.begin(), barrier_seen_.lower_bound({superstep, -1, 0}));
    // Only barrier messages of this superstep can have been kept from the last one.
    for (auto it = stash_.begin(); it != stash_.end();) {
        Reader rd(it->bytes);
        if (read_header(rd).superstep < superstep) {
            stash_stats_.dropped++;
            stash_stats_.dropped_bytes += it->bytes.size();
            stash_bytes_ -= it->bytes.size();
            it = stash_.erase(it);
        } else {
            ++it;
        }
    }
}

bool Messaging::admit(const Received &r, const MsgHeader &h) {
    PeerStep &p = peers_[static_cast<std::size_t>(r.src)];
    if (h.type == MsgType::Barrier) {
        // This superstep's while its barrier runs, or the next one's (a peer that is
        // already there): each (sender, round) of the butterfly once.
        if (!(h.superstep == cur_ + 1 || (h.superstep == cur_ && in_barrier_))) {
            return false;
        }
        if (!barrier_from_.count({r.src, h.aux})) {
            return false;
        }
        return barrier_seen_.insert({h.superstep, r.src, h.aux}).second;
    }
    if (h.superstep != cur_) {
        return false;  // counts and data only ever arrive for the superstep being run
    }
    if (h.type == MsgType::Counts) {
        // Once per sender; once the barrier told the fan-in, from that many senders.
        if (p.counts || (exchanging_ && counts_seen_ >= fan_in_)) {
            return false;
        }
        counts_seen_++;
        Reader rd(r.bytes);
        read_header(rd);
        const Counts c = decode_counts(rd);
        p.counts = true;
        p.records = c.records;
        p.data_bytes = c.data_bytes;
        return true;
    }
    // Data: after the sender's counts (the transport keeps each sender's order: data before
    // counts means a sender with no counts for us), or replies to our gets; within what they
    // announce.
    const bool announced = p.counts || (exchanging_ && p.our_gets > 0);
    if (!announced || p.data_kept + r.bytes.size() > stream_bound(p)) {
        return false;
    }
    p.data_kept += r.bytes.size();
    return true;
}

void Messaging::stash_or_drop(Received r) {
    Reader rd(r.bytes);
    const MsgHeader h = read_header(rd);
    if (h.superstep + 1 < cur_ || h.superstep > cur_ + 1) {
        throw ProtocolError("messaging-layer message of superstep " + std::to_string(h.superstep) +
                            " from process " + std::to_string(r.src) + " during superstep " +
                            std::to_string(cur_));
    }
    if (!admit(r, h)) {
        stash_stats_.dropped++;
        stash_stats_.dropped_bytes += r.bytes.size();
        return;
    }
    stash_bytes_ += r.bytes.size();
    stash_stats_.peak_bytes = std::max(stash_stats_.peak_bytes, stash_bytes_);
    stash_.push_back(std::move(r));
}

void Messaging::send(int dst, std::vector<std::byte> msg, unsigned flags) {
    stats_.messages_sent++;
    stats_.bytes_sent += msg.size();
    transport_->send(dst, std::move(msg), flags);
}

bool Messaging::matches(const Received &r, MsgType type, std::uint64_t superstep, std::int64_t aux,
                        int src) const {
    if (src >= 0 && r.src != src) {
        return false;
    }
    Reader rd(r.bytes);
    MsgHeader h = read_header(rd);
    return h.type == type && h.superstep == superstep && (aux < 0 || h.aux == aux);
}

Received Messaging::take(MsgType type, std::uint64_t superstep, std::int64_t aux, int src) {
    for (auto it = stash_.begin(); it != stash_.end(); ++it) {
        if (matches(*it, type, superstep, aux, src)) {
            Received r = std::move(*it);
            stash_.erase(it);
            stash_bytes_ -= r.bytes.size();
            return r;
        }
    }
    for (;;) {
        auto r = transport_->receive();
        if (!r) {
            throw TornDown();
        }
        if (r->src < 0 || r->src >= nprocs_ || r->src == pid_) {
            throw ProtocolError("message from an unknown process");
        }
        if (matches(*r, type, superstep, aux, src)) {
            // What the stash admits later depends on what was taken too (a second barrier
            // message of the round, the sender's counts).
            Reader rd(r->bytes);
            const MsgHeader h = read_header(rd);
            if (h.type != MsgType::Data) {
                (void)admit(*r, h);
            }
            return std::move(*r);
        }
        stash_or_drop(std::move(*r));
    }
}

bool Messaging::stashed(MsgType type, std::uint64_t superstep, std::int64_t aux, int src) const {
    return std::any_of(stash_.begin(), stash_.end(),
                       [&](const Received &r) { return matches(r, type, superstep, aux, src); });
}

Received Messaging::take_any(MsgType type, std::uint64_t superstep) {
    return take(type, superstep, -1, -1);
}

namespace {

// Fan-in counters of the barrier: the counter of pid j lives in slot j mod q of the butterfly
// (slot s holds pids s and s + q). In the round of distance d a process hands its partner the
// slots on the partner's side of every distance done so far (recursive halving): after the
// last round it holds the sums of its own slot only.
void append_slot(std::vector<std::uint32_t> &out, const std::vector<std::uint32_t> &fan, int s,
                 int q) {
    out.push_back(fan[static_cast<std::size_t>(s)]);
    if (static_cast<std::size_t>(s + q) < fan.size()) {
        out.push_back(fan[static_cast<std::size_t>(s + q)]);
    }
}

}  // namespace

// The barrier through the transport's shared board (Documentation/messaging.rst, "The
// barrier on one host"): every process posts its summary, its row of the communication
// matrix and, when out is given, its counts for every destination; after the board's one
// allgather every process combines the same p blobs (the result is that of the butterfly)
// and takes the counts addressed to it, so that exchange() skips the round of counts
// messages when every process gave them. Puts and sends for a destination travel in the
// board too, packed in units as in a stream, while the blob has room for them: a
// superstep whose data all fits is one allgather.
std::optional<BarrierResult> Messaging::board_barrier(std::uint64_t superstep,
                                                      const Contribution &mine,
                                                      const std::vector<Outgoing> *out) {
    start_superstep(superstep);
    const auto n = static_cast<std::size_t>(nprocs_);
    BarrierMsg msg;
    msg.summary = summarize(static_cast<std::uint32_t>(pid_), mine);
    msg.counters.assign(n, 0);
    for (std::size_t j = 0; j < n && j < mine.row.size(); ++j) {
        msg.counters[j] = j != static_cast<std::size_t>(pid_) && mine.row[j] ? 1 : 0;
    }
    std::vector<std::byte> &blob = board_blob_;
    blob.clear();
    std::vector<bool> inline_out(n, false);
    {
        Writer w(blob);
        const auto b = encode_barrier(superstep, 0, msg);
        w.put<std::uint32_t>(static_cast<std::uint32_t>(b.size()));
        w.bytes(b);
        w.put<std::uint8_t>(out ? 1 : 0);
        std::vector<std::vector<std::byte>> counts_of(n);
        std::size_t room = transport_->board_blob_bytes();
        room = room > blob.size() ? room - blob.size() : 0;
        for (std::size_t j = 0; out && j < n; ++j) {
            const Outgoing &o = (*out)[j];
            if (j != static_cast<std::size_t>(pid_) && !o.empty()) {
                Counts c;
                c.data_bytes = o.bytes();
                c.records = static_cast<std::uint32_t>(o.records.size());
                c.gets = o.gets;
                counts_of[j] = encode_counts(superstep, c);
            }
            const std::size_t need = 4 + counts_of[j].size() + 4;
            room = room > need ? room - need : 0;
        }
        for (std::size_t j = 0; out && j < n; ++j) {
            const Outgoing &o = (*out)[j];
            w.put<std::uint32_t>(static_cast<std::uint32_t>(counts_of[j].size()));
            w.bytes(counts_of[j]);
            std::vector<std::vector<std::byte>> units;
            std::size_t size = 0;
            if (j != static_cast<std::size_t>(pid_) && !o.records.empty() && o.bytes() < room) {
                UnitPacker packer(superstep, cfg_.unit_bytes, cfg_.combine);
                packer.expect(o.bytes(), o.records.size());
                for (const auto &r : o.records) {
                    packer.add(r.kind, r.a, r.b, r.data);
                }
                units = packer.finish();
                for (const auto &u : units) {
                    size += 4 + u.size();
                }
            }
            if (units.empty() || size > room) {
                w.put<std::uint32_t>(0);
                continue;
            }
            room -= size;
            inline_out[j] = true;
            w.put<std::uint32_t>(static_cast<std::uint32_t>(units.size()));
            for (const auto &u : units) {
                w.put<std::uint32_t>(static_cast<std::uint32_t>(u.size()));
                w.bytes(u);
            }
        }
    }
    const BoardGather g = transport_->board_allgather(blob);
    if (g.overflow) {
        return std::nullopt;
    }
    if (g.blobs.size() != n) {
        throw ProtocolError("shared board with a bad number of blobs");
    }
    BarrierResult res;
    std::vector<Counts> counts(n);
    UnitsBySource inline_in(n);
    std::uint32_t senders = 0;  // processes whose counts name this one
    bool all_counts = true;
    for (std::size_t k = 0; k < n; ++k) {
        Reader rd(g.blobs[k]);
        Reader br(rd.bytes(rd.get<std::uint32_t>()));
        const MsgHeader h = read_header(br);
        if (h.type != MsgType::Barrier || h.superstep != superstep) {
            throw ProtocolError("shared board blob of process " + std::to_string(k) +
                                " is not of this barrier");
        }
        BarrierMsg in = decode_barrier(br, n);
        if (in.counters.size() != n) {
            throw ProtocolError("barrier message with a bad number of counters");
        }
        res.fan_in += in.counters[static_cast<std::size_t>(pid_)];
        if (k == 0) {
            res.all = std::move(in.summary);
        } else {
            merge_summary(res.all, in.summary);
        }
        const bool has = rd.get<std::uint8_t>() != 0;
        all_counts = all_counts && has;
        for (std::size_t j = 0; has && j < n; ++j) {
            const auto len = rd.get<std::uint32_t>();
            Reader cr(rd.bytes(len));
            const auto nunits = rd.get<std::uint32_t>();
            if (nunits > rd.remaining() / 4) {
                throw ProtocolError("shared board blob of process " + std::to_string(k) +
                                    " with a bad number of units");
            }
            for (std::uint32_t u = 0; u < nunits; ++u) {
                auto ub = rd.bytes(rd.get<std::uint32_t>());
                if (j == static_cast<std::size_t>(pid_)) {
                    inline_in[k].emplace_back(ub.begin(), ub.end());
                }
            }
            if (j != static_cast<std::size_t>(pid_) || (len == 0 && nunits == 0)) {
                continue;
            }
            const MsgHeader ch = read_header(cr);
            if (ch.type != MsgType::Counts || ch.superstep != superstep ||
                k == static_cast<std::size_t>(pid_)) {
                throw ProtocolError("shared board blob of process " + std::to_string(k) +
                                    " with bad counts");
            }
            counts[k] = decode_counts(cr);
            if (nunits > 0 && counts[k].records == 0) {
                throw ProtocolError("shared board blob of process " + std::to_string(k) +
                                    " with units and no records");
            }
            PeerStep &p = peers_[k];
            p.counts = true;
            p.records = counts[k].records;
            p.data_bytes = counts[k].data_bytes;
            ++senders;
        }
    }
    if (res.all.first != 0 || res.all.members != static_cast<std::uint32_t>(nprocs_) ||
        res.fan_in >= static_cast<std::uint32_t>(nprocs_)) {
        throw ProtocolError("barrier completed without every contribution");
    }
    if (all_counts) {
        if (senders != res.fan_in) {
            throw ProtocolError("shared board counts disagree with the fan-in");
        }
        counts_seen_ = senders;
        board_counts_ = std::move(counts);
        board_counts_step_ = superstep;
        board_inline_out_ = std::move(inline_out);
        board_inline_in_ = std::move(inline_in);
    } else {
        // Counts go by messages: forget what was read.
        for (auto &p : peers_) {
            p = PeerStep{};
        }
    }
    transport_->barrier_completed(superstep);
    return res;
}

BarrierResult Messaging::barrier(std::uint64_t superstep, const Contribution &mine,
                                 const std::vector<Outgoing> *out) {
    if (transport_ && nprocs_ > 1 && transport_->board_blob_bytes() > 0) {
        if (auto res = board_barrier(superstep, mine, out)) {
            return *res;
        }
    }
    start_superstep(superstep);
    in_barrier_ = true;
    // Butterfly (recursive doubling) over the largest power of two q <= p: in round r
    // process i exchanges with i XOR 2^(r-1) the summary of everything it has combined (an
    // all-reduce: constant size) and the fan-in counters of the partner's half of its
    // slots (a reduce-scatter: p/2, p/4, ... counters). Every channel it uses carries
    // traffic both ways, so acknowledgements ride on barrier messages. The p - q processes
    // above q first hand their summary and counters to i - q (round 0) and receive the
    // result from it at the end (round log2(q) + 1).
    const auto n = static_cast<std::size_t>(nprocs_);
    std::vector<std::uint32_t> fan(n, 0);
    for (std::size_t j = 0; j < n && j < mine.row.size(); ++j) {
        fan[j] = j != static_cast<std::size_t>(pid_) && mine.row[j] ? 1 : 0;
    }
    BarrierMsg msg;
    msg.summary = summarize(static_cast<std::uint32_t>(pid_), mine);
    const unsigned flags = Transport::kSync;
    auto receive = [&](std::uint32_t round, int from) {
        // The round's message, unless it is here already, is expected: a lost packet of it
        // is prodded for after a round trip instead of waiting for the sender's timeout.
        if (!stashed(MsgType::Barrier, superstep, round, from)) {
            transport_->expect_barrier_message(from);
        }
        Received r = take(MsgType::Barrier, superstep, round, from);
        Reader rd(r.bytes);
        read_header(rd);
        return decode_barrier(rd, n);
    };
    const Butterfly b(nprocs_);
    const int q = b.q;
    const std::uint32_t last_round = b.last_round();
    BarrierResult res;
    if (pid_ >= q) {
        msg.counters = fan;
        send(pid_ - q, encode_barrier(superstep, 0, msg), flags);
        BarrierMsg back = receive(last_round, pid_ - q);
        if (back.counters.size() != 1) {
            throw ProtocolError("barrier message with a bad number of counters");
        }
        res.all = std::move(back.summary);
        res.fan_in = back.counters[0];
    } else {
        if (pid_ + q < nprocs_) {
            BarrierMsg in = receive(0, pid_ + q);
            if (in.counters.size() != n) {
                throw ProtocolError("barrier message with a bad number of counters");
            }
            for (std::size_t j = 0; j < n; ++j) {
                fan[j] += in.counters[j];
            }
            merge_summary(msg.summary, in.summary);
        }
        std::uint32_t round = 1;
        int mask = 0;  // the distances done, this one included
        for (int d = 1; d < q; d *= 2, ++round) {
            const int partner = pid_ ^ d;
            mask |= d;
            BarrierMsg out;
            out.summary = msg.summary;
            std::size_t expected = 0;
            for (int s = 0; s < q; ++s) {
                if ((s & mask) == (partner & mask)) {
                    append_slot(out.counters, fan, s, q);
                } else if ((s & mask) == (pid_ & mask)) {
                    expected += s + q < nprocs_ ? 2 : 1;
                }
            }
            send(partner, encode_barrier(superstep, round, out), flags);
            BarrierMsg in = receive(round, partner);
            if (in.counters.size() != expected) {
                throw ProtocolError("barrier message with a bad number of counters");
            }
            std::size_t k = 0;
            for (int s = 0; s < q; ++s) {
                if ((s & mask) == (pid_ & mask)) {
                    fan[static_cast<std::size_t>(s)] += in.counters[k++];
                    if (s + q < nprocs_) {
                        fan[static_cast<std::size_t>(s + q)] += in.counters[k++];
                    }
                }
            }
            merge_summary(msg.summary, in.summary);
        }
        if (pid_ + q < nprocs_) {
            BarrierMsg out;
            out.summary = msg.summary;
            out.counters.push_back(fan[static_cast<std::size_t>(pid_ + q)]);
            send(pid_ + q, encode_barrier(superstep, last_round, out), flags);
        }
        res.all = std::move(msg.summary);
        res.fan_in = fan[static_cast<std::size_t>(pid_)];
    }
    in_barrier_ = false;
    if (res.all.first != 0 || res.all.members != static_cast<std::uint32_t>(nprocs_) ||
        res.fan_in >= static_cast<std::uint32_t>(nprocs_)) {
        throw ProtocolError("barrier completed without every contribution");
    }
    if (transport_) {
        transport_->barrier_completed(superstep);
    }
    return res;
}

UnitsBySource Messaging::exchange(std::uint64_t superstep, const BarrierResult &b,
                                  const std::vector<Outgoing> &out, const GetServer &serve) {
    stats_ = SuperstepStats{};
    if (nprocs_ == 1) {
        return UnitsBySource(1);
    }
    start_superstep(superstep);
    exchanging_ = true;
    fan_in_ = b.fan_in;
    announced_.assign(static_cast<std::size_t>(nprocs_), 0);
    for (int k = 0; k < nprocs_; ++k) {
        PeerStep &p = peers_[static_cast<std::size_t>(k)];
        p.our_gets = out[static_cast<std::size_t>(k)].gets.size();
        for (const auto &g : out[static_cast<std::size_t>(k)].gets) {
            p.our_get_bytes += g.nbytes;
        }
    }
    if (counts_seen_ > fan_in_) {
        throw ProtocolError("counts from more processes than the barrier announced");
    }
    std::vector<Counts> counts;
    std::vector<bool> records_sent(static_cast<std::size_t>(nprocs_), false);
    UnitsBySource inline_in(static_cast<std::size_t>(nprocs_));
    // Pacing from the global load, before anything of this superstep is sent.
    stats_.pacing_rate =
        pacing_rate(cfg_.schedule, nprocs_, static_cast<int>(b.all.senders), cfg_.link_rate);
    transport_->set_pacing_rate(stats_.pacing_rate);
    // Streams follow counts when nobody asked for a get (the barrier says so): no stream
    // then waits for a counts message, so each destination gets its stream right behind its
    // counts instead of after all of ours arrived (Documentation/messaging.rst). A superstep
    // in which nobody sends anything has nothing to follow.
    const bool by_board = board_counts_ && board_counts_step_ == superstep;
    const bool follow = !by_board && !b.all.any_gets && b.all.senders > 0;
    if (by_board) {
        counts = std::move(*board_counts_);
        records_sent = std::move(board_inline_out_);
        inline_in = std::move(board_inline_in_);
    } else {
        if (follow) {
            transport_->streams_follow_counts(true);
        }
        send_counts(superstep, out, follow);
        counts = receive_counts(superstep, b.fan_in, follow);
        for (int k = 0; follow && k < nprocs_; ++k) {
            if (!counts[static_cast<std::size_t>(k)].gets.empty()) {
                throw ProtocolError("get requests from process " + std::to_string(k) +
                                    " in a superstep whose barrier announced none");
            }
        }
    }
    board_counts_.reset();
    board_inline_out_.clear();
    board_inline_in_.clear();
    // A source whose puts and sends came in the board sends a stream only for our gets.
    for (std::size_t k = 0; k < counts.size(); ++k) {
        if (!inline_in[k].empty()) {
            counts[k].records = 0;
            counts[k].data_bytes = 0;
        }
    }
    std::vector<Expected> expect = expect_streams(superstep, counts, out, !by_board);
    if (!follow) {
        // The data streams in schedule order, with the replies to the gets the counts asked.
        for (int j : destination_order(cfg_.schedule, pid_, nprocs_, superstep, cfg_.seed)) {
            const auto ju = static_cast<std::size_t>(j);
            send_stream(superstep, j, out[ju], counts[ju].gets, serve,
                        !(ju < records_sent.size() && records_sent[ju]));
        }
    }
    UnitsBySource in = receive_streams(superstep, std::move(expect));
    for (std::size_t k = 0; k < in.size(); ++k) {
        if (!inline_in[k].empty()) {
            // The board's units first: puts and sends precede the replies in a stream.
            for (auto &u : in[k]) {
                inline_in[k].push_back(std::move(u));
            }
            in[k] = std::move(inline_in[k]);
        }
    }
    transport_->flush_sends();
    if (follow) {
        transport_->streams_follow_counts(false);
    }
    exchanging_ = false;
    return in;
}

// Total exchange of counts among the processes that communicate, first half: our counts
// messages, in the schedule's destination order, as the data: in pid order every process
// would send its first counts message to process 0 at once, then to 1, ... (an incast at
// each destination in turn instead of one sender per destination at a time). With follow,
// each destination's data stream right behind its counts.
void Messaging::send_counts(std::uint64_t superstep, const std::vector<Outgoing> &out,
                            bool follow) {
    for (int j : destination_order(cfg_.schedule, pid_, nprocs_, superstep, cfg_.seed)) {
        const Outgoing &o = out[static_cast<std::size_t>(j)];
        if (o.empty()) {
            continue;
        }
        Counts c;
        c.data_bytes = o.bytes();
        c.records = static_cast<std::uint32_t>(o.records.size());
        c.gets = o.gets;
        send(j, encode_counts(superstep, c));
        if (follow) {
            send_stream(superstep, j, o, {}, nullptr, true);
        }
    }
}

// Second half: the counts sent to us. Returns, per source pid, its counts (zero for those
// that send us nothing).
std::vector<Counts> Messaging::receive_counts(std::uint64_t superstep, std::uint32_t fan_in,
                                              bool follow) {
    // The barrier told how many processes send to us, not which: the first fan_in counts
    // messages of this superstep, one per sender (admit() keeps the stash to that).
    std::vector<Counts> counts(static_cast<std::size_t>(nprocs_));
    std::vector<bool> got(static_cast<std::size_t>(nprocs_), false);
    for (std::uint32_t i = 0; i < fan_in; ++i) {
        Received r = take_any(MsgType::Counts, superstep);
        const auto k = static_cast<std::size_t>(r.src);
        if (got[k]) {
            throw ProtocolError("two counts messages from process " + std::to_string(r.src));
        }
        got[k] = true;
        Reader rd(r.bytes);
        read_header(rd);
        counts[k] = decode_counts(rd);
        // Its stream is right behind it (no get requests in this superstep: nothing of ours
        // for it to reply to): expected from now on, so that the engine prods for a lost
        // part of it as soon as the channel is quiet, not once every count is here.
        if (follow) {
            announce(r.src, expected_from(counts[k], {}, true, 0));
        }
    }
    return counts;
}

// Expected data streams: from k when k has puts/sends for us, or we asked k for data. Each
// is announced to the transport as the messages k sends us in this superstep in all (its
// counts message, when counts go by messages, and its units: a lower bound, or the exact
// number a unit in the stash gives) and its bytes. A total: units the transport holds and
// we have not taken yet are not expected a second time.
std::vector<Messaging::Expected> Messaging::expect_streams(std::uint64_t superstep,
                                                           const std::vector<Counts> &counts,
                                                           const std::vector<Outgoing> &out,
                                                           bool counts_by_message) {
    const auto n = static_cast<std::size_t>(nprocs_);
    std::vector<Expected> expect(n);
    // The number of units a stream of this superstep has, from a unit in the stash.
    std::vector<std::uint32_t> total(n, 0);
    for (const Received &r : stash_) {
        Reader rd(r.bytes);
        if (const MsgHeader h = read_header(rd);
            h.type == MsgType::Data && h.superstep == superstep) {
            total[static_cast<std::size_t>(r.src)] = read_unit_info(rd).count;
        }
    }
    for (int k = 0; k < nprocs_; ++k) {
        if (k != pid_) {
            const auto ku = static_cast<std::size_t>(k);
            expect[ku] = expected_from(counts[ku], out[ku].gets, counts_by_message, total[ku]);
            announce(k, expect[ku]);
        }
    }
    return expect;
}

Messaging::Expected Messaging::expected_from(const Counts &c,
                                             const std::vector<GetRequest> &our_gets,
                                             bool counts_by_message,
                                             std::uint32_t stream_units) const {
    Expected e;
    e.bytes = c.data_bytes;
    for (const auto &g : our_gets) {
        e.bytes += g.nbytes;
    }
    e.stream = c.records > 0 || !our_gets.empty();
    if (e.stream) {
        // A unit holds at most unit_bytes - kUnitHeaderBytes bytes of records, and every
        // record costs kRecordHeaderBytes more than its data: a lower bound.
        const std::uint64_t records = c.records + our_gets.size();
        const std::uint64_t room = cfg_.unit_bytes - kUnitHeaderBytes;
        e.units = stream_units > 0 ? stream_units
                                   : (e.bytes + records * kRecordHeaderBytes + room - 1) / room;
        // k sent a counts message iff it sends us records or get requests.
        e.counts = counts_by_message && (c.records > 0 || !c.gets.empty());
    }
    return e;
}

void Messaging::announce(int k, const Expected &e) {
    auto &told = announced_[static_cast<std::size_t>(k)];
    if (e.stream && e.messages() != told) {
        told = e.messages();
        transport_->expect_from(k, told, e.bytes);
    }
}

std::uint32_t Messaging::Expected::messages() const {
    return static_cast<std::uint32_t>(
        std::min<std::uint64_t>(units + (counts ? 1 : 0), UINT32_MAX));
}

// The data stream to j: our puts and sends to j (unless `records` is false: they went in
// the shared board), then the replies to j's get requests, packed into units.
void Messaging::send_stream(std::uint64_t superstep, int j, const Outgoing &o,
                            const std::vector<GetRequest> &requests, const GetServer &serve,
                            bool records) {
    records = records && !o.records.empty();
    if (!records && requests.empty()) {
        return;
    }
    UnitPacker packer(superstep, cfg_.unit_bytes, cfg_.combine);
    std::uint64_t bytes = records ? o.bytes() : 0;
    for (const auto &g : requests) {
        bytes += g.nbytes;
    }
    packer.expect(bytes, (records ? o.records.size() : 0) + requests.size());
    for (std::size_t i = 0; records && i < o.records.size(); ++i) {
        const OutRecord &r = o.records[i];
        packer.add(r.kind, r.a, r.b, r.data);
    }
    for (const auto &g : requests) {
        packer.add(RecordKind::Reply, g.id, 0, serve(j, g));
    }
    auto units = packer.finish();
    stats_.send_order.push_back(j);
    stats_.units_sent += units.size();
    for (std::size_t u = 0; u < units.size(); ++u) {
        send(j, std::move(units[u]), u + 1 == units.size() ? Transport::kLast : 0);
    }
}

// Completion by counting: every expected stream announces its number of units. The count
// comes from the peer: units are kept by index as they arrive (memory grows with what was
// received, never with what was announced).
UnitsBySource Messaging::receive_streams(std::uint64_t superstep, std::vector<Expected> expect) {
    const auto n = static_cast<std::size_t>(nprocs_);
    UnitsBySource in(n);
    std::vector<std::uint32_t> announced(n, 0);
    std::vector<std::map<std::uint32_t, DataUnit>> arrived(n);
    std::size_t pending = 0;
    for (std::size_t k = 0; k < n; ++k) {
        pending += expect[k].stream ? 1 : 0;
    }
    while (pending > 0) {
        Received r = take_any(MsgType::Data, superstep);
        const auto ku = static_cast<std::size_t>(r.src);
        if (!expect[ku].stream) {
            throw ProtocolError("data from process " + std::to_string(r.src) +
                                " which announced none");
        }
        Reader rd(r.bytes);
        MsgHeader h = read_header(rd);
        UnitInfo info = read_unit_info(rd);
        if (announced[ku] == 0) {
            announced[ku] = info.count;
            // More units than the lower bound expected: the transport learns the total.
            if (info.count > expect[ku].units) {
                expect[ku].units = info.count;
                announce(r.src, expect[ku]);
            }
        }
        auto &units = arrived[ku];
        if (info.count != announced[ku] || h.aux >= info.count || !in[ku].empty() ||
            units.count(h.aux) != 0) {
            throw ProtocolError("inconsistent data unit from process " + std::to_string(r.src));
        }
        units.emplace(h.aux, std::move(r.bytes));
        if (units.size() == announced[ku]) {
            in[ku].reserve(units.size());
            for (auto &u : units) {
                in[ku].push_back(std::move(u.second));
            }
            units.clear();
            --pending;
        }
    }
    return in;
}

}  // namespace bsp::rt
