// Deterministic discrete-event network simulator for the AF_BSP protocol engine.
//
// Any number of nodes, one engine endpoint (port 1) per node, R rails. Each rail is a switch
// with one full-duplex link per node: configurable bandwidth, latency, per-rail latency skew,
// buffer (egress queue and switch output port), independent and burst loss, reordering,
// duplication, corruption and rail death (of one node's link or the whole rail) at a given
// time. All randomness comes from one seeded PRNG, so a run is reproducible bit for bit.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

extern "C" {
#include "bspe.h"
}

namespace bspsim {

// splitmix64: small, fast, good enough for fault injection.
class Rng {
  public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t next() {
        uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // true with probability p (0..1), exact for p == 0.
    bool chance(double p) { return p > 0 && (next() >> 11) * (1.0 / 9007199254740992.0) < p; }
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }

  private:
    uint64_t s_;
};

struct Faults {
    double loss = 0;                 // independent loss probability per packet
    double burst_start = 0;          // probability a packet starts a loss burst
    int burst_len = 0;               // packets lost per burst (including the first)
    uint64_t burst_gap_ns = 100000;  // a burst ends after this long without packets
    double reorder = 0;              // probability a packet is delayed by reorder_ns
    uint64_t reorder_ns = 0;
    double duplicate = 0;  // probability a packet is delivered twice
    double corrupt = 0;    // probability one random bit is flipped
};

struct RailCfg {
    double gbps = 10;                  // link rate
    uint64_t latency_ns = 5000;        // one-way propagation + switching
    double skew = 1.0;                 // latency multiplier of this rail
    uint64_t buffer_bytes = 1 << 20;   // per egress queue and per switch output port
    uint64_t egress_buffer_bytes = 0;  // the node's own egress queue, if not buffer_bytes
    Faults faults;
};

// Kills rail `rail` of `node` (or of every node if node < 0) during [at, revive_at).
struct RailDeath {
    int node = -1;
    int rail = 0;
    uint64_t at = 0;
    uint64_t revive_at = UINT64_MAX;
    // If set, after this delay every affected engine is told via bspe_rail_set (the rail
    // layer's missed hellos); otherwise the engines must find out themselves.
    std::optional<uint64_t> notify_after;
};

struct NetCfg {
    int nodes = 2;
    int rails = 1;
    std::vector<RailCfg> rail;  // size rails (missing entries: defaults)
    std::vector<RailDeath> deaths;
    uint64_t seed = 1;
    // Channels are not opened up front: a sender opens its channel at its first send (or
    // expectation), a receiver gets one from the first valid packet (BSPE_CFG_AUTO_OPEN,
    // chan_new flags it as a group member).
    bool lazy_chans = false;
    // Nodes keep every delivered message (Node::delivered) and every completion
    // (Node::completed) for tests to inspect. Off for runs at scale: the sim still checks every
    // delivery (length, 64-bit hash, per-pair order, exactly once) and every completion as they
    // happen, in memory that grows with the messages in flight, not with the messages sent.
    bool keep_history = true;
};

// A packet on the wire as tests see it (decoded header, host byte order).
struct WirePkt {
    int src = 0, dst = 0, rail = 0;
    uint8_t type = 0;
    uint16_t flags = 0;
    uint32_t seq = 0, base = 0, ack = 0, eoh = 0, epoch = 0, msg_id = 0, msg_len = 0, frag_off = 0;
    uint32_t src_inc = 0, dst_inc = 0;
    uint8_t ack_rail = 0;
    uint16_t payload_len = 0;
};

struct WireStats {
    uint64_t data = 0, acks = 0, prods = 0, probes = 0;
    uint64_t lost_random = 0, lost_burst = 0, lost_buffer = 0, lost_dead = 0, lost_filter = 0;
    uint64_t data_lost = 0;  // DATA packets lost (any cause): real losses
    uint64_t duplicated = 0, corrupted = 0, reordered = 0;
};

struct Delivered {
    int src;
    std::vector<uint8_t> data;
    uint16_t flags;
};

class Sim;
struct CbTimer;

// One node: its engine and the memory the engine reads and writes through callbacks.
class Node {
  public:
    Node(Sim &sim, int id, const bspe_cfg &cfg);
    ~Node();
    Node(const Node &) = delete;
    Node &operator=(const Node &) = delete;

    bspe_ep *ep() { return ep_; }
    int id() const { return id_; }
    // Channel to `node`; with lazy channels, opened now if it is not yet (the sim's own
    // calls), or -ENOENT.
    int chan_to(int node);
    bspe_stats stats(int peer = -1, int rail = -1) const;

    // Every message delivered to this node, in delivery order.
    std::vector<Delivered> delivered;
    // Completion status per message serial, recorded once (a second completion is an error).
    std::map<uint64_t, int> completed;
    std::vector<std::string> errors;  // protocol violations seen by callbacks
    uint64_t rx_bytes_held = 0;       // delivered bytes not yet consumed
    uint64_t consume_delay_ns = 0;    // the reader consumes a message this long after delivery
    std::function<void(Node &, const Delivered &)> on_deliver;
    // Called when the reader consumes a message (after bspe_rx_consumed), with its length: a
    // caller that accounts receive memory itself (BSPE_CFG_EXT_RCVBUF) resumes the engine here.
    std::function<void(Node &, uint32_t len)> on_consume;
    std::function<void(Node &, uint64_t serial, int status)> on_complete;
    std::function<void(Node &, int peer, int rail, int up)> on_rail_event;
    // Channel memory the engine holds now (ops->chan_alloc minus chan_free) and its peak;
    // channel allocations (bspe_chan_size() bytes) and the others (rings growing).
    uint64_t chan_bytes = 0;
    uint64_t chan_bytes_max = 0;
    uint64_t chan_allocs = 0;
    uint64_t grow_allocs = 0;
    // ops->chan_alloc of a channel fails while this is non-zero (counted down per refusal).
    int chan_alloc_fail = 0;
    // Tests: a growth allocation (any other size) fails when this returns true.
    std::function<bool(size_t size)> refuse_grow;
    // Tests: decides rx_data before the node stores anything (a non-zero errno refuses the
    // fragment, as a receiver out of memory does).
    std::function<int(const bspe_rx_frag &)> rx_gate;

  private:
    friend class Sim;
    struct Msg {
        uint64_t serial;
        int dst;
        uint32_t flags;
        std::vector<uint8_t> data;
    };
    static void cb_xmit(void *ctx, const bspe_xmit *x);
    static int cb_rx_data(void *ctx, const bspe_rx_frag *f);
    static void cb_deliver(void *ctx, const bspe_delivery *d);
    static void cb_rx_abort(void *ctx, int chan, uint32_t slot);
    static void cb_complete(void *ctx, void *msg, int status);
    static void cb_timer(void *ctx, uint64_t when);
    static void cb_rail_event(void *ctx, uint32_t node, uint8_t rail, int up);
    static int cb_chan_new(void *ctx, uint32_t node, uint16_t port, void **cookie, uint8_t *rails);
    static void *cb_chan_alloc(void *ctx, size_t size);
    static void cb_chan_free(void *ctx, void *mem, size_t size);

    Sim &sim_;
    int id_;
    std::vector<uint64_t> mem_;
    std::map<void *, std::unique_ptr<uint64_t[]>> chan_mem_;  // channel allocations
    bspe_ep *ep_ = nullptr;
    std::vector<int> chan_;  // node -> channel index
    std::map<Msg *, std::unique_ptr<Msg>> msgs_;
    std::map<std::pair<int, uint32_t>, std::vector<uint8_t>> slots_;
    // per destination with messages waiting (on -EAGAIN), in destination order
    std::map<int, std::deque<std::unique_ptr<Msg>>> backlog_;
    uint64_t timer_gen_ = 0;
    uint64_t timer_at_ = 0;
    uint64_t stalled_until_ = 0;  // Sim::stall
};

class Sim {
  public:
    // All nodes get `base` with node = index, port = 1, nrails = net.rails, and open group
    // channels to every other node.
    Sim(const NetCfg &net, const bspe_cfg &base);
    ~Sim();

    Node &node(int i) { return *nodes_[i]; }
    int nodes() const { return static_cast<int>(nodes_.size()); }
    uint64_t now() const { return now_; }

    // Submits a message; returns its serial. Queued in the sim if the engine says -EAGAIN.
    uint64_t send(int src, int dst, std::vector<uint8_t> data, uint32_t flags = 0);
    // Payload that identifies (src, dst, serial, byte index): lets tests check integrity.
    static std::vector<uint8_t> pattern(int src, int dst, uint64_t k, size_t len);

    // Runs events up to and including time t.
    void run_until(uint64_t t);
    // Runs until no event is left or time `horizon`; returns true if the queue drained.
    bool run_until_idle(uint64_t horizon);
    // Schedules a test action at time t (runs between events, never inside the engine).
    void at(uint64_t t, std::function<void()> fn);
    // Tests: node `node` is not scheduled until time `until` (a stalled machine, a caller busy
    // elsewhere): its timer and the packets that reach it meanwhile wait, and when it runs
    // again the timer comes first, then the packets in their order (as a kernel runs the
    // timer softirq before the receive softirq). Sends the tests make are not held.
    void stall(int node, uint64_t until);

    // Tests: drop a packet if this returns true (counted lost_filter; DATA counts data_lost).
    std::function<bool(const WirePkt &)> drop_filter;
    // Tests: observe every packet put on the wire (before faults).
    std::function<void(const WirePkt &)> tap;
    // Tests and traces: observe every packet the network loses (any cause), when it is lost.
    std::function<void(const WirePkt &)> on_lost;
    // Tests: called after every event (invariant checks).
    std::function<void()> after_event;

    const WireStats &wire() const { return wire_; }
    // Every message sent so far was delivered exactly once, intact, in per-pair order, and
    // completed exactly once with status 0. Returns a description of the first violation.
    std::string verify_all_delivered() const;
    // Sum of engine stats over all nodes.
    bspe_stats total_stats() const;
    // Messages submitted and not yet completed (including the sim's backlog).
    uint64_t pending() const { return submitted_ - completions_; }
    // Hash of a message's bytes as the sim checks them (FNV-1a, 64 bits).
    static uint64_t hash(const uint8_t *p, size_t len);
    // Nanoseconds of the thread's CPU time spent inside engine calls (with measure_cpu): one
    // call in kSampleEvery is timed with the thread's CPU clock (time the thread was preempted
    // does not count), less the sim's callbacks and the clock reads, and scaled to all calls.
    uint64_t engine_cpu_ns() const {
        if (!sampled_ || engine_ns_ <= 0)
            return 0;
        return static_cast<uint64_t>(double(engine_ns_) * double(engine_calls_) / double(sampled_));
    }
    uint64_t engine_calls() const { return engine_calls_; }
    static uint64_t thread_ns();
    static constexpr uint64_t kSampleEvery = 4;
    bool measure_cpu = false;
    // Every engine call the sim or a workload makes goes through here (counted, sampled).
    template <typename F>
    auto timed(F &&f) -> decltype(f());

  private:
    friend class Node;
    friend struct CbTimer;
    struct Event {
        uint64_t t;
        uint64_t order;
        std::function<void()> fn;
        bool operator>(const Event &o) const { return t != o.t ? t > o.t : order > o.order; }
    };
    void push(uint64_t t, std::function<void()> fn);
    void transmit(int src, const bspe_xmit *x, const uint8_t *payload);
    void receive(int dst, int rail, const WirePkt &w, std::shared_ptr<std::vector<uint8_t>> p,
                 bool data);
    void fire_timer(Node *n, uint64_t gen);
    bool rail_dead(int node, int rail, uint64_t t) const;
    void kick_backlog(int src);

    NetCfg net_;
    Rng rng_;
    uint64_t now_ = 0;
    uint64_t order_ = 0;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
    std::vector<std::unique_ptr<Node>> nodes_;
    // per [node][rail]: egress link busy until; switch output port to node busy until
    std::vector<std::vector<uint64_t>> egress_free_, ingress_free_;
    std::vector<int> burst_left_;           // per rail
    std::vector<uint64_t> last_at_switch_;  // per rail
    WireStats wire_;
    // Per (src, dst) pair that carried messages: what was sent, in order, and how many of them
    // were delivered (checked at delivery, see Node::cb_deliver).
    struct Sent {
        uint64_t serial;
        uint64_t hash;
        uint32_t len;
    };
    struct PairLog {
        std::deque<Sent> sent;    // not yet delivered, in order
        uint64_t nsent = 0;       // messages sent
        uint64_t ndelivered = 0;  // messages delivered
    };
    PairLog &pair(int src, int dst) { return pairs_[(uint64_t(src) << 32) | uint32_t(dst)]; }
    void check_delivery(int dst, const Delivered &d);
    std::map<uint64_t, PairLog> pairs_;  // key src << 32 | dst
    std::string first_error_;            // first delivery or completion violation
    // Completion status per serial (index serial - 1): 1 not yet, otherwise the status (<= 0).
    std::vector<int> status_;
    std::vector<std::pair<int, int>> serial_pair_;  // serial - 1 -> (src, dst)
    uint64_t completed_bad_ = 0;                    // completions with a non-zero status
    uint64_t serial_ = 0;
    uint64_t submitted_ = 0;
    uint64_t completions_ = 0;
    int64_t engine_ns_ = 0;  // sampled engine calls, their callbacks and clock reads excluded
    uint64_t engine_calls_ = 0;
    uint64_t sampled_ = 0;
    bool sampling_ = false;      // inside a sampled engine call
    uint64_t sample_cb_ns_ = 0;  // its callbacks' intervals
    uint64_t sample_cbs_ = 0;
};

template <typename F>
auto Sim::timed(F &&f) -> decltype(f()) {
    engine_calls_++;
    if (!measure_cpu || sampling_ || engine_calls_ % kSampleEvery != 0)
        return f();
    // A sampled call: [t1, t2] holds the call, its callbacks' intervals and the clock reads
    // (about one read's cost for t1 and t2 together, one more per callback outside the
    // callback's own interval); t1 - t0 is what one read costs here and now.
    sampling_ = true;
    sample_cb_ns_ = 0;
    sample_cbs_ = 0;
    uint64_t t0 = thread_ns();
    struct Done {
        Sim *s;
        uint64_t t0, t1;
        ~Done() {
            uint64_t t2 = thread_ns();
            s->sampling_ = false;
            s->engine_ns_ += int64_t(t2 - t1) - int64_t(s->sample_cb_ns_) -
                             int64_t(t1 - t0) * int64_t(1 + s->sample_cbs_);
            s->sampled_++;
        }
    } done{this, t0, thread_ns()};
    return f();
}

// Decodes the header of a packet (no validation).
WirePkt decode(const uint8_t *pkt, int src, int dst);

}  // namespace bspsim
