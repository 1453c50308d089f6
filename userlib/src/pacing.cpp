#include "pacing.hpp"

#include <algorithm>

namespace bsp::rt {

int expected_concurrent_senders(const BitMatrix &m, int j, Schedule s) {
    // Sender k reaches j at step (j - k) mod p: no two senders share a step. Answered
    // without the fan-in, an O(p) column scan: pacing_rate stays O(p) per process.
    if (s == Schedule::LatinSquare) {
        return 1;
    }
    const int fan_in = m.fan_in(j) - (m.get(j, j) ? 1 : 0);
    if (fan_in <= 1) {
        return 1;
    }
    switch (s) {
        case Schedule::LatinSquare:
            // Sender k reaches j at step (j - k) mod p: no two senders share a step.
            return 1;
        case Schedule::Random: {
            // Each sender reaches j at a uniformly random one of its p-1 steps.
            const int steps = std::max(1, m.size() - 1);
            return std::max(1, (fan_in + steps - 1) / steps);
        }
        case Schedule::PidOrder:
            // Every sender starts with the lowest receiver: all of them at once.
            return fan_in;
    }
    return fan_in;
}

std::uint64_t pacing_rate(const BitMatrix &m, int pid, Schedule s, std::uint64_t link_rate) {
    if (link_rate == 0) {
        return 0;
    }
    int worst = 1;
    for (int j = 0; j < m.size(); ++j) {
        if (j != pid && m.get(pid, j)) {
            worst = std::max(worst, expected_concurrent_senders(m, j, s));
        }
    }
    const std::uint64_t share = link_rate / static_cast<std::uint64_t>(worst);
    return std::max<std::uint64_t>(
        1, share / 1000 * kPacingHeadroomPermille + share % 1000 * kPacingHeadroomPermille / 1000);
}

}  // namespace bsp::rt
