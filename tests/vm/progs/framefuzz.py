#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Frame fuzzer of AF_BSP (AF_PACKET on a rail, in the VM).

  framefuzz.py DEV TARGET_MAC FRAMES SEED [CAPTURE_SECONDS]

Captures AF_BSP frames on DEV for CAPTURE_SECONDS (default 3; the rail
bridge must flood, no learning, to see the unicast traffic of others),
then sends FRAMES frames to TARGET_MAC (and some to broadcast):
  - mutations of the captured frames, every type seen (hello, DATA, ACK,
    PROD, CLOSE/REPLY/BUSY flavours): bit flips, interesting bytes, header
    fields set to boundary values, truncation, extension; half of them
    with the checksum recomputed so they pass it and reach the parsers
    behind it;
  - random AF_BSP-looking packets (valid checksum, random type, flags,
    nodes, ports, incarnations, sequence numbers, epochs, lengths) and
    random hellos;
  - random bytes after a version byte.
Frames of a type the capture did not see are synthesised. Source MACs are
DEV's or random locally administered unicast ones. Prints the frames sent by
kind and the types captured. The header layouts are the engine's
(kernel/engine/bspe_wire.h, Documentation/protocol.rst); bspforge.py builds
the well-formed ones.
"""
import os
import random
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bspforge  # noqa: E402

ETH_P_BSP = bspforge.ETH_P_BSP
HDR_LEN = bspforge.HDR_LEN
HELLO_LEN = bspforge.HELLO_LEN
T_HELLO = bspforge.T_HELLO

# (offset, size) of the fields of the 72-byte header and the 40-byte hello.
HDR_FIELDS = [(0, 1), (1, 1), (2, 2), (4, 4), (8, 4), (12, 2), (14, 2), (16, 1),
              (17, 1), (18, 2), (20, 4), (24, 4), (28, 4), (32, 4), (36, 4),
              (40, 4), (44, 4), (48, 4), (52, 4), (56, 4), (60, 2), (62, 2),
              (64, 8)]
HELLO_FIELDS = [(0, 1), (1, 1), (2, 2), (4, 4), (8, 4), (12, 1), (13, 1),
                (14, 2), (16, 4), (20, 4), (24, 4), (28, 2), (30, 2), (32, 8)]


def interesting(size, rng):
    top = (1 << (8 * size)) - 1
    return rng.choice([0, 1, 2, top, top - 1, top >> 1, (top >> 1) + 1,
                       rng.randrange(0, 64), rng.randrange(0, top + 1)])


def fix_csum(pkt):
    """Recompute the checksum of a hello or header packet (if long enough)."""
    if len(pkt) >= 2 and pkt[1] == T_HELLO and len(pkt) >= HELLO_LEN:
        h = bytearray(pkt[:HELLO_LEN])
        h[30:32] = b"\0\0"
        c = bspforge.csum(bytes(h))
        return pkt[:30] + struct.pack("!H", c) + pkt[32:]
    if len(pkt) >= HDR_LEN:
        p = bytearray(pkt)
        p[18:20] = b"\0\0"
        c = bspforge.csum(bytes(p))
        return pkt[:18] + struct.pack("!H", c) + pkt[20:]
    return pkt


def mutate(pkt, rng):
    p = bytearray(pkt)
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(6)
        if k == 0 and p:
            i = rng.randrange(len(p))
            p[i] ^= 1 << rng.randrange(8)
        elif k == 1 and p:
            p[rng.randrange(len(p))] = rng.choice([0, 1, 0x7F, 0x80, 0xFF])
        elif k in (2, 3):
            fields = HELLO_FIELDS if len(p) > 1 and p[1] == T_HELLO else HDR_FIELDS
            off, size = rng.choice(fields)
            if off + size <= len(p):
                p[off:off + size] = interesting(size, rng).to_bytes(size, "big")
        elif k == 4:
            del p[rng.randrange(len(p) + 1):]
        else:
            p += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    p = bytes(p)
    return fix_csum(p) if rng.random() < 0.5 else p


def random_hdr(rng, nodes):
    typ = rng.choice([1, 1, 2, 3, rng.randrange(256)])
    flags = rng.choice([0, rng.randrange(1 << 16), 1 << rng.randrange(16)])
    payload = bytes(rng.randrange(256) for _ in range(rng.choice(
        [0, 1, 16, rng.randrange(1400)])))
    pkt = bspforge.hdr_pkt(typ, rng.choice(nodes), rng.randrange(1 << 16),
                           rng.choice(nodes), rng.randrange(1 << 16),
                           flags=flags & 0xFFFF, epoch=rng.randrange(8),
                           seq=rng.choice([0, 1, rng.randrange(1 << 32)]),
                           payload=payload, src_inc=rng.randrange(1 << 32),
                           dst_inc=rng.choice([0, rng.randrange(1 << 32)]))
    if rng.random() < 0.5:
        pkt = mutate(pkt, rng)
    return pkt


def random_hello(rng, nodes):
    return bspforge.hello_pkt(rng.choice(nodes + [rng.randrange(1 << 32)]),
                              rng.randrange(1 << 32), rng.randrange(1 << 32),
                              rail=rng.randrange(4), nrails=rng.randrange(6),
                              mtu=rng.choice([0, 68, 1500, 9000, 65535]),
                              cluster=rng.choice([0, 0, rng.randrange(1 << 32)]),
                              auth=rng.random() < 0.2)


def capture(sock, seconds):
    """AF_BSP packets seen on the socket, by (type, flags)."""
    seen = {}
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([sock], [], [], left)
        if not r:
            continue
        frame = sock.recv(65536)
        pkt = frame[14:]
        if len(pkt) < 2:
            continue
        key = (pkt[1], struct.unpack("!H", pkt[2:4])[0] if len(pkt) >= 4 else 0)
        lst = seen.setdefault(key, [])
        if len(lst) < 16:
            lst.append(pkt)
    return seen


def main():
    if len(sys.argv) not in (5, 6):
        sys.stderr.write(__doc__)
        sys.exit(2)
    dev, target = sys.argv[1], bspforge.mac_bytes(sys.argv[2])
    frames, seed = int(sys.argv[3]), int(sys.argv[4])
    cap_secs = float(sys.argv[5]) if len(sys.argv) == 6 else 3.0
    rng = random.Random(seed)

    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_BSP))
    rx.bind((dev, ETH_P_BSP))
    seen = capture(rx, cap_secs)
    rx.close()
    nodes = sorted({struct.unpack("!I", p[4:8])[0] for k, ps in seen.items()
                    for p in ps if k[0] != T_HELLO and len(p) >= 8} |
                   {struct.unpack("!I", p[8:12])[0] for k, ps in seen.items()
                    for p in ps if k[0] == T_HELLO and len(p) >= 12}) or [1, 2]
    nodes = nodes + [0, 3, 0xFFFFFFFF]
    # Types the capture missed are synthesised.
    for typ in (1, 2, 3):
        if not any(k[0] == typ for k in seen):
            seen[(typ, 0)] = [bspforge.hdr_pkt(typ, nodes[0], 7000, nodes[1 % len(nodes)],
                                               7000, payload=b"x" * 16)]
    if not any(k[0] == T_HELLO for k in seen):
        seen[(T_HELLO, 0)] = [bspforge.hello_pkt(nodes[0], 1, 1)]
    pool = [p for ps in seen.values() for p in ps]

    link = bspforge.Link(dev)
    sent = {"mutated": 0, "random-header": 0, "random-hello": 0, "random-bytes": 0}
    for _ in range(frames):
        x = rng.random()
        if x < 0.5:
            kind, pkt = "mutated", mutate(rng.choice(pool), rng)
        elif x < 0.75:
            kind, pkt = "random-header", random_hdr(rng, nodes)
        elif x < 0.9:
            kind, pkt = "random-hello", random_hello(rng, nodes)
            if rng.random() < 0.3:
                pkt = mutate(pkt, rng)
        else:
            kind = "random-bytes"
            pkt = bytes([2]) + bytes(rng.randrange(256) for _ in range(rng.randrange(120)))
        dst = target if rng.random() < 0.8 else bspforge.BCAST
        if rng.random() < 0.1:
            link.src = bytes([0x02] + [rng.randrange(256) for _ in range(5)])
        else:
            link.src = link.s.getsockname()[4]
        try:
            link.send(dst, pkt[:1486])  # the rail MTU
        except OSError:
            continue
        sent[kind] += 1
    types = ",".join("%d/0x%04x:%d" % (k[0], k[1], len(v)) for k, v in sorted(seen.items()))
    print("framefuzz: seed %d, sent %d frames (%s); captured type/flags:count %s" % (
        seed, sum(sent.values()), ", ".join("%s %d" % kv for kv in sent.items()), types))


if __name__ == "__main__":
    main()
