// Control protocol between the processes of a job and its coordinator (bsprun, the
// Slurm rank-0 process or the parent of spawn_local). Length-prefixed messages over a
// stream socket, integers in network byte order. Specified in Documentation/launch.rst.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bsp::launch::wire {

inline constexpr std::uint32_t kVersion = 1;
// Upper bound of one message body; allgather contributions are far smaller.
inline constexpr std::uint32_t kMaxBody = 64u << 20;
// Upper bound of a message body before the hello was accepted: what a hello needs
// (version, pid, nprocs and a job token of up to kMaxToken bytes), not more.
inline constexpr std::uint32_t kMaxToken = 256;
inline constexpr std::uint32_t kMaxHelloBody = 16 + kMaxToken;

enum class Type : std::uint32_t {
    hello = 1,      // process -> coordinator: version, pid, nprocs, job token
    allgather = 2,  // process -> coordinator: this process's blob of the current round
    finish = 3,     // process -> coordinator: entered finish()
    abort = 4,      // process -> coordinator: exit status, message
    gathered = 5,   // coordinator -> process: nprocs blobs indexed by pid
    finished = 6,   // coordinator -> process: every process called finish()
    teardown = 7,   // coordinator -> process: the job is over, exit with this status
    abort_ack = 8,  // coordinator -> aborting process: handled, exit with this status
    welcome = 9,    // coordinator -> process: the hello was accepted
    refused = 10,   // coordinator -> process: the hello was refused: Refusal, reason text
};

// Why a coordinator refused a hello (the body of `refused` starts with it).
enum class Refusal : std::uint32_t {
    other_job = 1,   // another job's token: the address leads to another job's coordinator
    version = 2,     // another control protocol version
    membership = 3,  // wrong process count, pid out of range or taken (the job ends)
};

struct Message {
    Type type;
    std::vector<std::byte> body;
};

// Blocking send of one whole message (MSG_NOSIGNAL). Returns false if the peer is gone
// or the send timed out (errno is set).
bool send_message(int fd, Type type, std::span<const std::byte> body);

// Accumulates bytes from a socket and splits them into messages.
class Reader {
  public:
    enum class Fill { data, eof, would_block, error };
    // One non-blocking read from fd.
    Fill fill(int fd);
    // The next complete message, if any. Throws std::runtime_error on a malformed frame
    // or one whose body is larger than the limit.
    std::optional<Message> next();
    // The largest body next() accepts (kMaxBody unless lowered).
    void limit(std::uint32_t max_body) { limit_ = max_body; }
    // Bytes held: received and not yet returned by next(), plus (until the next fill())
    // those of the messages returned since the last fill().
    std::size_t buffered() const { return buffer_.size(); }

  private:
    std::vector<std::byte> buffer_;
    std::size_t start_ = 0;
    std::uint32_t limit_ = kMaxBody;
};

class Encoder {
  public:
    Encoder &u32(std::uint32_t v);
    Encoder &bytes(std::span<const std::byte> b);  // length-prefixed
    Encoder &string(std::string_view s);           // length-prefixed
    const std::vector<std::byte> &data() const { return out_; }

  private:
    std::vector<std::byte> out_;
};

// Throws std::runtime_error when the body is shorter than what is asked for.
class Decoder {
  public:
    explicit Decoder(std::span<const std::byte> in) : in_(in) {}
    std::uint32_t u32();
    std::vector<std::byte> bytes();
    std::string string();
    bool done() const { return pos_ == in_.size(); }

  private:
    std::span<const std::byte> take(std::size_t n);
    std::span<const std::byte> in_;
    std::size_t pos_ = 0;
};

}  // namespace bsp::launch::wire
