#include "diag_parser.hpp"

#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include <cstring>
#include <string>

namespace bsp_ss {
namespace {

// Errors travel as -errno; the kernel's errno values stay below MAX_ERRNO.
constexpr int kMaxErrno = 4095;

constexpr size_t align4(size_t n) {
    return (n + 3) & ~size_t(3);
}

// Copies a trivially copyable T from the start of b (b.size() >= sizeof(T)).
template <typename T>
T load(std::span<const std::byte> b) {
    T v;
    std::memcpy(&v, b.data(), sizeof(T));
    return v;
}

std::string str(size_t n) {
    return std::to_string(n);
}

std::string parse_ext_ack(std::span<const std::byte> tlvs) {
    while (tlvs.size() >= sizeof(nlattr)) {
        auto a = load<nlattr>(tlvs);
        if (a.nla_len < sizeof(nlattr) || a.nla_len > tlvs.size())
            return {};
        if ((a.nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG && a.nla_len > NLA_HDRLEN) {
            auto s = tlvs.subspan(NLA_HDRLEN, a.nla_len - NLA_HDRLEN);
            std::string msg(reinterpret_cast<const char *>(s.data()), s.size());
            msg.resize(std::strlen(msg.c_str()));  // drop the terminating NUL
            return msg;
        }
        tlvs = tlvs.subspan(std::min<size_t>(align4(a.nla_len), tlvs.size()));
    }
    return {};
}

void parse_error(const nlmsghdr &h, std::span<const std::byte> payload, DumpResult &out) {
    if (payload.size() < sizeof(int)) {
        out.malformed = "NLMSG_ERROR of " + str(payload.size()) + " bytes, shorter than its errno";
        return;
    }
    int err = load<int>(payload);
    if (err > 0 || err < -kMaxErrno) {
        out.malformed = "NLMSG_ERROR with impossible error " + std::to_string(err);
        return;
    }
    if (err == 0) {  // an acknowledgement, not an error
        ++out.skipped;
        return;
    }
    out.error = -err;
    if (!(h.nlmsg_flags & NLM_F_ACK_TLVS))
        return;
    // struct nlmsgerr: the errno, then our request (only its header if capped)
    size_t off = sizeof(int);
    if (payload.size() < off + sizeof(nlmsghdr))
        return;
    size_t echoed = sizeof(nlmsghdr);
    if (!(h.nlmsg_flags & NLM_F_CAPPED)) {
        auto req = load<nlmsghdr>(payload.subspan(off));
        echoed = std::max<size_t>(align4(req.nlmsg_len), sizeof(nlmsghdr));
    }
    if (payload.size() < off + echoed)
        return;
    out.error_msg = parse_ext_ack(payload.subspan(off + echoed));
}

void parse_done(std::span<const std::byte> payload, DumpResult &out) {
    // A dump that failed half-way reports its error in the DONE message.
    if (payload.size() >= sizeof(int)) {
        int err = load<int>(payload);
        if (err < -kMaxErrno) {
            out.malformed = "NLMSG_DONE with impossible error " + std::to_string(err);
            return;
        }
        if (err < 0) {
            out.error = -err;
            return;
        }
    }
    out.done = true;
}

void parse_socket(std::span<const std::byte> payload, const ParseContext &ctx, DumpResult &out) {
    if (payload.size() < sizeof(bsp_diag_msg)) {
        out.malformed = "sock_diag answer of " + str(payload.size()) +
                        " bytes, shorter than struct bsp_diag_msg (" + str(sizeof(bsp_diag_msg)) +
                        ")";
        return;
    }
    auto m = load<bsp_diag_msg>(payload);
    if (m.bdiag_family != ctx.family) {
        out.malformed = "sock_diag answer for family " + std::to_string(m.bdiag_family) +
                        ", asked for " + std::to_string(ctx.family);
        return;
    }
    DiagSocket s;
    s.family = m.bdiag_family;
    s.type = m.bdiag_type;
    s.local = {m.bdiag_node, m.bdiag_port};
    s.inode = m.bdiag_ino;
    s.cookie = uint64_t(m.bdiag_cookie[1]) << 32 | m.bdiag_cookie[0];
    s.rqueue = m.bdiag_rqueue;
    s.wqueue = m.bdiag_wqueue;
    size_t attr_off = std::min(align4(sizeof(bsp_diag_msg)), payload.size());
    std::string err = parse_diag_attributes(payload.subspan(attr_off), s);
    if (!err.empty()) {
        out.malformed = "socket inode " + std::to_string(s.inode) + ": " + err;
        return;
    }
    if (!out.cookies.insert(s.cookie).second) {
        ++out.duplicates;
        return;
    }
    out.sockets.push_back(s);
}

}  // namespace

std::string parse_diag_attributes(std::span<const std::byte> attrs, DiagSocket &sock) {
    while (!attrs.empty()) {
        if (attrs.size() < sizeof(nlattr))
            return "attribute header truncated (" + str(attrs.size()) + " bytes left)";
        auto a = load<nlattr>(attrs);
        if (a.nla_len < sizeof(nlattr))
            return "attribute length " + str(a.nla_len) + " shorter than its header";
        if (a.nla_len > attrs.size())
            return "attribute type " + str(a.nla_type & NLA_TYPE_MASK) + " of length " +
                   str(a.nla_len) + " overruns the message (" + str(attrs.size()) + " bytes left)";
        auto data = attrs.subspan(NLA_HDRLEN, a.nla_len - NLA_HDRLEN);
        auto need = [&](size_t n, const char *what) -> std::string {
            if (data.size() >= n)
                return {};
            return std::string(what) + " attribute of " + str(data.size()) +
                   " bytes, shorter than " + str(n);
        };
        std::string err;
        switch (a.nla_type & NLA_TYPE_MASK) {
            case BSP_DIAG_UNSPEC:  // padding of 64-bit attributes
                break;
            case BSP_DIAG_PEER:
                err = need(sizeof(sockaddr_bsp), "BSP_DIAG_PEER");
                if (err.empty()) {
                    auto p = load<sockaddr_bsp>(data);
                    sock.peer = Endpoint{p.sbsp_node, p.sbsp_port};
                }
                break;
            case BSP_DIAG_MEMINFO: {
                if (data.size() % sizeof(uint32_t) != 0) {
                    err = "BSP_DIAG_MEMINFO attribute of " + str(data.size()) +
                          " bytes, not a whole number of __u32";
                    break;
                }
                MemInfo mi;
                mi.count = std::min(data.size() / sizeof(uint32_t), MemInfo::kMax);
                for (size_t i = 0; i < mi.count; ++i)
                    mi.values[i] = load<uint32_t>(data.subspan(i * sizeof(uint32_t)));
                sock.meminfo = mi;
                break;
            }
            case BSP_DIAG_STATS:
                err = need(sizeof(bsp_sock_stats), "BSP_DIAG_STATS");
                if (err.empty())
                    sock.stats = load<bsp_sock_stats>(data);
                break;
            case BSP_DIAG_SUPERSTEP:
                err = need(sizeof(bsp_diag_superstep), "BSP_DIAG_SUPERSTEP");
                if (err.empty())
                    sock.superstep = load<bsp_diag_superstep>(data);
                break;
            case BSP_DIAG_PROTO:
                err = need(sizeof(bsp_proto_stats), "BSP_DIAG_PROTO");
                if (err.empty())
                    sock.proto = load<bsp_proto_stats>(data);
                break;
            default:  // a newer kernel's attribute: skipped
                ++sock.unknown_attrs;
                break;
        }
        if (!err.empty())
            return err;
        // the last attribute may lack its padding
        attrs = attrs.subspan(std::min<size_t>(align4(a.nla_len), attrs.size()));
    }
    return {};
}

void parse_diag_datagram(std::span<const std::byte> buf, const ParseContext &ctx, DumpResult &out) {
    while (!buf.empty() && !out.finished()) {
        if (buf.size() < sizeof(nlmsghdr)) {
            out.malformed = "netlink header truncated (" + str(buf.size()) + " bytes left)";
            return;
        }
        auto h = load<nlmsghdr>(buf);
        if (h.nlmsg_len < sizeof(nlmsghdr)) {
            out.malformed =
                "netlink message length " + str(h.nlmsg_len) + " shorter than its header";
            return;
        }
        if (h.nlmsg_len > buf.size()) {
            out.malformed = "netlink message length " + str(h.nlmsg_len) + " overruns the " +
                            str(buf.size()) + " bytes received";
            return;
        }
        auto payload = buf.subspan(NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN);
        buf = buf.subspan(std::min<size_t>(align4(h.nlmsg_len), buf.size()));
        if (h.nlmsg_seq != ctx.seq) {  // an answer to some other request
            ++out.skipped;
            continue;
        }
        if (h.nlmsg_flags & NLM_F_DUMP_INTR)
            out.interrupted = true;
        switch (h.nlmsg_type) {
            case NLMSG_NOOP:
                ++out.skipped;
                break;
            case NLMSG_ERROR:
                parse_error(h, payload, out);
                break;
            case NLMSG_DONE:
                parse_done(payload, out);
                break;
            case NLMSG_OVERRUN:
                out.malformed = "netlink reported an overrun (answers were lost)";
                break;
            case SOCK_DIAG_BY_FAMILY:
                parse_socket(payload, ctx, out);
                break;
            default:
                out.malformed = "unexpected netlink message type " + std::to_string(h.nlmsg_type);
                break;
        }
    }
}

}  // namespace bsp_ss
