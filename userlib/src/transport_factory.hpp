// Chooses and opens the transport of a job: AF_BSP when requested or (auto) when the
// module is loaded, else UDP in user space driving the protocol engine.
#pragma once

#include <memory>
#include <stdexcept>

#include "launch/session.hpp"
#include "runtime_config.hpp"
#include "transport.hpp"

namespace bsp::rt {

// Collective (exchanges addresses through session.allgather). Throws
// std::runtime_error with a reason when no transport can be opened.
std::unique_ptr<Transport> open_transport(TransportChoice choice, launch::Session &session);

}  // namespace bsp::rt
