#include "coordinator_thread.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <system_error>
#include <vector>

namespace bsp::launch {

CoordinatorThread::CoordinatorThread(std::unique_ptr<Coordinator> coordinator)
    : coordinator_(std::move(coordinator)), stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!stop_) {
        throw std::system_error(errno, std::generic_category(), "eventfd");
    }
    thread_ = std::thread([this] { run(); });
}

CoordinatorThread::~CoordinatorThread() {
    stop();
}

void CoordinatorThread::request_stop() {
    std::uint64_t one = 1;
    ssize_t n = ::write(stop_.get(), &one, sizeof one);
    (void)n;
}

void CoordinatorThread::stop() {
    if (thread_.joinable()) {
        request_stop();
        thread_.join();
    }
}

bool CoordinatorThread::wait_done(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return done_changed_.wait_until(lock, deadline, [this] { return done_; });
}

void CoordinatorThread::run() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);

    std::vector<pollfd> fds;
    while (coordinator_->state() == Coordinator::State::running || !coordinator_->quiet()) {
        fds.clear();
        fds.push_back({stop_.get(), POLLIN, 0});
        coordinator_->append_pollfds(fds);
        int timeout = -1;
        if (auto deadline = coordinator_->next_deadline()) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                *deadline - Coordinator::Clock::now());
            timeout = static_cast<int>(std::max<long long>(0, left.count() + 1));
        }
        int n = ::poll(fds.data(), fds.size(), timeout);
        if (n < 0 && errno != EINTR) {
            break;
        }
        if (fds[0].revents != 0) {
            break;
        }
        for (std::size_t i = 1; i < fds.size(); ++i) {
            if (fds[i].revents != 0) {
                coordinator_->handle(fds[i]);
            }
        }
        coordinator_->on_time(Coordinator::Clock::now());
    }
    coordinator_->close_all();
    std::lock_guard lock(mutex_);
    done_ = true;
    done_changed_.notify_all();
}

}  // namespace bsp::launch
