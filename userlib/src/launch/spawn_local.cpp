// Session::spawn_local: a program started directly forks its own processes. The caller
// becomes pid 0 and runs the coordinator on a thread; each child is pid 1..nprocs-1.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "client_session.hpp"
#include "coordinator_thread.hpp"
#include "job_token.hpp"
#include "launch_environment.hpp"
#include "local_children.hpp"
#include "session.hpp"
#include "wait_status.hpp"

namespace bsp::launch {

namespace {

using Clock = std::chrono::steady_clock;

// Pid 0: owns the coordinator thread, which also reaps the children as they end.
class SpawnParent final : public SessionCompanion {
  public:
    SpawnParent(std::shared_ptr<LocalChildren> children, std::unique_ptr<Coordinator> coordinator)
        : children_(children), thread_(std::move(coordinator), std::move(children)) {}

    ~SpawnParent() override {
        // The session closed its connection before this runs; if it had not finished,
        // the coordinator is tearing the children down now.
        thread_.wait_done(Clock::now() + std::chrono::seconds(5));
        children_->wait_all();
        thread_.stop();
    }
    // After a normal end the thread goes on reaping the children as they exit; it is
    // joined when the session is destroyed or the process ends through the session.
    void before_exit() override {
        // The children were told (they are told before pid 0); let them flush and end.
        children_->end_all(Clock::now() + std::chrono::seconds(2));
        thread_.stop();
    }

  private:
    std::shared_ptr<LocalChildren> children_;
    CoordinatorThread thread_;
};

// Pids 1..: die with the parent until they finish the job; afterwards they may outlive
// it (the parent waits for them anyway). The death signal goes before the child says it
// finished: once every process has, process 0 may exit, and a child still between its
// finish message and clearing the signal was killed before its exit flushed its output.
// A process 0 that dies while the children finish still ends them: their control
// connection closes.
class SpawnChild final : public SessionCompanion {
  public:
    void before_finish() override { ::prctl(PR_SET_PDEATHSIG, 0); }
};

Outcome describe_child_loss(LocalChildren &children, int pid) {
    if (pid == 0) {
        return {0, 1, "bsp: process 0 left the job before bsp_end"};
    }
    auto ws = children.wait_for(static_cast<std::size_t>(pid - 1),
                                Clock::now() + std::chrono::seconds(1));
    std::string who = "bsp: process " + std::to_string(pid);
    if (!ws) {
        return {pid, 1, who + " closed its control connection before bsp_end"};
    }
    int status = shell_status(*ws);
    return {pid, status == 0 ? 1 : status,
            who + " " + describe_wait_status(*ws) + " before bsp_end"};
}

}  // namespace

std::unique_ptr<Session> Session::spawn_local(int nprocs) {
    if (nprocs < 1) {
        throw std::invalid_argument("bsp::launch::Session::spawn_local: nprocs " +
                                    std::to_string(nprocs) + " is not positive");
    }
    std::string token = make_job_token();
    const auto join_timeout = env::join_timeout();  // a malformed value fails before forking
    std::vector<UniqueFd> coordinator_ends, process_ends;
    for (int i = 0; i < nprocs; ++i) {
        int pair[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
            throw std::system_error(errno, std::generic_category(), "socketpair");
        }
        coordinator_ends.emplace_back(pair[0]);
        process_ends.emplace_back(pair[1]);
    }
    // Buffered output must not be written twice (once by each process).
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    std::vector<pid_t> pids;
    for (int i = 1; i < nprocs; ++i) {
        pid_t child = ::fork();
        if (child < 0) {
            int err = errno;
            for (pid_t p : pids) {
                ::kill(p, SIGKILL);
                ::waitpid(p, nullptr, 0);
            }
            throw std::system_error(err, std::generic_category(),
                                    "bsp: cannot fork process " + std::to_string(i));
        }
        if (child == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) {
                ::_exit(1);
            }
            UniqueFd mine = std::move(process_ends[static_cast<std::size_t>(i)]);
            coordinator_ends.clear();
            process_ends.clear();
            return std::make_unique<ClientSession>(i, nprocs, token, std::move(mine),
                                                   std::make_unique<SpawnChild>(), join_timeout,
                                                   "process 0");
        }
        pids.push_back(child);
    }
    auto children = std::make_shared<LocalChildren>(std::move(pids));
    try {
        Coordinator::Options options;
        options.nprocs = nprocs;
        options.token = token;
        options.name = "bsp";
        options.join_timeout = join_timeout;
        options.describe_loss = [children](int pid) { return describe_child_loss(*children, pid); };
        options.on_teardown = [](const Outcome &o) {
            std::string line = o.message + "\n";
            std::fputs(line.c_str(), stderr);
            std::fflush(stderr);
        };
        auto coordinator = std::make_unique<Coordinator>(std::move(options));
        for (auto &end : coordinator_ends) {
            coordinator->adopt(std::move(end));
        }
        UniqueFd mine = std::move(process_ends[0]);
        process_ends.clear();
        auto companion = std::make_unique<SpawnParent>(children, std::move(coordinator));
        return std::make_unique<ClientSession>(0, nprocs, token, std::move(mine),
                                               std::move(companion), join_timeout,
                                               "its own coordinator thread");
    } catch (...) {
        // No job without pid 0: end the children now rather than leave them waiting.
        children->end_all(Clock::now());
        throw;
    }
}

}  // namespace bsp::launch
