// Runs programs for the multi-process launch tests: each in its own session (setsid),
// with a clean BSP_*/SLURM_* environment, captured output, a hard time limit, and a
// sweep afterwards that reports (and kills) any process left in its session.
#pragma once

#include <chrono>
#include <csignal>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace launch_test {

struct Spec {
    Spec() = default;
    Spec(std::vector<std::string> command) : argv(std::move(command)) {}  // NOLINT: implicit

    std::vector<std::string> argv;
    std::vector<std::string> env;  // NAME=value added to the cleaned environment
    std::string input;             // written to standard input, then closed
    // When set: signal is sent to the program once its stdout satisfies this.
    std::function<bool(const std::string &out)> signal_when;
    int signal = SIGTERM;
    // When set: this descriptor becomes the program's descriptor 3 (PMI_FD of emulated
    // Slurm tasks).
    int pass_fd = -1;
    // When set: the program's RLIMIT_NOFILE (soft and hard).
    std::optional<unsigned long> nofile;
};

struct Result {
    int status = -1;  // exit code, or 128+signal
    // The program's peak resident set (KiB) and CPU time (user + system, ms), as wait4()
    // reports them (its reaped children included).
    long max_rss_kib = 0;
    long cpu_ms = 0;
    std::string out, err;
    bool timed_out = false;
    std::vector<std::string> leftovers;  // processes found in its session afterwards
};

// Runs all specs concurrently; each must end within the limit.
std::vector<Result> run_all(const std::vector<Spec> &specs,
                            std::chrono::seconds limit = std::chrono::seconds(30));
Result run(const Spec &spec, std::chrono::seconds limit = std::chrono::seconds(30));

// Runs tests/launch/launch_intruder with these arguments as user nobody (uid and gid
// 65534, no groups, through setpriv), or nullopt when this process is not root and cannot
// change user. The program is copied to a directory nobody may enter.
std::optional<Result> run_intruder_as_nobody(const std::vector<std::string> &args);

// The lines of a text, without their newlines, sorted (process output order varies).
std::vector<std::string> sorted_lines(const std::string &text);

}  // namespace launch_test
