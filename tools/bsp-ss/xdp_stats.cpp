#include "xdp_stats.hpp"

#include <linux/bpf.h>
#include <linux/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "bsp_xdp.h"

namespace bsp_ss {

namespace {

constexpr std::array<std::string_view, 11> kNames = {
    "seen",      "hello",        "passed",    "steered",      "drop_short", "drop_version",
    "drop_type", "drop_cluster", "drop_addr", "drop_no_port", "inactive",
};
static_assert(kNames.size() == BSP_XDP_NCOUNTERS, "a name for every counter of bsp_xdp.h");

long sys_bpf(int cmd, bpf_attr *attr) {
    return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

}  // namespace

std::span<const std::string_view> xdp_counter_names() {
    return kNames;
}

int count_cpu_list(std::string_view list) {
    while (!list.empty() && (list.back() == '\n' || list.back() == ' '))
        list.remove_suffix(1);
    if (list.empty())
        return 0;
    int total = 0;
    while (!list.empty()) {
        size_t comma = list.find(',');
        std::string_view part = list.substr(0, comma);
        list = comma == list.npos ? std::string_view() : list.substr(comma + 1);
        if (comma != std::string_view::npos && list.empty())
            return 0;
        size_t dash = part.find('-');
        auto num = [](std::string_view s, int &v) {
            if (s.empty() || s.size() > 6)
                return false;
            v = 0;
            for (char c : s) {
                if (c < '0' || c > '9')
                    return false;
                v = v * 10 + (c - '0');
            }
            return true;
        };
        int a = 0, b = 0;
        if (dash == part.npos) {
            if (!num(part, a))
                return 0;
            b = a;
        } else if (!num(part.substr(0, dash), a) || !num(part.substr(dash + 1), b) || b < a) {
            return 0;
        }
        total += b - a + 1;
    }
    return total;
}

std::vector<uint64_t> sum_per_cpu(std::span<const uint64_t> raw, int ncpu) {
    std::vector<uint64_t> sums(kNames.size(), 0);
    for (int c = 0; c < ncpu; c++)
        for (size_t i = 0; i < kNames.size(); i++) {
            size_t at = size_t(c) * kNames.size() + i;
            if (at < raw.size())
                sums[i] += raw[at];
        }
    return sums;
}

std::string render_xdp(std::span<const uint64_t> sums, const Options &opts) {
    std::string out;
    if (opts.json) {
        out = "{";
        for (size_t i = 0; i < kNames.size() && i < sums.size(); i++) {
            out += i ? ", \"" : "\"";
            out += std::string(kNames[i]) + "\": " + std::to_string(sums[i]);
        }
        return out + "}\n";
    }
    if (!opts.no_header)
        out = "XDP pre-filter   frames\n";
    for (size_t i = 0; i < kNames.size() && i < sums.size(); i++) {
        std::string name(kNames[i]);
        name.resize(17, ' ');
        out += name + std::to_string(sums[i]) + "\n";
    }
    return out;
}

std::string xdp_counters_path() {
    struct stat st {};
    if (stat("/proc/self/ns/net", &st) != 0)
        return {};
    return "/sys/fs/bpf/bsp_xdp/" + std::to_string(st.st_ino) + "/bsp_xdp_counters";
}

XdpRead read_xdp_counters(const std::string &path) {
    XdpRead r;
    std::ifstream possible("/sys/devices/system/cpu/possible");
    std::string list;
    std::getline(possible, list);
    int ncpu = count_cpu_list(list);
    if (ncpu <= 0) {
        r.error = "cannot read /sys/devices/system/cpu/possible";
        return r;
    }
    bpf_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.pathname = reinterpret_cast<uintptr_t>(path.c_str());
    long fd = sys_bpf(BPF_OBJ_GET, &attr);
    if (fd < 0) {
        r.error = errno == ENOENT ? "the XDP pre-filter is not attached in this namespace (no " +
                                        path + "; see bsp-xdp)"
                                  : "cannot open " + path + ": " + std::strerror(errno);
        return r;
    }
    std::vector<uint64_t> raw(size_t(ncpu) * kNames.size());
    __u32 key = 0;
    std::memset(&attr, 0, sizeof(attr));
    attr.map_fd = static_cast<__u32>(fd);
    attr.key = reinterpret_cast<uintptr_t>(&key);
    attr.value = reinterpret_cast<uintptr_t>(raw.data());
    long err = sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr);
    int saved = errno;
    close(static_cast<int>(fd));
    if (err) {
        r.error = "cannot read " + path + ": " + std::strerror(saved);
        return r;
    }
    r.sums = sum_per_cpu(raw, ncpu);
    return r;
}

}  // namespace bsp_ss
