// bsprun's job: starts the processes, coordinates them (bsp::launch::Coordinator),
// relays their output and standard input, and ends them all when one fails.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coordinator.hpp"
#include "job_plan.hpp"
#include "options.hpp"
#include "output_relay.hpp"
#include "unique_fd.hpp"

namespace bsprun {

class Supervisor {
  public:
    explicit Supervisor(Options options);
    ~Supervisor();
    // Runs the job; returns bsprun's exit status. Throws std::exception on set-up errors.
    int run();

  private:
    using Clock = std::chrono::steady_clock;
    struct Child {
        ProcessCommand command;
        pid_t os_pid = -1;
        std::optional<int> wstatus;
        std::unique_ptr<OutputRelay> out, err;
    };

    std::string open_rendezvous();
    void start_all(const JobPlan &plan);
    bool start(Child &child, bsp::launch::UniqueFd stdin_fd);
    // One poll of loop(): the descriptors, where each group starts in fds.
    struct PollSet {
        std::vector<pollfd> fds;
        std::size_t stdin_index = 0, stdin_pipe_index = 0;  // 0: not polled
        std::size_t relay_start = 0, coordinator_start = 0;
        std::vector<OutputRelay *> relays;  // fds[relay_start + i] is relays[i]
    };
    void loop();
    PollSet poll_set();
    int poll_timeout(const PollSet &set) const;
    void dispatch(PollSet &set);
    void on_timers(const PollSet &set, Clock::time_point now);
    void kill_groups();
    void reap_children();
    void on_child_exit(Child &child);
    bsp::launch::Outcome describe_loss(int pid);
    void end_job(const bsp::launch::Outcome &outcome);
    void on_teardown(const bsp::launch::Outcome &outcome);
    void on_signal(int sig);
    void signal_groups(int sig, bool only_unjoined);
    void forward_stdin_readable();
    void forward_stdin_writable();
    void close_stdin_forwarding();
    bool all_done() const;
    int exit_status() const;
    void remove_rendezvous();

    Options options_;
    std::string token_;
    bool remote_shell_ = false;  // the secret goes on each process's standard input
    std::unique_ptr<bsp::launch::Coordinator> coordinator_;
    bsp::launch::UniqueFd listener_;
    std::string socket_dir_, socket_path_;  // unix rendezvous to remove at the end
    std::vector<Child> children_;
    bsp::launch::UniqueFd signal_fd_;
    // Standard input forwarded to process 0.
    bool forward_stdin_ = false;
    bsp::launch::UniqueFd stdin_pipe_;
    std::string stdin_buffer_;
    bool stdin_eof_ = false;

    std::optional<bsp::launch::Outcome> outcome_;
    std::optional<Clock::time_point> kill_at_;      // SIGKILL what is left
    std::optional<Clock::time_point> deadline_;     // --timeout
    std::optional<Clock::time_point> drain_until_;  // output of exited processes' children
    int signals_seen_ = 0;
    bool zero_exit_unjoined_ = false;
    int zero_exit_pid_ = -1;
};

}  // namespace bsprun
