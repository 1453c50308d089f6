// One BSPlib process: the semantics of every primitive (buffering, registration, BSMP,
// checks) on top of the messaging layer. The C API (api.cpp) owns one Runtime between
// bsp_begin and bsp_end; tests may run several in one process over a test transport.
// Every misuse throws Misuse (the C API turns it into an abort of the whole program).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "bsmp_queue.hpp"
#include "messaging.hpp"
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

    void push_reg(std::string_view call, const void *ident, int size);
    void pop_reg(std::string_view call, const void *ident);
    void put(std::string_view call, int pid, const void *src, void *dst, int offset, int nbytes,
             bool hp);
    void get(std::string_view call, int pid, const void *src, int offset, void *dst, int nbytes);

    // Returns the tag size in effect before the call; the new size applies from the
    // next superstep.
    int set_tagsize(std::string_view call, int tag_bytes);
    void send(std::string_view call, int pid, const void *tag, const void *payload, int nbytes);
    void qsize(int *nmessages, int *accum_nbytes) const;
    int tagsize() const { return tagsize_; }
    // Payload length of the first message and its tag, or -1 when the queue is empty.
    int get_tag(void *tag) const;
    void move(std::string_view call, void *payload, int reception_nbytes);
    int hpmove(void **tag_ptr, void **payload_ptr);

    void sync(std::string_view call, SyncKind kind = SyncKind::Sync);

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
    };
    struct DestOps {
        std::vector<Buffered> records;
        std::vector<std::byte> arena;
        std::vector<PendingGet> gets;
        bool empty() const { return records.empty() && gets.empty(); }
    };

    void check_pid(std::string_view call, int pid) const;
    void check_range(std::string_view call, int pid, std::uint32_t slot, int offset, int nbytes,
                     std::string_view what) const;
    std::uint32_t registered_slot(std::string_view call, const void *addr,
                                  std::string_view what) const;
    [[noreturn]] void fail_collective(int culprit, std::string_view call,
                                      const std::string &reason);
    void validate(std::string_view call, SyncKind kind, const std::vector<Contribution> &all);
    void deliver(const std::vector<std::vector<std::vector<std::byte>>> &in);

    int pid_;
    int nprocs_;
    Transport *transport_;
    Messaging messaging_;
    Registry registry_;
    BsmpQueue queue_;
    std::vector<DestOps> ops_;
    std::uint64_t superstep_ = 0;
    int tagsize_ = 0;
    int tagsize_request_ = -1;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace bsp::rt
