#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# VM benchmark (tests/vm/run-vm --script tests/userlib/vm/bsplib_schedule_bench.sh):
# destination scheduling, latin square against pid order, for a 4-node total exchange
# over AF_BSP on 2 rails whose switch ports have a small buffer; without and with
# pacing. Prints the times and ratios (one run each); asserts only that data arrived.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

# The most recently built copy of a program among the build trees (build/default of
# make all, or a private build/<name> of the same layout).
find_built()
{
	local f
	f=$(ls -t "$BSPVM_REPO"/build/*/"$1" 2>/dev/null | head -n 1)
	[ -n "$f" ] && [ -x "$f" ] || fail "$1 not built (cmake --build build/default)"
	echo "$f"
}

EXCHANGE=$(find_built bench/exchange)
# bsprun and the programs from the same build tree as the newest exchange program.
TREE=${EXCHANGE%/bench/exchange}
BSPRUN=$TREE/tools/bsprun/bsprun
[ -x "$BSPRUN" ] || BSPRUN=$(find_built tools/bsprun/bsprun)
HOSTS=n0,n1,n2,n3
run4()
{
	"$BSPRUN" -n 4 --hosts "$HOSTS" --launch 'ip netns exec {host}' --timeout 120 "$@"
}

af_bsp_load
bsp_nodes 4 2
bsp_wait_peers 3
for i in 0 1 2 3; do
	for r in 0 1; do
		ip -n "n$i" addr add "10.$((r + 1)).0.$((i + 1))/24" dev "eth$r" ||
			fail "address on n$i eth$r"
	done
done
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

# Destination scheduling on a constrained switch: every node's downlink (the switch
# port's egress) shaped to 8 Mbit/s with a 16 KiB buffer, on both rails (benchmark:
# printed, not asserted; TCG itself moves only a few MB/s).
modprobe sch_tbf || fail "modprobe sch_tbf"
for i in 0 1 2 3; do
	for r in 0 1; do
		tc qdisc replace dev "n${i}r$r" root tbf rate 8mbit burst 16k limit 16384 ||
			fail "tbf on n${i}r$r"
	done
done
ok=0
for t in udp afbsp; do
	for rate in 0 2000000; do
		for s in latin pid; do
			if BSP_TRANSPORT=$t BSP_UDP_RAILS=eth0,eth1 BSP_SCHEDULE=$s BSP_LINK_RATE=$rate \
				run4 "$EXCHANGE" -n 131072 -r 3 >"$tmp/s.$s" 2>&1 &&
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
