// Run-time configuration of libbsp from the environment (Documentation/bsplib.rst):
//   BSP_TRANSPORT  auto | udp | afbsp       (default auto)
//   BSP_SCHEDULE   latin | random | pid     (default latin)
//   BSP_LINK_RATE  bytes/s of one node's link, suffix k/M/G allowed (default 0: no pacing)
//   BSP_UNIT_BYTES size of the messaging layer's units (default: the transport's maximum)
//   BSP_COMBINE    0: one transport message per put/send (no combining; the probe's
//                  comparison), 1: combine (default)
//   BSP_VERBOSE    1: process 0 prints one line naming the transport to stderr; 0 or
//                  empty: not (anything else is an error)
// Every value is checked whole: trailing text, signs or spaces are errors, never ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messaging.hpp"

namespace bsp::rt {

enum class TransportChoice { Auto, Udp, AfBsp };

struct RuntimeConfig {
    TransportChoice transport = TransportChoice::Auto;
    MessagingConfig messaging;
    bool verbose = false;
};

// Reads the environment; a bad value yields an error reason naming the variable.
RuntimeConfig config_from_environment(std::string *error);

// Parses "1000", "10k", "1.5M", "2G" (decimal multipliers); nullopt if malformed.
std::optional<std::uint64_t> parse_quantity(const std::string &s);

// Parses a whole decimal integer from min to max (digits only: no sign, space or other
// text); nullopt otherwise.
std::optional<long long> parse_integer(std::string_view s, long long min, long long max);

}  // namespace bsp::rt
