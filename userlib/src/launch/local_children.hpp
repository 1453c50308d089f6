// The processes spawn_local forked (bsp pids 1..nprocs-1), seen from process 0: each is
// reaped as soon as it ends, by the coordinator thread (a pidfd per child makes the end
// visible to poll), or by whichever thread asks for its status first. Only these pids are
// ever waited for, never -1: the program's own children keep their exit statuses.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

#include "poll_source.hpp"
#include "unique_fd.hpp"

namespace bsp::launch {

class LocalChildren final : public PollSource {
  public:
    // pids[i] is bsp pid i+1. Opens a pidfd per child where the kernel has them
    // (Linux >= 5.3); children without one are checked every 100 ms instead.
    explicit LocalChildren(std::vector<pid_t> pids);

    void append_pollfds(std::vector<pollfd> &fds) override;
    void handle(const pollfd &ready) override;
    std::optional<Clock::time_point> next_deadline() override;
    void on_time(Clock::time_point now) override;

    // The wait status of child `index` (bsp pid index+1) once it has ended, waiting until
    // the deadline; nullopt if it is still running then, or if someone else (the program,
    // with waitpid(-1)) reaped it.
    std::optional<int> wait_for(std::size_t index, Clock::time_point deadline);
    // Waits for every child until the deadline, then SIGKILLs and reaps the rest.
    void end_all(Clock::time_point deadline);
    // Blocks until every child has ended and been reaped.
    void wait_all();

  private:
    struct Child {
        pid_t pid;
        UniqueFd pidfd;             // readable once the child has ended
        bool gone = false;          // reaped (status known) or reaped by someone else
        std::optional<int> status;  // its wait status, when we reaped it
    };
    // waitpid(WNOHANG) for one child; the caller holds mutex_.
    void poll_child(Child &c);

    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Child> children_;
};

}  // namespace bsp::launch
