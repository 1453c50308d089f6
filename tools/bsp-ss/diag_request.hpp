// The NETLINK_SOCK_DIAG dump request for AF_BSP sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bsp_ss {

// Bytes of a SOCK_DIAG_BY_FAMILY dump request (nlmsghdr + struct bsp_diag_req):
// sockets of family, bound to port (0 = every port), with the BSP_DIAG_SHOW_*
// attributes of show, sequence number seq.
std::vector<std::byte> build_dump_request(uint8_t family, uint16_t port, uint32_t show,
                                          uint32_t seq);

}  // namespace bsp_ss
