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
    // The launch prefix is ssh/rsh: the command is quoted, and the job secret is the first
    // line of each process's standard input.
    bool remote_shell = false;
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

// What the remote shell runs before the program: reads the job secret from the first line
// of its standard input into BSP_JOB (Documentation/launch.rst, "The job secret"), and what
// it runs when there is none.
inline constexpr const char *kReadSecret = "read -r BSP_JOB && export BSP_JOB";
inline constexpr const char *kNoSecret =
    "echo 'bsp: no job secret on the standard input of the remote shell' >&2; exit 1";

// rendezvous: the address the processes connect to; cwd: the directory remote processes
// change to. The job secret is not part of the plan: bsprun gives it to each process
// through its environment (direct start, launch prefix) or on the standard input of a
// remote shell (ssh, rsh), never on a command line.
JobPlan plan_job(const Options &options, const std::string &rendezvous, const std::string &cwd);

// One line for --show / -v: the environment assignments (direct start) and the argv,
// shell-quoted.
std::string show_line(const ProcessCommand &process);

}  // namespace bsprun
