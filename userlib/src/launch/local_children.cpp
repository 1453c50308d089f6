#include "local_children.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace bsp::launch {

namespace {

// How often children without a pidfd are checked, and the step of bounded waits.
constexpr auto kCheckInterval = std::chrono::milliseconds(100);
constexpr auto kWaitStep = std::chrono::milliseconds(5);

UniqueFd open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    // Close-on-exec by definition; readable once the process has ended.
    return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#else
    (void)pid;
    return UniqueFd();
#endif
}

}  // namespace

LocalChildren::LocalChildren(std::vector<pid_t> pids) {
    children_.reserve(pids.size());
    for (pid_t pid : pids) {
        // A child that has already ended is a zombie until reaped: its pidfd still opens.
        children_.push_back({pid, open_pidfd(pid), false, std::nullopt});
    }
}

void LocalChildren::poll_child(Child &c) {
    if (c.gone) {
        return;
    }
    int ws = 0;
    pid_t r = ::waitpid(c.pid, &ws, WNOHANG);
    if (r == c.pid) {
        c.status = ws;
        c.gone = true;
    } else if (r < 0 && errno == ECHILD) {
        c.gone = true;  // the program reaped it itself (waitpid(-1)), or SIGCHLD is ignored
    }
    if (c.gone) {
        changed_.notify_all();
    }
}

void LocalChildren::append_pollfds(std::vector<pollfd> &fds) {
    std::lock_guard lock(mutex_);
    for (const Child &c : children_) {
        if (!c.gone && c.pidfd) {
            fds.push_back({c.pidfd.get(), POLLIN, 0});
        }
    }
}

void LocalChildren::handle(const pollfd &ready) {
    std::lock_guard lock(mutex_);
    for (Child &c : children_) {
        if (c.pidfd.get() == ready.fd) {
            poll_child(c);
            return;
        }
    }
}

std::optional<PollSource::Clock::time_point> LocalChildren::next_deadline() {
    std::lock_guard lock(mutex_);
    bool unwatched = std::any_of(children_.begin(), children_.end(),
                                 [](const Child &c) { return !c.gone && !c.pidfd; });
    if (unwatched) {
        return Clock::now() + kCheckInterval;
    }
    return std::nullopt;
}

void LocalChildren::on_time(Clock::time_point) {
    std::lock_guard lock(mutex_);
    for (Child &c : children_) {
        if (!c.pidfd) {
            poll_child(c);
        }
    }
}

std::optional<int> LocalChildren::wait_for(std::size_t index, Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    Child &c = children_[index];
    for (;;) {
        poll_child(c);
        if (c.gone) {
            return c.status;
        }
        auto now = Clock::now();
        if (now >= deadline) {
            return std::nullopt;
        }
        // Woken early when the coordinator thread reaps it; checks by itself otherwise
        // (this may be the coordinator thread).
        changed_.wait_until(lock, std::min(deadline, now + kWaitStep));
    }
}

void LocalChildren::end_all(Clock::time_point deadline) {
    for (std::size_t i = 0; i < children_.size(); ++i) {
        if (wait_for(i, deadline)) {
            continue;
        }
        {
            std::lock_guard lock(mutex_);
            if (children_[i].gone) {
                continue;
            }
            ::kill(children_[i].pid, SIGKILL);
        }
    }
    wait_all();
}

void LocalChildren::wait_all() {
    for (Child &c : children_) {
        {
            std::lock_guard lock(mutex_);
            if (c.gone) {
                continue;
            }
        }
        // Block until it has ended without reaping it (WNOWAIT), then reap it under the
        // lock, so that the coordinator thread and this one never race for its status.
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOWAIT) < 0 &&
               errno == EINTR) {
        }
        std::lock_guard lock(mutex_);
        poll_child(c);
    }
}

}  // namespace bsp::launch
