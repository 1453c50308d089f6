// Process bootstrap of a BSP job: who am I, how many are we, how do we find
// each other, and how does the whole job end. Implemented in userlib/src/launch/,
// used by the BSPlib runtime (bsp_begin/bsp_end/bsp_abort).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace bsp::launch {

class Session {
  public:
    virtual ~Session() = default;

    // Joins the job described by the environment: started by bsprun (BSP_* variables,
    // see Documentation/launch.rst) or by Slurm (SLURM_PROCID, SLURM_NTASKS, ...).
    // Returns nullptr when the process was started directly (no launcher).
    static std::unique_ptr<Session> join_from_environment();

    // Started directly and asked for nprocs > 1 processes: forks nprocs-1 copies of the
    // calling process, each of which returns from here with its own pid (0 is the caller).
    // Throws std::system_error on failure.
    static std::unique_ptr<Session> spawn_local(int nprocs);

    virtual int pid() const = 0;
    virtual int nprocs() const = 0;

    // The job secret: the random value every process of the job holds and no other user
    // can read (Documentation/security.rst, "The job secret"), today the job token the
    // process presented to the coordinator. The UDP transport derives its packet key from
    // it (bspe_key_derive); the secret itself never travels in a packet. However a launch
    // mode hands the secret to the processes, it is what this returns (stable name: the
    // transports depend on it).
    virtual std::string_view job_secret() const = 0;

    // Collective: every process contributes one opaque blob (e.g. its transport
    // addresses); the result holds nprocs blobs indexed by pid.
    virtual std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) = 0;

    // A descriptor that becomes readable when the job is being torn down because
    // another process aborted or died; the runtime polls it while it waits for data.
    virtual int control_fd() const = 0;

    // Ends every process of the job within a bounded time with this one message and a
    // non-zero exit status. Never returns.
    [[noreturn]] virtual void abort(std::string_view message) = 0;

    // Collective normal end (bsp_end): after it returns the session is closed.
    virtual void finish() = 0;
};

}  // namespace bsp::launch
