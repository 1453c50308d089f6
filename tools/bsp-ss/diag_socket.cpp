#include "diag_socket.hpp"

#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "diag_request.hpp"

namespace bsp_ss {
namespace {

// Owns a file descriptor.
class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

std::string sys_error(const char *what) {
    return std::string(what) + ": " + std::strerror(errno);
}

constexpr time_t kAnswerTimeoutSeconds = 10;

}  // namespace

DumpOutcome run_dump(uint8_t family, uint16_t port, uint32_t show) {
    DumpOutcome o;
    Fd fd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
    if (fd.get() < 0) {
        o.io_error = sys_error("socket(AF_NETLINK, NETLINK_SOCK_DIAG)");
        return o;
    }
    int one = 1;
    // extended acks carry the kernel's reason with an error; optional
    (void)::setsockopt(fd.get(), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
    timeval tv{kAnswerTimeoutSeconds, 0};
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
        o.io_error = sys_error("setsockopt(SO_RCVTIMEO)");
        return o;
    }
    ParseContext ctx;
    ctx.seq = uint32_t(::time(nullptr));
    ctx.family = family;
    std::vector<std::byte> req = build_dump_request(family, port, show, ctx.seq);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd.get(), req.data(), req.size(), 0, reinterpret_cast<sockaddr *>(&kernel),
                 sizeof(kernel)) != ssize_t(req.size())) {
        o.io_error = sys_error("sendto(NETLINK_SOCK_DIAG)");
        return o;
    }
    std::vector<std::byte> buf(32768);
    while (!o.result.finished()) {
        sockaddr_nl from{};
        iovec iov{buf.data(), buf.size()};
        msghdr mh{};
        mh.msg_name = &from;
        mh.msg_namelen = sizeof(from);
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        // learn the size of the next datagram first so none is ever cut
        ssize_t n = ::recvmsg(fd.get(), &mh, MSG_PEEK | MSG_TRUNC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            o.io_error = errno == EAGAIN ? "no answer from the kernel within " +
                                               std::to_string(kAnswerTimeoutSeconds) + " s"
                                         : sys_error("recvmsg(NETLINK_SOCK_DIAG)");
            return o;
        }
        if (size_t(n) > buf.size()) {
            buf.resize(size_t(n));
            iov = {buf.data(), buf.size()};
        }
        n = ::recvmsg(fd.get(), &mh, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            o.io_error = sys_error("recvmsg(NETLINK_SOCK_DIAG)");
            return o;
        }
        if (mh.msg_flags & MSG_TRUNC) {
            o.io_error = "netlink answer truncated";
            return o;
        }
        if (from.nl_pid != 0)  // not from the kernel
            continue;
        parse_diag_datagram(std::span<const std::byte>(buf.data(), size_t(n)), ctx, o.result);
    }
    return o;
}

}  // namespace bsp_ss
