#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo run by `make demo` (tests/vm/run-vm --script tests/vm/demo/demo.sh):
# a cluster of 4 nodes (network namespaces) with 2 rails each is built with
# stock `ip` (and the link_bsp.so plugin to show the bsp device), af_bsp.ko
# discovers the peers, the BSPlib examples run on it with bsprun over AF_BSP
# sockets; a total exchange runs while bsp-ss -i shows its sockets' protocol
# counters; another loses a rail in the middle and still finishes with every
# byte checked, and the counters show what failover did; then everything is
# taken down again and a summary lists each step and its duration.
# bspvm-timeout: 300
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

B=$BSPVM_REPO/build/default
BSPRUN=$B/tools/bsprun/bsprun
SS=$B/tools/bsp-ss/bsp-ss
EXCHANGE=$B/bench/exchange
for f in "$BSPRUN" "$SS" "$EXCHANGE"; do
	[ -x "$f" ] || fail "$f not built (make all)"
done
# the iproute2 plugin, when built, lets ip show the bsp device's state
[ -f "$B/tools/ip-bsp/link_bsp.so" ] && export IP_LIB_DIR=$B/tools/ip-bsp
WORK=$(mktemp -d /tmp/demo.XXXXXX)
on_exit "rm -rf '$WORK'"

STEPS=()
STEP_T0=$EPOCHREALTIME
# step NAME: the previous step ends, NAME begins (for the closing summary)
step()
{
	step_end
	STEP_NAME=$1
	STEP_T0=$EPOCHREALTIME
	echo
	echo "== $1"
}
step_end()
{
	local us

	[ -n "${STEP_NAME:-}" ] || return 0
	us=$((${EPOCHREALTIME/./} - ${STEP_T0/./}))
	STEPS+=("$(printf '%6d.%01d s  %s' $((us / 1000000)) $((us % 1000000 / 100000)) "$STEP_NAME")")
	STEP_NAME=
}
DEMO_T0=$EPOCHREALTIME

run4()
{
	BSP_TRANSPORT=afbsp BSP_VERBOSE=1 "$BSPRUN" -n 4 --hosts n0,n1,n2,n3 \
		--launch 'ip netns exec {host}' --timeout 120 "$@"
}
# eth<r> of n0: transmitted bytes
tx_bytes()
{
	ip -n n0 -s -j link show "$1" | sed -n 's/.*"tx":{"bytes":\([0-9]*\).*/\1/p'
}
# wait (bounded) until the program has AF_BSP sockets in n0
wait_sockets()
{
	local t

	for ((t = 0; t < 100; t++)); do
		[ -n "$(ip netns exec n0 "$SS" -H 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	return 1
}

step "guest kernel $(uname -r): insmod kernel/af_bsp.ko"
af_bsp_load
modinfo "$AF_BSP_KO" | grep -E '^(description|version):'

step "4 nodes x 2 rails: ip link add bsp0 type bsp; ip link set dev ethR master bsp0"
bsp_nodes 4 2
bsp_wait_peers 3
echo "-- node n0: ip -d link show bsp0 (node, cluster, peers, rails: the link_bsp.so plugin)"
ip -n n0 -d link show bsp0
echo "-- node n0: ip link show master bsp0"
ip -n n0 link show master bsp0
echo "-- node n0: peers discovered by hello frames (/proc/net/af_bsp/peers)"
ip netns exec n0 cat /proc/net/af_bsp/peers

for prog in inprod sort matvec; do
	step "bsprun -n 4 --hosts n0,n1,n2,n3 --launch 'ip netns exec {host}' $prog"
	run4 "$B/examples/$prog" || fail "$prog failed"
done

step "bsp-ss -i while a total exchange runs (4 x 3 x 20 x 64 KiB, every byte checked)"
run4 "$EXCHANGE" -n 65536 -r 20 >"$WORK/ex1" 2>&1 &
ex=$!
wait_sockets || fail "the exchange has no socket in n0"
sleep 0.3
echo "-- node n0: bsp-ss -e -i (superstep state and protocol engine counters)"
ip netns exec n0 "$SS" -e -i
wait "$ex" || fail "exchange failed: $(cat "$WORK/ex1")"
cat "$WORK/ex1"
grep -q ', ok$' "$WORK/ex1" || fail "exchange did not check out"

step "rail 1 of n0 cut in the middle of a total exchange"
a0=$(tx_bytes eth0)
a1=$(tx_bytes eth1)
run4 "$EXCHANGE" -n 65536 -r 40 >"$WORK/ex2" 2>&1 &
ex=$!
wait_sockets || fail "the exchange has no socket in n0"
sleep 0.5
b0=$(tx_bytes eth0)
b1=$(tx_bytes eth1)
echo "-- ip link set n0r1 down (the switch port of n0's rail 1: carrier lost)"
ip link set n0r1 down
sleep 1.5
echo "-- node n0 during the run: ip -d link show bsp0 (rail 1 down)"
ip -n n0 -d link show bsp0 | sed -n "3s/ addrgenmode.*//p"
echo "-- node n0 during the run: bsp-ss -i (retx_failover: packets moved off rail 1)"
ip netns exec n0 "$SS" -i
c0=$(tx_bytes eth0)
c1=$(tx_bytes eth1)
wait "$ex" || fail "exchange failed after the rail cut: $(cat "$WORK/ex2")"
d0=$(tx_bytes eth0)
d1=$(tx_bytes eth1)
cat "$WORK/ex2"
grep -q ', ok$' "$WORK/ex2" || fail "exchange did not check out after the rail cut"
echo "-- what failover did: bytes n0 sent on each rail (ip -s link)"
printf '   %-28s %12s %12s\n' "" "rail 0 eth0" "rail 1 eth1"
printf '   %-28s %12d %12d\n' "start .. cut (both rails)" $((b0 - a0)) $((b1 - a1))
printf '   %-28s %12d %12d\n' "cut .. +1.5 s (failover)" $((c0 - b0)) $((c1 - b1))
printf '   %-28s %12d %12d\n' "+1.5 s .. end (rail 0 only)" $((d0 - c0)) $((d1 - c1))
echo "-- node n0: peers on rail 1 after the cut (/proc/net/af_bsp/peers)"
ip netns exec n0 awk 'NR <= 2 || $2 == 1' /proc/net/af_bsp/peers
ip link set n0r1 up
bsp_wait_peers 3
echo "-- rail 1 is back: ip -d link show bsp0"
ip -n n0 -d link show bsp0 | sed -n "3s/ addrgenmode.*//p"

step "node n0: AF_BSP counters (ip -s link show bsp0, /proc/net/af_bsp/stats)"
ip -n n0 -s link show bsp0
ip netns exec n0 cat /proc/net/af_bsp/stats

step "teardown: ip netns del, rmmod af_bsp"
bsp_nodes_cleanup
af_bsp_unload
step_end

echo
echo "== summary: what ran and how long it took (guest time)"
printf '%s\n' "${STEPS[@]}"
us=$((${EPOCHREALTIME/./} - ${DEMO_T0/./}))
printf '%6d.%01d s  total\n' $((us / 1000000)) $((us % 1000000 / 100000))
echo "== demo done"
exit 0
