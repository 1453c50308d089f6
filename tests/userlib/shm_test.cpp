// The shared-memory transport (userlib/src/shm_transport.cpp, shm_ring.hpp): its ring
// between two threads, the transport between threads standing for the processes of one
// host (an in-process session), backpressure through rings far smaller than the traffic,
// and another user's process (nobody) that cannot open the rings; the shared board (its
// allgather over many calls, a process that never arrives, whole supersteps through it).
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "launch/session.hpp"
#include "misuse.hpp"
#include "runtime.hpp"
#include "shm_ring.hpp"
#include "shm_transport.hpp"

namespace {

using bsp::rt::Received;
using bsp::rt::ShmSettings;
using bsp::rt::Transport;

std::byte pattern(int src, int dst, std::size_t msg, std::size_t i) {
    return static_cast<std::byte>(src * 131 + dst * 31 + msg * 7 + i * 13 + (i >> 8));
}

std::vector<std::byte> make_message(int src, int dst, std::size_t msg, std::size_t len) {
    std::vector<std::byte> m(len);
    for (std::size_t i = 0; i < len; ++i) {
        m[i] = pattern(src, dst, msg, i);
    }
    return m;
}

// Sizes from 0 to several times the ring, so that messages are cut into chunks, wrap
// around the ring's end and fill it.
std::size_t size_of(std::size_t msg) {
    static const std::size_t sizes[] = {0, 1, 7, 8, 9, 1000, 1016, 1017, 3000, 4096, 10000, 40000};
    return sizes[msg % std::size(sizes)] + msg % 5;
}

TEST(ShmRing, EveryMessageArrivesIntactInOrderThroughASmallRing) {
    constexpr std::size_t kCap = 4096;
    constexpr std::size_t kMessages = 3000;
    std::vector<std::uint64_t> mem((bsp::rt::shm::Ring::footprint(kCap) + 7) / 8);
    bsp::rt::shm::Ring::init(mem.data());
    bsp::rt::shm::Ring producer(mem.data(), kCap), consumer(mem.data(), kCap);
    std::thread t([&] {
        for (std::size_t m = 0; m < kMessages; ++m) {
            const auto bytes = make_message(0, 1, m, size_of(m));
            std::size_t off = 0;
            while (!producer.push(bytes.data(), bytes.size(), &off)) {
                std::this_thread::yield();
            }
            ASSERT_EQ(off, bytes.size());
        }
    });
    std::vector<std::byte> partial;
    std::vector<std::vector<std::byte>> done;
    std::size_t got = 0;
    while (got < kMessages) {
        done.clear();
        consumer.pop(partial, done, "the test");
        for (const auto &d : done) {
            ASSERT_EQ(d, make_message(0, 1, got, size_of(got))) << "message " << got;
            ++got;
        }
        if (done.empty()) {
            std::this_thread::yield();
        }
    }
    t.join();
    EXPECT_TRUE(consumer.empty_for_consumer());
    EXPECT_TRUE(partial.empty());
}

TEST(ShmRing, CorruptChunkHeaderIsAnErrorNotAnOutOfBoundsRead) {
    constexpr std::size_t kCap = 4096;
    std::vector<std::uint64_t> mem((bsp::rt::shm::Ring::footprint(kCap) + 7) / 8);
    bsp::rt::shm::Ring::init(mem.data());
    bsp::rt::shm::Ring ring(mem.data(), kCap);
    const auto bytes = make_message(0, 1, 0, 100);
    std::size_t off = 0;
    ASSERT_TRUE(ring.push(bytes.data(), bytes.size(), &off));
    // The chunk claims more bytes than the ring holds.
    auto *data = reinterpret_cast<std::uint32_t *>(reinterpret_cast<std::byte *>(mem.data()) +
                                                   sizeof(bsp::rt::shm::RingHeader));
    data[0] = 5000;
    std::vector<std::byte> partial;
    std::vector<std::vector<std::byte>> done;
    try {
        ring.pop(partial, done, "process 3");
        FAIL() << "no error";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "shared-memory ring from process 3 is corrupt");
    }
    EXPECT_TRUE(done.empty());
}

// The processes of one host, as threads: allgather through a shared table.
class Hub {
  public:
    explicit Hub(int n) : n_(n), blobs_(static_cast<std::size_t>(n)) {}
    std::vector<std::vector<std::byte>> allgather(int pid, std::span<const std::byte> mine) {
        std::unique_lock l(mu_);
        const std::uint64_t gen = gen_;
        blobs_[static_cast<std::size_t>(pid)].assign(mine.begin(), mine.end());
        if (++arrived_ == n_) {
            result_ = blobs_;
            arrived_ = 0;
            ++gen_;
            cv_.notify_all();
        } else {
            cv_.wait(l, [&] { return gen_ != gen; });
        }
        return result_;
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    int n_;
    int arrived_ = 0;
    std::uint64_t gen_ = 0;
    std::vector<std::vector<std::byte>> blobs_, result_;
};

class ThreadSession : public bsp::launch::Session {
  public:
    ThreadSession(Hub &hub, int pid, int nprocs, int control_fd = -1)
        : hub_(hub), pid_(pid), nprocs_(nprocs), control_fd_(control_fd) {}
    int pid() const override { return pid_; }
    int nprocs() const override { return nprocs_; }
    std::string_view job_secret() const override { return "0123456789abcdef0123"; }
    std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override {
        return hub_.allgather(pid_, mine);
    }
    int control_fd() const override { return control_fd_; }
    [[noreturn]] void abort(std::string_view) override { std::abort(); }
    void finish() override {}

  private:
    Hub &hub_;
    int pid_, nprocs_, control_fd_;
};

// Every thread sends kMessages messages to every other before it receives any (send()
// never blocks: what does not fit in the 4 KiB rings waits in the sender), then receives
// them all: each exactly once, intact, in order per sender.
TEST(ShmTransport, EveryMessageExactlyOnceThroughRingsFarSmallerThanTheTraffic) {
    constexpr int kProcs = 3;
    constexpr std::size_t kMessages = 300;
    Hub hub(kProcs);
    ShmSettings settings;
    settings.mode = ShmSettings::Mode::On;
    settings.ring_bytes = 4096;
    std::vector<std::string> errors(kProcs);
    std::vector<std::thread> threads;
    for (int p = 0; p < kProcs; ++p) {
        threads.emplace_back([&, p] {
            try {
                ThreadSession s(hub, p, kProcs);
                auto t = bsp::rt::open_shm_transport(s, std::vector<bool>(kProcs, true), nullptr,
                                                     settings);
                EXPECT_EQ(t->name(), "shm");
                for (std::size_t m = 0; m < kMessages; ++m) {
                    for (int d = 0; d < kProcs; ++d) {
                        if (d != p) {
                            t->send(d, make_message(p, d, m, size_of(m)), 0);
                        }
                    }
                }
                std::vector<std::size_t> next(kProcs, 0);
                for (std::size_t n = 0; n < (kProcs - 1) * kMessages; ++n) {
                    auto r = t->receive();
                    ASSERT_TRUE(r.has_value());
                    ASSERT_TRUE(r->src >= 0 && r->src < kProcs && r->src != p);
                    auto &k = next[static_cast<std::size_t>(r->src)];
                    ASSERT_LT(k, kMessages);
                    ASSERT_EQ(r->bytes, make_message(r->src, p, k, size_of(k)))
                        << "from " << r->src << " message " << k;
                    ++k;
                }
                t->flush_sends();
                // Nobody leaves before everybody has everything (the rings are mapped
                // by the peers until their transports are gone).
                (void)s.allgather({});
            } catch (const std::exception &e) {
                errors[static_cast<std::size_t>(p)] = e.what();
            }
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    for (int p = 0; p < kProcs; ++p) {
        EXPECT_EQ(errors[static_cast<std::size_t>(p)], "") << "process " << p;
    }
}

// The descriptors of this process that are shared-memory segments of the transport.
std::vector<int> segment_fds() {
    std::vector<int> fds;
    DIR *d = opendir("/proc/self/fd");
    while (dirent *e = d ? readdir(d) : nullptr) {
        char target[256] = {};
        const std::string link = std::string("/proc/self/fd/") + e->d_name;
        if (readlink(link.c_str(), target, sizeof target - 1) > 0 &&
            std::strncmp(target, "/memfd:bsp-shm", 14) == 0) {
            fds.push_back(std::atoi(e->d_name));
        }
    }
    if (d) {
        closedir(d);
    }
    return fds;
}

// Another user's process cannot open a job's rings (Documentation/security.rst, "Shared
// memory transport"): a child that becomes nobody tries every way to the segment and the
// doorbells of this process and gets EACCES.
TEST(ShmTransport, AnotherUsersProcessCannotOpenTheRings) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to run a process as nobody";
    }
    Hub hub(2);
    ShmSettings settings;
    settings.mode = ShmSettings::Mode::On;
    std::unique_ptr<Transport> t1;
    std::thread other([&] {
        ThreadSession s(hub, 1, 2);
        t1 = bsp::rt::open_shm_transport(s, {true, true}, nullptr, settings);
    });
    ThreadSession s0(hub, 0, 2);
    auto t0 = bsp::rt::open_shm_transport(s0, {true, true}, nullptr, settings);
    other.join();
    const auto fds = segment_fds();
    ASSERT_EQ(fds.size(), 2u);  // one segment per process
    // Nothing of the transport has a name in /dev/shm.
    if (DIR *d = opendir("/dev/shm")) {
        while (dirent *e = readdir(d)) {
            EXPECT_EQ(std::strstr(e->d_name, "bsp"), nullptr) << e->d_name;
        }
        closedir(d);
    }
    const pid_t self = getpid();
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) {
            _exit(2);
        }
        int status = 0;
        for (int fd : fds) {
            for (int mode : {O_RDONLY, O_RDWR}) {
                const std::string path =
                    "/proc/" + std::to_string(self) + "/fd/" + std::to_string(fd);
                const int f = open(path.c_str(), mode);
                if (f >= 0 || errno != EACCES) {
                    status = 1;
                }
            }
        }
        // Not even the list of descriptors.
        const std::string dir = "/proc/" + std::to_string(self) + "/fd";
        if (opendir(dir.c_str()) != nullptr || errno != EACCES) {
            status = 3;
        }
        _exit(status);
    }
    int st = 0;
    ASSERT_EQ(waitpid(child, &st, 0), child);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 0) << "1: a ring opened or another error than EACCES; 2: "
                                     "cannot become nobody; 3: the descriptors listed";
    // Both mapped, nothing sent: closing both is clean.
    t0.reset();
    t1.reset();
    EXPECT_TRUE(segment_fds().empty());
}

TEST(ShmSettings, BadValuesAreClearErrors) {
    for (const char *v : {"", "yes", "2", " 1"}) {
        setenv("BSP_SHM", v, 1);
        try {
            (void)bsp::rt::shm_settings_from_environment();
            ADD_FAILURE() << "BSP_SHM=" << v << " accepted";
        } catch (const std::runtime_error &e) {
            EXPECT_EQ(std::string(e.what()),
                      std::string("BSP_SHM=") + v + " is invalid (expected auto, 1 or 0)");
        }
    }
    unsetenv("BSP_SHM");
    for (const char *v : {"", "1000", "2k", "4096x", "2048", "2048M", "-4096", "0x1000"}) {
        setenv("BSP_SHM_RING", v, 1);
        try {
            (void)bsp::rt::shm_settings_from_environment();
            ADD_FAILURE() << "BSP_SHM_RING=" << v << " accepted";
        } catch (const std::runtime_error &e) {
            EXPECT_EQ(std::string(e.what()),
                      std::string("BSP_SHM_RING=") + v +
                          " is invalid (expected a power of two from 4k to 1024M bytes)");
        }
    }
    unsetenv("BSP_SHM_RING");
    for (const char *v : {"", "1000", "2k", "-1", "2048M"}) {
        setenv("BSP_SHM_DIRECT", v, 1);
        try {
            (void)bsp::rt::shm_settings_from_environment();
            ADD_FAILURE() << "BSP_SHM_DIRECT=" << v << " accepted";
        } catch (const std::runtime_error &e) {
            EXPECT_EQ(std::string(e.what()),
                      std::string("BSP_SHM_DIRECT=") + v +
                          " is invalid (expected a power of two from 4k to 1024M bytes, or 0)");
        }
    }
    setenv("BSP_SHM_DIRECT", "0", 1);
    EXPECT_EQ(bsp::rt::shm_settings_from_environment().direct_bytes, 0u);
    setenv("BSP_SHM_DIRECT", "8k", 1);
    EXPECT_EQ(bsp::rt::shm_settings_from_environment().direct_bytes, 8192u);
    unsetenv("BSP_SHM_DIRECT");
    EXPECT_EQ(bsp::rt::shm_settings_from_environment().direct_bytes, 1u << 20);
    setenv("BSP_SHM_RING", "64k", 1);
    EXPECT_EQ(bsp::rt::shm_settings_from_environment().ring_bytes, 65536u);
    setenv("BSP_SHM_RING", "4096", 1);
    EXPECT_EQ(bsp::rt::shm_settings_from_environment().ring_bytes, 4096u);
    unsetenv("BSP_SHM_RING");
    EXPECT_EQ(bsp::rt::shm_settings_from_environment().ring_bytes, 1u << 20);
}

TEST(ShmHostIdentity, EmulatedHostsSplitOneHost) {
    setenv("BSP_SHM_HOSTS", "a,a,b", 1);
    EXPECT_EQ(bsp::rt::shm_host_identity(0, 3), bsp::rt::shm_host_identity(1, 3));
    EXPECT_NE(bsp::rt::shm_host_identity(0, 3), bsp::rt::shm_host_identity(2, 3));
    try {
        (void)bsp::rt::shm_host_identity(0, 4);
        ADD_FAILURE() << "accepted 3 names for 4 processes";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "BSP_SHM_HOSTS=a,a,b names 3 hosts for 4 processes");
    }
    unsetenv("BSP_SHM_HOSTS");
    EXPECT_EQ(bsp::rt::shm_host_identity(0, 3), bsp::rt::shm_host_identity(2, 3));
}

}  // namespace

namespace {

std::vector<std::byte> board_blob(int pid, std::size_t call, std::size_t len) {
    std::vector<std::byte> b(len);
    for (std::size_t i = 0; i < len; ++i) {
        b[i] = static_cast<std::byte>(pid * 59 + call * 17 + i * 3);
    }
    return b;
}

// The processes of one host as threads, each with its shared-memory transport (every
// process local, so the board exists); fn(pid, transport) runs in each. Returns the
// error of every thread ("" when none).
std::vector<std::string> on_one_host(
    int nprocs, const std::function<void(int, ThreadSession &, Transport &)> &fn,
    std::size_t ring_bytes = std::size_t{1} << 20, int control_fd = -1,
    std::size_t direct_bytes = 0) {
    Hub hub(nprocs);
    ShmSettings settings;
    settings.mode = ShmSettings::Mode::On;
    settings.ring_bytes = ring_bytes;
    settings.direct_bytes = direct_bytes;
    std::vector<std::string> errors(static_cast<std::size_t>(nprocs));
    std::vector<std::thread> threads;
    for (int p = 0; p < nprocs; ++p) {
        threads.emplace_back([&, p] {
            try {
                ThreadSession s(hub, p, nprocs, control_fd);
                auto t = bsp::rt::open_shm_transport(s, std::vector<bool>(nprocs, true), nullptr,
                                                     settings);
                try {
                    fn(p, s, *t);
                } catch (const std::exception &e) {
                    errors[static_cast<std::size_t>(p)] = e.what();
                }
                // The segments stay mapped until every thread is done with them.
                (void)s.allgather({});
            } catch (const std::exception &e) {
                errors[static_cast<std::size_t>(p)] = e.what();
            }
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    return errors;
}

}  // namespace

// 1000 calls of the board's allgather by 4 processes: every process gets every blob of
// each call exactly (0 to 4000 bytes, every 10th call up to 65000), every 50th call one
// process's blob is one
// byte too large and every process sees the overflow in that same call, and a message
// sent before a call (received after it) is kept, exactly once and in order.
TEST(ShmBoard, ManyCallsGiveEveryBlobExactlyAndKeepMessagesSentMeanwhile) {
    constexpr int kProcs = 4;
    constexpr std::size_t kCalls = 1000;
    const auto errors = on_one_host(kProcs, [&](int p, ThreadSession &, Transport &t) {
        const std::size_t max = t.board_blob_bytes();
        ASSERT_EQ(max, 65528u);
        for (std::size_t c = 0; c < kCalls; ++c) {
            const int dst = (p + 1) % kProcs;
            t.send(dst, make_message(p, dst, c, c % 100), 0);
            const bool over = c % 50 == 49;
            const int big = static_cast<int>(c / 50) % kProcs;
            auto len = [&](int q) {
                return over && q == big ? max + 1
                                        : (c * 5077 + static_cast<std::size_t>(q) * 977) %
                                              (c % 10 == 0 ? 65001 : 4001);
            };
            const auto g = t.board_allgather(board_blob(p, c, len(p)));
            ASSERT_EQ(g.overflow, over) << "call " << c;
            if (over) {
                ASSERT_TRUE(g.blobs.empty());
            } else {
                ASSERT_EQ(g.blobs.size(), static_cast<std::size_t>(kProcs));
                for (int q = 0; q < kProcs; ++q) {
                    const auto b = g.blobs[static_cast<std::size_t>(q)];
                    ASSERT_EQ(std::vector<std::byte>(b.begin(), b.end()), board_blob(q, c, len(q)))
                        << "call " << c << " process " << q;
                }
            }
            const int src = (p + kProcs - 1) % kProcs;
            auto r = t.receive();
            ASSERT_TRUE(r.has_value());
            ASSERT_EQ(r->src, src);
            ASSERT_EQ(r->bytes, make_message(src, p, c, c % 100)) << "call " << c;
        }
        t.flush_sends();
    });
    for (int p = 0; p < kProcs; ++p) {
        EXPECT_EQ(errors[static_cast<std::size_t>(p)], "") << "process " << p;
    }
}

// Process 3 never comes to the board (it died): the others wait, asleep, until the launcher
// tears the job down (its control descriptor becomes readable), then throw TornDown. The
// control pipe is written only after all three have arrived (the count of arrivals says so).
TEST(ShmBoard, AProcessThatNeverArrivesEndsTheWaitWithTornDown) {
    constexpr int kProcs = 4;
    int control[2];
    ASSERT_EQ(pipe(control), 0);
    std::atomic<int> waiting{0};
    std::thread launcher([&] {
        while (waiting.load() < kProcs - 1) {
            std::this_thread::yield();
        }
        const char b = 1;
        ASSERT_EQ(write(control[1], &b, 1), 1);
    });
    const auto errors = on_one_host(
        kProcs,
        [&](int p, ThreadSession &, Transport &t) {
            (void)t.board_allgather(board_blob(p, 0, 10));  // everybody arrives once
            if (p == kProcs - 1) {
                waiting++;  // as if it died: never arrives again
                return;
            }
            waiting++;
            (void)t.board_allgather(board_blob(p, 1, 10));
        },
        std::size_t{1} << 20, control[0]);
    launcher.join();
    close(control[0]);
    close(control[1]);
    for (int p = 0; p < kProcs - 1; ++p) {
        EXPECT_EQ(errors[static_cast<std::size_t>(p)], "job torn down") << "process " << p;
    }
    EXPECT_EQ(errors[kProcs - 1], "");
}

// Whole supersteps of the runtime through the board on 4 processes: 60 supersteps of puts
// of 8 bytes to 200 KiB (some in the board, some in streams), a get and a BSMP message,
// every byte checked; a superstep of small puts sends no message at all (barrier, counts
// and data all went in the board), one of 200 KiB puts only its data units, and a superstep
// whose registrations do not fit in the board goes by messages (a put: its counts and its
// unit) and the next one is through the board again.
// direct_bytes: the direct area per pair (0: none; the puts and sends go in the board or in
// streams as described above). With areas, what fits in them sends no message.
void supersteps_through_the_board(std::size_t direct_bytes) {
    constexpr int kProcs = 4;
    constexpr std::size_t kMax = 200 << 10;
    auto value = [](int src, int dst, int step, std::size_t i) {
        return static_cast<unsigned char>(src * 31 + dst * 7 + step * 13 + i * 5 + (i >> 9));
    };
    auto size_at = [](int step, int src) {
        const std::size_t sizes[] = {8, 128, 1000, 4000, 65536, kMax};
        return sizes[static_cast<std::size_t>(step + src) % 6];
    };
    const auto body = [&](int p, ThreadSession &, Transport &t) {
        bsp::rt::Runtime r(p, kProcs, &t, bsp::rt::MessagingConfig{});
        std::vector<unsigned char> in(kProcs * kMax), out(kMax), got(kMax);
        std::uint64_t word = 0;
        r.push_reg("bsp_push_reg", in.data(), static_cast<std::int64_t>(in.size()));
        r.push_reg("bsp_push_reg", &word, sizeof word);
        r.sync("bsp_sync");
        std::vector<unsigned char> want(kMax);
        for (int step = 0; step < 60; ++step) {
            const std::size_t n = size_at(step, p);
            for (int d = 0; d < kProcs; ++d) {
                if (d == p) {
                    continue;
                }
                for (std::size_t i = 0; i < n; ++i) {
                    out[i] = value(p, d, step, i);
                }
                r.put("bsp_put", d, out.data(), in.data(), static_cast<std::int64_t>(p * kMax),
                      static_cast<std::int64_t>(n), false);
            }
            word = static_cast<std::uint64_t>(step * 1000 + p);
            const int from = (p + 1) % kProcs;
            std::uint64_t fetched = 0;
            r.get("bsp_get", from, &word, 0, &fetched, sizeof fetched);
            const std::uint64_t msg =
                static_cast<std::uint64_t>(step) << 8 | static_cast<unsigned>(p);
            r.send("bsp_send", (p + 2) % kProcs, nullptr, &msg, sizeof msg);
            r.sync("bsp_sync");
            ASSERT_EQ(fetched, static_cast<std::uint64_t>(step * 1000 + from)) << "step " << step;
            for (int s = 0; s < kProcs; ++s) {
                if (s == p) {
                    continue;
                }
                const std::size_t m = size_at(step, s);
                for (std::size_t i = 0; i < m; ++i) {
                    want[i] = value(s, p, step, i);
                }
                ASSERT_EQ(std::memcmp(&in[static_cast<std::size_t>(s) * kMax], want.data(), m), 0)
                    << "step " << step << " from " << s;
            }
            std::int64_t count = 0, bytes = 0;
            r.qsize(&count, &bytes);
            ASSERT_EQ(count, 1);
            std::uint64_t m = 0;
            r.move("bsp_move", &m, sizeof m);
            ASSERT_EQ(
                m, static_cast<std::uint64_t>(step) << 8 | static_cast<unsigned>((p + 2) % kProcs));
        }
        // Small puts only: nothing but the board.
        for (int d = 0; d < kProcs; ++d) {
            if (d != p) {
                r.put("bsp_put", d, &word, in.data(), p * 8, 8, false);
            }
        }
        r.sync("bsp_sync");
        EXPECT_EQ(r.messaging().stats().messages_sent, 0u);
        // 200 KiB puts: the data units only (none when they fit in the direct areas).
        const std::uint64_t big = direct_bytes >= kMax + 64 ? 0 : 3;
        for (int d = 0; d < kProcs; ++d) {
            if (d != p) {
                r.put("bsp_put", d, out.data(), in.data(), static_cast<std::int64_t>(p * kMax),
                      static_cast<std::int64_t>(kMax), false);
            }
        }
        r.sync("bsp_sync");
        EXPECT_EQ(r.messaging().stats().messages_sent, big);
        EXPECT_EQ(r.messaging().stats().units_sent, big);
        // 8200 registrations (65,600 bytes of sizes in every summary) do not fit.
        std::vector<std::uint64_t> areas(8200);
        for (auto &a : areas) {
            r.push_reg("bsp_push_reg", &a, sizeof a);
        }
        r.put("bsp_put", (p + 1) % kProcs, &word, in.data(), p * 8, 8, false);
        r.sync("bsp_sync");
        // Its counts and one unit; nothing when the put went in the direct area.
        EXPECT_EQ(r.messaging().stats().messages_sent, direct_bytes > 0 ? 0u : 2u);
        EXPECT_EQ(r.messaging().stats().units_sent, direct_bytes > 0 ? 0u : 1u);
        r.put("bsp_put", (p + 1) % kProcs, &word, &areas.back(), 0, sizeof word, false);
        r.sync("bsp_sync");
        EXPECT_EQ(r.messaging().stats().messages_sent, 0u);
        EXPECT_EQ(areas.back(), static_cast<std::uint64_t>(59 * 1000 + (p + kProcs - 1) % kProcs));
        r.sync("bsp_end", bsp::rt::SyncKind::End);
    };
    const auto errors = on_one_host(kProcs, body, std::size_t{1} << 20, -1, direct_bytes);
    for (int p = 0; p < kProcs; ++p) {
        EXPECT_EQ(errors[static_cast<std::size_t>(p)], "") << "process " << p;
    }
}

TEST(ShmBoard, SuperstepsThroughTheBoardDeliverEveryByteExactlyOnce) {
    supersteps_through_the_board(0);
}

// The same supersteps with direct areas of 1 MiB (the default: every put and send of them
// fits) and of 4 KiB (the puts of up to 4000 bytes and the BSMP messages after them fit,
// the larger ones and everything after them to the same destination go in the board or in
// streams).
TEST(ShmDirect, SuperstepsThroughDirectAreasDeliverEveryByteExactlyOnce) {
    supersteps_through_the_board(std::size_t{1} << 20);
}

TEST(ShmDirect, SuperstepsThroughSmallDirectAreasDeliverEveryByteExactlyOnce) {
    supersteps_through_the_board(4096);
}

// Order across the two paths: to one destination, a put and a BSMP message that fit in the
// 4 KiB direct area, then an 8000-byte put and message that do not, then a small put and
// message that would fit again. The destination's area ends with the last put's 8 bytes over
// the large put's first 8 (the later put wins) and its queue holds the three messages in
// the order sent.
TEST(ShmDirect, CallsAfterOneThatDidNotFitKeepTheirOrder) {
    constexpr int kProcs = 2;
    const auto errors = on_one_host(
        kProcs,
        [&](int p, ThreadSession &, Transport &t) {
            bsp::rt::Runtime r(p, kProcs, &t, bsp::rt::MessagingConfig{});
            std::vector<unsigned char> area(8000, 0), big(8000), small(8, 0x11), last(8, 0x22);
            for (std::size_t i = 0; i < big.size(); ++i) {
                big[i] = static_cast<unsigned char>(i * 7 + 3);
            }
            r.push_reg("bsp_push_reg", area.data(), static_cast<std::int64_t>(area.size()));
            r.sync("bsp_sync");
            if (p == 0) {
                r.put("bsp_put", 1, small.data(), area.data(), 0, 8, false);
                r.send("bsp_send", 1, nullptr, small.data(), 8);
                r.put("bsp_put", 1, big.data(), area.data(), 0, 8000, false);
                r.send("bsp_send", 1, nullptr, big.data(), 8000);
                r.put("bsp_put", 1, last.data(), area.data(), 0, 8, false);
                r.send("bsp_send", 1, nullptr, last.data(), 8);
            }
            r.sync("bsp_sync");
            if (p == 1) {
                std::vector<unsigned char> want = big;
                std::fill(want.begin(), want.begin() + 8, 0x22);
                EXPECT_EQ(area, want);
                std::int64_t count = 0, bytes = 0;
                r.qsize(&count, &bytes);
                ASSERT_EQ(count, 3);
                ASSERT_EQ(bytes, 8016);
                for (const auto *m : {&small, &big, &last}) {
                    std::vector<unsigned char> got(m->size());
                    r.move("bsp_move", got.data(), static_cast<std::int64_t>(got.size()));
                    EXPECT_EQ(got, *m);
                }
            } else {
                // The calls that did not fit went in the board: no message either.
                EXPECT_EQ(r.messaging().stats().messages_sent, 0u);
            }
            r.sync("bsp_end", bsp::rt::SyncKind::End);
        },
        std::size_t{1} << 20, -1, 4096);
    EXPECT_EQ(errors[0], "");
    EXPECT_EQ(errors[1], "");
}

// A transport that shows this process a crafted direct area of process 1 in superstep 1
// instead of the real one (everything else is the shared-memory transport's).
class CraftedDirectArea : public Transport {
  public:
    CraftedDirectArea(Transport &t, std::vector<std::byte> area) : t_(t), area_(std::move(area)) {}
    std::string name() const override { return t_.name(); }
    std::string description() const override { return t_.description(); }
    std::size_t max_message_bytes() const override { return t_.max_message_bytes(); }
    void send(int dst, std::vector<std::byte> m, unsigned flags) override {
        t_.send(dst, std::move(m), flags);
    }
    std::optional<Received> receive() override { return t_.receive(); }
    void flush_sends() override { t_.flush_sends(); }
    void barrier_completed(std::uint64_t epoch) override { t_.barrier_completed(epoch); }
    void set_pacing_rate(std::uint64_t r) override { t_.set_pacing_rate(r); }
    void streams_follow_counts(bool follow) override { t_.streams_follow_counts(follow); }
    void expect_from(int src, std::uint32_t m, std::uint64_t b) override {
        t_.expect_from(src, m, b);
    }
    void expect_barrier_message(int src) override { t_.expect_barrier_message(src); }
    std::size_t board_blob_bytes() const override { return t_.board_blob_bytes(); }
    bsp::rt::BoardGather board_allgather(std::span<const std::byte> mine) override {
        return t_.board_allgather(mine);
    }
    std::span<std::byte> direct_out(int dst, std::uint64_t step) override {
        return t_.direct_out(dst, step);
    }
    std::span<const std::byte> direct_in(int src, std::uint64_t step) const override {
        return src == 1 && step == 1 ? std::span<const std::byte>(area_) : t_.direct_in(src, step);
    }
    void serve_in_background() override { t_.serve_in_background(); }
    void shutdown() override { t_.shutdown(); }

  private:
    Transport &t_;
    std::vector<std::byte> area_;
};

// Process 0 reads a corrupt direct area of process 1 in its second sync: a length beyond the
// area, a truncated record, a record chunk (not whole), a get reply, a put outside the
// registered area. Each is a ProtocolError naming it, never a read outside the area.
TEST(ShmDirect, CorruptDirectAreaIsAClearError) {
    auto le = [](std::vector<std::byte> &v, std::uint64_t x, int n) {
        for (int i = 0; i < n; ++i) {
            v.push_back(static_cast<std::byte>((x >> (8 * i)) & 0xff));
        }
    };
    // A record header (kind, slot, offset, total, chunk offset, length) and its data.
    auto area = [&](std::uint64_t used, int kind, std::uint64_t offset, std::uint32_t total,
                    std::uint32_t chunk_off, std::uint32_t len, std::size_t data) {
        std::vector<std::byte> v;
        le(v, used, 8);
        le(v, static_cast<std::uint64_t>(kind), 1);
        le(v, 0, 4);
        le(v, offset, 8);
        le(v, total, 4);
        le(v, chunk_off, 4);
        le(v, len, 4);
        v.resize(v.size() + data);
        v.resize(4096);
        return v;
    };
    const struct {
        std::vector<std::byte> area;
        const char *error;
    } cases[] = {
        {area(4089, 1, 0, 8, 0, 8, 8), "shared-memory direct area of process 1 is corrupt"},
        {area(30, 1, 0, 8, 0, 8, 8), "truncated messaging-layer message"},
        {area(33, 1, 0, 8, 4, 4, 4),
         "shared-memory direct area of process 1 with a record that is not a whole put or send"},
        {area(33, 3, 0, 8, 0, 8, 8),
         "shared-memory direct area of process 1 with a record that is not a whole put or send"},
        {area(33, 1, 60, 8, 0, 8, 8), "put from process 1 outside a registered area"},
    };
    for (const auto &c : cases) {
        const auto errors = on_one_host(
            2,
            [&](int p, ThreadSession &, Transport &t) {
                CraftedDirectArea crafted(t, c.area);
                bsp::rt::Runtime r(p, 2, p == 0 ? static_cast<Transport *>(&crafted) : &t,
                                   bsp::rt::MessagingConfig{});
                std::uint64_t word[8] = {};
                r.push_reg("bsp_push_reg", word, sizeof word);
                r.sync("bsp_sync");
                r.sync("bsp_sync");  // process 0 reads the crafted area, process 1 returns
            },
            std::size_t{1} << 20, -1, 4096);
        EXPECT_EQ(errors[0], c.error);
        EXPECT_EQ(errors[1], "");
    }
}
