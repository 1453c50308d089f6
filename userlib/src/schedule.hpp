// Destination scheduling ([DHS99] section 3; [SHM97] section 15): the order in which a
// process sends its per-destination data in the communication phase of a superstep.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace bsp::rt {

enum class Schedule {
    LatinSquare,  // step t (1..p-1) sends to (pid + t) mod p: one sender per receiver
    Random,       // a pseudo-random permutation per process and superstep
    PidOrder,     // 0, 1, ..., p-1: every sender hits the same receiver (for comparison)
};

std::optional<Schedule> parse_schedule(std::string_view name);
std::string_view schedule_name(Schedule s);

// All destinations other than pid, in the order of the schedule. seed makes Random
// reproducible (it is mixed with pid and superstep).
std::vector<int> destination_order(Schedule s, int pid, int nprocs, std::uint64_t superstep,
                                   std::uint64_t seed = 0);

}  // namespace bsp::rt
