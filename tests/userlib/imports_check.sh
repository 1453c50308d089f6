#!/bin/sh
# Libbsp.IntAndWideProgramsShareOneLibrary: a program built with the int API of bsp.h
# and one built with -DBSP_WIDE_TYPES need the same libbsp.so; the int program refers
# only to BSPLIB_1.0 symbols (the int ABI as it always was), the wide one to the *_wide
# symbols of BSPLIB_1.1 for every function with sizes and to BSPLIB_1.0 for the others.
# Usage: imports_check.sh LIBBSP.so EXPORTS_LIST INT_PROGRAM WIDE_PROGRAM
set -eu
lib=$1
exports=$2
intprog=$3
wideprog=$4
fail() {
	echo "FAIL: $*"
	exit 1
}
imports() { nm -D --undefined-only "$1" | awk '{print $2}' | grep '^bsp_' | LC_ALL=C sort; }

# Both resolve libbsp to the library under test.
want=$(readlink -f "$lib")
for prog in "$intprog" "$wideprog"; do
	got=$(ldd "$prog" | awk '$1 ~ /^libbsp\.so/ {print $3}')
	[ -n "$got" ] || fail "$prog does not need libbsp.so"
	[ "$(readlink -f "$got")" = "$want" ] || fail "$prog uses $got, not $want"
done

# The functions with sizes: the BSPLIB_1.1 names without _wide.
sized=$(sed -n 's/_wide@@BSPLIB_1\.1$//p' "$exports")
[ "$(printf '%s\n' "$sized" | wc -l)" -eq 14 ] || fail "expected 14 wide functions in $exports"

# The int program (it calls every function with sizes too): BSPLIB_1.0 only, every
# sized call under its 1998 name.
int_imports=$(imports "$intprog")
bad=$(printf '%s\n' "$int_imports" | grep -v '@BSPLIB_1\.0$' || true)
[ -z "$bad" ] || fail "int program refers to symbols outside BSPLIB_1.0: $bad"
for f in $sized; do
	printf '%s\n' "$int_imports" | grep -qx "$f@BSPLIB_1.0" || fail "int program lacks $f@BSPLIB_1.0"
done

# The wide program (it calls every function with sizes): each sized one as *_wide in
# BSPLIB_1.1, never under its int name; the functions without sizes in BSPLIB_1.0.
wide_imports=$(imports "$wideprog")
for f in $sized; do
	printf '%s\n' "$wide_imports" | grep -qx "${f}_wide@BSPLIB_1.1" ||
		fail "wide program lacks ${f}_wide@BSPLIB_1.1"
	! printf '%s\n' "$wide_imports" | grep -q "^$f@" || fail "wide program refers to int $f"
done
bad=$(printf '%s\n' "$wide_imports" | grep -v '_wide@BSPLIB_1\.1$' | grep -v '@BSPLIB_1\.0$' || true)
[ -z "$bad" ] || fail "wide program refers to unversioned or unknown symbols: $bad"
shared=$(printf '%s\n' "$wide_imports" | grep '@BSPLIB_1\.0$' | sed 's/@.*//' | tr '\n' ' ')
echo "int program: $(printf '%s\n' "$int_imports" | wc -l) BSPLIB_1.0 symbols (14 with sizes);" \
	"wide program: 14 BSPLIB_1.1 symbols and $shared(BSPLIB_1.0); one libbsp: $want"
