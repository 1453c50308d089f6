#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A bsp master created from another namespace (ip -n A link add bsp0 netns
# B type bsp) is B's master, with B's state: A keeps none, may create its
# own, B may not have two; after A is deleted, B's rails carry hellos and
# data to node C, and the module unloads cleanly. (It used to store A's
# state in B's device: frames on B's rails wrote into A's freed state and
# rmmod locked up.)
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

XFER=$(ktest_bin bsp_xfer)
af_bsp_load

cleanup()
{
	ip netns del nsA 2>/dev/null
	ip netns del nsB 2>/dev/null
	ip netns del nsC 2>/dev/null
	ip link del rail0 2>/dev/null
	return 0
}
on_exit cleanup
modprobe veth || fail "modprobe veth"
modprobe bridge || fail "modprobe bridge"
ip link add rail0 type bridge || fail "bridge rail0"
echo 0 >/sys/class/net/rail0/bridge/forward_delay
ip link set rail0 up
for n in A B C; do
	ip netns add "ns$n" || fail "netns ns$n"
	ip -n "ns$n" link set lo up
done
ip netns exec nsB sysctl -qw net.bsp.node_id=2
ip netns exec nsC sysctl -qw net.bsp.node_id=3
for n in B C; do
	ip link add "ns${n}r0" type veth peer name eth0 netns "ns$n" || fail "veth ns$n"
	ip link set "ns${n}r0" master rail0 up
done

expect_ok ip -n nsA link add bsp0 netns nsB type bsp
ip -n nsB link show bsp0 >/dev/null || fail "bsp0 is not in nsB"
ip -n nsA link show bsp0 >/dev/null 2>&1 && fail "bsp0 is in nsA"

ip -n nsB link set eth0 master bsp0 || fail "enslave eth0 in nsB"
ip -n nsB link set eth0 up
ip -n nsB link set bsp0 up
ip -n nsC link add bsp0 type bsp || fail "bsp0 in nsC"
ip -n nsC link set eth0 master bsp0 || fail "enslave eth0 in nsC"
ip -n nsC link set eth0 up
ip -n nsC link set bsp0 up

# the requester's namespace goes away; B's device and state stay
ip netns del nsA
wait_peer()
{
	local t

	for ((t = 0; t < 100; t++)); do
		ip netns exec "$1" awk -v n="$2" '$1 == n && $4 == "up"' /proc/net/af_bsp/peers |
			grep -q . && return 0
		sleep 0.1
	done
	ip netns exec "$1" cat /proc/net/af_bsp/peers
	fail "$1 does not see node $2"
}
wait_peer nsB 3
wait_peer nsC 2
log "nsB (master created from nsA, nsA deleted) and nsC discovered each other"

tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
ip netns exec nsC "$XFER" recv 7000 1 20 cycle:100000 >"$tmp/r" 2>&1 &
rpid=$!
bsp_wait_bound nsC 7000
ip netns exec nsB "$XFER" send 3 7000 20 cycle:100000 >"$tmp/s" 2>&1 || {
	cat "$tmp/s"
	fail "send from nsB"
}
wait $rpid || { cat "$tmp/r"; fail "receive in nsC"; }
grep -q "recv ok 20 " "$tmp/r" || { cat "$tmp/r"; fail "nsC did not receive 20 messages"; }
log "20 messages from nsB to nsC"
sleep 0.5	# hellos on B's rail for a few periods more

# the master is nsB's: a second one there is refused, also when asked
# for from another namespace, which keeps the right to its own
out=$(ip -n nsB link add bsp1 type bsp 2>&1) && fail "nsB accepted a second bsp device"
echo "$out" | grep -q "already has a bsp device" || fail "second master in nsB: $out"
ip netns add nsA || fail "netns nsA"
expect_fail ip -n nsA link add bsp1 netns nsB type bsp
expect_ok ip -n nsA link add bspA type bsp
expect_ok ip -n nsA link del bspA

cleanup
bsp_unload
exit 0
