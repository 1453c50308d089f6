#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# AF_BSP against kernel TCP on unshaped rails (a VM scenario, not a test: it
# prints figures).
#
#   tests/vm/run-vm --case-timeout 900 --script tests/kernel/bench_unshaped.sh
#
# Two nodes joined by 1 or 2 veth/bridge rails with no shaping, so that the
# CPU, not the wire, decides. For MTU 1500 and 9000 it measures, one after
# the other in the same boot: bsp_bench with 64 KiB and 1 MiB messages over
# 1 and 2 rails, and iperf3 (one TCP stream) over rail 0. Prints one table:
# Mbit/s at the receiver, the ratio to TCP at the same MTU, and the
# sender's timeout probes and retransmissions and the frames the guest's
# input backlogs dropped (softnet_stat) during every AF_BSP row.
#
# BSPVM_BENCH_MIB (default 32) is the volume of each AF_BSP measurement;
# BSPVM_BENCH_MODARGS adds module parameters (e.g. tx_gso=0: no super-frames);
# BSPVM_BENCH_PARAM=NAME (a boolean module parameter writable at run time,
# e.g. rx_zcopy, tx_gso, tx_cache) measures every AF_BSP row with NAME=0 and
# NAME=1 side by side in the same boot, BSPVM_BENCH_ROUNDS (default 3) times
# each, in the order 0 1 1 0 0 1 ... (so that neither setting always runs
# first), and prints the medians and their ratio instead of one figure;
# timeouts and retransmissions are summed over the runs of each setting.
# BSPVM_BENCH_PROFILE=1 adds, for 1 MiB messages on one 9000-byte rail, the
# kernel symbols that took the most samples (perf, software cpu-clock
# event: TCG has no PMU), with the same profile of iperf3 beside it.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd iperf3 python3
BENCH=$(ktest_bin bsp_bench)
VOLUME=$((${BSPVM_BENCH_MIB:-32} << 20))
# shellcheck disable=SC2086 # word splitting of the parameters is intended
af_bsp_load max_rails=2 ${BSPVM_BENCH_MODARGS:-}

# statof FILE KEY -> the value of KEY=... on the file's STATS line
statof()
{
	sed -n "s/^STATS.* $2=\([0-9]*\).*/\1/p" "$1" | head -n 1
}

# backlog_drops -> frames dropped so far because a CPU's input backlog was
# full (net.core.netdev_max_backlog; veth hands every frame to netif_rx)
backlog_drops()
{
	python3 -c 'import sys; print(sum(int(l.split()[1], 16) for l in open("/proc/net/softnet_stat")))'
}

# afbsp SIZE -> "mbit timeouts retransmissions backlog_drops" of one AF_BSP
# transfer
afbsp()
{
	local size=$1 count=$((VOLUME / $1)) mbit retx drops

	drops=$(backlog_drops)
	ip netns exec n1 "$BENCH" sink 7500 "$count" "$size" >/tmp/bench.sink 2>&1 &
	sleep 0.3
	ip netns exec n0 "$BENCH" source 2 7500 "$count" "$size" >/tmp/bench.src ||
		fail "source: $(cat /tmp/bench.src)"
	wait || fail "sink: $(cat /tmp/bench.sink)"
	grep -h STATS /tmp/bench.src /tmp/bench.sink | sed "s/^/# size=$size /" >&2
	mbit=$(sed -n 's/^RESULT.* mbit=\([0-9.]*\).*/\1/p' /tmp/bench.sink)
	retx=$(($(statof /tmp/bench.src retx_hole) + $(statof /tmp/bench.src retx_prod) +
		$(statof /tmp/bench.src retx_timeout)))
	echo "$mbit $(statof /tmp/bench.src timeouts) $retx $(($(backlog_drops) - drops))"
	rm -f /tmp/bench.sink /tmp/bench.src
}

# tcp -> Mbit/s of one iperf3 stream over rail 0 (n0 -> n1)
tcp()
{
	ip -n n0 addr add 10.8.0.1/24 dev eth0
	ip -n n1 addr add 10.8.0.2/24 dev eth0
	ip netns exec n1 iperf3 -s -1 -D >/dev/null 2>&1
	sleep 0.5
	ip netns exec n0 iperf3 -c 10.8.0.2 -t 6 -O 1 -J |
		python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))'
}

# profile WHAT CMD... -> the 12 symbols with most cpu-clock samples, all CPUs
profile()
{
	local what=$1

	shift
	perf record -q -a -e cpu-clock -o /tmp/bench.perf -- "$@" >/dev/null 2>&1 ||
		{ log "perf record failed"; return; }
	echo "perf: $what, share of all samples of both CPUs"
	perf report -q -i /tmp/bench.perf --sort sym --percent-limit 1.5 \
		--stdio 2>/dev/null | grep '%' | sed -n '1,14p' | sed 's/^ */    /'
	rm -f /tmp/bench.perf
}

# median VALUES... -> their median
median()
{
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# afbsp_ab SIZE KEY: BSPVM_BENCH_ROUNDS runs with PARAM=0 and =1 each, into
# M0/M1 (medians), TO0/TO1 and RX0/RX1 (sums) at KEY
afbsp_ab()
{
	local size=$1 k=$2 r v m to rx
	local -a m0=() m1=()

	TO0[$k]=0 TO1[$k]=0 RX0[$k]=0 RX1[$k]=0
	for ((r = 0; r < ${BSPVM_BENCH_ROUNDS:-3}; r++)); do
		for v in $((r & 1)) $((1 - (r & 1))); do
			echo "$v" >"$PARAM_FILE"
			read -r m to rx _ <<<"$(afbsp "$size")"
			[ -n "$m" ] || fail "no figure for $k with $PARAM=$v"
			log "$k $PARAM=$v: $m Mbit/s"
			if [ "$v" = 0 ]; then
				m0+=("$m") TO0[$k]=$((TO0[$k] + to)) RX0[$k]=$((RX0[$k] + rx))
			else
				m1+=("$m") TO1[$k]=$((TO1[$k] + to)) RX1[$k]=$((RX1[$k] + rx))
			fi
		done
	done
	echo "$PARAM_DEFAULT" >"$PARAM_FILE"
	M0[$k]=$(median "${m0[@]}")
	M1[$k]=$(median "${m1[@]}")
}

PARAM=${BSPVM_BENCH_PARAM:-}
if [ -n "$PARAM" ]; then
	PARAM_FILE=/sys/module/af_bsp/parameters/$PARAM
	[ -w "$PARAM_FILE" ] || fail "BSPVM_BENCH_PARAM: no writable module parameter $PARAM"
	PARAM_DEFAULT=$(cat "$PARAM_FILE")
fi

declare -A M TO RX BD TCP M0 M1 TO0 TO1 RX0 RX1
for mtu in 1500 9000; do
	for rails in 1 2; do
		bsp_nodes 2 "$rails" "$mtu"
		bsp_wait_peers 1
		for size in 65536 1048576; do
			if [ -n "$PARAM" ]; then
				afbsp_ab "$size" "$mtu,$rails,$size"
				continue
			fi
			read -r M[$mtu,$rails,$size] TO[$mtu,$rails,$size] \
				RX[$mtu,$rails,$size] BD[$mtu,$rails,$size] <<<"$(afbsp "$size")"
			[ -n "${M[$mtu,$rails,$size]}" ] || fail "no figure for mtu $mtu, $rails rails, $size"
			log "mtu=$mtu rails=$rails size=$size: ${M[$mtu,$rails,$size]} Mbit/s"
		done
		if [ "$rails" = 1 ]; then
			TCP[$mtu]=$(tcp)
			log "mtu=$mtu tcp: ${TCP[$mtu]} Mbit/s"
		fi
		bsp_nodes_cleanup
	done
done

ratio()
{
	python3 -c "print('%.2f' % ($1 / $2 if $2 else 0))"
}

if [ -n "$PARAM" ]; then
	echo
	echo "Unshaped veth/bridge rails, 2 nodes, $((VOLUME >> 20)) MiB per AF_BSP figure; Mbit/s at the receiver,"
	echo "median of ${BSPVM_BENCH_ROUNDS:-3} runs with $PARAM=0 and =1 each (timeouts, retransmissions: all runs)"
	printf '%-6s %-12s %6s %16s %16s %7s %9s %9s\n' MTU what rails "$PARAM=0 (/TCP)" \
		"$PARAM=1 (/TCP)" "1 / 0" timeouts retx
	for mtu in 1500 9000; do
		printf '%-6s %-12s %6s %16s\n' "$mtu" TCP 1 "${TCP[$mtu]}"
		for size in 65536 1048576; do
			for rails in 1 2; do
				k=$mtu,$rails,$size
				printf '%-6s %-12s %6s %16s %16s %7s %9s %9s\n' "$mtu" \
					"AF_BSP $((size >> 10))k" "$rails" \
					"${M0[$k]} ($(ratio "${M0[$k]}" "${TCP[$mtu]}"))" \
					"${M1[$k]} ($(ratio "${M1[$k]}" "${TCP[$mtu]}"))" \
					"$(ratio "${M1[$k]}" "${M0[$k]}")" "${TO0[$k]}/${TO1[$k]}" \
					"${RX0[$k]}/${RX1[$k]}"
			done
		done
	done
	exit 0
fi

echo
echo "Unshaped veth/bridge rails, 2 nodes, $((VOLUME >> 20)) MiB per AF_BSP figure; Mbit/s at the receiver"
printf '%-6s %-12s %6s %10s %8s %9s %6s %8s\n' MTU what rails Mbit/s "/ TCP" timeouts retx backlog
for mtu in 1500 9000; do
	printf '%-6s %-12s %6s %10s %8s %9s %6s %8s\n' "$mtu" "TCP" 1 "${TCP[$mtu]}" 1.00 - - -
	for size in 65536 1048576; do
		for rails in 1 2; do
			k=$mtu,$rails,$size
			printf '%-6s %-12s %6s %10s %8s %9s %6s %8s\n' "$mtu" \
				"AF_BSP $((size >> 10))k" "$rails" "${M[$k]}" \
				"$(ratio "${M[$k]}" "${TCP[$mtu]}")" "${TO[$k]}" "${RX[$k]}" "${BD[$k]}"
		done
	done
done

if [ "${BSPVM_BENCH_PROFILE:-0}" = 1 ]; then
	need_cmd perf
	echo
	bsp_nodes 2 1 9000
	bsp_wait_peers 1
	count=$((VOLUME >> 20))
	ip netns exec n1 "$BENCH" sink 7500 "$count" 1048576 >/dev/null 2>&1 &
	sleep 0.3
	profile "AF_BSP 1 MiB messages, 1 rail, MTU 9000" \
		ip netns exec n0 "$BENCH" source 2 7500 "$count" 1048576
	wait
	ip -n n0 addr add 10.8.0.1/24 dev eth0
	ip -n n1 addr add 10.8.0.2/24 dev eth0
	ip netns exec n1 iperf3 -s -1 -D >/dev/null 2>&1
	sleep 0.5
	profile "TCP (iperf3), MTU 9000" ip netns exec n0 iperf3 -c 10.8.0.2 -t 4
	bsp_nodes_cleanup
fi
exit 0
