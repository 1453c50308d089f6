// The Session of one process: its control connection to the coordinator, watched by a
// thread that reacts to the end of the job even while the program computes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "session.hpp"
#include "unique_fd.hpp"

namespace bsp::launch {

// Exit status of a process that calls abort().
inline constexpr int kAbortStatus = 1;

// What a launch mode adds around a session (spawn_local's children, an in-process
// coordinator). Called on the thread that ends the process or finishes the session.
class SessionCompanion {
  public:
    virtual ~SessionCompanion() = default;
    // In finish(), before this process says it finished: from then on the job may end
    // (process 0 may exit) at any moment.
    virtual void before_finish() {}
    // After finish() completed (the control connection is closed).
    virtual void after_finish() {}
    // Just before the process exits because of abort() or a teardown.
    virtual void before_exit() {}
};

class ClientSession final : public Session {
  public:
    // Sends the hello over an established connection, starts watching it and waits until
    // the coordinator accepts this process (at most welcome_timeout). Throws
    // std::runtime_error when the coordinator refuses it or does not answer; where is the
    // coordinator's address for those messages, other_job_hint what to add when the
    // address leads to another job's coordinator (which variable to fix).
    ClientSession(int pid, int nprocs, const std::string &token, UniqueFd connection,
                  std::unique_ptr<SessionCompanion> companion,
                  std::chrono::milliseconds welcome_timeout, const std::string &where,
                  const std::string &other_job_hint = {});
    ~ClientSession() override;

    int pid() const override { return pid_; }
    int nprocs() const override { return nprocs_; }
    std::string_view job_secret() const override { return secret_; }
    std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override;
    int control_fd() const override { return control_.get(); }
    [[noreturn]] void abort(std::string_view message) override;
    void finish() override;

  private:
    void watch();
    void mark_ended(int status, bool lost);
    [[noreturn]] void end_process(int status);
    [[noreturn]] void end_quietly();
    [[noreturn]] void print_and_exit(std::string_view message);

    const int pid_;
    const int nprocs_;
    const std::string secret_;  // the token of the hello
    UniqueFd connection_;
    UniqueFd control_;  // eventfd, readable once the job is being torn down
    UniqueFd stop_;     // eventfd, tells the watcher to stop (destructor)
    std::unique_ptr<SessionCompanion> companion_;
    const std::chrono::milliseconds teardown_grace_;
    std::mutex send_mutex_;

    std::mutex mutex_;
    std::condition_variable changed_;
    std::optional<std::vector<std::byte>> gathered_;
    std::optional<int> ack_status_;
    bool welcomed_ = false;
    std::optional<std::pair<std::uint32_t, std::string>> refusal_;  // refused: why
    bool finished_ = false;
    bool ended_ = false;  // torn down or coordinator lost
    bool lost_ = false;   // the coordinator went away without a word
    int end_status_ = 1;
    bool closed_ = false;  // after finish()

    std::thread watcher_;
};

}  // namespace bsp::launch
