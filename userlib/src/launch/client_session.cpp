#include "client_session.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <system_error>

#include "launch_environment.hpp"
#include "wire.hpp"

namespace bsp::launch {

namespace {

// Time the program gets to notice control_fd and end by itself before the watcher
// ends the process (BSP_TEARDOWN_GRACE overrides it).
constexpr auto kTeardownGrace = std::chrono::milliseconds(250);
// How long abort() waits for the coordinator to confirm the job is being torn down.
constexpr auto kAbortAckWait = std::chrono::seconds(5);

std::atomic<bool> g_exiting{false};

UniqueFd make_eventfd() {
    UniqueFd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!fd) {
        throw std::system_error(errno, std::generic_category(), "eventfd");
    }
    return fd;
}

void signal_eventfd(int fd) {
    std::uint64_t one = 1;
    ssize_t n = ::write(fd, &one, sizeof one);
    (void)n;
}

}  // namespace

ClientSession::ClientSession(int pid, int nprocs, const std::string &token, UniqueFd connection,
                             std::unique_ptr<SessionCompanion> companion,
                             std::chrono::milliseconds welcome_timeout, const std::string &where,
                             const std::string &other_job_hint)
    : pid_(pid),
      nprocs_(nprocs),
      secret_(token),
      connection_(std::move(connection)),
      control_(make_eventfd()),
      stop_(make_eventfd()),
      companion_(std::move(companion)),
      teardown_grace_(env::teardown_grace(kTeardownGrace)) {
    auto hello = wire::Encoder()
                     .u32(wire::kVersion)
                     .u32(static_cast<std::uint32_t>(pid))
                     .u32(static_cast<std::uint32_t>(nprocs))
                     .string(token)
                     .data();
    if (!wire::send_message(connection_.get(), wire::Type::hello, hello)) {
        throw std::system_error(
            errno, std::generic_category(),
            "bsp: process " + std::to_string(pid) + ": cannot greet the job coordinator");
    }
    watcher_ = std::thread([this] { watch(); });

    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, welcome_timeout, [this] { return welcomed_ || ended_; });
    if (welcomed_) {
        return;
    }
    bool refused = ended_;
    auto refusal = refusal_;
    lock.unlock();
    signal_eventfd(stop_.get());
    watcher_.join();
    std::string who = "bsp: process " + std::to_string(pid) + ": ";
    if (refusal) {
        std::string hint;
        if (refusal->first == static_cast<std::uint32_t>(wire::Refusal::other_job)) {
            hint = other_job_hint;
        }
        throw std::runtime_error(who + "the job coordinator at " + where +
                                 " refused this process: " + refusal->second + hint);
    }
    if (refused) {
        throw std::runtime_error(who + "the job coordinator at " + where +
                                 " refused this process (another job's coordinator, or a "
                                 "wrong BSP_JOB)");
    }
    throw std::runtime_error(who + "no answer from the job coordinator at " + where +
                             " (is something else listening there?)");
}

ClientSession::~ClientSession() {
    if (watcher_.joinable()) {
        signal_eventfd(stop_.get());
        watcher_.join();
    }
    // Closing the connection before finish() tells the coordinator this process left
    // the job; it tears the others down.
    connection_.reset();
}

void ClientSession::watch() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);

    wire::Reader reader;
    for (;;) {
        pollfd fds[2] = {{connection_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
        int n = ::poll(fds, 2, -1);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            mark_ended(1, true);
            break;
        }
        if (fds[1].revents != 0) {
            return;
        }
        auto fill = reader.fill(connection_.get());
        if (fill == wire::Reader::Fill::would_block) {
            continue;
        }
        if (fill != wire::Reader::Fill::data) {
            mark_ended(1, true);
            break;
        }
        bool teardown = false;
        try {
            while (auto m = reader.next()) {
                wire::Decoder d(m->body);
                std::lock_guard lock(mutex_);
                switch (m->type) {
                    case wire::Type::welcome:
                        welcomed_ = true;
                        break;
                    case wire::Type::refused: {
                        std::uint32_t why = d.u32();
                        refusal_.emplace(why, d.string());
                        break;
                    }
                    case wire::Type::gathered:
                        gathered_ = std::move(m->body);
                        break;
                    case wire::Type::finished:
                        finished_ = true;
                        break;
                    case wire::Type::abort_ack:
                        ack_status_ = static_cast<int>(d.u32());
                        break;
                    case wire::Type::teardown:
                        end_status_ = static_cast<int>(d.u32());
                        ended_ = true;
                        teardown = true;
                        welcomed_ = true;  // a late joiner of a job that is already over
                        break;
                    default:
                        throw std::runtime_error("unexpected message from the coordinator");
                }
                changed_.notify_all();
            }
        } catch (const std::exception &) {
            mark_ended(1, true);
            break;
        }
        if (teardown) {
            signal_eventfd(control_.get());
            break;
        }
        std::lock_guard lock(mutex_);
        if (finished_) {
            return;
        }
    }
    {
        // Refused before joining: the constructor reports it, the process goes on.
        std::lock_guard lock(mutex_);
        if (!welcomed_) {
            return;
        }
    }
    // The job is over. Give the program a moment to notice control_fd, then end it.
    pollfd stop = {stop_.get(), POLLIN, 0};
    if (::poll(&stop, 1, static_cast<int>(teardown_grace_.count())) > 0) {
        return;
    }
    int status;
    {
        std::lock_guard lock(mutex_);
        if (finished_) {
            return;
        }
        status = end_status_;
    }
    end_process(status);
}

void ClientSession::mark_ended(int status, bool lost) {
    {
        std::lock_guard lock(mutex_);
        if (finished_) {
            return;
        }
        if (!ended_) {
            ended_ = true;
            lost_ = lost;
            end_status_ = status;
        }
        changed_.notify_all();
    }
    signal_eventfd(control_.get());
}

void ClientSession::end_process(int status) {
    if (g_exiting.exchange(true)) {
        // Another thread is already ending the process.
        for (;;) {
            ::pause();
        }
    }
    if (companion_) {
        companion_->before_exit();
    }
    std::fflush(nullptr);
    ::_exit(status);
}

void ClientSession::end_quietly() {
    int status;
    {
        std::lock_guard lock(mutex_);
        status = end_status_;
    }
    end_process(status);
}

void ClientSession::print_and_exit(std::string_view message) {
    if (!message.empty()) {
        std::string line(message);
        if (line.back() != '\n') {
            line += '\n';
        }
        std::fputs(line.c_str(), stderr);
    }
    end_process(kAbortStatus);
}

std::vector<std::vector<std::byte>> ClientSession::allgather(std::span<const std::byte> mine) {
    if (closed_) {
        throw std::logic_error("bsp::launch::Session::allgather after finish");
    }
    if (mine.size() > wire::kMaxBody - 64) {
        throw std::length_error("bsp::launch::Session::allgather: blob of " +
                                std::to_string(mine.size()) + " bytes is too large");
    }
    {
        std::lock_guard lock(send_mutex_);
        wire::send_message(connection_.get(), wire::Type::allgather, mine);
        // A failed send means the coordinator is gone; the watcher reports it.
    }
    std::vector<std::byte> body;
    {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return gathered_.has_value() || ended_; });
        if (!gathered_) {
            lock.unlock();
            end_quietly();
        }
        body = std::move(*gathered_);
        gathered_.reset();
    }
    wire::Decoder d(body);
    std::uint32_t n = d.u32();
    if (static_cast<int>(n) != nprocs_) {
        throw std::runtime_error("bsp: allgather result has " + std::to_string(n) +
                                 " blobs, expected " + std::to_string(nprocs_));
    }
    std::vector<std::vector<std::byte>> all;
    all.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        all.push_back(d.bytes());
    }
    return all;
}

void ClientSession::finish() {
    if (closed_) {
        throw std::logic_error("bsp::launch::Session::finish called twice");
    }
    // What the program printed is written before the job can end around it.
    std::fflush(nullptr);
    if (companion_) {
        companion_->before_finish();
    }
    {
        std::lock_guard lock(send_mutex_);
        wire::send_message(connection_.get(), wire::Type::finish, {});
    }
    {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return finished_ || ended_; });
        if (!finished_) {
            lock.unlock();
            end_quietly();
        }
    }
    watcher_.join();
    connection_.reset();
    closed_ = true;
    if (companion_) {
        companion_->after_finish();
    }
}

void ClientSession::abort(std::string_view message) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    if (closed_) {
        print_and_exit(message);
    }
    {
        std::lock_guard lock(mutex_);
        if (ended_ && !lost_) {
            // The job is already being torn down by someone else: nothing to add.
            end_process(end_status_);
        }
        if (ended_) {
            print_and_exit(message);
        }
    }
    bool sent;
    {
        std::lock_guard lock(send_mutex_);
        auto body =
            wire::Encoder().u32(static_cast<std::uint32_t>(kAbortStatus)).string(message).data();
        sent = wire::send_message(connection_.get(), wire::Type::abort, body);
    }
    if (!sent) {
        print_and_exit(message);
    }
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, kAbortAckWait, [this] { return ack_status_.has_value() || ended_; });
    if (ack_status_) {
        int status = *ack_status_;
        lock.unlock();
        end_process(status);
    }
    if (ended_ && !lost_) {
        int status = end_status_;
        lock.unlock();
        end_process(status);
    }
    lock.unlock();
    print_and_exit(message);
}

}  // namespace bsp::launch
