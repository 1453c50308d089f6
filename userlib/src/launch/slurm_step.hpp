// A process started by Slurm's srun: its rank and the rendezvous derived from the job.
// Rank 0 runs the coordinator and listens on a TCP port derived from the job and step
// ids, on the first node of the step's node list (Documentation/launch.rst).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rendezvous_address.hpp"

namespace bsp::launch {

struct SlurmStep {
    int procid = 0;
    int ntasks = 0;
    std::uint64_t job_id = 0;
    std::uint64_t step_id = 0;
    std::string nodelist;
    RendezvousAddress rendezvous;  // tcp:first-node:derived-port unless BSP_RENDEZVOUS
    std::string token;             // "slurm-<job>.<step>"

    // nullopt unless this process is a task of an srun step (SLURM_PROCID and
    // SLURM_STEP_ID set); throws std::runtime_error naming the variable that is bad.
    static std::optional<SlurmStep> from_environment();
};

// First host name of a Slurm host list: "node[03-05,9],login1" -> "node03",
// "rack[1-2]-n[7,9]" -> "rack1-n7". Throws std::invalid_argument on malformed lists.
std::string first_host_of(std::string_view hostlist);

// 10000 + (64 * job_id + step_id) mod 22768: a port in 10000..32767, below Linux's
// ephemeral range, distinct for up to 64 steps of one job.
std::uint16_t slurm_rendezvous_port(std::uint64_t job_id, std::uint64_t step_id);

}  // namespace bsp::launch
