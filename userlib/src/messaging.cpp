#include "messaging.hpp"

#include <map>
#include <string>

#include "pacing.hpp"

namespace bsp::rt {

std::uint64_t Outgoing::bytes() const {
    std::uint64_t n = 0;
    for (const auto &r : records)
        n += r.data.size();
    return n;
}

Messaging::Messaging(int pid, int nprocs, Transport *transport, MessagingConfig cfg)
    : pid_(pid), nprocs_(nprocs), transport_(transport), cfg_(cfg) {
    if (nprocs_ > 1 && cfg_.unit_bytes == 0)
        cfg_.unit_bytes = transport_->max_message_bytes();
}

void Messaging::send(int dst, std::vector<std::byte> msg, unsigned flags) {
    stats_.messages_sent++;
    stats_.bytes_sent += msg.size();
    transport_->send(dst, std::move(msg), flags);
}

bool Messaging::matches(const Received &r, MsgType type, std::uint64_t superstep, std::int64_t aux,
                        int src) const {
    if (src >= 0 && r.src != src)
        return false;
    Reader rd(r.bytes);
    MsgHeader h = read_header(rd);
    if (h.superstep + 1 < superstep || h.superstep > superstep + 1)
        throw ProtocolError("messaging-layer message of superstep " + std::to_string(h.superstep) +
                            " from process " + std::to_string(r.src) + " during superstep " +
                            std::to_string(superstep));
    return h.type == type && h.superstep == superstep && (aux < 0 || h.aux == aux);
}

Received Messaging::take(MsgType type, std::uint64_t superstep, std::int64_t aux, int src) {
    for (auto it = stash_.begin(); it != stash_.end(); ++it) {
        if (matches(*it, type, superstep, aux, src)) {
            Received r = std::move(*it);
            stash_.erase(it);
            return r;
        }
    }
    for (;;) {
        auto r = transport_->receive();
        if (!r)
            throw TornDown();
        if (r->src < 0 || r->src >= nprocs_ || r->src == pid_)
            throw ProtocolError("message from an unknown process");
        if (matches(*r, type, superstep, aux, src))
            return std::move(*r);
        stash_.push_back(std::move(*r));
    }
}

Received Messaging::take_any(MsgType type, std::uint64_t superstep) {
    return take(type, superstep, -1, -1);
}

std::vector<Contribution> Messaging::barrier(std::uint64_t superstep, const Contribution &mine) {
    std::vector<std::optional<Contribution>> known(static_cast<std::size_t>(nprocs_));
    known[static_cast<std::size_t>(pid_)] = mine;
    // Butterfly (recursive doubling) over the largest power of two q <= p: in round r
    // process i exchanges everything it knows with i XOR 2^(r-1). Every channel it uses
    // carries traffic both ways, so acknowledgements ride on barrier messages. The p - q
    // processes above q first hand their contribution to i - q (round 0) and receive the
    // result from it at the end (round log2(q) + 1).
    auto merge = [&](const Received &r) {
        Reader rd(r.bytes);
        read_header(rd);
        decode_barrier(rd, known);
    };
    int q = 1;
    while (q * 2 <= nprocs_)
        q *= 2;
    std::uint32_t rounds = 0;
    for (int d = 1; d < q; d *= 2)
        ++rounds;
    const std::uint32_t last_round = rounds + 1;
    if (pid_ >= q) {
        send(pid_ - q, encode_barrier(superstep, 0, known), Transport::kSync);
        merge(take(MsgType::Barrier, superstep, last_round, pid_ - q));
    } else {
        if (pid_ + q < nprocs_)
            merge(take(MsgType::Barrier, superstep, 0, pid_ + q));
        std::uint32_t round = 1;
        for (int d = 1; d < q; d *= 2, ++round) {
            const int partner = pid_ ^ d;
            send(partner, encode_barrier(superstep, round, known), Transport::kSync);
            merge(take(MsgType::Barrier, superstep, round, partner));
        }
        if (pid_ + q < nprocs_)
            send(pid_ + q, encode_barrier(superstep, last_round, known), Transport::kSync);
    }
    std::vector<Contribution> all;
    all.reserve(known.size());
    for (auto &c : known) {
        if (!c)
            throw ProtocolError("barrier completed without every contribution");
        all.push_back(std::move(*c));
    }
    if (transport_)
        transport_->barrier_completed(superstep);
    return all;
}

std::vector<std::vector<std::vector<std::byte>>> Messaging::exchange(
    std::uint64_t superstep, const BitMatrix &m, const std::vector<Outgoing> &out,
    const GetServer &serve) {
    const auto n = static_cast<std::size_t>(nprocs_);
    std::vector<std::vector<std::vector<std::byte>>> in(n);
    stats_ = SuperstepStats{};
    if (nprocs_ == 1)
        return in;

    // Total exchange of counts among the processes that communicate.
    for (int j = 0; j < nprocs_; ++j) {
        if (j == pid_ || !m.get(pid_, j))
            continue;
        const Outgoing &o = out[static_cast<std::size_t>(j)];
        Counts c;
        c.data_bytes = o.bytes();
        c.records = static_cast<std::uint32_t>(o.records.size());
        c.gets = o.gets;
        send(j, encode_counts(superstep, c));
    }
    std::vector<Counts> counts(n);
    for (int k = 0; k < nprocs_; ++k) {
        if (k == pid_ || !m.get(k, pid_))
            continue;
        Received r = take(MsgType::Counts, superstep, -1, k);
        Reader rd(r.bytes);
        read_header(rd);
        counts[static_cast<std::size_t>(k)] = decode_counts(rd);
    }

    // Expected data streams: from k when k has puts/sends for us, or we asked k for data.
    std::vector<bool> expect(n, false);
    for (int k = 0; k < nprocs_; ++k) {
        if (k == pid_)
            continue;
        const auto ku = static_cast<std::size_t>(k);
        std::uint64_t bytes = counts[ku].data_bytes;
        for (const auto &g : out[ku].gets)
            bytes += g.nbytes;
        expect[ku] = counts[ku].records > 0 || !out[ku].gets.empty();
        if (expect[ku]) {
            // A unit holds at most unit_bytes - kUnitHeaderBytes bytes of records, and
            // every record costs kRecordHeaderBytes more than its data: a lower bound.
            const std::uint64_t records = counts[ku].records + out[ku].gets.size();
            const std::uint64_t room = cfg_.unit_bytes - kUnitHeaderBytes;
            const std::uint64_t units = (bytes + records * kRecordHeaderBytes + room - 1) / room;
            transport_->expect_from(k, static_cast<std::uint32_t>(units), bytes);
        }
    }

    // Pacing from the global load, then the data streams in schedule order.
    stats_.pacing_rate = pacing_rate(m, pid_, cfg_.schedule, cfg_.link_rate);
    transport_->set_pacing_rate(stats_.pacing_rate);
    for (int j : destination_order(cfg_.schedule, pid_, nprocs_, superstep, cfg_.seed)) {
        const auto ju = static_cast<std::size_t>(j);
        const Outgoing &o = out[ju];
        const auto &requests = counts[ju].gets;
        if (o.records.empty() && requests.empty())
            continue;
        UnitPacker packer(superstep, cfg_.unit_bytes, cfg_.combine);
        for (const auto &r : o.records)
            packer.add(r.kind, r.a, r.b, r.data);
        for (const auto &g : requests)
            packer.add(RecordKind::Reply, g.id, 0, serve(j, g));
        auto units = packer.finish();
        stats_.send_order.push_back(j);
        stats_.units_sent += units.size();
        for (std::size_t u = 0; u < units.size(); ++u)
            send(j, std::move(units[u]), u + 1 == units.size() ? Transport::kLast : 0);
    }

    // Completion by counting: every expected stream announces its number of units. The
    // count comes from the peer: units are kept by index as they arrive (memory grows with
    // what was received, never with what was announced).
    std::vector<std::uint32_t> announced(n, 0);
    std::vector<std::map<std::uint32_t, std::vector<std::byte>>> arrived(n);
    std::size_t pending = 0;
    for (std::size_t k = 0; k < n; ++k)
        pending += expect[k] ? 1 : 0;
    while (pending > 0) {
        Received r = take_any(MsgType::Data, superstep);
        const auto ku = static_cast<std::size_t>(r.src);
        if (!expect[ku])
            throw ProtocolError("data from process " + std::to_string(r.src) +
                                " which announced none");
        Reader rd(r.bytes);
        MsgHeader h = read_header(rd);
        UnitInfo info = read_unit_info(rd);
        if (announced[ku] == 0)
            announced[ku] = info.count;
        auto &units = arrived[ku];
        if (info.count != announced[ku] || h.aux >= info.count || !in[ku].empty() ||
            units.count(h.aux) != 0)
            throw ProtocolError("inconsistent data unit from process " + std::to_string(r.src));
        units.emplace(h.aux, std::move(r.bytes));
        if (units.size() == announced[ku]) {
            in[ku].reserve(units.size());
            for (auto &u : units)
                in[ku].push_back(std::move(u.second));
            units.clear();
            --pending;
        }
    }
    transport_->flush_sends();
    return in;
}

}  // namespace bsp::rt
