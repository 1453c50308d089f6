// What bsprun runs: for every process, the host it goes to and the exact command.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "options.hpp"

namespace bsprun {

struct ProcessCommand {
    int pid = 0;
    std::string host;               // empty: this machine, no launch prefix
    std::vector<std::string> argv;  // what is executed (PATH search on argv[0])
    std::vector<std::string> env;   // NAME=value set for argv (direct start only)
};

struct JobPlan {
    std::vector<ProcessCommand> processes;
    bool remote_shell = false;  // the launch prefix is ssh/rsh: the command is quoted
};

// Where the processes find the coordinator, as chosen by the options: "unix" or "tcp".
bool wants_tcp_rendezvous(const Options &options);

// Splits a launch prefix into words like a shell would (quotes, backslashes), without
// expansions. Throws UsageError on an unterminated quote.
std::vector<std::string> split_words(std::string_view text);
// Quotes a word for a POSIX shell (only when needed).
std::string shell_quote(std::string_view word);

// The host-list entry of process pid (round-robin or block).
std::size_t host_index(int pid, int nprocs, std::size_t hosts, Mapping mapping);

// rendezvous: the address the processes connect to; token: the job token; cwd: the
// directory remote processes change to.
JobPlan plan_job(const Options &options, const std::string &rendezvous, const std::string &token,
                 const std::string &cwd);

// One line for --show / -v: the environment assignments (direct start) and the argv,
// shell-quoted.
std::string show_line(const ProcessCommand &process);

}  // namespace bsprun
