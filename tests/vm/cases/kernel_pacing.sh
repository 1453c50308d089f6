#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 120
# BSP_PACING_RATE takes effect: 20 messages of 64 KiB over 2 unshaped rails
# from a socket paced at 250 kB/s cannot be sent faster than the rate allows
# (a lower bound only: a slow machine can never fail it; unpaced, the
# transfer takes a fraction of it), and the paced packets alternate between
# the rails. The unpaced run is logged for scale.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

BENCH=$(ktest_bin bsp_bench)
COUNT=20
SIZE=65536
RATE=250000
af_bsp_load
bsp_nodes 2 2
bsp_wait_peers 1

# transfer PACING -> seconds the sender took, from before its first send
# until every message was acknowledged: nothing but the rate can make it
# shorter than the bound, anything else only makes it longer
transfer()
{
	local out t0 t1

	ip netns exec n1 "$BENCH" sink 7500 "$COUNT" "$SIZE" >/tmp/pacing.sink 2>&1 &
	bsp_wait_bound n1 7500
	t0=$(date +%s.%N)
	out=$(ip netns exec n0 "$BENCH" source 2 7500 "$COUNT" "$SIZE" "$1" 2>&1) ||
		fail "source: $out"
	t1=$(date +%s.%N)
	wait || fail "sink: $(cat /tmp/pacing.sink)"
	grep -q '^RESULT ' /tmp/pacing.sink || fail "sink: $(cat /tmp/pacing.sink)"
	rm -f /tmp/pacing.sink
	python3 -c "print('%.3f' % ($t1 - $t0))"
}

tx_packets() { ip netns exec n0 cat "/sys/class/net/eth$1/statistics/tx_packets"; }

free_s=$(transfer 0)
log "unpaced: $free_s s"
before0=$(tx_packets 0)
before1=$(tx_packets 1)
paced_s=$(transfer "$RATE")
d0=$(($(tx_packets 0) - before0))
d1=$(($(tx_packets 1) - before1))
# all payload at RATE, less the 4 full packets the pacer may send at once
min_s=$(python3 -c "print('%.3f' % (($COUNT * $SIZE - 4 * 1500) / $RATE))")
log "paced at $RATE B/s: $paced_s s (the rate allows no less than $min_s s); frames per rail $d0 $d1"
python3 -c "import sys; sys.exit(0 if $paced_s >= $min_s else 1)" ||
	fail "paced transfer took $paced_s s, faster than $RATE B/s allows ($min_s s)"
# both rails carried the paced stream, evenly (hellos and acks aside)
python3 -c "import sys; a, b = $d0, $d1; sys.exit(0 if min(a, b) * 10 >= max(a, b) * 9 else 1)" ||
	fail "paced packets not spread over the rails: $d0 and $d1 frames"
