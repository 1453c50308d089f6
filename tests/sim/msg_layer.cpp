// The BSPlib messaging layer as a workload of the simulator (see msg_layer.hpp).
#include "msg_layer.hpp"

#include <algorithm>
#include <cstring>

#include "messages.hpp"
#include "pacing.hpp"
#include "schedule.hpp"

namespace bspsim {

namespace {

// Sizes of the messaging layer's encodings (userlib/src/messages.hpp, Documentation/messaging.rst
// "Encodings").
constexpr uint32_t kMsgHeader = 17;                   // magic, type, superstep, aux
constexpr uint32_t kCounts = kMsgHeader + 8 + 4 + 4;  // bytes, records, no get requests
constexpr uint32_t kUnitHeader = kMsgHeader + 4;
constexpr uint32_t kRecordHeader = 25;

// Fan-in counters in the barrier message of `round` from process i (messaging.cpp): round 0
// (i >= q, the fold-in) all p; round r of distance d = 2^(r-1) the slots s < q with
// s = i ^ d (mod 2d), each with one counter and a second for pid s + q < p; the hand-back one.
uint32_t barrier_counters(int i, int round, int p, int q, int log_q) {
    if (round == 0)
        return static_cast<uint32_t>(p);
    if (round == log_q + 1)
        return 1;
    int d = 1 << (round - 1), m = 2 * d, c = (i ^ d) & (m - 1);
    int n = q / m;
    int extra = c < p - q ? (p - q - 1 - c) / m + 1 : 0;
    return static_cast<uint32_t>(n + extra);
}

}  // namespace

MsgPattern msg_total_exchange(uint32_t h) {
    MsgPattern m;
    m.name = "total";
    m.dests = [h](int i, int p) {
        std::vector<std::pair<int, uint32_t>> d;
        if (p < 2)
            return d;
        uint32_t n = static_cast<uint32_t>(p - 1), each = h / n, extra = h % n;
        for (uint32_t t = 1; t <= n; t++)
            d.emplace_back((i + static_cast<int>(t)) % p, each + (t <= extra ? 1 : 0));
        return d;
    };
    return m;
}

MsgPattern msg_sparse(uint32_t h, int fan) {
    MsgPattern m;
    m.name = "sparse";
    m.dests = [h, fan](int i, int p) {
        std::vector<std::pair<int, uint32_t>> d;
        int k = std::min(fan, p - 1);
        for (int t = 1; t <= k; t++)
            d.emplace_back((i + t) % p, h / static_cast<uint32_t>(k));
        return d;
    };
    return m;
}

int MsgLayerRun::barrier_rounds(int p) {
    int q = 1, l = 0;
    while (q * 2 <= p) {
        q *= 2;
        l++;
    }
    return l + (q < p ? 2 : 0);
}

int MsgLayerRun::end_parent(int i, int p) {
    int q = 1;
    while (q * 2 <= p)
        q *= 2;
    if (i >= q)
        return i - q;
    return i == 0 ? -1 : (i & (i - 1));
}

std::vector<int> MsgLayerRun::end_children(int i, int p) {
    int q = 1;
    while (q * 2 <= p)
        q *= 2;
    std::vector<int> c;
    if (i >= q)
        return c;
    int low = i == 0 ? q : (i & -i);
    for (int d = 1; d < low; d *= 2)
        c.push_back(i + d);
    if (i + q < p)
        c.push_back(i + q);
    return c;
}

MsgLayerRun::MsgLayerRun(Sim &sim, MsgPattern pat, int supersteps, uint64_t link_rate,
                         uint32_t unit_bytes)
    : sim_(sim),
      pat_(std::move(pat)),
      supersteps_(supersteps),
      link_rate_(link_rate),
      unit_bytes_(unit_bytes) {
    int p = sim_.nodes();
    while (q_ * 2 <= p) {
        q_ *= 2;
        log_q_++;
    }
    st_.resize(static_cast<size_t>(p));
    ends_.assign(static_cast<size_t>(supersteps_ + 1), 0);
    left_.assign(static_cast<size_t>(supersteps_ + 2), p);
    // The fan-ins and the number of senders the barrier gives every process: the pattern is
    // the same in every superstep, so they and the pacing rates are too.
    int senders = 0;
    for (int i = 0; i < p; i++) {
        auto d = pat_.dests(i, p);
        std::map<int, uint32_t> by_dst(d.begin(), d.end());
        for (const auto &[j, len] : by_dst)
            st_[static_cast<size_t>(j)].fan_in++;
        senders += by_dst.empty() ? 0 : 1;
        Proc &pr = st_[static_cast<size_t>(i)];
        for (int j : bsp::rt::destination_order(bsp::rt::Schedule::LatinSquare, i, p, 1)) {
            auto it = by_dst.find(j);
            if (it != by_dst.end())
                pr.dests.push_back(*it);
        }
    }
    std::vector<uint64_t> rates(
        static_cast<size_t>(p),
        bsp::rt::pacing_rate(bsp::rt::Schedule::LatinSquare, p, senders, link_rate_));
    pacing_ = p ? rates[0] : 0;
    for (int i = 0; i < p; i++) {
        Node &n = sim_.node(i);
        n.on_deliver = [this](Node &nd, const Delivered &d) { on_deliver(nd, d); };
        if (rates[static_cast<size_t>(i)])
            sim_.timed([&] { bspe_set_pacing(n.ep(), rates[static_cast<size_t>(i)], sim_.now()); });
    }
}

void MsgLayerRun::send(int src, int dst, char tag, int s, uint32_t aux, uint32_t len,
                       uint32_t flags) {
    auto d = Sim::pattern(src, dst, (uint64_t(s) << 32) | aux, std::max<uint32_t>(len, 9));
    d.resize(len < 9 ? 9 : len);
    d[0] = static_cast<uint8_t>(tag);
    uint32_t su = static_cast<uint32_t>(s);
    std::memcpy(&d[1], &su, 4);
    std::memcpy(&d[5], &aux, 4);
    sim_.send(src, dst, std::move(d), flags);
}

// The data stream to j: one put record of len bytes repackaged into units of at most
// unit_bytes, the last with BSPE_SEND_LAST.
void MsgLayerRun::send_stream(int i, int j, uint32_t len) {
    uint32_t room = unit_bytes_ - kUnitHeader - kRecordHeader;
    uint32_t left = len, u = 0;
    do {
        uint32_t chunk = std::min(left, room);
        left -= chunk;
        uint32_t ulen = kUnitHeader + kRecordHeader + chunk;
        send(i, j, 'D', st_[static_cast<size_t>(i)].s, u++, ulen, left ? 0 : BSPE_SEND_LAST);
        stats_.data_bytes += ulen;
        stats_.data_units++;
    } while (left);
    stats_.payload += len;
}

void MsgLayerRun::barrier_send(int i, int to, int round) {
    Proc &pr = st_[static_cast<size_t>(i)];
    uint32_t n = static_cast<uint32_t>(round) == static_cast<uint32_t>(log_q_ + 1)
                     ? static_cast<uint32_t>(sim_.nodes())
                     : pr.known;
    uint32_t len = static_cast<uint32_t>(
        bsp::rt::barrier_msg_bytes(barrier_counters(i, round, sim_.nodes(), q_, log_q_)));
    // aux: round in the low 8 bits, processes the summary covers above
    send(i, to, 'B', pr.s, static_cast<uint32_t>(round) | (n << 8), len, BSPE_SEND_SYNC);
    stats_.barrier_bytes += len;
    stats_.barrier_msgs++;
}

void MsgLayerRun::start_barrier(int i, int s) {
    Proc &pr = st_[static_cast<size_t>(i)];
    pr.s = s;
    pr.phase = 0;
    pr.known = 1;
    if (i >= q_) {
        barrier_send(i, i - q_, 0);
        pr.round = log_q_ + 1;
    } else {
        pr.round = i + q_ < sim_.nodes() ? 0 : 1;
        if (pr.round == 1 && log_q_ >= 1)
            barrier_send(i, i ^ 1, 1);
    }
    expect_round(i);
}

// expect_barrier (messaging.cpp's Transport::expect_barrier_message): the process tells the
// engine it expects the message of the round it waits for, unless it is here already; a lost
// packet of it is then prodded for after a round trip instead of waiting for the sender's
// timeout.
void MsgLayerRun::expect_round(int i) {
    Proc &pr = st_[static_cast<size_t>(i)];
    if (!expect_barrier)
        return;
    const Step &step = pr.steps[pr.s];
    if (step.barrier.count(pr.round))
        return;
    int from = pr.round == 0 ? i + q_ : pr.round == log_q_ + 1 ? i - q_ : i ^ (1 << (pr.round - 1));
    Node &node = sim_.node(i);
    int c = node.chan_to(from);
    sim_.timed([&] { return bspe_expect(node.ep(), c, 1, BSPE_EXPECT_SYNC, sim_.now()); });
}

// expect_from (messaging.cpp): k's messages of the superstep in all, its count message and
// the units it announced, unless they are all here.
void MsgLayerRun::expect_stream(int i, int k) {
    Proc &pr = st_[static_cast<size_t>(i)];
    Step &step = pr.steps[pr.s];
    const auto &ua = step.from[k];
    if (ua.first <= ua.second)
        return;
    step.expected.insert(k);
    Node &node = sim_.node(i);
    int c = node.chan_to(k);
    sim_.timed([&] { return bspe_expect(node.ep(), c, ua.first + 1, 0, sim_.now()); });
}

void MsgLayerRun::on_deliver(Node &n, const Delivered &d) {
    if (d.data.size() < 9)
        return;
    uint32_t s, aux;
    std::memcpy(&s, &d.data[1], 4);
    std::memcpy(&aux, &d.data[5], 4);
    Step &step = st_[static_cast<size_t>(n.id())].steps[static_cast<int>(s)];
    switch (d.data[0]) {
        case 'B':
            step.barrier[static_cast<int>(aux & 0xff)] = aux >> 8;
            break;
        case 'U':
            step.ups++;
            break;
        case 'W':
            step.down = true;
            break;
        case 'C': {
            step.counts++;
            step.units_expected += aux;
            step.from[d.src].first += aux;
            const Proc &pr = st_[static_cast<size_t>(n.id())];
            if (streams_follow && expect_at_count && pr.phase == 1 && pr.s == static_cast<int>(s))
                expect_stream(n.id(), d.src);
            break;
        }
        default:
            step.units++;
            if (++step.from[d.src].second > step.from[d.src].first)
                errors.push_back("data unit before its count message");
            break;
    }
    last_src_ = d.src;
    last_tag_ = static_cast<char>(d.data[0]);
    progress(n.id());
    last_src_ = -1;
    last_tag_ = 0;
}

void MsgLayerRun::phase_done(int i, int s, int phase) {
    if (on_phase)
        on_phase(i, s, phase, sim_.now(), last_src_, last_tag_);
}

void MsgLayerRun::progress(int i) {
    Proc &pr = st_[static_cast<size_t>(i)];
    Node &node = sim_.node(i);
    int p = sim_.nodes();
    for (;;) {
        if (pr.phase == 3)
            return;
        if (pr.phase == 4) {
            if (end_progress(i)) {
                pr.phase = 3;
                pr.steps.clear();
                finished_++;
            }
            return;
        }
        Step &step = pr.steps[pr.s];
        if (pr.phase == 0) {
            // The message of the round we wait for: round 0 from i + q, rounds 1..log2 q from
            // the partner, round log2 q + 1 from i - q.
            auto it = step.barrier.find(pr.round);
            if (it == step.barrier.end())
                return;
            if (i >= q_) {
                pr.known = it->second;
            } else {
                pr.known += it->second;
                int next = pr.round + 1;
                if (next <= log_q_) {
                    pr.round = next;
                    barrier_send(i, i ^ (1 << (next - 1)), next);
                    expect_round(i);
                    continue;
                }
                if (i + q_ < p)
                    barrier_send(i, i + q_, log_q_ + 1);
            }
            if (pr.known != static_cast<uint32_t>(p))
                errors.push_back("barrier completed without every contribution");
            // barrier complete
            phase_done(i, pr.s, 0);
            sim_.timed(
                [&] { bspe_superstep_done(node.ep(), static_cast<uint32_t>(pr.s), sim_.now()); });
            if (pr.s > supersteps_) {
                // the end of the job
                pr.phase = 4;
                pr.s++;
                if (end_progress(i)) {
                    pr.phase = 3;
                    pr.steps.clear();
                    finished_++;
                }
                return;
            }
            pr.phase = 1;
            if (streams_follow)
                sim_.timed([&] { bspe_set_follow(node.ep(), 1); });
            if (streams_follow && expect_at_count) {
                std::vector<int> here;
                for (const auto &f : step.from)
                    here.push_back(f.first);
                for (int k : here)
                    expect_stream(i, k);
            }
            for (const auto &[j, len] : pr.dests) {
                uint32_t room = unit_bytes_ - kUnitHeader - kRecordHeader;
                uint32_t units = len ? (len + room - 1) / room : 1;
                send(i, j, 'C', pr.s, units, kCounts, 0);
                stats_.count_bytes += kCounts;
                stats_.count_msgs++;
                if (streams_follow)
                    send_stream(i, j, len);
            }
            continue;
        }
        if (pr.phase == 1) {
            if (static_cast<uint32_t>(step.counts) < pr.fan_in)
                return;
            pr.phase = 2;
            phase_done(i, pr.s, 1);
            // expect_from every sender whose units are not all here: its messages of the
            // superstep in all, the count message and the units it announced
            for (const auto &[k, ua] : step.from)
                if (ua.first > ua.second && !step.expected.count(k)) {
                    int c = node.chan_to(k);
                    sim_.timed(
                        [&] { return bspe_expect(node.ep(), c, ua.first + 1, 0, sim_.now()); });
                }
            if (!streams_follow)
                for (const auto &[j, len] : pr.dests)
                    send_stream(i, j, len);
            continue;
        }
        // phase 2: data
        if (step.units < step.units_expected || static_cast<uint32_t>(step.counts) < pr.fan_in)
            return;
        int s = pr.s;
        if (streams_follow)
            sim_.timed([&] { bspe_set_follow(node.ep(), 0); });
        phase_done(i, s, 2);
        pr.steps.erase(s);
        if (--left_[static_cast<size_t>(s)] == 0)
            ends_[static_cast<size_t>(s)] = sim_.now();
        start_barrier(i, s + 1);
    }
}

// The end of the job (msg_layer.hpp): report to the parent once every child reported; the
// root, once every child reported, and every other process, once its parent's broadcast came,
// completes (superstep_done of the step after the last barrier) and tells its children.
bool MsgLayerRun::end_progress(int i) {
    Proc &pr = st_[static_cast<size_t>(i)];
    Step &step = pr.steps[pr.s];
    int p = sim_.nodes();
    std::vector<int> children = end_children(i, p);
    int parent = end_parent(i, p);
    const uint32_t flags = BSPE_SEND_SYNC | BSPE_SEND_LAST;
    if (step.ups < static_cast<int>(children.size()))
        return false;
    if (parent >= 0 && pr.round != -1) {
        pr.round = -1;  // reported
        send(i, parent, 'U', pr.s, 0, kMsgHeader, flags);
        stats_.end_msgs++;
    }
    if (parent >= 0 && !step.down)
        return false;
    Node &node = sim_.node(i);
    sim_.timed([&] { bspe_superstep_done(node.ep(), static_cast<uint32_t>(pr.s), sim_.now()); });
    for (int c : children) {
        send(i, c, 'W', pr.s, 0, kMsgHeader, flags);
        stats_.end_msgs++;
    }
    return true;
}

bool MsgLayerRun::run(uint64_t horizon) {
    int p = sim_.nodes();
    ends_[0] = sim_.now();
    for (int i = 0; i < p; i++)
        sim_.at(sim_.now(), [this, i] {
            start_barrier(i, 1);
            progress(i);
        });
    sim_.run_until_idle(horizon);
    return finished() && sim_.pending() == 0;
}

}  // namespace bspsim
