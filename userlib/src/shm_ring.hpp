// A lock-free single-producer/single-consumer byte ring in shared memory
// (Documentation/messaging.rst, "Shared memory between the processes of a host"): the
// shared-memory transport has one per ordered pair of processes of one host. Messages are
// written as chunks (an 8-byte header, the bytes, padding to 8); a message larger than a
// chunk is a sequence of chunks, so the ring may be smaller than the messages. Head
// (consumer) and tail (producer) are byte counters that only grow, each on its own cache
// line; the consumer checks every chunk header against the ring's bounds, so a corrupt
// ring is an error, never a read out of bounds. Publishing an index and the checks of
// whether to sleep or wake are sequentially consistent: with the sleeping and waiting
// flags (also sequentially consistent) they form the store-then-load pairs of
// shm_transport.cpp's wake-up protocol, which release/acquire alone would not order.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace bsp::rt::shm {

constexpr std::size_t kLine = 64;

// The shared part of one ring, followed in memory by `capacity` bytes of data.
struct alignas(kLine) RingHeader {
    alignas(kLine) std::atomic<std::uint64_t> tail;  // written by the producer
    // Set by a producer that found the ring full, cleared by the consumer that wakes it.
    std::atomic<std::uint32_t> producer_waiting;
    alignas(kLine) std::atomic<std::uint64_t> head;  // written by the consumer
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(RingHeader) == 2 * kLine);

constexpr std::uint32_t kChunkMore = 1;  // more chunks of this message follow
constexpr std::size_t kChunkHeader = 8;  // u32 length, u32 flags

inline std::size_t pad8(std::size_t n) {
    return (n + 7) & ~std::size_t{7};
}

// One end of a ring (producer or consumer) over mapped memory.
class Ring {
  public:
    Ring() = default;
    // `mem` points at a RingHeader followed by `capacity` bytes (a power of two >= 4096).
    Ring(void *mem, std::size_t capacity)
        : hdr_(static_cast<RingHeader *>(mem)),
          data_(static_cast<std::byte *>(mem) + sizeof(RingHeader)),
          cap_(capacity) {}
    static std::size_t footprint(std::size_t capacity) { return sizeof(RingHeader) + capacity; }
    // Creator only, before any peer maps the memory.
    static void init(void *mem) {
        auto *h = new (mem) RingHeader;
        h->tail.store(0, std::memory_order_relaxed);
        h->head.store(0, std::memory_order_relaxed);
        h->producer_waiting.store(0, std::memory_order_relaxed);
    }
    // Largest payload of one chunk: half the ring, so that the producer can write the
    // next chunk while the consumer reads the first (a 256 KiB unit is one chunk of the
    // default 1 MiB ring).
    std::size_t max_chunk() const { return cap_ / 2 - kChunkHeader; }
    RingHeader *header() const { return hdr_; }

    // Producer: writes as much of `msg` from `*off` as fits, in chunks. Returns true when
    // the whole message is in the ring (then *off == msg.size()).
    bool push(const std::byte *msg, std::size_t len, std::size_t *off) {
        const std::uint64_t tail = hdr_->tail.load(std::memory_order_relaxed);
        const std::uint64_t head = hdr_->head.load(std::memory_order_acquire);
        std::uint64_t t = tail;
        bool complete = false;
        while (!complete) {
            const std::size_t n = std::min(len - *off, max_chunk());
            const std::size_t need = kChunkHeader + pad8(n);
            if (cap_ - (t - head) < need) {
                break;
            }
            complete = *off + n == len;
            const std::uint32_t h[2] = {static_cast<std::uint32_t>(n), complete ? 0 : kChunkMore};
            copy_in(t, h, kChunkHeader);
            if (n > 0) {
                copy_in(t + kChunkHeader, msg + *off, n);
            }
            t += need;
            *off += n;
        }
        if (t != tail) {
            hdr_->tail.store(t, std::memory_order_seq_cst);
        }
        return complete;
    }

    // Consumer: appends the chunks in the ring to `partial`; each completed message is
    // moved to `done`. Returns the number of bytes consumed from the ring.
    std::size_t pop(std::vector<std::byte> &partial, std::vector<std::vector<std::byte>> &done,
                    const std::string &from) {
        const std::uint64_t head = hdr_->head.load(std::memory_order_relaxed);
        const std::uint64_t tail = hdr_->tail.load(std::memory_order_acquire);
        if (tail - head > cap_ || (tail - head) % 8 != 0) {
            throw std::runtime_error("shared-memory ring from " + from + " is corrupt");
        }
        std::uint64_t h = head;
        while (h != tail) {
            std::uint32_t ch[2];
            if (tail - h < kChunkHeader) {
                throw std::runtime_error("shared-memory ring from " + from + " is corrupt");
            }
            copy_out(ch, h, kChunkHeader);
            const std::size_t n = ch[0];
            if (n > max_chunk() || tail - h < kChunkHeader + pad8(n) || (ch[1] & ~kChunkMore)) {
                throw std::runtime_error("shared-memory ring from " + from + " is corrupt");
            }
            if (n > 0) {
                append(partial, h + kChunkHeader, n);
            }
            h += kChunkHeader + pad8(n);
            if (!(ch[1] & kChunkMore)) {
                done.push_back(std::move(partial));
                partial = {};
            }
        }
        if (h != head) {
            hdr_->head.store(h, std::memory_order_seq_cst);
        }
        return static_cast<std::size_t>(h - head);
    }

    bool empty_for_consumer() const {
        return hdr_->tail.load(std::memory_order_seq_cst) ==
               hdr_->head.load(std::memory_order_relaxed);
    }
    // Producer: whether a chunk of `n` payload bytes fits now.
    bool fits(std::size_t n) const {
        const std::uint64_t t = hdr_->tail.load(std::memory_order_relaxed);
        const std::uint64_t h = hdr_->head.load(std::memory_order_seq_cst);
        return cap_ - (t - h) >= kChunkHeader + pad8(std::min(n, max_chunk()));
    }

  private:
    // Appends n bytes from ring position pos (no zero-filling first, unlike resize).
    void append(std::vector<std::byte> &v, std::uint64_t pos, std::size_t n) const {
        const std::size_t at = static_cast<std::size_t>(pos & (cap_ - 1));
        const std::size_t first = std::min(n, cap_ - at);
        v.insert(v.end(), data_ + at, data_ + at + first);
        v.insert(v.end(), data_, data_ + (n - first));
    }
    void copy_in(std::uint64_t pos, const void *src, std::size_t n) {
        const std::size_t at = static_cast<std::size_t>(pos & (cap_ - 1));
        const std::size_t first = std::min(n, cap_ - at);
        std::memcpy(data_ + at, src, first);
        std::memcpy(data_, static_cast<const std::byte *>(src) + first, n - first);
    }
    void copy_out(void *dst, std::uint64_t pos, std::size_t n) const {
        const std::size_t at = static_cast<std::size_t>(pos & (cap_ - 1));
        const std::size_t first = std::min(n, cap_ - at);
        std::memcpy(dst, data_ + at, first);
        std::memcpy(static_cast<std::byte *>(dst) + first, data_, n - first);
    }

    RingHeader *hdr_ = nullptr;
    std::byte *data_ = nullptr;
    std::size_t cap_ = 0;
};

}  // namespace bsp::rt::shm
