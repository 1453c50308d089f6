#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 300
# Messages between nodes over the rails: 2 nodes x 1 rail, every size from
# 0 B to BSP_MSG_MAX checked byte for byte, both directions at once, several
# sockets, exactly once and in order per sender; then 4 nodes x 2 rails,
# all to all. Exact counts come from the receivers (bsp_xfer).
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

XFER=$(ktest_bin bsp_xfer)
af_bsp_load

run_bg()
{
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
}

# ---- 2 nodes x 1 rail, both directions, the size ladder
bsp_nodes 2 1
bsp_wait_peers 1
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
run_bg "$tmp/r1" ip netns exec n1 "$XFER" recv 7000 2 56 ladder
run_bg "$tmp/r0" ip netns exec n0 "$XFER" recv 7000 1 56 ladder
bsp_wait_bound n1 7000
bsp_wait_bound n0 7000
run_bg "$tmp/s0" ip netns exec n0 "$XFER" send 2 7000 56 ladder 2
run_bg "$tmp/s1" ip netns exec n1 "$XFER" send 1 7000 56 ladder 1
rc=0
for j in $(jobs -p); do wait "$j" || rc=1; done
cat "$tmp"/*
[ $rc = 0 ] || fail "a 2x1 transfer failed"
grep -q "recv ok 112 " "$tmp/r1" || fail "n1 did not receive 112 messages"
grep -q "recv ok 56 " "$tmp/r0" || fail "n0 did not receive 56 messages"
bsp_nodes_cleanup
log "2x1 ladder both directions ok"

# ---- 4 nodes x 2 rails, all to all
bsp_nodes 4 2
bsp_wait_peers 3
for i in 0 1 2 3; do
	run_bg "$tmp/a$i" ip netns exec "n$i" "$XFER" recv 7100 3 30 cycle:150000
done
for i in 0 1 2 3; do
	bsp_wait_bound "n$i" 7100
done
for i in 0 1 2 3; do
	for j in 1 2 3 4; do
		[ "$j" = $((i + 1)) ] && continue
		run_bg "$tmp/b$i$j" ip netns exec "n$i" "$XFER" send "$j" 7100 30 cycle:150000
	done
done
rc=0
for j in $(jobs -p); do wait "$j" || rc=1; done
cat "$tmp"/a*
[ $rc = 0 ] || { cat "$tmp"/b*; fail "a 4x2 transfer failed"; }
for i in 0 1 2 3; do
	grep -q "recv ok 90 " "$tmp/a$i" || fail "n$i did not receive 3 x 30 messages"
done
log "4x2 all-to-all ok"
exit 0
