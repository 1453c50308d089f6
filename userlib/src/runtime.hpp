// One BSPlib process: the semantics of every primitive (buffering, registration, BSMP,
// checks) on top of the messaging layer. The C API (api.cpp) owns one Runtime between
// bsp_begin and bsp_end; tests may run several in one process over a test transport.
// Every misuse throws Misuse (the C API turns it into an abort of the whole program).
// Sizes, offsets and counts are 64-bit here: the int entry points of bsp.h and the
// BSP_WIDE_TYPES ones (bsp_size_t = int64_t) both land on the same checks.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "bsmp_queue.hpp"
#include "messaging.hpp"
#include "profile.hpp"
#include "registry.hpp"
#include "transport.hpp"

namespace bsp::rt {

class Runtime {
  public:
    // transport may be null only when nprocs == 1.
    Runtime(int pid, int nprocs, Transport *transport, MessagingConfig cfg);

    int pid() const { return pid_; }
    int nprocs() const { return nprocs_; }
    double time() const;
    std::uint64_t superstep() const { return superstep_; }

    void push_reg(std::string_view call, const void *ident, std::int64_t size);
    void pop_reg(std::string_view call, const void *ident);
    void put(std::string_view call, int pid, const void *src, void *dst, std::int64_t offset,
             std::int64_t nbytes, bool hp);
    void get(std::string_view call, int pid, const void *src, std::int64_t offset, void *dst,
             std::int64_t nbytes);

    // The largest tag size: the barrier carries tag-size requests as i32, and a tag of
    // 2 GiB is no tag. Larger requests (possible through BSP_WIDE_TYPES) are misuse.
    static constexpr std::int64_t kMaxTagBytes = 0x7fffffff;
    // Returns the tag size in effect before the call; the new size applies from the
    // next superstep.
    std::int64_t set_tagsize(std::string_view call, std::int64_t tag_bytes);
    void send(std::string_view call, int pid, const void *tag, const void *payload,
              std::int64_t nbytes);
    void qsize(std::int64_t *nmessages, std::int64_t *accum_nbytes) const;
    std::int64_t tagsize() const { return tagsize_; }
    // The tag size of the messages in the queue: the first message's, or (empty queue)
    // the tag size of this superstep.
    std::int64_t queue_tagsize() const;
    // Payload length of the first message and its tag, or -1 when the queue is empty.
    std::int64_t get_tag(void *tag) const;
    void move(std::string_view call, void *payload, std::int64_t reception_nbytes);
    std::int64_t hpmove(void **tag_ptr, void **payload_ptr);

    // ready: this process contributes Contribution::ready to the barrier (the collectives
    // library's bsc_sync(bsc_flush)); all_ready() then tells whether every process did.
    void sync(std::string_view call, SyncKind kind = SyncKind::Sync, bool ready = false);
    bool all_ready() const { return all_ready_; }

    // BSP_PROFILE: record every superstep into p (owned by the caller; null: off).
    void attach_profile(Profile *p) { profile_ = p; }

    const Messaging &messaging() const { return messaging_; }
    const Registry &registry() const { return registry_; }

  private:
    struct Buffered {
        OutRecord rec;
        std::size_t arena_off = 0;     // data lives in the destination's arena ...
        const void *hp_src = nullptr;  // ... or, for bsp_hpput, in user memory
        std::size_t len = 0;
    };
    struct PendingGet {
        GetRequest req;
        void *dst = nullptr;
        std::uint64_t seq = 0;  // issue order among all gets of the superstep
    };
    struct DestOps {
        std::vector<Buffered> records;
        std::vector<std::byte> arena;
        std::vector<PendingGet> gets;
        // This superstep's direct area for the destination (Transport::direct_out; empty:
        // none): puts and sends are written there at the call, as records after an 8-byte
        // length, while they fit; the first that does not closes it, and that record and
        // every later one go to `records` (so that they are applied in call order).
        std::span<std::byte> direct;
        std::size_t direct_used = 0;  // bytes of records written after the length
        bool direct_closed = false;
        bool empty() const { return records.empty() && gets.empty(); }
        // Empties it for the next superstep, keeping the buffers' memory.
        void clear();
    };

    void check_pid(std::string_view call, int pid) const;
    void check_range(std::string_view call, int pid, std::uint32_t slot, std::int64_t offset,
                     std::int64_t nbytes, std::string_view what) const;
    // Records and gets to one destination are numbered with u32 in the messaging layer.
    void check_count(std::string_view call, int pid, std::size_t n, std::string_view what) const;
    std::uint32_t registered_slot(std::string_view call, const void *addr,
                                  std::string_view what) const;
    [[noreturn]] void fail_collective(int culprit, std::string_view call,
                                      const std::string &reason);
    void validate(std::string_view call, SyncKind kind, const BarrierSummary &all);
    void deliver(const UnitsBySource &in);
    void apply_gets(const UnitsBySource &in);
    void apply_local(std::vector<BsmpQueue::Message> &messages);
    // Writes a put or send (data: its bytes, in one or two pieces) into the direct area
    // of d; false (and the area closed) when it does not fit or there is none.
    bool put_direct(DestOps &d, RecordKind kind, std::uint32_t a, std::uint64_t b,
                    std::span<const std::byte> first, std::span<const std::byte> second = {});
    // The records process src wrote in its direct area for this process in this superstep
    // (checked: a corrupt area is a ProtocolError); empty when there is none.
    std::span<const std::byte> direct_records(std::size_t src) const;
    void apply_remote(std::size_t src, const std::vector<DataUnit> &units,
                      std::vector<BsmpQueue::Message> &messages);
    void count_out(SuperstepProfile &sp) const;
    void count_in(const UnitsBySource &in, SuperstepProfile &sp) const;

    int pid_;
    int nprocs_;
    Transport *transport_;
    Messaging messaging_;
    Registry registry_;
    BsmpQueue queue_;
    std::vector<DestOps> ops_;
    // What sync() gives the messaging layer, kept from one superstep to the next so that
    // a sync allocates nothing in the steady state.
    Contribution mine_;
    std::vector<Outgoing> out_;
    std::uint64_t superstep_ = 0;
    std::int64_t tagsize_ = 0;
    std::int64_t tagsize_request_ = -1;
    std::uint64_t gets_issued_ = 0;  // in this superstep
    bool all_ready_ = false;         // of the last sync
    Profile *profile_ = nullptr;
    double superstep_begin_ = 0;  // for the profile: when the current superstep began
    std::chrono::steady_clock::time_point start_;
};

}  // namespace bsp::rt
