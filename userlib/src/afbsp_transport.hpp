// The AF_BSP transport: one SOCK_RDM socket of the kernel module per process. The kernel
// (protocol engine, rails, pacing) does reliability and acknowledgement; this file maps
// the messaging layer's hooks onto the socket options of kernel/include/uapi/linux/bsp.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "launch/session.hpp"
#include "transport.hpp"

namespace bsp::rt {

// This process's AF_BSP socket, bound to a free port, before addresses are exchanged.
class AfBspEndpoint {
  public:
    // Throws std::runtime_error with the reason when AF_BSP is not usable here (module
    // not loaded, socket or bind refused). The socket can talk to `peers` remote
    // sockets at a time (BSP_CHANNELS is raised before bind when the module's default
    // is smaller).
    explicit AfBspEndpoint(int peers);
    AfBspEndpoint(AfBspEndpoint &&o) noexcept;
    AfBspEndpoint &operator=(AfBspEndpoint &&) = delete;
    AfBspEndpoint(const AfBspEndpoint &) = delete;
    ~AfBspEndpoint();

    std::vector<std::byte> blob() const;
    int release();  // hands the descriptor over
    int family() const { return family_; }

  private:
    int fd_ = -1;
    int family_ = 0;
    std::uint32_t node_ = 0;
    std::uint16_t port_ = 0;
};

// blobs[p] is AfBspEndpoint::blob() of process p. Throws std::runtime_error.
std::unique_ptr<Transport> open_afbsp_transport(AfBspEndpoint endpoint, launch::Session &session,
                                                const std::vector<std::vector<std::byte>> &blobs);

}  // namespace bsp::rt
