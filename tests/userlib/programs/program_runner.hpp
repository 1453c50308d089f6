// Runs a BSPlib program as a child in its own process group with a bounded run time,
// captures stdout and stderr, and checks that no process of the group survives it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace bsp::test {

struct ProgramResult {
    int exit_status = -1;  // exit code, or 128 + signal
    std::string out;
    std::string err;
    bool timed_out = false;
    bool leftovers = false;  // processes of the group alive after the bounded grace time
};

ProgramResult run_program(const std::vector<std::string> &argv,
                          const std::vector<std::pair<std::string, std::string>> &env,
                          int timeout_seconds = 60, const std::string &stdin_text = "");

// The lines of text, sorted: output of several processes compared as a set (their
// lines may interleave differently from run to run).
std::vector<std::string> sorted_lines(const std::string &text);

}  // namespace bsp::test
