#!/bin/sh
# Builds a BSPlib C program with bspcc and a C++ one with bspc++, as a user would, and
# runs them with bsprun. Usage: bspcc_test.sh BSPCC BSPCXX BSPRUN SOURCE_DIR
set -eu
bspcc=$1 bspcxx=$2 bsprun=$3 src=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/bspcc-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bspcc" "$src/bspcc_program.c" -o "$work/prog_c" || fail "bspcc could not build a C program"
cp "$src/bspcc_program.c" "$work/prog.cpp"
"$bspcxx" -c "$work/prog.cpp" -o "$work/prog.o" || fail "bspc++ -c failed"
"$bspcxx" "$work/prog.o" -o "$work/prog_cxx" || fail "bspc++ could not link"

want=$(printf 'hello from 0 of 3\nhello from 1 of 3\nhello from 2 of 3')
# run NAME STATUS ERR COMMAND...: the job's exit status, standard error and sorted output
# (the hello lines when STATUS is 0). Under a sanitizer a report changes the status or
# standard error, so it fails here.
run() {
	name=$1 want_status=$2 want_err=$3
	shift 3
	status=0
	timeout 60 "$@" >"$work/out" 2>"$work/err" </dev/null || status=$?
	[ "$status" -eq "$want_status" ] ||
		fail "$name ended with status $status, not $want_status; stderr: $(cat "$work/err")"
	[ "$(cat "$work/err")" = "$want_err" ] || fail "$name printed on stderr: $(cat "$work/err")"
	if [ "$want_status" -eq 0 ]; then
		[ "$(sort "$work/out")" = "$want" ] || fail "$name printed: $(cat "$work/out")"
	fi
}

for prog in prog_c prog_cxx; do
	run "bsprun $prog" 0 "" "$bsprun" -n 3 "$work/$prog"
done
run "bsprun bsp_abort" 1 "bspcc test: process 1 aborts" "$bsprun" -n 3 "$work/prog_c" abort
# Started directly: bsp_begin forks the processes itself (spawn_local).
run "spawn_local" 0 "" env BSP_NPROCS=3 "$work/prog_c"
run "spawn_local bsp_abort" 1 "bspcc test: process 1 aborts" env BSP_NPROCS=3 "$work/prog_c" abort
echo "bspcc/bspc++ programs built and ran (bsprun and started directly)"
