// Builds netlink datagrams by hand for the bsp-ss parser tests: messages are
// appended with any length field the test wants, including wrong ones.
#pragma once

#include <linux/bsp.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace nltest {

using Bytes = std::vector<std::byte>;

template <typename T>
void append(Bytes &b, const T &v) {
    size_t at = b.size();
    b.resize(at + sizeof(T));
    std::memcpy(b.data() + at, &v, sizeof(T));
}

inline void pad4(Bytes &b) {
    while (b.size() % 4)
        b.push_back(std::byte{0});
}

// One attribute: header with nla_len = 4 + payload size (or forced_len), payload, padding.
inline Bytes attr(uint16_t type, std::span<const std::byte> payload, int forced_len = -1) {
    Bytes b;
    nlattr a{};
    a.nla_len = uint16_t(forced_len >= 0 ? forced_len : int(NLA_HDRLEN + payload.size()));
    a.nla_type = type;
    append(b, a);
    b.insert(b.end(), payload.begin(), payload.end());
    pad4(b);
    return b;
}

template <typename T>
Bytes attr_of(uint16_t type, const T &v) {
    return attr(type, std::as_bytes(std::span(&v, 1)));
}

inline bsp_diag_msg diag_msg(uint16_t port, uint32_t node, uint32_t ino, uint8_t family = AF_BSP) {
    bsp_diag_msg m{};
    m.bdiag_family = family;
    m.bdiag_type = 4;  // SOCK_RDM
    m.bdiag_port = port;
    m.bdiag_node = node;
    m.bdiag_ino = ino;
    m.bdiag_cookie[0] = ino * 3;
    m.bdiag_cookie[1] = 1;
    m.bdiag_rqueue = ino + 100;
    m.bdiag_wqueue = ino + 200;
    return m;
}

// One netlink message: header (nlmsg_len = 16 + payload, or forced_len), payload, padding.
inline Bytes message(uint16_t type, uint16_t flags, uint32_t seq,
                     std::span<const std::byte> payload, int forced_len = -1) {
    Bytes b;
    nlmsghdr h{};
    h.nlmsg_len = uint32_t(forced_len >= 0 ? forced_len : int(NLMSG_HDRLEN + payload.size()));
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;
    h.nlmsg_seq = seq;
    h.nlmsg_pid = 4242;
    append(b, h);
    b.insert(b.end(), payload.begin(), payload.end());
    pad4(b);
    return b;
}

// A SOCK_DIAG_BY_FAMILY answer: the diag message followed by the attributes.
inline Bytes socket_message(uint32_t seq, const bsp_diag_msg &m,
                            const std::vector<Bytes> &attrs = {}, uint16_t flags = NLM_F_MULTI) {
    Bytes p;
    append(p, m);
    for (const auto &a : attrs)
        p.insert(p.end(), a.begin(), a.end());
    return message(SOCK_DIAG_BY_FAMILY, flags, seq, p);
}

inline Bytes done_message(uint32_t seq, int err = 0, uint16_t flags = NLM_F_MULTI) {
    Bytes p;
    append(p, err);
    return message(NLMSG_DONE, flags, seq, p);
}

inline Bytes error_message(uint32_t seq, int err) {
    Bytes p;
    nlmsgerr e{};
    e.error = err;
    e.msg.nlmsg_len = NLMSG_LENGTH(sizeof(bsp_diag_req));
    e.msg.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    e.msg.nlmsg_seq = seq;
    append(p, e);
    bsp_diag_req r{};  // the echoed request payload
    append(p, r);
    return message(NLMSG_ERROR, 0, seq, p);
}

inline Bytes concat(std::initializer_list<Bytes> parts) {
    Bytes b;
    for (const auto &p : parts)
        b.insert(b.end(), p.begin(), p.end());
    return b;
}

}  // namespace nltest
