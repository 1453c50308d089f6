#include "udp_transport.hpp"

#include <arpa/inet.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
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
#include "engine_stats.hpp"
#include "misuse.hpp"
#include "runtime_config.hpp"
#include "udp_rails.hpp"

namespace bsp::rt {

namespace {

constexpr std::uint16_t kPort = 1;                // engine port of the one endpoint of each process
constexpr std::uint32_t kBlobMagic = 0x55445042;  // "BPDU"
constexpr std::size_t kMaxDatagram = 65536;
// recvmmsg: datagrams read per system call (each up to kMaxDatagram: with UDP_GRO one
// holds several packets of a peer).
constexpr std::size_t kRxBatch = 16;
// UDP GSO: packets of one destination and size sent as one super-datagram (at most
// UDP_MAX_SEGMENTS, and 64 KiB in all).
constexpr std::size_t kGsoMaxSegments = 64;
constexpr std::size_t kGsoMaxBytes = 65507;
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

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
    std::optional<Received> receive_or_wake(int wake_fd, bool *woken) override;
    void barrier_completed(std::uint64_t epoch) override;
    void streams_follow_counts(bool follow) override;
    void set_pacing_rate(std::uint64_t bytes_per_second) override;
    void expect_from(int src, std::uint32_t messages, std::uint64_t bytes) override;
    void expect_barrier_message(int src) override;
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
    // bspe_expect on the channel to src: `total` messages of the class `flags` names.
    void expect(int src, std::uint32_t total, u32 flags);
    static std::uint64_t slot_key(int chan, u32 slot) {
        return (static_cast<std::uint64_t>(static_cast<unsigned>(chan)) << 32) | slot;
    }

    std::uint64_t now() const;
    void read_addresses(const std::vector<std::vector<std::byte>> &blobs);
    void submit_backlog();
    // Sends the packets the engine produced since the last call (sendmmsg, one
    // UDP_SEGMENT super-datagram per run of same-sized packets to one peer), then frees
    // the messages completed meanwhile. Called before every return to the caller and
    // before waiting.
    void flush_tx();
    void send_rail(std::size_t rail, std::size_t first, std::size_t end);
    // Reads what rail r holds (recvmmsg; each datagram split at its UDP_GRO segment size).
    void read_rail(std::size_t r);
    void gso_unavailable(const std::string &why);
    // One round: waits for a socket, the control descriptor, the wake descriptor or the
    // engine timer (at most max_wait_ms), then feeds the engine. Returns false when the
    // control descriptor is readable (job torn down).
    // With extra_fd >= 0, *woken is set when extra_fd is readable (then it returns at once).
    bool pump(int max_wait_ms, bool watch_control, int extra_fd = -1, bool *woken = nullptr);
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
    // Packets of the engine waiting for flush_tx(): a copy of the sealed header and the
    // payload in its message (kept alive by done_ until flush_tx()).
    struct TxPacket {
        alignas(8) u8 hdr[BSPE_HDR_LEN];
        const std::byte *payload;
        u32 len;
        u32 node;
        u8 rail;
    };
    std::vector<TxPacket> tx_;
    std::vector<std::unique_ptr<OutMsg>> done_;  // completed while packets may point in
    bool gso_ = true;                            // UDP_SEGMENT works here
    bool gro_ = true;                            // UDP_GRO works here
    std::string gso_note_;                       // why not, for description()
    std::vector<mmsghdr> mm_;
    std::vector<iovec> iov_;
    struct alignas(cmsghdr) TxControl {
        char b[CMSG_SPACE(sizeof(std::uint16_t))];
    };
    struct alignas(cmsghdr) RxControl {
        char b[CMSG_SPACE(sizeof(int))];
    };
    std::vector<TxControl> cm_;
    std::vector<mmsghdr> rx_mm_;
    std::vector<iovec> rx_iov_;
    std::vector<sockaddr_in> rx_from_;
    std::vector<RxControl> rx_cm_;
    // Datagrams dropped before the engine saw them: not from the address of the process
    // they name as sender (another user's process, a stale job, a truncated datagram).
    std::uint64_t drop_source_ = 0;
    // Batching (BSP_STATS): sendmmsg calls, UDP_SEGMENT super-datagrams sent, recvmmsg
    // calls that returned datagrams, datagrams received coalesced by UDP_GRO.
    std::uint64_t tx_calls_ = 0, tx_gso_ = 0, rx_calls_ = 0, rx_gro_ = 0;

    // Holds mu_ for a call of the messaging layer: the background thread leaves the
    // engine to the caller while one runs (see answer_while_away()).
    class Call {
      public:
        explicit Call(UdpTransport &t) : t_(t), lock_(t.mu_) { ++t_.in_call_; }
        ~Call() {
            --t_.in_call_;
            t_.last_return_ = t_.now();
        }
        Call(const Call &) = delete;
        Call &operator=(const Call &) = delete;

      private:
        UdpTransport &t_;
        std::unique_lock<std::mutex> lock_;
    };
    // The background thread: while the program computes (no call for kAwayMs), it drives
    // the engine, so that the peers' probes are answered and their packets acknowledged
    // (without it a process that computed for longer than unreach_ns made its peers fail
    // their messages to it); after serve_in_background() it serves for good.
    void answer_while_away();

    std::mutex mu_;  // the engine: the caller's thread and the background thread
    std::thread background_;
    std::condition_variable away_cv_;
    std::atomic<bool> stop_{false};
    bool serve_all_ = false;         // serve_in_background() was called
    unsigned in_call_ = 0;           // calls of the messaging layer running (under mu_)
    std::uint64_t last_return_ = 0;  // when the last one returned (now())
    int wake_fd_ = -1;
};

// A program away from the library this long has its engine driven by the background
// thread: well below the peers' first timeout (rto_min, 200 ms).
constexpr int kAwayMs = 50;

UdpTransport::UdpTransport(UdpEndpoint endpoint, launch::Session &session,
                           const std::vector<std::vector<std::byte>> &blobs)
    : pid_(session.pid()),
      nprocs_(session.nprocs()),
      control_fd_(session.control_fd()),
      rail_addrs_(std::move(endpoint.addrs)),
      rails_(std::move(endpoint.sockets)),
      t0_(std::chrono::steady_clock::now()),
      rxbuf_(kMaxDatagram * kRxBatch) {
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
    if (const char *v = std::getenv("BSP_UDP_UNREACH_MS")) {
        const auto ms = parse_integer(v, 100, 86400000);
        if (!ms) {
            throw std::runtime_error(std::string("BSP_UDP_UNREACH_MS=") + v +
                                     " is invalid (expected 100 to 86400000 milliseconds)");
        }
        cfg_.unreach_ns = static_cast<std::uint64_t>(*ms) * 1000000;
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
    // UDP GSO and GRO where the kernel has them (Linux 4.18 and 5.0).
    for (const auto &r : rails_) {
        const int zero = 0, one = 1;
        if (gso_ && setsockopt(r.fd(), SOL_UDP, UDP_SEGMENT, &zero, sizeof zero) != 0) {
            gso_unavailable("UDP_SEGMENT: " + errno_text(errno));
        }
        if (gro_ && setsockopt(r.fd(), SOL_UDP, UDP_GRO, &one, sizeof one) != 0) {
            gro_ = false;
            std::fprintf(stderr,
                         "bsp: process %d: UDP GRO unavailable (UDP_GRO: %s): one "
                         "datagram per packet received\n",
                         pid_, errno_text(errno).c_str());
        }
    }
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) {
        throw std::runtime_error("eventfd: " + errno_text(errno));
    }
    last_return_ = now();
    // The program's signals go to its own threads, never to ours: it blocks all of them
    // (the new thread inherits the mask, the caller's is restored).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    try {
        background_ = std::thread([this] { answer_while_away(); });
    } catch (...) {
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        throw;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
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
    if (!gso_) {
        s += ", no UDP GSO (" + gso_note_ + ")";
    }
    if (!gro_) {
        s += ", no UDP GRO";
    }
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
    TxPacket &p = t->tx_.emplace_back();
    std::memcpy(p.hdr, x->hdr, BSPE_HDR_LEN);
    p.payload = nullptr;
    p.len = 0;
    if (x->msg && x->len > 0) {
        p.payload = static_cast<OutMsg *>(x->msg)->bytes.data() + x->off;
        p.len = x->len;
    }
    p.node = x->node;
    p.rail = x->rail;
    // Every packet carries its MAC (Documentation/security.rst, "Authenticated packets").
    bspe_seal(t->ep_, p.hdr, p.payload, p.len);
}

void UdpTransport::gso_unavailable(const std::string &why) {
    if (!gso_) {
        return;
    }
    gso_ = false;
    gso_note_ = why;
    std::fprintf(stderr, "bsp: process %d: UDP GSO unavailable (%s): one datagram per packet\n",
                 pid_, why.c_str());
}

void UdpTransport::send_rail(std::size_t rail, std::size_t first, std::size_t end) {
    // Runs of packets of rail `rail` among tx_[first, end): one mmsghdr per run of
    // same-sized packets to one peer (the last of a run may be shorter), with UDP_SEGMENT.
    struct Run {
        std::size_t pk0, pk1;  // range in pk
        std::size_t seg;       // UDP_SEGMENT size, 0: a single packet
    };
    std::vector<std::size_t> pk;  // packet indices, run after run
    std::vector<Run> runs;
    std::size_t i = first;
    while (i < end) {
        if (tx_[i].rail != rail) {
            ++i;
            continue;
        }
        const std::size_t size = BSPE_HDR_LEN + tx_[i].len;
        const std::size_t pk0 = pk.size();
        std::size_t total = 0;
        std::size_t k = i;
        while (k < end) {
            const TxPacket &p = tx_[k];
            if (p.rail != rail) {
                ++k;
                continue;
            }
            const std::size_t sz = BSPE_HDR_LEN + p.len;
            const std::size_t count = pk.size() - pk0;
            if (count > 0 && (!gso_ || p.node != tx_[i].node || sz > size ||
                              count == kGsoMaxSegments || total + sz > kGsoMaxBytes)) {
                break;
            }
            pk.push_back(k);
            total += sz;
            ++k;
            if (sz < size) {
                break;  // a shorter packet ends the super-datagram
            }
        }
        runs.push_back({pk0, pk.size(), pk.size() - pk0 > 1 ? size : 0});
        i = k;
    }
    if (runs.empty()) {
        return;
    }
    iov_.clear();
    for (std::size_t k : pk) {
        TxPacket &p = tx_[k];
        iov_.push_back({p.hdr, BSPE_HDR_LEN});
        iov_.push_back({const_cast<std::byte *>(p.payload), p.len});
    }
    mm_.assign(runs.size(), mmsghdr{});
    cm_.resize(runs.size());
    std::vector<sockaddr_in> to(runs.size());
    for (std::size_t m = 0; m < runs.size(); ++m) {
        to[m] = peers_[tx_[pk[runs[m].pk0]].node].addr[rail];
        msghdr &h = mm_[m].msg_hdr;
        h.msg_name = &to[m];
        h.msg_namelen = sizeof to[m];
        h.msg_iov = iov_.data() + 2 * runs[m].pk0;
        h.msg_iovlen = 2 * (runs[m].pk1 - runs[m].pk0);
        if (runs[m].seg) {
            h.msg_control = cm_[m].b;
            h.msg_controllen = sizeof cm_[m].b;
            cmsghdr *c = CMSG_FIRSTHDR(&h);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
            const auto gs = static_cast<std::uint16_t>(runs[m].seg);
            std::memcpy(CMSG_DATA(c), &gs, sizeof gs);
        }
    }
    const int fd = rails_[rail].fd();
    std::size_t at = 0;
    while (at < mm_.size()) {
        const int n =
            sendmmsg(fd, mm_.data() + at, static_cast<unsigned>(mm_.size() - at), MSG_DONTWAIT);
        if (n > 0) {
            ++tx_calls_;
            for (std::size_t m = at; m < at + static_cast<std::size_t>(n); ++m) {
                tx_gso_ += runs[m].seg ? 1 : 0;
            }
            at += static_cast<std::size_t>(n);
            continue;
        }
        const int e = errno;
        if (e == EINTR) {
            continue;
        }
        if (runs[at].seg && (e == EIO || e == EINVAL || e == ENOPROTOOPT)) {
            // This path cannot segment (no checksum offload, a fragment larger than the
            // MTU): one datagram per packet from now on.
            gso_unavailable("sendmmsg with UDP_SEGMENT: " + errno_text(e));
            for (std::size_t q = runs[at].pk0; q < runs[at].pk1; ++q) {
                msghdr one{};
                one.msg_name = &to[at];
                one.msg_namelen = sizeof to[at];
                one.msg_iov = iov_.data() + 2 * q;
                one.msg_iovlen = 2;
                (void)sendmsg(fd, &one, MSG_DONTWAIT);
            }
            ++at;
            continue;
        }
        // A full socket buffer drops the packets: the engine recovers them like any loss.
        break;
    }
}

void UdpTransport::flush_tx() {
    if (!tx_.empty()) {
        for (std::size_t r = 0; r < rails_.size(); ++r) {
            send_rail(r, 0, tx_.size());
        }
        tx_.clear();
    }
    done_.clear();
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
    t->done_.push_back(std::move(it->second));  // packets queued in tx_ may point in it
    t->in_flight_.erase(it);
    t->backlog_pending_ = true;  // submitted after the engine call returns
}

void UdpTransport::cb_timer(void *ctx, u64 when) {
    auto *t = static_cast<UdpTransport *>(ctx);
    t->timer_at_ = when;
}

// Channel memory: at most cfg_.max_chans channels of bspe_chan_size() bytes each, and the
// rings they grow with what they hold in flight (freed when it settles).
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
    Call call(*this);
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
    flush_tx();
}

bool UdpTransport::pump(int max_wait_ms, bool watch_control, int extra_fd, bool *woken) {
    flush_tx();  // nothing the engine produced waits while we sleep
    std::vector<pollfd> fds;
    for (const auto &r : rails_) {
        fds.push_back({r.fd(), POLLIN, 0});
    }
    fds.push_back({wake_fd_, POLLIN, 0});
    const std::size_t extra = fds.size();
    if (extra_fd >= 0) {
        fds.push_back({extra_fd, POLLIN, 0});
    }
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
    if (extra_fd >= 0 && (fds[extra].revents & (POLLIN | POLLHUP | POLLERR))) {
        *woken = true;
    }
    if (fds[rails_.size()].revents & POLLIN) {
        std::uint64_t v;
        (void)!read(wake_fd_, &v, sizeof v);
    }
    for (std::size_t r = 0; r < rails_.size(); ++r) {
        if (!(fds[r].revents & POLLIN)) {
            continue;
        }
        read_rail(r);
    }
    if (timer_at_ != 0 && now() >= timer_at_) {
        timer_at_ = 0;
        bspe_timer(ep_, now());
    }
    if (backlog_pending_) {
        submit_backlog();
    }
    flush_tx();
    return true;
}

void UdpTransport::read_rail(std::size_t r) {
    rx_mm_.assign(kRxBatch, mmsghdr{});
    rx_iov_.resize(kRxBatch);
    rx_from_.resize(kRxBatch);
    rx_cm_.resize(kRxBatch);
    // At most 16 rounds: the other rails, the timer and the reader get their turn.
    for (int round = 0; round < 16; ++round) {
        for (std::size_t i = 0; i < kRxBatch; ++i) {
            rx_iov_[i] = {rxbuf_.data() + i * kMaxDatagram, kMaxDatagram};
            msghdr &h = rx_mm_[i].msg_hdr;
            h = {};
            h.msg_name = &rx_from_[i];
            h.msg_namelen = sizeof rx_from_[i];
            h.msg_iov = &rx_iov_[i];
            h.msg_iovlen = 1;
            h.msg_control = rx_cm_[i].b;
            h.msg_controllen = sizeof rx_cm_[i].b;
        }
        const int n = recvmmsg(rails_[r].fd(), rx_mm_.data(), kRxBatch, MSG_DONTWAIT, nullptr);
        if (n <= 0) {
            return;
        }
        ++rx_calls_;
        for (int i = 0; i < n; ++i) {
            const msghdr &h = rx_mm_[static_cast<std::size_t>(i)].msg_hdr;
            const std::size_t len = rx_mm_[static_cast<std::size_t>(i)].msg_len;
            const std::byte *buf = rxbuf_.data() + static_cast<std::size_t>(i) * kMaxDatagram;
            // With UDP_GRO, consecutive datagrams of one sender arrive as one buffer of
            // segments of the size the control message gives (the last may be shorter).
            std::size_t seg = len;
            for (cmsghdr *c = CMSG_FIRSTHDR(const_cast<msghdr *>(&h)); c;
                 c = CMSG_NXTHDR(const_cast<msghdr *>(&h), c)) {
                if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
                    int gs = 0;
                    std::memcpy(&gs, CMSG_DATA(c), sizeof gs);
                    if (gs > 0) {
                        seg = static_cast<std::size_t>(gs);
                    }
                }
            }
            if (h.msg_namelen != sizeof(sockaddr_in) || (h.msg_flags & MSG_TRUNC)) {
                ++drop_source_;
                continue;
            }
            rx_gro_ += seg < len ? 1 : 0;
            for (std::size_t off = 0; off < len || (len == 0 && off == 0); off += seg) {
                const std::size_t l = std::min(seg, len - off);
                if (!from_claimed_peer(r, rx_from_[static_cast<std::size_t>(i)], buf + off, l)) {
                    ++drop_source_;
                } else {
                    // Refused packets are counted by the engine; nothing to do here.
                    (void)bspe_rx(ep_, static_cast<u8>(r), buf + off, static_cast<u32>(l), now());
                }
                if (seg == 0) {
                    break;
                }
            }
        }
        if (static_cast<std::size_t>(n) < kRxBatch) {
            return;
        }
    }
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
    bool woken = false;
    return receive_or_wake(-1, &woken);
}

std::optional<Received> UdpTransport::receive_or_wake(int wake_fd, bool *woken) {
    Call call(*this);
    *woken = false;
    for (;;) {
        check_failed();
        if (!ready_.empty()) {
            Received r = std::move(ready_.front());
            ready_.pop_front();
            bspe_rx_consumed(ep_, static_cast<u32>(r.bytes.size()), now());
            if (backlog_pending_) {
                submit_backlog();
            }
            flush_tx();
            return r;
        }
        if (*woken) {
            return std::nullopt;
        }
        if (!pump(-1, true, wake_fd, woken)) {
            *woken = false;
            return std::nullopt;
        }
    }
}

void UdpTransport::flush_sends() {
    // Messages waiting for the engine's message window: drive the engine until the
    // acknowledgements let every one of them in (incoming ones are kept for receive()).
    Call call(*this);
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
    Call call(*this);
    bspe_superstep_done(ep_, static_cast<u32>(epoch), now());
    flush_tx();
}

void UdpTransport::streams_follow_counts(bool follow) {
    Call call(*this);
    bspe_set_follow(ep_, follow ? 1 : 0);
}

void UdpTransport::set_pacing_rate(std::uint64_t bytes_per_second) {
    Call call(*this);
    bspe_set_pacing(ep_, bytes_per_second, now());
    flush_tx();
}

void UdpTransport::expect_from(int src, std::uint32_t messages, std::uint64_t bytes) {
    (void)bytes;
    expect(src, messages, 0);
}

void UdpTransport::expect_barrier_message(int src) {
    expect(src, 1, BSPE_EXPECT_SYNC);
}

// The engine takes totals of the current epoch (bspe_expect): what it delivered to our
// queue and the messaging layer has not taken yet is not expected again.
void UdpTransport::expect(int src, std::uint32_t total, u32 flags) {
    Call call(*this);
    if (src < 0 || src >= nprocs_ || src == pid_) {
        return;
    }
    // Expecting nothing from a peer without a channel needs no channel.
    const int c = total ? chan_to(src) : bspe_chan_find(ep_, static_cast<u32>(src), kPort);
    if (c >= 0) {
        bspe_expect(ep_, c, total, flags, now());
        flush_tx();
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
    line += format_drops(st.drops);
    if (drop_source_) {
        line += " drop_source " + std::to_string(drop_source_);
    }
    line += " sendmmsg " + std::to_string(tx_calls_) + " tx_gso " + std::to_string(tx_gso_) +
            " recvmmsg " + std::to_string(rx_calls_) + " rx_gro " + std::to_string(rx_gro_);
    std::fprintf(stderr, "%s\n", line.c_str());
}

void UdpTransport::serve_in_background() {
    std::lock_guard lock(mu_);
    serve_all_ = true;
    away_cv_.notify_all();
}

void UdpTransport::answer_while_away() {
    std::unique_lock l(mu_);
    while (!stop_) {
        const bool away = in_call_ == 0 && now() - last_return_ >= kAwayMs * 1000000ull;
        if (!serve_all_ && !away) {
            away_cv_.wait_for(l, std::chrono::milliseconds(kAwayMs));
            continue;
        }
        try {
            pump(serve_all_ ? 100 : kAwayMs, false);
            if (in_call_ > 0) {
                // A call began while we polled, and what we took in (deliveries,
                // completions) may be what it waits for: wake its poll.
                const std::uint64_t one = 1;
                (void)!write(wake_fd_, &one, sizeof one);
            }
        } catch (const std::exception &e) {
            if (failed_.empty()) {
                failed_ = std::string("UDP transport: ") + e.what();
            }
            return;
        }
        if (serve_all_) {
            // Nobody reads any more: what still arrives is consumed and dropped.
            while (!ready_.empty()) {
                bspe_rx_consumed(ep_, static_cast<u32>(ready_.front().bytes.size()), now());
                ready_.pop_front();
            }
        }
    }
}

void UdpTransport::shutdown() {
    if (background_.joinable()) {
        {
            std::lock_guard lock(mu_);
            stop_ = true;
            away_cv_.notify_all();
        }
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
        flush_tx();
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
