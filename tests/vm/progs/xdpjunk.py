#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Invalid and valid-looking AF_BSP frames for the XDP pre-filter tests.

  xdpjunk.py kinds DEV DST_MAC SRC_MAC NODE FREE_PORT CLUSTER N
      N frames of each invalid kind, to DST_MAC: short (a DATA header cut to
      20 bytes), version (version 1), type (type 9), cluster (a hello of
      cluster CLUSTER + 1), addr (DATA for node NODE + 1000), no_port (DATA
      for NODE, port FREE_PORT); DATA frames claim node 1 from SRC_MAC.
      Prints "sent KIND N" per kind.
  xdpjunk.py data DEV DST_MAC SRC_MAC SRC_NODE DST_NODE DST_PORT PORT0 N
      N well-formed DATA frames for (DST_NODE, DST_PORT) from (SRC_NODE,
      PORT0 + i) for i < N, from SRC_MAC. Prints "sent data N".
  xdpjunk.py slots SRC_NODE DST_PORT PORT0 N NCPUS
      the cpumap slot the pre-filter steers each of the frames of "data" to,
      counted per slot: "slot S N" lines (the hash of ebpf/xdp_bsp.bpf.c).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bspforge  # noqa: E402


def hdr(typ, src_node, src_port, dst_node, dst_port, payload=b"x" * 16):
    return bspforge.hdr_pkt(typ, src_node, src_port, dst_node, dst_port,
                            payload=payload if typ == bspforge.T_DATA else b"")


def channel_slot(src_node, src_port, dst_port, ncpus):
    m = 0xFFFFFFFF
    a = (src_node * 0x9E3779B1) & m
    b = (((src_port << 16) | dst_port) * 0x85EBCA6B) & m
    a ^= b
    a ^= a >> 15
    a = (a * 0xC2B2AE35) & m
    return (a >> 8) % ncpus


def main(argv):
    cmd = argv[0]
    if cmd == "slots":
        src_node, dst_port, port0, n, ncpus = map(int, argv[1:6])
        counts = {}
        for i in range(n):
            s = channel_slot(src_node, port0 + i, dst_port, ncpus)
            counts[s] = counts.get(s, 0) + 1
        for s in sorted(counts):
            print("slot %d %d" % (s, counts[s]))
        return
    dev, dst, src = argv[1], bspforge.mac_bytes(argv[2]), argv[3]
    link = bspforge.Link(dev, src)
    if cmd == "kinds":
        node, free_port, cluster, n = map(int, argv[4:8])
        data = hdr(bspforge.T_DATA, 1, 1000, node, free_port)
        kinds = [
            ("short", data[:20]),
            ("version", bytes([1]) + data[1:]),
            ("type", data[:1] + bytes([9]) + data[2:]),
            ("cluster", bspforge.hello_pkt(4242, 1, 1, cluster=cluster + 1)),
            ("addr", hdr(bspforge.T_DATA, 1, 1000, node + 1000, free_port)),
            ("no_port", data),
        ]
        for name, pkt in kinds:
            for _ in range(n):
                link.send(dst, pkt)
            print("sent %s %d" % (name, n))
    elif cmd == "data":
        src_node, dst_node, dst_port, port0, n = map(int, argv[4:9])
        for i in range(n):
            link.send(dst, hdr(bspforge.T_DATA, src_node, port0 + i, dst_node,
                               dst_port))
        print("sent data %d" % n)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
