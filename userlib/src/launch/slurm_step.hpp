// A process started by Slurm's srun: its rank and the rendezvous of its step. Rank 0 runs
// the coordinator and listens on the first node of the step's node list, on the first
// port Slurm reserved for the step (SLURM_STEP_RESV_PORTS) if it did, else on a TCP port
// derived from the job and step ids (Documentation/launch.rst).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rendezvous_address.hpp"

namespace bsp::launch {

struct SlurmStep {
    // Where the rendezvous address comes from.
    enum class Source {
        variable,  // BSP_RENDEZVOUS
        reserved,  // SLURM_STEP_RESV_PORTS: no other step on the node has the port
        derived,   // slurm_rendezvous_port(): another job's step may derive the same port
    };

    int procid = 0;
    int ntasks = 0;
    std::uint64_t job_id = 0;
    std::uint64_t step_id = 0;
    std::string nodelist;
    RendezvousAddress rendezvous;  // tcp:first-node:port unless BSP_RENDEZVOUS
    Source source = Source::derived;
    std::string token;  // "slurm-<job>.<step>"

    // nullopt unless this process is a task of an srun step (SLURM_PROCID and
    // SLURM_STEP_ID set); throws std::runtime_error naming the variable that is bad.
    static std::optional<SlurmStep> from_environment();
};

// First host name of a Slurm host list: "node[03-05,9],login1" -> "node03",
// "rack[1-2]-n[7,9]" -> "rack1-n7". Throws std::invalid_argument on malformed lists.
std::string first_host_of(std::string_view hostlist);

// 10000 + (64 * job_id + step_id) mod 22751: a port in 10000..32750, below Linux's
// ephemeral range. 22751 is prime, so two steps 0 share a port only when their job ids
// differ by a multiple of 22751, and steps 0..63 of jobs whose ids differ by less than 355
// never share one.
inline constexpr std::uint64_t kSlurmPortModulus = 22751;
std::uint16_t slurm_rendezvous_port(std::uint64_t job_id, std::uint64_t step_id);

// The first port of SLURM_STEP_RESV_PORTS ("12000-12003", "12000,12005", "12000").
// Throws std::invalid_argument on anything else.
std::uint16_t first_reserved_port(std::string_view ports);

}  // namespace bsp::launch
