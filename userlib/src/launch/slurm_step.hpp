// A process started by Slurm's srun: its rank, its step, and where the step's task 0
// listens for the others (Documentation/launch.rst, "Slurm"). Task 0 publishes the address
// it bound and a fresh job secret through Slurm's PMI2 key-value space (slurm_pmi.hpp);
// nothing about the rendezvous is derived from the job's ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rendezvous_address.hpp"

namespace bsp::launch {

struct SlurmStep {
    // Where task 0's listening address comes from.
    enum class Source {
        variable,  // BSP_RENDEZVOUS
        reserved,  // this node's address, the first port of SLURM_STEP_RESV_PORTS
        own_node,  // this node's address (loopback for a one-node step), a free port
    };

    int procid = 0;
    int ntasks = 0;
    int nodes = 1;  // SLURM_STEP_NUM_NODES, else SLURM_NNODES, else 1
    std::uint64_t job_id = 0;
    std::uint64_t step_id = 0;
    // Where task 0 listens: BSP_RENDEZVOUS if set; else tcp:127.0.0.1 on a one-node step
    // and tcp:NODE (SLURMD_NODENAME, else the host name) otherwise, on the first reserved
    // port or port 0 (any free port).
    RendezvousAddress rendezvous;
    Source source = Source::own_node;

    // nullopt unless this process is a task of an srun step (SLURM_PROCID and
    // SLURM_STEP_ID set); throws std::runtime_error naming the variable that is bad.
    static std::optional<SlurmStep> from_environment();
};

// The first port of SLURM_STEP_RESV_PORTS ("12000-12003", "12000,12005", "12000").
// Throws std::invalid_argument on anything else.
std::uint16_t first_reserved_port(std::string_view ports);

}  // namespace bsp::launch
