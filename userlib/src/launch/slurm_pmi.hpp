// Slurm's process management interface, version 2 (libpmi2 from Slurm, talking to
// slurmstepd over the descriptor PMI_FD that srun --mpi=pmi2 gives every task). The tasks
// of a step exchange task 0's rendezvous address and a fresh job secret through its
// key-value space; the descriptor is private to the task, so no other user can read them.
#pragma once

#include <string>

namespace bsp::launch {

// Keys task 0 puts into the step's key-value space.
inline constexpr const char *kPmiRendezvousKey = "bsp-rendezvous";
inline constexpr const char *kPmiSecretKey = "bsp-job";

class Pmi2Session {
  public:
    // Whether this process was given a PMI2 server (PMI_FD, or PMI_PORT).
    static bool available();
    // PMI2_Init. Throws std::runtime_error (naming the PMI2 call and its error code).
    Pmi2Session();
    // PMI2_Finalize if finalize() was not called.
    ~Pmi2Session();
    Pmi2Session(const Pmi2Session &) = delete;
    Pmi2Session &operator=(const Pmi2Session &) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    // PMI2_KVS_Put, PMI2_KVS_Fence (collective: every task of the step), PMI2_KVS_Get of a
    // key put by task `from` before the fence. Throw std::runtime_error.
    void put(const std::string &key, const std::string &value);
    void fence();
    std::string get(const std::string &key, int from);
    // PMI2_Finalize: the descriptor is closed.
    void finalize();

  private:
    int rank_ = 0;
    int size_ = 0;
    bool open_ = false;
};

}  // namespace bsp::launch
