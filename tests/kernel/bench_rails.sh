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
# (DESIGN item 7), instead of overrunning the shaped links' queues.
throughput()
{
	local size=$2 count=$((VOLUME / $2)) out
	local pacing=$(($1 * RATE_MBIT * 1000000 / 8 * 95 / 100))

	ip netns exec n1 "$BENCH" sink 7500 "$count" "$size" >/tmp/bench.sink 2>&1 &
	sleep 0.3
	ip netns exec n0 "$BENCH" source 2 7500 "$count" "$size" "$pacing" || fail "source"
	wait || fail "sink: $(cat /tmp/bench.sink)"
	out=$(grep -o 'mbit=[0-9.]*' /tmp/bench.sink | cut -d= -f2)
	rm -f /tmp/bench.sink
	echo "$out"
}

latency()
{
	ip netns exec n1 "$BENCH" echo 7501 300 >/dev/null 2>&1 &
	sleep 0.3
	ip netns exec n0 "$BENCH" ping 2 7501 300 8 | sed -n 's/.* half_rtt_us=\([0-9.]*\).*/\1/p'
	wait
}

declare -A T L
for rails in 1 2 4; do
	bsp_nodes 2 "$rails" 9000
	shape "$rails"
	bsp_wait_peers 1
	T[$rails,64k]=$(throughput "$rails" 65536)
	log "rails=$rails 64k: ${T[$rails,64k]} Mbit/s"
	T[$rails,1m]=$(throughput "$rails" 1048576)
	if [ "$rails" -le 2 ]; then
		L[$rails]=$(latency)
	fi
	if [ "$rails" = 1 ]; then
		ip -n n0 addr add 10.8.0.1/24 dev eth0
		ip -n n1 addr add 10.8.0.2/24 dev eth0
		ip netns exec n1 iperf3 -s -1 -D >/dev/null 2>&1
		sleep 0.5
		TCP=$(ip netns exec n0 iperf3 -c 10.8.0.2 -t 6 -O 1 -J |
			python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))')
	fi
	bsp_nodes_cleanup
	log "rails=$rails: 64k ${T[$rails,64k]} 1m ${T[$rails,1m]} Mbit/s, latency ${L[$rails]:-} us"
done

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
echo "8-byte half round trip (median, us): 1 rail ${L[1]}, 2 rails ${L[2]} (ratio $(ratio "${L[2]}" "${L[1]}"))"
echo "kernel TCP (iperf3) on 1 rail: $TCP Mbit/s; AF_BSP 1 MiB on 1 rail / TCP: $(ratio "${T[1,1m]}" "$TCP")"
exit 0
