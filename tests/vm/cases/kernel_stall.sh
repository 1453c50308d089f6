#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 240
# A node that is not scheduled for a while does not take its own stall for
# its peers' silence. The whole guest is frozen for 3 s (six peer timeouts;
# bspvm_freeze holds every CPU with interrupts off: no process, softirq or
# timer runs, the clock goes on, as when a hypervisor deschedules a virtual
# machine), three times with the nodes idle and twice during a transfer: no
# peer rail is declared dead (peer_rail_timeouts stays 0 on every node), no
# message fails and every byte arrives. Before the liveness check counted
# its own runs, the first node to run after a stall marked every peer dead,
# and a sender starved like that for unreach_ms got EHOSTUNREACH (the 4 x 2
# all-to-all of kernel_xfer on the debug kernel). Then user space alone
# starves for 3 s during a transfer (real-time hogs on every CPU, softirqs
# still served): the reader does not read, no hello is sent, nothing fails.
# Then the control: a rail that really goes silent still dies, on every
# peer that stops hearing it.
#
# The stall must be the same for every node. Real-time hogs alone made it
# depend on chance: a CPU whose softirqs had been handed to ksoftirqd
# before a hog took it served none for the 3 s, the others served theirs,
# so a node whose timers ran on time could really hear nothing from a peer
# for longer than unreach_ms (2 s), and fail its messages, as it must.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd chrt
need_cmd taskset
XFER=$(ktest_bin bsp_xfer)
freeze_ko=$BSPVM_REPO/build/vm/freeze/bspvm_freeze.ko
[ "${BSPVM_KERNEL:-stock}" = debug ] &&
	freeze_ko=$BSPVM_REPO/build/vm/freeze-debug/bspvm_freeze.ko
[ -f "$freeze_ko" ] || fail "$freeze_ko not built (tests/vm/run-vm builds it)"
insmod "$freeze_ko" || fail "insmod bspvm_freeze"
on_exit "rmmod bspvm_freeze"
af_bsp_load
bsp_nodes 3 2
bsp_wait_peers 2
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

stat_of()
{
	ip netns exec "$1" awk -v k="$2" '$1 == k { print $2 }' /proc/net/af_bsp/stats
}

timeouts()
{
	local i sum=0

	for ((i = 0; i < BSP_NODES; i++)); do
		sum=$((sum + $(stat_of "n$i" peer_rail_timeouts)))
	done
	echo "$sum"
}

# stall SECONDS: the whole guest stops for SECONDS.
stall()
{
	echo $(($1 * 1000)) >/sys/module/bspvm_freeze/parameters/freeze_ms ||
		fail "freezing the guest for $1 s"
}

# Real-time tasks may take the whole CPU: the default throttling leaves
# 50 ms of every second to the others, which would be no stall at all.
rt=$(cat /proc/sys/kernel/sched_rt_runtime_us)
on_exit "echo $rt >/proc/sys/kernel/sched_rt_runtime_us"
echo -1 >/proc/sys/kernel/sched_rt_runtime_us || fail "sched_rt_runtime_us"

# ksoftirqd_prio POLICY PRIORITY: chrt POLICY -p PRIORITY for every CPU's
# ksoftirqd (-f 99 for real time, -o 0 back to normal).
# shellcheck disable=SC2317 # also called by on_exit
ksoftirqd_prio()
{
	local k

	for k in $(pgrep -x 'ksoftirqd/[0-9]+'); do
		chrt "$1" -p "$2" "$k" || return 1
	done
}
on_exit "ksoftirqd_prio -o 0"

# starve SECONDS: user space and every kernel thread of normal priority
# (the hello work) stop for SECONDS: a SCHED_FIFO 98 busy loop on every CPU
# (it watches the clock itself: a timer process would never run), while
# every CPU's ksoftirqd runs at SCHED_FIFO 99, so that softirqs (receive,
# timers) are served on every CPU as before, whether they run on the way
# out of an interrupt or were handed to ksoftirqd.
# shellcheck disable=SC2317 # called as "$1" by across
starve()
{
	local c pids=()

	ksoftirqd_prio -f 99 || fail "ksoftirqd to SCHED_FIFO 99"
	for ((c = 0; c < $(nproc); c++)); do
		taskset -c "$c" chrt -f 98 \
			bash -c "end=\$((SECONDS + $1)); while [ \$SECONDS -lt \$end ]; do :; done" &
		pids+=($!)
	done
	wait "${pids[@]}"
	ksoftirqd_prio -o 0 || fail "ksoftirqd back to SCHED_OTHER"
}

t0=$(timeouts)
[ "$t0" = 0 ] || fail "$t0 peer rails timed out before any stall"

# ---- idle nodes: only hellos, and nobody sends them during a stall
for k in 1 2 3; do
	stall 3
	sleep 1
	bsp_wait_peers 2
	n=$(timeouts)
	[ "$n" = 0 ] || {
		dmesg | grep "silent on rail" | tail -n 12
		fail "stall $k of 3 s: $n peer rails declared dead"
	}
done
log "3 stalls of 3 s with idle nodes: no peer rail timed out"

# ---- transfers across stalls: nothing fails, everything arrives.
# The rails into n2 are held to 8 Mbit/s each (2 MB/s into n2), so the
# transfer is still under way when the second stall begins: 7.5 MiB take
# some 4 s of sending besides the first freeze; 15 MiB take 7.5 s, of which
# the first starvation moves 4 MiB (n2's receive buffer).
modprobe sch_tbf || fail "modprobe sch_tbf"
for r in 0 1; do
	tc qdisc add dev "n2r$r" root tbf rate 8mbit burst 32kb latency 500ms ||
		fail "tbf on n2r$r"
done

# across STALL PORT MSGS: n0 and n1 send MSGS x 64 KiB each to n2:PORT;
# STALL (stall or starve) takes 3 s twice while they do. A freeze stops the
# transfer, a starvation does not (softirqs move the data until n2's
# receive buffer is full): it needs more messages to last into the second.
across()
{
	local rpid s0 s1 rc p s n

	ip netns exec n2 "$XFER" recv "$2" 2 "$3" fixed:65536 >"$tmp/r" 2>&1 &
	rpid=$!
	bsp_wait_bound n2 "$2"
	ip netns exec n0 "$XFER" send 3 "$2" "$3" fixed:65536 >"$tmp/s0" 2>&1 &
	s0=$!
	ip netns exec n1 "$XFER" send 3 "$2" "$3" fixed:65536 >"$tmp/s1" 2>&1 &
	s1=$!
	sleep 0.5
	"$1" 3
	sleep 0.5
	kill -0 "$s0" 2>/dev/null || kill -0 "$s1" 2>/dev/null ||
		fail "$1: the transfer ended before the second stall: it would prove nothing"
	"$1" 3
	rc=0
	for p in $rpid $s0 $s1; do wait "$p" || rc=1; done
	# The failure reports (one per message) summed, so that the last lines
	# of the log, all a CI summary shows, hold the counters and the kernel's
	# view of the peers.
	for s in r s0 s1; do
		grep -v "failure report" "$tmp/$s"
		grep "failure report" "$tmp/$s" | awk -v s="$s" \
			'{ n[$NF]++ } END { for (e in n) printf "%s: %d messages failed with %s\n", s, n[e], e }'
	done
	if [ $rc != 0 ]; then
		dmesg | grep -E "af_bsp|rail|restarted|node [0-9]" | grep -v "ignored hello" | tail -n 20
		fail "$1: the transfer across stalls failed"
	fi
	grep -q "recv ok $((2 * $3)) $((2 * $3 * 65536))" "$tmp/r" ||
		fail "$1: not all 2 x $3 messages arrived"
	for s in s0 s1; do
		grep -q "tx_errors 0 " "$tmp/$s" || fail "$1: $s: a message failed across the stalls"
	done
	n=$(timeouts)
	[ "$n" = 0 ] || fail "$1: the transfer across 2 stalls: $n peer rails declared dead"
}
across stall 7400 60
log "2 x 60 x 64 KiB across 2 freezes of 3 s: intact, no failure, no peer rail timed out"
across starve 7401 120
log "2 x 120 x 64 KiB across 2 starvations of user space of 3 s: intact, no failure, no peer rail timed out"
for r in 0 1; do
	tc qdisc del dev "n2r$r" root
done

# ---- control: a rail that goes silent for real still dies. Everything
# the switch sends to n2 on rail 1 is dropped: n2 stops hearing n0 and n1
# there (2 peer rails), while they still hear n2.
modprobe sch_netem || fail "modprobe sch_netem"
tc qdisc add dev n2r1 root netem loss 100% || fail "netem on n2r1"
left=$(ip netns exec n2 awk 'NR > 2 && $2 == 1 && $4 == "up"' /proc/net/af_bsp/peers | wc -l)
for ((t = 0; t < 50 && left > 0; t++)); do
	sleep 0.1
	left=$(ip netns exec n2 awk 'NR > 2 && $2 == 1 && $4 == "up"' /proc/net/af_bsp/peers | wc -l)
done
[ "$left" = 0 ] || fail "n2 still sees $left live peers on its silent rail 1 after 5 s"
expect_eq 2 "$(stat_of n2 peer_rail_timeouts)"
expect_eq 0 "$(stat_of n0 peer_rail_timeouts)"
expect_eq 0 "$(stat_of n1 peer_rail_timeouts)"
klog_has "silent on rail 1" || fail "no log line for the silent rail"
tc qdisc del dev n2r1 root
bsp_wait_peers 2
log "a really silent rail: n2 declared its 2 peers on rail 1 dead, and heard them again"
exit 0
