// Runs a Coordinator on its own thread inside a process of the job (the parent of
// spawn_local, the Slurm rank-0 process).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "coordinator.hpp"
#include "unique_fd.hpp"

namespace bsp::launch {

class CoordinatorThread {
  public:
    explicit CoordinatorThread(std::unique_ptr<Coordinator> coordinator);
    ~CoordinatorThread();  // stop()
    CoordinatorThread(const CoordinatorThread &) = delete;
    CoordinatorThread &operator=(const CoordinatorThread &) = delete;

    // Waits until the job has ended (finished or torn down) and every connection has
    // closed, or until the deadline. Returns whether it ended.
    bool wait_done(std::chrono::steady_clock::time_point deadline);
    // Asks the thread to stop and joins it.
    void stop();
    // Asks the thread to stop without waiting for it.
    void request_stop();

  private:
    void run();

    std::unique_ptr<Coordinator> coordinator_;
    UniqueFd stop_;
    std::mutex mutex_;
    std::condition_variable done_changed_;
    bool done_ = false;
    std::thread thread_;
};

}  // namespace bsp::launch
