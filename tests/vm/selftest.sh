#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of the VM harness (host side). Builds the deliberately broken
# module tests/vm/selftest/splat/ into build/vm/selftest-splat/, then boots
# the VM a few times with the cases of tests/vm/selftest/cases/ and checks
# that tests/vm/run-vm
#   - fails a case during which the kernel logged a WARNING, a refcount_t
#     report or a SLUB red zone report, and prints the offending lines;
#   - still passes a clean case run after those splats (attribution);
#   - fails a case by exit status, by per-case timeout, by leaving a
#     namespace or a process behind; reports an exit-77 case as skipped;
#   - fails a case stuck in the kernel that its timeout cannot kill, and
#     stops the run there;
#   - stops after the first failure unless --keep-going;
#   - fails the whole run when --timeout expires (QEMU killed);
#   - exits 0 on a clean run.
# With --kernel debug it checks instead, on the debug kernel (make
# debug-kernel), that each of its checkers fails the case during which it
# reported: KASAN, KFENCE, kmemleak (the runner's scan after the case),
# lockdep (circular dependency; inconsistent lock state, in a second boot
# since lockdep stops after one report), DEBUG_ATOMIC_SLEEP, debug objects;
# and that a clean case after those still passes.
# Prints one "ok"/"not ok" line per check and ends with "N passed, N failed".

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HERE/../.." && pwd -P)
RUNVM=$HERE/run-vm
CASES=$HERE/selftest/cases
OUTDIR=$REPO/build/vm/selftest
export PATH=$PATH:/usr/sbin:/sbin

passed=0
failed=0

ok()
{
	echo "ok - $*"
	passed=$((passed + 1))
}

not_ok()
{
	echo "not ok - $*"
	failed=$((failed + 1))
}

# check DESCRIPTION FILE ERE: the output FILE has a line matching ERE.
check()
{
	if grep -q -E -- "$3" "$2"; then
		ok "$1"
	else
		not_ok "$1 (no line matching /$3/ in $2)"
	fi
}

# check_rc DESCRIPTION ACTUAL zero|nonzero
check_rc()
{
	if { [ "$3" = zero ] && [ "$2" = 0 ]; } || { [ "$3" = nonzero ] && [ "$2" != 0 ]; }; then
		ok "$1"
	else
		not_ok "$1 (exit status $2, expected $3)"
	fi
}

# ------------------------------------------------ debug kernel
if [ "${1:-}" = --kernel ] && [ "${2:-}" = debug ]; then
	DCASES=$HERE/selftest/cases-debug
	OUTDIR=$REPO/build/vm/selftest-debug
	mkdir -p "$OUTDIR"
	rm -rf "$REPO/build/vm/selftest-splat-debug"
	"$HERE/debug-kernel" --build-module "$HERE/selftest/splat" \
		"$REPO/build/vm/selftest-splat-debug" >"$OUTDIR/build.log" 2>&1 || {
		cat "$OUTDIR/build.log"
		echo "selftest: building the splat module for the debug kernel failed" >&2
		exit 2
	}
	out=$OUTDIR/run1.out
	# Lockdep first: it switches itself off after its first report, and
	# KASAN's report switches it off too (the taint it adds makes lockdep
	# unreliable), so the circular case must precede the KASAN case.
	echo "selftest: debug run 1 (lockdep, KASAN, KFENCE, kmemleak, atomic sleep, debug objects)"
	"$RUNVM" --kernel debug --keep-going --case-timeout 60 \
		"$DCASES/splat_lockdep.sh" "$DCASES/splat_kasan.sh" "$CASES/pass.sh" \
		"$DCASES/splat_kfence.sh" "$DCASES/splat_kmemleak.sh" \
		"$DCASES/splat_sleep.sh" "$DCASES/splat_odebug.sh" >"$out" 2>&1
	check_rc "debug run with splats exits non-zero" $? nonzero
	check "KASAN case fails" "$out" '^FAIL splat_kasan \(.*kernel splat'
	check "KASAN report printed" "$out" 'BUG: KASAN: (slab-)?use-after-free in bspvm_splat_kasan'
	check "clean case after KASAN passes" "$out" '^PASS pass \('
	check "KFENCE case fails" "$out" '^FAIL splat_kfence \(.*kernel splat'
	check "KFENCE report printed" "$out" 'BUG: KFENCE: use-after-free read in bspvm_splat_kfence'
	check "kmemleak case fails" "$out" '^FAIL splat_kmemleak \(.*kernel splat'
	check "kmemleak report printed" "$out" '\[splat_kmemleak\] .*unreferenced object 0x'
	check "atomic sleep case fails" "$out" '^FAIL splat_sleep \(.*kernel splat'
	check "atomic sleep report printed" "$out" 'BUG: sleeping function called from invalid context'
	check "debug objects case fails" "$out" '^FAIL splat_odebug \(.*kernel splat'
	check "debug objects report printed" "$out" 'ODEBUG: free active .*timer_list'
	check "lockdep (circular) case fails" "$out" '^FAIL splat_lockdep \(.*kernel splat'
	check "lockdep (circular) report printed" "$out" 'possible circular locking dependency detected'
	check "debug run 1 summary" "$out" '^1 passed, 6 failed$'
	out=$OUTDIR/run2.out
	echo "selftest: debug run 2 (lockdep: inconsistent lock state)"
	"$RUNVM" --kernel debug --case-timeout 60 "$DCASES/splat_softirq.sh" >"$out" 2>&1
	check_rc "debug run 2 exits non-zero" $? nonzero
	check "lockdep (inconsistent) case fails" "$out" '^FAIL splat_softirq \(.*kernel splat'
	check "lockdep (inconsistent) report printed" "$out" 'inconsistent lock state'
	out=$OUTDIR/run3.out
	echo "selftest: debug run 3 (clean run)"
	"$RUNVM" --kernel debug "$CASES/pass.sh" >"$out" 2>&1
	check_rc "clean debug run exits 0" $? zero
	check "clean debug run summary" "$out" '^1 passed, 0 failed$'
	echo "selftest: outputs in $OUTDIR"
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
fi

# The checks below name the exact time limits of the stock kernel.
unset BSPVM_TIMEOUT_SCALE

# ------------------------------------------------ build the broken module
KVER=
for d in /lib/modules/*/; do
	v=$(basename "$d")
	[ -r "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v/build" ] && KVER=$v
done
if [ -z "$KVER" ]; then
	echo "selftest: no kernel with /boot/vmlinuz-<ver> and /lib/modules/<ver>/build" >&2
	exit 2
fi
SPLAT=$REPO/build/vm/selftest-splat
rm -rf "$SPLAT"
mkdir -p "$SPLAT" "$OUTDIR"
cp "$HERE/selftest/splat/Kbuild" "$HERE/selftest/splat/bspvm_splat.c" "$SPLAT/"
if ! make -s -C "/lib/modules/$KVER/build" M="$SPLAT" modules >"$OUTDIR/build.log" 2>&1 ||
	[ ! -f "$SPLAT/bspvm_splat.ko" ]; then
	cat "$OUTDIR/build.log"
	echo "selftest: building the splat module failed" >&2
	exit 2
fi
echo "selftest: built $SPLAT/bspvm_splat.ko for $KVER"

# ------------------------------------------------ run 1: every outcome
out=$OUTDIR/run1.out
echo "selftest: run 1 (splats, failures, timeouts, leftovers, skip; --keep-going)"
"$RUNVM" --keep-going --case-timeout 20 \
	"$CASES/splat_warn.sh" "$CASES/pass.sh" "$CASES/splat_refcount.sh" \
	"$CASES/skip.sh" "$CASES/splat_redzone.sh" "$CASES/fail.sh" \
	"$CASES/hang.sh" "$CASES/slow.sh" "$CASES/leak.sh" "$CASES/stuck.sh" \
	"$CASES/after_stuck.sh" >"$out" 2>&1
rc=$?
check_rc "run with failing cases exits non-zero" $rc nonzero
check "WARN_ON case fails" "$out" '^FAIL splat_warn \(.*kernel splat'
check "WARNING line printed" "$out" 'WARNING: CPU: [0-9]+ PID: [0-9]+ at .*bspvm_splat'
check "refcount case fails" "$out" '^FAIL splat_refcount \(.*kernel splat'
check "refcount_t line printed" "$out" 'refcount_t: decrement hit 0'
check "SLUB red zone case fails" "$out" '^FAIL splat_redzone \(.*kernel splat'
check "Redzone line printed" "$out" 'Redzone overwritten'
check "clean case after a splat passes" "$out" '^PASS pass \('
check "exit 77 is a skip" "$out" '^SKIP skip \('
check "exit 3 is a failure" "$out" '^FAIL fail \(.*exit status 3'
check "case timeout is a failure" "$out" '^FAIL hang \(.*timed out after 20s'
check "a case's own time limit applies" "$out" '^FAIL slow \(.*timed out after 12s'
check "left-behind namespace is a failure" "$out" '^FAIL leak \(.*left behind: netns n0'
check "left-behind process is a failure" "$out" '^FAIL leak \(.*processes: [0-9]+ sleep 100000'
check "unkillable case fails" "$out" '^FAIL stuck \(.*could not be killed'
check "run stops after an unkillable case, even with --keep-going" "$out" '^not run: after_stuck$'
check "summary counts" "$out" '^1 passed, 8 failed, 1 skipped$'
last=$(tail -n 1 "$out")
if [ "$last" = "1 passed, 8 failed, 1 skipped" ]; then
	ok "summary is the last line"
else
	not_ok "summary is the last line (last line: '$last')"
fi

# ------------------------------------------------ run 2: stop at first failure
out=$OUTDIR/run2.out
echo "selftest: run 2 (stop after the first failure)"
"$RUNVM" "$CASES/fail.sh" "$CASES/pass.sh" >"$out" 2>&1
rc=$?
check_rc "failing run exits non-zero" $rc nonzero
check "first failure reported" "$out" '^FAIL fail \('
check "later cases not run" "$out" '^not run: pass$'
check "summary without --keep-going" "$out" '^0 passed, 1 failed$'

# ------------------------------------------------ run 3: whole-run timeout
out=$OUTDIR/run3.out
echo "selftest: run 3 (whole-run timeout)"
"$RUNVM" --timeout 90 --case-timeout 600 "$CASES/hang.sh" >"$out" 2>&1
rc=$?
check_rc "timed-out run exits non-zero" $rc nonzero
check "run timeout reported" "$out" '^FAIL run timed out after 90s'
check "timed-out run counts a failure" "$out" '^0 passed, 1 failed$'
rundir=$(sed -n 's/^run-vm: results in //p' "$out")
if [ -z "$rundir" ]; then
	not_ok "run directory reported"
elif pgrep -f -- "path=$rundir," >/dev/null; then
	not_ok "QEMU killed after the run timeout (still running: $(pgrep -a -f -- "path=$rundir,"))"
else
	ok "QEMU killed after the run timeout"
fi

# ------------------------------------------------ run 4: a clean run passes
out=$OUTDIR/run4.out
echo "selftest: run 4 (clean run)"
# with a host helper: it shares the run directory and dies with the run
BSPVM_HOST_HELPER='touch "$BSPVM_RUNDIR/helper.ready"; exec sleep 4242' \
	"$RUNVM" "$CASES/pass.sh" "$CASES/skip.sh" "$CASES/host_helper.sh" >"$out" 2>&1
rc=$?
check_rc "clean run exits 0" $rc zero
check "clean run summary" "$out" '^2 passed, 0 failed, 1 skipped$'
rundir=$(sed -n 's/^run-vm: results in //p' "$out")
if [ -n "$rundir" ] && [ "$(cat "$rundir/helper.seen" 2>/dev/null)" = from-guest ]; then
	ok "host helper and guest share the run directory"
else
	not_ok "host helper and guest share the run directory"
fi
if pgrep -x -f "sleep 4242" >/dev/null; then
	not_ok "host helper killed at the end of the run"
else
	ok "host helper killed at the end of the run"
fi

echo "selftest: outputs in $OUTDIR"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
