// A BSP program run over the simulator: supersteps of (count exchange = barrier, data phase),
// as [DHS99] section 3 describes the BSPlib messaging layer.
//
// Superstep s on node i:
//   1. enter barrier s: send a SYNC message with the number of data messages i will send
//      to j in superstep s, to every other node j;
//   2. barrier s completes when the count messages of all other nodes arrived:
//      bspe_superstep_done(s), bspe_expect(j, count from j: a total), then send the data messages
//      in latin-square order (j = i+1, i+2, ...), the last one to each destination with
//      BSPE_SEND_LAST;
//   3. when all expected data arrived, enter barrier s+1.
// After the last superstep a final barrier (no data) plays bsp_end().
// A node enters barrier s+1 only after it received all its data of superstep s, which is
// the premise of the implicit acknowledgement rule (Documentation/protocol.rst).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim.hpp"

namespace bspsim {

struct Workload {
    std::string name;
    int supersteps = 1;
    // Sizes of the data messages node i sends to node j in superstep s (1-based).
    std::function<std::vector<uint32_t>(int s, int i, int j)> plan;
};

// Canonical workloads of the benchmark and the tests.
Workload total_exchange(int supersteps, int msgs_per_pair, uint32_t size);
Workload cyclic_shift(int supersteps, int msgs, uint32_t size, int p);
// LU-like: many small messages to the east and south neighbours of a 2-D process grid, in a
// wavefront (asymmetric: most pairs have no reverse traffic in a superstep).
Workload lu_like(int supersteps, int msgs, uint32_t size, int p);

class BspRun {
  public:
    BspRun(Sim &sim, Workload w);
    // Starts at the sim's current time; runs until every node finished the final barrier
    // and every message completed, or `horizon`. Returns true on success.
    bool run(uint64_t horizon);
    // Last superstep whose barrier completed on node i.
    int epoch(int i) const { return st_[i].epoch; }
    bool finished() const;
    uint64_t data_msgs() const { return data_msgs_; }
    uint64_t finish_time() const { return finish_time_; }

  private:
    struct NodeState {
        int barrier = 0;  // barrier being waited for (0: none)
        int epoch = 0;    // last completed barrier
        bool in_data = false;
        bool done = false;
        std::vector<std::vector<int>> counts;    // [superstep][src] count announced, -1 unknown
        std::vector<std::vector<int>> data_got;  // [superstep][src]
    };
    void enter_barrier(int i, int s);
    void progress(int i);
    void on_deliver(Node &n, const Delivered &d);

    Sim &sim_;
    Workload w_;
    std::vector<NodeState> st_;
    uint64_t data_msgs_ = 0;
    uint64_t finish_time_ = 0;
};

}  // namespace bspsim
