#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Forge AF_BSP frames from a host that is not a cluster member (AF_PACKET).

  bspforge.py hello DEV NODE INC SEQ [--rail R] [--nrails N] [--mtu M]
                    [--cluster C] [--src MAC] [--auth]
      one hello (broadcast) claiming node NODE, incarnation INC, hello_seq SEQ;
      --auth: flagged as authenticated, with a made-up MAC
  bspforge.py sniff DEV NODE TIMEOUT
      waits for a hello of NODE on DEV, prints "INC SEQ SRC_MAC HEX" (the frame)
  bspforge.py sniffdata DEV NODE TIMEOUT
      waits for a DATA frame with payload from NODE on DEV, prints its HEX
  bspforge.py replay DEV HEX [--dst MAC]
      sends the AF_BSP packet HEX (from sniff) again, to MAC or broadcast
  bspforge.py frame DEV DST_MAC TYPE SRC_NODE SRC_PORT DST_NODE DST_PORT
                    [--flags F] [--epoch E] [--seq S] [--count K] [--src MAC]
      K (default 1) DATA/ACK/PROD frames (TYPE data|ack|prod), valid checksum;
      DATA carries a 16-byte message of its own
  bspforge.py flood DEV DST_MAC DST_NODE DST_PORT COUNT NODE0
      COUNT DATA frames from COUNT distinct (node, port) sources: node
      NODE0 + i // 16, port 1000 + i % 16
  bspforge.py hellos DEV COUNT NODE0
      COUNT hellos (broadcast) from COUNT distinct node ids NODE0 + i
  bspforge.py batch
      the commands above, one per line of standard input (no python start-up
      between them)
Prints the number of frames sent. The header layout is the engine's
(kernel/engine/bspe_wire.h, Documentation/protocol.rst).
"""
import argparse
import shlex
import socket
import struct
import sys

ETH_P_BSP = 0x88B5
VERSION = 3
T_DATA, T_ACK, T_PROD, T_HELLO = 1, 2, 3, 4
F_CSUM = 0x0020
F_AUTH = 0x0200
HELLO_F_AUTH = 0x0001
HDR_LEN = 72
HELLO_LEN = 40
MAC_LEN = 8


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def hello_pkt(node, inc, seq, rail=0, nrails=1, mtu=1500, cluster=0,
              auth=False):
    """A hello; with auth, flagged as authenticated with a MAC that is not
    the cluster key's (a forger has no key)."""
    flags = HELLO_F_AUTH if auth else 0
    mac = 0x0123456789ABCDEF if auth else 0
    h = struct.pack("!BBHIIBBHIIIHHQ", VERSION, T_HELLO, flags, cluster, node,
                    rail, nrails, mtu, 1, inc, seq, 100, 0, mac)
    assert len(h) == HELLO_LEN
    c = csum(h)
    return h[:30] + struct.pack("!H", c) + h[32:]


def hdr_pkt(typ, src_node, src_port, dst_node, dst_port, flags=0, epoch=0,
            seq=0, payload=b"", src_inc=1, dst_inc=0):
    flags |= F_CSUM
    msg_len = len(payload) if typ == T_DATA else 0
    unit = max(len(payload), 1) if typ == T_DATA else 0
    h = struct.pack("!BBHIIHHBBHIIIIIIIIIIHHQ", VERSION, typ, flags, src_node,
                    dst_node, src_port, dst_port, 0, 0, 0, src_inc, dst_inc,
                    seq, 0, 0, 0, epoch, 0, msg_len, 0, unit, len(payload), 0)
    assert len(h) == HDR_LEN
    c = csum(h + payload)
    return h[:18] + struct.pack("!H", c) + h[20:] + payload


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


class Link:
    def __init__(self, dev, src=None):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.s.bind((dev, 0))
        self.src = mac_bytes(src) if src else self.s.getsockname()[4]
        self.sent = 0

    def send(self, dst, pkt):
        frame = dst + self.src + struct.pack("!H", ETH_P_BSP) + pkt
        if len(frame) < 60:
            frame += bytes(60 - len(frame))
        self.s.send(frame)
        self.sent += 1


BCAST = b"\xff" * 6
TYPES = {"data": T_DATA, "ack": T_ACK, "prod": T_PROD}


def main():
    if sys.argv[1:2] == ["batch"]:
        # one command per line of standard input, all in this process
        for line in sys.stdin:
            if line.strip():
                run(shlex.split(line))
        return
    run(sys.argv[1:])


def run(argv):
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("cmd")
    ap.add_argument("args", nargs="*")
    ap.add_argument("--rail", type=int, default=0)
    ap.add_argument("--nrails", type=int, default=1)
    ap.add_argument("--mtu", type=int, default=1500)
    ap.add_argument("--cluster", type=int, default=0)
    ap.add_argument("--src")
    ap.add_argument("--dst")
    ap.add_argument("--auth", action="store_true")
    ap.add_argument("--flags", type=lambda x: int(x, 0), default=0)
    ap.add_argument("--epoch", type=int, default=0)
    ap.add_argument("--seq", type=int, default=0)
    ap.add_argument("--count", type=int, default=1)
    o = ap.parse_args(argv)
    a = o.args
    if o.cmd == "sniffdata":
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_BSP))
        s.bind((a[0], ETH_P_BSP))
        want = int(a[1])
        s.settimeout(float(a[2]))
        while True:
            f = s.recv(65536)
            p = f[14:]
            if len(p) > HDR_LEN and p[1] == T_DATA:
                node, = struct.unpack("!I", p[4:8])
                plen, = struct.unpack("!H", p[HDR_LEN - 2 - MAC_LEN:HDR_LEN - MAC_LEN])
                if node == want and plen:
                    print(p[:HDR_LEN + plen].hex())
                    return
    if o.cmd == "sniff":
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_BSP))
        s.bind((a[0], ETH_P_BSP))
        want = int(a[1])
        s.settimeout(float(a[2]))
        while True:
            f = s.recv(2048)
            p = f[14:14 + HELLO_LEN]
            if len(p) == HELLO_LEN and p[1] == T_HELLO:
                node, = struct.unpack("!I", p[8:12])
                if node == want:
                    inc, seq = struct.unpack("!II", p[20:28])
                    print(inc, seq, ":".join("%02x" % b for b in f[6:12]), p.hex())
                    return
    link = Link(a[0], o.src)
    if o.cmd == "hello":
        link.send(BCAST, hello_pkt(int(a[1]), int(a[2]), int(a[3]), o.rail,
                                   o.nrails, o.mtu, o.cluster, o.auth))
    elif o.cmd == "replay":
        link.send(mac_bytes(o.dst) if o.dst else BCAST, bytes.fromhex(a[1]))
    elif o.cmd == "frame":
        dst = mac_bytes(a[1])
        typ = TYPES[a[2]]
        payload = b"forged-message!!" if typ == T_DATA else b""
        for i in range(o.count):
            link.send(dst, hdr_pkt(typ, int(a[3]), int(a[4]), int(a[5]),
                                   int(a[6]), o.flags, o.epoch, o.seq + i,
                                   payload))
    elif o.cmd == "flood":
        # one frame edited in place (no checksum: these frames are refused
        # before anything would look at it), so that python keeps up
        dst = mac_bytes(a[1])
        dnode, dport, count, node0 = int(a[2]), int(a[3]), int(a[4]), int(a[5])
        frame = bytearray(dst + link.src + struct.pack("!H", ETH_P_BSP) +
                          hdr_pkt(T_DATA, node0, 1000, dnode, dport, 0, 0, 0,
                                  b"forged-message!!"))
        frame[16:18] = b"\0\0"        # flags: no BSPE_F_CSUM
        send = link.s.send
        for i in range(count):
            struct.pack_into("!I", frame, 18, node0 + i // 16)
            struct.pack_into("!H", frame, 26, 1000 + i % 16)
            send(frame)
        link.sent = count
    elif o.cmd == "hellos":
        count, node0 = int(a[1]), int(a[2])
        for i in range(count):
            link.send(BCAST, hello_pkt(node0 + i, 1, 1, o.rail, o.nrails,
                                       o.mtu, o.cluster))
    else:
        sys.exit(__doc__)
    print(link.sent)


if __name__ == "__main__":
    main()
