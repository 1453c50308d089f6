#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of tests/vm/run-vm: runs inside the VM, chrooted into the host
# root, as started by the initramfs /init. Argument: the run directory (the
# writable "results" share, mounted at the host's absolute path).
#
# Reads RUNDIR/config and RUNDIR/cases (name<TAB>path per line), runs each
# case under a time limit, and writes:
#   RUNDIR/current        name of the case being run
#   RUNDIR/<name>.log     its combined stdout/stderr
#   RUNDIR/<name>.dmesg   the kernel log lines logged while it ran
#   RUNDIR/results        name<TAB>PASS|FAIL|SKIP<TAB>seconds<TAB>reason
#   RUNDIR/dmesg.txt      the whole kernel log, after the last case
#   RUNDIR/status         "done", written last (the success marker)
# Live output goes to /dev/ttyS1, which run-vm shows on its stdout.

set -u -o pipefail

RUNDIR=$1
# shellcheck source=/dev/null
. "$RUNDIR/config"
LIB=$BSPVM_REPO/tests/vm/lib
# shellcheck source=splat.sh
. "$LIB/splat.sh"

OUT=/dev/ttyS1
stty -F "$OUT" raw -echo 2>/dev/null
exec >"$OUT" 2>&1

kmsg()
{
	echo "bspvm: $*" >/dev/kmsg
}

# Number of lines in the kernel log so far (the log buffer is 8 MiB, so lines
# are not lost between two calls).
klog_lines()
{
	dmesg | wc -l
}

# State a case must not leave behind: node namespaces, rail bridges, veths of
# the topology, loaded af_bsp or test modules. Prints what it found (and
# removes it, so the next case starts clean).
leftovers()
{
	local found=() ns dev m

	for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		found+=("netns $ns")
		ip netns del "$ns" 2>/dev/null
	done
	for dev in $(ip -o link show 2>/dev/null |
		awk -F': ' '{sub(/@.*/, "", $2); print $2}' |
		grep -E '^(rail[0-9]+|n[0-9]+r[0-9]+)$'); do
		found+=("link $dev")
		ip link del "$dev" 2>/dev/null
	done
	for m in af_bsp bspvm_splat; do
		if [ -d "/sys/module/$m" ]; then
			found+=("module $m")
			rmmod "$m" 2>/dev/null
		fi
	done
	[ ${#found[@]} -gt 0 ] && echo "${found[*]}"
}

# procs_in_group PGID: "pid args" of the processes in a process group, comma
# separated.
procs_in_group()
{
	ps -e -o pgid=,pid=,args= 2>/dev/null |
		awk -v g="$1" '$1 == g { $1 = ""; sub(/^ /, ""); print }' |
		tr '\n' ',' | sed 's/,$//'
}

# leftover_processes PGID: set LEFT_PROCS to the processes the case left
# running in its process group and kill them; set STUCK_PROCS to those that
# survive SIGKILL for 5 s (stuck in the kernel).
leftover_processes()
{
	local pgid=$1 t

	LEFT_PROCS=
	STUCK_PROCS=
	[[ "$pgid" =~ ^[0-9]+$ ]] || return 0
	LEFT_PROCS=$(procs_in_group "$pgid")
	[ -n "$LEFT_PROCS" ] || return 0
	kill -KILL -- "-$pgid" 2>/dev/null
	for ((t = 0; t < 10; t++)); do
		STUCK_PROCS=$(procs_in_group "$pgid")
		[ -n "$STUCK_PROCS" ] || return 0
		read -r -t 0.5 _ <>"$WATCHDOG_FIFO"
	done
}

# kmemleak (debug kernel only). It reports an object that nothing points to
# once it is older than 5 s and unchanged between two scans.
KMEMLEAK=/sys/kernel/debug/kmemleak
KMEMLEAK_VERBOSE=/sys/module/kmemleak/parameters/verbose

# kmemleak_scan: scan twice, the second time at least 5 s after the call, so
# an object leaked by what ran before the call is reported ("unreferenced
# object 0x..." in the kernel log: verbose is on after kmemleak_baseline).
kmemleak_scan()
{
	local t0

	[ -w "$KMEMLEAK" ] || return 0
	t0=$(date +%s)
	echo scan >"$KMEMLEAK"
	while [ $(($(date +%s) - t0)) -lt 6 ]; do
		sleep 1
	done
	echo scan >"$KMEMLEAK"
}

# kmemleak_baseline: what boot leaked (before any case or module) is listed
# in RUNDIR/kmemleak-boot.txt, not blamed on the first case; then every
# later report goes to the kernel log.
kmemleak_baseline()
{
	local n

	[ -w "$KMEMLEAK" ] || return 0
	kmemleak_scan
	cat "$KMEMLEAK" >"$RUNDIR/kmemleak-boot.txt"
	n=$(grep -c '^unreferenced object' "$RUNDIR/kmemleak-boot.txt")
	echo clear >"$KMEMLEAK"
	echo 1 >"$KMEMLEAK_VERBOSE"
	echo "bspvm: kmemleak on; boot left $n suspects (not ours, before any case: kmemleak-boot.txt)"
}

record()
{
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$RUNDIR/results"
}

echo "bspvm: guest up, kernel $(uname -r), $(nproc) CPU(s)"
kmsg "guest runner started"

# Splats during boot fail the run before any case.
bootsplat=$(dmesg | bspvm_splat_grep)
if [ -n "$bootsplat" ]; then
	echo "bspvm: kernel log has splats already after boot:"
	printf '%s\n' "$bootsplat" | sed 's/^/    /'
fi

kmemleak_baseline

WATCHDOG_FIFO=/tmp/bspvm/.watchdog
mkdir -p /tmp/bspvm
mkfifo "$WATCHDOG_FIFO"
# The watchdog's signal interrupts "wait" for a stuck case.
trap 'stuck=1' USR1

stop=0
while IFS=$'\t' read -r name path <&3; do
	if [ "$stop" = 1 ]; then
		break
	fi
	echo "$name" >"$RUNDIR/current"
	echo "=== RUN  $name"
	kmsg "case $name begin"
	before=$(klog_lines)
	scratch=/tmp/bspvm/$name
	mkdir -p "$scratch"
	start=$(date +%s)
	# A case may declare its own limit in its first lines:
	#   # bspvm-timeout: SECONDS
	ct=$(head -n 20 "$path" | sed -n 's/^# bspvm-timeout: *\([1-9][0-9]*\) *$/\1/p' | head -n 1)
	ct=${ct:-$BSPVM_CASE_TIMEOUT}
	ct=$((ct * ${BSPVM_TIMEOUT_SCALE:-1}))
	pgidfile=/tmp/bspvm/.pgid-$name
	(
		cd "$BSPVM_REPO" || exit 1
		# timeout(1) makes itself a process group leader: this pid is
		# the process group of everything the case starts.
		echo "$BASHPID" >"$pgidfile"
		# The BSPVM_* knobs run-vm was given (shell-safe KEY=value lines).
		set -a
		# shellcheck source=/dev/null
		[ -r "$RUNDIR/env" ] && . "$RUNDIR/env"
		set +a
		exec env BSPVM_REPO="$BSPVM_REPO" BSPVM_KVER="$BSPVM_KVER" \
			BSPVM_KERNEL="${BSPVM_KERNEL:-stock}" \
			BSPVM_AF_BSP_KO="${BSPVM_AF_BSP_KO:-$BSPVM_REPO/kernel/af_bsp.ko}" \
			BSPVM_CASE="$name" BSPVM_SCRATCH="$scratch" \
			BSPVM_RUNDIR="$RUNDIR" \
			BSPVM_VERBOSE="$BSPVM_VERBOSE" TMPDIR="$scratch" \
			timeout -k 10 "$ct" bash "$path"
	) </dev/null >"$RUNDIR/$name.log" 2>&1 &
	cpid=$!
	# Live output. The case writes to a file, not a pipe: a process stuck
	# in the kernel cannot keep the runner waiting for end of file.
	tail -s 0.2 -n +1 -f --pid="$cpid" "$RUNDIR/$name.log" |
		sed -u "s/^/[$name] /" &
	tpid=$!
	# Watchdog: timeout(1) cannot end a case stuck in the kernel (D state).
	# Without processes of its own (read -t on a FIFO) so it can be killed.
	stuck=0
	(
		read -r -t "$((ct + 30))" _ <>"$WATCHDOG_FIFO"
		kill -USR1 $$
	) &
	wpid=$!
	wait "$cpid"
	rc=$?
	if [ "$stuck" = 1 ]; then
		rc=124
		kill "$tpid" 2>/dev/null
	else
		kill "$wpid" 2>/dev/null
		wait "$tpid" 2>/dev/null
	fi
	wait "$wpid" 2>/dev/null
	secs=$(($(date +%s) - start))
	kmsg "case $name end rc=$rc"

	case "$rc" in
	0) st=PASS why= ;;
	77) st=SKIP why= ;;
	124 | 137) st=FAIL why="timed out after ${ct}s" ;;
	*) st=FAIL why="exit status $rc" ;;
	esac
	left=
	if [ "$stuck" = 0 ]; then
		leftover_processes "$(cat "$pgidfile" 2>/dev/null)"
		[ -z "$STUCK_PROCS" ] || stuck=1
	fi
	if [ "$stuck" = 1 ]; then
		# The kernel is wedged: checking or cleaning up could hang too.
		st=FAIL
		why="${why:+$why; }processes could not be killed (stuck in the kernel?)${STUCK_PROCS:+: $STUCK_PROCS}; run stopped"
		stop=1
	else
		left=$(leftovers)
		if [ -n "$LEFT_PROCS" ]; then
			left="${left:+$left }processes: $LEFT_PROCS"
		fi
	fi
	rm -f "$pgidfile"
	# After the leftovers are removed (modules unloaded): leaks show.
	[ "$stuck" = 1 ] || kmemleak_scan
	dmesg | tail -n +"$((before + 1))" >"$RUNDIR/$name.dmesg"
	if [ -n "$left" ]; then
		st=FAIL
		why="${why:+$why; }left behind: $left"
	fi
	splat=$(bspvm_splat_grep "$RUNDIR/$name.dmesg")
	if [ -n "$splat" ]; then
		st=FAIL
		why="${why:+$why; }kernel splat"
		echo "[$name] kernel log splat while the case ran (all of it: $RUNDIR/$name.dmesg):"
		printf '%s\n' "$splat" | sed "s/^/[$name]     /"
	fi
	if [ "$BSPVM_VERBOSE" = 1 ] && [ -s "$RUNDIR/$name.dmesg" ]; then
		echo "[$name] kernel log while the case ran:"
		sed "s/^/[$name] dmesg| /" "$RUNDIR/$name.dmesg"
	fi
	echo "--- $st $name (${secs}s)${why:+: $why}"
	record "$name" "$st" "$secs" "$why"
	if [ "$st" = FAIL ] && [ "$BSPVM_KEEP_GOING" != 1 ]; then
		stop=1
	fi
	rm -rf "$scratch"
done 3<"$RUNDIR/cases"
rm -f "$RUNDIR/current"

dmesg >"$RUNDIR/dmesg.txt"
sync
echo "done" >"$RUNDIR/status"
echo "bspvm: guest runner finished"
