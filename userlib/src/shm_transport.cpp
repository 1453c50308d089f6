#include "shm_transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec.hpp"
#include "misuse.hpp"
#include "runtime_config.hpp"
#include "shm_ring.hpp"

namespace bsp::rt {

namespace {

constexpr std::uint32_t kBlobMagic = 0x4d485342;         // "BSHM"
constexpr std::uint64_t kSegMagic = 0x31474553504d4853;  // "SHMPSEG1"
constexpr std::size_t kMaxMessage = 256 << 10;           // units when every peer is local
constexpr std::size_t kMinRing = 4096;
constexpr std::size_t kMaxRing = std::size_t{1} << 30;
// How long a receiver polls the rings, yielding the CPU between polls, before it sleeps on
// its doorbell: a peer that answers within this costs no system call on its side, and
// yielding lets a peer that shares our CPU (more processes than CPUs) run meanwhile.
constexpr auto kSpin = std::chrono::microseconds(200);
// The shared board (board_allgather): one slot per process and parity of the call, each a
// u32 length (or kBoardOverflow) and the blob.
constexpr std::size_t kBoardSlot = 65536;
constexpr std::size_t kBoardBlob = kBoardSlot - 8;
constexpr std::uint32_t kBoardOverflow = 0xffffffff;

std::string errno_text(int e) {
    return std::strerror(e);
}

// The start of a process's segment: what peers check after mapping it, and the doorbell.
struct alignas(shm::kLine) SegHeader {
    std::uint64_t magic;
    std::uint64_t nonce[2];
    std::uint64_t ring_bytes;
    std::uint32_t nrings;
    std::uint64_t direct_bytes;                               // per direct area (0: none)
    alignas(shm::kLine) std::atomic<std::uint32_t> sleeping;  // the owner waits on its bell
};
static_assert(sizeof(SegHeader) == 2 * shm::kLine);

// The board after the rings, in every segment when every process of the job is local (the
// one of process 0 is used): the count of arrivals, then 2 x nprocs slots.
struct alignas(shm::kLine) BoardHeader {
    std::atomic<std::uint64_t> arrived;  // only grows: call g is complete at (g + 1) nprocs
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

std::size_t board_bytes(std::size_t board_procs) {
    return board_procs == 0 ? 0 : sizeof(BoardHeader) + 2 * board_procs * kBoardSlot;
}

// The direct areas after the board (only with it): for each parity of the superstep, one
// per other process, in pid order.
std::size_t direct_areas_bytes(std::size_t board_procs, std::size_t direct) {
    return board_procs < 2 ? 0 : 2 * (board_procs - 1) * direct;
}

std::size_t segment_bytes(std::size_t nrings, std::size_t ring, std::size_t board_procs,
                          std::size_t direct) {
    return sizeof(SegHeader) + nrings * shm::Ring::footprint(ring) + board_bytes(board_procs) +
           direct_areas_bytes(board_procs, direct);
}

std::string read_first_line(const char *path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

std::string ns_inode(const char *path) {
    struct stat st {};
    if (stat(path, &st) != 0) {
        return "-";
    }
    return std::to_string(st.st_dev) + "." + std::to_string(st.st_ino);
}

// A mapping, unmapped by the destructor.
struct Mapping {
    void *addr = nullptr;
    std::size_t len = 0;
    Mapping() = default;
    Mapping(void *a, std::size_t l) : addr(a), len(l) {}
    Mapping(Mapping &&o) noexcept : addr(o.addr), len(o.len) { o.addr = nullptr; }
    Mapping &operator=(Mapping &&) = delete;
    Mapping(const Mapping &) = delete;
    ~Mapping() { reset(nullptr, 0); }
    void reset(void *a, std::size_t l) {
        if (addr) {
            munmap(addr, len);
        }
        addr = a;
        len = l;
    }
    SegHeader *seg() const { return static_cast<SegHeader *>(addr); }
    void *ring(std::size_t i, std::size_t ring_bytes) const {
        return static_cast<std::byte *>(addr) + sizeof(SegHeader) +
               i * shm::Ring::footprint(ring_bytes);
    }
};

class Fd {
  public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    Fd(Fd &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    Fd &operator=(Fd &&) = delete;
    Fd(const Fd &) = delete;
    ~Fd() { reset(-1); }
    void reset(int fd) {
        if (fd_ >= 0) {
            close(fd_);
        }
        fd_ = fd;
    }
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    int get() const { return fd_; }

  private:
    int fd_;
};

// What process p publishes in the allgather.
struct Published {
    std::uint32_t os_pid = 0;
    std::int32_t seg_fd = -1;
    std::uint64_t seg_dev = 0, seg_ino = 0;
    std::int32_t bell_fd = -1;
    std::uint64_t bell_dev = 0, bell_ino = 0;
    std::uint64_t nonce[2] = {0, 0};
    std::uint64_t ring_bytes = 0;
    std::uint32_t nrings = 0;
    std::uint64_t direct_bytes = 0;
};

class ShmTransport final : public Transport {
  public:
    ShmTransport(launch::Session &session, const std::vector<bool> &local,
                 std::unique_ptr<Transport> remote, const ShmSettings &settings);
    ~ShmTransport() override { shutdown(); }

    std::string name() const override { return remote_ ? "shm+" + remote_->name() : "shm"; }
    std::string description() const override;
    std::size_t max_message_bytes() const override {
        return remote_ ? remote_->max_message_bytes() : kMaxMessage;
    }
    void send(int dst, std::vector<std::byte> message, unsigned flags) override;
    std::optional<Received> receive() override;
    void flush_sends() override;
    void barrier_completed(std::uint64_t epoch) override {
        if (remote_) {
            remote_->barrier_completed(epoch);
        }
    }
    void streams_follow_counts(bool follow) override {
        if (remote_) {
            remote_->streams_follow_counts(follow);
        }
    }
    void set_pacing_rate(std::uint64_t bytes_per_second) override {
        if (remote_) {
            remote_->set_pacing_rate(bytes_per_second);
        }
    }
    void expect_from(int src, std::uint32_t messages, std::uint64_t bytes) override {
        if (remote_ && src >= 0 && src < nprocs_ && !local_[static_cast<std::size_t>(src)]) {
            remote_->expect_from(src, messages, bytes);
        }
    }
    void expect_barrier_message(int src) override {
        if (remote_ && src >= 0 && src < nprocs_ && !local_[static_cast<std::size_t>(src)]) {
            remote_->expect_barrier_message(src);
        }
    }
    void serve_in_background() override {
        if (remote_) {
            remote_->serve_in_background();
        }
    }
    void shutdown() override {
        if (remote_) {
            remote_->shutdown();
        }
    }
    std::size_t board_blob_bytes() const override { return board_ ? kBoardBlob : 0; }
    BoardGather board_allgather(std::span<const std::byte> mine) override;
    std::span<std::byte> direct_out(int dst, std::uint64_t superstep) override;
    std::span<const std::byte> direct_in(int src, std::uint64_t superstep) const override;

  private:
    struct Out {
        std::vector<std::byte> bytes;
        std::size_t off = 0;
    };
    struct Peer {
        bool local = false;
        Mapping map;          // its segment (the rings it receives on), local peers only
        shm::Ring to;         // our ring in its segment (we produce)
        shm::Ring from;       // its ring in our segment (we consume)
        Fd bell;              // its doorbell pipe, opened read-write
        std::deque<Out> out;  // messages not yet (wholly) in `to`
        std::vector<std::byte> partial;
        std::string name;            // "process <pid>", for errors
        std::size_t ring_bytes = 0;  // of its segment
        std::size_t direct_bytes = 0;
    };

    // Index of process `src`'s ring in process `owner`'s segment.
    std::size_t ring_index(int owner, int src) const;
    // Moves queued messages into rings and messages out of rings; true on any progress.
    bool progress();
    bool push_to(int dst);
    void notify(int dst);
    // The owner is going to sleep: true when there is nothing to do (else it disarms).
    bool arm();
    void disarm();
    // Sleeps until the doorbell rings, a remote message arrives (returned) or the job is
    // torn down (*torn_down).
    std::optional<Received> sleep(bool *torn_down);
    bool sends_pending() const;

    int pid_;
    int nprocs_;
    int control_fd_;
    std::vector<bool> local_;
    std::size_t nlocal_ = 0;
    std::unique_ptr<Transport> remote_;
    std::size_t ring_bytes_;
    std::size_t direct_bytes_;  // 0 without a board
    Fd seg_fd_;
    Mapping own_;
    // The doorbell. Keeping its write end open means the read end never reports end of
    // file (a busy poll) when every peer has gone.
    Fd bell_rd_, bell_wr_;
    std::vector<Peer> peers_;
    std::deque<Received> ready_;
    std::vector<std::vector<std::byte>> done_;  // scratch of progress()
    // The board (process 0's, when every process is local) and the number of calls made.
    std::byte *board_ = nullptr;
    std::uint64_t board_calls_ = 0;
    BoardHeader *board_header() const { return reinterpret_cast<BoardHeader *>(board_); }
    std::byte *board_slot(std::uint64_t parity, int pid) const {
        return board_ + sizeof(BoardHeader) +
               (parity * static_cast<std::size_t>(nprocs_) + static_cast<std::size_t>(pid)) *
                   kBoardSlot;
    }
    // Direct area `index` (the other process's rank among the owner's peers) of a parity
    // in a segment whose board starts at `board`.
    static std::byte *direct_area(std::byte *board, std::size_t nprocs, std::size_t direct,
                                  std::uint64_t parity, std::size_t index) {
        return board + board_bytes(nprocs) + (parity * (nprocs - 1) + index) * direct;
    }
};

std::size_t ShmTransport::ring_index(int owner, int src) const {
    std::size_t i = 0;
    for (int p = 0; p < src; ++p) {
        if (local_[static_cast<std::size_t>(p)] && p != owner) {
            ++i;
        }
    }
    return i;
}

ShmTransport::ShmTransport(launch::Session &session, const std::vector<bool> &local,
                           std::unique_ptr<Transport> remote, const ShmSettings &settings)
    : pid_(session.pid()),
      nprocs_(session.nprocs()),
      control_fd_(session.control_fd()),
      local_(local),
      remote_(std::move(remote)),
      ring_bytes_(settings.ring_bytes),
      direct_bytes_(remote_ ? 0 : settings.direct_bytes) {
    if (local_.size() != static_cast<std::size_t>(nprocs_) ||
        !local_[static_cast<std::size_t>(pid_)]) {
        throw std::logic_error("shared-memory transport: bad table of local processes");
    }
    for (bool l : local_) {
        nlocal_ += l ? 1 : 0;
    }
    if (nlocal_ < static_cast<std::size_t>(nprocs_) && !remote_) {
        throw std::logic_error("shared-memory transport: remote processes and no transport");
    }
    Published mine;
    const std::size_t nrings = nlocal_ - 1;
    // The board exists when every process is local.
    const std::size_t board_procs = remote_ ? 0 : static_cast<std::size_t>(nprocs_);
    if (nrings > 0) {
        // The segment: a memfd, never named in a file system, mode 0600, sealed to its size.
        const int fd = memfd_create("bsp-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0) {
            throw std::runtime_error("shared-memory transport: memfd_create: " + errno_text(errno));
        }
        seg_fd_.reset(fd);
        const std::size_t len = segment_bytes(nrings, ring_bytes_, board_procs, direct_bytes_);
        if (fchmod(fd, 0600) != 0 || ftruncate(fd, static_cast<off_t>(len)) != 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
            throw std::runtime_error("shared-memory transport: cannot size " + std::to_string(len) +
                                     " bytes: " + errno_text(errno));
        }
        void *a = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (a == MAP_FAILED) {
            throw std::runtime_error("shared-memory transport: mmap: " + errno_text(errno));
        }
        own_.reset(a, len);
        std::random_device rd;
        auto *h = new (a) SegHeader;
        h->magic = kSegMagic;
        for (auto &n : h->nonce) {
            n = (static_cast<std::uint64_t>(rd()) << 32) | rd();
        }
        h->ring_bytes = ring_bytes_;
        h->nrings = static_cast<std::uint32_t>(nrings);
        h->direct_bytes = direct_bytes_;
        h->sleeping.store(0, std::memory_order_relaxed);
        for (std::size_t i = 0; i < nrings; ++i) {
            shm::Ring::init(own_.ring(i, ring_bytes_));
        }
        if (board_procs > 0) {
            auto *b = new (own_.ring(nrings, ring_bytes_)) BoardHeader;
            b->arrived.store(0, std::memory_order_relaxed);
        }
        int pfd[2];
        if (pipe2(pfd, O_NONBLOCK | O_CLOEXEC) != 0) {
            throw std::runtime_error("shared-memory transport: pipe: " + errno_text(errno));
        }
        bell_rd_.reset(pfd[0]);
        bell_wr_.reset(pfd[1]);
        struct stat st {};
        fstat(fd, &st);
        mine.seg_dev = st.st_dev;
        mine.seg_ino = st.st_ino;
        fstat(pfd[0], &st);
        mine.bell_dev = st.st_dev;
        mine.bell_ino = st.st_ino;
        mine.os_pid = static_cast<std::uint32_t>(getpid());
        mine.seg_fd = fd;
        mine.bell_fd = pfd[0];
        mine.nonce[0] = h->nonce[0];
        mine.nonce[1] = h->nonce[1];
        mine.ring_bytes = ring_bytes_;
        mine.nrings = static_cast<std::uint32_t>(nrings);
        mine.direct_bytes = direct_bytes_;
    }
    std::vector<std::byte> blob;
    {
        Writer w(blob);
        w.put<std::uint32_t>(kBlobMagic);
        w.put<std::uint32_t>(mine.os_pid);
        w.put<std::int32_t>(mine.seg_fd);
        w.put<std::uint64_t>(mine.seg_dev);
        w.put<std::uint64_t>(mine.seg_ino);
        w.put<std::int32_t>(mine.bell_fd);
        w.put<std::uint64_t>(mine.bell_dev);
        w.put<std::uint64_t>(mine.bell_ino);
        w.put<std::uint64_t>(mine.nonce[0]);
        w.put<std::uint64_t>(mine.nonce[1]);
        w.put<std::uint64_t>(mine.ring_bytes);
        w.put<std::uint32_t>(mine.nrings);
        w.put<std::uint64_t>(mine.direct_bytes);
    }
    const auto all = session.allgather(blob);
    if (all.size() != static_cast<std::size_t>(nprocs_)) {
        throw std::runtime_error("address exchange returned the wrong number of blobs");
    }
    peers_.resize(static_cast<std::size_t>(nprocs_));
    for (int p = 0; p < nprocs_; ++p) {
        const auto pu = static_cast<std::size_t>(p);
        if (p == pid_ || !local_[pu]) {
            continue;
        }
        Reader r(all[pu]);
        Published o;
        if (r.get<std::uint32_t>() != kBlobMagic) {
            throw std::runtime_error("process " + std::to_string(p) +
                                     " offers no shared memory (set BSP_SHM the same way for "
                                     "every process)");
        }
        o.os_pid = r.get<std::uint32_t>();
        o.seg_fd = r.get<std::int32_t>();
        o.seg_dev = r.get<std::uint64_t>();
        o.seg_ino = r.get<std::uint64_t>();
        o.bell_fd = r.get<std::int32_t>();
        o.bell_dev = r.get<std::uint64_t>();
        o.bell_ino = r.get<std::uint64_t>();
        o.nonce[0] = r.get<std::uint64_t>();
        o.nonce[1] = r.get<std::uint64_t>();
        o.ring_bytes = r.get<std::uint64_t>();
        o.nrings = r.get<std::uint32_t>();
        o.direct_bytes = r.get<std::uint64_t>();
        const std::string who = "process " + std::to_string(p);
        if (o.nrings != nrings || o.ring_bytes < kMinRing || o.ring_bytes > kMaxRing ||
            (o.ring_bytes & (o.ring_bytes - 1)) != 0 || (board_procs == 0 && o.direct_bytes != 0) ||
            (o.direct_bytes != 0 && (o.direct_bytes < kMinRing || o.direct_bytes > kMaxRing ||
                                     (o.direct_bytes & (o.direct_bytes - 1)) != 0))) {
            throw std::runtime_error("shared-memory transport: " + who +
                                     " sees another set of processes on this host");
        }
        // Its segment and doorbell, through its descriptors: the kernel lets only a process
        // with ptrace access to it (its own user) open them.
        const std::string base = "/proc/" + std::to_string(o.os_pid) + "/fd/";
        Fd seg(open((base + std::to_string(o.seg_fd)).c_str(), O_RDWR | O_CLOEXEC));
        Fd bell(open((base + std::to_string(o.bell_fd)).c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
        if (seg.get() < 0 || bell.get() < 0) {
            throw std::runtime_error("shared-memory transport: cannot open the shared memory of " +
                                     who + " (" + base + "): " + errno_text(errno) +
                                     " (BSP_SHM=0 turns shared memory off)");
        }
        struct stat ss {
        }, bs{};
        const std::size_t len = segment_bytes(nrings, o.ring_bytes, board_procs, o.direct_bytes);
        if (fstat(seg.get(), &ss) != 0 || fstat(bell.get(), &bs) != 0 || ss.st_dev != o.seg_dev ||
            ss.st_ino != o.seg_ino || bs.st_dev != o.bell_dev || bs.st_ino != o.bell_ino ||
            static_cast<std::size_t>(ss.st_size) != len) {
            throw std::runtime_error("shared-memory transport: the descriptors of " + who +
                                     " are not what it published");
        }
        void *a = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, seg.get(), 0);
        if (a == MAP_FAILED) {
            throw std::runtime_error("shared-memory transport: mmap: " + errno_text(errno));
        }
        Peer &peer = peers_[pu];
        peer.map.reset(a, len);
        const SegHeader *h = peer.map.seg();
        if (h->magic != kSegMagic || h->nonce[0] != o.nonce[0] || h->nonce[1] != o.nonce[1] ||
            h->ring_bytes != o.ring_bytes || h->nrings != nrings ||
            h->direct_bytes != o.direct_bytes) {
            throw std::runtime_error("shared-memory transport: the segment of " + who +
                                     " is not what it published");
        }
        peer.local = true;
        peer.name = who;
        peer.ring_bytes = o.ring_bytes;
        peer.direct_bytes = o.direct_bytes;
        peer.to = shm::Ring(peer.map.ring(ring_index(p, pid_), o.ring_bytes), o.ring_bytes);
        peer.from = shm::Ring(own_.ring(ring_index(pid_, p), ring_bytes_), ring_bytes_);
        peer.bell.reset(bell.release());
    }
    if (board_procs > 0) {
        board_ =
            static_cast<std::byte *>(pid_ == 0 ? own_.ring(nrings, ring_bytes_)
                                               : peers_[0].map.ring(nrings, peers_[0].ring_bytes));
    }
}

std::string ShmTransport::description() const {
    std::string s = "shared memory between " + std::to_string(nlocal_) +
                    " processes of this host, " + std::to_string(ring_bytes_ >> 10) +
                    " KiB ring per pair";
    if (board_ != nullptr) {
        s += ", superstep board";
        if (direct_bytes_ != 0) {
            s += ", " + std::to_string(direct_bytes_ >> 10) + " KiB direct area per pair";
        }
    }
    if (remote_) {
        s += "; other hosts: " + remote_->name() + " (" + remote_->description() + ")";
    }
    return s;
}

void ShmTransport::notify(int dst) {
    auto &p = peers_[static_cast<std::size_t>(dst)];
    auto &s = p.map.seg()->sleeping;
    if (s.load() != 0 && s.exchange(0) != 0) {
        const char b = 1;
        // A full pipe already holds a wake-up.
        (void)!write(p.bell.get(), &b, 1);
    }
}

bool ShmTransport::push_to(int dst) {
    auto &p = peers_[static_cast<std::size_t>(dst)];
    bool moved = false;
    while (!p.out.empty()) {
        Out &o = p.out.front();
        const std::size_t before = o.off;
        const bool done = p.to.push(o.bytes.data(), o.bytes.size(), &o.off);
        moved = moved || done || o.off != before;
        if (!done) {
            break;
        }
        p.out.pop_front();
    }
    if (moved) {
        notify(dst);
    }
    return moved;
}

bool ShmTransport::progress() {
    bool any = false;
    for (int q = 0; q < nprocs_; ++q) {
        auto &p = peers_[static_cast<std::size_t>(q)];
        if (!p.local) {
            continue;
        }
        if (!p.out.empty()) {
            any = push_to(q) || any;
        }
        if (!p.from.empty_for_consumer()) {
            done_.clear();
            p.from.pop(p.partial, done_, p.name);
            for (auto &m : done_) {
                ready_.push_back(Received{q, std::move(m)});
            }
            any = true;
            // A producer that found the ring full sleeps until we free space.
            auto &w = p.from.header()->producer_waiting;
            if (w.load() != 0 && w.exchange(0) != 0) {
                notify(q);
            }
        }
    }
    return any;
}

bool ShmTransport::sends_pending() const {
    for (const auto &p : peers_) {
        if (!p.out.empty()) {
            return true;
        }
    }
    return false;
}

bool ShmTransport::arm() {
    for (auto &p : peers_) {
        if (p.local && !p.out.empty()) {
            p.to.header()->producer_waiting.store(1);
        }
    }
    own_.seg()->sleeping.store(1);
    for (const auto &p : peers_) {
        if (!p.local) {
            continue;
        }
        if (!p.from.empty_for_consumer() ||
            (!p.out.empty() && p.to.fits(p.out.front().bytes.size() - p.out.front().off))) {
            disarm();
            return false;
        }
    }
    return true;
}

void ShmTransport::disarm() {
    own_.seg()->sleeping.store(0);
    char buf[64];
    while (read(bell_rd_.get(), buf, sizeof buf) > 0) {
    }
}

std::optional<Received> ShmTransport::sleep(bool *torn_down) {
    *torn_down = false;
    std::optional<Received> r;
    if (remote_) {
        bool woken = false;
        r = remote_->receive_or_wake(bell_rd_.get(), &woken);
        *torn_down = !r && !woken;
    } else {
        pollfd fds[2] = {{bell_rd_.get(), POLLIN, 0}, {control_fd_, POLLIN, 0}};
        const nfds_t n = control_fd_ >= 0 ? 2 : 1;
        if (poll(fds, n, -1) < 0 && errno != EINTR) {
            throw std::runtime_error("poll: " + errno_text(errno));
        }
        *torn_down = n == 2 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR));
    }
    disarm();
    return r;
}

void ShmTransport::send(int dst, std::vector<std::byte> message, unsigned flags) {
    if (dst < 0 || dst >= nprocs_ || dst == pid_) {
        throw std::logic_error("shared-memory transport: bad destination");
    }
    auto &p = peers_[static_cast<std::size_t>(dst)];
    if (!p.local) {
        remote_->send(dst, std::move(message), flags);
        return;
    }
    p.out.push_back(Out{std::move(message), 0});
    if (p.out.size() == 1) {
        push_to(dst);
    }
}

std::optional<Received> ShmTransport::receive() {
    auto spin_until = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
        if (progress()) {
            spin_until = std::chrono::steady_clock::now() + kSpin;
        }
        if (!ready_.empty()) {
            Received r = std::move(ready_.front());
            ready_.pop_front();
            return r;
        }
        if (!remote_ && std::chrono::steady_clock::now() < spin_until) {
            sched_yield();
            continue;
        }
        if (!arm()) {
            continue;
        }
        bool torn_down = false;
        auto r = sleep(&torn_down);
        if (r) {
            return r;
        }
        if (torn_down) {
            return std::nullopt;
        }
    }
}

// The arrivals count of process 0's board only grows: call g (from 0) is complete when it
// reaches (g + 1) nprocs. Every process writes its slot of the call's parity before its
// arrival (a release: the readers' acquire load of the count sees every slot of the call),
// and nobody writes that parity again before everybody has read it: a process starts call
// g + 2 only after call g + 1 completed, which every process entered after it returned
// from call g. The last process to arrive rings the doorbell of every sleeping process;
// the others wait as receive() does (polling the rings meanwhile, so that what arrives
// early is kept), and a job torn down (a process died) ends the wait with TornDown.
BoardGather ShmTransport::board_allgather(std::span<const std::byte> mine) {
    if (!board_) {
        throw std::logic_error("shared-memory transport: no board (a process is remote)");
    }
    const std::uint64_t call = board_calls_++;
    const std::uint64_t parity = call % 2;
    std::byte *slot = board_slot(parity, pid_);
    const std::uint32_t len =
        mine.size() <= kBoardBlob ? static_cast<std::uint32_t>(mine.size()) : kBoardOverflow;
    std::memcpy(slot, &len, sizeof len);
    if (len != kBoardOverflow && !mine.empty()) {
        std::memcpy(slot + 8, mine.data(), mine.size());
    }
    const std::uint64_t target = (call + 1) * static_cast<std::uint64_t>(nprocs_);
    auto &arrived = board_header()->arrived;
    if (arrived.fetch_add(1) + 1 == target) {
        for (int q = 0; q < nprocs_; ++q) {
            if (q != pid_) {
                notify(q);
            }
        }
    } else {
        auto spin_until = std::chrono::steady_clock::now() + kSpin;
        while (arrived.load(std::memory_order_acquire) < target) {
            if (progress()) {
                spin_until = std::chrono::steady_clock::now() + kSpin;
            }
            if (std::chrono::steady_clock::now() < spin_until) {
                sched_yield();
                continue;
            }
            if (!arm()) {
                continue;
            }
            if (arrived.load() >= target) {
                disarm();
                break;
            }
            bool torn_down = false;
            (void)sleep(&torn_down);
            if (torn_down) {
                throw TornDown();
            }
        }
    }
    BoardGather g;
    g.blobs.resize(static_cast<std::size_t>(nprocs_));
    for (int q = 0; q < nprocs_; ++q) {
        const std::byte *b = board_slot(parity, q);
        std::uint32_t n = 0;
        std::memcpy(&n, b, sizeof n);
        if (n == kBoardOverflow) {
            g.overflow = true;
        } else if (n > kBoardBlob) {
            throw std::runtime_error("shared-memory board slot of process " + std::to_string(q) +
                                     " is corrupt");
        } else {
            g.blobs[static_cast<std::size_t>(q)] = std::span<const std::byte>(b + 8, n);
        }
    }
    if (g.overflow) {
        g.blobs.clear();
    }
    return g;
}

// Direct areas: process `owner`'s area for `other` has index other - (other > owner) among
// the owner's nprocs - 1 areas of a parity (every process is local when there is a board).
std::span<std::byte> ShmTransport::direct_out(int dst, std::uint64_t superstep) {
    if (!board_ || direct_bytes_ == 0 || dst < 0 || dst >= nprocs_ || dst == pid_) {
        return {};
    }
    auto *board = static_cast<std::byte *>(own_.ring(nlocal_ - 1, ring_bytes_));
    const auto index = static_cast<std::size_t>(dst - (dst > pid_ ? 1 : 0));
    return {
        direct_area(board, static_cast<std::size_t>(nprocs_), direct_bytes_, superstep % 2, index),
        direct_bytes_};
}

std::span<const std::byte> ShmTransport::direct_in(int src, std::uint64_t superstep) const {
    if (!board_ || src < 0 || src >= nprocs_ || src == pid_) {
        return {};
    }
    const Peer &p = peers_[static_cast<std::size_t>(src)];
    if (p.direct_bytes == 0) {
        return {};
    }
    auto *board = static_cast<std::byte *>(p.map.ring(nlocal_ - 1, p.ring_bytes));
    const auto index = static_cast<std::size_t>(pid_ - (pid_ > src ? 1 : 0));
    return {
        direct_area(board, static_cast<std::size_t>(nprocs_), p.direct_bytes, superstep % 2, index),
        p.direct_bytes};
}

void ShmTransport::flush_sends() {
    for (;;) {
        progress();
        if (!sends_pending()) {
            break;
        }
        if (!arm()) {
            continue;
        }
        bool torn_down = false;
        auto r = sleep(&torn_down);
        if (r) {
            ready_.push_back(std::move(*r));  // kept for receive()
        } else if (torn_down) {
            throw TornDown();
        }
    }
    if (remote_) {
        remote_->flush_sends();
    }
}

// A size of BSP_SHM_RING or BSP_SHM_DIRECT: a power of two from 4k to 1024M (or 0).
std::size_t parse_shm_bytes(const char *name, const char *v, bool zero) {
    std::string t(v);
    if (zero && t == "0") {
        return 0;
    }
    std::size_t mult = 1;
    if (!t.empty() && (t.back() == 'k' || t.back() == 'K')) {
        mult = 1024;
        t.pop_back();
    } else if (!t.empty() && t.back() == 'M') {
        mult = 1 << 20;
        t.pop_back();
    }
    const auto n = parse_integer(t, 1, static_cast<long long>(kMaxRing));
    const std::size_t b = n ? static_cast<std::size_t>(*n) * mult : 0;
    if (!n || b < kMinRing || b > kMaxRing || (b & (b - 1)) != 0) {
        throw std::runtime_error(std::string(name) + "=" + v +
                                 " is invalid (expected a power of two from 4k to 1024M bytes" +
                                 (zero ? ", or 0)" : ")"));
    }
    return b;
}

}  // namespace

ShmSettings shm_settings_from_environment() {
    ShmSettings s;
    if (const char *v = std::getenv("BSP_SHM")) {
        const std::string m(v);
        if (m == "auto") {
            s.mode = ShmSettings::Mode::Auto;
        } else if (m == "1") {
            s.mode = ShmSettings::Mode::On;
        } else if (m == "0") {
            s.mode = ShmSettings::Mode::Off;
        } else {
            throw std::runtime_error("BSP_SHM=" + m + " is invalid (expected auto, 1 or 0)");
        }
    }
    if (const char *v = std::getenv("BSP_SHM_RING")) {
        s.ring_bytes = parse_shm_bytes("BSP_SHM_RING", v, false);
    }
    if (const char *v = std::getenv("BSP_SHM_DIRECT")) {
        s.direct_bytes = parse_shm_bytes("BSP_SHM_DIRECT", v, true);
    }
    return s;
}

std::string shm_host_identity(int pid, int nprocs) {
    std::string id = read_first_line("/proc/sys/kernel/random/boot_id");
    id += "/pidns " + ns_inode("/proc/self/ns/pid") + "/netns " + ns_inode("/proc/self/ns/net") +
          "/mntns " + ns_inode("/proc/self/ns/mnt") + "/uid " + std::to_string(getuid());
    if (const char *v = std::getenv("BSP_SHM_HOSTS"); v && *v) {
        std::vector<std::string> names;
        const std::string s(v);
        std::size_t pos = 0;
        for (;;) {
            const std::size_t c = s.find(',', pos);
            names.push_back(s.substr(pos, c == std::string::npos ? c : c - pos));
            if (c == std::string::npos) {
                break;
            }
            pos = c + 1;
        }
        if (names.size() != static_cast<std::size_t>(nprocs)) {
            throw std::runtime_error("BSP_SHM_HOSTS=" + s + " names " +
                                     std::to_string(names.size()) + " hosts for " +
                                     std::to_string(nprocs) + " processes");
        }
        id += "/emulated " + names[static_cast<std::size_t>(pid)];
    }
    return id;
}

std::unique_ptr<Transport> open_shm_transport(launch::Session &session,
                                              const std::vector<bool> &local,
                                              std::unique_ptr<Transport> remote,
                                              const ShmSettings &settings) {
    std::size_t nlocal = 0;
    for (bool l : local) {
        nlocal += l ? 1 : 0;
    }
    if (nlocal < 2) {
        // No process of this host to share memory with: take part in the exchange only.
        std::vector<std::byte> none;
        Writer w(none);
        w.put<std::uint32_t>(0);
        (void)session.allgather(none);
        return remote;
    }
    return std::make_unique<ShmTransport>(session, local, std::move(remote), settings);
}

}  // namespace bsp::rt
