#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 150
# Teardown under load (Documentation/testing.rst, "Fuzzing in the guest"):
# 3 nodes x 2 rails; n0 and n1 exchange verified messages both ways while
# n0 also sends to n2, bsp_sysfuzz runs in n1 and n2 and framefuzz.py fuzzes
# n1 from the rail. Meanwhile: rmmod is refused (busy, no splat); n0 loses
# its rail 1 (veth deleted); n2's bsp0 is deleted; n2's namespace is deleted
# with its processes still running, which are then killed (a peer node
# vanishing). The n0<->n1 traffic must complete intact over the surviving
# rail, the sender to n2 must end, nothing may hang, the module unloads at
# the end and the harness checks the kernel log (kmemleak too on the debug
# kernel).
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

XFER=$(ktest_bin bsp_xfer)
FUZZ=$(ktest_bin bsp_sysfuzz)
SEED=${BSPVM_FUZZ_SEED:-$(date +%s)}
log "seed $SEED"
af_bsp_load

bsp_nodes 3 2
bsp_wait_peers 2
bsp_fuzzer_ns
mac1=$(ip -n n1 -o link show eth0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')

tmp=$BSPVM_SCRATCH
ip netns exec n1 "$XFER" recv 7000 1 400 cycle:20000 >"$tmp/r1" 2>&1 &
r1=$!
ip netns exec n0 "$XFER" recv 7000 1 400 cycle:20000 >"$tmp/r0" 2>&1 &
r0=$!
ip netns exec n2 "$XFER" recv 7200 1 100000 cycle:20000 >"$tmp/r2" 2>&1 &
r2=$!
bsp_wait_bound n1 7000
bsp_wait_bound n0 7000
bsp_wait_bound n2 7200
ip netns exec n0 "$XFER" send 2 7000 400 cycle:20000 >"$tmp/s0" 2>&1 &
s0=$!
ip netns exec n1 "$XFER" send 1 7000 400 cycle:20000 >"$tmp/s1" 2>&1 &
s1=$!
ip netns exec n0 "$XFER" send 3 7200 100000 cycle:20000 >"$tmp/s2" 2>&1 &
s2=$!
ip netns exec n1 "$FUZZ" "$SEED" 2 3000 1 3 >"$tmp/f1" 2>&1 &
f1=$!
ip netns exec n2 "$FUZZ" "$((SEED + 1))" 2 100000 1 2 >"$tmp/f2" 2>&1 &
f2=$!
ip netns exec fz python3 "$BSPVM_REPO/tests/vm/progs/framefuzz.py" eth0 "$mac1" \
	3000 "$SEED" 1 >"$tmp/ff" 2>&1 &
ff=$!
sleep 2

# rmmod while sockets are open: refused, nothing else happens.
expect_fail rmmod af_bsp
module_loaded af_bsp || fail "af_bsp unloaded under open sockets"
log "rmmod refused while in use"
# A rail of n0 vanishes: its traffic moves to rail 0.
ip -n n0 link del eth1 || fail "delete n0 eth1"
log "n0 rail 1 deleted"
sleep 1
# n2's bsp0 goes while its sockets and fuzzer run.
ip -n n2 link del bsp0 || fail "delete n2 bsp0"
log "n2 bsp0 deleted"
sleep 1
# n2 vanishes: its namespace is deleted under running processes, which die.
ip netns del n2 || fail "delete netns n2"
kill -KILL "$r2" "$f2" 2>/dev/null
wait "$r2" 2>/dev/null
wait "$f2" 2>/dev/null
log "n2 deleted and its processes killed"

rc=0
for p in $r0 $r1 $s0 $s1; do wait "$p" || rc=1; done
cat "$tmp/r0" "$tmp/r1" "$tmp/s0" "$tmp/s1"
[ "$rc" = 0 ] || fail "the n0<->n1 traffic failed"
grep -q "recv ok 400 " "$tmp/r1" || fail "n1 did not receive 400 messages intact"
grep -q "recv ok 400 " "$tmp/r0" || fail "n0 did not receive 400 messages intact"
log "n0<->n1 traffic intact"
# The sender to the vanished node ends (its messages fail).
wait "$s2"
log "sender to n2 ended: $(tail -n 1 "$tmp/s2")"
wait "$f1" || { cat "$tmp/f1"; fail "bsp_sysfuzz in n1 failed"; }
wait "$ff" || { cat "$tmp/ff"; fail "framefuzz.py failed"; }
sed -n 's/^framefuzz: //p' "$tmp/ff"
ip netns del fz
ip link del n9r0 2>/dev/null
bsp_nodes_cleanup
bsp_unload
log "module unloaded"
