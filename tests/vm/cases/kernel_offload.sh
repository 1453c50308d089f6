#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 300
# The data path without per-frame copies (Documentation/kernel-design.rst,
# "Data path"): DATA frames reference the message's pages and leave their
# checksum to the device (CHECKSUM_PARTIAL); a frame that never left the
# host is vouched for and its payload copied once from its pages. Every
# size from 0 B to BSP_MSG_MAX both directions, then 24 messages of up to
# 150000 bytes from n0 to n1, checked byte for byte and exactly once
# (bsp_xfer), on 2 nodes x 1 rail at MTU 9000:
#   1. default veth features: no frame copied on transmit or linearised on
#      receive, every payload-carrying frame paged, checksums vouched for;
#   2. n0's rail without checksum offload and scatter-gather: the stack
#      sums and linearises n0's frames in software (skb_checksum_help), n1's
#      engine checks every checksum of them: none refused, none vouched;
#   3. n0's rail without checksum offload only: n0's frames arrive paged
#      but summed, so n1 makes them linear and checks them.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd ethtool
XFER=$(ktest_bin bsp_xfer)
af_bsp_load
bsp_nodes 2 1 9000
bsp_wait_peers 1
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

# st NODE KEY -> a counter of /proc/net/af_bsp/stats in namespace nNODE
st()
{
	ip netns exec "n$1" awk -v k="$2" '$1 == k { print $2 }' /proc/net/af_bsp/stats
}

declare -A BEFORE
snapshot()
{
	local n k

	for n in 0 1; do
		for k in tx_paged tx_copied rx_paged rx_linearized rx_csum_vouched; do
			BEFORE[$n,$k]=$(st "$n" "$k")
		done
	done
}

# delta NODE KEY -> growth of the counter since the last snapshot
delta()
{
	echo $(($(st "$1" "$2") - BEFORE[$1,$2]))
}

# transfer WHAT DIRS MSGS SIZES: DIRS "both" (n0 <-> n1) or "n0" (n0 -> n1)
transfer()
{
	local what=$1 dirs=$2 msgs=$3 sizes=$4 rc=0 j

	snapshot
	rm -f "$tmp"/r0 "$tmp"/s1
	ip netns exec n1 "$XFER" recv 7300 1 "$msgs" "$sizes" >"$tmp/r1" 2>&1 &
	if [ "$dirs" = both ]; then
		ip netns exec n0 "$XFER" recv 7300 1 "$msgs" "$sizes" >"$tmp/r0" 2>&1 &
	fi
	bsp_wait_bound n1 7300
	[ "$dirs" != both ] || bsp_wait_bound n0 7300
	ip netns exec n0 "$XFER" send 2 7300 "$msgs" "$sizes" >"$tmp/s0" 2>&1 &
	if [ "$dirs" = both ]; then
		ip netns exec n1 "$XFER" send 1 7300 "$msgs" "$sizes" >"$tmp/s1" 2>&1 &
	fi
	for j in $(jobs -p); do wait "$j" || rc=1; done
	cat "$tmp"/r* "$tmp"/s*
	[ $rc = 0 ] || fail "$what: a transfer failed"
	grep -q "recv ok $msgs " "$tmp/r1" || fail "$what: n1 did not receive $msgs messages"
	[ "$dirs" = n0 ] || grep -q "recv ok $msgs " "$tmp/r0" ||
		fail "$what: n0 did not receive $msgs messages"
	# no socket's engine refused a checksum (BSP_PROTO_DROP_CSUM is 4)
	! grep -h "drop 4:" "$tmp"/r* "$tmp"/s* || fail "$what: checksums refused"
	for n in 0 1; do
		log "$what: n$n tx_paged +$(delta $n tx_paged) tx_copied +$(delta $n tx_copied)" \
			"rx_paged +$(delta $n rx_paged) rx_linearized +$(delta $n rx_linearized)" \
			"rx_csum_vouched +$(delta $n rx_csum_vouched)"
	done
	log "$what: messages intact"
}

expect_eq "$(st 0 drop_csum) $(st 1 drop_csum)" "0 0" "checksum drops before"
transfer "offloads on" both 56 ladder
for n in 0 1; do
	expect_eq "$(delta $n tx_copied) $(delta $n rx_linearized)" "0 0" \
		"n$n: frames copied on transmit, linearised on receive"
	[ "$(delta $n tx_paged)" -gt 0 ] || fail "n$n: no frame referenced its message's pages"
	[ "$(delta $n rx_paged)" -gt 0 ] || fail "n$n: no frame handed over paged"
	[ "$(delta $n rx_csum_vouched)" -ge "$(delta $n rx_paged)" ] ||
		fail "n$n: paged frames whose checksum was not vouched for"
done

ip netns exec n0 ethtool -K eth0 tx off sg off >/dev/null || fail "ethtool -K eth0 tx off sg off"
transfer "n0 without checksum offload and scatter-gather" n0 24 cycle:150000
expect_eq "$(delta 1 rx_paged) $(delta 1 rx_linearized) $(delta 1 rx_csum_vouched)" "0 0 0" \
	"n1: frames of n0 paged, linearised, vouched for"
[ "$(delta 0 tx_paged)" -gt 0 ] || fail "n0: the module stopped referencing pages"

ip netns exec n0 ethtool -K eth0 sg on >/dev/null || fail "ethtool -K eth0 sg on"
transfer "n0 without checksum offload" n0 24 cycle:150000
expect_eq "$(delta 1 rx_paged) $(delta 1 rx_csum_vouched)" "0 0" \
	"n1: frames of n0 paged, vouched for"
[ "$(delta 1 rx_linearized)" -gt 0 ] || fail "n1: summed paged frames not made linear"

expect_eq "$(st 0 drop_csum) $(st 1 drop_csum) $(st 0 tx_copied) $(st 1 tx_copied)" \
	"0 0 0 0" "checksum drops and copied frames at the end"
bsp_nodes_cleanup
af_bsp_unload
exit 0
