// The shared-memory transport between the processes of a job on one host
// (Documentation/messaging.rst, "Shared memory between the processes of a host"): one
// single-producer/single-consumer ring per ordered pair of local processes, no system call
// per message in the steady state (a pipe only wakes a receiver that sleeps). Processes on
// other hosts are reached through a second transport (UDP or AF_BSP) that this one routes
// to per destination. The rings live in a memfd that is never named in a file system: a
// peer opens it through /proc/<pid>/fd/<n>, which only processes of the same user (with
// ptrace access to the owner) can do (Documentation/security.rst, "Shared memory
// transport").
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "launch/session.hpp"
#include "transport.hpp"

namespace bsp::rt {

struct ShmSettings {
    enum class Mode { Auto, On, Off };
    Mode mode = Mode::Auto;                         // BSP_SHM: auto (default), 1, 0
    std::size_t ring_bytes = std::size_t{1} << 20;  // BSP_SHM_RING: per ordered pair
    // BSP_SHM_DIRECT: the direct area per ordered pair and parity of the superstep, when
    // every process is on this host (0: none; Transport::direct_out).
    std::size_t direct_bytes = std::size_t{1} << 20;
};

// Reads BSP_SHM, BSP_SHM_RING and BSP_SHM_DIRECT. Throws std::runtime_error naming a bad value.
ShmSettings shm_settings_from_environment();

// This process's host identity: the boot id, the process's pid, network and mount
// namespaces and its user; processes with equal identities share memory. BSP_SHM_HOSTS
// (a comma-separated list of nprocs names, for tests and emulation) splits one host into
// several: process p adds the p-th name to its identity. Throws std::runtime_error on a
// malformed BSP_SHM_HOSTS.
std::string shm_host_identity(int pid, int nprocs);

// Collective (one session.allgather, by every process of the job, also by those with no
// local peer). local[p]: process p is on this host (local[pid] is true). remote carries
// the messages to the other processes (nullptr when every process is local). Throws
// std::runtime_error with the reason when the shared memory cannot be set up.
std::unique_ptr<Transport> open_shm_transport(launch::Session &session,
                                              const std::vector<bool> &local,
                                              std::unique_ptr<Transport> remote,
                                              const ShmSettings &settings);

}  // namespace bsp::rt
