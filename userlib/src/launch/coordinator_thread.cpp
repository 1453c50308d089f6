#include "coordinator_thread.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <system_error>
#include <vector>

namespace bsp::launch {

CoordinatorThread::CoordinatorThread(std::unique_ptr<Coordinator> coordinator,
                                     std::shared_ptr<PollSource> also)
    : coordinator_(std::move(coordinator)),
      also_(std::move(also)),
      stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      owner_(::getpid()) {
    if (!stop_) {
        throw std::system_error(errno, std::generic_category(), "eventfd");
    }
    thread_ = std::thread([this] { run(); });
}

CoordinatorThread::~CoordinatorThread() {
    stop();
}

void CoordinatorThread::stop() {
    if (!thread_.joinable()) {
        return;
    }
    if (::getpid() != owner_) {
        // A copy of the owner made by fork(): the thread was not copied.
        thread_.detach();
        return;
    }
    {
        std::lock_guard lock(mutex_);
        stop_requested_ = true;
        changed_.notify_all();
    }
    std::uint64_t one = 1;
    ssize_t n = ::write(stop_.get(), &one, sizeof one);
    (void)n;
    thread_.join();
}

bool CoordinatorThread::wait_done(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return changed_.wait_until(lock, deadline, [this] { return done_; });
}

void CoordinatorThread::mark_done() {
    coordinator_->close_all();
    std::lock_guard lock(mutex_);
    done_ = true;
    changed_.notify_all();
}

void CoordinatorThread::run() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    run_loop();
    // poll() itself failed: nothing can be watched any more. The coordinator's
    // connections are closed (its processes see the coordinator lost and end); wait to
    // be joined.
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return stop_requested_; });
}

void CoordinatorThread::run_loop() {
    bool active = true;  // the coordinator still has work (the job runs, or connections)
    std::vector<pollfd> fds;
    for (;;) {
        fds.clear();
        fds.push_back({stop_.get(), POLLIN, 0});
        if (active) {
            coordinator_->append_pollfds(fds);
        }
        const std::size_t first_also = fds.size();
        if (also_) {
            also_->append_pollfds(fds);
        }
        std::optional<Coordinator::Clock::time_point> deadline;
        if (active) {
            deadline = coordinator_->next_deadline();
        }
        if (also_) {
            if (auto d = also_->next_deadline(); d && (!deadline || *d < *deadline)) {
                deadline = d;
            }
        }
        int timeout = -1;
        if (deadline) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                *deadline - Coordinator::Clock::now());
            timeout = static_cast<int>(std::max<long long>(0, left.count() + 1));
        }
        int n = ::poll(fds.data(), fds.size(), timeout);
        if (n < 0 && errno != EINTR) {
            if (active) {
                mark_done();
            }
            return;
        }
        if (fds[0].revents != 0) {
            if (active) {
                mark_done();
            }
            return;
        }
        for (std::size_t i = 1; i < fds.size(); ++i) {
            if (fds[i].revents == 0) {
                continue;
            }
            if (i < first_also) {
                coordinator_->handle(fds[i]);
            } else {
                also_->handle(fds[i]);
            }
        }
        auto now = Coordinator::Clock::now();
        if (active) {
            coordinator_->on_time(now);
            if (coordinator_->state() != Coordinator::State::running && coordinator_->quiet()) {
                mark_done();
                active = false;
            }
        }
        if (also_) {
            also_->on_time(now);
        }
    }
}

}  // namespace bsp::launch
