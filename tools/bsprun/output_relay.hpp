// Copies one output stream of one process (its stdout or stderr pipe) to bsprun's own
// stdout or stderr, whole lines at a time so that processes do not interleave inside a
// line, optionally prefixed with "[pid] ". Only a relay made with early_partial writes a
// partial line before its end (an interactive prompt of process 0).
#pragma once

#include <chrono>
#include <string>

#include "unique_fd.hpp"

namespace bsprun {

class OutputRelay {
  public:
    using Clock = std::chrono::steady_clock;
    // With early_partial, a partial line waits at most this long for its end before it
    // is written anyway (prompts without a newline).
    static constexpr auto kPartialLineDelay = std::chrono::milliseconds(50);

    OutputRelay(bsp::launch::UniqueFd from, int to, std::string prefix, bool early_partial = false);

    int fd() const { return from_.get(); }
    bool open() const { return static_cast<bool>(from_); }
    // Reads what is available; at end of file writes the rest and closes.
    void on_readable();
    // When a partial line is waiting (and early_partial), the time it must be written.
    bool partial_due(Clock::time_point &when) const;
    void flush_partial();
    // Writes what is buffered and stops reading.
    void close();

  private:
    void emit(std::string_view text);

    bsp::launch::UniqueFd from_;
    int to_;
    std::string prefix_;
    bool early_partial_;
    std::string pending_;
    Clock::time_point pending_since_{};
    bool at_line_start_ = true;
};

// Writes everything, retrying on EINTR; gives up silently when the reader has gone
// (EPIPE: bsprun's output was piped to a command that exited).
void write_all(int fd, std::string_view text);

}  // namespace bsprun
