#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 120
# BSP_EXPECT takes effect: a superstep of 8 messages from n0 to n1, the last
# of which the XDP fault injector drops once. With BSP_EXPECT the receiver
# knows one is missing and prods: the sender resends it for the prod, never
# on a timeout. Without BSP_EXPECT nothing tells the receiver, and only the
# sender's timeout probe recovers it. Both deliver all 8 intact.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

PROG=$(ktest_bin bsp_expect)
FAULT=$BSPVM_REPO/build/default/tools/bsp-fault/bsp-fault
[ -x "$FAULT" ] || fail "$FAULT not built (make all)"
COUNT=8
af_bsp_load
bsp_nodes 2 1
bsp_wait_peers 1
# nsenter joins only the network namespace (bpffs stays visible)
in_n1() { nsenter --net=/run/netns/n1 "$@"; }
expect_ok in_n1 "$FAULT" attach eth0
on_exit "in_n1 $FAULT detach eth0 >/dev/null 2>&1"

# run EXPECT PORT -> the sender's STATS line
run()
{
	local expect=$1 port=$2 out ready=/tmp/expect.$2

	# DATA of the last message (msg_id COUNT-1, the be32 at offset 48 of
	# the 72-byte version 3 header), first transmission only
	in_n1 "$FAULT" rule eth0 0 --offset 48 --mask 0xffffffff --value $((COUNT - 1)) \
		--count 1 >/dev/null || fail "fault rule"
	ip netns exec n1 "$PROG" recv "$port" 1 $((port + 1)) "$COUNT" "$expect" >"$ready" 2>&1 &
	for _ in $(seq 100); do
		grep -q ready "$ready" && break
		sleep 0.1
	done
	out=$(ip netns exec n0 "$PROG" send 2 "$port" $((port + 1)) "$COUNT" 2>&1) ||
		fail "sender (expect=$expect): $out"
	wait || fail "receiver (expect=$expect): $(cat "$ready")"
	grep -q "recv ok $COUNT" "$ready" || fail "receiver: $(cat "$ready")"
	expect_eq "$(in_n1 "$FAULT" stats eth0 | grep '^rule 0 ' | grep -o 'dropped=[0-9]*')" \
		"dropped=1" "frames the injector dropped (expect=$expect)"
	rm -f "$ready"
	grep '^STATS' <<<"$out"
}

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"; }

# With BSP_EXPECT the receiver's prod recovers the message, never a timeout.
# The prod either names the missing packet (a resend for a prod) or, if the
# sender had not yet sent it or the prod crossed it, draws the sender's reply,
# which shows the receiver the hole, and the receiver's report of that hole
# brings the resend (counted for a reported hole): one or the other, at least
# once, at most twice (a second ask while the first resend travels).
s=$(run 1 7700)
log "with BSP_EXPECT: $s"
expect_eq "$(field msgs_tx "$s")" "$COUNT" "messages settled (BSP_EXPECT)"
expect_eq "$(field retx_timeout "$s")" 0 "resends on a timeout (BSP_EXPECT)"
asked=$(($(field retx_prod "$s") + $(field retx_hole "$s")))
if [ "$asked" -lt 1 ] || [ "$asked" -gt 2 ]; then
	fail "resends the receiver asked for with BSP_EXPECT: $asked, expected 1 or 2: $s"
fi
# Without it only the sender's timeout starts the recovery: exactly one
# resend on a timeout. The timeout's probe shows the receiver the hole, so
# it may prod once more while that resend travels (a slow guest): at most
# one resend for a prod.
s=$(run 0 7710)
log "without BSP_EXPECT: $s"
expect_eq "$(field msgs_tx "$s")" "$COUNT" "messages settled (no BSP_EXPECT)"
expect_eq "$(field retx_timeout "$s")" 1 "resends on a timeout (no BSP_EXPECT)"
expect_eq "$(field retx_hole "$s")" 0 "resends for a reported hole (no BSP_EXPECT)"
[ "$(field retx_prod "$s")" -le 1 ] || fail "more than one resend for a prod without BSP_EXPECT: $s"
