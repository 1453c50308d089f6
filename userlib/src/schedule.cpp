#include "schedule.hpp"

#include <utility>

namespace bsp::rt {

std::optional<Schedule> parse_schedule(std::string_view name) {
    if (name == "latin" || name == "latin-square" || name == "latin_square") {
        return Schedule::LatinSquare;
    }
    if (name == "random") {
        return Schedule::Random;
    }
    if (name == "pid" || name == "pid-order" || name == "pid_order") {
        return Schedule::PidOrder;
    }
    return std::nullopt;
}

std::string_view schedule_name(Schedule s) {
    switch (s) {
        case Schedule::LatinSquare:
            return "latin-square";
        case Schedule::Random:
            return "random";
        case Schedule::PidOrder:
            return "pid-order";
    }
    return "?";
}

static std::uint64_t splitmix64(std::uint64_t &state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::vector<int> destination_order(Schedule s, int pid, int nprocs, std::uint64_t superstep,
                                   std::uint64_t seed) {
    std::vector<int> order;
    order.reserve(static_cast<std::size_t>(nprocs > 0 ? nprocs - 1 : 0));
    switch (s) {
        case Schedule::LatinSquare:
            for (int t = 1; t < nprocs; ++t) {
                order.push_back((pid + t) % nprocs);
            }
            break;
        case Schedule::PidOrder:
            for (int j = 0; j < nprocs; ++j) {
                if (j != pid) {
                    order.push_back(j);
                }
            }
            break;
        case Schedule::Random: {
            for (int j = 0; j < nprocs; ++j) {
                if (j != pid) {
                    order.push_back(j);
                }
            }
            std::uint64_t state =
                seed ^ (superstep * 0x100000001b3ULL) ^ (static_cast<std::uint64_t>(pid) << 32);
            for (std::size_t i = order.size(); i > 1; --i) {
                std::size_t k = static_cast<std::size_t>(splitmix64(state) % i);
                std::swap(order[i - 1], order[k]);
            }
            break;
        }
    }
    return order;
}

}  // namespace bsp::rt
