#include "afbsp_transport.hpp"

#include <time.h>

#include <linux/bsp.h>
#include <linux/errqueue.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "bspe.h"
#include "codec.hpp"
#include "engine_stats.hpp"

namespace bsp::rt {

namespace {

constexpr std::uint32_t kBlobMagic = 0x41464253;  // "SBFA"
constexpr std::size_t kUnitBytes = 256 << 10;     // messages the messaging layer sends

std::string errno_text(int e) {
    return std::strerror(e);
}

int module_family() {
    std::ifstream f(BSP_FAMILY_PARAM_PATH);
    int family = 0;
    if (!(f >> family)) {
        throw std::runtime_error("the af_bsp module is not loaded (" +
                                 std::string(BSP_FAMILY_PARAM_PATH) + " is missing)");
    }
    return family;
}

std::uint64_t key(std::uint32_t node, std::uint16_t port) {
    return (static_cast<std::uint64_t>(node) << 16) | port;
}

sockaddr_bsp address(int family, std::uint32_t node, std::uint16_t port) {
    sockaddr_bsp a{};
    a.sbsp_family = static_cast<__kernel_sa_family_t>(family);
    a.sbsp_node = node;
    a.sbsp_port = port;
    return a;
}

class AfBspTransport final : public Transport {
  public:
    AfBspTransport(AfBspEndpoint endpoint, launch::Session &session,
                   const std::vector<std::vector<std::byte>> &blobs);
    ~AfBspTransport() override { shutdown(); }

    std::string name() const override { return "afbsp"; }
    std::string description() const override {
        return "AF_BSP socket (family " + std::to_string(family_) + "), node " +
               std::to_string(node_) + " port " + std::to_string(port_);
    }
    std::size_t max_message_bytes() const override { return kUnitBytes; }
    void send(int dst, std::vector<std::byte> message, unsigned flags) override;
    std::optional<Received> receive() override;
    std::optional<Received> receive_or_wake(int wake_fd, bool *woken) override;
    void flush_sends() override;
    void barrier_completed(std::uint64_t epoch) override;
    void streams_follow_counts(bool follow) override;
    void set_pacing_rate(std::uint64_t bytes_per_second) override;
    void expect_from(int src, std::uint32_t messages, std::uint64_t bytes) override;
    void expect_barrier_message(int src) override;
    void serve_in_background() override { flush_sends(); }
    void shutdown() override;

  private:
    struct Pending {
        int dst;
        std::vector<std::byte> bytes;
        std::uint32_t flags;
    };
    bool try_send(const Pending &p);  // false: would block
    bool drain_incoming();            // false: job torn down
    void check_send_failure();        // throws if a sent message failed
    void set(int opt, const void *v, socklen_t len, const char *what);

    int fd_;
    int family_;
    int pid_;
    int control_fd_;
    std::uint32_t node_ = 0;
    std::uint16_t port_ = 0;
    std::vector<sockaddr_bsp> peers_;
    std::unordered_map<std::uint64_t, int> pid_of_;
    std::deque<Pending> out_;
    std::deque<Received> ready_;
    std::vector<std::byte> rxbuf_;
};

}  // namespace

AfBspEndpoint::AfBspEndpoint(int peers) {
    family_ = module_family();
    fd_ = socket(family_, SOCK_RDM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
        throw std::runtime_error("AF_BSP socket: " + errno_text(errno));
    }
    // Every other process of the job gets a channel (the module's default table may be
    // smaller than a large job); sized before bind, when the kernel allocates it.
    __u32 chans = 0;
    socklen_t clen = sizeof chans;
    if (getsockopt(fd_, SOL_BSP, BSP_CHANNELS, &chans, &clen) == 0 && peers > 0 &&
        chans < static_cast<__u32>(peers)) {
        const __u32 want = static_cast<__u32>(peers);
        if (setsockopt(fd_, SOL_BSP, BSP_CHANNELS, &want, sizeof want) != 0) {
            const int e = errno;
            close(fd_);
            fd_ = -1;
            throw std::runtime_error("AF_BSP setsockopt BSP_CHANNELS " + std::to_string(want) +
                                     ": " + errno_text(e));
        }
    }
    sockaddr_bsp a = address(family_, BSP_NODE_LOCAL, BSP_PORT_ANY);
    if (bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        const int e = errno;
        close(fd_);
        fd_ = -1;
        throw std::runtime_error("AF_BSP bind: " + errno_text(e));
    }
    socklen_t len = sizeof a;
    if (getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
        const int e = errno;
        close(fd_);
        fd_ = -1;
        throw std::runtime_error("AF_BSP getsockname: " + errno_text(e));
    }
    node_ = a.sbsp_node;
    port_ = a.sbsp_port;
}

AfBspEndpoint::AfBspEndpoint(AfBspEndpoint &&o) noexcept
    : fd_(o.fd_), family_(o.family_), node_(o.node_), port_(o.port_) {
    o.fd_ = -1;
}

AfBspEndpoint::~AfBspEndpoint() {
    if (fd_ >= 0) {
        close(fd_);
    }
}

int AfBspEndpoint::release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
}

std::vector<std::byte> AfBspEndpoint::blob() const {
    std::vector<std::byte> b;
    Writer w(b);
    w.put<std::uint32_t>(kBlobMagic);
    w.put<std::uint32_t>(node_);
    w.put<std::uint16_t>(port_);
    return b;
}

namespace {

AfBspTransport::AfBspTransport(AfBspEndpoint endpoint, launch::Session &session,
                               const std::vector<std::vector<std::byte>> &blobs)
    : fd_(-1),
      family_(endpoint.family()),
      pid_(session.pid()),
      control_fd_(session.control_fd()),
      rxbuf_(BSP_MSG_MAX) {
    if (blobs.size() != static_cast<std::size_t>(session.nprocs())) {
        throw std::runtime_error("address exchange returned the wrong number of blobs");
    }
    for (std::size_t p = 0; p < blobs.size(); ++p) {
        Reader r(blobs[p]);
        if (r.get<std::uint32_t>() != kBlobMagic) {
            throw std::runtime_error("process " + std::to_string(p) + " has no AF_BSP socket");
        }
        const auto node = r.get<std::uint32_t>();
        const auto port = r.get<std::uint16_t>();
        peers_.push_back(address(family_, node, port));
        pid_of_[key(node, port)] = static_cast<int>(p);
        if (static_cast<int>(p) == pid_) {
            node_ = node;
            port_ = port;
        }
    }
    fd_ = endpoint.release();
    // The group: every other process of the job (superstep acknowledgement).
    std::vector<std::byte> g(sizeof(bsp_group) + sizeof(bsp_endpoint) * (peers_.size() - 1));
    auto *group = reinterpret_cast<bsp_group *>(g.data());
    group->count = static_cast<__u32>(peers_.size() - 1);
    std::size_t k = 0;
    for (std::size_t p = 0; p < peers_.size(); ++p) {
        if (static_cast<int>(p) == pid_) {
            continue;
        }
        group->members[k].node = peers_[p].sbsp_node;
        group->members[k].port = peers_[p].sbsp_port;
        ++k;
    }
    set(BSP_GROUP, g.data(), static_cast<socklen_t>(g.size()), "BSP_GROUP");
}

void AfBspTransport::set(int opt, const void *v, socklen_t len, const char *what) {
    if (setsockopt(fd_, SOL_BSP, opt, v, len) != 0) {
        throw std::runtime_error(std::string("AF_BSP setsockopt ") + what + ": " +
                                 errno_text(errno));
    }
}

bool AfBspTransport::try_send(const Pending &p) {
    iovec iov{const_cast<std::byte *>(p.bytes.data()), p.bytes.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(__u32))] = {};
    msghdr mh{};
    sockaddr_bsp to = peers_[static_cast<std::size_t>(p.dst)];
    mh.msg_name = &to;
    mh.msg_namelen = sizeof to;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (p.flags) {
        mh.msg_control = control;
        mh.msg_controllen = sizeof control;
        cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_BSP;
        c->cmsg_type = BSP_CMSG_SEND;
        c->cmsg_len = CMSG_LEN(sizeof(__u32));
        const __u32 f = p.flags;
        std::memcpy(CMSG_DATA(c), &f, sizeof f);
    }
    if (sendmsg(fd_, &mh, MSG_DONTWAIT) >= 0) {
        return true;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
        return false;
    }
    throw std::runtime_error("AF_BSP send to process " + std::to_string(p.dst) + ": " +
                             errno_text(errno));
}

void AfBspTransport::send(int dst, std::vector<std::byte> message, unsigned flags) {
    std::uint32_t f = 0;
    if (flags & kSync) {
        f |= BSP_SEND_SYNC;
    }
    if (flags & kLast) {
        f |= BSP_SEND_LAST;
    }
    out_.push_back({dst, std::move(message), f});
    while (!out_.empty() && try_send(out_.front())) {
        out_.pop_front();
    }
}

// A message of this (unconnected) socket failed: the kernel reports it on the error queue
// (POLLERR), never as the socket's error. Throws with the destination if a report is there.
void AfBspTransport::check_send_failure() {
    sockaddr_bsp to{};
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(sock_extended_err))];
    msghdr mh{};
    mh.msg_name = &to;
    mh.msg_namelen = sizeof to;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    if (recvmsg(fd_, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
        return;
    }
    int err = EIO;
    for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_BSP && c->cmsg_type == BSP_CMSG_ERR) {
            sock_extended_err ee;
            std::memcpy(&ee, CMSG_DATA(c), sizeof ee);
            err = static_cast<int>(ee.ee_errno);
        }
    }
    auto it = pid_of_.find(key(to.sbsp_node, to.sbsp_port));
    const std::string who = it == pid_of_.end() ? "node " + std::to_string(to.sbsp_node)
                                                : "process " + std::to_string(it->second);
    throw std::runtime_error("AF_BSP send to " + who + ": " + errno_text(err));
}

bool AfBspTransport::drain_incoming() {
    for (;;) {
        sockaddr_bsp from{};
        iovec iov{rxbuf_.data(), rxbuf_.size()};
        msghdr mh{};
        mh.msg_name = &from;
        mh.msg_namelen = sizeof from;
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        const ssize_t n = recvmsg(fd_, &mh, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                check_send_failure();
                return true;
            }
            if (errno == EINTR) {
                return true;
            }
            throw std::runtime_error("AF_BSP receive: " + errno_text(errno));
        }
        if (mh.msg_flags & MSG_TRUNC) {
            throw std::runtime_error("AF_BSP receive: message larger than BSP_MSG_MAX");
        }
        auto it = pid_of_.find(key(from.sbsp_node, from.sbsp_port));
        if (it == pid_of_.end()) {
            continue;  // not a member of this job
        }
        Received r;
        r.src = it->second;
        r.bytes.assign(rxbuf_.begin(), rxbuf_.begin() + n);
        ready_.push_back(std::move(r));
    }
}

std::optional<Received> AfBspTransport::receive() {
    bool woken = false;
    return receive_or_wake(-1, &woken);
}

std::optional<Received> AfBspTransport::receive_or_wake(int wake_fd, bool *woken) {
    *woken = false;
    for (;;) {
        while (!out_.empty() && try_send(out_.front())) {
            out_.pop_front();
        }
        if (!ready_.empty()) {
            Received r = std::move(ready_.front());
            ready_.pop_front();
            return r;
        }
        if (*woken) {
            return std::nullopt;
        }
        // The control descriptor (if any), then the wake descriptor (if any).
        pollfd fds[3] = {{fd_, static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT)), 0},
                         {control_fd_, POLLIN, 0},
                         {wake_fd, POLLIN, 0}};
        nfds_t nfds = 1;
        const nfds_t control = control_fd_ >= 0 ? nfds++ : 0;
        if (wake_fd >= 0) {
            fds[nfds++] = {wake_fd, POLLIN, 0};
        }
        if (poll(fds, nfds, -1) < 0 && errno != EINTR) {
            throw std::runtime_error("poll: " + errno_text(errno));
        }
        if (control && (fds[control].revents & (POLLIN | POLLHUP | POLLERR))) {
            return std::nullopt;
        }
        if (wake_fd >= 0 && (fds[nfds - 1].revents & (POLLIN | POLLHUP | POLLERR))) {
            *woken = true;
        }
        if (fds[0].revents & (POLLIN | POLLERR)) {
            drain_incoming();
        }
    }
}

void AfBspTransport::flush_sends() {
    while (!out_.empty()) {
        while (!out_.empty() && try_send(out_.front())) {
            out_.pop_front();
        }
        if (out_.empty()) {
            break;
        }
        pollfd p{fd_, POLLIN | POLLOUT, 0};
        if (poll(&p, 1, -1) < 0 && errno != EINTR) {
            throw std::runtime_error("poll: " + errno_text(errno));
        }
        if (p.revents & (POLLIN | POLLERR)) {
            drain_incoming();  // keep reading so that peers blocked on us progress
        }
    }
}

void AfBspTransport::barrier_completed(std::uint64_t epoch) {
    // The socket's epoch starts at 0 and must grow: superstep s is epoch s + 1.
    const __u32 e = static_cast<__u32>(epoch + 1);
    set(BSP_BARRIER_DONE, &e, sizeof e, "BSP_BARRIER_DONE");
}

void AfBspTransport::streams_follow_counts(bool follow) {
    const int v = follow ? 1 : 0;
    set(BSP_FOLLOW, &v, sizeof v, "BSP_FOLLOW");
}

void AfBspTransport::set_pacing_rate(std::uint64_t bytes_per_second) {
    const __u64 r = bytes_per_second;
    set(BSP_PACING_RATE, &r, sizeof r, "BSP_PACING_RATE");
}

void AfBspTransport::expect_from(int src, std::uint32_t messages, std::uint64_t bytes) {
    bsp_expect e{};
    e.peer.node = peers_[static_cast<std::size_t>(src)].sbsp_node;
    e.peer.port = peers_[static_cast<std::size_t>(src)].sbsp_port;
    e.messages = messages;
    e.bytes = bytes;
    set(BSP_EXPECT, &e, sizeof e, "BSP_EXPECT");
}

void AfBspTransport::expect_barrier_message(int src) {
    bsp_expect e{};
    e.peer.node = peers_[static_cast<std::size_t>(src)].sbsp_node;
    e.peer.port = peers_[static_cast<std::size_t>(src)].sbsp_port;
    e.messages = 1;
    e.flags = BSP_EXPECT_SYNC;
    set(BSP_EXPECT, &e, sizeof e, "BSP_EXPECT");
}

void AfBspTransport::shutdown() {
    if (fd_ >= 0) {
        // BSP_STATS: one line of the socket's protocol counters on stderr before it closes.
        bsp_proto_stats st{};
        socklen_t len = sizeof st;
        if (std::getenv("BSP_STATS") && getsockopt(fd_, SOL_BSP, BSP_PROTO_STATS, &st, &len) == 0) {
            // The socket's drops[] are the engine's, in its order (kernel/transport.c).
            static_assert(static_cast<int>(BSPE_DROP_MAX) == __BSP_PROTO_DROP_MAX);
            const std::string drops = format_drops(st.drops);
            std::fprintf(stderr,
                         "bsp: afbsp stats of process %d: data_tx %llu data_rx %llu retx_hole %llu "
                         "retx_prod %llu retx_timeout %llu dup_rx %llu acks_tx %llu prods_tx %llu "
                         "timeouts %llu acked_implicit %llu%s\n",
                         pid_, (unsigned long long)st.data_tx, (unsigned long long)st.data_rx,
                         (unsigned long long)st.retx_hole, (unsigned long long)st.retx_prod,
                         (unsigned long long)st.retx_timeout, (unsigned long long)st.dup_rx,
                         (unsigned long long)st.acks_tx, (unsigned long long)st.prods_tx,
                         (unsigned long long)st.timeouts, (unsigned long long)st.acked_implicit,
                         drops.c_str());
        }
        close(fd_);
        fd_ = -1;
    }
}

}  // namespace

std::unique_ptr<Transport> open_afbsp_transport(AfBspEndpoint endpoint, launch::Session &session,
                                                const std::vector<std::vector<std::byte>> &blobs) {
    return std::make_unique<AfBspTransport>(std::move(endpoint), session, blobs);
}

}  // namespace bsp::rt
