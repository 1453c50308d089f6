// Output of bsp-ss: the ss-like table and the JSON document.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diag_socket_info.hpp"
#include "options.hpp"

namespace bsp_ss {

// A rate given in bytes per second, written in bits per second as ss does
// ("800bps", "1.5Mbps", "10Gbps"); 0 is "unpaced".
std::string format_rate(uint64_t bytes_per_second);

// The table: a header line (unless opts.no_header), then one line per socket,
// followed by an indented line of counters (-s) and of socket memory (-m).
std::string render_table(const std::vector<DiagSocket> &socks, const Options &opts);

// A JSON array with one object per socket (always raw numbers).
std::string render_json(const std::vector<DiagSocket> &socks, const Options &opts);

}  // namespace bsp_ss
