// Rendezvous addresses: parsing, printing, listening and connecting.
#include "rendezvous_address.hpp"

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

}  // namespace
