// The transport under the messaging layer: whole messages per destination, reliable and
// in order per (source, destination) pair. Implementations: UDP in user space driving the
// protocol engine (udp_transport.cpp) and AF_BSP sockets. Reliability, acknowledgement
// and striping live below this interface, never above it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace bsp::rt {

struct Received {
    int src = -1;
    std::vector<std::byte> bytes;
};

// What board_allgather() returns to every process of the job alike. The blobs are read in
// place: valid until this process's next board_allgather() (a peer may write them again
// only after that; every read of them is bounds-checked).
struct BoardGather {
    bool overflow = false;                          // a blob was larger than board_blob_bytes()
    std::vector<std::span<const std::byte>> blobs;  // by pid (empty when overflow)
};

class Transport {
  public:
    virtual ~Transport() = default;

    // Short name ("udp", "afbsp") and one line for BSP_VERBOSE / bsprun -v.
    virtual std::string name() const = 0;
    virtual std::string description() const = 0;

    // Largest message send() accepts; the messaging layer repackages into units this big.
    virtual std::size_t max_message_bytes() const = 0;

    // send() flags: barrier traffic (acknowledged implicitly by the epoch rule one superstep
    // later than data), and the last message to this destination in the superstep (both:
    // acknowledged at once, for the end of the job).
    static constexpr unsigned kSync = 1;
    static constexpr unsigned kLast = 2;

    // Queues one message for dst (never the caller's own pid). Never blocks on the
    // receiver: messages are transmitted in the order queued, at the pacing rate.
    virtual void send(int dst, std::vector<std::byte> message, unsigned flags) = 0;

    // Blocks until a message arrives (while transmitting what is queued). Returns nullopt
    // when the job is being torn down (the launcher's control descriptor became readable).
    virtual std::optional<Received> receive() = 0;

    // receive(), but also returns nullopt with *woken set as soon as wake_fd is readable
    // (wake_fd is not read here): the shared-memory transport waits in it for its doorbell
    // and the other hosts' messages at once. Transports that cannot be combined throw.
    virtual std::optional<Received> receive_or_wake(int wake_fd, bool *woken) {
        (void)wake_fd;
        (void)woken;
        throw std::logic_error(name() + " transport cannot wait for another descriptor");
    }

    // Blocks until every queued message has been handed to the layer below (while still
    // reading incoming messages): the messaging layer calls it before leaving bsp_sync, so
    // that peers still in the sync never wait for data held back here.
    virtual void flush_sends() = 0;

    // The barrier of superstep `epoch` has completed: every process has received all data
    // of superstep epoch-1 (Documentation/protocol.rst, coarse-grained acknowledgement).
    virtual void barrier_completed(std::uint64_t epoch) = 0;

    // From the completion of a barrier to the end of that superstep's exchange: whether
    // every process sends each destination its data stream right after its counts message
    // there (a superstep without get requests; Documentation/messaging.rst, "Streams follow
    // counts"), so that data expected after the counts is known to be right behind them. A
    // transport without an engine to tell has nothing to do.
    virtual void streams_follow_counts(bool follow) { (void)follow; }

    // Injection rate for this superstep in bytes/s (0: unpaced).
    virtual void set_pacing_rate(std::uint64_t bytes_per_second) = 0;

    // Volume src sends us in this superstep in all (after the total exchange of counts): at
    // least `messages` messages that are not barrier traffic (its counts message and its
    // data units, those received already included) carrying `bytes` payload bytes, so the
    // transport can prod precisely instead of waiting for timeouts. A total, not what is
    // still to come: the transport may hold messages it received and we have not taken yet.
    virtual void expect_from(int src, std::uint32_t messages, std::uint64_t bytes) = 0;

    // The barrier waits for src's message of this barrier (every partner sends one), which
    // has not been taken: the transport may prod src for it after a round trip instead of
    // waiting for src's timeout.
    virtual void expect_barrier_message(int src) = 0;

    // The shared board (Documentation/messaging.rst, "The barrier on one host"): when every
    // process of the job is on this host, an allgather of blobs of up to this many bytes
    // through shared memory; 0 when there is none (the same answer in every process).
    virtual std::size_t board_blob_bytes() const { return 0; }
    // Collective, by every process in the same sequence: returns every process's blob of
    // this call, or overflow for all when any blob exceeds board_blob_bytes(). Waits like
    // receive() (messages arriving meanwhile are kept for it); throws TornDown when the job
    // is torn down.
    virtual BoardGather board_allgather(std::span<const std::byte> mine) {
        (void)mine;
        throw std::logic_error(name() + " transport has no shared board");
    }

    // Direct areas (Documentation/messaging.rst, "Puts straight into shared memory"): when
    // every process of the job is on this host, per destination and parity of the
    // superstep, the shared memory this process writes its puts and sends for dst into
    // at the call. Empty when there is none (the same answer in every process). The
    // destination reads it in place in the sync of that superstep, after the barrier,
    // through direct_in(); the barrier of the next superstep orders that reading before
    // this process writes the same parity again.
    virtual std::span<std::byte> direct_out(int dst, std::uint64_t superstep) {
        (void)dst;
        (void)superstep;
        return {};
    }
    // The area process src writes for this one in `superstep` (every byte of it is
    // checked by the reader: it lies in src's memory).
    virtual std::span<const std::byte> direct_in(int src, std::uint64_t superstep) const {
        (void)src;
        (void)superstep;
        return {};
    }

    // bsp_end: keep answering peers (acknowledgements, retransmissions) from a background
    // thread until shutdown(), while the process waits in the launcher's collective finish.
    virtual void serve_in_background() = 0;
    virtual void shutdown() = 0;
};

}  // namespace bsp::rt
