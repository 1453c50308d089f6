#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Impaired rails: netem loss 5%, reordering, duplication and corruption on
# every rail port of the bridges (both directions between 2 nodes with 2
# rails). Every message arrives intact, exactly once, in order per sender;
# the engine's counters show that recovery really happened.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd tc
XFER=$(ktest_bin bsp_xfer)
af_bsp_load
bsp_nodes 2 2
bsp_wait_peers 1
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

transfer()
{
	local what=$1 rc=0 j

	ip netns exec n1 "$XFER" recv 7200 1 60 cycle:150000 >"$tmp/r1" 2>&1 &
	ip netns exec n0 "$XFER" recv 7200 1 60 cycle:150000 >"$tmp/r0" 2>&1 &
	bsp_wait_bound n1 7200
	bsp_wait_bound n0 7200
	ip netns exec n0 "$XFER" send 2 7200 60 cycle:150000 >"$tmp/s0" 2>&1 &
	ip netns exec n1 "$XFER" send 1 7200 60 cycle:150000 >"$tmp/s1" 2>&1 &
	for j in $(jobs -p); do wait "$j" || rc=1; done
	cat "$tmp"/r0 "$tmp"/r1 "$tmp"/s0 "$tmp"/s1
	[ $rc = 0 ] || fail "transfer with $what failed"
	grep -q "recv ok 60 " "$tmp/r0" || fail "$what: n0 did not receive 60 messages"
	grep -q "recv ok 60 " "$tmp/r1" || fail "$what: n1 did not receive 60 messages"
	log "$what: 2 x 60 messages intact"
}

# sum of a counter over both senders' output
counter()
{
	cat "$tmp"/s0 "$tmp"/s1 | grep -o "$1 [0-9]*" | awk '{ s += $2 } END { print s + 0 }'
}

bsp_rails_netem loss 5%
transfer "loss 5%"
[ "$(counter retransmits)" -gt 0 ] || fail "loss 5%: no retransmission counted"

bsp_rails_netem delay 2ms reorder 25% 50%
transfer "reordering"

bsp_rails_netem duplicate 5%
transfer "duplication"
# duplicates reach the engine and are refused as such
drops=$(ip netns exec n1 awk '$1 == "drop_engine" {print $2}' /proc/net/af_bsp/stats)
[ "$drops" -gt 0 ] || fail "duplication: no duplicate refused by the engine"

bsp_rails_netem corrupt 2%
transfer "corruption"

bsp_rails_netem loss 3% duplicate 3% corrupt 1% delay 1ms reorder 10% 50%
transfer "all impairments together"
exit 0
