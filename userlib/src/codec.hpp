// Little-endian encoding of messaging-layer messages (Documentation/messaging.rst).
// Reader checks every bound and throws ProtocolError on truncated input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "misuse.hpp"

namespace bsp::rt {

class Writer {
  public:
    explicit Writer(std::vector<std::byte> &out) : out_(out) {}

    template <typename T>
    void put(T v) {
        static_assert(std::is_integral_v<T>);
        using U = std::make_unsigned_t<T>;
        U u = static_cast<U>(v);
        for (std::size_t i = 0; i < sizeof(T); ++i) {
            out_.push_back(static_cast<std::byte>((u >> (8 * i)) & 0xff));
        }
    }
    void bytes(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }
    std::size_t size() const { return out_.size(); }
    // Overwrites a previously written u32 at position pos.
    void patch_u32(std::size_t pos, std::uint32_t v) {
        for (std::size_t i = 0; i < 4; ++i) {
            out_[pos + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
        }
    }

  private:
    std::vector<std::byte> &out_;
};

class Reader {
  public:
    explicit Reader(std::span<const std::byte> in) : in_(in) {}

    template <typename T>
    T get() {
        static_assert(std::is_integral_v<T>);
        need(sizeof(T));
        using U = std::make_unsigned_t<T>;
        U u = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i) {
            u |= static_cast<U>(static_cast<U>(in_[pos_ + i]) << (8 * i));
        }
        pos_ += sizeof(T);
        return static_cast<T>(u);
    }
    std::span<const std::byte> bytes(std::size_t n) {
        need(n);
        auto s = in_.subspan(pos_, n);
        pos_ += n;
        return s;
    }
    bool done() const { return pos_ == in_.size(); }
    std::size_t remaining() const { return in_.size() - pos_; }

  private:
    void need(std::size_t n) const {
        if (in_.size() - pos_ < n) {
            throw ProtocolError("truncated messaging-layer message");
        }
    }
    std::span<const std::byte> in_;
    std::size_t pos_ = 0;
};

}  // namespace bsp::rt
