#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# VM case (tests/vm/run-vm --script tests/userlib/vm/bsplib_afbsp.sh): BSPlib programs
# started by bsprun on 4 nodes x 2 rails, over AF_BSP sockets and over UDP on the
# rails; exact output of [SHM97]'s array all-sums, every byte of a total exchange
# checked, and the automatic choice of AF_BSP. The scheduling benchmark is
# bsplib_schedule_bench.sh.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

bsplib_tree
ALLSUMS=$TREE/userlib-test-programs/allsums_array
[ -x "$ALLSUMS" ] || fail "allsums_array not built in $TREE"
HOSTS=n0,n1,n2,n3
run4()
{
	"$BSPRUN" -n 4 --hosts "$HOSTS" --launch 'ip netns exec {host}' --timeout 120 "$@"
}

# max_chans=2: a socket's default channel table is smaller than the 3 remote peers of
# every process, so each run over AF_BSP also checks that libbsp sizes it (BSP_CHANNELS).
af_bsp_load max_chans=2
bsp_nodes 4 2
bsp_wait_peers 3
bsp_rail_addresses 4 2
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

expected()
{
	local i j
	for i in 0 1 2 3; do
		printf 'On process %d: ' "$i"
		for j in $(seq 1 100); do printf '%d ' $((100 * i + j)); done
		printf '\n'
	done
}
expected | sort >"$tmp/want"

for t in udp afbsp; do
	BSP_TRANSPORT=$t BSP_UDP_RAILS=eth0,eth1 BSP_VERBOSE=1 run4 "$ALLSUMS" \
		>"$tmp/out.$t" 2>"$tmp/err.$t" || { cat "$tmp/err.$t"; fail "allsums over $t failed"; }
	sort "$tmp/out.$t" | cmp -s - "$tmp/want" || { cat "$tmp/out.$t"; fail "allsums over $t: wrong output"; }
	grep -q "^bsp: nprocs=4 transport=$t " "$tmp/err.$t" || { cat "$tmp/err.$t"; fail "transport $t not reported"; }
	log "allsums over $t: exact output"
	for n in 20000 200000; do
		BSP_TRANSPORT=$t BSP_UDP_RAILS=eth0,eth1 run4 "$EXCHANGE" -n $n -r 3 >"$tmp/x.$t" 2>&1 || {
			cat "$tmp/x.$t"
			for i in 0 1 2 3; do ip netns exec "n$i" cat /proc/net/af_bsp/peers; done
			fail "exchange of $n bytes per pair over $t failed"
		}
	done
	grep -q ', ok$' "$tmp/x.$t" || { cat "$tmp/x.$t"; fail "exchange over $t corrupted"; }
	cat "$tmp/x.$t"
done

# BSPedupack's start (bsp_init, P read on process 0 only, bsp_begin(P) everywhere) in a
# job of 4, answering 4 and 2: with 2 the transport joins processes 0 and 1 only and
# processes 2 and 3 leave in bsp_begin with status 0.
COMPAT=$TREE/userlib-test-programs/compat
[ -x "$COMPAT" ] || fail "compat not built in $TREE"
for t in udp afbsp; do
	for p in 4 2; do
		{
			echo "How many processes? (at most 4)"
			for i in $(seq 0 $((p - 1))); do
				echo "process $i of $p: sum $((p * (p + 1) / 2))"
			done
			echo "process 0 continues after bsp_end"
		} | sort >"$tmp/want.edupack"
		echo $p | BSP_TRANSPORT=$t BSP_UDP_RAILS=eth0,eth1 BSP_VERBOSE=1 run4 "$COMPAT" edupack \
			>"$tmp/out.edupack" 2>"$tmp/err.edupack" ||
			{ cat "$tmp/err.edupack"; fail "edupack start answering $p over $t failed"; }
		sort "$tmp/out.edupack" | cmp -s - "$tmp/want.edupack" ||
			{ cat "$tmp/out.edupack"; fail "edupack start answering $p over $t: wrong output"; }
		if [ "$p" -gt 1 ]; then
			grep -q "^bsp: nprocs=$p transport=$t " "$tmp/err.edupack" ||
				{ cat "$tmp/err.edupack"; fail "edupack over $t: not $p processes"; }
		fi
		log "edupack start in a job of 4 answering $p over $t: exact output, status 0"
	done
done

# auto picks AF_BSP when every node has it
# BSP_WIDE_TYPES: puts, gets and BSMP at offsets beyond 2^31 and 2^32 of 4 GiB areas
# (MAP_NORESERVE: only touched pages cost memory) between the nodes, over AF_BSP.
WIDE=$TREE/userlib-test-programs/wide
[ -x "$WIDE" ] || fail "wide not built in $TREE"
BSP_TRANSPORT=afbsp run4 "$WIDE" >"$tmp/out.wide" 2>&1 || { cat "$tmp/out.wide"; fail "wide over afbsp failed"; }
expect_eq "$(grep -cE '^\[[0-3]\] (puts|gets) from [0-3]: [0-9]+ bytes.*, 0 wrong$' "$tmp/out.wide")" 8 \
	"wide: puts and gets checked without a wrong byte"
expect_eq "$(grep -c '2^40+[0-9]* length 5, 0 wrong, hpmove tag 2^40+[0-9]* length 6, 0 wrong, then -1$' "$tmp/out.wide")" 4 \
	"wide: BSMP with 2^40 tags"
log "wide types over afbsp: exact bytes at offsets above 4 GiB"

BSP_VERBOSE=1 BSP_UDP_RAILS=eth0,eth1 run4 "$ALLSUMS" >/dev/null 2>"$tmp/err.auto" || fail "auto failed"
grep -q "transport=afbsp" "$tmp/err.auto" || { cat "$tmp/err.auto"; fail "auto did not choose afbsp"; }
log "auto chose afbsp"

exit 0
