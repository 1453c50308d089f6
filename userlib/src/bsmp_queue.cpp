#include "bsmp_queue.hpp"

namespace bsp::rt {

void BsmpQueue::reset(std::vector<Message> messages) {
    messages_ = std::move(messages);
    head_ = 0;
}

std::size_t BsmpQueue::payload_total() const {
    std::size_t n = 0;
    for (std::size_t i = head_; i < messages_.size(); ++i) {
        n += messages_[i].payload_bytes();
    }
    return n;
}

}  // namespace bsp::rt
