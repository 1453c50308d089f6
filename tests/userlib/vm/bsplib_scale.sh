#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# VM scenario, not a `make check` case (it takes minutes of emulated time):
#   tests/vm/run-vm --case-timeout 1500 --script tests/userlib/vm/bsplib_scale.sh
# BSPlib jobs of 8 and 16 processes (and 32 with BSP_SCALE_SIZES="8 16 32"), one process per
# node namespace, 2 rails, over AF_BSP: inprod and sort with their own correctness checks, and
# a total exchange (exchange, every byte checked) whose time per superstep is printed side by
# side for the sizes, with the engine counters of every process (BSP_STATS=1) summed.
# Documentation/testing.rst, "Scale: the simulated cluster" and "... in the VM".
# bspvm-timeout: 1500
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

bsplib_tree
EXAMPLES=$TREE/examples
for prog in inprod sort; do
	[ -x "$EXAMPLES/$prog" ] || fail "$prog not built in $TREE"
done
SIZES=${BSP_SCALE_SIZES:-8 16}
BYTES=${BSP_SCALE_BYTES:-4096}
REPS=${BSP_SCALE_REPS:-5}
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

# 16 processes and 32 namespace ports on the guest's 2 emulated CPUs: a process can go
# unscheduled for longer than three of the module's 200 ms timeouts, after which the engine
# declares the rail dead and, 2 s later, the peer unreachable (a 16-process sort failed so,
# "No route to host"). Tolerances of an emulated machine, not of a cluster:
af_bsp_load rto_min_ms=2000 unreach_ms=60000 peer_timeout_ms=5000
declare -A us
for n in $SIZES; do
	bsp_nodes_cleanup
	bsp_nodes "$n" 2
	bsp_wait_peers $((n - 1))
	hosts=$(seq -s, -f 'n%g' 0 $((n - 1)))
	run()
	{
		BSP_TRANSPORT=afbsp "$BSPRUN" -n "$n" --hosts "$hosts" \
			--launch 'ip netns exec {host}' --timeout 600 "$@"
	}
	run "$EXAMPLES/inprod" >"$tmp/inprod" 2>&1 || { cat "$tmp/inprod"; fail "inprod on $n failed"; }
	grep -q "on $n processes: .* (correct)$" "$tmp/inprod" || { cat "$tmp/inprod"; fail "inprod on $n: wrong"; }
	log "p=$n: $(cat "$tmp/inprod")"
	run "$EXAMPLES/sort" >"$tmp/sort" 2>&1 || { cat "$tmp/sort"; fail "sort on $n failed"; }
	grep -q "on $n processes: ok$" "$tmp/sort" || { cat "$tmp/sort"; fail "sort on $n: wrong"; }
	log "p=$n: $(cat "$tmp/sort")"
	BSP_STATS=1 run "$EXCHANGE" -n "$BYTES" -r "$REPS" >"$tmp/x" 2>"$tmp/stats" ||
		{ cat "$tmp/x" "$tmp/stats"; fail "exchange on $n failed"; }
	grep -q ', ok$' "$tmp/x" || { cat "$tmp/x"; fail "exchange on $n: corrupted"; }
	cat "$tmp/x"
	us[$n]=$(sed -n 's/.*: \([0-9.]*\) us\/superstep, ok$/\1/p' "$tmp/x")
	[ -n "${us[$n]}" ] || fail "exchange on $n: no time per superstep"
	expect_eq "$(grep -c '^bsp: afbsp stats of process' "$tmp/stats")" "$n" \
		"p=$n: every process printed its engine counters"
	# the counters of all processes summed, one line
	grep '^bsp: afbsp stats of process' "$tmp/stats" | sed 's/^[^:]*: [^:]*: //' |
		awk -v p="$n" '{ for (i = 1; i < NF; i += 2) { if (!($i in s)) n[++k] = $i; s[$i] += $(i + 1) } }
			END { printf "p=%d engine counters, all processes:", p
			      for (i = 1; i <= k; i++) printf " %s %d", n[i], s[n[i]]; printf "\n" }'
done
echo "total exchange of $BYTES bytes per pair, 2 rails, time per superstep (us):"
for n in $SIZES; do
	printf '  p=%-3d %12s us  %6.2fx p=8\n' "$n" "${us[$n]}" "$(echo "${us[$n]} / ${us[8]:-${us[$n]}}" | bc -l)"
done
exit 0
