#include "registry.hpp"

#include <algorithm>

namespace bsp::rt {

void Registry::push(const void *addr, std::int64_t size) {
    ops_.push_sizes.push_back(size);
    pending_addrs_.push_back(addr);
}

std::optional<std::uint32_t> Registry::find(const void *addr) const {
    std::optional<std::uint32_t> best;
    std::uint64_t best_seq = 0;
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
        const Slot &s = slots_[i];
        if (s.active && s.addr == addr && s.seq > best_seq) {
            best = i;
            best_seq = s.seq;
        }
    }
    return best;
}

bool Registry::pending_push(const void *addr) const {
    return std::find(pending_addrs_.begin(), pending_addrs_.end(), addr) != pending_addrs_.end();
}

std::optional<std::string> Registry::pop(const void *addr) {
    auto popping = [this](std::uint32_t slot) {
        return std::find(ops_.pop_slots.begin(), ops_.pop_slots.end(), slot) !=
               ops_.pop_slots.end();
    };
    // A push of this superstep is more recent than every effective registration.
    for (std::size_t k = pending_addrs_.size(); k-- > 0;) {
        const auto ref = kPendingPush | static_cast<std::uint32_t>(k);
        if (pending_addrs_[k] == addr && !popping(ref)) {
            ops_.pop_slots.push_back(ref);
            return std::nullopt;
        }
    }
    // The most recent effective registration of addr that is not already being popped.
    std::optional<std::uint32_t> best;
    std::uint64_t best_seq = 0;
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
        const Slot &s = slots_[i];
        if (!s.active || s.addr != addr || s.seq <= best_seq) {
            continue;
        }
        if (popping(i)) {
            continue;
        }
        best = i;
        best_seq = s.seq;
    }
    if (!best) {
        bool popped = false;
        for (std::uint32_t i : ops_.pop_slots) {
            popped = popped || ((i & kPendingPush) ? pending_addrs_[i & ~kPendingPush]
                                                   : slots_[i].addr) == addr;
        }
        if (popped) {
            return "area has already been deregistered in this superstep";
        }
        return "area is not registered";
    }
    ops_.pop_slots.push_back(*best);
    return std::nullopt;
}

void Registry::commit_pushes(const std::vector<RegOps> &all) {
    const std::size_t nprocs = all.size();
    pushed_slots_.clear();
    for (std::size_t k = 0; k < ops_.push_sizes.size(); ++k) {
        // Lowest free slot; slots being popped in this superstep are still in use.
        std::uint32_t slot = 0;
        while (slot < slots_.size() && slots_[slot].active) {
            ++slot;
        }
        if (slot == slots_.size()) {
            slots_.emplace_back();
        }
        Slot &s = slots_[slot];
        s.addr = pending_addrs_[k];
        s.active = true;
        s.seq = next_seq_++;
        s.sizes.assign(nprocs, 0);
        for (std::size_t p = 0; p < nprocs; ++p) {
            s.sizes[p] = all[p].push_sizes[k];
        }
        pushed_slots_.push_back(slot);
    }
}

void Registry::commit_pops() {
    for (std::uint32_t ref : ops_.pop_slots) {
        const std::uint32_t slot = (ref & kPendingPush) ? pushed_slots_[ref & ~kPendingPush] : ref;
        slots_[slot].active = false;
        slots_[slot].addr = nullptr;
    }
    ops_ = RegOps{};
    pending_addrs_.clear();
    pushed_slots_.clear();
}

std::size_t Registry::active_count() const {
    return static_cast<std::size_t>(
        std::count_if(slots_.begin(), slots_.end(), [](const Slot &s) { return s.active; }));
}

}  // namespace bsp::rt
