// Runs a Coordinator on its own thread inside a process of the job (the parent of
// spawn_local, the Slurm rank-0 process), optionally together with another PollSource
// (spawn_local's children, reaped as they end).
//
// The thread runs until it is stopped: once the job has ended and every connection has
// closed it only keeps watching the extra source, and then waits for stop(). It therefore
// never ends unjoined, whichever way the process ends; stop() (called by the destructor
// at the latest) joins it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "coordinator.hpp"
#include "poll_source.hpp"
#include "unique_fd.hpp"

namespace bsp::launch {

class CoordinatorThread {
  public:
    explicit CoordinatorThread(std::unique_ptr<Coordinator> coordinator,
                               std::shared_ptr<PollSource> also = nullptr);
    ~CoordinatorThread();  // stop()
    CoordinatorThread(const CoordinatorThread &) = delete;
    CoordinatorThread &operator=(const CoordinatorThread &) = delete;

    // Waits until the job has ended (finished or torn down) and every connection has
    // closed, or until the deadline. Returns whether it ended.
    bool wait_done(std::chrono::steady_clock::time_point deadline);
    // Stops the thread and joins it; closes the coordinator's connections if the job is
    // still running. Idempotent. In a process forked from the owner (where the thread
    // does not exist) it only forgets the thread.
    void stop();

  private:
    void run();
    void run_loop();
    void mark_done();

    std::unique_ptr<Coordinator> coordinator_;
    std::shared_ptr<PollSource> also_;
    UniqueFd stop_;  // eventfd: stop requested
    const pid_t owner_;
    std::mutex mutex_;
    std::condition_variable changed_;
    bool done_ = false;            // the coordinator has ended and closed everything
    bool stop_requested_ = false;  // for a thread that can no longer poll
    std::thread thread_;
};

}  // namespace bsp::launch
