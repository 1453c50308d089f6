#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 900
# VM benchmark (tests/vm/run-vm --case-timeout 900 --script tests/userlib/vm/bsplib_mpi_bench.sh):
# BSPlib over AF_BSP against Open MPI (TCP BTL) on the same 8 nodes x 2 rails, one process
# per node namespace, for the total exchange (bsp_put / MPI_Alltoallv) and the cyclic shift
# (bsp_put / MPI_Sendrecv) of BYTES per pair. Both programs check every byte they receive.
# Prints a table of times and ratios (one run each); asserts only that both programs
# verified their data and that the ranks really ran one per node.
#
# Links, in this order (BENCH_LINKS="shaped unshaped" by default; BENCH_LINKS, BENCH_BYTES,
# BENCH_REPS and BENCH_MTU (1500) can be set when the script is run by hand in
# tests/vm/run-vm --shell, or as BSPVM_BENCH_LINKS (one kind), BSPVM_BENCH_MTU, ... in the
# environment of run-vm):
#   shaped    every switch port's egress (a node's downlink) on both rails shaped with tbf
#             to RATE_KBIT and a LIMIT-byte buffer, the constrained switch of
#             bsplib_schedule_bench.sh: the links, not the emulated CPUs, are the bottleneck,
#             which is the comparison issue 5 asks for;
#   unshaped  plain veths and bridges: the TCG-emulated CPUs are the bottleneck, and kernel
#             TCP (64 KiB GSO segments) pays far less per byte than a per-frame transport,
#             so this row shows CPU cost per byte, not the network.
# BSPlib runs with the latin square schedule and BSP_LINK_RATE set to a node's link rate on
# shaped links (pacing from the known load, as the runtime is meant to be configured on a
# known network), unpaced on unshaped links. Open MPI's TCP BTL uses both rails
# (btl_tcp_if_include eth0,eth1), its out-of-band channel rail 0, and connects every pair
# in MPI_Init (mpi_preconnect_mpi) so that no timed exchange pays for TCP handshakes;
# its ranks yield the CPU while they poll (mpi_yield_when_idle: 8 ranks share the guest's
# 2 CPUs, and spinning ranks starve the one that has work: measured 10x slower cyclic
# shifts on unshaped links without it).
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

bsplib_tree
MPI_EXCHANGE=$TREE/bench/mpi_exchange
[ -x "$MPI_EXCHANGE" ] || MPI_EXCHANGE=$(find_built bench/mpi_exchange)
RSH=$BSPVM_REPO/tests/userlib/vm/netns-rsh
need_cmd mpirun unshare bc

NODES=8
BYTES=${BENCH_BYTES:-${BSPVM_BENCH_BYTES:-65536}} # per pair of processes
REPS=${BENCH_REPS:-${BSPVM_BENCH_REPS:-3}}
LINKS=${BENCH_LINKS:-${BSPVM_BENCH_LINKS:-shaped unshaped}}
MTU=${BENCH_MTU:-${BSPVM_BENCH_MTU:-1500}} # of every rail (veths and bridges)
RATE_KBIT=1000    # per rail and node downlink, shaped links
LIMIT=8192        # switch buffer per port, bytes, shaped links
LINK_RATE=$((2 * RATE_KBIT * 1000 / 8)) # bytes/s of a node over both rails
TIMEOUT=300       # seconds, per program run
HOSTS=$(seq -s, -f "n%g" 0 $((NODES - 1)))
# Open MPI names a node by a rail-0 address; netns-rsh maps it to the namespace.
MPI_HOSTS=$(seq -s, -f "10.1.0.%g" 1 $NODES)
for l in $LINKS; do
	case "$l" in
	shaped | unshaped) ;;
	*) fail "BENCH_LINKS: '$l' is neither shaped nor unshaped" ;;
	esac
done

af_bsp_load
bsp_nodes "$NODES" 2 "$MTU"
bsp_wait_peers $((NODES - 1))
bsp_rail_addresses "$NODES" 2
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
# Open MPI writes its session directories under TMPDIR and may look at HOME; the
# guest's root file system is the host's, read-only.
mkdir -p "$tmp/home"
export HOME=$tmp/home TMPDIR=$tmp

# leftovers: the pids of benchmark processes still running (none after a clean run).
leftovers()
{
	local c
	# (pgrep patterns longer than a process name, 15 characters, never match)
	for c in orted mpirun mpi_exchange exchange bsprun; do
		pgrep -x "$c"
	done | tr '\n' ' '
}
# no_leftovers WHAT: fail unless every benchmark process has exited (Open MPI's daemons
# leave a moment after mpirun returns: wait up to 5 s).
no_leftovers()
{
	local t
	for ((t = 0; t < 50; t++)); do
		[ -z "$(leftovers)" ] && return 0
		sleep 0.1
	done
	fail "processes left after $1: $(ps -o pid,args -p "$(leftovers | tr ' ' ,)0")"
}
# Run by on_exit, which shellcheck cannot follow.
# shellcheck disable=SC2317
kill_leftovers()
{
	local p
	for p in $(leftovers); do
		kill -9 "$p" 2>/dev/null
	done
	return 0
}
on_exit kill_leftovers

# mpirun_n0 ARGS...: mpirun in node n0 (its host name n0), one rank per node.
mpirun_n0()
{
	timeout -k 5 $TIMEOUT "$RSH" n0 "mpirun --allow-run-as-root -n $NODES --host $MPI_HOSTS \
		--mca plm_rsh_agent $RSH --mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include eth0 --mca btl tcp,self --mca btl_tcp_if_include eth0,eth1 \
		--mca mpi_preconnect_mpi 1 --mca mpi_yield_when_idle 1 --mca orte_tmpdir_base $tmp $*"
}

# Open MPI really starts one rank in every node namespace (netns-rsh gives each the
# node's host name).
out=$(mpirun_n0 hostname 2>&1) || fail "mpirun hostname across the nodes: $out"
expect_eq "$(echo "$out" | sort | tr '\n' ' ')" "$(seq -f 'n%g' 0 $((NODES - 1)) | tr '\n' ' ')" \
	"host names of the $NODES Open MPI ranks"
no_leftovers mpirun

time_of()
{
	sed -n 's/.*: \([0-9.]*\) us\/superstep, ok$/\1/p' "$1"
}

declare -A T=()
mpi_version="Open MPI $(mpirun --version 2>/dev/null | sed -n 's/^mpirun (Open MPI) //p')"
for links in $LINKS; do
	rate=0
	if [ "$links" = shaped ]; then
		# The switch ports' egress: every node's downlink on both rails.
		modprobe sch_tbf || fail "modprobe sch_tbf"
		for ((i = 0; i < NODES; i++)); do
			for r in 0 1; do
				tc qdisc replace dev "n${i}r$r" root tbf rate ${RATE_KBIT}kbit burst 8k \
					limit $LIMIT || fail "tbf on n${i}r$r"
			done
		done
		rate=$LINK_RATE
	else
		for ((i = 0; i < NODES; i++)); do
			for r in 0 1; do
				tc qdisc del dev "n${i}r$r" root 2>/dev/null
			done
		done
	fi
	for pattern in total cyclic; do
		flag=
		[ $pattern = cyclic ] && flag=-c
		f=$tmp/bsp.$links.$pattern
		log "$links, $pattern: BSPlib over AF_BSP"
		BSP_TRANSPORT=afbsp BSP_SCHEDULE=latin BSP_LINK_RATE=$rate \
			"$BSPRUN" -n $NODES --hosts "$HOSTS" --launch 'ip netns exec {host}' \
			--timeout $TIMEOUT "$EXCHANGE" $flag -n "$BYTES" -r "$REPS" >"$f" 2>&1 ||
			fail "BSPlib exchange ($links, $pattern) failed: $(cat "$f")"
		cat "$f"
		grep -q ', ok$' "$f" || fail "BSPlib exchange ($links, $pattern) did not verify: $(cat "$f")"
		T[$links.$pattern.bsp]=$(time_of "$f")
		no_leftovers bsprun

		f=$tmp/mpi.$links.$pattern
		log "$links, $pattern: Open MPI"
		mpirun_n0 "$MPI_EXCHANGE" $flag -n "$BYTES" -r "$REPS" >"$f" 2>&1 ||
			fail "Open MPI exchange ($links, $pattern) failed: $(cat "$f")"
		cat "$f"
		grep -q ', ok$' "$f" || fail "Open MPI exchange ($links, $pattern) did not verify: $(cat "$f")"
		T[$links.$pattern.mpi]=$(time_of "$f")
		no_leftovers mpirun
	done
done

echo
echo "BSPlib over AF_BSP against $mpi_version (TCP BTL), p=$NODES, one process per node,"
echo "2 rails of MTU $MTU, $BYTES bytes per pair, $REPS supersteps each; times in us per superstep"
echo "(shaped: tbf ${RATE_KBIT}kbit with a $LIMIT-byte buffer on every switch port, BSPlib paced"
echo " at BSP_LINK_RATE=$LINK_RATE; unshaped: plain veth and bridge, BSPlib unpaced)"
printf '%-9s %-7s %16s %16s  %s\n' links pattern "BSPlib/AF_BSP" "Open MPI" "BSPlib/AF_BSP is Nx faster than Open MPI"
for links in $LINKS; do
	for pattern in total cyclic; do
		b=${T[$links.$pattern.bsp]}
		m=${T[$links.$pattern.mpi]}
		printf '%-9s %-7s %16s %16s  %sx\n' "$links" "$pattern" "$b" "$m" \
			"$(echo "scale=2; $m / $b" | bc -l | sed 's/^\./0./')"
	done
done
exit 0
