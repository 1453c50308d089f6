// Runs one AF_BSP sock_diag dump over a NETLINK_SOCK_DIAG socket.
#pragma once

#include <cstdint>
#include <string>

#include "diag_parser.hpp"

namespace bsp_ss {

struct DumpOutcome {
    DumpResult result;     // what the kernel answered (finished unless io_error is set)
    std::string io_error;  // a socket error on our side (empty if none)
};

// Sends the dump request for family/port/show and reads every part of the
// answer. Gives up with io_error after a bounded wait for an answer.
DumpOutcome run_dump(uint8_t family, uint16_t port, uint32_t show);

}  // namespace bsp_ss
