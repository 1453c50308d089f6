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

for prog in prog_c prog_cxx; do
	out=$(timeout 60 "$bsprun" -n 3 "$work/$prog" | sort)
	want=$(printf 'hello from 0 of 3\nhello from 1 of 3\nhello from 2 of 3')
	[ "$out" = "$want" ] || fail "$prog printed: $out"
done

status=0
timeout 60 "$bsprun" -n 3 "$work/prog_c" abort >"$work/out" 2>"$work/err" || status=$?
[ "$status" -eq 1 ] || fail "bsp_abort job ended with status $status, not 1"
[ "$(cat "$work/err")" = "bspcc test: process 1 aborts" ] ||
	fail "bsp_abort job printed on stderr: $(cat "$work/err")"
echo "bspcc/bspc++ programs built and ran"
