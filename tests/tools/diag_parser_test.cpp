// Tests of tools/bsp-ss/diag_parser.cpp with hand-built netlink answers:
// good dumps, multi-part dumps, errors, and hostile input (truncated,
// oversized lengths, unknown and malformed attributes).
#include "diag_parser.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <random>
#include <string>

#include "nl_builder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

using namespace nltest;
using bsp_ss::DumpResult;
using bsp_ss::ParseContext;

constexpr uint32_t kSeq = 77;

ParseContext ctx() {
    ParseContext c;
    c.seq = kSeq;
    c.family = AF_BSP;
    return c;
}

DumpResult parse(const Bytes &b) {
    DumpResult r;
    bsp_ss::parse_diag_datagram(b, ctx(), r);
    return r;
}

bsp_sock_stats sample_stats() {
    bsp_sock_stats st{};
    st.tx_msgs = 1;
    st.tx_bytes = 2;
    st.rx_msgs = 3;
    st.rx_bytes = 4;
    st.retransmits = 11;
    st.rx_dropped = 16;
    return st;
}

sockaddr_bsp peer_addr(uint32_t node, uint16_t port) {
    sockaddr_bsp a{};
    a.sbsp_family = AF_BSP;
    a.sbsp_node = node;
    a.sbsp_port = port;
    return a;
}

std::vector<Bytes> all_attrs() {
    uint32_t mem[SK_MEMINFO_VARS];
    for (unsigned i = 0; i < SK_MEMINFO_VARS; ++i)
        mem[i] = 1000 + i;
    bsp_diag_superstep ss{};
    ss.epoch = 5;
    ss.group_size = 4;
    ss.pacing_rate = 125000000;
    return {attr_of(BSP_DIAG_PEER, peer_addr(9, 40000)), attr_of(BSP_DIAG_MEMINFO, mem),
            attr_of(BSP_DIAG_STATS, sample_stats()), attr_of(BSP_DIAG_SUPERSTEP, ss)};
}

TEST(DiagParser, EmptyDumpIsDone) {
    DumpResult r = parse(done_message(kSeq));
    EXPECT_TRUE(r.done);
    EXPECT_TRUE(r.finished());
    EXPECT_EQ(r.error, 0);
    EXPECT_EQ(r.malformed, "");
    EXPECT_TRUE(r.sockets.empty());
}

TEST(DiagParser, OneSocketWithoutAttributes) {
    DumpResult r =
        parse(concat({socket_message(kSeq, diag_msg(32768, 7, 1234)), done_message(kSeq)}));
    ASSERT_TRUE(r.done) << r.malformed;
    ASSERT_EQ(r.sockets.size(), 1u);
    const auto &s = r.sockets[0];
    EXPECT_EQ(s.family, AF_BSP);
    EXPECT_EQ(s.type, 4);
    EXPECT_EQ(s.local.node, 7u);
    EXPECT_EQ(s.local.port, 32768);
    EXPECT_EQ(s.inode, 1234u);
    EXPECT_EQ(s.cookie, (uint64_t(1) << 32) | (1234u * 3));
    EXPECT_EQ(s.rqueue, 1334u);
    EXPECT_EQ(s.wqueue, 1434u);
    EXPECT_FALSE(s.peer);
    EXPECT_FALSE(s.meminfo);
    EXPECT_FALSE(s.stats);
    EXPECT_FALSE(s.superstep);
    EXPECT_EQ(s.unknown_attrs, 0u);
}

TEST(DiagParser, EveryAttribute) {
    DumpResult r =
        parse(concat({socket_message(kSeq, diag_msg(5, 7, 1), all_attrs()), done_message(kSeq)}));
    ASSERT_TRUE(r.done) << r.malformed;
    ASSERT_EQ(r.sockets.size(), 1u);
    const auto &s = r.sockets[0];
    ASSERT_TRUE(s.peer);
    EXPECT_EQ(s.peer->node, 9u);
    EXPECT_EQ(s.peer->port, 40000);
    ASSERT_TRUE(s.meminfo);
    EXPECT_EQ(s.meminfo->count, size_t(SK_MEMINFO_VARS));
    for (unsigned i = 0; i < SK_MEMINFO_VARS; ++i)
        EXPECT_EQ(s.meminfo->values[i], 1000 + i);
    ASSERT_TRUE(s.stats);
    const bsp_sock_stats want = sample_stats();
    EXPECT_EQ(std::memcmp(&*s.stats, &want, sizeof(bsp_sock_stats)), 0);
    ASSERT_TRUE(s.superstep);
    EXPECT_EQ(s.superstep->epoch, 5u);
    EXPECT_EQ(s.superstep->group_size, 4u);
    EXPECT_EQ(s.superstep->pacing_rate, 125000000u);
}

TEST(DiagParser, ProtoAttribute) {
    bsp_proto_stats ps{};
    ps.data_tx = 40;
    ps.retx_failover = 3;
    ps.rail_down = 1;
    ps.srtt_max_ns = 123456;
    ps.drops[BSP_PROTO_DROP_DUP] = 2;
    DumpResult r =
        parse(concat({socket_message(kSeq, diag_msg(5, 7, 1), {attr_of(BSP_DIAG_PROTO, ps)}),
                      done_message(kSeq)}));
    ASSERT_TRUE(r.done) << r.malformed;
    ASSERT_EQ(r.sockets.size(), 1u);
    ASSERT_TRUE(r.sockets[0].proto);
    EXPECT_EQ(std::memcmp(&*r.sockets[0].proto, &ps, sizeof(ps)), 0);
    EXPECT_EQ(r.sockets[0].unknown_attrs, 0u);
}

TEST(DiagParser, MultiPartDump) {
    ParseContext c = ctx();
    DumpResult r;
    Bytes part1 = concat(
        {socket_message(kSeq, diag_msg(1, 7, 11)), socket_message(kSeq, diag_msg(2, 7, 12))});
    Bytes part2 = concat({socket_message(kSeq, diag_msg(3, 7, 13))});
    Bytes part3 = done_message(kSeq);
    bsp_ss::parse_diag_datagram(part1, c, r);
    EXPECT_FALSE(r.finished());
    bsp_ss::parse_diag_datagram(part2, c, r);
    EXPECT_FALSE(r.finished());
    bsp_ss::parse_diag_datagram(part3, c, r);
    EXPECT_TRUE(r.done);
    ASSERT_EQ(r.sockets.size(), 3u);
    EXPECT_EQ(r.sockets[0].inode, 11u);
    EXPECT_EQ(r.sockets[1].inode, 12u);
    EXPECT_EQ(r.sockets[2].inode, 13u);
    // a finished dump ignores anything that follows
    bsp_ss::parse_diag_datagram(part2, c, r);
    EXPECT_EQ(r.sockets.size(), 3u);
}

TEST(DiagParser, MessagesAfterDoneAreIgnored) {
    DumpResult r = parse(concat({done_message(kSeq), socket_message(kSeq, diag_msg(1, 7, 11))}));
    EXPECT_TRUE(r.done);
    EXPECT_TRUE(r.sockets.empty());
}

TEST(DiagParser, OtherSequenceNumbersAndNoopAreSkipped) {
    Bytes noop = message(NLMSG_NOOP, 0, kSeq, {});
    DumpResult r = parse(concat({socket_message(kSeq + 1, diag_msg(1, 7, 11)), noop,
                                 socket_message(kSeq, diag_msg(2, 7, 12)), done_message(kSeq + 1),
                                 done_message(kSeq)}));
    EXPECT_TRUE(r.done);
    ASSERT_EQ(r.sockets.size(), 1u);
    EXPECT_EQ(r.sockets[0].inode, 12u);
    EXPECT_EQ(r.skipped, 3u);
}

TEST(DiagParser, DumpInterrupted) {
    DumpResult r =
        parse(concat({socket_message(kSeq, diag_msg(1, 7, 11), {}, NLM_F_MULTI | NLM_F_DUMP_INTR),
                      done_message(kSeq)}));
    EXPECT_TRUE(r.done);
    EXPECT_TRUE(r.interrupted);
    EXPECT_EQ(r.sockets.size(), 1u);
    DumpResult r2 = parse(done_message(kSeq, 0, NLM_F_MULTI | NLM_F_DUMP_INTR));
    EXPECT_TRUE(r2.interrupted);
}

TEST(DiagParser, DuplicateSocketsAreKeptOnce) {
    ParseContext c = ctx();
    DumpResult r;
    bsp_ss::parse_diag_datagram(concat({socket_message(kSeq, diag_msg(1, 7, 11)),
                                        socket_message(kSeq, diag_msg(2, 7, 12))}),
                                c, r);
    // the next part repeats socket 12 (a resumed dump after a socket was added)
    bsp_ss::parse_diag_datagram(
        concat({socket_message(kSeq, diag_msg(2, 7, 12)), socket_message(kSeq, diag_msg(3, 7, 13)),
                done_message(kSeq)}),
        c, r);
    EXPECT_TRUE(r.done);
    EXPECT_EQ(r.duplicates, 1u);
    ASSERT_EQ(r.sockets.size(), 3u);
    EXPECT_EQ(r.sockets[1].inode, 12u);
    EXPECT_EQ(r.sockets[2].inode, 13u);
}

TEST(DiagParser, ErrorMessageGivesErrno) {
    DumpResult r = parse(error_message(kSeq, -ENOENT));
    EXPECT_EQ(r.error, ENOENT);
    EXPECT_FALSE(r.done);
    EXPECT_TRUE(r.finished());
    EXPECT_EQ(r.malformed, "");
    EXPECT_EQ(r.error_msg, "");
}

TEST(DiagParser, DoneWithErrorGivesErrno) {
    DumpResult r =
        parse(concat({socket_message(kSeq, diag_msg(1, 7, 11)), done_message(kSeq, -EMSGSIZE)}));
    EXPECT_EQ(r.error, EMSGSIZE);
    EXPECT_FALSE(r.done);
}

TEST(DiagParser, DoneWithoutPayloadIsDone) {
    DumpResult r = parse(message(NLMSG_DONE, NLM_F_MULTI, kSeq, {}));
    EXPECT_TRUE(r.done);
}

TEST(DiagParser, AckIsSkipped) {
    Bytes ack = error_message(kSeq, 0);
    DumpResult r = parse(concat({ack, done_message(kSeq)}));
    EXPECT_TRUE(r.done);
    EXPECT_EQ(r.skipped, 1u);
}

Bytes ext_ack_error(int err, bool capped, const char *text) {
    Bytes p;
    append(p, err);
    nlmsghdr req{};
    req.nlmsg_len = NLMSG_LENGTH(sizeof(bsp_diag_req));
    req.nlmsg_seq = kSeq;
    append(p, req);
    if (!capped)
        append(p, bsp_diag_req{});
    std::string s(text);
    Bytes tlv = attr(NLMSGERR_ATTR_MSG, std::as_bytes(std::span(s.c_str(), s.size() + 1)));
    p.insert(p.end(), tlv.begin(), tlv.end());
    return message(NLMSG_ERROR, NLM_F_ACK_TLVS | (capped ? NLM_F_CAPPED : 0), kSeq, p);
}

TEST(DiagParser, ExtendedAckMessage) {
    DumpResult r = parse(ext_ack_error(-EINVAL, true, "bad request"));
    EXPECT_EQ(r.error, EINVAL);
    EXPECT_EQ(r.error_msg, "bad request");
    DumpResult r2 = parse(ext_ack_error(-EINVAL, false, "uncapped"));
    EXPECT_EQ(r2.error, EINVAL);
    EXPECT_EQ(r2.error_msg, "uncapped");
}

TEST(DiagParser, TruncatedExtendedAckKeepsErrno) {
    Bytes b = ext_ack_error(-EPERM, true, "some text");
    // cut into the TLV: the message length says less, so the TLV overruns
    for (size_t cut = 16 + 4; cut < b.size(); ++cut) {
        Bytes t(b.begin(), b.begin() + cut);
        uint32_t len = uint32_t(cut);
        std::memcpy(t.data(), &len, sizeof(len));
        DumpResult r = parse(t);
        EXPECT_EQ(r.error, EPERM) << "cut " << cut;
        EXPECT_EQ(r.malformed, "") << "cut " << cut;
    }
}

TEST(DiagParser, ErrorShorterThanErrno) {
    Bytes p{std::byte{1}, std::byte{2}};
    DumpResult r = parse(message(NLMSG_ERROR, 0, kSeq, p));
    EXPECT_NE(r.malformed, "");
    EXPECT_EQ(r.error, 0);
}

TEST(DiagParser, ImpossibleErrorsAreMalformed) {
    for (int err : {5, -4096, INT_MIN}) {
        DumpResult r = parse(error_message(kSeq, err));
        EXPECT_NE(r.malformed.find("impossible error"), std::string::npos) << err;
        EXPECT_EQ(r.error, 0);
    }
    for (int err : {-4096, INT_MIN}) {
        DumpResult r = parse(done_message(kSeq, err));
        EXPECT_NE(r.malformed.find("impossible error"), std::string::npos) << err;
        EXPECT_EQ(r.error, 0);
        EXPECT_FALSE(r.done);
    }
}

TEST(DiagParser, OverrunAndUnknownTypesAreMalformed) {
    EXPECT_NE(parse(message(NLMSG_OVERRUN, 0, kSeq, {})).malformed, "");
    EXPECT_NE(parse(message(99, 0, kSeq, {})).malformed, "");
}

TEST(DiagParser, TruncatedNetlinkHeader) {
    Bytes b = socket_message(kSeq, diag_msg(1, 7, 11));
    for (size_t n = 1; n < NLMSG_HDRLEN; ++n) {
        DumpResult r = parse(Bytes(b.begin(), b.begin() + n));
        EXPECT_NE(r.malformed, "") << n;
        EXPECT_TRUE(r.sockets.empty());
    }
}

TEST(DiagParser, LengthShorterThanHeader) {
    for (int len : {0, 1, 15}) {
        Bytes b = message(SOCK_DIAG_BY_FAMILY, 0, kSeq, {}, len);
        DumpResult r = parse(b);
        EXPECT_NE(r.malformed, "") << len;
    }
}

TEST(DiagParser, OversizedMessageLength) {
    bsp_diag_msg m = diag_msg(1, 7, 11);
    Bytes payload;
    append(payload, m);
    for (int len : {int(NLMSG_HDRLEN + sizeof(m) + 1), 4096, 0x7fffffff}) {
        Bytes b = message(SOCK_DIAG_BY_FAMILY, 0, kSeq, payload, len);
        DumpResult r = parse(b);
        EXPECT_NE(r.malformed.find("overruns"), std::string::npos) << len << r.malformed;
        EXPECT_TRUE(r.sockets.empty());
    }
    // 0xffffffff as well (unsigned)
    Bytes b = message(SOCK_DIAG_BY_FAMILY, 0, kSeq, payload);
    uint32_t huge = 0xffffffffu;
    std::memcpy(b.data(), &huge, 4);
    EXPECT_NE(parse(b).malformed, "");
}

TEST(DiagParser, DiagPayloadShorterThanStruct) {
    bsp_diag_msg m = diag_msg(1, 7, 11);
    Bytes full;
    append(full, m);
    for (size_t n = 0; n < sizeof(m); ++n) {
        Bytes b = message(SOCK_DIAG_BY_FAMILY, 0, kSeq, std::span(full.data(), n));
        DumpResult r = parse(b);
        EXPECT_NE(r.malformed.find("shorter than struct bsp_diag_msg"), std::string::npos) << n;
        EXPECT_TRUE(r.sockets.empty());
    }
}

TEST(DiagParser, AnswerOfAnotherFamily) {
    DumpResult r = parse(socket_message(kSeq, diag_msg(1, 7, 11, AF_BSP + 1)));
    EXPECT_NE(r.malformed.find("family"), std::string::npos);
    EXPECT_TRUE(r.sockets.empty());
}

TEST(DiagParser, UnknownAttributesAreSkipped) {
    uint64_t future = 42;
    std::vector<Bytes> attrs = {attr_of(__BSP_DIAG_MAX, future), attr_of(200, future),
                                attr(300, {}), attr_of(BSP_DIAG_PEER, peer_addr(3, 4))};
    DumpResult r =
        parse(concat({socket_message(kSeq, diag_msg(1, 7, 11), attrs), done_message(kSeq)}));
    ASSERT_TRUE(r.done) << r.malformed;
    ASSERT_EQ(r.sockets.size(), 1u);
    EXPECT_EQ(r.sockets[0].unknown_attrs, 3u);
    ASSERT_TRUE(r.sockets[0].peer);
    EXPECT_EQ(r.sockets[0].peer->node, 3u);
}

TEST(DiagParser, PaddingAttributeIsNotUnknown) {
    std::vector<Bytes> attrs = {attr(BSP_DIAG_UNSPEC, {}), attr_of(BSP_DIAG_STATS, sample_stats())};
    DumpResult r =
        parse(concat({socket_message(kSeq, diag_msg(1, 7, 11), attrs), done_message(kSeq)}));
    ASSERT_EQ(r.sockets.size(), 1u);
    EXPECT_EQ(r.sockets[0].unknown_attrs, 0u);
    EXPECT_TRUE(r.sockets[0].stats);
}

TEST(DiagParser, AttributeFlagBitsAreMasked) {
    Bytes a = attr_of(BSP_DIAG_PEER, peer_addr(3, 4));
    a[2] = std::byte(BSP_DIAG_PEER);
    a[3] = std::byte(0x80);  // NLA_F_NESTED in the high byte (little endian)
    DumpResult r =
        parse(concat({socket_message(kSeq, diag_msg(1, 7, 11), {a}), done_message(kSeq)}));
    ASSERT_EQ(r.sockets.size(), 1u);
    EXPECT_TRUE(r.sockets[0].peer);
}

TEST(DiagParser, LongerAttributesOfANewerKernelAreAccepted) {
    Bytes p;
    append(p, sample_stats());
    append(p, uint64_t(99));  // a counter added later
    DumpResult r = parse(concat(
        {socket_message(kSeq, diag_msg(1, 7, 11), {attr(BSP_DIAG_STATS, p)}), done_message(kSeq)}));
    ASSERT_EQ(r.sockets.size(), 1u);
    ASSERT_TRUE(r.sockets[0].stats);
    EXPECT_EQ(r.sockets[0].stats->rx_dropped, 16u);
}

TEST(DiagParser, ShortKnownAttributesAreMalformed) {
    struct Case {
        uint16_t type;
        size_t full;
    };
    for (Case c :
         {Case{BSP_DIAG_PEER, sizeof(sockaddr_bsp)}, Case{BSP_DIAG_STATS, sizeof(bsp_sock_stats)},
          Case{BSP_DIAG_SUPERSTEP, sizeof(bsp_diag_superstep)},
          Case{BSP_DIAG_PROTO, sizeof(bsp_proto_stats)}}) {
        for (size_t n = 0; n < c.full; ++n) {
            Bytes payload(n, std::byte{0x5a});
            DumpResult r =
                parse(concat({socket_message(kSeq, diag_msg(1, 7, 11), {attr(c.type, payload)}),
                              done_message(kSeq)}));
            EXPECT_NE(r.malformed.find("shorter than"), std::string::npos) << c.type << " " << n;
            EXPECT_TRUE(r.sockets.empty());
        }
    }
}

TEST(DiagParser, MeminfoOfOddSizeIsMalformed) {
    Bytes payload(7, std::byte{1});
    DumpResult r =
        parse(socket_message(kSeq, diag_msg(1, 7, 11), {attr(BSP_DIAG_MEMINFO, payload)}));
    EXPECT_NE(r.malformed.find("__u32"), std::string::npos);
}

TEST(DiagParser, MeminfoShorterOrLongerThanKnown) {
    uint32_t three[3] = {1, 2, 3};
    DumpResult r =
        parse(concat({socket_message(kSeq, diag_msg(1, 7, 11), {attr_of(BSP_DIAG_MEMINFO, three)}),
                      done_message(kSeq)}));
    ASSERT_EQ(r.sockets.size(), 1u);
    EXPECT_EQ(r.sockets[0].meminfo->count, 3u);
    uint32_t many[40] = {};
    many[15] = 15;
    r = parse(concat({socket_message(kSeq, diag_msg(1, 7, 11), {attr_of(BSP_DIAG_MEMINFO, many)}),
                      done_message(kSeq)}));
    ASSERT_EQ(r.sockets.size(), 1u);
    EXPECT_EQ(r.sockets[0].meminfo->count, bsp_ss::MemInfo::kMax);
    EXPECT_EQ(r.sockets[0].meminfo->values[15], 15u);
}

TEST(DiagParser, AttributeLengthShorterThanHeader) {
    for (int len : {0, 1, 3}) {
        Bytes a = attr(BSP_DIAG_PEER, Bytes(16), len);
        DumpResult r = parse(socket_message(kSeq, diag_msg(1, 7, 11), {a}));
        EXPECT_NE(r.malformed.find("shorter than its header"), std::string::npos) << len;
        EXPECT_TRUE(r.sockets.empty());
    }
}

TEST(DiagParser, AttributeLengthOverrunsMessage) {
    for (int len : {24, 100, 65535}) {
        Bytes a = attr(BSP_DIAG_PEER, Bytes(16), len);
        DumpResult r = parse(socket_message(kSeq, diag_msg(1, 7, 11), {a}));
        EXPECT_NE(r.malformed.find("overruns"), std::string::npos) << len << " " << r.malformed;
        EXPECT_TRUE(r.sockets.empty());
    }
}

TEST(DiagParser, AttributeHeaderTruncated) {
    for (size_t n = 1; n < 4; ++n) {
        Bytes p;
        append(p, diag_msg(1, 7, 11));
        p.resize(p.size() + n, std::byte{4});
        DumpResult r = parse(message(SOCK_DIAG_BY_FAMILY, 0, kSeq, p));
        EXPECT_NE(r.malformed.find("attribute header truncated"), std::string::npos) << n;
    }
}

TEST(DiagParser, LastAttributeWithoutPadding) {
    // a 5-byte attribute ends the message: its padding is not there
    Bytes p;
    append(p, diag_msg(1, 7, 11));
    nlattr a{};
    a.nla_len = 5;
    a.nla_type = 250;
    append(p, a);
    p.push_back(std::byte{9});
    Bytes msg = message(SOCK_DIAG_BY_FAMILY, 0, kSeq, p);
    msg.resize(NLMSG_HDRLEN + p.size());  // no padding of the message either
    DumpResult r = parse(msg);
    EXPECT_EQ(r.malformed, "");
    ASSERT_EQ(r.sockets.size(), 1u);
    EXPECT_EQ(r.sockets[0].unknown_attrs, 1u);
}

TEST(DiagParser, UnalignedBuffer) {
    Bytes good =
        concat({socket_message(kSeq, diag_msg(1, 7, 11), all_attrs()), done_message(kSeq)});
    Bytes shifted(good.size() + 1);
    std::memcpy(shifted.data() + 1, good.data(), good.size());
    DumpResult r;
    bsp_ss::parse_diag_datagram(std::span(shifted).subspan(1), ctx(), r);
    EXPECT_TRUE(r.done);
    ASSERT_EQ(r.sockets.size(), 1u);
    EXPECT_TRUE(r.sockets[0].stats);
}

// Every prefix of a good datagram: the parser either accepts what is
// complete or reports it malformed, and never reads beyond the prefix (ASan).
TEST(DiagParser, EveryTruncation) {
    Bytes good = concat({socket_message(kSeq, diag_msg(1, 7, 11), all_attrs()),
                         socket_message(kSeq, diag_msg(2, 7, 12)), done_message(kSeq)});
    size_t first_end = socket_message(kSeq, diag_msg(1, 7, 11), all_attrs()).size();
    for (size_t n = 0; n < good.size(); ++n) {
        std::vector<std::byte> prefix(good.begin(), good.begin() + n);  // exact-size heap buffer
        DumpResult r = parse(prefix);
        EXPECT_FALSE(r.done) << n;
        if (n == 0 || n == first_end ||
            n == first_end + socket_message(kSeq, diag_msg(2, 7, 12)).size()) {
            EXPECT_EQ(r.malformed, "") << n;
        } else {
            EXPECT_NE(r.malformed, "") << n;
        }
        EXPECT_LE(r.sockets.size(), 2u);
    }
}

// Random corruption of good answers, through the fuzz target's entry point:
// no crash, no sanitizer report.
TEST(DiagParser, RandomCorruption) {
    Bytes good = concat({socket_message(0, diag_msg(1, AF_BSP, 11), all_attrs()),
                         ext_ack_error(-EINVAL, false, "x"), done_message(0)});
    std::mt19937 rng(12345);
    for (int i = 0; i < 20000; ++i) {
        Bytes b = good;
        int flips = 1 + int(rng() % 8);
        for (int f = 0; f < flips; ++f)
            b[rng() % b.size()] = std::byte(rng());
        b.resize(rng() % (b.size() + 1));
        std::vector<uint8_t> in(b.size());
        if (!b.empty())
            std::memcpy(in.data(), b.data(), b.size());
        ASSERT_EQ(LLVMFuzzerTestOneInput(in.data(), in.size()), 0);
    }
}

}  // namespace
