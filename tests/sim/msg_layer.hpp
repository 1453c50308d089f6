// The BSPlib messaging layer of libbsp (Documentation/messaging.rst) as a workload of the
// simulator: what it sends, with the sizes its encodings give, in the order it sends it.
//
// Superstep s (1..supersteps) on process i, then one more barrier (bsp_end):
//   1. barrier: the butterfly of messaging.cpp over q = the largest power of two <= p (round 0
//      fold-in from i + q, rounds 1..log2 q with i XOR 2^(r-1), hand-back to i + q), every
//      message sent with BSPE_SEND_SYNC and as long as its encoding (a constant-size summary and
//      the fan-in counters it hands over: p/2, p/4, ... 1, bsp::rt::barrier_msg_bytes); then
//      bspe_superstep_done(s) (the transport's barrier_completed);
//   2. total exchange of counts, only between processes that communicate: one 33-byte message to
//      every destination in the order of userlib/src/schedule.cpp (latin square), each followed
//      at once by the data stream to that destination (streams follow counts: no get requests
//      in the workload; bspe_set_follow(1) first), one put record per destination repackaged
//      into units of at most unit_bytes, the last unit to a destination with BSPE_SEND_LAST;
//      a process waits for as many counts as it has senders (the fan-in the barrier's
//      counters tell it);
//   3. bspe_expect(k, units + 1) per sender k whose units are not all here (its messages of
//      the superstep in all: count message and units); the pacing rate of
//      userlib/src/pacing.cpp (bspe_set_pacing) is set once, at the start (it depends on
//      the pattern only);
//   4. when every expected unit arrived, bspe_set_follow(0) and the barrier of s + 1.
// With streams_follow = false the data streams go out in step 3 instead, after the counts
// (as in a superstep with get requests).
// After the last barrier (bsp_end), the end of the job (messaging.cpp's Messaging::finish): a
// gather and broadcast of header-only messages up and down a tree whose edges are butterfly
// channels (end_parent, end_children), every message sent with BSPE_SEND_SYNC |
// BSPE_SEND_LAST (acknowledged at once by its receiver), and bspe_superstep_done(supersteps +
// 2) when the broadcast reached the process: every process completed the last barrier, which
// settles its messages.
// The work of the runner per event is O(1) (counters per superstep), except a process's own
// sends (O(its destinations)); the fan-ins are computed once (O(pairs)).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim.hpp"

namespace bspsim {

struct MsgPattern {
    std::string name;
    // Destinations of process i (in any order; the schedule orders them) and the bytes of
    // the one put record i sends to each, in every superstep.
    std::function<std::vector<std::pair<int, uint32_t>>(int i, int p)> dests;
};

// Total exchange of h bytes per process: h / (p - 1) to every other process (the remainder
// spread one byte each over the first destinations), so that every process sends and receives
// exactly h bytes.
MsgPattern msg_total_exchange(uint32_t h);
// Every process sends h / k bytes to each of i + 1, ..., i + k (mod p), k = min(fan, p - 1):
// each process talks to k others and receives from k others.
MsgPattern msg_sparse(uint32_t h, int fan);

struct MsgLayerStats {
    uint64_t barrier_bytes = 0, count_bytes = 0, data_bytes = 0;  // messaging-layer bytes sent
    uint64_t barrier_msgs = 0, count_msgs = 0, data_units = 0;
    uint64_t end_msgs = 0;  // messages of the end of the job (up and down the tree)
    uint64_t payload = 0;   // put bytes (h summed over processes and supersteps)
};

class MsgLayerRun {
  public:
    // link_rate: BSP_LINK_RATE of a node in bytes/s (0: no pacing).
    MsgLayerRun(Sim &sim, MsgPattern pat, int supersteps, uint64_t link_rate,
                uint32_t unit_bytes = 1 << 20);
    // Starts at the sim's current time; runs until every process finished its last barrier and
    // every message completed, or `horizon`. Returns true on success.
    bool run(uint64_t horizon);
    bool finished() const { return finished_ == static_cast<int>(st_.size()); }
    // Time at which the last process finished the data of superstep s (entered barrier s + 1),
    // s = 1..supersteps; end(0) is the start.
    uint64_t end(int s) const { return ends_[static_cast<size_t>(s)]; }
    const MsgLayerStats &stats() const { return stats_; }
    // Barrier rounds of one process per superstep (log2 q, plus 2 if p is no power of two).
    static int barrier_rounds(int p);
    // The tree of the end of the job: process i's parent (-1: the root, process 0) and
    // children. For i >= q the parent is i - q (the fold-in partner); for i < q the binomial
    // tree over q (parent: i without its lowest set bit), plus the child i + q if any.
    static int end_parent(int i, int p);
    static std::vector<int> end_children(int i, int p);

  private:
    struct Step {                         // what process i received of superstep s
        std::map<int, uint32_t> barrier;  // round -> contributions carried
        int counts = 0;                   // count messages received
        uint64_t units_expected = 0;      // units announced by them
        uint64_t units = 0;               // data units received
        std::map<int, std::pair<uint32_t, uint32_t>> from;  // sender -> (announced, arrived)
        std::set<int> expected;                             // senders told bspe_expect
        int ups = 0;        // end of the job: children that reported
        bool down = false;  // end of the job: the parent's broadcast arrived
    };
    struct Proc {
        int s = 0;           // current superstep (barrier s or data of s)
        int phase = 0;       // 0 barrier, 1 counts, 2 data, 3 done, 4 end of the job
        int round = 0;       // barrier: the round whose message we wait for
        uint32_t known = 1;  // barrier: contributions known
        std::map<int, Step> steps;
        std::vector<std::pair<int, uint32_t>> dests;  // in schedule order
        uint32_t fan_in = 0;
    };
    void start_barrier(int i, int s);
    void expect_round(int i);
    void expect_stream(int i, int k);  // bspe_expect of k's count message and units
    void barrier_send(int i, int to, int round);
    void progress(int i);
    bool end_progress(int i);  // phase 4; true when the process is done
    void on_deliver(Node &n, const Delivered &d);
    void send(int src, int dst, char tag, int s, uint32_t aux, uint32_t len, uint32_t flags);
    void send_stream(int i, int j, uint32_t len);

    Sim &sim_;
    MsgPattern pat_;
    int supersteps_;
    uint64_t link_rate_;
    uint32_t unit_bytes_;
    int q_ = 1, log_q_ = 0;
    std::vector<Proc> st_;
    std::vector<uint64_t> ends_;
    std::vector<int> left_;  // per superstep: processes that have not finished its data
    int finished_ = 0;
    uint64_t pacing_ = 0;  // bytes/s every process uses (the same for every process here)
    MsgLayerStats stats_;

  public:
    std::vector<std::string> errors;  // the workload's own checks (contributions, order)
    // bspe_expect(partner, 1, BSPE_EXPECT_SYNC) for each barrier round whose message has not
    // arrived (see expect_round), as messaging.cpp does; false: as it did before (for
    // comparison).
    bool expect_barrier = true;
    // Streams follow counts (messaging.cpp in a superstep without get requests): each
    // destination's data stream right after its count message, with bspe_set_follow; false:
    // every stream after all of the process's own counts arrived, as libbsp did before and
    // still does in a superstep with get requests (for comparison).
    bool streams_follow = true;
    // With streams_follow: each sender's stream is expected as soon as its count message is
    // here (and the barrier completed), not once every count is (bspe_expect totals).
    bool expect_at_count = true;
    // Traces: process i finished phase `phase` (0 barrier, 1 counts, 2 data) of superstep s at
    // time t, on the delivery of a message tagged `tag` ('B', 'C', 'D'; 0: no delivery) from
    // process `src`.
    std::function<void(int i, int s, int phase, uint64_t t, int src, char tag)> on_phase;

  private:
    void phase_done(int i, int s, int phase);
    int last_src_ = -1;  // the delivery progress() runs on (-1: none)
    char last_tag_ = 0;
};

}  // namespace bspsim
