// Something a CoordinatorThread watches besides its coordinator (spawn_local's
// children): descriptors to poll, what to do when they are ready, and timers.
#pragma once

#include <poll.h>

#include <chrono>
#include <optional>
#include <vector>

namespace bsp::launch {

class PollSource {
  public:
    using Clock = std::chrono::steady_clock;

    virtual ~PollSource() = default;
    // Appends the descriptors to poll with their events.
    virtual void append_pollfds(std::vector<pollfd> &fds) = 0;
    // Readiness reported by poll() for one of the descriptors it appended.
    virtual void handle(const pollfd &ready) = 0;
    // The earliest time on_time() must be called, if any.
    virtual std::optional<Clock::time_point> next_deadline() = 0;
    virtual void on_time(Clock::time_point now) = 0;
};

}  // namespace bsp::launch
