#include "job_token.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace bsp::launch {

std::string make_job_token() {
    std::uint8_t bytes[16];
    std::size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw std::system_error(errno, std::generic_category(), "getrandom");
        }
        got += static_cast<std::size_t>(n);
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (std::uint8_t b : bytes) {
        s += kHex[b >> 4];
        s += kHex[b & 15];
    }
    return s;
}

bool same_token(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;  // the length of a token is public (32 hex digits)
    }
    // Every byte is looked at; volatile keeps the compiler from ending the loop early.
    volatile unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = static_cast<unsigned char>(
            diff | (static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i])));
    }
    return diff == 0;
}

}  // namespace bsp::launch
