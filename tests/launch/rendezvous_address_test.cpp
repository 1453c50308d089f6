// Rendezvous addresses: parsing, printing, listening and connecting.
#include "rendezvous_address.hpp"
#include "job_token.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace {

using bsp::launch::RendezvousAddress;

TEST(RendezvousAddress, ParsesUnixAndTcp) {
    auto u = RendezvousAddress::parse("unix:/tmp/x/control");
    EXPECT_EQ(u.kind, RendezvousAddress::Kind::unix_path);
    EXPECT_EQ(u.path, "/tmp/x/control");
    EXPECT_EQ(u.to_string(), "unix:/tmp/x/control");

    auto t = RendezvousAddress::parse("tcp:node01:20672");
    EXPECT_EQ(t.kind, RendezvousAddress::Kind::tcp);
    EXPECT_EQ(t.host, "node01");
    EXPECT_EQ(t.port, 20672);
    EXPECT_EQ(t.to_string(), "tcp:node01:20672");

    auto v6 = RendezvousAddress::parse("tcp:[fe80::1]:99");
    EXPECT_EQ(v6.host, "fe80::1");
    EXPECT_EQ(v6.to_string(), "tcp:[fe80::1]:99");
}

TEST(RendezvousAddress, RejectsMalformedAddresses) {
    for (const char *bad : {"", "unix:", "unix:relative", "tcp:host", "tcp::1", "tcp:h:", "tcp:h:x",
                            "tcp:h:65536", "udp:h:1", "/tmp/sock"}) {
        EXPECT_THROW(RendezvousAddress::parse(bad), std::invalid_argument) << bad;
    }
    std::string long_path = "unix:/" + std::string(200, 'a');
    EXPECT_THROW(RendezvousAddress::parse(long_path), std::invalid_argument);
}

TEST(RendezvousAddress, BracketsOnlyEncloseTheWholeHost) {
    auto message = [](const char *text) {
        try {
            RendezvousAddress::parse(text);
        } catch (const std::invalid_argument &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    // "[[x]]" used to parse as host "[x]", print as tcp:[x]:1 and parse back as host "x".
    EXPECT_EQ(message("tcp:[[x]]:1"),
              "rendezvous address 'tcp:[[x]]:1': '[' and ']' may only enclose the whole host, "
              "as in tcp:[::1]:PORT");
    for (const char *bad : {"tcp:[x:1", "tcp:x]:1", "tcp:[a]b:1", "tcp:a[b]:1", "tcp:[a]:[b]:1"}) {
        EXPECT_EQ(message(bad), "rendezvous address '" + std::string(bad) +
                                    "': '[' and ']' may only enclose the whole host, as in "
                                    "tcp:[::1]:PORT")
            << bad;
    }
    EXPECT_EQ(message("tcp:[]:1"), "rendezvous address 'tcp:[]:1': empty host between '[' and ']'");
    for (const char *good : {"tcp:[::1]:5", "tcp:[x]:1", "tcp:a:b:7", "tcp:node1:0"}) {
        auto a = RendezvousAddress::parse(good);
        auto b = RendezvousAddress::parse(a.to_string());
        EXPECT_EQ(b.host, a.host) << good;
        EXPECT_EQ(b.port, a.port) << good;
    }
    EXPECT_EQ(RendezvousAddress::parse("tcp:[x]:1").to_string(), "tcp:x:1");
    EXPECT_EQ(RendezvousAddress::parse("tcp:a:b:7").to_string(), "tcp:[a:b]:7");
}

TEST(RendezvousAddress, ListenAndConnectOverUnixAndTcp) {
    std::string path =
        std::filesystem::temp_directory_path() / ("rdv-test-" + std::to_string(::getpid()));
    auto u = RendezvousAddress::parse("unix:" + path);
    auto listener = bsp::launch::listen_on(u);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    auto c = bsp::launch::connect_to(u, deadline);
    auto s = bsp::launch::accept_connection(listener.get());
    EXPECT_TRUE(static_cast<bool>(s));
    ASSERT_EQ(::write(c.get(), "x", 1), 1);
    char got = 0;
    ASSERT_EQ(::read(s.get(), &got, 1), 1);
    EXPECT_EQ(got, 'x');
    ::unlink(path.c_str());

    auto t = RendezvousAddress::parse("tcp:127.0.0.1:0");
    auto tl = bsp::launch::listen_on(t);
    t.port = bsp::launch::bound_tcp_port(tl.get());
    EXPECT_NE(t.port, 0);
    auto tc = bsp::launch::connect_to(t, deadline);
    EXPECT_TRUE(static_cast<bool>(bsp::launch::accept_connection(tl.get())));
}

TEST(RendezvousAddress, ConnectGivesUpAtTheDeadline) {
    auto u = RendezvousAddress::parse("unix:/nonexistent-dir/control");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    try {
        bsp::launch::connect_to(u, deadline);
        FAIL() << "connected to nothing";
    } catch (const std::system_error &e) {
        EXPECT_EQ(e.code().value(), ENOENT);
    }
}

// A TCP rendezvous binds only the address it is given, never every interface.
TEST(RendezvousAddress, TcpListenerBindsOnlyItsAddress) {
    auto l = bsp::launch::listen_on(RendezvousAddress::parse("tcp:127.0.0.1:0"));
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    ASSERT_EQ(::getsockname(l.get(), reinterpret_cast<sockaddr *>(&ss), &len), 0);
    ASSERT_EQ(ss.ss_family, AF_INET);
    EXPECT_EQ(ntohl(reinterpret_cast<sockaddr_in *>(&ss)->sin_addr.s_addr), INADDR_LOOPBACK);
    // An address this machine does not have (TEST-NET-1) cannot be bound.
    try {
        bsp::launch::listen_on(RendezvousAddress::parse("tcp:192.0.2.1:0"));
        FAIL() << "bound an address of another machine";
    } catch (const std::system_error &e) {
        EXPECT_EQ(e.code().value(), EADDRNOTAVAIL);
        EXPECT_NE(std::string(e.what()).find("not an address of this machine"), std::string::npos)
            << e.what();
    }
}

TEST(JobToken, SameTokenComparesWholeTokens) {
    EXPECT_TRUE(bsp::launch::same_token("0123456789abcdef", "0123456789abcdef"));
    EXPECT_FALSE(bsp::launch::same_token("0123456789abcdef", "0123456789abcdee"));
    EXPECT_FALSE(bsp::launch::same_token("1123456789abcdef", "0123456789abcdef"));
    EXPECT_FALSE(bsp::launch::same_token("0123456789abcdef", "0123456789abcde"));
    EXPECT_FALSE(bsp::launch::same_token("", "x"));
    EXPECT_TRUE(bsp::launch::same_token("", ""));
    auto t = bsp::launch::make_job_token();
    EXPECT_EQ(t.size(), 32u);
    EXPECT_NE(t, bsp::launch::make_job_token());
}

}  // namespace
