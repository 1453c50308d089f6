// TEST DOUBLE, used only by unit tests: an in-process transport connecting P runtimes
// that run in P threads of one test process. Reliable and in order per pair, like the
// real transports; records what the messaging layer asked of it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "transport.hpp"

namespace bsp::test {

class LoopbackHub {
  public:
    explicit LoopbackHub(int nprocs) : queues_(static_cast<std::size_t>(nprocs)) {}

    void deliver(int src, int dst, std::vector<std::byte> bytes) {
        std::lock_guard lock(mu_);
        queues_[static_cast<std::size_t>(dst)].push_back({src, std::move(bytes)});
        cv_.notify_all();
    }
    std::optional<rt::Received> receive(int pid) {
        std::unique_lock lock(mu_);
        auto &q = queues_[static_cast<std::size_t>(pid)];
        cv_.wait(lock, [&] { return torn_down_ || !q.empty(); });
        if (torn_down_)
            return std::nullopt;
        rt::Received r = std::move(q.front());
        q.pop_front();
        return r;
    }
    void tear_down() {
        std::lock_guard lock(mu_);
        torn_down_ = true;
        cv_.notify_all();
    }
    std::size_t undelivered() const {
        std::lock_guard lock(mu_);
        std::size_t n = 0;
        for (const auto &q : queues_)
            n += q.size();
        return n;
    }

  private:
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::vector<std::deque<rt::Received>> queues_;
    bool torn_down_ = false;
};

class LoopbackTransport : public rt::Transport {
  public:
    LoopbackTransport(LoopbackHub &hub, int pid, std::size_t max_message)
        : hub_(hub), pid_(pid), max_message_(max_message) {}
    std::string name() const override { return "loopback"; }
    std::string description() const override { return "in-process test double"; }
    std::size_t max_message_bytes() const override { return max_message_; }
    void send(int dst, std::vector<std::byte> message, unsigned flags) override {
        if (message.size() > max_message_)
            throw std::logic_error("message larger than max_message_bytes");
        sent_to.push_back(dst);
        flags_sent.push_back(flags);
        sizes_sent.push_back(message.size());
        hub_.deliver(pid_, dst, std::move(message));
    }
    std::optional<rt::Received> receive() override { return hub_.receive(pid_); }
    void barrier_completed(std::uint64_t epoch) override { epochs.push_back(epoch); }
    void set_pacing_rate(std::uint64_t rate) override { rates.push_back(rate); }
    void streams_follow_counts(bool follow) override { follows.push_back(follow); }
    void expect_from(int src, std::uint32_t messages, std::uint64_t bytes) override {
        expected.push_back({src, bytes});
        expected_messages.push_back(messages);
    }
    void expect_barrier_message(int src) override { barrier_expected.push_back(src); }
    void flush_sends() override { ++flushes; }
    void serve_in_background() override {}
    void shutdown() override {}

    // What the messaging layer asked for (read by the tests after the threads joined).
    std::vector<int> sent_to;
    std::vector<unsigned> flags_sent;
    std::vector<std::size_t> sizes_sent;
    std::vector<std::uint64_t> epochs;
    std::vector<std::uint64_t> rates;
    std::vector<bool> follows;  // streams_follow_counts calls, in order
    std::vector<std::pair<int, std::uint64_t>> expected;
    std::vector<std::uint32_t> expected_messages;
    std::vector<int> barrier_expected;  // barrier partners whose message was not here yet
    int flushes = 0;

  private:
    LoopbackHub &hub_;
    int pid_;
    std::size_t max_message_;
};

}  // namespace bsp::test
