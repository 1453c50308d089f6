// The BSP messaging layer ([DHS99] section 3): runs the communication of one superstep
// over a Transport. Steps, all inside bsp_sync:
//   1. barrier: a butterfly all-reduce of the processes' contributions (registration and
//      tag-size calls, checked collectively) and a reduce-scatter of the communication
//      matrix's rows into fan-in counters; O(p) bytes per process; its completion is
//      signalled to the transport;
//   2. pacing rate from the known global load; total exchange of counts (bytes, records,
//      get requests) between the processes that communicate, after which every process
//      knows what it will receive;
//   3. destination scheduling, repackaging of every destination's records into
//      transport-sized units: each stream right behind its counts message when no process
//      has get requests (streams follow counts), else after all counts arrived;
//   4. completion by counting the units each source announced.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <vector>

#include "messages.hpp"
#include "schedule.hpp"
#include "transport.hpp"

namespace bsp::rt {

struct MessagingConfig {
    Schedule schedule = Schedule::LatinSquare;
    std::uint64_t link_rate = 0;  // bytes/s of one node's link; 0: no pacing
    std::size_t unit_bytes = 0;   // 0: the transport's largest message
    std::uint64_t seed = 0;       // for Schedule::Random
    bool combine = true;          // false: one unit per record (no combining, for the probe)
};

// What this process sends to one destination in a superstep.
struct OutRecord {
    RecordKind kind = RecordKind::Put;
    std::uint32_t a = 0;
    std::uint64_t b = 0;
    std::span<const std::byte> data;
};
struct Outgoing {
    std::vector<OutRecord> records;  // puts and sends, in call order
    std::vector<GetRequest> gets;
    std::uint64_t bytes() const;
    bool empty() const { return records.empty() && gets.empty(); }
};

// Serves a remote get: the bytes of local registered memory it reads (checked).
using GetServer = std::function<std::span<const std::byte>(int requester, const GetRequest &)>;

// Statistics of the last superstep, for tests and the probe.
struct SuperstepStats {
    std::uint64_t messages_sent = 0;
    std::uint64_t units_sent = 0;
    std::uint64_t bytes_sent = 0;
    std::uint64_t pacing_rate = 0;
    std::vector<int> send_order;  // destinations of data streams, in transmission order
};

// The stash holds messages that arrived before the step that takes them (a peer already in
// the next barrier, counts and data of a peer that finished the barrier first). It keeps
// only what a correct peer can have sent (Documentation/security.rst, "Bounded state in the
// messaging layer"): barrier messages of this and the next superstep, each (sender, round)
// of the butterfly once; one counts message per sender and superstep; data units of this
// superstep from a sender whose counts arrived, up to the bytes those counts allow. Anything
// else is dropped and counted here.
struct StashStats {
    std::uint64_t dropped = 0;        // messages dropped instead of kept
    std::uint64_t dropped_bytes = 0;  // their bytes
    std::uint64_t peak_bytes = 0;     // largest number of bytes ever kept at once
};

// One data unit as it arrived (a transport message of step 4: header, unit info, records).
using DataUnit = std::vector<std::byte>;
// Per source pid, the data units received from it, in unit order (empty for sources that
// sent nothing): what Messaging::exchange returns and Runtime::deliver applies.
using UnitsBySource = std::vector<std::vector<DataUnit>>;

// What the barrier tells every process.
struct BarrierResult {
    BarrierSummary all;        // of every process: first == 0, members == p
    std::uint32_t fan_in = 0;  // processes with puts, sends or get requests for this one
};

class Messaging {
  public:
    Messaging(int pid, int nprocs, Transport *transport, MessagingConfig cfg);

    // Step 1. mine.row[j] != 0: this process has puts, sends or get requests for j. With
    // out (what exchange() will be given), a transport's shared board (every process on
    // one host) carries the counts of step 2 too, when every process gives them.
    BarrierResult barrier(std::uint64_t superstep, const Contribution &mine,
                          const std::vector<Outgoing> *out = nullptr);

    // Steps 2-4, after barrier() returned b. out[j] is what goes to process j (out[pid] is
    // ignored: local operations never reach the transport; !out[j].empty() must be
    // mine.row[j] of the barrier). Returns, per source pid, the data units received
    // (in unit order; empty for sources that sent nothing).
    UnitsBySource exchange(std::uint64_t superstep, const BarrierResult &b,
                           const std::vector<Outgoing> &out, const GetServer &serve);

    // The end of the job, after the last superstep's exchange (bsp_end): a gather and a
    // broadcast of header-only messages over a tree of butterfly channels, so that every
    // process learns that every process completed the last barrier, and the transport
    // settles that barrier's messages without probing for them (barrier_completed of
    // `superstep`, the one after the last). Documentation/messaging.rst, "The end of the job".
    void finish(std::uint64_t superstep);

    const SuperstepStats &stats() const { return stats_; }
    const MessagingConfig &config() const { return cfg_; }
    const StashStats &stash_stats() const { return stash_stats_; }
    std::uint64_t stash_bytes() const { return stash_bytes_; }

  private:
    // barrier() through the transport's shared board: nullopt when a process's blob did not
    // fit (then every process runs the butterfly).
    std::optional<BarrierResult> board_barrier(std::uint64_t superstep, const Contribution &mine,
                                               const std::vector<Outgoing> *out);
    // Next message matching (type, superstep, aux, src); others are kept for later.
    Received take(MsgType type, std::uint64_t superstep, std::int64_t aux, int src);
    Received take_any(MsgType type, std::uint64_t superstep);
    // Whether such a message is in the stash.
    bool stashed(MsgType type, std::uint64_t superstep, std::int64_t aux, int src) const;
    bool matches(const Received &r, MsgType type, std::uint64_t superstep, std::int64_t aux,
                 int src) const;
    void send(int dst, std::vector<std::byte> msg, unsigned flags = 0);
    // A message that take() does not want now: kept in the stash if a correct peer can have
    // sent it (see StashStats), else dropped and counted.
    void stash_or_drop(Received r);
    // Whether r may be kept; records what it implies for later messages (seen barrier
    // rounds, the sender's counts, data bytes kept).
    bool admit(const Received &r, const MsgHeader &h);
    void start_superstep(std::uint64_t superstep);
    // The steps of exchange().
    void send_counts(std::uint64_t superstep, const std::vector<Outgoing> &out, bool follow);
    // With `follow`, each sender's stream is announced to the transport as soon as its
    // counts message is taken (the stream is right behind it).
    std::vector<Counts> receive_counts(std::uint64_t superstep, std::uint32_t fan_in, bool follow);
    // What one source sends us in a superstep, as announced to the transport.
    struct Expected {
        bool stream = false;      // a data stream
        bool counts = false;      // a counts message (counts go by messages)
        std::uint64_t units = 0;  // units of the stream: a lower bound until one arrived
        std::uint64_t bytes = 0;
        std::uint32_t messages() const;  // counts message + units, saturated
    };
    std::vector<Expected> expect_streams(std::uint64_t superstep, const std::vector<Counts> &counts,
                                         const std::vector<Outgoing> &out, bool counts_by_message);
    // What k sends us: its counts (a counts message when counts_by_message) and our get
    // requests to it (their replies); stream_units: the exact number of units of its stream
    // when known (a unit is here), else 0.
    Expected expected_from(const Counts &c, const std::vector<GetRequest> &our_gets,
                           bool counts_by_message, std::uint32_t stream_units) const;
    // Tells the transport what k sends us, unless it was told exactly that already in this
    // superstep (a repeated expectation would restart the engine's prod interval).
    void announce(int k, const Expected &e);
    void send_stream(std::uint64_t superstep, int j, const Outgoing &o,
                     const std::vector<GetRequest> &requests, const GetServer &serve, bool records);
    UnitsBySource receive_streams(std::uint64_t superstep, std::vector<Expected> expect);

    // What one sender may still send in superstep cur_.
    struct PeerStep {
        bool counts = false;           // its counts of cur_ arrived
        std::uint64_t records = 0;     // announced by those counts
        std::uint64_t data_bytes = 0;  // announced by those counts
        std::uint64_t our_gets = 0;    // our get requests to it: its replies
        std::uint64_t our_get_bytes = 0;
        std::uint64_t data_kept = 0;  // bytes of its data units kept in the stash
    };
    // Largest number of bytes of data units a sender can send in a superstep with what its
    // counts and our get requests announce.
    std::uint64_t stream_bound(const PeerStep &p) const;

    int pid_;
    int nprocs_;
    Transport *transport_;
    MessagingConfig cfg_;
    std::deque<Received> stash_;
    std::uint64_t stash_bytes_ = 0;
    StashStats stash_stats_;
    SuperstepStats stats_;

    // What the stash may still admit in superstep cur_.
    std::uint64_t cur_ = 0;
    bool in_barrier_ = false;                               // inside barrier(cur_)
    bool exchanging_ = false;                               // inside exchange(cur_)
    std::uint32_t fan_in_ = 0;                              // senders of counts in cur_
    std::uint32_t counts_seen_ = 0;                         // counts of cur_ admitted or taken
    std::set<std::pair<int, std::uint32_t>> barrier_from_;  // (sender, round) we receive
    std::set<std::tuple<std::uint64_t, int, std::uint32_t>> barrier_seen_;
    std::vector<PeerStep> peers_;           // per sender
    std::vector<std::uint32_t> announced_;  // per sender: messages announced in the exchange
    // The counts the board carried for superstep board_counts_step_ (exchange() takes them).
    std::optional<std::vector<Counts>> board_counts_;
    std::uint64_t board_counts_step_ = 0;
    // With them: per destination, whether our puts and sends went in the board; per
    // source, its units of puts and sends for us that came in the board.
    std::vector<bool> board_inline_out_;
    UnitsBySource board_inline_in_;
    // board_barrier()'s blob, kept from one call to the next (no allocation when its size
    // does not grow).
    std::vector<std::byte> board_blob_;
};

}  // namespace bsp::rt
