#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# AF_BSP rail benchmark (a VM scenario, not a test: it prints figures).
#
#   tests/vm/run-vm --case-timeout 600 --script tests/kernel/bench_rails.sh
#
# Two nodes, rails shaped with tbf to BENCH_RATE each (default 20mbit) at
# MTU 9000, far below what the emulated CPU can push, so that link
# aggregation rather than CPU cost is measured. Prints side by side:
# throughput with 1, 2 and 4 rails for 64 KiB and 1 MiB messages, the
# half round trip of 8-byte messages with 1 and 2 rails, and kernel TCP
# (iperf3) on one rail shaped the same way.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd iperf3 tc python3
BENCH=$(ktest_bin bsp_bench)
RATE_MBIT=${BENCH_RATE_MBIT:-20}
RATE=${RATE_MBIT}mbit
VOLUME=$((${BENCH_MIB:-16} << 20))
modprobe sch_tbf || fail "modprobe sch_tbf"
af_bsp_load max_rails=4

shape()
{
	local i r

	for i in 0 1; do
		for ((r = 0; r < $1; r++)); do
			ip netns exec "n$i" tc qdisc replace dev "eth$r" root tbf \
				rate "$RATE" burst 64kb limit 512kb || fail "tbf on eth$r of n$i"
		done
	done
}

# throughput RAILS SIZE -> Mbit/s measured by the receiver. The sender
# paces at 95% of the rails' total rate, as the messaging layer would
# (Documentation/messaging.rst, pacing), instead of overrunning the shaped links' queues.
throughput()
{
	local size=$2 count=$((VOLUME / $2)) out
	local pacing=$(($1 * RATE_MBIT * 1000000 * 95 / 800))

	ip netns exec n1 "$BENCH" sink 7500 "$count" "$size" >/tmp/bench.sink 2>&1 &
	sleep 0.3
	ip netns exec n0 "$BENCH" source 2 7500 "$count" "$size" "$pacing" >/tmp/bench.src ||
		fail "source: $(cat /tmp/bench.src)"
	wait || fail "sink: $(cat /tmp/bench.sink)"
	# what the protocol did to get there, for the log (stderr)
	grep -h STATS /tmp/bench.src /tmp/bench.sink | sed "s/^/# rails=$1 size=$size /" >&2
	out=$(grep -o 'mbit=[0-9.]*' /tmp/bench.sink | cut -d= -f2)
	rm -f /tmp/bench.sink /tmp/bench.src
	echo "$out"
}

# latency -> "median_1rail median_2rails paired_ratio" (us, us, 2 rails / 1
# rail). The emulated CPU's speed drifts during a run by more than what is
# measured here, so the two configurations are measured side by side and
# interleaved: four nodes, n0-n1 with one rail (eth1 taken out of bsp0) and
# n2-n3 with two, pinged in alternating rounds. Each figure is the median of
# the rounds' medians; the ratio is the median of the rounds' ratios (each
# round's two measurements are adjacent in time).
latency()
{
	local round t one=() two=() rounds=20 pings=30

	bsp_nodes 4 2 9000
	for i in 0 1 2 3; do
		for r in 0 1; do
			ip netns exec "n$i" tc qdisc replace dev "eth$r" root tbf \
				rate "$RATE" burst 64kb limit 512kb || fail "tbf"
		done
	done
	bsp_wait_peers 3
	ip -n n0 link set eth1 nomaster || fail "nomaster"
	ip -n n1 link set eth1 nomaster || fail "nomaster"
	# until n0 and n1 no longer use rail 1 for each other
	for ((t = 0; t < 100; t++)); do
		ip netns exec n0 awk 'NR > 2 && $1 == 2 && $2 == 1 && $4 == "up"' \
			/proc/net/af_bsp/peers | grep -q . || break
		sleep 0.1
	done
	ip netns exec n1 "$BENCH" echo 7501 $((rounds * pings)) >/dev/null 2>&1 &
	ip netns exec n3 "$BENCH" echo 7501 $((rounds * pings)) >/dev/null 2>&1 &
	sleep 0.3
	for ((round = 0; round < rounds; round++)); do
		one+=("$(ip netns exec n0 "$BENCH" ping 2 7501 $pings 8 |
			sed -n 's/.* half_rtt_us=\([0-9.]*\).*/\1/p')")
		two+=("$(ip netns exec n2 "$BENCH" ping 4 7501 $pings 8 |
			sed -n 's/.* half_rtt_us=\([0-9.]*\).*/\1/p')")
	done
	wait
	echo "# latency rounds (us): 1 rail ${one[*]}; 2 rails ${two[*]}" >&2
	bsp_nodes_cleanup
	python3 -c 'import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
assert len(a) == len(b) and a
print("%.1f %.1f %.3f" % (statistics.median(a), statistics.median(b),
                          statistics.median(y / x for x, y in zip(a, b))))' \
		"${one[*]}" "${two[*]}"
}

declare -A T
for rails in 1 2 4; do
	bsp_nodes 2 "$rails" 9000
	shape "$rails"
	bsp_wait_peers 1
	T[$rails,64k]=$(throughput "$rails" 65536)
	log "rails=$rails 64k: ${T[$rails,64k]} Mbit/s"
	T[$rails,1m]=$(throughput "$rails" 1048576)
	if [ "$rails" = 1 ]; then
		ip -n n0 addr add 10.8.0.1/24 dev eth0
		ip -n n1 addr add 10.8.0.2/24 dev eth0
		ip netns exec n1 iperf3 -s -1 -D >/dev/null 2>&1
		sleep 0.5
		TCP=$(ip netns exec n0 iperf3 -c 10.8.0.2 -t 6 -O 1 -J |
			python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))')
	fi
	bsp_nodes_cleanup
	log "rails=$rails: 64k ${T[$rails,64k]} 1m ${T[$rails,1m]} Mbit/s"
done
read -r L1 L2 LR <<<"$(latency)"
[ -n "$LR" ] || fail "latency measurement"

ratio()
{
	python3 -c "print('%.2f' % ($1 / $2 if $2 else 0))"
}

echo
echo "AF_BSP over tbf-shaped rails ($RATE each, MTU 9000, sender paced at 95% of the total), Mbit/s at the receiver"
printf '%-22s %10s %10s %10s\n' "" "1 rail" "2 rails" "4 rails"
printf '%-22s %10s %10s %10s\n' "64 KiB messages" "${T[1,64k]}" "${T[2,64k]}" "${T[4,64k]}"
printf '%-22s %10s %10s %10s\n' "1 MiB messages" "${T[1,1m]}" "${T[2,1m]}" "${T[4,1m]}"
printf '%-22s %10s %10s %10s\n' "1 MiB ratio to 1 rail" 1.00 "$(ratio "${T[2,1m]}" "${T[1,1m]}")" \
	"$(ratio "${T[4,1m]}" "${T[1,1m]}")"
echo
echo "8-byte half round trip (20 interleaved rounds of 30, median us): 1 rail $L1, 2 rails $L2; 2 rails / 1 rail: $LR (median of the rounds' ratios)"
echo "kernel TCP (iperf3) on 1 rail: $TCP Mbit/s; AF_BSP 1 MiB on 1 rail / TCP: $(ratio "${T[1,1m]}" "$TCP")"
exit 0
