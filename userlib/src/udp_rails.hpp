// The rails of the UDP transport: one UDP socket per local IPv4 address/interface.
// BSP_UDP_RAILS lists them (comma-separated IPv4 addresses or interface names, e.g.
// "eth1,eth2" or "10.0.0.1,10.1.0.1"); unset, one rail on the loopback address. Rail r of
// every process must be on the same network.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bsp::rt {

struct RailAddress {
    std::string spec;  // as configured ("eth1", "127.0.0.1")
    in_addr addr{};    // IPv4 address to bind
    bool loopback = false;
};

// Resolves BSP_UDP_RAILS (or the default). Throws std::runtime_error naming the bad item.
std::vector<RailAddress> rails_from_environment();
std::vector<RailAddress> parse_rails(const std::string &spec);

// A bound, non-blocking UDP socket (closed by the destructor).
class RailSocket {
  public:
    explicit RailSocket(const RailAddress &rail);
    RailSocket(RailSocket &&o) noexcept : fd_(o.fd_), port_(o.port_) { o.fd_ = -1; }
    RailSocket &operator=(RailSocket &&) = delete;
    RailSocket(const RailSocket &) = delete;
    ~RailSocket();
    int fd() const { return fd_; }
    std::uint16_t port() const { return port_; }  // host order

  private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
};

}  // namespace bsp::rt
