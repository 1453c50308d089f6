#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 240
# A node with 9000-byte rails talks to one whose rail takes 1500 bytes: the
# peer's MTU comes from its hellos, so a socket bound once the peer is known
# sends it frames that fit and every message arrives (it used to send
# 9000-byte frames the peer never received, retransmitting for good).
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

XFER=$(ktest_bin bsp_xfer)
af_bsp_load
bsp_nodes 2 1 9000
ip -n n1 link set eth0 mtu 1500 || fail "mtu 1500 on n1 eth0"
bsp_wait_peers 1
for ((t = 0; t < 100; t++)); do
	mtu=$(ip netns exec n0 awk '$1 == 2 && $2 == 0 {print $6}' /proc/net/af_bsp/peers)
	[ "$mtu" = 1500 ] && break
	sleep 0.1
done
expect_eq "$mtu" 1500 "MTU of node 2 on rail 0 as n0 heard it"

tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
ip netns exec n1 "$XFER" recv 7000 1 10 cycle:50000 >"$tmp/r" 2>&1 &
rpid=$!
bsp_wait_bound n1 7000
timeout 60 ip netns exec n0 "$XFER" send 2 7000 10 cycle:50000 >"$tmp/s" 2>&1 || {
	cat "$tmp/s"
	kill $rpid 2>/dev/null
	fail "send from n0 (9000) to n1 (1500) did not complete"
}
wait $rpid || { cat "$tmp/r"; fail "receive in n1"; }
grep -q "recv ok 10 " "$tmp/r" || { cat "$tmp/r"; fail "n1 did not receive 10 messages"; }
log "10 messages of up to 50000 bytes from a 9000-byte node to a 1500-byte node"
exit 0
