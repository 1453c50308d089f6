// DRMA registration slots (BSPlib standard 1998, section on bsp_push_reg).
//
// Every process keeps the same table of slots: the i-th bsp_push_reg of every process
// refers to the same slot. Pushes and pops of a superstep are recorded as pending and
// take effect in bsp_sync: pushes once the barrier has shown that every process made
// the same calls (and told every process the size each registered), pops after the data
// of the superstep has been delivered (so a popped area still receives that superstep's
// puts). Slot numbers of popped registrations are reused, lowest first, identically on
// every process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bsp::rt {

// The registration calls one process made during one superstep, as exchanged in the
// barrier of the sync that ends it.
inline constexpr std::uint32_t kPendingPush = 0x80000000u;

struct RegOps {
    std::vector<std::int64_t> push_sizes;  // in call order (64-bit: bsp_push_reg of BSP_WIDE_TYPES)
    // Slot numbers, in call order; kPendingPush | k names the k-th push of the same
    // superstep (a push and a pop of one area in one superstep, applied in issue order).
    std::vector<std::uint32_t> pop_slots;
    bool operator==(const RegOps &) const = default;
};

class Registry {
  public:
    // Records a pending push. size >= 0 is checked by the caller.
    void push(const void *addr, std::int64_t size);

    // Records a pending pop of the most recent registration of addr in issue order: a
    // push of this superstep not yet popped, else the most recent effective one.
    // Returns an error reason when addr has no registration left to pop.
    std::optional<std::string> pop(const void *addr);

    // The slot of the most recent effective registration of addr (pending pops still
    // count as registered), or nullopt.
    std::optional<std::uint32_t> find(const void *addr) const;
    // True when addr has a push pending in this superstep (for a clearer error message).
    bool pending_push(const void *addr) const;

    std::int64_t size_at(std::uint32_t slot, int pid) const { return slots_[slot].sizes[pid]; }
    void *local_addr(std::uint32_t slot) const { return const_cast<void *>(slots_[slot].addr); }
    bool active(std::uint32_t slot) const { return slot < slots_.size() && slots_[slot].active; }

    const RegOps &pending_ops() const { return ops_; }
    bool has_pending() const { return !ops_.push_sizes.empty() || !ops_.pop_slots.empty(); }

    // Makes the pending pushes effective. all[p] are the ops of process p, already checked
    // to agree in the number of pushes and in the popped slots. A push popped in the same
    // superstep gets a slot too, freed by commit_pops.
    void commit_pushes(const std::vector<RegOps> &all);
    // Makes the pending pops effective (after the data phase) and clears the pending ops.
    void commit_pops();

    std::size_t active_count() const;

  private:
    struct Slot {
        const void *addr = nullptr;
        bool active = false;
        std::uint64_t seq = 0;            // push order, to find "the most recent"
        std::vector<std::int64_t> sizes;  // registered size on every process
    };
    std::vector<Slot> slots_;
    RegOps ops_;
    std::vector<const void *> pending_addrs_;  // addresses of the pending pushes
    std::vector<std::uint32_t> pushed_slots_;  // slots the pending pushes got in commit_pushes
    std::uint64_t next_seq_ = 1;
};

}  // namespace bsp::rt
