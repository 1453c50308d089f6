// Deterministic discrete-event network simulator for the AF_BSP protocol engine.
#include "sim.hpp"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <type_traits>

namespace bspsim {

namespace {

uint32_t be32(const uint8_t *p) {
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}
uint16_t be16(const uint8_t *p) {
    return uint16_t((p[0] << 8) | p[1]);
}

}  // namespace

WirePkt decode(const uint8_t *p, int src, int dst) {
    WirePkt w;
    w.src = src;
    w.dst = dst;
    w.type = p[1];
    w.flags = be16(p + offsetof(bspe_hdr, flags));
    w.rail = p[offsetof(bspe_hdr, rail)];
    w.ack_rail = p[offsetof(bspe_hdr, ack_rail)];
    w.src_inc = be32(p + offsetof(bspe_hdr, src_inc));
    w.dst_inc = be32(p + offsetof(bspe_hdr, dst_inc));
    w.seq = be32(p + offsetof(bspe_hdr, seq));
    w.base = be32(p + offsetof(bspe_hdr, base));
    w.ack = be32(p + offsetof(bspe_hdr, ack));
    w.eoh = be32(p + offsetof(bspe_hdr, eoh));
    w.epoch = be32(p + offsetof(bspe_hdr, epoch));
    w.msg_id = be32(p + offsetof(bspe_hdr, msg_id));
    w.msg_len = be32(p + offsetof(bspe_hdr, msg_len));
    w.frag_off = be32(p + offsetof(bspe_hdr, frag_off));
    w.payload_len = be16(p + offsetof(bspe_hdr, payload_len));
    return w;
}

// The CPU time of the calling thread: time it was preempted (a busy host) is not counted.
uint64_t Sim::thread_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ULL + uint64_t(ts.tv_nsec);
}

// Time spent in a callback is the caller's (the sim's), not the engine's: subtract it.
struct CbTimer {
    explicit CbTimer(Sim &s) : sim(s), on(s.sampling_) {
        if (on)
            t0 = Sim::thread_ns();
    }
    ~CbTimer() {
        if (on) {
            sim.sample_cb_ns_ += Sim::thread_ns() - t0;
            sim.sample_cbs_++;
        }
    }
    Sim &sim;
    bool on;
    uint64_t t0 = 0;
};

// ---------------------------------------------------------------------------------------------
// Node

Node::Node(Sim &sim, int id, const bspe_cfg &cfg) : sim_(sim), id_(id) {
    static const bspe_ops ops = {
        &Node::cb_xmit,
        &Node::cb_rx_data,
        &Node::cb_deliver,
        &Node::cb_rx_abort,
        &Node::cb_complete,
        &Node::cb_timer,
        &Node::cb_rail_event,
        &Node::cb_chan_alloc,
        &Node::cb_chan_free,
        &Node::cb_chan_new,
        nullptr,
    };
    size_t sz = bspe_mem_size(&cfg);
    mem_.assign(sz / 8 + 1, 0);
    ep_ = bspe_init(mem_.data(), mem_.size() * 8, &cfg, &ops, this);
    chan_.assign(sim.net_.nodes, -1);
}

// The engine is not torn down (its callbacks would reach into the dying sim): channel memory
// is freed with the node.
Node::~Node() = default;

int Node::chan_to(int node) {
    if (chan_[node] < 0 && sim_.net_.lazy_chans) {
        int c = bspe_chan_find(ep_, static_cast<uint32_t>(node), 1);
        if (c < 0)
            c = bspe_chan_open(ep_, static_cast<uint32_t>(node), 1, BSPE_CHAN_GROUP, nullptr);
        if (c >= 0)
            chan_[node] = c;
        return c;
    }
    return chan_[node];
}

// Lazy channels: a valid packet from another node's port 1 opens a group channel.
int Node::cb_chan_new(void *ctx, uint32_t node, uint16_t port, void **, uint8_t *) {
    auto *n = static_cast<Node *>(ctx);
    if (port != 1 || node >= static_cast<uint32_t>(n->sim_.net_.nodes) ||
        node == static_cast<uint32_t>(n->id_))
        return -EPERM;
    return BSPE_CHAN_GROUP;
}

void *Node::cb_chan_alloc(void *ctx, size_t size) {
    auto *n = static_cast<Node *>(ctx);
    const bool chan = size == bspe_chan_size(bspe_get_cfg(n->ep_));
    if (chan && n->chan_alloc_fail > 0) {
        --n->chan_alloc_fail;
        return nullptr;
    }
    if (!chan && n->refuse_grow && n->refuse_grow(size))
        return nullptr;
    std::unique_ptr<uint64_t[]> m(new uint64_t[(size + 7) / 8]);
    void *p = m.get();
    n->chan_mem_.emplace(p, std::move(m));
    n->chan_bytes += size;
    n->chan_bytes_max = std::max(n->chan_bytes_max, n->chan_bytes);
    (chan ? n->chan_allocs : n->grow_allocs)++;
    return p;
}

void Node::cb_chan_free(void *ctx, void *mem, size_t size) {
    auto *n = static_cast<Node *>(ctx);
    if (n->chan_mem_.erase(mem) != 1)
        n->errors.push_back("chan_free of memory not from chan_alloc");
    n->chan_bytes -= size;
}

bspe_stats Node::stats(int peer, int rail) const {
    bspe_stats s;
    int c = peer < 0 ? -1 : chan_[peer];
    if (peer >= 0 && c < 0)
        c = bspe_chan_find(ep_, static_cast<uint32_t>(peer), 1);
    if (peer >= 0 && c < 0) {
        std::memset(&s, 0, sizeof s);  // no channel: nothing counted yet
        return s;
    }
    bspe_stats_get(ep_, c, rail, &s);
    return s;
}

void Node::cb_xmit(void *ctx, const bspe_xmit *x) {
    auto *n = static_cast<Node *>(ctx);
    CbTimer cbt(n->sim_);
    const uint8_t *payload = nullptr;
    if (x->msg) {
        auto *m = static_cast<Msg *>(x->msg);
        if (x->off + x->len > m->data.size()) {
            n->errors.push_back("xmit beyond message end");
            return;
        }
        payload = m->data.data() + x->off;
    }
    n->sim_.transmit(n->id_, x, payload);
}

int Node::cb_rx_data(void *ctx, const bspe_rx_frag *f) {
    auto *n = static_cast<Node *>(ctx);
    CbTimer cbt(n->sim_);
    if (n->rx_gate) {
        int err = n->rx_gate(*f);
        if (err)
            return err;
    }
    auto key = std::make_pair(f->chan, f->slot);
    auto &buf = n->slots_[key];
    if (f->first)
        buf.assign(f->msg_len, 0);
    if (buf.size() != f->msg_len || f->off + f->len > buf.size()) {
        n->errors.push_back("rx_data outside the slot's message");
        return -EINVAL;
    }
    if (f->len)
        std::memcpy(buf.data() + f->off, f->data, f->len);
    return 0;
}

void Node::cb_deliver(void *ctx, const bspe_delivery *d) {
    auto *n = static_cast<Node *>(ctx);
    CbTimer cbt(n->sim_);
    auto key = std::make_pair(d->chan, d->slot);
    auto it = n->slots_.find(key);
    Delivered del{static_cast<int>(d->node), {}, d->flags};
    if (it == n->slots_.end()) {
        if (d->msg_len)
            n->errors.push_back("deliver of a slot never filled");
    } else {
        del.data = std::move(it->second);
        n->slots_.erase(it);
    }
    if (del.data.size() != d->msg_len)
        n->errors.push_back("delivered length differs");
    n->rx_bytes_held += d->msg_len;
    uint32_t len = d->msg_len;
    Sim &sim = n->sim_;
    sim.push(sim.now_ + n->consume_delay_ns, [n, len, &sim] {
        n->rx_bytes_held -= len;
        sim.timed([&] { bspe_rx_consumed(n->ep_, len, sim.now_); });
        if (n->on_consume)
            n->on_consume(*n, len);
    });
    sim.check_delivery(n->id_, del);
    if (!sim.net_.keep_history) {
        if (n->on_deliver)
            n->on_deliver(*n, del);
        return;
    }
    n->delivered.push_back(std::move(del));
    if (n->on_deliver)
        n->on_deliver(*n, n->delivered.back());
}

void Node::cb_rx_abort(void *ctx, int chan, uint32_t slot) {
    auto *n = static_cast<Node *>(ctx);
    n->slots_.erase(std::make_pair(chan, slot));
}

void Node::cb_complete(void *ctx, void *msg, int status) {
    auto *n = static_cast<Node *>(ctx);
    CbTimer cbt(n->sim_);
    auto *m = static_cast<Msg *>(msg);
    auto it = n->msgs_.find(m);
    if (it == n->msgs_.end()) {
        n->errors.push_back("completion of an unknown message");
        return;
    }
    uint64_t serial = m->serial;
    Sim &s = n->sim_;
    int &st = s.status_[serial - 1];
    if (st != 1)
        n->errors.push_back("message completed twice");
    st = status == 1 ? -1 : status;
    if (status)
        s.completed_bad_++;
    if (s.net_.keep_history)
        n->completed[serial] = status;
    n->sim_.completions_++;
    n->msgs_.erase(it);
    if (n->on_complete)
        n->on_complete(*n, serial, status);
    Sim &sim = n->sim_;
    int id = n->id_;
    sim.push(sim.now_, [&sim, id] { sim.kick_backlog(id); });
}

void Node::cb_timer(void *ctx, uint64_t when) {
    auto *n = static_cast<Node *>(ctx);
    CbTimer cbt(n->sim_);
    uint64_t gen = ++n->timer_gen_;
    n->timer_at_ = when;
    Sim &sim = n->sim_;
    sim.push(std::max(when, sim.now_), [n, gen, &sim] { sim.fire_timer(n, gen); });
}

void Sim::fire_timer(Node *n, uint64_t gen) {
    if (gen != n->timer_gen_)
        return;
    if (now_ < n->stalled_until_) {
        push(n->stalled_until_, [this, n, gen] { fire_timer(n, gen); });
        return;
    }
    timed([&] { bspe_timer(n->ep_, now_); });
}

void Sim::stall(int node, uint64_t until) {
    nodes_[node]->stalled_until_ = until;
}

void Sim::receive(int dst, int r, const WirePkt &w, std::shared_ptr<std::vector<uint8_t>> p,
                  bool data) {
    if (rail_dead(dst, r, now_)) {
        wire_.lost_dead++;
        if (data)
            wire_.data_lost++;
        if (on_lost)
            on_lost(w);
        return;
    }
    Node &n = *nodes_[dst];
    if (now_ < n.stalled_until_) {
        push(n.stalled_until_ + 1, [this, dst, r, w, p, data] { receive(dst, r, w, p, data); });
        return;
    }
    timed([&] {
        return bspe_rx(n.ep_, static_cast<uint8_t>(r), p->data(), static_cast<uint32_t>(p->size()),
                       now_);
    });
}

void Node::cb_rail_event(void *ctx, uint32_t node, uint8_t rail, int up) {
    auto *n = static_cast<Node *>(ctx);
    if (n->on_rail_event)
        n->on_rail_event(*n, static_cast<int>(node), rail, up);
}

// ---------------------------------------------------------------------------------------------
// Sim

Sim::Sim(const NetCfg &net, const bspe_cfg &base) : net_(net), rng_(net.seed) {
    net_.rail.resize(net_.rails);
    egress_free_.assign(net_.nodes, std::vector<uint64_t>(net_.rails, 0));
    ingress_free_.assign(net_.nodes, std::vector<uint64_t>(net_.rails, 0));
    burst_left_.assign(net_.rails, 0);
    last_at_switch_.assign(net_.rails, 0);
    for (int i = 0; i < net_.nodes; i++) {
        bspe_cfg c = base;
        c.node = static_cast<uint32_t>(i);
        c.port = 1;
        c.nrails = static_cast<uint8_t>(net_.rails);
        if (net_.lazy_chans)
            c.flags |= BSPE_CFG_AUTO_OPEN;
        nodes_.push_back(std::make_unique<Node>(*this, i, c));
    }
    for (int i = 0; i < net_.nodes; i++) {
        Node &n = *nodes_[i];
        if (!n.ep_)
            continue;
        for (int j = 0; j < net_.nodes && !net_.lazy_chans; j++)
            if (j != i)
                n.chan_[j] =
                    bspe_chan_open(n.ep_, static_cast<uint32_t>(j), 1, BSPE_CHAN_GROUP, nullptr);
    }
    for (const RailDeath &d : net_.deaths) {
        if (!d.notify_after)
            continue;
        auto set = [this, d](int up, uint64_t t) {
            for (int a = 0; a < net_.nodes; a++)
                for (int b = 0; b < net_.nodes; b++) {
                    if (a == b || (d.node >= 0 && a != d.node && b != d.node))
                        continue;
                    bspe_rail_set(nodes_[a]->ep_, static_cast<uint32_t>(b),
                                  static_cast<uint8_t>(d.rail), up, t);
                }
        };
        push(d.at + *d.notify_after, [this, set] { set(0, now_); });
        if (d.revive_at != UINT64_MAX)
            push(d.revive_at + *d.notify_after, [this, set] { set(1, now_); });
    }
}

Sim::~Sim() {
    for (auto &n : nodes_)
        if (n->ep_)
            bspe_fini(n->ep_);
}

void Sim::push(uint64_t t, std::function<void()> fn) {
    q_.push(Event{t, order_++, std::move(fn)});
}

void Sim::at(uint64_t t, std::function<void()> fn) {
    push(std::max(t, now_), std::move(fn));
}

std::vector<uint8_t> Sim::pattern(int src, int dst, uint64_t k, size_t len) {
    std::vector<uint8_t> v(len);
    uint64_t x = (uint64_t(src) << 48) ^ (uint64_t(dst) << 32) ^ (k * 0x9e3779b97f4a7c15ULL);
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[i] = static_cast<uint8_t>(x);
    }
    return v;
}

uint64_t Sim::send(int src, int dst, std::vector<uint8_t> data, uint32_t flags) {
    Node &n = *nodes_[src];
    auto m = std::make_unique<Node::Msg>();
    m->serial = ++serial_;
    m->dst = dst;
    m->data = std::move(data);
    PairLog &pl = pair(src, dst);
    pl.sent.push_back(
        Sent{m->serial, hash(m->data.data(), m->data.size()), uint32_t(m->data.size())});
    pl.nsent++;
    status_.push_back(1);
    serial_pair_.emplace_back(src, dst);
    submitted_++;
    m->flags = flags;
    uint64_t serial = m->serial;
    n.backlog_[dst].push_back(std::move(m));
    kick_backlog(src);
    return serial;
}

void Sim::kick_backlog(int src) {
    Node &n = *nodes_[src];
    // Only destinations with messages waiting, in destination order.
    for (auto bit = n.backlog_.begin(); bit != n.backlog_.end();) {
        int dst = bit->first;
        auto &bl = bit->second;
        while (!bl.empty()) {
            Node::Msg *m = bl.front().get();
            uint32_t flags = m->flags;
            Node::Msg *raw = m;
            n.msgs_[raw] = std::move(bl.front());
            int rc = timed([&] {
                return bspe_send(n.ep_, n.chan_to(dst), raw,
                                 static_cast<uint32_t>(raw->data.size()), flags, now_);
            });
            if (rc == -EAGAIN) {
                bl.front() = std::move(n.msgs_[raw]);
                n.msgs_.erase(raw);
                break;
            }
            bl.pop_front();
            if (rc != 0) {
                n.errors.push_back("bspe_send failed: " + std::to_string(rc));
                n.msgs_.erase(raw);
            }
        }
        bit = bl.empty() ? n.backlog_.erase(bit) : std::next(bit);
    }
}

bool Sim::rail_dead(int node, int rail, uint64_t t) const {
    for (const RailDeath &d : net_.deaths)
        if (d.rail == rail && (d.node < 0 || d.node == node) && t >= d.at && t < d.revive_at)
            return true;
    return false;
}

void Sim::transmit(int src, const bspe_xmit *x, const uint8_t *payload) {
    int dst = static_cast<int>(x->node);
    int r = x->rail;
    auto pkt = std::make_shared<std::vector<uint8_t>>(BSPE_HDR_LEN + x->len);
    std::memcpy(pkt->data(), x->hdr, BSPE_HDR_LEN);
    if (x->len)
        std::memcpy(pkt->data() + BSPE_HDR_LEN, payload, x->len);
    WirePkt w = decode(pkt->data(), src, dst);
    bspe_seal(nodes_[static_cast<size_t>(src)]->ep(), pkt->data(), pkt->data() + BSPE_HDR_LEN,
              x->len);
    if (tap)
        tap(w);
    bool data = w.type == BSPE_T_DATA;
    if (data)
        wire_.data++;
    else if (w.type == BSPE_T_PROD)
        wire_.prods++;
    else if (bspe_asks_answer(w.flags))
        wire_.probes++;  // an answer to a probe (REPLY|PROBE) is an ack
    else
        wire_.acks++;
    if (dst < 0 || dst >= net_.nodes || r >= net_.rails) {
        nodes_[src]->errors.push_back("xmit to a bad node or rail");
        return;
    }
    const RailCfg &rc = net_.rail[r];
    auto lost = [&](uint64_t &ctr) {
        ctr++;
        if (data)
            wire_.data_lost++;
        if (on_lost)
            on_lost(w);
    };
    if (rail_dead(src, r, now_))
        return lost(wire_.lost_dead);
    uint64_t wire_bytes = std::max<uint64_t>(pkt->size() + 38, 84);
    double bytes_per_ns = rc.gbps / 8.0;
    auto tx_ns = static_cast<uint64_t>(wire_bytes / bytes_per_ns) + 1;
    uint64_t &eg = egress_free_[src][r];
    uint64_t queued = eg > now_ ? static_cast<uint64_t>((eg - now_) * bytes_per_ns) : 0;
    if (queued + wire_bytes > (rc.egress_buffer_bytes ? rc.egress_buffer_bytes : rc.buffer_bytes))
        return lost(wire_.lost_buffer);
    eg = std::max(eg, now_) + tx_ns;
    uint64_t at_switch = eg + static_cast<uint64_t>(rc.latency_ns * rc.skew);
    push(at_switch, [this, pkt, w, src, dst, r, tx_ns, wire_bytes, data] {
        const RailCfg &rc = net_.rail[r];
        const Faults &f = rc.faults;
        auto lost = [&](uint64_t &ctr) {
            ctr++;
            if (data)
                wire_.data_lost++;
            if (on_lost)
                on_lost(w);
        };
        if (rail_dead(src, r, now_) || rail_dead(dst, r, now_))
            return lost(wire_.lost_dead);
        if (drop_filter && drop_filter(w))
            return lost(wire_.lost_filter);
        if (now_ - last_at_switch_[r] > f.burst_gap_ns)
            burst_left_[r] = 0;  // bursts are overruns: they end when traffic pauses
        last_at_switch_[r] = now_;
        if (burst_left_[r] > 0) {
            burst_left_[r]--;
            return lost(wire_.lost_burst);
        }
        if (rng_.chance(f.burst_start)) {
            burst_left_[r] = std::max(f.burst_len - 1, 0);
            return lost(wire_.lost_burst);
        }
        if (rng_.chance(f.loss))
            return lost(wire_.lost_random);
        double bytes_per_ns = rc.gbps / 8.0;
        uint64_t &in = ingress_free_[dst][r];
        uint64_t queued = in > now_ ? static_cast<uint64_t>((in - now_) * bytes_per_ns) : 0;
        if (queued + wire_bytes > rc.buffer_bytes)
            return lost(wire_.lost_buffer);
        in = std::max(in, now_) + tx_ns;
        uint64_t t = in;
        if (rng_.chance(f.reorder)) {
            t += f.reorder_ns;
            wire_.reordered++;
        }
        auto copy = pkt;
        if (rng_.chance(f.corrupt)) {
            copy = std::make_shared<std::vector<uint8_t>>(*pkt);
            size_t bit = rng_.below(copy->size() * 8);
            (*copy)[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
            wire_.corrupted++;
        }
        auto deliver = [this, dst, r, w](std::shared_ptr<std::vector<uint8_t>> p, bool data) {
            receive(dst, r, w, std::move(p), data);
        };
        push(t, [deliver, copy, data] { deliver(copy, data); });
        if (rng_.chance(f.duplicate)) {
            wire_.duplicated++;
            push(t + tx_ns, [deliver, pkt, data] { deliver(pkt, data); });
        }
    });
}

void Sim::run_until(uint64_t t) {
    while (!q_.empty() && q_.top().t <= t) {
        Event e = q_.top();
        q_.pop();
        now_ = std::max(now_, e.t);
        e.fn();
        if (after_event)
            after_event();
    }
    now_ = std::max(now_, t);
}

bool Sim::run_until_idle(uint64_t horizon) {
    while (!q_.empty() && q_.top().t <= horizon) {
        Event e = q_.top();
        q_.pop();
        now_ = std::max(now_, e.t);
        e.fn();
        if (after_event)
            after_event();
    }
    return q_.empty();
}

uint64_t Sim::hash(const uint8_t *p, size_t len) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

// Every delivery is checked as it happens: the next message of the pair, same length and hash.
void Sim::check_delivery(int dst, const Delivered &d) {
    auto it = pairs_.find((uint64_t(d.src) << 32) | uint32_t(dst));
    std::ostringstream err;
    if (it == pairs_.end() || it->second.ndelivered == it->second.nsent) {
        err << "node " << dst << " got an extra message from " << d.src;
    } else {
        PairLog &pl = it->second;
        const Sent &want = pl.sent.front();
        if (want.len != d.data.size() || want.hash != hash(d.data.data(), d.data.size()))
            err << "node " << dst << " message " << pl.ndelivered << " from " << d.src
                << " differs (len " << d.data.size() << " want " << want.len << ")";
        pl.ndelivered++;
        pl.sent.pop_front();
    }
    if (!err.str().empty() && first_error_.empty())
        first_error_ = err.str();
}

std::string Sim::verify_all_delivered() const {
    std::ostringstream err;
    for (int d = 0; d < net_.nodes; d++) {
        const Node &n = *nodes_[d];
        if (!n.errors.empty())
            return "node " + std::to_string(d) + ": " + n.errors.front();
    }
    if (!first_error_.empty())
        return first_error_;
    for (const auto &[key, pl] : pairs_)
        if (pl.ndelivered != pl.nsent) {
            err << "node " << uint32_t(key) << " got " << pl.ndelivered << " of " << pl.nsent
                << " messages from " << (key >> 32);
            return err.str();
        }
    for (size_t i = 0; i < status_.size(); i++) {
        if (status_[i] == 1) {
            err << "message " << i + 1 << " " << serial_pair_[i].first << "->"
                << serial_pair_[i].second << " never completed";
            return err.str();
        }
        if (status_[i] != 0) {
            err << "message " << i + 1 << " completed with " << status_[i];
            return err.str();
        }
    }
    return "";
}

bspe_stats Sim::total_stats() const {
    bspe_stats t{};
    for (const auto &n : nodes_) {
        bspe_stats s;
        bspe_stats_get(n->ep_, -1, -1, &s);
        auto *dst = reinterpret_cast<uint64_t *>(&t);
        auto *src = reinterpret_cast<const uint64_t *>(&s);
        for (size_t i = 0; i < sizeof(t) / 8; i++)
            dst[i] += src[i];
    }
    return t;
}

}  // namespace bspsim
