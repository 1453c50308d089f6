// libFuzzer target of the launcher's control protocol (userlib/src/launch/wire.cpp) and of
// the coordinator that parses it (coordinator.cpp). The first byte picks the mode:
//   0  framing: the input, cut into fuzzer-chosen pieces, is written into one end of a
//      socket pair and read by wire::Reader from the other. The messages it returns must
//      be exactly those a reference parser finds in the byte stream, it must stop with
//      std::runtime_error (nothing else) at the first bad frame, and after a read it must
//      hold exactly the bytes not yet returned;
//   1  bodies: raw bytes through wire::Decoder the way the coordinator and the processes
//      decode hello, abort, teardown and gathered bodies (std::runtime_error only), and a
//      round trip Encoder -> send_message -> Reader -> Decoder of fuzzer-chosen values;
//   2  a coordinator of 1 to 3 processes with up to 3 adopted connections, each fed
//      well-formed messages with fuzzer-chosen fields (hello, allgather, finish, abort),
//      raw bytes, or a close: no exception may leave handle(), every message it sends
//      back must be a well-formed coordinator -> process message, and a job that ended
//      abnormally has an outcome.
//
// Bounded run (tests/check.sh fuzz): build/fuzz/fuzz/launch_wire_fuzz -max_total_time=30
//   -max_len=4096 <corpus dir>
#include <fuzzer/FuzzedDataProvider.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "coordinator.hpp"
#include "unique_fd.hpp"
#include "wire.hpp"

namespace {

using namespace bsp::launch;

[[noreturn]] void fail(const char *why) {
    std::fprintf(stderr, "launch_wire_fuzz: %s\n", why);
    std::abort();
}

std::vector<std::byte> to_bytes(const std::vector<std::uint8_t> &v) {
    std::vector<std::byte> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        out[i] = static_cast<std::byte>(v[i]);
    return out;
}

std::uint32_t be32(const std::byte *p) {
    return (std::to_integer<std::uint32_t>(p[0]) << 24) |
           (std::to_integer<std::uint32_t>(p[1]) << 16) |
           (std::to_integer<std::uint32_t>(p[2]) << 8) | std::to_integer<std::uint32_t>(p[3]);
}

struct SocketPair {
    UniqueFd a, b;
    SocketPair() {
        int p[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p) != 0)
            fail("socketpair");
        a.reset(p[0]);
        b.reset(p[1]);
    }
};

// The message types wire::Reader accepts, asked of the Reader itself once (the protocol
// may gain types): they must be 1..last with last >= welcome, and nothing else.
std::uint32_t last_type = 0;

void learn_types() {
    for (std::uint32_t t = 0; t < 64; ++t) {
        SocketPair sp;
        const std::byte header[8] = {
            std::byte{0}, std::byte{0}, std::byte{0}, static_cast<std::byte>(t),
            std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}};
        if (::send(sp.a.get(), header, sizeof header, MSG_NOSIGNAL) != sizeof header)
            fail("short write into the socket pair");
        wire::Reader r;
        if (r.fill(sp.b.get()) != wire::Reader::Fill::data)
            fail("fill() of a header");
        bool ok = true;
        try {
            if (!r.next())
                fail("an empty message of a known type was not returned");
        } catch (const std::runtime_error &) {
            ok = false;
        }
        if (ok && (t == 0 || t != last_type + 1))
            fail("the accepted message types are not 1..last");
        if (ok)
            last_type = t;
    }
    if (last_type < static_cast<std::uint32_t>(wire::Type::welcome))
        fail("the reader refuses a message type of the protocol");
}

bool good_header(std::uint32_t type, std::uint32_t len) {
    return type >= 1 && type <= last_type && len <= wire::kMaxBody;
}

// ---- mode 0: framing -------------------------------------------------------------------

void framing(FuzzedDataProvider &in) {
    SocketPair sp;
    wire::Reader reader;
    std::vector<std::byte> stream;  // everything written
    std::size_t returned = 0;       // bytes of the messages returned so far
    bool broken = false;
    while (in.remaining_bytes() > 0 && !broken) {
        const auto piece =
            to_bytes(in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(1, 700)));
        if (::send(sp.a.get(), piece.data(), piece.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(piece.size()))
            fail("short write into the socket pair");
        stream.insert(stream.end(), piece.begin(), piece.end());
        for (;;) {
            const auto f = reader.fill(sp.b.get());
            if (f == wire::Reader::Fill::would_block)
                break;
            if (f != wire::Reader::Fill::data)
                fail("fill() reported eof or an error on an open socket");
            if (reader.buffered() != stream.size() - returned)
                fail("reader holds other bytes than those not yet returned");
            try {
                while (auto m = reader.next()) {
                    // The reference: the frame at `returned` in the stream.
                    if (stream.size() - returned < 8)
                        fail("message returned from less than a header");
                    const std::uint32_t type = be32(stream.data() + returned);
                    const std::uint32_t len = be32(stream.data() + returned + 4);
                    if (!good_header(type, len))
                        fail("bad frame returned as a message");
                    if (static_cast<std::uint32_t>(m->type) != type || m->body.size() != len ||
                        stream.size() - returned - 8 < len ||
                        !std::equal(m->body.begin(), m->body.end(),
                                    stream.begin() + static_cast<std::ptrdiff_t>(returned + 8)))
                        fail("message differs from its frame");
                    returned += 8 + len;
                }
            } catch (const std::runtime_error &) {
                // Only a bad header may stop the reader.
                if (stream.size() - returned < 8)
                    fail("reader threw on an incomplete header");
                const std::uint32_t type = be32(stream.data() + returned);
                const std::uint32_t len = be32(stream.data() + returned + 4);
                if (good_header(type, len))
                    fail("reader threw on a good header");
                broken = true;
                break;
            }
            // What is left is one incomplete frame.
            const std::size_t left = stream.size() - returned;
            if (left >= 8 && left >= 8 + std::size_t{be32(stream.data() + returned + 4)})
                fail("a complete frame was not returned");
        }
    }
}

// ---- mode 1: bodies --------------------------------------------------------------------

void bodies(FuzzedDataProvider &in) {
    const int which = in.ConsumeIntegralInRange<int>(0, 4);
    if (which == 4) {  // round trip
        wire::Encoder e;
        std::vector<std::uint32_t> ints;
        std::vector<std::string> strings;
        const auto n = in.ConsumeIntegralInRange<std::size_t>(0, 8);
        for (std::size_t k = 0; k < n; ++k) {
            ints.push_back(in.ConsumeIntegral<std::uint32_t>());
            strings.push_back(in.ConsumeRandomLengthString(300));
            e.u32(ints.back()).string(strings.back());
        }
        const auto tail = to_bytes(in.ConsumeRemainingBytes<std::uint8_t>());
        e.bytes(tail);
        wire::Decoder d(e.data());
        for (std::size_t k = 0; k < n; ++k)
            if (d.u32() != ints[k] || d.string() != strings[k])
                fail("encoder/decoder round trip");
        if (d.bytes() != tail || !d.done())
            fail("encoder/decoder round trip of bytes");
        // And as the body of a message through send_message and the Reader.
        SocketPair sp;
        if (!wire::send_message(sp.a.get(), wire::Type::allgather, e.data()))
            fail("send_message of a small body failed");
        wire::Reader r;
        std::optional<wire::Message> m;
        while (!m && r.fill(sp.b.get()) == wire::Reader::Fill::data)
            m = r.next();
        if (!m || m->type != wire::Type::allgather || m->body != e.data() || r.next())
            fail("send_message/Reader round trip");
        return;
    }
    const auto body = to_bytes(in.ConsumeRemainingBytes<std::uint8_t>());
    wire::Decoder d(body);
    try {
        switch (which) {
            case 0: {  // hello
                d.u32();
                d.u32();
                d.u32();
                if (d.string().size() > body.size())
                    fail("string longer than its body");
                break;
            }
            case 1:  // abort
                d.u32();
                if (d.string().size() > body.size())
                    fail("string longer than its body");
                break;
            case 2:  // teardown, abort_ack
                d.u32();
                break;
            default: {  // gathered
                const std::uint32_t n = d.u32();
                std::size_t total = 0;
                for (std::uint32_t i = 0; i < n && !d.done(); ++i)
                    total += d.bytes().size();
                if (total > body.size())
                    fail("blobs longer than their body");
                break;
            }
        }
    } catch (const std::runtime_error &) {
    }
}

// ---- mode 2: a coordinator -------------------------------------------------------------

std::vector<std::byte> frame(wire::Type t, const std::vector<std::byte> &body) {
    std::vector<std::byte> f;
    const auto put = [&f](std::uint32_t v) {
        for (int s = 24; s >= 0; s -= 8)
            f.push_back(static_cast<std::byte>((v >> s) & 0xff));
    };
    put(static_cast<std::uint32_t>(t));
    put(static_cast<std::uint32_t>(body.size()));
    f.insert(f.end(), body.begin(), body.end());
    return f;
}

// Reads what the coordinator sent to one process: only coordinator -> process messages.
void drain(int fd, wire::Reader &r) {
    for (;;) {
        const auto f = r.fill(fd);
        if (f != wire::Reader::Fill::data)
            return;
        try {
            while (auto m = r.next()) {
                wire::Decoder d(m->body);
                switch (m->type) {
                    case wire::Type::welcome:
                    case wire::Type::finished:
                        if (!d.done())
                            fail("welcome/finished with a body");
                        break;
                    case wire::Type::teardown:
                    case wire::Type::abort_ack:
                        d.u32();
                        if (!d.done())
                            fail("teardown/abort_ack body is not one u32");
                        break;
                    case wire::Type::gathered: {
                        const std::uint32_t n = d.u32();
                        for (std::uint32_t i = 0; i < n; ++i)
                            d.bytes();
                        if (!d.done())
                            fail("gathered body with trailing bytes");
                        break;
                    }
                    case wire::Type::refused:
                        d.u32();
                        d.string();
                        if (!d.done())
                            fail("refused body is not a reason code and a text");
                        break;
                    case wire::Type::hello:
                    case wire::Type::allgather:
                    case wire::Type::finish:
                    case wire::Type::abort:
                        fail("coordinator sent a process -> coordinator message");
                    default:
                        break;  // a type this target does not know yet
                }
            }
        } catch (const std::runtime_error &) {
            fail("coordinator sent a malformed message");
        }
    }
}

void coordinator(FuzzedDataProvider &in) {
    Coordinator::Options o;
    o.nprocs = in.ConsumeIntegralInRange<int>(1, 3);
    o.token = "job-token";
    o.name = "fuzz";
    o.describe_loss = [](int pid) { return Outcome{pid, 1, "lost"}; };
    Coordinator c(o);
    const int nconn = in.ConsumeIntegralInRange<int>(1, 3);
    std::vector<UniqueFd> ends;  // the processes' ends
    std::vector<int> theirs;     // the coordinator's ends
    std::vector<wire::Reader> readers(static_cast<std::size_t>(nconn));
    for (int k = 0; k < nconn; ++k) {
        SocketPair sp;
        theirs.push_back(sp.b.get());
        c.adopt(std::move(sp.b));
        ends.push_back(std::move(sp.a));
    }
    for (int step = 0; step < 32 && in.remaining_bytes() > 0; ++step) {
        const auto k = in.ConsumeIntegralInRange<std::size_t>(0, ends.size() - 1);
        std::vector<std::byte> bytes;
        switch (in.ConsumeIntegralInRange<int>(0, 5)) {
            case 0: {
                wire::Encoder e;
                e.u32(in.ConsumeBool() ? wire::kVersion : in.ConsumeIntegral<std::uint32_t>());
                e.u32(in.ConsumeIntegralInRange<std::uint32_t>(0, 4));
                e.u32(in.ConsumeBool() ? static_cast<std::uint32_t>(o.nprocs)
                                       : in.ConsumeIntegral<std::uint32_t>());
                e.string(in.ConsumeBool() ? o.token : in.ConsumeRandomLengthString(16));
                bytes = frame(wire::Type::hello, e.data());
                break;
            }
            case 1:
                bytes = frame(wire::Type::allgather,
                              to_bytes(in.ConsumeBytes<std::uint8_t>(
                                  in.ConsumeIntegralInRange<std::size_t>(0, 64))));
                break;
            case 2:
                bytes = frame(wire::Type::finish, {});
                break;
            case 3: {
                wire::Encoder e;
                e.u32(in.ConsumeIntegral<std::uint32_t>());
                e.string(in.ConsumeRandomLengthString(40));
                bytes = frame(wire::Type::abort, e.data());
                break;
            }
            case 4:
                bytes = to_bytes(
                    in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(0, 64)));
                break;
            default:
                ends[k].reset();  // the process closes its connection
                break;
        }
        if (ends[k] && !bytes.empty())
            ::send(ends[k].get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
        std::vector<pollfd> fds;
        c.append_pollfds(fds);
        for (const auto &p : fds) {
            if (p.fd != theirs[k])
                continue;
            pollfd ready = p;
            ready.revents = POLLIN;
            try {
                c.handle(ready);
            } catch (...) {
                fail("an exception left Coordinator::handle");
            }
        }
        for (std::size_t j = 0; j < ends.size(); ++j)
            if (ends[j])
                drain(ends[j].get(), readers[j]);
        if ((c.state() == Coordinator::State::torn_down) != c.outcome().has_value())
            fail("torn down without an outcome, or an outcome while not torn down");
        if (c.joined_count() > o.nprocs)
            fail("more processes joined than the job has");
    }
    c.close_all();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    learn_types();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
        case 0:
            framing(in);
            break;
        case 1:
            bodies(in);
            break;
        default:
            coordinator(in);
            break;
    }
    return 0;
}
