// bsp-ss -X: the counters of the AF_BSP XDP pre-filter (ebpf/xdp_bsp.bpf.c), read from
// the per-CPU array tools/bsp-xdp pins in /sys/fs/bpf/bsp_xdp/<netns inode>/.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "options.hpp"

namespace bsp_ss {

// The counters in the order of struct bsp_xdp_counters (ebpf/bsp_xdp.h).
std::span<const std::string_view> xdp_counter_names();

// Number of CPUs in a kernel CPU list ("0-3,6"), as in
// /sys/devices/system/cpu/possible; 0 if the list is malformed.
int count_cpu_list(std::string_view list);

// Sums the per-CPU values of one entry of a per-CPU array (@ncpu blocks of
// xdp_counter_names().size() values each) into one value per counter.
std::vector<uint64_t> sum_per_cpu(std::span<const uint64_t> raw, int ncpu);

// "name value" lines (or a JSON object) of the summed counters.
std::string render_xdp(std::span<const uint64_t> sums, const Options &opts);

struct XdpRead {
    std::vector<uint64_t> sums;
    std::string error;  // non-empty: nothing read, and why
};

// Reads the counters map pinned at @path (the bpf syscall).
XdpRead read_xdp_counters(const std::string &path);

// The pin path of the counters map for the calling process's network namespace.
std::string xdp_counters_path();

}  // namespace bsp_ss
