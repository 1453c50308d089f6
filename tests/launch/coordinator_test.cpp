// The coordinator driven directly: fake processes speak the wire protocol over
// socketpairs, the test plays the owner's event loop.
#include "coordinator.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous_address.hpp"
#include "wire.hpp"

namespace {

using namespace bsp::launch;

std::vector<std::byte> bytes_of(std::string_view s) {
    auto b = std::as_bytes(std::span(s.data(), s.size()));
    return {b.begin(), b.end()};
}

class FakeProcess {
  public:
    explicit FakeProcess(UniqueFd fd) : fd_(std::move(fd)) {}
    void hello(int pid, int nprocs, const std::string &token = "tok") {
        send(wire::Type::hello, wire::Encoder()
                                    .u32(wire::kVersion)
                                    .u32(static_cast<std::uint32_t>(pid))
                                    .u32(static_cast<std::uint32_t>(nprocs))
                                    .string(token)
                                    .data());
    }
    void send(wire::Type t, const std::vector<std::byte> &body) {
        ASSERT_TRUE(wire::send_message(fd_.get(), t, body));
    }
    // The next message after the welcome, or nullopt if there is none (yet) or the
    // connection closed.
    std::optional<wire::Message> receive() {
        reader_.fill(fd_.get());
        auto m = reader_.next();
        if (m && m->type == wire::Type::welcome) {
            ++welcomes;
            m = reader_.next();
        }
        return m;
    }
    int welcomes = 0;
    bool closed_by_peer() {
        char c;
        return ::recv(fd_.get(), &c, 1, MSG_DONTWAIT | MSG_PEEK) == 0;
    }
    void close() { fd_.reset(); }

  private:
    UniqueFd fd_;
    wire::Reader reader_;
};

class CoordinatorTest : public ::testing::Test {
  protected:
    void make(int nprocs, std::chrono::milliseconds join_timeout = std::chrono::seconds(60)) {
        Coordinator::Options o;
        o.nprocs = nprocs;
        o.token = "tok";
        o.name = "test";
        o.join_timeout = join_timeout;
        o.describe_loss = [this](int pid) {
            losses.push_back(pid);
            return Outcome{pid, 42, "test: process " + std::to_string(pid) + " died"};
        };
        o.on_teardown = [this](const Outcome &out) { teardowns.push_back(out); };
        coordinator = std::make_unique<Coordinator>(std::move(o));
        for (int i = 0; i < nprocs + 1; ++i) {
            int p[2];
            ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, p), 0);
            coordinator->adopt(UniqueFd(p[0]));
            procs.emplace_back(UniqueFd(p[1]));
        }
    }
    // Runs the owner's loop until nothing is ready.
    void pump() {
        for (int round = 0; round < 100; ++round) {
            std::vector<pollfd> fds;
            coordinator->append_pollfds(fds);
            if (::poll(fds.data(), fds.size(), 10) <= 0) {
                return;
            }
            for (const auto &f : fds) {
                if (f.revents != 0) {
                    coordinator->handle(f);
                }
            }
        }
    }
    static std::uint32_t status_of(const wire::Message &m) {
        wire::Decoder d(m.body);
        return d.u32();
    }

    std::unique_ptr<Coordinator> coordinator;
    std::vector<FakeProcess> procs;
    std::vector<int> losses;
    std::vector<Outcome> teardowns;
};

TEST_F(CoordinatorTest, AllgatherOrdersBlobsByPid) {
    make(3);
    for (int p : {2, 0, 1}) {
        procs[static_cast<std::size_t>(p)].hello(p, 3);
    }
    procs[1].send(wire::Type::allgather, bytes_of("one"));
    procs[2].send(wire::Type::allgather, bytes_of(""));
    pump();
    EXPECT_FALSE(procs[1].receive()) << "no result before every process contributed";
    procs[0].send(wire::Type::allgather, bytes_of("zero!"));
    pump();
    for (int p = 0; p < 3; ++p) {
        auto m = procs[static_cast<std::size_t>(p)].receive();
        ASSERT_TRUE(m);
        EXPECT_EQ(m->type, wire::Type::gathered);
        wire::Decoder d(m->body);
        EXPECT_EQ(d.u32(), 3u);
        EXPECT_EQ(d.bytes(), bytes_of("zero!"));
        EXPECT_EQ(d.bytes(), bytes_of("one"));
        EXPECT_EQ(d.bytes(), bytes_of(""));
        EXPECT_TRUE(d.done());
    }
    for (int p = 0; p < 3; ++p) {
        procs[static_cast<std::size_t>(p)].send(wire::Type::finish, {});
    }
    pump();
    EXPECT_EQ(coordinator->state(), Coordinator::State::finished);
    for (int p = 0; p < 3; ++p) {
        auto m = procs[static_cast<std::size_t>(p)].receive();
        ASSERT_TRUE(m);
        EXPECT_EQ(m->type, wire::Type::finished);
    }
    EXPECT_TRUE(teardowns.empty());
    EXPECT_TRUE(losses.empty());
}

TEST_F(CoordinatorTest, AbortTearsDownOnceAndAcknowledges) {
    make(3);
    for (int p = 0; p < 3; ++p) {
        procs[static_cast<std::size_t>(p)].hello(p, 3);
    }
    procs[1].send(wire::Type::abort, wire::Encoder().u32(1).string("boom\n").data());
    pump();
    procs[2].send(wire::Type::abort, wire::Encoder().u32(5).string("second").data());
    pump();
    ASSERT_EQ(teardowns.size(), 1u);
    EXPECT_EQ(teardowns[0].culprit, 1);
    EXPECT_EQ(teardowns[0].status, 1);
    EXPECT_EQ(teardowns[0].message, "boom");
    auto m0 = procs[0].receive();
    ASSERT_TRUE(m0);
    EXPECT_EQ(m0->type, wire::Type::teardown);
    EXPECT_EQ(status_of(*m0), 1u);
    auto m1 = procs[1].receive();
    ASSERT_TRUE(m1);
    EXPECT_EQ(m1->type, wire::Type::abort_ack);
    EXPECT_EQ(status_of(*m1), 1u);
    auto m2 = procs[2].receive();
    ASSERT_TRUE(m2);
    EXPECT_EQ(m2->type, wire::Type::teardown);
    auto m2b = procs[2].receive();
    ASSERT_TRUE(m2b);
    EXPECT_EQ(m2b->type, wire::Type::abort_ack) << "a later abort is acknowledged quietly";
    EXPECT_EQ(status_of(*m2b), 1u) << "with the job's status";
}

TEST_F(CoordinatorTest, EmptyAbortMessageNamesTheProcess) {
    make(2);
    procs[0].hello(0, 2);
    procs[0].send(wire::Type::abort, wire::Encoder().u32(1).string("").data());
    pump();
    ASSERT_EQ(teardowns.size(), 1u);
    EXPECT_EQ(teardowns[0].message, "test: process 0 aborted");
}

TEST_F(CoordinatorTest, LostConnectionIsDescribedByTheOwner) {
    make(2);
    procs[0].hello(0, 2);
    procs[1].hello(1, 2);
    pump();
    procs[1].close();
    pump();
    EXPECT_EQ(losses, std::vector<int>{1});
    ASSERT_EQ(teardowns.size(), 1u);
    EXPECT_EQ(teardowns[0].message, "test: process 1 died");
    auto m = procs[0].receive();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->type, wire::Type::teardown);
    EXPECT_EQ(status_of(*m), 42u);
}

TEST_F(CoordinatorTest, ConnectionWithoutHelloClosingIsNotALoss) {
    make(2);
    procs[2].close();
    pump();
    EXPECT_TRUE(losses.empty());
    EXPECT_EQ(coordinator->state(), Coordinator::State::running);
}

TEST_F(CoordinatorTest, JoinedProcessesAreWelcomed) {
    make(2);
    procs[1].hello(1, 2);
    pump();
    EXPECT_FALSE(procs[1].receive());
    EXPECT_EQ(procs[1].welcomes, 1);
}

TEST_F(CoordinatorTest, StrangersAreRefused) {
    make(2);
    procs[2].hello(0, 2, "wrong-token");
    pump();
    auto m = procs[2].receive();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->type, wire::Type::refused);
    wire::Decoder d(m->body);
    EXPECT_EQ(d.u32(), static_cast<std::uint32_t>(wire::Refusal::other_job));
    EXPECT_EQ(d.string(), "it is the coordinator of another job (job token mismatch)");
    EXPECT_EQ(procs[2].welcomes, 0);
    EXPECT_TRUE(procs[2].closed_by_peer()) << "closed without a welcome";
    EXPECT_EQ(coordinator->state(), Coordinator::State::running);
    EXPECT_FALSE(coordinator->has_joined(0));
}

TEST_F(CoordinatorTest, MisconfiguredProcessesEndTheJob) {
    make(2);
    procs[0].hello(0, 2);
    procs[1].hello(0, 2);
    pump();
    ASSERT_EQ(teardowns.size(), 1u);
    EXPECT_EQ(teardowns[0].message, "test: two processes joined with the same pid 0");

    teardowns.clear();
    procs.clear();
    make(2);
    procs[0].hello(1, 3);
    pump();
    ASSERT_EQ(teardowns.size(), 1u);
    EXPECT_EQ(teardowns[0].message, "test: process 1 believes the job has 3 processes, not 2");

    teardowns.clear();
    procs.clear();
    make(2);
    procs[0].hello(2, 2);
    pump();
    ASSERT_EQ(teardowns.size(), 1u);
    EXPECT_EQ(teardowns[0].message, "test: a process joined with pid 2 outside 0..1");
}

TEST_F(CoordinatorTest, MismatchedCollectivesEndTheJob) {
    make(3);
    for (int p = 0; p < 3; ++p) {
        procs[static_cast<std::size_t>(p)].hello(p, 3);
    }
    procs[2].send(wire::Type::allgather, bytes_of("x"));
    pump();
    procs[0].send(wire::Type::finish, {});
    pump();
    ASSERT_EQ(teardowns.size(), 1u);
    EXPECT_EQ(teardowns[0].culprit, 0);
    EXPECT_EQ(teardowns[0].message,
              "test: processes disagree on the next collective: process(es) 0 ended the job "
              "(finish) while process(es) 2 wait in an allgather (collective calls must match)");
}

TEST_F(CoordinatorTest, MalformedMessageEndsTheJob) {
    make(2);
    procs[0].hello(0, 2);
    procs[0].send(wire::Type::abort, wire::Encoder().u32(1).data());  // message missing
    pump();
    ASSERT_EQ(teardowns.size(), 1u);
    EXPECT_EQ(teardowns[0].message,
              "test: process 0 broke the control protocol: control protocol: truncated message");
}

TEST_F(CoordinatorTest, JoinTimeoutNamesTheMissingProcesses) {
    make(3, std::chrono::milliseconds(1500));
    procs[1].hello(1, 3);
    pump();
    ASSERT_TRUE(coordinator->next_deadline());
    coordinator->on_time(*coordinator->next_deadline() - std::chrono::milliseconds(1));
    EXPECT_TRUE(teardowns.empty());
    coordinator->on_time(*coordinator->next_deadline());
    ASSERT_EQ(teardowns.size(), 1u);
    EXPECT_EQ(teardowns[0].culprit, -1);
    EXPECT_EQ(teardowns[0].message,
              "test: only 1 of 3 processes joined the job within 1.5 s (missing: 0, 2)");
}

TEST_F(CoordinatorTest, LateJoinerOfATornDownJobIsToldAtOnce) {
    make(2);
    procs[0].hello(0, 2);
    pump();
    coordinator->tear_down({-1, 124, "test: time is up"});
    procs[1].hello(1, 2);
    pump();
    auto m = procs[1].receive();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->type, wire::Type::teardown);
    EXPECT_EQ(status_of(*m), 124u);
}

TEST_F(CoordinatorTest, ListenerStaysOpenForLateProcessesAfterATeardown) {
    make(2);
    std::string path =
        std::filesystem::temp_directory_path() / ("coord-test-" + std::to_string(::getpid()));
    auto address = RendezvousAddress::parse("unix:" + path);
    coordinator->set_listener(listen_on(address));
    coordinator->tear_down({-1, 124, "test: time is up"});
    FakeProcess late(
        connect_to(address, std::chrono::steady_clock::now() + std::chrono::seconds(5)));
    late.hello(1, 2);
    pump();
    ::unlink(path.c_str());
    auto m = late.receive();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->type, wire::Type::teardown);
    EXPECT_EQ(status_of(*m), 124u);
}

// A process of the job that the teardown ends while it is joining closes its connection
// before its hello: that is no stranger to report (bsprun printed "refused a control
// connection that is not from this job" for its own process 1 under load).
TEST_F(CoordinatorTest, ConnectionClosingBeforeItsHelloAfterATeardownIsNotRefused) {
    make(2);
    std::string path =
        std::filesystem::temp_directory_path() / ("coord-joining-" + std::to_string(::getpid()));
    auto address = RendezvousAddress::parse("unix:" + path);
    coordinator->set_listener(listen_on(address));
    FakeProcess joining(
        connect_to(address, std::chrono::steady_clock::now() + std::chrono::seconds(5)));
    pump();
    ::unlink(path.c_str());
    coordinator->tear_down({-1, 1, "test: process 2 exited"});
    joining.close();
    pump();
    EXPECT_EQ(coordinator->refused_count(), 0);
    // While the job runs, the same is a stranger and is counted.
    make(2);
    coordinator->set_listener(listen_on(address));
    FakeProcess stranger(
        connect_to(address, std::chrono::steady_clock::now() + std::chrono::seconds(5)));
    pump();
    ::unlink(path.c_str());
    stranger.close();
    pump();
    EXPECT_EQ(coordinator->refused_count(), 1);
}

// Connections through the listener that never join: closed when they wait for their hello
// longer than hello_timeout, the oldest closed when more than max_unauthenticated wait,
// every one counted; the job goes on.
TEST_F(CoordinatorTest, StrangersAreTimedOutAndLimited) {
    make(2);
    std::string path =
        std::filesystem::temp_directory_path() / ("coord-strangers-" + std::to_string(::getpid()));
    auto address = RendezvousAddress::parse("unix:" + path);
    coordinator->set_listener(listen_on(address));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    std::vector<FakeProcess> strangers;
    for (int i = 0; i < 40; ++i) {
        strangers.emplace_back(connect_to(address, deadline));
        pump();
    }
    ::unlink(path.c_str());
    EXPECT_EQ(coordinator->unauthenticated_count(), 32);
    EXPECT_EQ(coordinator->refused_count(), 8);
    for (int i = 0; i < 40; ++i) {
        EXPECT_EQ(strangers[static_cast<std::size_t>(i)].closed_by_peer(), i < 8) << i;
    }
    // The time-out is due 10 s after the oldest waiting connection arrived.
    auto due = coordinator->next_deadline();
    ASSERT_TRUE(due);
    EXPECT_LE(*due, std::chrono::steady_clock::now() + std::chrono::seconds(10));
    coordinator->on_time(*due + std::chrono::seconds(1));
    EXPECT_EQ(coordinator->unauthenticated_count(), 0);
    EXPECT_EQ(coordinator->refused_count(), 40);
    // The job is not disturbed.
    procs[0].hello(0, 2);
    procs[1].hello(1, 2);
    pump();
    EXPECT_TRUE(coordinator->has_joined(0));
    EXPECT_TRUE(coordinator->has_joined(1));
    EXPECT_EQ(coordinator->state(), Coordinator::State::running);
}

// Before its hello a connection may send only what a hello needs.
TEST_F(CoordinatorTest, LargeFrameBeforeTheHelloIsRefused) {
    make(2);
    std::string path =
        std::filesystem::temp_directory_path() / ("coord-large-" + std::to_string(::getpid()));
    auto address = RendezvousAddress::parse("unix:" + path);
    coordinator->set_listener(listen_on(address));
    FakeProcess stranger(
        connect_to(address, std::chrono::steady_clock::now() + std::chrono::seconds(5)));
    ::unlink(path.c_str());
    pump();
    std::vector<std::byte> big(wire::kMaxHelloBody + 1, std::byte{'t'});
    stranger.send(wire::Type::hello, big);
    pump();
    EXPECT_TRUE(stranger.closed_by_peer());
    EXPECT_EQ(coordinator->refused_count(), 1);
    EXPECT_EQ(coordinator->state(), Coordinator::State::running);
}

}  // namespace
