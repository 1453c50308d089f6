#include "rendezvous_address.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace bsp::launch {

namespace {

std::system_error errno_error(const std::string &what) {
    return std::system_error(errno, std::generic_category(), what);
}

sockaddr_un unix_sockaddr(const std::string &path) {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (path.size() >= sizeof sa.sun_path) {
        throw std::invalid_argument("rendezvous socket path too long (max " +
                                    std::to_string(sizeof sa.sun_path - 1) + " bytes): " + path);
    }
    std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
    return sa;
}

void set_nodelay(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

RendezvousAddress RendezvousAddress::parse(std::string_view text) {
    RendezvousAddress a;
    if (text.starts_with("unix:")) {
        a.kind = Kind::unix_path;
        a.path = std::string(text.substr(5));
        if (a.path.empty() || a.path[0] != '/') {
            throw std::invalid_argument("rendezvous address '" + std::string(text) +
                                        "': unix: needs an absolute socket path");
        }
        unix_sockaddr(a.path);
        return a;
    }
    if (text.starts_with("tcp:")) {
        a.kind = Kind::tcp;
        std::string_view rest = text.substr(4);
        auto colon = rest.rfind(':');
        if (colon == std::string_view::npos || colon == 0) {
            throw std::invalid_argument("rendezvous address '" + std::string(text) +
                                        "': expected tcp:HOST:PORT");
        }
        a.host = std::string(rest.substr(0, colon));
        if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']') {
            a.host = a.host.substr(1, a.host.size() - 2);
            if (a.host.empty()) {
                throw std::invalid_argument("rendezvous address '" + std::string(text) +
                                            "': empty host between '[' and ']'");
            }
        }
        // Brackets only enclose a whole host (tcp:[v6addr]:PORT): a host holding one would
        // not print back as itself.
        if (a.host.find_first_of("[]") != std::string::npos) {
            throw std::invalid_argument("rendezvous address '" + std::string(text) +
                                        "': '[' and ']' may only enclose the whole host, as in "
                                        "tcp:[::1]:PORT");
        }
        std::string_view port = rest.substr(colon + 1);
        unsigned value = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc() || end != port.data() + port.size() || value > 65535) {
            throw std::invalid_argument("rendezvous address '" + std::string(text) +
                                        "': bad port '" + std::string(port) + "'");
        }
        a.port = static_cast<std::uint16_t>(value);
        return a;
    }
    throw std::invalid_argument("rendezvous address '" + std::string(text) +
                                "': expected unix:/PATH or tcp:HOST:PORT");
}

std::string RendezvousAddress::to_string() const {
    if (kind == Kind::unix_path) {
        return "unix:" + path;
    }
    bool v6 = host.find(':') != std::string::npos;
    return "tcp:" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

UniqueFd listen_on(const RendezvousAddress &address) {
    if (address.kind == RendezvousAddress::Kind::unix_path) {
        sockaddr_un sa = unix_sockaddr(address.path);
        UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        if (!fd) {
            throw errno_error("socket(AF_UNIX)");
        }
        if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&sa), sizeof sa) < 0) {
            throw errno_error("bind " + address.path);
        }
        if (::listen(fd.get(), 128) < 0) {
            throw errno_error("listen " + address.path);
        }
        return fd;
    }
    // Only the address the processes connect to, never every interface: the host's own
    // addresses (getaddrinfo), the first one that can be bound.
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo *res = nullptr;
    std::string port = std::to_string(address.port);
    std::string where = "TCP port " + port + " of " + address.host;
    if (address.host.empty()) {
        throw std::invalid_argument("listen_on: a TCP rendezvous needs the address to bind");
    }
    int gai = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &res);
    if (gai != 0) {
        errno = gai == EAI_SYSTEM ? errno : EADDRNOTAVAIL;
        throw std::system_error(errno, std::generic_category(),
                                "bind " + where + " (" + ::gai_strerror(gai) + ")");
    }
    int last_errno = EADDRNOTAVAIL;
    for (addrinfo *ai = res; ai != nullptr; ai = ai->ai_next) {
        UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                             ai->ai_protocol));
        if (!fd) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6) {
            ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        }
        if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) < 0 || ::listen(fd.get(), 128) < 0) {
            last_errno = errno;
            continue;
        }
        ::freeaddrinfo(res);
        return fd;
    }
    ::freeaddrinfo(res);
    throw std::system_error(
        last_errno, std::generic_category(),
        "bind " + where + (last_errno == EADDRNOTAVAIL ? " (not an address of this machine)" : ""));
}

std::uint16_t bound_tcp_port(int listen_fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(listen_fd, reinterpret_cast<sockaddr *>(&ss), &len) < 0) {
        throw errno_error("getsockname");
    }
    if (ss.ss_family == AF_INET6) {
        return ntohs(reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port);
    }
    return ntohs(reinterpret_cast<sockaddr_in *>(&ss)->sin_port);
}

UniqueFd connect_to(const RendezvousAddress &address,
                    std::chrono::steady_clock::time_point deadline) {
    auto pause = std::chrono::milliseconds(5);
    std::string what;
    int last_errno = 0;
    for (;;) {
        if (address.kind == RendezvousAddress::Kind::unix_path) {
            what = "connect to " + address.to_string();
            sockaddr_un sa = unix_sockaddr(address.path);
            UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
            if (!fd) {
                throw errno_error("socket(AF_UNIX)");
            }
            if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0) {
                return fd;
            }
            last_errno = errno;
            if (last_errno != ENOENT && last_errno != ECONNREFUSED && last_errno != EAGAIN &&
                last_errno != EINTR) {
                break;
            }
        } else {
            what = "connect to " + address.to_string();
            addrinfo hints{};
            hints.ai_family = AF_UNSPEC;
            hints.ai_socktype = SOCK_STREAM;
            addrinfo *res = nullptr;
            std::string port = std::to_string(address.port);
            int gai = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &res);
            if (gai != 0) {
                last_errno = gai == EAI_SYSTEM ? errno : EHOSTUNREACH;
                what += std::string(" (") + ::gai_strerror(gai) + ")";
            } else {
                for (addrinfo *ai = res; ai != nullptr; ai = ai->ai_next) {
                    UniqueFd fd(
                        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
                    if (!fd) {
                        last_errno = errno;
                        continue;
                    }
                    if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) {
                        ::freeaddrinfo(res);
                        set_nodelay(fd.get());
                        return fd;
                    }
                    last_errno = errno;
                }
                ::freeaddrinfo(res);
            }
        }
        if (std::chrono::steady_clock::now() + pause >= deadline) {
            break;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(200));
    }
    throw std::system_error(last_errno, std::generic_category(), what);
}

UniqueFd accept_connection(int listen_fd) {
    UniqueFd fd(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (fd) {
        int saved = errno;
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        if (::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&ss), &len) == 0 &&
            ss.ss_family != AF_UNIX) {
            set_nodelay(fd.get());
        }
        errno = saved;
    }
    return fd;
}

}  // namespace bsp::launch
