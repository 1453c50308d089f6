#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Send or receive raw frames of one EtherType on an interface (AF_PACKET).

  rawframes.py send DEV DST_MAC COUNT      frames "FLT1" + be32 seq, seq 0..COUNT-1
  rawframes.py recv DEV IDLE_SECONDS READY_FILE [LAST]
      prints the seq of every frame received, one per line, until frame LAST
      arrived or no frame arrived for IDLE_SECONDS; touches READY_FILE once
      the socket is bound.
Used by the XDP fault-injection case; EtherType 0x88B5 (ETH_P_BSP).
"""
import socket
import struct
import sys

ETH_P_BSP = 0x88B5
SO_RCVBUFFORCE = 33  # not exported by every Python build
TAG = b"FLT1"


def send(dev, dst, count):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    src = s.getsockname()[4]
    dmac = bytes(int(x, 16) for x in dst.split(":"))
    for seq in range(count):
        frame = dmac + src + struct.pack("!H", ETH_P_BSP) + TAG + struct.pack("!I", seq)
        s.send(frame + bytes(46 - 8))
    s.close()


def recv(dev, idle, ready, last=None):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_BSP))
    # Frames that passed XDP on veth are page-backed (truesize 4 KiB or more):
    # make room for every frame of the test so the socket itself drops none.
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    s.bind((dev, ETH_P_BSP))
    s.settimeout(idle)
    open(ready, "w").close()
    while True:
        try:
            frame = s.recv(2048)
        except socket.timeout:
            break
        if len(frame) >= 22 and frame[14:18] == TAG:
            seq = struct.unpack("!I", frame[18:22])[0]
            print(seq, flush=True)
            if seq == last:
                break
    # PACKET_STATISTICS: frames the socket had to drop would invalidate the test.
    packets, drops = struct.unpack("II", s.getsockopt(263, 6, 8))
    if drops:
        sys.exit(f"receive socket dropped {drops} of {packets} frames")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "send":
        send(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "recv":
        last = int(sys.argv[5]) if len(sys.argv) == 6 else None
        recv(sys.argv[2], float(sys.argv[3]), sys.argv[4], last)
    else:
        sys.exit(__doc__)
