#!/bin/sh
# Libbsp.ExportsOnlyTheCApi: the dynamic symbols libbsp.so defines are exactly the list
# in libbsp_exports.txt (name@@version): the int API of BSPlib in BSPLIB_1.0, its
# BSP_WIDE_TYPES entry points (*_wide) in BSPLIB_1.1, and nothing else.
# Usage: exports_check.sh LIBBSP.so EXPECTED_LIST
set -eu
lib=$1
expected=$2
actual=$(nm -D --defined-only "$lib" | awk '{print $3}' | LC_ALL=C sort)
want=$(LC_ALL=C sort "$expected")
if [ "$actual" != "$want" ]; then
	echo "libbsp.so exports differ from $expected (< expected, > exported):"
	tmp=$(mktemp)
	printf '%s\n' "$want" >"$tmp"
	printf '%s\n' "$actual" | diff "$tmp" - || true
	rm -f "$tmp"
	exit 1
fi
echo "$(printf '%s\n' "$actual" | grep -c '@@BSPLIB_1.0$') symbols in BSPLIB_1.0," \
	"$(printf '%s\n' "$actual" | grep -c '@@BSPLIB_1.1$') in BSPLIB_1.1, nothing else"
