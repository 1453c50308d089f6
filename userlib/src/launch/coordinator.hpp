// The coordinator of a job: accepts the control connections of the nprocs processes,
// runs their collectives (allgather, finish), and tears the whole job down when one
// process aborts, dies or misbehaves. It does no I/O scheduling of its own: its owner
// (bsprun's event loop, or CoordinatorThread) polls the descriptors it lists.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "unique_fd.hpp"
#include "wire.hpp"

namespace bsp::launch {

// How a job ended abnormally: culprit is the pid that aborted or died (-1 when the job
// was ended from outside: time limit, signal, join time-out). Every process exits with
// status. message is the one line printed for the whole job (without newline).
struct Outcome {
    int culprit = -1;
    int status = 1;
    std::string message;
};

class Coordinator {
  public:
    using Clock = std::chrono::steady_clock;

    struct Options {
        int nprocs = 1;
        std::string token;  // job token every process presents in its hello
        std::string name;   // prefix of the messages it makes up ("bsprun", "bsp")
        // Time allowed between the first and the last process joining (none: no limit).
        std::optional<std::chrono::milliseconds> join_timeout{std::chrono::seconds(60)};
        // Describes a joined process whose control connection closed before the job
        // finished (it died, or exited without finish()). Required.
        std::function<Outcome(int pid)> describe_loss;
        // Called once, when the job is torn down (before the processes are told).
        std::function<void(const Outcome &)> on_teardown;
        // Connections from the listener that have not been accepted as a process of the
        // job yet: at most this many at once (the oldest is closed to make room for a new
        // one), each closed when no hello arrived within hello_timeout. Their first
        // message may be at most wire::kMaxHelloBody bytes.
        int max_unauthenticated = 32;
        std::chrono::milliseconds hello_timeout{std::chrono::seconds(10)};
        // Lines about refused strangers on stderr: the first, then at most one per
        // interval; the rest are counted and summed up at close_all().
        std::chrono::milliseconds report_interval{std::chrono::seconds(60)};
    };

    enum class State { running, finished, torn_down };

    explicit Coordinator(Options options);
    ~Coordinator();
    Coordinator(const Coordinator &) = delete;
    Coordinator &operator=(const Coordinator &) = delete;

    void set_listener(UniqueFd listener);
    // A connection that is already established (socketpair); it still sends its hello.
    void adopt(UniqueFd connection);

    // Appends the descriptors to poll (listener, connections) with their events.
    void append_pollfds(std::vector<pollfd> &fds) const;
    // Handles readiness reported by poll() for one descriptor it listed. Returns false
    // if the descriptor is not one of its own.
    bool handle(const pollfd &ready);

    // The earliest time on_time() must be called (join time-out), if any.
    std::optional<Clock::time_point> next_deadline() const;
    void on_time(Clock::time_point now);

    // Ends the job from outside (or from the owner's own knowledge of a death). Ignored
    // unless the job is still running.
    void tear_down(const Outcome &outcome);

    State state() const { return state_; }
    const std::optional<Outcome> &outcome() const { return outcome_; }
    int nprocs() const { return options_.nprocs; }
    bool has_joined(int pid) const;
    int joined_count() const;
    bool finish_called(int pid) const;
    bool connected(int pid) const;
    // No connection is open any more (after the end, every process has gone).
    bool quiet() const;
    // Closes the listener and every connection; a connection that never presented this
    // job's token counts as refused. Prints the count of refusals not reported yet.
    void close_all();
    // Connections from the listener that were closed without joining the job (wrong
    // token or version, no or malformed hello, over the limit, left at the end).
    long refused_count() const { return refused_; }
    // Connections from the listener that are waiting for their hello.
    int unauthenticated_count() const;
    // accept() failed for lack of descriptors (EMFILE, ENFILE, ...) this many times.
    long accept_backoffs() const { return accept_backoffs_; }

  private:
    struct Connection;
    void accept_new();
    void add(UniqueFd connection, bool stranger);
    // Closes a connection that never joined and counts (and maybe reports) it.
    void drop_stranger(Connection &c, const std::string &why);
    void report_refusal(const std::string &why);
    bool evict_oldest_stranger(const std::string &why);
    void read_from(Connection &c);
    void dispatch(Connection &c, wire::Message &m);
    void on_hello(Connection &c, const wire::Message &m);
    // Tells a process why its hello is refused and closes its connection.
    void refuse(Connection &c, wire::Refusal why, const std::string &reason);
    void on_allgather(Connection &c, wire::Message &m);
    void on_finish(Connection &c);
    void on_abort(Connection &c, const wire::Message &m);
    void lost(Connection &c);
    void complete_round();
    void check_mismatch();
    void broadcast(wire::Type type, const std::vector<std::byte> &body, Connection *aborter);
    void tear_down_internal(const Outcome &outcome, Connection *aborter);
    Connection *by_pid(int pid) const;
    std::optional<Clock::time_point> join_deadline() const;
    void compact();

    Options options_;
    UniqueFd listener_;
    std::vector<std::unique_ptr<Connection>> connections_;
    std::vector<std::optional<std::vector<std::byte>>> round_;  // contributions, by pid
    int contributed_ = 0;
    std::vector<bool> joined_;
    std::vector<bool> finishing_;
    int finishing_count_ = 0;
    std::optional<Clock::time_point> first_join_;
    long refused_ = 0;
    long unreported_ = 0;
    std::optional<Clock::time_point> last_report_;
    std::optional<Clock::time_point> listen_paused_until_;  // out of descriptors: back off
    std::chrono::milliseconds backoff_{0};
    long accept_backoffs_ = 0;
    State state_ = State::running;
    std::optional<Outcome> outcome_;
};

}  // namespace bsp::launch
