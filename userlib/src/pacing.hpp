// Pacing ([DHS99] section 3): after the barrier every process knows how much traffic there
// is (how many processes send at all), so it knows how many senders will share a receiver's
// link under the chosen destination schedule. A sender injects at the rate that keeps every
// receiver it sends to just below its link rate (Documentation/messaging.rst: the rate is
// handed to the kernel on AF_BSP and enforced by the UDP transport in user space).
#pragma once

#include <cstdint>

#include "schedule.hpp"

namespace bsp::rt {

// Fraction of the link rate a paced sender aims at ("just below the peak").
inline constexpr std::uint64_t kPacingHeadroomPermille = 950;

// Most senders transmitting to one receiver at the same time, in a job of nprocs processes
// of which `senders` send to somebody: the latin square gives every receiver one sender per
// step, a random order about one (a receiver's fan-in is at most the p - 1 steps), pid order
// all of them (every sender starts with the lowest receiver): at most min(senders, p - 1).
int expected_concurrent_senders(Schedule s, int nprocs, int senders);

// The injection rate in bytes per second, given the link rate of one node (bytes/s; 0 means
// "unknown": no pacing, the result is 0). O(1): what the barrier's all-reduce tells.
std::uint64_t pacing_rate(Schedule s, int nprocs, int senders, std::uint64_t link_rate);

}  // namespace bsp::rt
