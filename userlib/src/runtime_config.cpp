#include "runtime_config.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string_view>

namespace bsp::rt {

std::optional<std::uint64_t> parse_quantity(const std::string &s) {
    // A decimal number: strtod alone would also take leading spaces, a sign, hexadecimal,
    // "inf" and "nan".
    if (s.empty() || (!std::isdigit(static_cast<unsigned char>(s[0])) && s[0] != '.') ||
        s.find_first_not_of("0123456789.eE+-kKMG") != std::string::npos) {
        return std::nullopt;
    }
    char *end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || !(v >= 0)) {  // also NaN ("nan" parses)
        return std::nullopt;
    }
    double mult = 1;
    std::string_view rest(end);
    if (rest == "k" || rest == "K") {
        mult = 1e3;
    } else if (rest == "M") {
        mult = 1e6;
    } else if (rest == "G") {
        mult = 1e9;
    } else if (!rest.empty()) {
        return std::nullopt;
    }
    const double r = v * mult;
    if (!(r <= 1.8e19)) {
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(r);
}

std::optional<long long> parse_integer(std::string_view s, long long min, long long max) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) {
        return std::nullopt;
    }
    long long v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
        return std::nullopt;
    }
    return v;
}

RuntimeConfig config_from_environment(std::string *error) {
    RuntimeConfig c;
    auto bad = [&](const char *var, const char *value, const char *expected) {
        if (error && error->empty()) {
            *error = std::string(var) + "=" + value + " is invalid (expected " + expected + ")";
        }
    };
    if (const char *v = std::getenv("BSP_TRANSPORT")) {
        std::string_view s(v);
        if (s == "auto" || s.empty()) {
            c.transport = TransportChoice::Auto;
        } else if (s == "udp") {
            c.transport = TransportChoice::Udp;
        } else if (s == "afbsp") {
            c.transport = TransportChoice::AfBsp;
        } else {
            bad("BSP_TRANSPORT", v, "auto, udp or afbsp");
        }
    }
    if (const char *v = std::getenv("BSP_SCHEDULE")) {
        if (auto s = parse_schedule(v)) {
            c.messaging.schedule = *s;
        } else {
            bad("BSP_SCHEDULE", v, "latin, random or pid");
        }
    }
    if (const char *v = std::getenv("BSP_LINK_RATE")) {
        if (auto q = parse_quantity(v)) {
            c.messaging.link_rate = *q;
        } else {
            bad("BSP_LINK_RATE", v, "bytes per second, e.g. 125M");
        }
    }
    if (const char *v = std::getenv("BSP_UNIT_BYTES")) {
        auto q = parse_quantity(v);
        if (q && *q >= 256 && *q <= (1u << 30)) {
            c.messaging.unit_bytes = static_cast<std::size_t>(*q);
        } else {
            bad("BSP_UNIT_BYTES", v, "a size from 256 to 1G");
        }
    }
    if (const char *v = std::getenv("BSP_COMBINE")) {
        std::string_view s(v);
        if (s == "0" || s == "1") {
            c.messaging.combine = s == "1";
        } else {
            bad("BSP_COMBINE", v, "0 or 1");
        }
    }
    if (const char *v = std::getenv("BSP_VERBOSE")) {
        std::string_view s(v);
        if (s.empty() || s == "0" || s == "1") {
            c.verbose = s == "1";
        } else {
            bad("BSP_VERBOSE", v, "0 or 1");
        }
    }
    return c;
}

}  // namespace bsp::rt
