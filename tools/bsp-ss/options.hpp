// Command line of bsp-ss.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace bsp_ss {

struct Options {
    std::optional<uint16_t> port;  // -p PORT: only sockets bound to PORT (0: unbound ones)
    bool extended = false;         // -e: superstep epoch, group size, pacing rate
    bool stats = false;            // -s: per-socket counters
    bool info = false;             // -i: protocol engine counters (retransmits, failover, rtt)
    bool meminfo = false;          // -m: socket memory
    bool json = false;             // -j: JSON instead of a table
    bool numeric = false;          // -n: raw numbers only
    bool no_header = false;        // -H: no table header
    bool xdp = false;              // -X: the XDP pre-filter's counters instead of sockets
    bool help = false;             // -h
};

struct ParsedOptions {
    Options opts;
    std::string error;  // non-empty: the command line is wrong
};

// Parses the arguments after the program name.
ParsedOptions parse_options(std::span<const std::string_view> args);

// The BSP_DIAG_SHOW_* bits the options need.
uint32_t show_flags(const Options &opts);

extern const char kUsage[];

}  // namespace bsp_ss
