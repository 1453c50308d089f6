// The BSMP receive queue of one superstep: messages sent to this process in the previous
// superstep, in a deterministic order (by source pid, then send order), each holding its
// tag (of the tag size in effect when it was sent) followed by its payload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bsp::rt {

class BsmpQueue {
  public:
    struct Message {
        int src = 0;
        std::uint32_t tag_bytes = 0;
        std::vector<std::byte> data;  // tag bytes, then payload bytes
        std::size_t payload_bytes() const { return data.size() - tag_bytes; }
    };

    // Replaces the queue with the messages delivered by a sync (already in order).
    void reset(std::vector<Message> messages);

    bool empty() const { return head_ == messages_.size(); }
    std::size_t count() const { return messages_.size() - head_; }
    std::size_t payload_total() const;
    const Message &front() const { return messages_[head_]; }
    // Writable: bsp_hpmove hands out pointers into the front message's bytes.
    Message &front() { return messages_[head_]; }
    // Advances past the front message; its storage stays valid until the next reset
    // (what bsp_hpmove's pointers need).
    void pop() { ++head_; }

  private:
    std::vector<Message> messages_;
    std::size_t head_ = 0;
};

}  // namespace bsp::rt
