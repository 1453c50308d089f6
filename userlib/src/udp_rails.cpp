#include "udp_rails.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace bsp::rt {

namespace {

bool interface_address(const std::string &name, in_addr *out) {
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) {
        return false;
    }
    bool found = false;
    for (ifaddrs *i = list; i; i = i->ifa_next) {
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && name == i->ifa_name) {
            *out = reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr;
            found = true;
            break;
        }
    }
    freeifaddrs(list);
    return found;
}

}  // namespace

std::vector<RailAddress> parse_rails(const std::string &spec) {
    std::vector<RailAddress> rails;
    std::size_t pos = 0;
    while (pos <= spec.size()) {
        std::size_t comma = spec.find(',', pos);
        if (comma == std::string::npos) {
            comma = spec.size();
        }
        RailAddress r;
        r.spec = spec.substr(pos, comma - pos);
        pos = comma + 1;
        if (r.spec.empty()) {
            throw std::runtime_error("BSP_UDP_RAILS=" + spec + " has an empty item");
        }
        if (inet_pton(AF_INET, r.spec.c_str(), &r.addr) != 1 &&
            !interface_address(r.spec, &r.addr)) {
            throw std::runtime_error("BSP_UDP_RAILS: " + r.spec +
                                     " is neither an IPv4 address nor an interface with one");
        }
        r.loopback = (ntohl(r.addr.s_addr) >> 24) == 127;
        rails.push_back(r);
    }
    if (rails.size() > 8) {
        throw std::runtime_error("BSP_UDP_RAILS names more than 8 rails");
    }
    return rails;
}

std::vector<RailAddress> rails_from_environment() {
    const char *v = std::getenv("BSP_UDP_RAILS");
    return parse_rails(v && *v ? v : "127.0.0.1");
}

RailSocket::RailSocket(const RailAddress &rail) {
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
        throw std::system_error(errno, std::generic_category(), "UDP rail socket");
    }
    const int buf = 8 << 20;  // capped by net.core.{r,w}mem_max
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr = rail.addr;
    a.sin_port = 0;
    if (bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        const int e = errno;
        close(fd_);
        throw std::system_error(e, std::generic_category(), "bind UDP rail " + rail.spec);
    }
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len);
    port_ = ntohs(a.sin_port);
}

RailSocket::~RailSocket() {
    if (fd_ >= 0) {
        close(fd_);
    }
}

}  // namespace bsp::rt
