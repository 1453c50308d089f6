// bsprun's output relay: whole lines, labels, partial lines.
#include "output_relay.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace {

using bsp::launch::UniqueFd;
using bsprun::OutputRelay;

struct Pipe {
    UniqueFd r, w;
    Pipe() {
        int p[2];
        EXPECT_EQ(::pipe2(p, O_NONBLOCK), 0);
        r.reset(p[0]);
        w.reset(p[1]);
    }
    std::string drain() {
        std::string s;
        char buf[4096];
        ssize_t n;
        while ((n = ::read(r.get(), buf, sizeof buf)) > 0) {
            s.append(buf, static_cast<std::size_t>(n));
        }
        return s;
    }
};

void put(Pipe &p, std::string_view s) {
    ASSERT_EQ(::write(p.w.get(), s.data(), s.size()), static_cast<ssize_t>(s.size()));
}

TEST(OutputRelay, WholeLinesWithLabels) {
    Pipe in, out;
    OutputRelay relay(std::move(in.r), out.w.get(), "[3] ");  // whole lines only
    put(in, "one\ntw");
    relay.on_readable();
    EXPECT_EQ(out.drain(), "[3] one\n");
    put(in, "o\nthree");
    relay.on_readable();
    EXPECT_EQ(out.drain(), "[3] two\n");
    OutputRelay::Clock::time_point due;
    EXPECT_FALSE(relay.partial_due(due));
    in.w.reset();
    relay.on_readable();  // end of file: the rest, completed with a newline
    EXPECT_FALSE(relay.open());
    EXPECT_EQ(out.drain(), "[3] three\n");
}

TEST(OutputRelay, PartialLineIsWrittenWhenDueAndContinuedWithoutLabel) {
    Pipe in, out;
    OutputRelay relay(std::move(in.r), out.w.get(), "[0] ", true);
    put(in, "How many? ");
    relay.on_readable();
    EXPECT_EQ(out.drain(), "");
    OutputRelay::Clock::time_point due;
    EXPECT_TRUE(relay.partial_due(due));
    relay.flush_partial();
    EXPECT_EQ(out.drain(), "[0] How many? ");
    put(in, "4\nnext\n");
    relay.on_readable();
    EXPECT_EQ(out.drain(), "4\n[0] next\n");
}

TEST(OutputRelay, WithoutLabelBytesPassUnchanged) {
    Pipe in, out;
    OutputRelay relay(std::move(in.r), out.w.get(), "");
    put(in, "a\nb");
    relay.on_readable();
    in.w.reset();
    relay.on_readable();
    EXPECT_EQ(out.drain(), "a\nb");
}

}  // namespace
