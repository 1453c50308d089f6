#include "runtime_config.hpp"

#include <cstdlib>
#include <string_view>

namespace bsp::rt {

std::optional<std::uint64_t> parse_quantity(const std::string &s) {
    if (s.empty())
        return std::nullopt;
    char *end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || !(v >= 0))  // also NaN ("nan" parses)
        return std::nullopt;
    double mult = 1;
    std::string_view rest(end);
    if (rest == "k" || rest == "K")
        mult = 1e3;
    else if (rest == "M")
        mult = 1e6;
    else if (rest == "G")
        mult = 1e9;
    else if (!rest.empty())
        return std::nullopt;
    const double r = v * mult;
    if (!(r <= 1.8e19))
        return std::nullopt;
    return static_cast<std::uint64_t>(r);
}

RuntimeConfig config_from_environment(std::string *error) {
    RuntimeConfig c;
    auto bad = [&](const char *var, const char *value, const char *expected) {
        if (error && error->empty())
            *error = std::string(var) + "=" + value + " is invalid (expected " + expected + ")";
    };
    if (const char *v = std::getenv("BSP_TRANSPORT")) {
        std::string_view s(v);
        if (s == "auto" || s.empty())
            c.transport = TransportChoice::Auto;
        else if (s == "udp")
            c.transport = TransportChoice::Udp;
        else if (s == "afbsp")
            c.transport = TransportChoice::AfBsp;
        else
            bad("BSP_TRANSPORT", v, "auto, udp or afbsp");
    }
    if (const char *v = std::getenv("BSP_SCHEDULE")) {
        if (auto s = parse_schedule(v))
            c.messaging.schedule = *s;
        else
            bad("BSP_SCHEDULE", v, "latin, random or pid");
    }
    if (const char *v = std::getenv("BSP_LINK_RATE")) {
        if (auto q = parse_quantity(v))
            c.messaging.link_rate = *q;
        else
            bad("BSP_LINK_RATE", v, "bytes per second, e.g. 125M");
    }
    if (const char *v = std::getenv("BSP_UNIT_BYTES")) {
        auto q = parse_quantity(v);
        if (q && *q >= 256 && *q <= (1u << 30))
            c.messaging.unit_bytes = static_cast<std::size_t>(*q);
        else
            bad("BSP_UNIT_BYTES", v, "a size from 256 to 1G");
    }
    if (const char *v = std::getenv("BSP_COMBINE")) {
        std::string_view s(v);
        if (s == "0" || s == "1")
            c.messaging.combine = s == "1";
        else
            bad("BSP_COMBINE", v, "0 or 1");
    }
    if (const char *v = std::getenv("BSP_VERBOSE"))
        c.verbose = std::string_view(v) == "1";
    return c;
}

}  // namespace bsp::rt
