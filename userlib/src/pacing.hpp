// Pacing ([DHS99] section 3): after the barrier every process knows who sends to whom
// (the OR-reduced matrix), so it knows how many senders will share each receiver's link
// under the chosen destination schedule. A sender injects at the rate that keeps every
// receiver it sends to just below its link rate (Documentation/messaging.rst: the rate is handed to
// the kernel on AF_BSP and enforced by the UDP transport in user space).
#pragma once

#include <cstdint>

#include "bit_matrix.hpp"
#include "schedule.hpp"

namespace bsp::rt {

// Fraction of the link rate a paced sender aims at ("just below the peak").
inline constexpr std::uint64_t kPacingHeadroomPermille = 950;

// Expected number of senders transmitting to receiver j at the same time.
int expected_concurrent_senders(const BitMatrix &m, int j, Schedule s);

// The injection rate in bytes per second for process pid, given the link rate of one
// node (bytes/s; 0 means "unknown": no pacing, the result is 0).
std::uint64_t pacing_rate(const BitMatrix &m, int pid, Schedule s, std::uint64_t link_rate);

}  // namespace bsp::rt
