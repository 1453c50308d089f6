// What bsp-ss knows about one AF_BSP socket: the fixed part of a sock_diag
// answer (struct bsp_diag_msg) plus the optional BSP_DIAG_* attributes.
#pragma once

#include <linux/bsp.h>

#include <array>
#include <cstdint>
#include <optional>

namespace bsp_ss {

struct Endpoint {
    uint32_t node = 0;
    uint16_t port = 0;
    bool operator==(const Endpoint &) const = default;
};

// Counters of BSP_DIAG_MEMINFO (indices SK_MEMINFO_*); count says how many the
// kernel sent (a shorter array from an older kernel leaves the rest unknown).
struct MemInfo {
    static constexpr size_t kMax = 16;
    std::array<uint32_t, kMax> values{};
    size_t count = 0;
};

struct DiagSocket {
    uint8_t family = 0;
    uint8_t type = 0;
    Endpoint local;
    uint32_t inode = 0;
    uint64_t cookie = 0;
    uint32_t rqueue = 0;
    uint32_t wqueue = 0;
    std::optional<Endpoint> peer;
    std::optional<MemInfo> meminfo;
    std::optional<bsp_sock_stats> stats;
    std::optional<bsp_diag_superstep> superstep;
    std::optional<bsp_proto_stats> proto;
    unsigned unknown_attrs = 0;  // attributes of types this tool does not know
};

}  // namespace bsp_ss
