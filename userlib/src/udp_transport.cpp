#include "udp_transport.hpp"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bspe.h"
#include "codec.hpp"
#include "misuse.hpp"
#include "runtime_config.hpp"
#include "udp_rails.hpp"

namespace bsp::rt {

namespace {

constexpr std::uint16_t kPort = 1;                // engine port of the one endpoint of each process
constexpr std::uint32_t kBlobMagic = 0x55445042;  // "BPDU"
constexpr std::size_t kMaxDatagram = 65536;

// Incarnation of a new endpoint (Documentation/protocol.rst "Incarnations"): the real-time
// clock in milliseconds modulo 2^32, and strictly newer than the previous endpoint of this
// process, so that the late packets of an earlier endpoint on the same (pid, port) are
// refused by the peers.
u32 next_incarnation() {
    static std::atomic<u32> last{0};
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    const auto now = static_cast<u32>(ms);
    u32 old = last.load();
    u32 inc;
    do {
        inc = old + 1;
        if (old == 0 || static_cast<std::int32_t>(now - inc) > 0) {
            inc = now;
        }
        if (inc == 0) {
            inc = 1;
        }
    } while (!last.compare_exchange_weak(old, inc));
    return inc;
}

std::string errno_text(int e) {
    return std::strerror(e < 0 ? -e : e);
}

struct PeerRails {
    std::vector<sockaddr_in> addr;  // per rail
};

class UdpTransport final : public Transport {
  public:
    UdpTransport(UdpEndpoint endpoint, launch::Session &session,
                 const std::vector<std::vector<std::byte>> &blobs);
    ~UdpTransport() override;

    std::string name() const override { return "udp"; }
    std::string description() const override;
    std::size_t max_message_bytes() const override { return cfg_.max_msg; }
    void send(int dst, std::vector<std::byte> message, unsigned flags) override;
    std::optional<Received> receive() override;
    void barrier_completed(std::uint64_t epoch) override;
    void set_pacing_rate(std::uint64_t bytes_per_second) override;
    void expect_from(int src, std::uint32_t messages, std::uint64_t bytes) override;
    void flush_sends() override;
    void serve_in_background() override;
    void shutdown() override;

  private:
    struct OutMsg {
        std::vector<std::byte> bytes;
        int dst = 0;
        std::uint32_t flags = 0;
    };

    static void cb_xmit(void *ctx, const bspe_xmit *x);
    static int cb_rx_data(void *ctx, const bspe_rx_frag *f);
    static void cb_deliver(void *ctx, const bspe_delivery *d);
    static void cb_rx_abort(void *ctx, int chan, u32 slot);
    static void cb_complete(void *ctx, void *msg, int status);
    static void cb_timer(void *ctx, u64 when);
    static void *cb_chan_alloc(void *ctx, size_t size);
    static void cb_chan_free(void *ctx, void *mem, size_t size);
    static int cb_chan_new(void *ctx, u32 node, u16 port, void **cookie, u8 *rails);

    // The channel to process @p, opened on first use (channels are allocated lazily).
    int chan_to(int p);
    static std::uint64_t slot_key(int chan, u32 slot) {
        return (static_cast<std::uint64_t>(static_cast<unsigned>(chan)) << 32) | slot;
    }

    std::uint64_t now() const;
    void read_addresses(const std::vector<std::vector<std::byte>> &blobs);
    void submit_backlog();
    // One round: waits for a socket, the control descriptor, the wake descriptor or the
    // engine timer (at most max_wait_ms), then feeds the engine. Returns false when the
    // control descriptor is readable (job torn down).
    bool pump(int max_wait_ms, bool watch_control);
    void check_failed() const;
    // The rail r datagram `pkt` came from `from`: true when `from` is the address of
    // rail r of the process the datagram names as its sender (the peer table read from
    // the address exchange), so that only the job's processes reach the engine.
    bool from_claimed_peer(std::size_t r, const sockaddr_in &from, const std::byte *pkt,
                           std::size_t len) const;
    // BSP_STATS: one line of engine and transport counters on stderr when the transport
    // closes.
    void print_stats() const;

    int pid_;
    int nprocs_;
    int control_fd_;
    bool auth_ = true;  // packets carry and need a MAC (BSPE_CFG_AUTH)
    std::vector<RailAddress> rail_addrs_;
    std::vector<RailSocket> rails_;
    std::vector<PeerRails> peers_;
    bspe_cfg cfg_{};
    std::unique_ptr<std::uint64_t[]> mem_;
    bspe_ep *ep_ = nullptr;
    // Messages being reassembled, by slot_key(channel, slot): only those in progress.
    std::unordered_map<std::uint64_t, std::vector<std::byte>> rx_slots_;
    std::deque<Received> ready_;
    std::unordered_map<OutMsg *, std::unique_ptr<OutMsg>> in_flight_;
    std::vector<std::deque<std::unique_ptr<OutMsg>>> backlog_;  // per pid
    bool backlog_pending_ = false;
    std::string failed_;
    std::uint64_t timer_at_ = 0;  // 0: not armed
    std::chrono::steady_clock::time_point t0_;
    std::vector<std::byte> rxbuf_;
    // Datagrams dropped before the engine saw them: not from the address of the process
    // they name as sender (another user's process, a stale job, a truncated datagram).
    std::uint64_t drop_source_ = 0;

    std::mutex mu_;  // the engine, while the background thread runs
    std::thread background_;
    std::atomic<bool> stop_{false};
    int wake_fd_ = -1;
};

UdpTransport::UdpTransport(UdpEndpoint endpoint, launch::Session &session,
                           const std::vector<std::vector<std::byte>> &blobs)
    : pid_(session.pid()),
      nprocs_(session.nprocs()),
      control_fd_(session.control_fd()),
      rail_addrs_(std::move(endpoint.addrs)),
      rails_(std::move(endpoint.sockets)),
      t0_(std::chrono::steady_clock::now()),
      rxbuf_(kMaxDatagram) {
    if (nprocs_ > 65535) {
        throw std::runtime_error("the UDP transport supports at most 65535 processes");
    }
    auth_ = endpoint.auth;
    read_addresses(blobs);

    bspe_cfg_default(&cfg_);
    cfg_.node = static_cast<u32>(pid_);
    cfg_.port = kPort;
    cfg_.nrails = static_cast<u8>(rails_.size());
    // A ceiling: a channel is allocated when this process first sends to a peer or first
    // receives a valid packet from one (BSPE_CFG_AUTO_OPEN, cb_chan_new checks the sender).
    cfg_.max_chans = static_cast<u16>(nprocs_);
    cfg_.flags |= BSPE_CFG_AUTO_OPEN;
    cfg_.nprocs = static_cast<u32>(nprocs_);
    {
        std::random_device rd;  // the channel hash key: unpredictable to other hosts
        for (auto &k : cfg_.hash_key) {
            k = (static_cast<std::uint64_t>(rd()) << 32) | rd();
        }
    }
    bool all_loopback = true;
    for (const auto &r : rail_addrs_) {
        all_loopback = all_loopback && r.loopback;
    }
    // Loopback carries 64 KiB datagrams: bigger fragments, far fewer system calls.
    // Otherwise a packet must fit one Ethernet frame of 1500 bytes with its IPv4 and UDP
    // headers (28 bytes): a larger one is cut into IP fragments, and losing either piece
    // loses the packet (BSP_UDP_FRAG raises it for jumbo frames).
    cfg_.frag_size = static_cast<u16>(all_loopback ? 16384 : 1500 - 28 - BSPE_HDR_LEN);
    if (const char *v = std::getenv("BSP_UDP_FRAG")) {
        const auto f =
            parse_integer(v, 64, static_cast<long long>(kMaxDatagram) - 28 - BSPE_HDR_LEN);
        if (!f) {
            throw std::runtime_error(std::string("BSP_UDP_FRAG=") + v +
                                     " is invalid (expected 64 to " +
                                     std::to_string(kMaxDatagram - 28 - BSPE_HDR_LEN) + " bytes)");
        }
        cfg_.frag_size = static_cast<u16>(*f);
    }
    cfg_.incarnation = next_incarnation();
    cfg_.max_msg = 256 << 10;
    cfg_.rcvbuf = 32 << 20;
    cfg_.sndbuf_pkts = 4096;
    if (auth_) {
        // The packet MAC's key, derived from the job secret (Documentation/security.rst,
        // "Authenticated packets"); neither ever goes on the wire.
        const std::string_view secret = session.job_secret();
        if (secret.size() < 16) {
            throw std::runtime_error(
                "the job secret is shorter than 16 bytes: it cannot key "
                "the UDP transport's packet MAC");
        }
        cfg_.flags |= BSPE_CFG_AUTH;
        bspe_key_derive(secret.data(), static_cast<u32>(secret.size()), cfg_.key);
    }
    if (bspe_cfg_check(&cfg_) != 0) {
        throw std::runtime_error("protocol engine refused the UDP transport configuration");
    }
    const std::size_t size = bspe_mem_size(&cfg_);
    mem_ = std::make_unique<std::uint64_t[]>((size + 7) / 8);
    static const bspe_ops ops = {cb_xmit,      cb_rx_data,  cb_deliver, cb_rx_abort,
                                 cb_complete,  cb_timer,    nullptr,    cb_chan_alloc,
                                 cb_chan_free, cb_chan_new, nullptr};
    ep_ = bspe_init(mem_.get(), (size + 7) / 8 * 8, &cfg_, &ops, this);
    if (!ep_) {
        throw std::runtime_error("protocol engine initialisation failed");
    }
    backlog_.resize(static_cast<std::size_t>(nprocs_));
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) {
        throw std::runtime_error("eventfd: " + errno_text(errno));
    }
}

UdpTransport::~UdpTransport() {
    shutdown();
    if (wake_fd_ >= 0) {
        close(wake_fd_);
    }
}

}  // namespace

std::vector<std::byte> UdpEndpoint::blob() const {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::vector<std::byte> blob;
    Writer w(blob);
    w.put<std::uint32_t>(kBlobMagic);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(sockets.size()));
    for (std::size_t r = 0; r < sockets.size(); ++r) {
        w.put<std::uint32_t>(ntohl(addrs[r].addr.s_addr));
        w.put<std::uint16_t>(sockets[r].port());
    }
    const std::string h(host);
    w.put<std::uint16_t>(static_cast<std::uint16_t>(h.size()));
    w.bytes(std::as_bytes(std::span(h.data(), h.size())));
    w.put<std::uint8_t>(auth ? 1 : 0);
    return blob;
}

UdpEndpoint::UdpEndpoint() : addrs(rails_from_environment()) {
    if (const char *v = std::getenv("BSP_UDP_AUTH")) {
        const std::string a(v);
        if (a != "0" && a != "1") {
            throw std::runtime_error("BSP_UDP_AUTH=" + a +
                                     " is invalid (expected 1, or 0 to "
                                     "send and accept packets without a MAC: insecure)");
        }
        auth = a == "1";
    }
    for (const auto &r : addrs) {
        sockets.emplace_back(r);
    }
}

namespace {

void UdpTransport::read_addresses(const std::vector<std::vector<std::byte>> &all) {
    if (all.size() != static_cast<std::size_t>(nprocs_)) {
        throw std::runtime_error("address exchange returned the wrong number of blobs");
    }
    std::string host0;
    bool several_hosts = false;
    bool loopback = false;
    for (const auto &r : rail_addrs_) {
        loopback = loopback || r.loopback;
    }
    peers_.resize(all.size());
    for (std::size_t p = 0; p < all.size(); ++p) {
        Reader rd(all[p]);
        if (rd.get<std::uint32_t>() != kBlobMagic) {
            throw std::runtime_error("process " + std::to_string(p) +
                                     " does not use the UDP transport (set BSP_TRANSPORT the "
                                     "same way for every process)");
        }
        const auto n = rd.get<std::uint32_t>();
        if (n != rails_.size()) {
            throw std::runtime_error("process " + std::to_string(p) + " has " + std::to_string(n) +
                                     " UDP rails, process " + std::to_string(pid_) + " has " +
                                     std::to_string(rails_.size()) +
                                     " (BSP_UDP_RAILS must name as many rails everywhere)");
        }
        for (std::uint32_t r = 0; r < n; ++r) {
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(rd.get<std::uint32_t>());
            a.sin_port = htons(rd.get<std::uint16_t>());
            peers_[p].addr.push_back(a);
        }
        const auto hl = rd.get<std::uint16_t>();
        auto hb = rd.bytes(hl);
        std::string hp(reinterpret_cast<const char *>(hb.data()), hb.size());
        if ((rd.get<std::uint8_t>() != 0) != auth_) {
            throw std::runtime_error(
                "BSP_UDP_AUTH differs between the processes: process " + std::to_string(p) +
                (auth_ ? " sends packets without a MAC (BSP_UDP_AUTH=0), process "
                       : " authenticates its packets, process ") +
                std::to_string(pid_) + (auth_ ? " authenticates its packets" : " does not") +
                " (set it the same way for every process)");
        }
        if (p == 0) {
            host0 = hp;
        } else if (hp != host0) {
            several_hosts = true;
        }
    }
    if (several_hosts && loopback) {
        throw std::runtime_error(
            "the processes run on several hosts but the UDP rails are loopback addresses: "
            "set BSP_UDP_RAILS to the interfaces or addresses of the rails");
    }
}

std::string UdpTransport::description() const {
    std::string s = "protocol engine over " + std::to_string(rails_.size()) + " UDP rail";
    s += rails_.size() == 1 ? "" : "s";
    s += " [";
    for (std::size_t r = 0; r < rail_addrs_.size(); ++r) {
        if (r) {
            s += ",";
        }
        s += rail_addrs_[r].spec;
    }
    s += "], fragment " + std::to_string(cfg_.frag_size) + " bytes";
    s += auth_ ? ", packets authenticated" : ", packets NOT authenticated (BSP_UDP_AUTH=0)";
    return s;
}

std::uint64_t UdpTransport::now() const {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now() - t0_)
                                          .count()) +
           1;
}

void UdpTransport::cb_xmit(void *ctx, const bspe_xmit *x) {
    auto *t = static_cast<UdpTransport *>(ctx);
    if (x->rail >= t->rails_.size() || x->node >= t->peers_.size()) {
        return;
    }
    iovec iov[2];
    alignas(8) u8 hdr[BSPE_HDR_LEN];
    std::memcpy(hdr, x->hdr, BSPE_HDR_LEN);
    iov[0].iov_base = hdr;
    iov[0].iov_len = BSPE_HDR_LEN;
    int n = 1;
    const std::byte *payload = nullptr;
    if (x->msg && x->len > 0) {
        auto *m = static_cast<OutMsg *>(x->msg);
        payload = m->bytes.data() + x->off;
        iov[1].iov_base = const_cast<std::byte *>(payload);
        iov[1].iov_len = x->len;
        n = 2;
    }
    bspe_seal(t->ep_, hdr, payload, payload ? x->len : 0);
    msghdr mh{};
    sockaddr_in to = t->peers_[x->node].addr[x->rail];
    mh.msg_name = &to;
    mh.msg_namelen = sizeof to;
    mh.msg_iov = iov;
    mh.msg_iovlen = static_cast<std::size_t>(n);
    // A full socket buffer drops the packet: the engine recovers it like any loss.
    (void)sendmsg(t->rails_[x->rail].fd(), &mh, MSG_DONTWAIT);
}

int UdpTransport::cb_rx_data(void *ctx, const bspe_rx_frag *f) {
    auto *t = static_cast<UdpTransport *>(ctx);
    if (f->chan < 0 || f->slot >= t->cfg_.msg_wnd) {
        return -EINVAL;
    }
    auto &buf = t->rx_slots_[slot_key(f->chan, f->slot)];
    if (f->first) {
        buf.assign(f->msg_len, std::byte{0});
    }
    if (buf.size() != f->msg_len || static_cast<std::uint64_t>(f->off) + f->len > buf.size()) {
        return -EINVAL;
    }
    if (f->len > 0) {
        std::memcpy(buf.data() + f->off, f->data, f->len);
    }
    return 0;
}

void UdpTransport::cb_deliver(void *ctx, const bspe_delivery *d) {
    auto *t = static_cast<UdpTransport *>(ctx);
    Received r;
    r.src = static_cast<int>(d->node);  // node numbers are process ids (cb_chan_new)
    auto it = t->rx_slots_.find(slot_key(d->chan, d->slot));
    if (it != t->rx_slots_.end()) {
        r.bytes = std::move(it->second);
        t->rx_slots_.erase(it);
    }
    r.bytes.resize(d->msg_len);  // a zero-length message had no fragment to size it
    t->ready_.push_back(std::move(r));
}

void UdpTransport::cb_rx_abort(void *ctx, int chan, u32 slot) {
    auto *t = static_cast<UdpTransport *>(ctx);
    t->rx_slots_.erase(slot_key(chan, slot));
}

void UdpTransport::cb_complete(void *ctx, void *msg, int status) {
    auto *t = static_cast<UdpTransport *>(ctx);
    auto it = t->in_flight_.find(static_cast<OutMsg *>(msg));
    if (it == t->in_flight_.end()) {
        return;
    }
    if (status < 0 && t->failed_.empty()) {
        t->failed_ = "UDP transport: a message to process " + std::to_string(it->second->dst) +
                     " could not be delivered (" + errno_text(status) + ")";
    }
    t->in_flight_.erase(it);
    t->backlog_pending_ = true;  // submitted after the engine call returns
}

void UdpTransport::cb_timer(void *ctx, u64 when) {
    auto *t = static_cast<UdpTransport *>(ctx);
    t->timer_at_ = when;
}

// Channel memory: bounded by cfg_.max_chans channels of bspe_chan_size() bytes each.
void *UdpTransport::cb_chan_alloc(void *, size_t size) {
    return std::calloc(1, size);  // aligned for any type, so to 8
}

void UdpTransport::cb_chan_free(void *, void *mem, size_t) {
    std::free(mem);
}

// A valid packet from a sender without a channel: only the job's other processes get one.
int UdpTransport::cb_chan_new(void *ctx, u32 node, u16 port, void **, u8 *) {
    auto *t = static_cast<UdpTransport *>(ctx);
    if (port != kPort || node >= static_cast<u32>(t->nprocs_) ||
        node == static_cast<u32>(t->pid_)) {
        return -EPERM;
    }
    return BSPE_CHAN_GROUP;
}

int UdpTransport::chan_to(int p) {
    int c = bspe_chan_find(ep_, static_cast<u32>(p), kPort);
    if (c >= 0) {
        return c;
    }
    c = bspe_chan_open(ep_, static_cast<u32>(p), kPort, BSPE_CHAN_GROUP, nullptr);
    if (c < 0) {
        throw std::runtime_error("protocol engine: cannot open a channel to process " +
                                 std::to_string(p) + ": " + errno_text(c));
    }
    return c;
}

void UdpTransport::check_failed() const {
    if (!failed_.empty()) {
        throw std::runtime_error(failed_);
    }
}

void UdpTransport::submit_backlog() {
    backlog_pending_ = false;
    for (int p = 0; p < nprocs_; ++p) {
        auto &q = backlog_[static_cast<std::size_t>(p)];
        while (!q.empty()) {
            OutMsg *m = q.front().get();
            const int rc =
                bspe_send(ep_, chan_to(p), m, static_cast<u32>(m->bytes.size()), m->flags, now());
            if (rc == -EAGAIN) {
                break;
            }
            if (rc != 0) {
                throw std::runtime_error("UDP transport: cannot send to process " +
                                         std::to_string(p) + ": " + errno_text(rc));
            }
            in_flight_.emplace(m, std::move(q.front()));
            q.pop_front();
        }
    }
}

void UdpTransport::send(int dst, std::vector<std::byte> message, unsigned flags) {
    std::lock_guard lock(mu_);
    check_failed();
    if (dst < 0 || dst >= nprocs_ || dst == pid_) {
        throw std::logic_error("UDP transport: bad destination");
    }
    auto m = std::make_unique<OutMsg>();
    m->bytes = std::move(message);
    m->dst = dst;
    m->flags = ((flags & kSync) ? BSPE_SEND_SYNC : 0) | ((flags & kLast) ? BSPE_SEND_LAST : 0);
    backlog_[static_cast<std::size_t>(dst)].push_back(std::move(m));
    submit_backlog();
}

bool UdpTransport::pump(int max_wait_ms, bool watch_control) {
    std::vector<pollfd> fds;
    for (const auto &r : rails_) {
        fds.push_back({r.fd(), POLLIN, 0});
    }
    fds.push_back({wake_fd_, POLLIN, 0});
    if (watch_control && control_fd_ >= 0) {
        fds.push_back({control_fd_, POLLIN, 0});
    }
    int timeout = max_wait_ms;
    if (timer_at_ != 0) {
        const std::uint64_t t = now();
        const std::uint64_t wait_ms = timer_at_ <= t ? 0 : (timer_at_ - t + 999999) / 1000000;
        if (timeout < 0 || wait_ms < static_cast<std::uint64_t>(timeout)) {
            timeout = static_cast<int>(wait_ms);
        }
    }
    mu_.unlock();
    const int n = poll(fds.data(), fds.size(), timeout);
    mu_.lock();
    if (n < 0 && errno != EINTR) {
        throw std::runtime_error("poll: " + errno_text(errno));
    }
    if (watch_control && control_fd_ >= 0 && (fds.back().revents & (POLLIN | POLLHUP | POLLERR))) {
        return false;
    }
    if (fds[rails_.size()].revents & POLLIN) {
        std::uint64_t v;
        (void)!read(wake_fd_, &v, sizeof v);
    }
    for (std::size_t r = 0; r < rails_.size(); ++r) {
        if (!(fds[r].revents & POLLIN)) {
            continue;
        }
        for (int k = 0; k < 256; ++k) {
            sockaddr_in from{};
            socklen_t fromlen = sizeof from;
            const ssize_t len = recvfrom(rails_[r].fd(), rxbuf_.data(), rxbuf_.size(), MSG_DONTWAIT,
                                         reinterpret_cast<sockaddr *>(&from), &fromlen);
            if (len < 0) {
                break;
            }
            if (fromlen != sizeof from ||
                !from_claimed_peer(r, from, rxbuf_.data(), static_cast<std::size_t>(len))) {
                ++drop_source_;
                continue;
            }
            // Refused packets are counted by the engine; nothing to do here.
            (void)bspe_rx(ep_, static_cast<u8>(r), rxbuf_.data(), static_cast<u32>(len), now());
        }
    }
    if (timer_at_ != 0 && now() >= timer_at_) {
        timer_at_ = 0;
        bspe_timer(ep_, now());
    }
    if (backlog_pending_) {
        submit_backlog();
    }
    return true;
}

bool UdpTransport::from_claimed_peer(std::size_t r, const sockaddr_in &from, const std::byte *pkt,
                                     std::size_t len) const {
    // The claimed sender: src_node of the protocol header (big-endian u32).
    constexpr std::size_t kSrcNode = offsetof(bspe_hdr, src_node);
    std::uint32_t be;
    if (len < kSrcNode + sizeof be || from.sin_family != AF_INET) {
        return false;
    }
    std::memcpy(&be, pkt + kSrcNode, sizeof be);
    const std::uint32_t claimed = ntohl(be);
    if (claimed >= peers_.size() || claimed == static_cast<std::uint32_t>(pid_)) {
        return false;
    }
    const sockaddr_in &known = peers_[claimed].addr[r];
    return from.sin_addr.s_addr == known.sin_addr.s_addr && from.sin_port == known.sin_port;
}

std::optional<Received> UdpTransport::receive() {
    std::unique_lock lock(mu_);
    for (;;) {
        check_failed();
        if (!ready_.empty()) {
            Received r = std::move(ready_.front());
            ready_.pop_front();
            bspe_rx_consumed(ep_, static_cast<u32>(r.bytes.size()), now());
            if (backlog_pending_) {
                submit_backlog();
            }
            return r;
        }
        if (!pump(-1, true)) {
            return std::nullopt;
        }
    }
}

void UdpTransport::flush_sends() {
    // Messages waiting for the engine's message window: drive the engine until the
    // acknowledgements let every one of them in (incoming ones are kept for receive()).
    std::unique_lock lock(mu_);
    for (;;) {
        check_failed();
        bool empty = true;
        for (const auto &q : backlog_) {
            empty = empty && q.empty();
        }
        if (empty) {
            return;
        }
        if (!pump(-1, true)) {
            throw TornDown();
        }
    }
}

void UdpTransport::barrier_completed(std::uint64_t epoch) {
    std::lock_guard lock(mu_);
    bspe_superstep_done(ep_, static_cast<u32>(epoch), now());
}

void UdpTransport::set_pacing_rate(std::uint64_t bytes_per_second) {
    std::lock_guard lock(mu_);
    bspe_set_pacing(ep_, bytes_per_second, now());
}

void UdpTransport::expect_from(int src, std::uint32_t messages, std::uint64_t bytes) {
    (void)bytes;
    std::lock_guard lock(mu_);
    if (src < 0 || src >= nprocs_ || src == pid_) {
        return;
    }
    // Expecting nothing from a peer without a channel needs no channel.
    const int c = messages ? chan_to(src) : bspe_chan_find(ep_, static_cast<u32>(src), kPort);
    if (c >= 0) {
        bspe_expect(ep_, c, messages, now());
    }
}

void UdpTransport::print_stats() const {
    bspe_stats st{};
    bspe_stats_get(ep_, -1, -1, &st);
    std::string line =
        "bsp: udp stats of process " + std::to_string(pid_) + ": data_tx " +
        std::to_string(st.data_tx) + " data_rx " + std::to_string(st.data_rx) + " retx_hole " +
        std::to_string(st.retx_hole) + " retx_prod " + std::to_string(st.retx_prod) +
        " retx_timeout " + std::to_string(st.retx_timeout) + " acks_tx " +
        std::to_string(st.acks_tx) + " prods_tx " + std::to_string(st.prods_tx) + " timeouts " +
        std::to_string(st.timeouts) + " acked_implicit " + std::to_string(st.acked_implicit);
    for (int d = 0; d < BSPE_DROP_MAX; ++d) {
        if (st.drops[d]) {
            line += std::string(" drop_") + bspe_drop_name(static_cast<bspe_drop>(d)) + " " +
                    std::to_string(st.drops[d]);
        }
    }
    if (drop_source_) {
        line += " drop_source " + std::to_string(drop_source_);
    }
    std::fprintf(stderr, "%s\n", line.c_str());
}

void UdpTransport::serve_in_background() {
    std::lock_guard lock(mu_);
    if (background_.joinable() || !ep_) {
        return;
    }
    stop_ = false;
    background_ = std::thread([this] {
        std::unique_lock l(mu_);
        while (!stop_) {
            pump(100, false);
            // Nobody reads any more: what still arrives is consumed and dropped.
            while (!ready_.empty()) {
                bspe_rx_consumed(ep_, static_cast<u32>(ready_.front().bytes.size()), now());
                ready_.pop_front();
            }
        }
    });
}

void UdpTransport::shutdown() {
    if (background_.joinable()) {
        stop_ = true;
        const std::uint64_t one = 1;
        (void)!write(wake_fd_, &one, sizeof one);
        background_.join();
    }
    std::lock_guard lock(mu_);
    if (ep_ && (std::getenv("BSP_STATS") || std::getenv("BSP_UDP_STATS"))) {
        print_stats();
    }
    if (ep_) {
        bspe_close_notify(ep_, now());  // peers settle and forget this endpoint
        bspe_fini(ep_);
        ep_ = nullptr;
    }
    in_flight_.clear();
    rails_.clear();
}

}  // namespace

std::unique_ptr<Transport> open_udp_transport(UdpEndpoint endpoint, launch::Session &session,
                                              const std::vector<std::vector<std::byte>> &blobs) {
    return std::make_unique<UdpTransport>(std::move(endpoint), session, blobs);
}

}  // namespace bsp::rt
