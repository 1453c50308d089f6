// The control protocol's framing and body encoding (userlib/src/launch/wire.cpp).
#include "wire.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <stdexcept>

#include "unique_fd.hpp"

namespace {

using namespace bsp::launch;

std::vector<std::byte> bytes_of(std::string_view s) {
    auto b = std::as_bytes(std::span(s.data(), s.size()));
    return {b.begin(), b.end()};
}

struct Pair {
    UniqueFd a, b;
    Pair() {
        int p[2];
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, p), 0);
        a.reset(p[0]);
        b.reset(p[1]);
    }
};

TEST(Wire, EncoderAndDecoderRoundTrip) {
    auto body = wire::Encoder().u32(7).string("token").bytes(bytes_of("")).u32(0xfffffffe).data();
    // 4 + (4+5) + 4 + 4 bytes, integers big-endian.
    ASSERT_EQ(body.size(), 21u);
    EXPECT_EQ(body[3], std::byte{7});
    EXPECT_EQ(body[0], std::byte{0});
    wire::Decoder d(body);
    EXPECT_EQ(d.u32(), 7u);
    EXPECT_EQ(d.string(), "token");
    EXPECT_TRUE(d.bytes().empty());
    EXPECT_EQ(d.u32(), 0xfffffffeu);
    EXPECT_TRUE(d.done());
    EXPECT_THROW(d.u32(), std::runtime_error);
}

TEST(Wire, DecoderRejectsLengthsBeyondTheBody) {
    auto body = wire::Encoder().u32(100).data();  // claims 100 bytes, has none
    wire::Decoder d(body);
    EXPECT_THROW(d.bytes(), std::runtime_error);
}

TEST(Wire, ReaderSplitsMessagesFedByteByByte) {
    Pair p;
    ASSERT_TRUE(wire::send_message(p.a.get(), wire::Type::allgather, bytes_of("hello")));
    ASSERT_TRUE(wire::send_message(p.a.get(), wire::Type::finish, {}));
    std::vector<std::byte> all(13 + 8);
    ASSERT_EQ(::read(p.b.get(), all.data(), all.size()), 21);
    Pair q;
    wire::Reader r;
    std::vector<wire::Message> got;
    for (std::byte b : all) {
        ASSERT_EQ(::write(q.a.get(), &b, 1), 1);
        ASSERT_EQ(r.fill(q.b.get()), wire::Reader::Fill::data);
        while (auto m = r.next()) {
            got.push_back(std::move(*m));
        }
    }
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].type, wire::Type::allgather);
    EXPECT_EQ(got[0].body, bytes_of("hello"));
    EXPECT_EQ(got[1].type, wire::Type::finish);
    EXPECT_TRUE(got[1].body.empty());
    EXPECT_EQ(r.fill(q.b.get()), wire::Reader::Fill::would_block);
    q.a.reset();
    EXPECT_EQ(r.fill(q.b.get()), wire::Reader::Fill::eof);
}

TEST(Wire, ReaderRejectsUnknownTypesAndOversizedFrames) {
    for (auto header : {wire::Encoder().u32(99).u32(0).data(),
                        wire::Encoder().u32(2).u32(wire::kMaxBody + 1).data()}) {
        Pair p;
        ASSERT_EQ(::write(p.a.get(), header.data(), header.size()), 8);
        wire::Reader r;
        ASSERT_EQ(r.fill(p.b.get()), wire::Reader::Fill::data);
        EXPECT_THROW(r.next(), std::runtime_error);
    }
}

// Found by tests/fuzz/launch_wire_fuzz: the reader dropped the messages it had returned
// only when a read ended exactly at a message boundary, so a peer whose reads always
// ended inside a message made it keep everything it ever sent.
TEST(Wire, ReaderHoldsOnlyBytesNotYetReturned) {
    Pair p;
    wire::Reader r;
    const auto frame = wire::Encoder().u32(2).u32(4).u32(0x01020304).data();  // allgather
    std::size_t returned = 0;
    for (int i = 0; i < 100; ++i) {
        // Each write completes the previous message and starts the next one.
        const std::size_t cut = i == 0 ? 0 : 5;
        std::vector<std::byte> w(frame.begin() + static_cast<std::ptrdiff_t>(cut), frame.end());
        w.insert(w.end(), frame.begin(), frame.begin() + 5);
        ASSERT_EQ(::write(p.a.get(), w.data(), w.size()), static_cast<ssize_t>(w.size()));
        ASSERT_EQ(r.fill(p.b.get()), wire::Reader::Fill::data);
        EXPECT_EQ(r.buffered(), frame.size() + 5) << "after write " << i;  // 5 left over + w
        while (auto m = r.next()) {
            EXPECT_EQ(m->type, wire::Type::allgather);
            EXPECT_EQ(m->body.size(), 4u);
            ++returned;
        }
    }
    EXPECT_EQ(returned, 100u);
}

TEST(Wire, SendToAClosedPeerFails) {
    Pair p;
    p.b.reset();
    EXPECT_FALSE(wire::send_message(p.a.get(), wire::Type::finish, {}));
    EXPECT_EQ(errno, EPIPE);
}

}  // namespace
