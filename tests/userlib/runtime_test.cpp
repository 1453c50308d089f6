// BSPlib semantics of the Runtime, P runtimes in P threads over the loopback test double.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <set>
#include <string>

#include "spmd_harness.hpp"

using bsp::rt::Runtime;
using bsp::test::run_spmd;
using bsp::test::single_error;

namespace {

void expect_ok(const std::vector<bsp::test::Outcome> &out) {
    for (std::size_t p = 0; p < out.size(); ++p)
        EXPECT_EQ(out[p].error, "") << "process " << p;
}

// [SHM97], section 13: bsp_allsums1 (logarithmic technique).
int allsums1(Runtime &r, int x) {
    int left = 0, right = x;
    r.push_reg("bsp_pushregister", &left, sizeof(int));
    r.sync("bsp_sync");
    for (int i = 1; i < r.nprocs(); i *= 2) {
        if (r.pid() + i < r.nprocs())
            r.put("bsp_put", r.pid() + i, &right, &left, 0, sizeof(int), false);
        r.sync("bsp_sync");
        if (r.pid() >= i)
            right = left + right;
    }
    r.pop_reg("bsp_popregister", &left);
    return right;
}

// [SHM97], section 13: bsp_allsums2 (one superstep, p puts).
int allsums2(Runtime &r, int x) {
    std::vector<int> array(static_cast<std::size_t>(r.nprocs()), 0);
    r.push_reg("bsp_pushregister", array.data(), r.nprocs() * static_cast<int>(sizeof(int)));
    r.sync("bsp_sync");
    for (int i = r.pid(); i < r.nprocs(); ++i)
        r.put("bsp_put", i, &x, array.data(), r.pid() * static_cast<int>(sizeof(int)), sizeof(int),
              false);
    r.sync("bsp_sync");
    int result = array[0];
    for (int i = 1; i <= r.pid(); ++i)
        result += array[static_cast<std::size_t>(i)];
    r.pop_reg("bsp_popregister", array.data());
    return result;
}

}  // namespace

class AllSums : public ::testing::TestWithParam<int> {};

TEST_P(AllSums, BothVersionsGivePrefixSumsOfPidPlusOne) {
    const int p = GetParam();
    std::vector<int> v1(static_cast<std::size_t>(p)), v2(static_cast<std::size_t>(p));
    auto out = run_spmd(p, [&](Runtime &r) {
        v1[static_cast<std::size_t>(r.pid())] = allsums1(r, r.pid() + 1);
        v2[static_cast<std::size_t>(r.pid())] = allsums2(r, r.pid() + 1);
    });
    expect_ok(out);
    for (int i = 0; i < p; ++i) {
        EXPECT_EQ(v1[static_cast<std::size_t>(i)], (i + 1) * (i + 2) / 2);
        EXPECT_EQ(v2[static_cast<std::size_t>(i)], (i + 1) * (i + 2) / 2);
    }
}
INSTANTIATE_TEST_SUITE_P(Procs, AllSums, ::testing::Values(1, 2, 3, 4, 5, 8));

TEST(Put, IsBufferedAtCallTime) {
    std::vector<int> got(3, -1);
    auto out = run_spmd(3, [&](Runtime &r) {
        int x = 0, src = 10 + r.pid();
        r.push_reg("bsp_push_reg", &x, sizeof x);
        r.sync("bsp_sync");
        r.put("bsp_put", (r.pid() + 1) % 3, &src, &x, 0, sizeof src, false);
        src = 99;  // must not affect the put
        r.sync("bsp_sync");
        got[static_cast<std::size_t>(r.pid())] = x;
    });
    expect_ok(out);
    EXPECT_EQ(got, (std::vector<int>{12, 10, 11}));
}

TEST(HpPut, ReadsSourceAtSync) {
    std::vector<int> got(2, -1);
    auto out = run_spmd(2, [&](Runtime &r) {
        int x = 0, src = 10 + r.pid();
        r.push_reg("bsp_push_reg", &x, sizeof x);
        r.sync("bsp_sync");
        r.put("bsp_hpput", 1 - r.pid(), &src, &x, 0, sizeof src, true);
        src = 50 + r.pid();  // unbuffered: the value at sync time travels
        r.sync("bsp_sync");
        got[static_cast<std::size_t>(r.pid())] = x;
    });
    expect_ok(out);
    EXPECT_EQ(got, (std::vector<int>{51, 50}));
}

TEST(Get, ReadsValuesAtEndOfSuperstepBeforePuts) {
    // Every process puts 100+pid into its right neighbour's x and gets the left
    // neighbour's x in the same superstep: the get must see the old value.
    std::vector<int> got(4, -1), x_after(4, -1);
    auto out = run_spmd(4, [&](Runtime &r) {
        int x = r.pid(), y = -1;
        const int p = r.nprocs(), right = (r.pid() + 1) % p, left = (r.pid() + p - 1) % p;
        r.push_reg("bsp_push_reg", &x, sizeof x);
        r.sync("bsp_sync");
        int v = 100 + r.pid();
        r.put("bsp_put", right, &v, &x, 0, sizeof v, false);
        r.get("bsp_get", left, &x, 0, &y, sizeof y);
        x = 7 * r.pid();  // local write after the calls, before the sync: gets see it
        r.sync("bsp_sync");
        got[static_cast<std::size_t>(r.pid())] = y;
        x_after[static_cast<std::size_t>(r.pid())] = x;
    });
    expect_ok(out);
    EXPECT_EQ(got, (std::vector<int>{21, 0, 7, 14}));
    EXPECT_EQ(x_after, (std::vector<int>{103, 100, 101, 102}));
}

TEST(Get, FromSelfAndOffsetsAndLargeSplitAcrossUnits) {
    constexpr int n = 5000;  // > 1 unit of 4096 bytes
    std::vector<int> ok(3, 0);
    auto out = run_spmd(3, [&](Runtime &r) {
        std::vector<int> a(n), b(n, -1), self(10, -1);
        for (int i = 0; i < n; ++i)
            a[static_cast<std::size_t>(i)] = r.pid() * 100000 + i;
        r.push_reg("bsp_push_reg", a.data(), n * 4);
        r.sync("bsp_sync");
        const int from = (r.pid() + 1) % 3;
        r.get("bsp_get", from, a.data(), 8, b.data(), (n - 2) * 4);
        r.get("bsp_get", r.pid(), a.data(), 40, self.data(), 40);
        r.sync("bsp_sync");
        bool good = true;
        for (int i = 0; i < n - 2; ++i)
            good = good && b[static_cast<std::size_t>(i)] == from * 100000 + i + 2;
        good = good && b[n - 2] == -1 && b[n - 1] == -1;
        for (int i = 0; i < 10; ++i)
            good = good && self[static_cast<std::size_t>(i)] == r.pid() * 100000 + 10 + i;
        ok[static_cast<std::size_t>(r.pid())] = good ? 1 : 0;
    });
    expect_ok(out);
    EXPECT_EQ(ok, (std::vector<int>{1, 1, 1}));
}

TEST(Put, LargePutSplitIntoUnitsArrivesIntact) {
    constexpr int n = 30000;
    std::vector<int> ok(2, 0);
    auto out = run_spmd(2, [&](Runtime &r) {
        std::vector<std::uint8_t> dst(n, 0), src(n);
        for (int i = 0; i < n; ++i)
            src[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i * 7 + r.pid());
        r.push_reg("bsp_push_reg", dst.data(), n);
        r.sync("bsp_sync");
        r.put("bsp_put", 1 - r.pid(), src.data(), dst.data(), 0, n, false);
        r.sync("bsp_sync");
        bool good = true;
        for (int i = 0; i < n; ++i)
            good = good && dst[static_cast<std::size_t>(i)] ==
                               static_cast<std::uint8_t>(i * 7 + (1 - r.pid()));
        ok[static_cast<std::size_t>(r.pid())] = good;
        // 30000 bytes in 4096-byte units: exactly 8 units to the one peer.
        EXPECT_EQ(r.messaging().stats().units_sent, 8u);
    });
    expect_ok(out);
    EXPECT_EQ(ok, (std::vector<int>{1, 1}));
}

TEST(Put, ConflictingPutsApplyBySourcePidThenIssueOrder) {
    std::vector<int> got(4, -1);
    auto out = run_spmd(4, [&](Runtime &r) {
        int x = -1;
        r.push_reg("bsp_push_reg", &x, sizeof x);
        r.sync("bsp_sync");
        // Every process puts two values into process 0's x; the last applied wins:
        // process 3's second put.
        int a = r.pid() * 10, b = r.pid() * 10 + 1;
        r.put("bsp_put", 0, &a, &x, 0, sizeof a, false);
        r.put("bsp_put", 0, &b, &x, 0, sizeof b, false);
        r.sync("bsp_sync");
        got[static_cast<std::size_t>(r.pid())] = x;
    });
    expect_ok(out);
    EXPECT_EQ(got[0], 31);
}

TEST(Registration, TakesEffectAtNextSyncAndIsMatchedByOrder) {
    // Different addresses on every process, registered in the same order.
    std::vector<std::array<int, 2>> got(3);
    auto out = run_spmd(3, [&](Runtime &r) {
        std::vector<int> heap(static_cast<std::size_t>(r.pid() + 1) * 8, 0);
        int *first = heap.data() + r.pid(), *second = heap.data() + r.pid() + 1;
        r.push_reg("bsp_push_reg", first, 4);
        r.push_reg("bsp_push_reg", second, 4);
        r.sync("bsp_sync");
        int v1 = 1000 + r.pid(), v2 = 2000 + r.pid();
        const int to = (r.pid() + 1) % 3;
        r.put("bsp_put", to, &v1, first, 0, 4, false);
        r.put("bsp_put", to, &v2, second, 0, 4, false);
        r.sync("bsp_sync");
        got[static_cast<std::size_t>(r.pid())] = {*first, *second};
    });
    expect_ok(out);
    EXPECT_EQ(got[0], (std::array<int, 2>{1002, 2002}));
    EXPECT_EQ(got[1], (std::array<int, 2>{1000, 2000}));
    EXPECT_EQ(got[2], (std::array<int, 2>{1001, 2001}));
}

TEST(Registration, PoppedAreaStillReceivesPutsOfItsSuperstepThenIsGone) {
    std::vector<int> got(2, -1);
    auto out = run_spmd(2, [&](Runtime &r) {
        int x = 0;
        r.push_reg("bsp_push_reg", &x, sizeof x);
        r.sync("bsp_sync");
        int v = 5 + r.pid();
        r.put("bsp_put", 1 - r.pid(), &v, &x, 0, sizeof v, false);
        r.pop_reg("bsp_pop_reg", &x);
        r.sync("bsp_sync");
        got[static_cast<std::size_t>(r.pid())] = x;
        EXPECT_EQ(r.registry().active_count(), 0u);
    });
    expect_ok(out);
    EXPECT_EQ(got, (std::vector<int>{6, 5}));
}

TEST(Registration, SameAddressTwiceUsesMostRecentAndPopsInAnyOrder) {
    std::vector<int> got(2, -1);
    auto out = run_spmd(2, [&](Runtime &r) {
        int a[4] = {0, 0, 0, 0}, b = 0;
        // Process 0 registers 4 bytes then 16 at &a; process 1 the same.
        r.push_reg("bsp_push_reg", a, 4);
        r.push_reg("bsp_push_reg", &b, 4);
        r.push_reg("bsp_push_reg", a, 16);
        r.sync("bsp_sync");
        int v = 77;
        r.put("bsp_put", 1 - r.pid(), &v, a, 12, 4, false);  // fits only the 16-byte one
        r.pop_reg("bsp_pop_reg", &b);                        // pop out of stack order
        r.sync("bsp_sync");
        got[static_cast<std::size_t>(r.pid())] = a[3];
        r.pop_reg("bsp_pop_reg", a);  // pops the 16-byte registration
        r.sync("bsp_sync");
        EXPECT_EQ(r.registry().active_count(), 1u);
        // Now the 4-byte one is current: offset 12 is out of range.
        try {
            r.put("bsp_put", 0, &v, a, 12, 4, false);
            ADD_FAILURE() << "expected a misuse";
        } catch (const bsp::rt::Misuse &m) {
            EXPECT_EQ(std::string(m.what()),
                      "BSPlib error: bsp_put on process " + std::to_string(r.pid()) +
                          ": offset 12 + 4 bytes is outside the 4 bytes of the destination "
                          "area registered by process 0");
        }
    });
    expect_ok(out);
    EXPECT_EQ(got, (std::vector<int>{77, 77}));
}

// Pushes and pops take effect at the next sync in the order issued: a pop after a push of
// the same area in one superstep removes that push, not the older registration.
TEST(Registration, PushThenPopInOneSuperstepRemovesThePush) {
    auto out = run_spmd(2, [&](Runtime &r) {
        int a[4] = {0, 0, 0, 0};
        r.push_reg("bsp_push_reg", a, 4);
        r.sync("bsp_sync");
        r.push_reg("bsp_push_reg", a, 16);
        r.pop_reg("bsp_pop_reg", a);
        r.sync("bsp_sync");
        EXPECT_EQ(r.registry().active_count(), 1u);
        try {
            int v = 1;
            r.put("bsp_put", 1 - r.pid(), &v, a, 12, 4, false);
            ADD_FAILURE() << "expected a misuse";
        } catch (const bsp::rt::Misuse &m) {
            EXPECT_EQ(std::string(m.what()),
                      "BSPlib error: bsp_put on process " + std::to_string(r.pid()) +
                          ": offset 12 + 4 bytes is outside the 4 bytes of the destination "
                          "area registered by process " +
                          std::to_string(1 - r.pid()));
        }
        // Two pushes and their pops in one superstep, the older registration popped too.
        int b = 0;
        r.push_reg("bsp_push_reg", &b, 4);
        r.push_reg("bsp_push_reg", a, 8);
        r.pop_reg("bsp_pop_reg", a);
        r.pop_reg("bsp_pop_reg", a);
        r.pop_reg("bsp_pop_reg", &b);
        r.sync("bsp_sync");
        EXPECT_EQ(r.registry().active_count(), 0u);
    });
    expect_ok(out);
}

TEST(Registration, NullRegistrationsOfProcessesWithoutData) {
    int result = -1;
    auto out = run_spmd(3, [&](Runtime &r) {
        std::vector<int> buf(3, 0);
        // Only process 0 offers memory; the others register NULL with size 0.
        r.push_reg("bsp_push_reg", r.pid() == 0 ? buf.data() : nullptr, r.pid() == 0 ? 12 : 0);
        r.sync("bsp_sync");
        int v = r.pid() + 1;
        r.put("bsp_put", 0, &v, r.pid() == 0 ? buf.data() : nullptr, 4 * r.pid(), 4, false);
        r.sync("bsp_sync");
        if (r.pid() == 0)
            result = buf[0] * 100 + buf[1] * 10 + buf[2];
    });
    expect_ok(out);
    EXPECT_EQ(result, 123);
}

TEST(Bsmp, QueueOrderedBySourceThenSendOrderWithTags) {
    std::vector<std::string> seen(3);
    auto out = run_spmd(3, [&](Runtime &r) {
        int ts = 4;
        EXPECT_EQ(r.set_tagsize("bsp_set_tagsize", ts), 0);
        r.sync("bsp_sync");  // tag size 4 from here on
        EXPECT_EQ(r.tagsize(), 4);
        for (int dst = 2; dst >= 0; --dst) {
            for (int k = 0; k < 2; ++k) {
                int tag = r.pid() * 10 + k;
                std::string payload(static_cast<std::size_t>(k + 1), char('a' + r.pid()));
                r.send("bsp_send", dst, &tag, payload.data(), static_cast<int>(payload.size()));
            }
        }
        r.sync("bsp_sync");
        std::int64_t n = -1, bytes = -1;
        r.qsize(&n, &bytes);
        EXPECT_EQ(n, 6);
        EXPECT_EQ(bytes, 9);
        std::string s;
        for (;;) {
            int tag = -1;
            int len = r.get_tag(&tag);
            if (len < 0)
                break;
            EXPECT_EQ(r.get_tag(&tag), len);  // repeatable until bsp_move
            std::string payload(static_cast<std::size_t>(len), '?');
            r.move("bsp_move", payload.data(), len);
            s += std::to_string(tag) + ":" + payload + " ";
        }
        seen[static_cast<std::size_t>(r.pid())] = s;
        r.sync("bsp_sync");
        r.qsize(&n, &bytes);  // nothing sent in the last superstep
        EXPECT_EQ(n, 0);
        EXPECT_EQ(bytes, 0);
    });
    expect_ok(out);
    for (int p = 0; p < 3; ++p)
        EXPECT_EQ(seen[static_cast<std::size_t>(p)], "0:a 1:aa 10:b 11:bb 20:c 21:cc ");
}

TEST(Bsmp, TagSizeTakesEffectAtNextSyncAndReturnsPrevious) {
    auto out = run_spmd(2, [&](Runtime &r) {
        EXPECT_EQ(r.set_tagsize("bsp_set_tagsize", 8), 0);
        EXPECT_EQ(r.set_tagsize("bsp_set_tagsize", 2), 8);  // nested use inside a procedure
        EXPECT_EQ(r.tagsize(), 0);
        const char payload[] = "xyz";
        r.send("bsp_send", 1 - r.pid(), nullptr, payload, 3);  // sent with tag size 0
        r.sync("bsp_sync");
        EXPECT_EQ(r.tagsize(), 2);
        short tag = 0;
        EXPECT_EQ(r.get_tag(&tag), 3);
        EXPECT_EQ(tag, 0);  // no tag bytes copied
        char buf[8] = {};
        r.move("bsp_move", buf, 2);  // at most reception_nbytes copied
        EXPECT_STREQ(buf, "xy");
        EXPECT_EQ(r.get_tag(&tag), -1);
        short t = static_cast<short>(0x1234 + r.pid());
        r.send("bsp_send", 1 - r.pid(), &t, payload, 0);
        r.sync("bsp_sync");
        void *tp = nullptr, *pp = nullptr;
        EXPECT_EQ(r.hpmove(&tp, &pp), 0);
        short got = 0;
        std::memcpy(&got, tp, 2);
        EXPECT_EQ(got, 0x1234 + (1 - r.pid()));
        EXPECT_EQ(r.hpmove(&tp, &pp), -1);
    });
    expect_ok(out);
}

TEST(Bsmp, LargeMessagesSplitAcrossUnits) {
    auto out = run_spmd(2, [&](Runtime &r) {
        std::vector<char> big(10000);
        for (std::size_t i = 0; i < big.size(); ++i)
            big[i] = static_cast<char>(i % 251 + r.pid());
        r.send("bsp_send", 1 - r.pid(), nullptr, big.data(), 10000);
        r.send("bsp_send", 1 - r.pid(), nullptr, big.data(), 5);
        r.sync("bsp_sync");
        std::vector<char> in(10000);
        std::int64_t n = 0, bytes = 0;
        r.qsize(&n, &bytes);
        EXPECT_EQ(n, 2);
        EXPECT_EQ(bytes, 10005);
        EXPECT_EQ(r.get_tag(nullptr), 10000);
        r.move("bsp_move", in.data(), 10000);
        for (std::size_t i = 0; i < in.size(); ++i)
            ASSERT_EQ(in[i], static_cast<char>(i % 251 + 1 - r.pid()));
        EXPECT_EQ(r.get_tag(nullptr), 5);
    });
    expect_ok(out);
}

TEST(Messaging, BarrierEpochsSignalledAndOnlyCommunicatingPairsExchangeCounts) {
    auto out = run_spmd(4, [&](Runtime &r) {
        int x = 0;
        r.push_reg("bsp_push_reg", &x, sizeof x);
        r.sync("bsp_sync");
        if (r.pid() == 1) {
            int v = 3;
            r.put("bsp_put", 2, &v, &x, 0, sizeof v, false);
        }
        r.sync("bsp_sync");
        r.sync("bsp_sync");
    });
    expect_ok(out);
    for (int p = 0; p < 4; ++p) {
        auto &t = *out[static_cast<std::size_t>(p)].transport;
        EXPECT_EQ(t.epochs, (std::vector<std::uint64_t>{0, 1, 2}));
        // Butterfly barrier with p = 4: 2 rounds, with pid^1 and pid^2, per sync.
        std::vector<int> expected;
        for (int s = 0; s < 3; ++s) {
            expected.push_back(p ^ 1);
            expected.push_back(p ^ 2);
            if (s == 1 && p == 1) {
                expected.push_back(2);  // counts
                expected.push_back(2);  // one data unit
            }
        }
        EXPECT_EQ(t.sent_to, expected) << "process " << p;
        std::vector<unsigned> flags;
        for (int s = 0; s < 3; ++s) {
            flags.push_back(bsp::rt::Transport::kSync);
            flags.push_back(bsp::rt::Transport::kSync);
            if (s == 1 && p == 1) {
                flags.push_back(0);                          // counts
                flags.push_back(bsp::rt::Transport::kLast);  // the one data unit
            }
        }
        EXPECT_EQ(t.flags_sent, flags) << "process " << p;
    }
    // Only process 2 expected data, from process 1: 4 bytes.
    EXPECT_EQ(out[2].transport->expected, (std::vector<std::pair<int, std::uint64_t>>{{1, 4}}));
    EXPECT_TRUE(out[0].transport->expected.empty());
}

// The barrier carries a constant-size summary and the fan-in counters it hands over (p/2,
// p/4, ... of them), never the rows of the communication matrix: its bytes per process grow
// with p, not with p^2. p = 24 = 16 + 8: the fold-in of processes 16..23 and the hand-back.
// Every process puts to pid + 1 and pid + 5: each receives from exactly two, which the
// counters must tell it (a wrong fan-in hangs or fails the sync).
TEST(Messaging, BarrierBytesAreTheSummaryAndTheHandedOverCounters) {
    constexpr int p = 24, q = 16, rounds = 4;
    auto out = run_spmd(p, [&](Runtime &r) {
        std::array<int, 2> got{};
        r.push_reg("bsp_push_reg", got.data(), sizeof got);
        r.sync("bsp_sync");
        const int me = r.pid();
        r.put("bsp_put", (me + 1) % p, &me, got.data(), 0, sizeof me, false);
        r.put("bsp_put", (me + 5) % p, &me, got.data(), sizeof me, sizeof me, false);
        r.sync("bsp_sync");
        EXPECT_EQ(got[0], (me + p - 1) % p);
        EXPECT_EQ(got[1], (me + p - 5) % p);
    });
    expect_ok(out);
    // Counters process i hands over in a round (messaging.cpp): all p in the fold-in, the
    // slots s = partner (mod 2d) of round d (two counters for s < p - q), one in the
    // hand-back.
    auto counters = [&](int i, int round) -> std::size_t {
        if (round == 0)
            return p;
        if (round == rounds + 1)
            return 1;
        const int d = 1 << (round - 1), m = 2 * d;
        std::size_t n = 0;
        for (int s = 0; s < q; ++s)
            if ((s & (m - 1)) == ((i ^ d) & (m - 1)))
                n += s < p - q ? 2 : 1;
        return n;
    };
    for (int i = 0; i < p; ++i) {
        auto &t = *out[static_cast<std::size_t>(i)].transport;
        std::vector<std::size_t> want;
        for (int sync = 0; sync < 2; ++sync) {
            std::vector<std::size_t> barrier;
            if (i >= q) {
                barrier.push_back(bsp::rt::barrier_msg_bytes(counters(i, 0)));
            } else {
                for (int round = 1; round <= rounds; ++round)
                    barrier.push_back(bsp::rt::barrier_msg_bytes(counters(i, round)));
                if (i + q < p)
                    barrier.push_back(bsp::rt::barrier_msg_bytes(counters(i, rounds + 1)));
            }
            want.insert(want.end(), barrier.begin(), barrier.end());
        }
        std::vector<std::size_t> got;
        for (std::size_t k = 0; k < t.sizes_sent.size(); ++k)
            if (t.flags_sent[k] & bsp::rt::Transport::kSync)
                got.push_back(t.sizes_sent[k]);
        ASSERT_EQ(got.size(), want.size()) << "process " << i;
        // The second sync registers nothing: exactly the usual size (the first also carries
        // the push sizes gathered so far).
        for (std::size_t k = want.size() / 2; k < want.size(); ++k)
            EXPECT_EQ(got[k], want[k]) << "process " << i << " message " << k;
        // The barrier expects only partners whose message had not arrived, once per round.
        std::set<int> partners;
        if (i >= q) {
            partners.insert(i - q);
        } else {
            for (int d = 1; d < q; d *= 2)
                partners.insert(i ^ d);
            if (i + q < p)
                partners.insert(i + q);
        }
        EXPECT_LE(t.barrier_expected.size(), want.size()) << "process " << i;
        for (int src : t.barrier_expected)
            EXPECT_TRUE(partners.count(src)) << "process " << i << " expected " << src;
    }
}

TEST(Messaging, DestinationOrderFollowsSchedule) {
    for (auto sched : {bsp::rt::Schedule::LatinSquare, bsp::rt::Schedule::PidOrder}) {
        std::vector<std::vector<int>> order(5);
        bsp::rt::MessagingConfig cfg;
        cfg.schedule = sched;
        auto out = run_spmd(
            5,
            [&](Runtime &r) {
                std::vector<int> a(5, 0);
                r.push_reg("bsp_push_reg", a.data(), 20);
                r.sync("bsp_sync");
                for (int j = 0; j < 5; ++j)
                    r.put("bsp_put", j, &j, a.data(), 4 * r.pid(), 4, false);
                r.sync("bsp_sync");
                order[static_cast<std::size_t>(r.pid())] = r.messaging().stats().send_order;
                for (int j = 0; j < 5; ++j)
                    EXPECT_EQ(a[static_cast<std::size_t>(j)], r.pid());
            },
            cfg);
        expect_ok(out);
        for (int p = 0; p < 5; ++p) {
            std::vector<int> want;
            for (int t = 1; t < 5; ++t)
                want.push_back(sched == bsp::rt::Schedule::LatinSquare ? (p + t) % 5
                                                                       : (t - 1 < p ? t - 1 : t));
            EXPECT_EQ(order[static_cast<std::size_t>(p)], want);
            // The count messages (neither barrier traffic nor the last unit of a stream) go
            // in the same order: in pid order every process would send its first one to
            // process 0 at once.
            const auto &t = *out[static_cast<std::size_t>(p)].transport;
            std::vector<int> counts;
            for (std::size_t k = 0; k < t.sent_to.size(); ++k)
                if (t.flags_sent[k] == 0)
                    counts.push_back(t.sent_to[k]);
            EXPECT_EQ(counts, want) << "process " << p;
        }
    }
}

// A superstep in which nobody has get requests (the barrier says so) sends every
// destination its data stream right behind its counts message, in schedule order, between
// streams_follow_counts(true) and (false); 6000 bytes through 4096-byte messages are two
// units per stream. Every byte arrives. The transport is told to expect, per sender, only
// the units not here yet (at most the stream's two).
TEST(Messaging, StreamsFollowCountsWithoutGets) {
    constexpr int p = 4;
    constexpr std::size_t n = 6000;
    auto out = run_spmd(p, [&](Runtime &r) {
        std::vector<char> in(n * p, 0), src(n);
        r.push_reg("bsp_push_reg", in.data(), static_cast<std::int64_t>(in.size()));
        r.sync("bsp_sync");
        for (std::size_t i = 0; i < n; ++i)
            src[i] = static_cast<char>(r.pid() * 7 + i % 101);
        for (int j = 0; j < p; ++j)
            if (j != r.pid())
                r.put("bsp_put", j, src.data(), in.data(), static_cast<std::int64_t>(n * r.pid()),
                      n, false);
        r.sync("bsp_sync");
        for (int k = 0; k < p; ++k)
            for (std::size_t i = 0; k != r.pid() && i < n; ++i)
                ASSERT_EQ(in[n * static_cast<std::size_t>(k) + i],
                          static_cast<char>(k * 7 + i % 101));
    });
    expect_ok(out);
    for (int q = 0; q < p; ++q) {
        const auto &t = *out[static_cast<std::size_t>(q)].transport;
        EXPECT_EQ(t.follows, (std::vector<bool>{true, false})) << "process " << q;
        // Everything but barrier traffic, in the order sent: per destination (latin square:
        // q + 1, q + 2, q + 3), its counts (flags 0), then its two units (0, kLast).
        std::vector<std::pair<int, unsigned>> sent, want;
        for (std::size_t k = 0; k < t.sent_to.size(); ++k)
            if (!(t.flags_sent[k] & bsp::rt::Transport::kSync))
                sent.emplace_back(t.sent_to[k], t.flags_sent[k]);
        for (int d = 1; d < p; ++d) {
            const int j = (q + d) % p;
            want.emplace_back(j, 0u);
            want.emplace_back(j, 0u);
            want.emplace_back(j, bsp::rt::Transport::kLast);
        }
        EXPECT_EQ(sent, want) << "process " << q;
        // Each source's messages of the superstep in all: its counts and its two units,
        // however many of them had arrived.
        ASSERT_EQ(t.expected_messages.size(), 3u) << "process " << q;
        for (auto m : t.expected_messages)
            EXPECT_EQ(m, 3u) << "process " << q;
    }
}

// One get request anywhere (process 3 reads from process 0) and every process sends its
// streams after all of its counts arrived, as a stream may have to carry replies to get
// requests that only a counts message tells: no streams_follow_counts call, and process 1
// (which gets nothing) sends its three counts messages before any unit.
TEST(Messaging, StreamsWaitForCountsWhenAnyProcessGets) {
    constexpr int p = 4;
    auto out = run_spmd(p, [&](Runtime &r) {
        int x[p] = {}, y = 0;
        r.push_reg("bsp_push_reg", x, sizeof x);
        r.sync("bsp_sync");
        int v = 10 + r.pid();
        for (int j = 0; j < p; ++j)
            if (j != r.pid())
                r.put("bsp_put", j, &v, x, 4 * r.pid(), 4, false);
        if (r.pid() == 3)
            r.get("bsp_get", 0, x, 4, &y, sizeof y);
        r.sync("bsp_sync");
        for (int k = 0; k < p; ++k)
            EXPECT_EQ(x[k], k == r.pid() ? 0 : 10 + k);
        if (r.pid() == 3) {
            EXPECT_EQ(y, 0);  // process 0's x[1] before process 1's put: gets read first
        }
    });
    expect_ok(out);
    for (int q = 0; q < p; ++q) {
        const auto &t = *out[static_cast<std::size_t>(q)].transport;
        EXPECT_TRUE(t.follows.empty()) << "process " << q;
    }
    const auto &t = *out[1].transport;
    std::vector<unsigned> flags;
    for (std::size_t k = 0; k < t.sent_to.size(); ++k)
        if (!(t.flags_sent[k] & bsp::rt::Transport::kSync))
            flags.push_back(t.flags_sent[k]);
    const unsigned last = bsp::rt::Transport::kLast;
    EXPECT_EQ(flags, (std::vector<unsigned>{0, 0, 0, last, last, last}));
}

TEST(Messaging, PacingRateHandedToTransportFromGlobalLoad) {
    bsp::rt::MessagingConfig cfg;
    cfg.schedule = bsp::rt::Schedule::PidOrder;
    cfg.link_rate = 1000000;
    auto out = run_spmd(
        4,
        [&](Runtime &r) {
            int x[4] = {};
            r.push_reg("bsp_push_reg", x, sizeof x);
            r.sync("bsp_sync");
            // Processes 1, 2, 3 all send to 0: under pid order the three share 0's link.
            if (r.pid() != 0)
                r.put("bsp_put", 0, &r, x, 4 * r.pid(), 4, false);
            r.sync("bsp_sync");
        },
        cfg);
    expect_ok(out);
    for (int p = 1; p < 4; ++p)
        EXPECT_EQ(out[static_cast<std::size_t>(p)].transport->rates.back(), 316666u);
}

TEST(Time, IsMonotonicFromBegin) {
    auto out = run_spmd(1, [&](Runtime &r) {
        double a = r.time(), b = r.time();
        EXPECT_GE(a, 0.0);
        EXPECT_GE(b, a);
    });
    expect_ok(out);
}

TEST(Messaging, WithoutCombiningResultsAreTheSameAndEveryPutTravelsAlone) {
    bsp::rt::MessagingConfig cfg;
    cfg.combine = false;
    std::vector<int> got(3, -1);
    auto out = run_spmd(
        3,
        [&](Runtime &r) {
            int a[8] = {};
            r.push_reg("bsp_push_reg", a, sizeof a);
            r.sync("bsp_sync");
            for (int k = 0; k < 8; ++k) {
                int v = 10 * r.pid() + k;
                r.put("bsp_put", (r.pid() + 1) % 3, &v, a, 4 * k, 4, false);
            }
            r.sync("bsp_sync");
            EXPECT_EQ(r.messaging().stats().units_sent, 8u);
            got[static_cast<std::size_t>(r.pid())] = a[7];
        },
        cfg);
    expect_ok(out);
    EXPECT_EQ(got, (std::vector<int>{27, 7, 17}));
}

TEST(Messaging, ButterflyBarrierForEveryProcessCount) {
    // Non-powers of two fold the processes above q into the butterfly: p = 6 has q = 4,
    // processes 4 and 5 talk only to 0 and 1.
    for (int p = 1; p <= 9; ++p) {
        std::vector<std::uint64_t> sums(static_cast<std::size_t>(p));
        auto out = run_spmd(p, [&](Runtime &r) {
            sums[static_cast<std::size_t>(r.pid())] =
                static_cast<std::uint64_t>(allsums2(r, 1 << r.pid()));
        });
        expect_ok(out);
        for (int i = 0; i < p; ++i)
            EXPECT_EQ(sums[static_cast<std::size_t>(i)], (2u << i) - 1) << "p=" << p;
        if (p == 6) {
            EXPECT_EQ(out[4].transport->sent_to.front(), 0);
            EXPECT_EQ(out[5].transport->sent_to.front(), 1);
        }
    }
}

namespace {

// The stash's bound (Documentation/security.rst, "Bounded state in the messaging layer")
// never drops what a correct process sends: puts, gets and messages of every size over
// small units, processes racing ahead into the next barrier, for p = 2..7.
TEST(Messaging, StashDropsNothingACorrectJobSends) {
    bsp::rt::MessagingConfig cfg;
    cfg.unit_bytes = 256;
    for (int p = 2; p <= 7; ++p) {
        std::vector<bsp::rt::StashStats> stats(static_cast<std::size_t>(p));
        std::vector<int> bad(static_cast<std::size_t>(p), 0);
        auto out = run_spmd(
            p,
            [&](Runtime &r) {
                const int me = r.pid(), n = r.nprocs();
                std::vector<unsigned char> area(static_cast<std::size_t>(n) * 2000, 0);
                std::vector<unsigned char> src(2000), got(2000);
                r.push_reg("bsp_pushregister", area.data(), static_cast<std::int64_t>(area.size()));
                r.sync("bsp_sync");
                for (int step = 0; step < 4; ++step) {
                    for (std::size_t i = 0; i < src.size(); ++i)
                        src[i] = static_cast<unsigned char>(me * 7 + step * 3 + i);
                    const auto len = static_cast<std::int64_t>(1 + (me * 613 + step * 997) % 2000);
                    for (int j = 0; j < n; ++j)
                        if (j != me && (j + step) % 3 != 0)
                            r.put("bsp_put", j, src.data(), area.data(), me * 2000, len, false);
                    const int from = (me + 1) % n;
                    r.get("bsp_get", from, area.data(), 0, got.data(), 1500);
                    r.send("bsp_send", (me + step) % n, nullptr, src.data(), len);
                    r.sync("bsp_sync");
                    for (int k = 0; k < n; ++k) {
                        if (k == me || (me + step) % 3 == 0)
                            continue;
                        const auto klen =
                            static_cast<std::size_t>(1 + (k * 613 + step * 997) % 2000);
                        for (std::size_t i = 0; i < klen; ++i)
                            if (area[static_cast<std::size_t>(k) * 2000 + i] !=
                                static_cast<unsigned char>(k * 7 + step * 3 + i))
                                ++bad[static_cast<std::size_t>(me)];
                    }
                    while (r.get_tag(nullptr) >= 0) {
                        std::vector<unsigned char> m(2000);
                        r.move("bsp_move", m.data(), 2000);
                    }
                }
                r.pop_reg("bsp_popregister", area.data());
                r.sync("bsp_sync");
                stats[static_cast<std::size_t>(me)] = r.messaging().stash_stats();
            },
            cfg);
        expect_ok(out);
        for (int i = 0; i < p; ++i) {
            EXPECT_EQ(bad[static_cast<std::size_t>(i)], 0) << "p=" << p << " process " << i;
            EXPECT_EQ(stats[static_cast<std::size_t>(i)].dropped, 0u)
                << "p=" << p << " process " << i;
        }
    }
}

}  // namespace
