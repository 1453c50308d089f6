// The engine's counters as the BSP_STATS lines of both transports print them.
#pragma once

#include <cstddef>
#include <string>

#include "bspe.h"

namespace bsp::rt {

// " drop_<reason> N" for each non-zero counter of an engine's drops[] (enum bspe_drop order,
// which the module's BSP_PROTO_STATS keeps in a larger array), in that order.
template <typename Count, std::size_t N>
std::string format_drops(const Count (&drops)[N]) {
    static_assert(N >= static_cast<std::size_t>(BSPE_DROP_MAX));
    std::string out;
    for (std::size_t d = 0; d < static_cast<std::size_t>(BSPE_DROP_MAX); ++d) {
        if (drops[d]) {
            out += std::string(" drop_") + bspe_drop_name(static_cast<bspe_drop>(d)) + " " +
                   std::to_string(drops[d]);
        }
    }
    return out;
}

}  // namespace bsp::rt
