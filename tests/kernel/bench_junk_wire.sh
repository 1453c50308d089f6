#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Junk flood benchmark from outside the guest (host side; a benchmark, not a
# test). Boots the VM with two virtio NICs (52:54:00:b5:00:01 and :02) whose
# QEMU "socket" backends send to each other over UDP on the host's loopback,
# a wire between nodes n0 and n1, and runs tests/kernel/bench_junk.sh over it
# with BSPVM_JUNK_WIRE=1 while a host process (tests/kernel/bsp_junk --udp,
# native speed) floods n1's NIC when the guest asks (BSPVM_HOST_HELPER of
# run-vm). The pre-filter then runs in the virtio driver, before an skb exists,
# as on a physical NIC.
#
#   tests/kernel/bench_junk_wire.sh [run-vm options]
#
# Environment: BSPVM_JUNK_PPS (0: the host sends as fast as it can; else at
# most that many frames per second), and bench_junk.sh's BSPVM_JUNK_ROUNDS,
# BSPVM_JUNK_SECS, BSPVM_JUNK_MIB.
set -eu -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
JUNK=$REPO/build/default/kernel/bsp_junk
[ -x "$JUNK" ] || { echo "bench_junk_wire: $JUNK not built (make all)" >&2; exit 1; }
PPS=${BSPVM_JUNK_PPS:-0}
[[ "$PPS" =~ ^[0-9]+$ ]] || { echo "bench_junk_wire: BSPVM_JUNK_PPS=$PPS: expected a number" >&2; exit 2; }

# Two UDP ports on the loopback, free now (QEMU binds them at boot).
free_port()
{
	python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
p0=$(free_port)
p1=$(free_port)
while [ "$p1" = "$p0" ]; do p1=$(free_port); done

# NIC 1 (n0) listens on p0 and sends to p1; NIC 2 (n1) the other way round.
export BSPVM_EXTRA_QEMU="${BSPVM_EXTRA_QEMU:-} \
-netdev socket,id=wire0,udp=127.0.0.1:$p1,localaddr=127.0.0.1:$p0 \
-device virtio-net-pci,netdev=wire0,mac=52:54:00:b5:00:01,rx_queue_size=1024 \
-netdev socket,id=wire1,udp=127.0.0.1:$p0,localaddr=127.0.0.1:$p1 \
-device virtio-net-pci,netdev=wire1,mac=52:54:00:b5:00:02,rx_queue_size=1024"
export BSPVM_JUNK_WIRE=1
# BSPVM_RUNDIR is set by run-vm for the helper (single quotes: expanded there).
export BSPVM_HOST_HELPER="exec '$JUNK' --udp 127.0.0.1:$p1 --ctl \"\$BSPVM_RUNDIR/junk.on\" --pps $PPS --src 52:54:00:b5:00:01 52:54:00:b5:00:02 2"
exec "$REPO/tests/vm/run-vm" --case-timeout 1200 "$@" --script "$REPO/tests/kernel/bench_junk.sh"
