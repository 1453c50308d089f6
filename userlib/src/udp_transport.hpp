// The UDP transport (seed 000's BSPlib/UDP): one UDP socket per rail, driving the
// protocol engine (kernel/engine/bspe.h) for reliability, acknowledgement (including the
// superstep acknowledgement), striping over rails and pacing. Nothing of that is
// re-implemented here: this file only moves packets between the sockets and the engine.
#pragma once

#include <memory>

#include "launch/session.hpp"
#include "transport.hpp"

namespace bsp::rt {

// Collective: binds the rails of BSP_UDP_RAILS and exchanges their addresses through
// session.allgather. Throws std::runtime_error with the reason on failure.
std::unique_ptr<Transport> open_udp_transport(launch::Session &session);

}  // namespace bsp::rt
