#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# VM benchmark (tests/vm/run-vm --script tests/userlib/vm/bsplib_schedule_bench.sh):
# destination scheduling, latin square against pid order, for an 8-node total exchange
# over AF_BSP on 2 rails whose switch ports have a small buffer; without and with
# pacing. Prints the times and ratios (one run each); asserts only that data arrived.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

bsplib_tree
NODES=8
RATE_KBIT=1000     # per rail and node downlink
LIMIT=8192         # switch buffer per port, bytes
LINK_RATE=$((2 * RATE_KBIT * 1000 / 8))  # bytes/s of a node over both rails
HOSTS=$(seq -s, -f "n%g" 0 $((NODES - 1)))
run4()
{
	"$BSPRUN" -n "$NODES" --hosts "$HOSTS" --launch 'ip netns exec {host}' --timeout 300 "$@"
}

af_bsp_load
bsp_nodes "$NODES" 2
bsp_wait_peers $((NODES - 1))
bsp_rail_addresses "$NODES" 2
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

# Destination scheduling on a constrained switch: every node's downlink (the switch
# port's egress) shaped to RATE_KBIT on both rails with a LIMIT-byte buffer, so that
# the switch, not the emulated CPUs, is the bottleneck.
modprobe sch_tbf || fail "modprobe sch_tbf"
for ((i = 0; i < NODES; i++)); do
	for r in 0 1; do
		tc qdisc replace dev "n${i}r$r" root tbf rate ${RATE_KBIT}kbit burst 8k limit $LIMIT ||
			fail "tbf on n${i}r$r"
	done
done
ok=0
for t in udp afbsp; do
	for rate in 0 $LINK_RATE; do
		for s in latin pid; do
			if BSP_TRANSPORT=$t BSP_UDP_RAILS=eth0,eth1 BSP_SCHEDULE=$s BSP_LINK_RATE=$rate \
				run4 "$EXCHANGE" -n 65536 -r 2 >"$tmp/s.$s" 2>&1 &&
				grep -q ', ok$' "$tmp/s.$s"; then
				echo "$t, link rate $rate: $(cat "$tmp/s.$s")"
			else
				echo "$t, link rate $rate, $s: FAILED: $(cat "$tmp/s.$s")"
				continue 2
			fi
		done
		l=$(sed -n 's/.*: \([0-9.]*\) us.*/\1/p' "$tmp/s.latin")
		p=$(sed -n 's/.*: \([0-9.]*\) us.*/\1/p' "$tmp/s.pid")
		echo "$t, link rate $rate: latin square $(echo "scale=2; $p / $l" | bc -l)x faster than pid order"
		ok=1
	done
done
[ $ok = 1 ] || fail "no measurement completed"
exit 0
