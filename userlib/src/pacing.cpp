#include "pacing.hpp"

#include <algorithm>

namespace bsp::rt {

int expected_concurrent_senders(Schedule s, int nprocs, int senders) {
    switch (s) {
        case Schedule::LatinSquare:
            // Sender k reaches j at step (j - k) mod p: no two senders share a step.
            return 1;
        case Schedule::Random:
            // Each sender reaches j at a uniformly random one of its p - 1 steps, and j
            // has at most p - 1 senders: ceil(fan-in / (p - 1)) = 1.
            return 1;
        case Schedule::PidOrder:
            // Every sender starts with the lowest receiver: all of them at once. The barrier
            // counts the processes that send, not who sends to whom; no receiver has more
            // than p - 1 senders.
            return std::max(1, std::min(senders, nprocs - 1));
    }
    return 1;
}

std::uint64_t pacing_rate(Schedule s, int nprocs, int senders, std::uint64_t link_rate) {
    if (link_rate == 0) {
        return 0;
    }
    const int worst = expected_concurrent_senders(s, nprocs, senders);
    const std::uint64_t share = link_rate / static_cast<std::uint64_t>(worst);
    return std::max<std::uint64_t>(
        1, share / 1000 * kPacingHeadroomPermille + share % 1000 * kPacingHeadroomPermille / 1000);
}

}  // namespace bsp::rt
