#include "misuse.hpp"

namespace bsp::rt {

static std::string format_misuse(std::string_view call, int pid, std::string_view reason) {
    std::string s = "BSPlib error: ";
    s += call;
    if (pid >= 0) {
        s += " on process ";
        s += std::to_string(pid);
    }
    s += ": ";
    s += reason;
    return s;
}

Misuse::Misuse(std::string_view call, int pid, std::string_view reason)
    : std::runtime_error(format_misuse(call, pid, reason)), call_(call), reason_(reason) {}

}  // namespace bsp::rt
