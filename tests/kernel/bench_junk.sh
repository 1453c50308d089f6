#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Junk flood benchmark of the XDP pre-filter (a VM scenario, not a test: it
# prints figures).
#
#   tests/vm/run-vm --case-timeout 900 --script tests/kernel/bench_junk.sh
#
# Two nodes on one unshaped rail (MTU 1500); a third namespace "jk" on the
# same bridge floods node n1 with junk (tests/kernel/bsp_junk: half random
# AF_BSP-looking frames, half well-formed DATA for unbound ports) for
# BSPVM_JUNK_SECS seconds. Measured without and with the pre-filter on n1's rail,
# the two configurations alternated BSPVM_JUNK_ROUNDS times:
#   absorbed   junk frames n1 dropped and counted per second (the module's
#              drop counters, plus the pre-filter's with XDP) while only the
#              flood runs; frames the node could not even take are lost
#              before any counter and are not "absorbed";
#   goodput    Mbit/s of a legitimate n0 -> n1 transfer (bsp_bench, 1 MiB
#              messages) without flood, and while the flood runs.
# Prints one table with the medians and the ratios side by side.
#
# With BSPVM_JUNK_WIRE=1 (set by tests/kernel/bench_junk_wire.sh, which boots
# the VM for it) the two nodes' rail is instead a pair of virtio NICs joined
# through the host, and the flood comes from the host at native speed
# (bsp_junk --udp): the guest's receive path, not an emulated flooder beside
# it, sets the rate absorbed, and the pre-filter runs in the virtio driver
# before an skb exists. The flood runs while BSPVM_RUNDIR/junk.on exists; the
# host writes what it sent to junk.on.done. A row more: the guest's busy CPU
# time during the flood per junk frame dropped (the emulated flooder of the
# other mode would be counted in it).
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd nsenter
BENCH=$(ktest_bin bsp_bench)
JUNK=$(ktest_bin bsp_junk)
XDP=$(find_built tools/bsp-xdp/bsp-xdp)
ROUNDS=${BSPVM_JUNK_ROUNDS:-3}
JUNK_SECS=${BSPVM_JUNK_SECS:-5}
MIB=${BSPVM_JUNK_MIB:-32}
FLOOD_PPS=${BSPVM_JUNK_FLOOD_PPS:-}
SIZE=$((1 << 20))

WIRE=${BSPVM_JUNK_WIRE:-0}
CTL=${BSPVM_RUNDIR:-}/junk.on

af_bsp_load
if [ "$WIRE" = 1 ]; then
	modprobe virtio_net 2>/dev/null
	udevadm settle 2>/dev/null
	# the MACs bench_junk_wire.sh gave the NICs
	nic0=$(nic_by_mac 52:54:00:b5:00:01) || fail "no NIC 52:54:00:b5:00:01 (run bench_junk_wire.sh)"
	nic1=$(nic_by_mac 52:54:00:b5:00:02) || fail "no NIC 52:54:00:b5:00:02 (run bench_junk_wire.sh)"
	log "wire: n0 on $nic0, n1 on $nic1 ($(ethtool -i "$nic1" 2>/dev/null | awk '$1 == "driver:" {print $2}'))"
	rm -f "$CTL" "$CTL.done"
	on_exit "rm -f $CTL"
	bsp_nodes_on "$nic0" "$nic1"
	bsp_wait_peers 1
else
	bsp_nodes 2 1
	bsp_wait_peers 1
	ip netns add jk || fail "netns jk"
	on_exit "ip netns del jk 2>/dev/null"
	ip link add jkr0 type veth peer name eth0 netns jk || fail "veth jk"
	on_exit "ip link del jkr0 2>/dev/null"
	ip link set jkr0 master rail0 up
	ip -n jk link set eth0 up
fi
n1mac=$(ip -n n1 -o link show eth0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
on_exit "nsenter --net=/run/netns/n1 $XDP detach eth0 >/dev/null 2>&1"

# the sum of the drop counters of n1: the module's, and the filter's if attached
drops()
{
	local m x=0

	m=$(ip netns exec n1 awk '$1 ~ /^drop_/ {s += $2} END {print s}' /proc/net/af_bsp/stats)
	if [ "$1" = xdp ]; then
		x=$(nsenter --net=/run/netns/n1 "$XDP" stats | awk '$1 ~ /^drop_/ {s += $2} END {print s}')
	fi
	echo $((m + x))
}

# wire_on [PPS] / wire_off: start (at most PPS frames per second, 0: as fast
# as the host can; none: BSPVM_JUNK_PPS of bench_junk_wire.sh) / stop the
# host's flood; wire_off prints the host's "JUNK sent=..." line
wire_on()
{
	rm -f "$CTL.done"
	# whole at once: the host reads the rate when the file appears
	{ echo "${1:-}" >"$CTL.tmp" && mv "$CTL.tmp" "$CTL"; } || fail "cannot create $CTL"
}

wire_off()
{
	local t

	rm -f "$CTL"
	for ((t = 0; t < 100; t++)); do
		[ -s "$CTL.done" ] && { cat "$CTL.done"; rm -f "$CTL.done"; return 0; }
		sleep 0.1
	done
	fail "the host flooder did not answer (is bsp_junk --udp running? $BSPVM_RUNDIR/host-helper.log)"
}

# the guest's busy CPU time so far, in USER_HZ ticks (all CPUs; /proc/stat)
busy_ticks() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }

# flood MODE -> "sent_pps absorbed_pps cpu_us_per_absorbed_frame"
flood()
{
	local d0 d1 out t0 t1 c0 c1

	d0=$(drops "$1")
	c0=$(busy_ticks)
	t0=$(date +%s.%N)
	if [ "$WIRE" = 1 ]; then
		wire_on
		sleep "$JUNK_SECS"
		out=$(wire_off)
	else
		out=$(ip netns exec jk "$JUNK" eth0 "$n1mac" 2 "$JUNK_SECS") || fail "bsp_junk: $out"
	fi
	sleep 1 # what was queued is processed
	t1=$(date +%s.%N)
	c1=$(busy_ticks)
	d1=$(drops "$1")
	echo "$(grep -o 'pps=[0-9]*' <<<"$out" | cut -d= -f2)" \
		"$(echo "($d1 - $d0) / ($t1 - $t0 - 1)" | bc -l)" \
		"$(echo "($c1 - $c0) * 1000000 / $(getconf CLK_TCK) / ($d1 - $d0 + 1)" | bc -l)"
}

# goodput [flood] -> Mbit/s of MIB MiB from n0 to n1 at the receiver
goodput()
{
	local count=$((MIB * 1048576 / SIZE)) jpid=

	ip netns exec n1 "$BENCH" sink 7500 "$count" "$SIZE" >/tmp/bj.sink 2>&1 &
	local sink=$!
	bsp_wait_bound n1 7500
	if [ "${1:-}" = flood ] && [ "$WIRE" = 1 ]; then
		wire_on "$FLOOD_PPS"
		sleep 0.5
	elif [ "${1:-}" = flood ]; then
		ip netns exec jk "$JUNK" eth0 "$n1mac" 2 600 >/dev/null &
		jpid=$!
		sleep 0.5
	fi
	ip netns exec n0 "$BENCH" source 2 7500 "$count" "$SIZE" >/tmp/bj.src 2>&1 ||
		fail "source: $(cat /tmp/bj.src)"
	if ! wait "$sink"; then
		# under flood the transfer may not finish: goodput 0, not a failure
		[ "${1:-}" = flood ] || fail "sink: $(cat /tmp/bj.sink)"
		log "transfer under flood did not finish: $(cat /tmp/bj.sink)"
		echo "mbit=0" >/tmp/bj.sink
	fi
	[ -n "$jpid" ] && { kill "$jpid"; wait "$jpid" 2>/dev/null; }
	[ "${1:-}" = flood ] && [ "$WIRE" = 1 ] && wire_off >/dev/null
	grep -o 'mbit=[0-9.]*' /tmp/bj.sink | cut -d= -f2
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

declare -A res
for ((round = 1; round <= ROUNDS; round++)); do
	for mode in plain xdp; do
		if [ "$mode" = xdp ]; then
			nsenter --net=/run/netns/n1 "$XDP" attach eth0 >/dev/null || fail "attach"
		fi
		read -r sent absorbed cpu <<<"$(flood "$mode")"
		# the flood under which goodput is measured: what a node without
		# the filter absorbs (its first round), unless given
		if [ -z "$FLOOD_PPS" ]; then
			FLOOD_PPS=$(printf '%.0f' "$absorbed")
			log "goodput under a flood of $FLOOD_PPS frames/s"
		fi
		g0=$(goodput)
		g1=$(goodput flood)
		log "round $round $mode: sent ${sent}/s absorbed ${absorbed}/s (${cpu} us of CPU each) goodput ${g0} Mbit/s, under flood ${g1}"
		res[$mode.sent]+="$sent "
		res[$mode.abs]+="$absorbed "
		res[$mode.cpu]+="$cpu "
		res[$mode.g0]+="$g0 "
		res[$mode.g1]+="$g1 "
		if [ "$mode" = xdp ]; then
			nsenter --net=/run/netns/n1 "$XDP" stats | sed 's/^/# /' >&2
			nsenter --net=/run/netns/n1 "$XDP" detach eth0 || fail "detach"
		fi
	done
done

m() { tr ' ' '\n' <<<"${res[$1]}" | grep . | median; }
printf '\n%-34s %14s %14s %8s\n' "junk flood, n1 (median of $ROUNDS)" "without XDP" "with XDP" "ratio"
row()
{
	local a b
	a=$(m "plain.$2")
	b=$(m "xdp.$2")
	printf '%-34s %14.1f %14.1f %8.2f\n' "$1" "$a" "$b" "$(echo "$b / $a" | bc -l)"
}
row "junk sent (frames/s)" sent
row "junk absorbed (frames/s)" abs
[ "$WIRE" = 1 ] && row "guest CPU per junk frame (us)" cpu
row "goodput, no flood (Mbit/s)" g0
row "goodput, under flood (Mbit/s)" g1
for mode in plain xdp; do
	printf '%-34s %14s\n' "under flood / no flood, $mode" \
		"$(printf '%.2f' "$(echo "$(m "$mode.g1") / $(m "$mode.g0")" | bc -l)")"
done
exit 0
