#!/usr/bin/env bash
# A real Slurm on this host (Debian's slurm-wlm and munge): starts munged, slurmctld
# and slurmd for one node with a configuration of their own in a temporary directory,
# then runs a BSPlib program over UDP
#   1. with `srun -n 4` (no launcher of ours: libbsp joins the step through Slurm's PMI2),
#   2. with `sbatch -n 4` whose batch script runs `bsprun -n 4` inside the allocation,
# checks the results exactly, and shuts everything down (every daemon, every slurmstepd
# it started), also when something fails. Every wait is bounded.
# Skips with a reason (exit 0, "SKIP: ...") when not root or when the daemons cannot
# start here. Prints "slurm: N passed, N failed".
# Usage: tests/install/slurm_test.sh   (needs `make all`; Documentation/testing.rst)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BSP_BUILD:-$top/build/default}
prog=$build/examples/inprod
bsprun=$build/tools/bsprun/bsprun
pass=0
fail=0

ok() {
	echo "ok: $*"
	pass=$((pass + 1))
}
bad() {
	echo "FAIL: $*"
	fail=$((fail + 1))
}
skip() {
	echo "SKIP: slurm: $*"
	echo "slurm: 0 passed, 0 failed (skipped)"
	exit 0
}

[ "$(id -u)" = 0 ] || skip "not root (slurmd must run as root to start job steps as their user)"
for t in munged slurmctld slurmd srun sbatch scontrol sinfo; do
	command -v "$t" >/dev/null || skip "$t is not installed (make deps installs slurm-wlm and munge)"
done
[[ -x $prog && -x $bsprun ]] || { bad "$prog or $bsprun missing (run make all)"; exit 1; }

# munged requires every directory above its socket to be searchable by all.
dir=$(mktemp -d "${TMPDIR:-/tmp}/bsp-slurm.XXXXXX")
chmod 755 "$dir"
mkdir -p "$dir/state" "$dir/spool" "$dir/run"
daemon_pids=()
stepd_before=$(pgrep -x slurmstepd | sort)

stop_pid() { # pid name: TERM, then KILL after 10 s
	local pid=$1 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "slurm_test: $2 (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

cleanup() {
	local p
	if [ -f "$dir/slurm.conf" ] && [ ${#daemon_pids[@]} -gt 1 ]; then
		SLURM_CONF=$dir/slurm.conf timeout 10 scancel --quiet --user=root >/dev/null 2>&1
	fi
	# Daemons in reverse order of start: slurmd, slurmctld, munged.
	for ((i = ${#daemon_pids[@]} - 1; i >= 0; i--)); do
		stop_pid "${daemon_pids[$i]%:*}" "${daemon_pids[$i]#*:}"
	done
	# slurmstepd processes that appeared during the test (the steps of our jobs).
	for p in $(comm -13 <(echo "$stepd_before") <(pgrep -x slurmstepd | sort)); do
		stop_pid "$p" slurmstepd
	done
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Two free TCP ports for slurmctld and slurmd, and a range for the steps' reserved ports.
free_port() {
	local p
	for p in $(shuf -i 20000-29999 -n 50); do
		ss -Htan "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}
if ! { ctld_port=$(free_port) && slurmd_port=$(free_port); }; then
	skip "no free TCP port in 20000-29999"
fi
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))
host=$(hostname -s)

# ---- munge -------------------------------------------------------------------------------
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$dir/munge.key"
munged --foreground --socket="$dir/run/munge.socket" --key-file="$dir/munge.key" \
	--pid-file="$dir/run/munged.pid" --log-file="$dir/munged.log" \
	--seed-file="$dir/munged.seed" >"$dir/munged.out" 2>&1 &
daemon_pids+=("$!:munged")
for i in $(seq 50); do [ -S "$dir/run/munge.socket" ] && break; sleep 0.1; done
if ! munge -S "$dir/run/munge.socket" -n 2>/dev/null | unmunge -S "$dir/run/munge.socket" >/dev/null 2>&1; then
	skip "munged cannot start here: $(tail -n 2 "$dir/munged.out" | tr '\n' ' ')"
fi

# ---- slurm.conf: one node, 4 CPUs whatever the host has (config_overrides) ------------------
cat >"$dir/slurm.conf" <<EOF
ClusterName=bsptest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/run/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=pmi2
MpiParams=ports=$((ctld_port + 2))-$((ctld_port + 41))
InactiveLimit=0
KillWait=5
NodeName=bspnode0 NodeHostname=$host NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=bsp Nodes=bspnode0 Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF=$dir/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
daemon_pids+=("$!:slurmctld")
slurmd -D -N bspnode0 -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
daemon_pids+=("$!:slurmd")
state=
for i in $(seq 150); do
	state=$(timeout 5 sinfo -h -n bspnode0 -o %t 2>/dev/null)
	[ "$state" = idle ] && break
	for p in "${daemon_pids[@]}"; do
		kill -0 "${p%:*}" 2>/dev/null || skip "${p#*:} cannot run here: $(tail -n 3 "$dir/${p#*:}.log" "$dir/${p#*:}.out" 2>/dev/null | grep -v '^==\|^$' | tail -n 3 | tr '\n' ' ')"
	done
	sleep 0.2
done
[ "$state" = idle ] || skip "node bspnode0 did not become idle within 30 s (state '$state'): $(tail -n 3 "$dir/slurmctld.log" | tr '\n' ' ')"
echo "slurm: slurmctld on port $ctld_port, slurmd on port $slurmd_port, node bspnode0 idle"

n=100000
expect=$(awk -v n=$n 'BEGIN { s = 0; for (i = 0; i < n; i++) s += (i % 7 + 1) * (i % 5 + 1); printf "%.0f", s }')
want_out="inner product of n=$n on 4 processes: $expect (correct)"
want_err_re='^bsp: nprocs=4 transport=udp '

# ---- 1. srun -n 4 ----------------------------------------------------------------------------
cd "$dir" || exit 1
rc=0
timeout 120 srun -n 4 --mpi=pmi2 --time=2 --export=ALL,BSP_TRANSPORT=udp,BSP_VERBOSE=1 \
	"$prog" $n >"$dir/srun.out" 2>"$dir/srun.err" || rc=$?
echo "---- srun -n 4 --mpi=pmi2 $prog $n (BSP_TRANSPORT=udp BSP_VERBOSE=1)"
sed 's/^/    /' "$dir/srun.out" "$dir/srun.err"
if [ $rc -eq 0 ] && [ "$(cat "$dir/srun.out")" = "$want_out" ] &&
	[ "$(wc -l <"$dir/srun.err")" -eq 1 ] && grep -qE "$want_err_re" "$dir/srun.err"; then
	ok "srun -n 4: '$want_out' over UDP"
else
	bad "srun -n 4 (status $rc)"
fi

# A step of 4 tasks without PMI2 fails in every task with the documented message.
rc=0
timeout 60 srun -n 4 --mpi=none --time=1 "$prog" $n >"$dir/nopmi.out" 2>"$dir/nopmi.err" || rc=$?
nmsg=$(grep -c "without Slurm's PMI2: PMI_FD is not set" "$dir/nopmi.err")
if [ $rc -ne 0 ] && [ "$nmsg" -eq 4 ] && [ ! -s "$dir/nopmi.out" ]; then
	ok "srun -n 4 --mpi=none: every task refuses ($nmsg x \"... without Slurm's PMI2: PMI_FD is not set ...\")"
else
	bad "srun --mpi=none (status $rc, $nmsg messages): $(head -n 3 "$dir/nopmi.err")"
fi

# ---- 2. sbatch + bsprun inside the allocation -------------------------------------------------
cat >"$dir/job.sh" <<EOF
#!/bin/sh
# The allocation's node runs the 4 processes; bsprun is the launcher, not srun.
echo "job \$SLURM_JOB_ID on \$SLURM_JOB_NODELIST with \$SLURM_NTASKS tasks"
exec env BSP_TRANSPORT=udp "$bsprun" -v -n \$SLURM_NTASKS "$prog" $n
EOF
rc=0
timeout 120 sbatch --wait -n 4 --time=2 -o "$dir/job.out" -e "$dir/job.err" "$dir/job.sh" \
	>"$dir/sbatch.out" 2>&1 || rc=$?
echo "---- sbatch --wait -n 4 job.sh (bsprun -v -n 4 $prog $n)"
sed 's/^/    /' "$dir/sbatch.out" "$dir/job.out" "$dir/job.err" 2>/dev/null
if [ $rc -eq 0 ] && [ "$(sed -n 2p "$dir/job.out")" = "$want_out" ] &&
	[ "$(wc -l <"$dir/job.out")" -eq 2 ] &&
	grep -qE '^job [0-9]+ on bspnode0 with 4 tasks$' "$dir/job.out" &&
	grep -qE "$want_err_re" "$dir/job.err" &&
	grep -qx 'bsprun: job ended with exit status 0' "$dir/job.err"; then
	ok "sbatch -n 4 + bsprun -n 4: '$want_out' over UDP"
else
	bad "sbatch + bsprun (status $rc)"
fi

# ---- shut down ------------------------------------------------------------------------------
timeout 10 scontrol shutdown >/dev/null 2>&1
for p in "${daemon_pids[@]:1}"; do
	for i in $(seq 100); do kill -0 "${p%:*}" 2>/dev/null || break; sleep 0.1; done
done
left=()
for p in "${daemon_pids[@]:1}"; do kill -0 "${p%:*}" 2>/dev/null && left+=("${p#*:}"); done
if [ ${#left[@]} -eq 0 ]; then ok "scontrol shutdown stopped slurmctld and slurmd"; else bad "still running after scontrol shutdown: ${left[*]}"; fi
if [ $fail -ne 0 ]; then
	echo "---- slurmctld.log (last lines)"; tail -n 15 "$dir/slurmctld.log"
	echo "---- slurmd.log (last lines)"; tail -n 15 "$dir/slurmd.log"
fi
echo "slurm: $pass passed, $fail failed"
[ $fail -eq 0 ]
