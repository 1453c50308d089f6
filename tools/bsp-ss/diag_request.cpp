#include "diag_request.hpp"

#include <linux/bsp.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include <cstring>

namespace bsp_ss {

std::vector<std::byte> build_dump_request(uint8_t family, uint16_t port, uint32_t show,
                                          uint32_t seq) {
    nlmsghdr h{};
    h.nlmsg_len = NLMSG_LENGTH(sizeof(bsp_diag_req));
    h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    h.nlmsg_seq = seq;
    h.nlmsg_pid = 0;
    bsp_diag_req r{};
    r.sdiag_family = family;
    r.sdiag_protocol = 0;
    r.bdiag_port = port;
    r.bdiag_show = show;
    std::vector<std::byte> buf(h.nlmsg_len);
    std::memcpy(buf.data(), &h, sizeof(h));
    std::memcpy(buf.data() + NLMSG_HDRLEN, &r, sizeof(r));
    return buf;
}

}  // namespace bsp_ss
