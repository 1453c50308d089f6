#include "wire.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace bsp::launch::wire {

namespace {

void put_u32(std::vector<std::byte> &out, std::uint32_t v) {
    std::uint32_t be = htonl(v);
    const auto *p = reinterpret_cast<const std::byte *>(&be);
    out.insert(out.end(), p, p + sizeof be);
}

std::uint32_t get_u32(const std::byte *p) {
    std::uint32_t be;
    std::memcpy(&be, p, sizeof be);
    return ntohl(be);
}

constexpr std::size_t kHeader = 8;

}  // namespace

bool send_message(int fd, Type type, std::span<const std::byte> body) {
    if (body.size() > kMaxBody) {
        errno = EMSGSIZE;
        return false;
    }
    std::vector<std::byte> frame;
    frame.reserve(kHeader + body.size());
    put_u32(frame, static_cast<std::uint32_t>(type));
    put_u32(frame, static_cast<std::uint32_t>(body.size()));
    frame.insert(frame.end(), body.begin(), body.end());
    std::size_t done = 0;
    while (done < frame.size()) {
        ssize_t n = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

Reader::Fill Reader::fill(int fd) {
    // Drop the messages already returned: a peer whose reads always end inside a message
    // must not make the buffer keep everything it ever sent.
    if (start_ > 0) {
        buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
        start_ = 0;
    }
    std::byte chunk[16384];
    ssize_t n;
    do {
        n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        return errno == EAGAIN || errno == EWOULDBLOCK ? Fill::would_block : Fill::error;
    }
    if (n == 0) {
        return Fill::eof;
    }
    buffer_.insert(buffer_.end(), chunk, chunk + n);
    return Fill::data;
}

std::optional<Message> Reader::next() {
    std::size_t avail = buffer_.size() - start_;
    if (avail < kHeader) {
        return std::nullopt;
    }
    const std::byte *p = buffer_.data() + start_;
    std::uint32_t type = get_u32(p);
    std::uint32_t len = get_u32(p + 4);
    if (type < static_cast<std::uint32_t>(Type::hello) ||
        type > static_cast<std::uint32_t>(Type::refused)) {
        throw std::runtime_error("control protocol: unknown message type " + std::to_string(type));
    }
    if (len > limit_) {
        throw std::runtime_error("control protocol: message of " + std::to_string(len) +
                                 " bytes exceeds the limit of " + std::to_string(limit_));
    }
    if (avail < kHeader + len) {
        return std::nullopt;
    }
    Message m{static_cast<Type>(type), std::vector<std::byte>(p + kHeader, p + kHeader + len)};
    start_ += kHeader + len;
    if (start_ == buffer_.size()) {
        buffer_.clear();
        start_ = 0;
    }
    return m;
}

Encoder &Encoder::u32(std::uint32_t v) {
    put_u32(out_, v);
    return *this;
}

Encoder &Encoder::bytes(std::span<const std::byte> b) {
    u32(static_cast<std::uint32_t>(b.size()));
    out_.insert(out_.end(), b.begin(), b.end());
    return *this;
}

Encoder &Encoder::string(std::string_view s) {
    return bytes(std::as_bytes(std::span(s.data(), s.size())));
}

std::span<const std::byte> Decoder::take(std::size_t n) {
    if (in_.size() - pos_ < n) {
        throw std::runtime_error("control protocol: truncated message");
    }
    auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
}

std::uint32_t Decoder::u32() {
    return get_u32(take(4).data());
}

std::vector<std::byte> Decoder::bytes() {
    std::uint32_t n = u32();
    auto s = take(n);
    return {s.begin(), s.end()};
}

std::string Decoder::string() {
    std::uint32_t n = u32();
    auto s = take(n);
    return {reinterpret_cast<const char *>(s.data()), s.size()};
}

}  // namespace bsp::launch::wire
