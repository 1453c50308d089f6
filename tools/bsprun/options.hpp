// bsprun's command line.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "launch_environment.hpp"

namespace bsprun {

// A command-line error: main prints "bsprun: <what>" and the usage hint, exit 2.
class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

enum class Mapping { round_robin, block };

// The largest job bsprun starts (-n, or one process per host-list entry): the launch
// library's limit (launch_environment.hpp).
inline constexpr int kMaxProcesses = bsp::launch::env::kMaxProcesses;

// The largest --timeout and --grace in seconds (about 31 years): larger values would
// overflow the clock's time points.
inline constexpr double kMaxSeconds = 1e9;

struct Options {
    int nprocs = 0;  // 0: not given
    std::vector<std::string> hosts;
    std::optional<std::string> launch;  // launch prefix template, {host} {pid}
    Mapping mapping = Mapping::round_robin;
    std::optional<std::string> rendezvous;  // unix | tcp | tcp:HOST | unix:/PATH | tcp:HOST:PORT
    std::optional<double> timeout;          // seconds
    double grace = 3.0;                     // seconds between teardown and SIGKILL
    bool label = false;
    bool verbose = false;
    bool show = false;
    bool help = false;
    bool version = false;
    std::vector<std::string> command;  // program and its arguments
};

// Parses argv (without argv[0]). Options end at the first non-option word (the program)
// or at "--". Reads --hostfile. Throws UsageError.
Options parse_options(const std::vector<std::string> &args);

// Host list file: one host per line; blank lines and text after '#' are ignored.
std::vector<std::string> read_hostfile(const std::string &path);

const char *usage_text();

}  // namespace bsprun
