#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 1200
# Soak (not part of make check; Documentation/testing.rst, "Soak"):
#
#   tests/vm/run-vm [--kernel debug] --script tests/vm/soak.sh
#
# 4 nodes x 2 rails, netem loss 1% on every node's rail ports, rail 1 of
# node 0 flapping (down 2 s, up 3 s); the BSPlib program soak (total exchange
# by bsp_put, bsp_get, BSMP, every byte checked every superstep) runs under
# bsprun over AF_BSP for BSPVM_SOAK_SECONDS (default 600). Every 30 s it
# prints the kernel's slab memory (Slab, SUnreclaim of /proc/meminfo) and
# the 4 processes' summed VmRSS, as one line of a series that must stay
# flat. The harness fails the run on any
# kernel splat (and, on the debug kernel, on a kmemleak report after it).
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

SECS=${BSPVM_SOAK_SECONDS:-600}
bsplib_tree
SOAK=$TREE/userlib-test-programs/soak
[ -x "$SOAK" ] || fail "soak not built in $TREE (cmake --build build/default --target bsptest_soak)"
af_bsp_load
bsp_nodes 4 2
bsp_wait_peers 3
bsp_rails_netem loss 1%

flap()
{
	while :; do
		sleep 3
		ip link set n0r1 down
		sleep 2
		ip link set n0r1 up
	done
}
flap &
flapper=$!
on_exit "kill $flapper 2>/dev/null"

sample()
{
	local t=$1 slab sunr rss=0 pid v
	slab=$(awk '/^Slab:/ {print $2}' /proc/meminfo)
	sunr=$(awk '/^SUnreclaim:/ {print $2}' /proc/meminfo)
	for pid in $(pgrep -x soak); do
		v=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
		rss=$((rss + ${v:-0}))
	done
	printf 'soak-mem t=%4ds slab=%dkB sunreclaim=%dkB rss_sum=%dkB\n' \
		"$t" "$slab" "$sunr" "$rss"
}

BSP_TRANSPORT=afbsp "$BSPRUN" -n 4 --hosts n0,n1,n2,n3 --launch 'ip netns exec {host}' \
	--timeout $((SECS + 300)) "$SOAK" "$SECS" 256 \
	>"$BSPVM_SCRATCH/soak.out" 2>&1 &
job=$!
start=$(date +%s)
sample 0
next=30
while kill -0 "$job" 2>/dev/null; do
	sleep 1
	now=$(($(date +%s) - start))
	if [ "$now" -ge "$next" ]; then
		sample "$now"
		next=$((next + 30))
	fi
done
wait "$job"
rc=$?
kill "$flapper" 2>/dev/null
wait "$flapper" 2>/dev/null
ip link set n0r1 up
sample "$(($(date +%s) - start))"
cat "$BSPVM_SCRATCH/soak.out"
[ "$rc" = 0 ] || fail "soak failed (status $rc)"
grep -q '^soak: [0-9]* supersteps verified, .* 0 wrong$' "$BSPVM_SCRATCH/soak.out" ||
	fail "soak did not report its verified supersteps"
for i in 0 1 2 3; do
	echo "n$i: $(ip netns exec "n$i" cat /proc/net/af_bsp/stats | grep -E '^(drop_mem|drop_nomem|rmem) ' | tr '\n' ' ')"
done
bsp_nodes_cleanup
bsp_unload
log "soak done"
