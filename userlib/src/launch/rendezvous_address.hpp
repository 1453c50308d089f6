// Where the processes of a job find their coordinator: "unix:/path/to/socket" (one
// machine, also across network namespaces) or "tcp:host:port" (across hosts).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "unique_fd.hpp"

namespace bsp::launch {

struct RendezvousAddress {
    enum class Kind { unix_path, tcp };
    Kind kind = Kind::unix_path;
    std::string path;  // unix_path
    std::string host;  // tcp
    std::uint16_t port = 0;

    // Throws std::invalid_argument naming what is wrong.
    static RendezvousAddress parse(std::string_view text);
    std::string to_string() const;
};

// A listening stream socket (close-on-exec, non-blocking). For TCP the socket binds only
// the host's address (the first of getaddrinfo's answers that this machine has), never
// every interface; port 0 picks a free port (see bound_tcp_port). Throws std::system_error
// (EADDRNOTAVAIL: the host is not an address of this machine).
UniqueFd listen_on(const RendezvousAddress &address);
std::uint16_t bound_tcp_port(int listen_fd);

// Connects, retrying while the coordinator is not listening yet (ENOENT, ECONNREFUSED,
// unresolvable host) until the deadline. Throws std::system_error with the last error.
UniqueFd connect_to(const RendezvousAddress &address,
                    std::chrono::steady_clock::time_point deadline);

// Accepts one connection (close-on-exec), or returns an empty fd with errno set (EAGAIN
// when none is waiting, EMFILE/ENFILE when out of descriptors).
UniqueFd accept_connection(int listen_fd);

}  // namespace bsp::launch
