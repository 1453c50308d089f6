#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 120
# Syscall fuzzing of the AF_BSP socket API (Documentation/testing.rst,
# "Fuzzing in the guest"): bsp_sysfuzz with 4 threads in each of 2 nodes
# joined by a rail (every call, option, flag, address form and size, close
# racing the other calls; unexpected errnos fail it). Afterwards the nodes
# still exchange messages (bsp_sysfuzz checks), the module unloads (no
# socket or reference leaked) and the harness checks the kernel log
# (kmemleak too on the debug kernel). Trinity cannot make AF_BSP sockets
# (Documentation/testing.rst, "Fuzzing in the guest").
#   BSPVM_SYSFUZZ_CALLS   calls per node (default 6000)
#   BSPVM_FUZZ_SEED       first seed (default: from the date, printed)
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

FUZZ=$(ktest_bin bsp_sysfuzz)
CALLS=${BSPVM_SYSFUZZ_CALLS:-6000}
SEED=${BSPVM_FUZZ_SEED:-$(date +%s)}
log "seed $SEED (BSPVM_FUZZ_SEED=$SEED repeats the calls of each thread)"
af_bsp_load

bsp_nodes 2 1
bsp_wait_peers 1
tmp=$BSPVM_SCRATCH
ip netns exec n0 "$FUZZ" "$SEED" 4 "$CALLS" 2 >"$tmp/f0" 2>&1 &
p0=$!
ip netns exec n1 "$FUZZ" "$((SEED + 1))" 4 "$CALLS" 1 >"$tmp/f1" 2>&1 &
p1=$!
rc=0
wait "$p0" || rc=1
wait "$p1" || rc=1
cat "$tmp/f0" "$tmp/f1"
[ "$rc" = 0 ] || fail "bsp_sysfuzz failed"
total=$(awk '/^sysfuzz seed/ {n += $4} END {print n + 0}' "$tmp/f0" "$tmp/f1")
log "bsp_sysfuzz: $total calls"

# Fresh sockets of n0 still exchange messages byte for byte.
ip netns exec n0 "$FUZZ" "$SEED" 1 1 >"$tmp/s0" 2>&1 || { cat "$tmp/s0"; fail "n0 after fuzzing"; }
bsp_nodes_cleanup
bsp_unload
log "module unloaded after bsp_sysfuzz"
