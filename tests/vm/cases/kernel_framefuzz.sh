#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 120
# Frame fuzzing (Documentation/testing.rst, "Fuzzing in the guest"): while
# n0 and n1 exchange verified messages both ways (bsp_xfer: every byte,
# exactly once, in order), a third namespace on the same rail captures their
# frames (the rail bridge floods: no learning) and sends n1 (and the
# broadcast address) mutations of them and random AF_BSP-looking frames
# (tests/vm/progs/framefuzz.py). The traffic must complete intact, n1's
# hello and peer state must survive, the module unloads and the kernel log
# stays clean (kmemleak too on the debug kernel).
#   BSPVM_FRAMEFUZZ_FRAMES   frames sent (default 6000)
#   BSPVM_FUZZ_SEED          seed (default: from the date, printed)
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

XFER=$(ktest_bin bsp_xfer)
FRAMES=${BSPVM_FRAMEFUZZ_FRAMES:-6000}
SEED=${BSPVM_FUZZ_SEED:-$(date +%s)}
log "seed $SEED (BSPVM_FUZZ_SEED=$SEED repeats the frames)"
af_bsp_load

bsp_nodes 2 1
bsp_wait_peers 1
bsp_fuzzer_ns
mac1=$(ip -n n1 -o link show eth0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
[ -n "$mac1" ] || fail "no MAC of n1 eth0"

tmp=$BSPVM_SCRATCH
ip netns exec n1 "$XFER" recv 7000 1 300 cycle:20000 >"$tmp/r1" 2>&1 &
r1=$!
ip netns exec n0 "$XFER" recv 7000 1 300 cycle:20000 >"$tmp/r0" 2>&1 &
r0=$!
bsp_wait_bound n1 7000
bsp_wait_bound n0 7000
ip netns exec n0 "$XFER" send 2 7000 300 cycle:20000 >"$tmp/s0" 2>&1 &
s0=$!
ip netns exec n1 "$XFER" send 1 7000 300 cycle:20000 >"$tmp/s1" 2>&1 &
s1=$!
ip netns exec fz python3 "$BSPVM_REPO/tests/vm/progs/framefuzz.py" eth0 "$mac1" \
	"$FRAMES" "$SEED" 3 >"$tmp/fuzz" 2>&1
frc=$?
cat "$tmp/fuzz"
[ "$frc" = 0 ] || fail "framefuzz.py failed"
rc=0
for p in $r0 $r1 $s0 $s1; do wait "$p" || rc=1; done
cat "$tmp/r0" "$tmp/r1" "$tmp/s0" "$tmp/s1"
[ "$rc" = 0 ] || fail "the verified traffic failed under fuzzing"
grep -q "recv ok 300 " "$tmp/r1" || fail "n1 did not receive 300 messages intact"
grep -q "recv ok 300 " "$tmp/r0" || fail "n0 did not receive 300 messages intact"
# Still peers, and still carrying traffic, after the fuzzing.
bsp_wait_peers 1
ip netns exec n1 "$XFER" recv 7001 1 20 cycle:3000 >"$tmp/a1" 2>&1 &
a1=$!
bsp_wait_bound n1 7001
ip netns exec n0 "$XFER" send 2 7001 20 cycle:3000 >"$tmp/a0" 2>&1 || fail "send after fuzzing"
wait "$a1" || fail "receive after fuzzing: $(cat "$tmp/a1")"
grep -q "recv ok 20 " "$tmp/a1" || fail "n1 did not receive 20 messages after fuzzing"
log "$(sed -n 's/^framefuzz: //p' "$tmp/fuzz")"
ip netns exec n1 cat /proc/net/af_bsp/stats 2>/dev/null | head -n 40
ip netns del fz
ip link del n9r0 2>/dev/null
bsp_nodes_cleanup
bsp_unload
log "module unloaded after the fuzzing"
