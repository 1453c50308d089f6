# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the self-test cases splat_*.sh and pass.sh: load build/vm/selftest-splat/
# bspvm_splat.ko with kind=$1, unload it, and exit 0. The case itself passes;
# only the kernel log check of the harness can (and must) fail it.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
ko=$BSPVM_REPO/build/vm/selftest-splat/bspvm_splat.ko
# The debug kernel's build (tests/vm/selftest.sh --kernel debug).
[ "${BSPVM_KERNEL:-stock}" = debug ] &&
	ko=$BSPVM_REPO/build/vm/selftest-splat-debug/bspvm_splat.ko
[ -f "$ko" ] || fail "$ko not built (tests/vm/selftest.sh builds it)"
insmod "$ko" kind="$1" || fail "insmod bspvm_splat kind=$1 failed"
rmmod bspvm_splat || fail "rmmod bspvm_splat failed"
log "loaded and unloaded bspvm_splat kind=$1"
exit 0
