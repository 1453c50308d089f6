// Malformed messages from a peer process (regressions found by tests/fuzz/messaging_fuzz):
// process 0 of 2 runs against a scripted process 1 whose messages are built here, and a
// malformed message must end in ProtocolError (or TornDown once the script is exhausted),
// never in a huge allocation or an access outside the process's buffers.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "messages.hpp"
#include "messaging.hpp"
#include "misuse.hpp"
#include "runtime.hpp"
#include "transport.hpp"

namespace {

using namespace bsp::rt;

// Process 1 as a fixed list of messages; receive() reports a teardown when it is used up.
class ScriptedPeer final : public Transport {
  public:
    explicit ScriptedPeer(std::deque<std::vector<std::byte>> script) : script_(std::move(script)) {}
    std::string name() const override { return "scripted"; }
    std::string description() const override { return "scripted peer (test double)"; }
    std::size_t max_message_bytes() const override { return 4096; }
    void send(int, std::vector<std::byte>, unsigned) override {}
    std::optional<Received> receive() override {
        if (script_.empty())
            return std::nullopt;
        Received r{1, std::move(script_.front())};
        script_.pop_front();
        return r;
    }
    void flush_sends() override {}
    void barrier_completed(std::uint64_t) override {}
    void set_pacing_rate(std::uint64_t) override {}
    void expect_from(int src, std::uint32_t messages, std::uint64_t) override {
        expected.push_back({src, messages, script_.size()});
    }
    void expect_barrier_message(int src) override { barrier_expected.push_back(src); }
    void serve_in_background() override {}
    void shutdown() override {}
    std::size_t left() const { return script_.size(); }

    struct Expectation {
        int src;
        std::uint32_t messages;
        std::size_t left;  // script messages not received yet at the call
        bool operator==(const Expectation &) const = default;
    };
    std::vector<Expectation> expected;
    std::vector<int> barrier_expected;

  private:
    std::deque<std::vector<std::byte>> script_;
};

void set_u32(std::vector<std::byte> &m, std::size_t pos, std::uint32_t v) {
    for (std::size_t i = 0; i < 4; ++i)
        m[pos + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

// Process 1's barrier message of superstep s: it has data for process 0.
std::vector<std::byte> peer_barrier(std::uint64_t s) {
    Contribution c;
    c.row = {1, 0};
    // p = 2: round 1 hands process 0 the counter of its slot (slot 0: pid 0).
    return encode_barrier(s, 1, BarrierMsg{summarize(1, c), {1}});
}

// Process 1's barrier message of superstep s: it has nothing for process 0.
std::vector<std::byte> quiet_peer_barrier(std::uint64_t s) {
    Contribution c;
    c.row = {0, 0};
    return encode_barrier(s, 1, BarrierMsg{summarize(1, c), {0}});
}

std::vector<std::byte> peer_counts(std::uint64_t s, std::uint32_t records) {
    Counts c;
    c.records = records;
    return encode_counts(s, c);
}

// A data unit of superstep 0 announcing 2^32 - 1 units: the receiver used to size its
// unit table by that count (tens of GiB) before seeing a second unit.
TEST(PeerInput, AnnouncedUnitCountDoesNotSizeAllocations) {
    UnitPacker packer(0, 256);
    std::vector<std::byte> data(8, std::byte{7});
    packer.add(RecordKind::Send, 0, 0, data);
    auto units = packer.finish();
    ASSERT_EQ(units.size(), 1u);
    set_u32(units[0], kMsgHeaderBytes, 0xffffffffu);
    ScriptedPeer peer({peer_barrier(0), peer_counts(0, 1), units[0]});
    Runtime rt(0, 2, &peer, {});
    // The stream stays incomplete; the script ends, which is a teardown.
    EXPECT_THROW(rt.sync("bsp_sync"), TornDown);
    EXPECT_EQ(peer.left(), 0u);
}

TEST(PeerInput, DuplicateUnitOfAStreamIsRejected) {
    UnitPacker packer(0, 64);
    std::vector<std::byte> data(100, std::byte{7});
    packer.add(RecordKind::Send, 0, 0, data);
    auto units = packer.finish();
    ASSERT_GE(units.size(), 2u);
    ScriptedPeer peer({peer_barrier(0), peer_counts(0, 1), units[0], units[0]});
    Runtime rt(0, 2, &peer, {});
    EXPECT_THROW(rt.sync("bsp_sync"), ProtocolError);
}

// The units of a stream arriving in any order still complete it, exactly once.
TEST(PeerInput, UnitsOutOfOrderCompleteTheStream) {
    UnitPacker packer(0, 64);
    std::vector<std::byte> data(100);
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<std::byte>(i);
    packer.add(RecordKind::Send, 0, 0, data);
    auto units = packer.finish();
    ASSERT_GE(units.size(), 3u);
    std::deque<std::vector<std::byte>> script{peer_barrier(0), peer_counts(0, 1)};
    for (auto it = units.rbegin(); it != units.rend(); ++it)
        script.push_back(*it);
    ScriptedPeer peer(std::move(script));
    Runtime rt(0, 2, &peer, {});
    rt.sync("bsp_sync");
    EXPECT_EQ(peer.left(), 0u);
    std::vector<std::byte> got(100);
    ASSERT_EQ(rt.get_tag(nullptr), 100);
    rt.move("bsp_move", got.data(), 100);
    EXPECT_EQ(got, data);
    EXPECT_EQ(rt.get_tag(nullptr), -1);
}

// Found by messaging_fuzz: a tag size request below -1 (-1: bsp_set_tagsize not called)
// was accepted from a peer's barrier contribution.
TEST(PeerInput, NegativeTagSizeRequestIsRejected) {
    Contribution c;
    c.row = {0, 0};
    c.tagsize_request = -2;
    const auto msg = encode_barrier(0, 1, BarrierMsg{summarize(1, c), {0}});
    Reader r(msg);
    read_header(r);
    try {
        decode_barrier(r, 2);
        FAIL() << "accepted a tag size of -2";
    } catch (const ProtocolError &e) {
        EXPECT_STREQ(e.what(), "barrier contribution with a negative tag size");
    }
}

// Found by messaging_fuzz: a barrier message claiming to combine this process (its summary
// starts at pid 0) made two registration lists of process 0 and none of process 1, and the
// registry read past process 1's empty list.
TEST(PeerInput, BarrierMessageAboutThisProcessIsRejected) {
    Contribution c;
    c.row = {0, 0};
    c.ops.push_sizes = {4};
    ScriptedPeer peer({encode_barrier(0, 1, BarrierMsg{summarize(0, c), {0}})});
    Runtime rt(0, 2, &peer, {});
    int x = 0;
    rt.push_reg("bsp_push_reg", &x, sizeof x);
    try {
        rt.sync("bsp_sync");
        FAIL() << "accepted";
    } catch (const ProtocolError &e) {
        EXPECT_STREQ(e.what(), "barrier messages with the registrations of one process twice");
    }
}

std::vector<std::byte> padded_message(MsgType type, std::uint64_t superstep, std::uint32_t aux,
                                      std::size_t size);

// The end of the job (Messaging::finish) with p = 2: process 1 is process 0's only child; it
// reports with a bare header (round 2^32 - 2) of the superstep after bsp_end's.
std::vector<std::byte> peer_end_barrier(std::uint64_t s) {
    Contribution c;
    c.kind = SyncKind::End;
    c.row = {0, 0};
    return encode_barrier(s, 1, BarrierMsg{summarize(1, c), {0}});
}

TEST(PeerInput, EndOfJobReportCompletesBspEnd) {
    ScriptedPeer peer(
        {peer_end_barrier(0), padded_message(MsgType::Barrier, 1, 0xfffffffeu, kMsgHeaderBytes)});
    Runtime rt(0, 2, &peer, {});
    rt.sync("bsp_end", SyncKind::End);
    EXPECT_EQ(peer.left(), 0u);
}

TEST(PeerInput, EndOfJobReportWithABodyIsRejected) {
    ScriptedPeer peer({peer_end_barrier(0),
                       padded_message(MsgType::Barrier, 1, 0xfffffffeu, kMsgHeaderBytes + 4)});
    Runtime rt(0, 2, &peer, {});
    try {
        rt.sync("bsp_end", SyncKind::End);
        FAIL() << "accepted";
    } catch (const ProtocolError &e) {
        EXPECT_STREQ(e.what(), "end-of-job message with a body");
    }
}

// Without the child's report bsp_end does not return (here: the script ends, a teardown).
TEST(PeerInput, BspEndWaitsForTheEndOfJobReport) {
    ScriptedPeer peer({peer_end_barrier(0)});
    Runtime rt(0, 2, &peer, {});
    EXPECT_THROW(rt.sync("bsp_end", SyncKind::End), TornDown);
}

// Process 1's stream of superstep 0: the given units, announced in its barrier and counts.
std::deque<std::vector<std::byte>> stream_of(std::vector<std::vector<std::byte>> units) {
    std::deque<std::vector<std::byte>> script{peer_barrier(0), peer_counts(0, 1)};
    for (auto &u : units)
        script.push_back(std::move(u));
    return script;
}

// A BSMP message whose tag is longer than the job's tag size (0 here): bsp_get_tag copied
// the peer's 8 tag bytes into the caller's buffer of tag-size bytes.
TEST(PeerInput, BsmpTagOfAnotherSizeIsRejected) {
    UnitPacker packer(0, 256);
    std::vector<std::byte> tag_and_payload(12, std::byte{1});
    packer.add(RecordKind::Send, 8, 0, tag_and_payload);
    ScriptedPeer peer(stream_of(packer.finish()));
    Runtime rt(0, 2, &peer, {});
    EXPECT_THROW(rt.sync("bsp_sync"), ProtocolError);
}

// The first unit of a 100-byte message announced as the whole stream: the message was
// queued with the bytes that came (or fewer than its tag, making its payload length
// wrap around).
TEST(PeerInput, BsmpMessageCutShortIsRejected) {
    UnitPacker packer(0, 64);
    std::vector<std::byte> data(100, std::byte{3});
    packer.add(RecordKind::Send, 0, 0, data);
    auto units = packer.finish();
    ASSERT_GE(units.size(), 2u);
    units.resize(1);
    set_u32(units[0], kMsgHeaderBytes, 1);
    ScriptedPeer peer(stream_of(std::move(units)));
    Runtime rt(0, 2, &peer, {});
    EXPECT_THROW(rt.sync("bsp_sync"), ProtocolError);
}

// A message claiming 4 GiB - 16 bytes in a stream of one small unit: the receiver reserved
// what the record claimed.
TEST(PeerInput, BsmpMessageLengthBeyondItsStreamIsRejected) {
    UnitPacker packer(0, 256);
    std::vector<std::byte> data(8, std::byte{3});
    packer.add(RecordKind::Send, 0, 0, data);
    auto units = packer.finish();
    ASSERT_EQ(units.size(), 1u);
    // The record's total length follows its kind, a and b (1 + 4 + 8 bytes).
    set_u32(units[0], kUnitHeaderBytes + 13, 0xfffffff0u);
    ScriptedPeer peer(stream_of(std::move(units)));
    Runtime rt(0, 2, &peer, {});
    EXPECT_THROW(rt.sync("bsp_sync"), ProtocolError);
}

// A message of the messaging layer: its header, then `size` bytes in all.
std::vector<std::byte> padded_message(MsgType type, std::uint64_t superstep, std::uint32_t aux,
                                      std::size_t size) {
    std::vector<std::byte> m;
    Writer w(m);
    write_header(w, {type, superstep, aux});
    m.resize(size, std::byte{0x41});
    return m;
}

// The stash flood: thousands of 64 KB barrier messages of the next superstep from
// a peer. The stash keeps the one (sender, round) of the butterfly that can come early and
// drops every other, whatever their number: memory stays at one message.
TEST(StashBound, FloodOfNextSuperstepBarrierMessagesKeepsOne) {
    constexpr std::size_t kFlood = 2500, kSize = 64 << 10;
    std::deque<std::vector<std::byte>> script;
    for (std::size_t i = 0; i < kFlood; ++i)
        script.push_back(padded_message(MsgType::Barrier, 1, 1, kSize));
    script.push_back(quiet_peer_barrier(0));
    ScriptedPeer peer(std::move(script));
    Runtime rt(0, 2, &peer, {});
    rt.sync("bsp_sync");
    EXPECT_EQ(peer.left(), 0u);
    const StashStats &st = rt.messaging().stash_stats();
    EXPECT_EQ(st.dropped, kFlood - 1);
    EXPECT_EQ(st.dropped_bytes, (kFlood - 1) * kSize);
    EXPECT_EQ(st.peak_bytes, kSize);
    EXPECT_EQ(rt.messaging().stash_bytes(), kSize);
}

// Messages no correct peer sends early: counts and data of the next superstep, a barrier
// round this process never receives from that sender, a second copy of a round, barrier
// messages of a superstep whose barrier is over.
TEST(StashBound, MessagesNoPeerSendsEarlyAreDropped) {
    std::deque<std::vector<std::byte>> script{
        padded_message(MsgType::Counts, 1, 0, 100),  padded_message(MsgType::Data, 1, 0, 100),
        padded_message(MsgType::Barrier, 1, 2, 100),  // p = 2 has round 1 only
        padded_message(MsgType::Barrier, 1, 1, 100),  // kept
        padded_message(MsgType::Barrier, 1, 1, 100),  // the same round again
        padded_message(MsgType::Data, 0, 0, 100),     // data before the sender's counts
    };
    script.push_back(quiet_peer_barrier(0));
    ScriptedPeer peer(std::move(script));
    Runtime rt(0, 2, &peer, {});
    rt.sync("bsp_sync");
    EXPECT_EQ(peer.left(), 0u);
    EXPECT_EQ(rt.messaging().stash_stats().dropped, 5u);
    EXPECT_EQ(rt.messaging().stash_stats().dropped_bytes, 500u);
    EXPECT_EQ(rt.messaging().stash_bytes(), 100u);
}

// Counts that arrive during the barrier allow the data they announce and no more: forged
// units beyond them are dropped, the announced message is delivered intact.
TEST(StashBound, DataBeyondWhatCountsAnnounceIsDropped) {
    constexpr std::size_t kForged = 1000;
    UnitPacker packer(0, 256);
    std::vector<std::byte> data(8);
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<std::byte>(i + 1);
    packer.add(RecordKind::Send, 0, 0, data);
    auto units = packer.finish();
    ASSERT_EQ(units.size(), 1u);
    Counts counts;
    counts.records = 1;
    counts.data_bytes = data.size();
    std::deque<std::vector<std::byte>> script{encode_counts(0, counts), units[0]};
    for (std::size_t i = 0; i < kForged; ++i)
        script.push_back(padded_message(MsgType::Data, 0, 1, 4096));
    script.push_back(peer_barrier(0));
    ScriptedPeer peer(std::move(script));
    Runtime rt(0, 2, &peer, {});
    rt.sync("bsp_sync");
    EXPECT_EQ(peer.left(), 0u);
    EXPECT_EQ(rt.messaging().stash_stats().dropped, kForged);
    EXPECT_EQ(rt.messaging().stash_stats().dropped_bytes, kForged * 4096);
    EXPECT_EQ(rt.messaging().stash_stats().peak_bytes,
              encode_counts(0, counts).size() + units[0].size());
    std::vector<std::byte> got(8);
    ASSERT_EQ(rt.get_tag(nullptr), 8);
    rt.move("bsp_move", got.data(), 8);
    EXPECT_EQ(got, data);
    EXPECT_EQ(rt.messaging().stash_bytes(), 0u);
}

}  // namespace

// Streams follow counts only in a superstep whose barrier says that nobody has get
// requests: a peer whose barrier contribution said none and whose counts message then asks
// for data has lied about the superstep, and is refused (its reply would have had to come
// in a stream already sent).
TEST(PeerInput, GetRequestsAfterABarrierWithoutGetsAreRejected) {
    Counts c;
    c.gets.push_back(GetRequest{0, 0, 0, 4});
    // The peer's barrier: it sends to process 0 and has no get requests (peer_barrier).
    ScriptedPeer liar({peer_barrier(0), encode_counts(0, c)});
    Runtime rt(0, 2, &liar, {});
    try {
        rt.sync("bsp_sync");
        FAIL() << "accepted get requests the barrier did not announce";
    } catch (const ProtocolError &e) {
        EXPECT_STREQ(e.what(),
                     "get requests from process 1 in a superstep whose barrier announced none");
    }
}

// The barrier carries whether any process has get requests, as a flag of the summary that
// the merge ORs; an unknown flag is still refused.
TEST(PeerInput, BarrierCarriesWhetherAnyProcessGets) {
    Contribution a, b;
    a.row = {0, 1};
    b.row = {1, 0};
    b.gets = true;
    BarrierSummary s = summarize(0, a);
    EXPECT_FALSE(s.any_gets);
    EXPECT_FALSE(s.ref.gets);
    merge_summary(s, summarize(1, b));
    EXPECT_TRUE(s.any_gets);
    EXPECT_FALSE(s.ref.gets);  // never part of a contribution on the wire
    for (bool gets : {false, true}) {
        BarrierSummary t = summarize(1, b);
        t.any_gets = gets;
        const auto msg = encode_barrier(3, 1, BarrierMsg{t, {1}});
        Reader r(msg);
        read_header(r);
        EXPECT_EQ(decode_barrier(r, 2).summary.any_gets, gets);
    }
    auto msg = encode_barrier(3, 1, BarrierMsg{summarize(1, b), {1}});
    // header, first, members, senders: the flags byte follows
    msg[kMsgHeaderBytes + 12] |= std::byte{0x10};
    Reader r(msg);
    read_header(r);
    EXPECT_THROW(decode_barrier(r, 2), ProtocolError);
}

// What the transport is told to expect is a total for the superstep: the peer's counts
// message and its units. In a superstep without get requests the stream is expected as soon
// as its counts message is taken, from the lower bound the counts give (one unit: they
// announce one record and no bytes), and once more, when the first unit tells the exact
// number (six units of 64 bytes). The barrier's message is expected as the partner's one
// message of the barrier.
TEST(PeerInput, StreamExpectedAsATotalAtItsCountsMessage) {
    UnitPacker packer(0, 64);
    std::vector<std::byte> data(100, std::byte{7});
    packer.add(RecordKind::Send, 0, 0, data);
    auto units = packer.finish();
    ASSERT_EQ(units.size(), 6u);
    std::deque<std::vector<std::byte>> script{peer_barrier(0), peer_counts(0, 1)};
    for (const auto &u : units)
        script.push_back(u);
    ScriptedPeer peer(std::move(script));
    Runtime rt(0, 2, &peer, {});
    rt.sync("bsp_sync");
    EXPECT_EQ(peer.left(), 0u);
    // counts message + 1 unit, before any unit was received; counts message + 6 units, once
    // the first unit was
    const std::vector<ScriptedPeer::Expectation> want{{1, 2, 6}, {1, 7, 5}};
    EXPECT_EQ(peer.expected, want);
    EXPECT_EQ(peer.barrier_expected, (std::vector<int>{1}));
}
