// The UDP transport ([DHS99]'s BSPlib/UDP): one UDP socket per rail, driving the
// protocol engine (kernel/engine/bspe.h) for reliability, acknowledgement (including the
// superstep acknowledgement), striping over rails and pacing. Nothing of that is
// re-implemented here: this file only moves packets between the sockets and the engine.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "launch/session.hpp"
#include "transport.hpp"
#include "udp_rails.hpp"

namespace bsp::rt {

// This process's rails, bound (BSP_UDP_RAILS), before the addresses are exchanged.
struct UdpEndpoint {
    UdpEndpoint();  // throws std::runtime_error / std::system_error with the reason
    std::vector<RailAddress> addrs;
    std::vector<RailSocket> sockets;
    // Packets carry a MAC keyed from the job secret (BSP_UDP_AUTH, default 1;
    // Documentation/security.rst, "Authenticated packets").
    bool auth = true;
    std::vector<std::byte> blob() const;  // what the others need to reach us
};

// blobs[p] is UdpEndpoint::blob() of process p (exchanged by the caller through the
// session). Throws std::runtime_error with the reason on failure.
std::unique_ptr<Transport> open_udp_transport(UdpEndpoint endpoint, launch::Session &session,
                                              const std::vector<std::vector<std::byte>> &blobs);

}  // namespace bsp::rt
