#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 480
# The data path without per-frame copies or per-frame transmits
# (Documentation/kernel-design.rst, "Data path"): DATA frames reference the
# message's pages and leave their checksum to the device (CHECKSUM_PARTIAL);
# consecutive frames for one peer and rail leave as one GSO super-frame
# (frames chained on a frag_list, kernel/offload.c); a frame that never left
# the host is vouched for, and a received 9000-byte frame is kept in its
# message (zero-copy reassembly, rx_zcopy) or its payload copied once from its
# pages. Every
# size from 0 B to BSP_MSG_MAX both directions, then 24 messages of up to
# 150000 bytes from n0 to n1, checked byte for byte and exactly once
# (bsp_xfer), on 2 nodes x 1 rail at MTU 9000:
#   1. default veth features: no frame copied on transmit or linearised on
#      receive, every payload-carrying frame paged, checksums vouched for;
#      super-frames cross veth and bridge whole: each node splits exactly
#      the super-frames and frames the other built, none in software; frames
#      kept in their messages, none of them copied after all;
#   1b. the same with loss and reordering on n0's rail (netem): frames kept
#      whatever order they come in, the messages intact; then with
#      rx_zcopy=0: none kept;
#   2. n0's rail without tx-gso-list: n0's super-frames are split in
#      software by the EtherType's gso_segment, exactly all of them, and n1
#      receives single frames only (n1's own super-frames still arrive
#      whole at n0);
#   3. n0's rail without checksum offload and scatter-gather: no
#      super-frames from n0; the stack sums and linearises n0's frames in
#      software (skb_checksum_help), n1's engine checks every checksum of
#      them: none refused, none vouched, none kept (the payload is copied);
#   4. n0's rail without checksum offload only: n0's super-frames are split
#      in software and gso_segment sums every frame; they arrive paged but
#      summed, so n1 makes them linear and checks them;
#   5. n0 back to defaults, n1's bridge port without scatter-gather: the
#      port makes each super-frame linear (frag_list pulled into one
#      buffer), and n1 cuts every one of them into its frames again; their
#      frames, clones of one buffer, are copied, not kept.
# No malformed super-frame anywhere.
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

KEYS="tx_paged tx_copied rx_paged rx_linearized rx_csum_vouched tx_gso tx_gso_segs
tx_gso_sw tx_gso_sw_segs rx_gso rx_gso_segs rx_gso_flat rx_gso_bad rx_zcopy
rx_zcopy_undone rx_copied_msgs"
declare -A BEFORE
snapshot()
{
	local n k

	for n in 0 1; do
		for k in $KEYS; do
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
			"rx_csum_vouched +$(delta $n rx_csum_vouched)" \
			"rx_zcopy +$(delta $n rx_zcopy) rx_zcopy_undone +$(delta $n rx_zcopy_undone)" \
			"rx_copied_msgs +$(delta $n rx_copied_msgs)"
	done
	log "$what: messages intact"
	for n in 0 1; do
		log "$what: n$n tx_gso +$(delta $n tx_gso)/$(delta $n tx_gso_segs)" \
			"tx_gso_sw +$(delta $n tx_gso_sw)/$(delta $n tx_gso_sw_segs)" \
			"rx_gso +$(delta $n rx_gso) rx_gso_flat +$(delta $n rx_gso_flat)" \
			"rx_gso_segs +$(delta $n rx_gso_segs) rx_gso_bad +$(delta $n rx_gso_bad)"
	done
}

# gso_arrived FROM TO HOW: the super-frames node FROM built and did not split
# in software, and their frames, are exactly those node TO received whole
# (HOW rx_gso) or flattened (HOW rx_gso_flat). A receiver's last
# acknowledgments may still be on their way when its peer's transfer ends:
# bounded wait for the counts to meet.
gso_arrived()
{
	local from=$1 to=$2 how=$3 end=$((SECONDS + 10)) want got

	while :; do
		want="$(($(delta "$from" tx_gso) - $(delta "$from" tx_gso_sw)))"
		want="$want $(($(delta "$from" tx_gso_segs) - $(delta "$from" tx_gso_sw_segs)))"
		got="$(delta "$to" "$how") $(delta "$to" rx_gso_segs)"
		[ "$got" = "$want" ] || [ "$SECONDS" -ge "$end" ] && break
		sleep 0.1
	done
	expect_eq "$got" "$want" "n$to: $how and their frames = n$from's super-frames not split"
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
	[ "$(delta $n tx_gso)" -gt 0 ] || fail "n$n: no super-frame built"
	[ "$(delta $n tx_gso_segs)" -gt "$(delta $n tx_gso)" ] ||
		fail "n$n: super-frames of one frame each"
	expect_eq "$(delta $n tx_gso_sw) $(delta $n rx_gso_flat)" "0 0" \
		"n$n: super-frames split in software, received flattened"
done
gso_arrived 0 1 rx_gso
gso_arrived 1 0 rx_gso
for n in 0 1; do
	[ "$(delta $n rx_zcopy)" -gt 0 ] || fail "n$n: no frame kept in its message"
	[ "$(delta $n rx_zcopy)" -lt "$(delta $n rx_paged)" ] ||
		fail "n$n: frames of small messages kept (or paged frames not counted)"
	expect_eq "$(delta $n rx_zcopy_undone)" 0 "n$n: messages copied after frames were kept"
done

ZC=/sys/module/af_bsp/parameters/rx_zcopy
modprobe sch_netem || fail "modprobe sch_netem"
ip netns exec n0 tc qdisc add dev eth0 root netem loss 3% delay 1ms reorder 30% ||
	fail "tc netem on n0's rail"
transfer "loss and reordering" n0 8 cycle:150000
[ "$(delta 1 rx_zcopy)" -gt 0 ] || fail "n1: no frame kept under loss and reordering"
expect_eq "$(delta 1 rx_zcopy_undone)" 0 "n1: messages copied after frames were kept"
echo 0 >"$ZC"
transfer "loss and reordering, rx_zcopy=0" n0 8 cycle:150000
echo 1 >"$ZC"
expect_eq "$(delta 1 rx_zcopy)" 0 "n1: frames kept with rx_zcopy=0"
[ "$(delta 1 rx_copied_msgs)" -ge 8 ] || fail "n1: messages not copied with rx_zcopy=0"
ip netns exec n0 tc qdisc del dev eth0 root || fail "tc qdisc del on n0's rail"

ip netns exec n0 ethtool -K eth0 tx-gso-list off >/dev/null || fail "ethtool -K eth0 tx-gso-list off"
transfer "n0 without tx-gso-list" n0 24 cycle:150000
[ "$(delta 0 tx_gso)" -gt 0 ] || fail "n0: no super-frame built"
expect_eq "$(delta 0 tx_gso_sw) $(delta 0 tx_gso_sw_segs)" \
	"$(delta 0 tx_gso) $(delta 0 tx_gso_segs)" "n0: super-frames split in software"
expect_eq "$(delta 1 rx_gso) $(delta 1 rx_gso_segs)" "0 0" "n1: super-frames received"
[ "$(delta 1 rx_csum_vouched)" -ge "$(delta 1 rx_paged)" ] ||
	fail "n1: paged frames whose checksum was not vouched for"
gso_arrived 1 0 rx_gso
ip netns exec n0 ethtool -K eth0 tx-gso-list on >/dev/null || fail "ethtool -K eth0 tx-gso-list on"

ip netns exec n0 ethtool -K eth0 tx off sg off >/dev/null || fail "ethtool -K eth0 tx off sg off"
transfer "n0 without checksum offload and scatter-gather" n0 24 cycle:150000
expect_eq "$(delta 1 rx_paged) $(delta 1 rx_linearized) $(delta 1 rx_csum_vouched)" "0 0 0" \
	"n1: frames of n0 paged, linearised, vouched for"
expect_eq "$(delta 1 rx_zcopy)" 0 "n1: linear frames kept"
[ "$(delta 0 tx_paged)" -gt 0 ] || fail "n0: the module stopped referencing pages"
expect_eq "$(delta 0 tx_gso) $(delta 1 rx_gso_segs)" "0 0" \
	"n0: super-frames built without scatter-gather, n1: frames of super-frames"

ip netns exec n0 ethtool -K eth0 sg on >/dev/null || fail "ethtool -K eth0 sg on"
transfer "n0 without checksum offload" n0 24 cycle:150000
expect_eq "$(delta 1 rx_paged) $(delta 1 rx_csum_vouched)" "0 0" \
	"n1: frames of n0 paged, vouched for"
[ "$(delta 1 rx_linearized)" -gt 0 ] || fail "n1: summed paged frames not made linear"
[ "$(delta 0 tx_gso)" -gt 0 ] || fail "n0: no super-frame built"
expect_eq "$(delta 0 tx_gso_sw) $(delta 0 tx_gso_sw_segs)" \
	"$(delta 0 tx_gso) $(delta 0 tx_gso_segs)" "n0: super-frames split and summed in software"
expect_eq "$(delta 1 rx_gso) $(delta 1 rx_gso_segs)" "0 0" "n1: super-frames received"

ip netns exec n0 ethtool -K eth0 tx on >/dev/null || fail "ethtool -K eth0 tx on"
# tx-scatter-gather alone: "sg" would take tx-scatter-gather-fraglist too,
# and the port would then split the super-frames in software instead
ethtool -K n1r0 tx-scatter-gather off >/dev/null || fail "ethtool -K n1r0 tx-scatter-gather off"
transfer "n1's bridge port without scatter-gather" n0 24 cycle:150000
ethtool -K n1r0 tx-scatter-gather on >/dev/null || fail "ethtool -K n1r0 tx-scatter-gather on"
[ "$(delta 0 tx_gso)" -gt 0 ] || fail "n0: no super-frame built"
expect_eq "$(delta 0 tx_gso_sw) $(delta 1 rx_gso)" "0 0" \
	"n0: super-frames split in software, n1: received whole"
gso_arrived 0 1 rx_gso_flat
expect_eq "$(delta 1 rx_zcopy)" 0 "n1: frames cut from a flattened super-frame kept"

expect_eq "$(st 0 drop_csum) $(st 1 drop_csum) $(st 0 tx_copied) $(st 1 tx_copied)" \
	"0 0 0 0" "checksum drops and copied frames at the end"
expect_eq "$(st 0 rx_gso_bad) $(st 1 rx_gso_bad)" "0 0" "malformed super-frames"
bsp_nodes_cleanup
af_bsp_unload
exit 0
