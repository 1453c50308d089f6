// bsp.hpp - a small C++20 layer over the BSPlib C API of bsp.h: typed registrations
// with RAII, spans instead of pointer/size pairs, BSMP messages as spans. Every call
// maps to one C call; misuse ends the program exactly as with the C API. Sizes follow
// bsp.h: int, or int64_t when the program defines BSP_WIDE_TYPES (then these wrappers
// call the wide entry points and areas beyond 2 GiB work).
#pragma once

#include <bsp.h>

#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

namespace bsp {

inline int pid() {
    return bsp_pid();
}
inline int nprocs() {
    return bsp_nprocs();
}
inline double time() {
    return bsp_time();
}
inline void sync() {
    bsp_sync();
}

namespace detail {
inline bsp_size_t bytes(std::size_t n) {
    if (n > static_cast<std::size_t>(std::numeric_limits<bsp_size_t>::max())) {
#ifdef BSP_WIDE_TYPES
        bsp_abort("bsp.hpp: %zu bytes exceed the sizes of BSPlib", n);
#else
        bsp_abort("bsp.hpp: %zu bytes exceed the int sizes of BSPlib (define BSP_WIDE_TYPES)", n);
#endif
    }
    return static_cast<bsp_size_t>(n);
}
// offset elements of T, in bytes.
template <typename T>
bsp_size_t offset_bytes(std::size_t offset) {
    if (offset > std::numeric_limits<std::size_t>::max() / sizeof(T))
        bsp_abort("bsp.hpp: element offset %zu overflows", offset);
    return bytes(offset * sizeof(T));
}
}  // namespace detail

// bsp_begin in the constructor, bsp_end in the destructor (SPMD part of a program).
class Spmd {
  public:
    explicit Spmd(int maxprocs) { bsp_begin(maxprocs); }
    ~Spmd() { bsp_end(); }
    Spmd(const Spmd &) = delete;
    Spmd &operator=(const Spmd &) = delete;
};

// A registered area of T: bsp_push_reg at construction (usable after the next sync),
// bsp_pop_reg at destruction. As with the C API, the memory must stay valid until the
// sync that follows the pop.
template <typename T>
class Registration {
    static_assert(std::is_trivially_copyable_v<T>,
                  "DRMA moves bytes: T must be trivially copyable");

  public:
    explicit Registration(std::span<T> area) : area_(area) {
        bsp_push_reg(area_.data(), detail::bytes(area_.size_bytes()));
    }
    ~Registration() {
        if (active_)
            bsp_pop_reg(area_.data());
    }
    Registration(Registration &&o) noexcept
        : area_(o.area_), active_(std::exchange(o.active_, false)) {}
    Registration &operator=(Registration &&) = delete;
    Registration(const Registration &) = delete;

    std::span<T> local() const { return area_; }

    // Copies src into process pid's area at element offset (buffered: src may change
    // after the call).
    void put(int pid, std::span<const T> src, std::size_t offset = 0) const {
        bsp_put(pid, src.data(), area_.data(), detail::offset_bytes<T>(offset),
                detail::bytes(src.size_bytes()));
    }
    // Unbuffered: src is read during the next sync and must not change before it.
    void hpput(int pid, std::span<const T> src, std::size_t offset = 0) const {
        bsp_hpput(pid, src.data(), area_.data(), detail::offset_bytes<T>(offset),
                  detail::bytes(src.size_bytes()));
    }
    // Fills dst, at the end of the superstep, from process pid's area at element offset.
    void get(int pid, std::size_t offset, std::span<T> dst) const {
        bsp_get(pid, area_.data(), detail::offset_bytes<T>(offset), dst.data(),
                detail::bytes(dst.size_bytes()));
    }

  private:
    std::span<T> area_;
    bool active_ = true;
};

template <typename T>
Registration(std::span<T>) -> Registration<T>;

// BSMP. The tag type must have the size set with set_tag_size (collective, from the
// next superstep on); returns the previous tag size.
inline bsp_size_t set_tag_size(bsp_size_t bytes) {
    bsp_set_tagsize(&bytes);
    return bytes;
}

template <typename Tag, typename T>
void send(int pid, const Tag &tag, std::span<const T> payload) {
    static_assert(std::is_trivially_copyable_v<Tag> && std::is_trivially_copyable_v<T>);
    bsp_send(pid, &tag, payload.data(), detail::bytes(payload.size_bytes()));
}

// One message of the queue, valid until the next sync (bsp_hpmove).
struct Message {
    std::span<const std::byte> tag;
    std::span<const std::byte> payload;
    template <typename Tag>
    Tag tag_as() const {
        Tag t{};
        std::memcpy(&t, tag.data(), tag.size() < sizeof t ? tag.size() : sizeof t);
        return t;
    }
};

// The next message of the queue (by source pid, then send order), or nullopt.
inline std::optional<Message> next_message(std::size_t tag_size) {
    void *tag = nullptr, *payload = nullptr;
    const bsp_size_t n = bsp_hpmove(&tag, &payload);
    if (n < 0)
        return std::nullopt;
    return Message{{static_cast<const std::byte *>(tag), tag_size},
                   {static_cast<const std::byte *>(payload), static_cast<std::size_t>(n)}};
}

inline std::pair<bsp_size_t, bsp_size_t> queue_size() {
    bsp_size_t n = 0, bytes = 0;
    bsp_qsize(&n, &bytes);
    return {n, bytes};
}

}  // namespace bsp
