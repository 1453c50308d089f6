// Parser of the NETLINK_SOCK_DIAG answers to an AF_BSP dump request.
//
// A pure function over the bytes of one received netlink datagram: no I/O,
// no assumption about alignment of the buffer, every length checked before
// anything is read. The caller feeds the datagrams of one dump in order into
// the same DumpResult until it is finished (done, error or malformed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "diag_socket_info.hpp"

namespace bsp_ss {

struct DumpResult {
    std::vector<DiagSocket> sockets;
    bool done = false;         // NLMSG_DONE seen without an error
    bool interrupted = false;  // a message carried NLM_F_DUMP_INTR
    int error = 0;             // errno of NLMSG_ERROR / NLMSG_DONE (positive), 0 if none
    std::string error_msg;     // the kernel's extended-ack message, if any
    std::string malformed;     // why the answer cannot be trusted (empty if fine)
    unsigned skipped = 0;      // messages ignored: other sequence number, NOOP, ACK
    // Sockets answered twice (same cookie), kept once: a dump resumed while
    // sockets came and went. Like interrupted, the list may lack sockets.
    unsigned duplicates = 0;
    std::unordered_set<uint64_t> cookies;  // of sockets, to find duplicates

    // No further datagram of this dump is to be read.
    bool finished() const { return done || error != 0 || !malformed.empty(); }
};

struct ParseContext {
    uint32_t seq = 0;    // sequence number of our request
    uint8_t family = 0;  // the family we asked for
};

// Parses one netlink datagram of a dump answer and appends what it holds to
// out. Messages after the end of the dump in the same datagram are ignored;
// calling it on a finished result does nothing.
void parse_diag_datagram(std::span<const std::byte> buf, const ParseContext &ctx, DumpResult &out);

// Parses the attributes following struct bsp_diag_msg (exposed for tests).
// Returns an empty string on success, else what is wrong with them.
std::string parse_diag_attributes(std::span<const std::byte> attrs, DiagSocket &sock);

}  // namespace bsp_ss
