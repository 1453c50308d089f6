# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for VM test cases (tests/vm/cases/*.sh), sourced by bash:
#
#   . "$BSPVM_REPO/tests/vm/lib/assert.sh"
#
# A case exits 0 to pass, 77 to be skipped, anything else to fail. These
# helpers print a clear message and exit 1 (fail) or 77 (skip).

# Strict mode for cases, not for an interactive shell (run-vm --shell).
[[ $- == *i* ]] || set -u -o pipefail

: "${BSPVM_REPO:?assert.sh is meant for cases run by tests/vm/run-vm}"

# ---------------------------------------------------------------- outcomes

# The case's own shell. fail and skip also work in subshells ($(...),
# pipelines, background jobs): they signal this shell, which then exits with
# the same outcome (running the on_exit cleanups).
BSPVM_CASE_PID=$$
trap 'exit 1' USR2
trap 'exit 77' USR1

# In an interactive shell (run-vm --shell) the helpers return instead of
# exiting, which would end the shell and power the VM off.
_bspvm_end()
{
	[[ $- == *i* ]] && return "$1"
	if [ "$BASHPID" != "$BSPVM_CASE_PID" ]; then
		if [ "$1" = 77 ]; then
			kill -USR1 "$BSPVM_CASE_PID" 2>/dev/null
		else
			kill -USR2 "$BSPVM_CASE_PID" 2>/dev/null
		fi
	fi
	exit "$1"
}

# fail MESSAGE...: report a failure (with the calling line) and exit 1.
fail()
{
	echo "FAIL: $* (${BASH_SOURCE[1]##*/}:${BASH_LINENO[0]})" >&2
	_bspvm_end 1
}

# skip MESSAGE...: report why the case cannot run here and exit 77.
skip()
{
	echo "SKIP: $*" >&2
	_bspvm_end 77
}

BSPVM_T0=$EPOCHREALTIME

# log MESSAGE...: a progress line in the case output, with the seconds since
# the case started.
log()
{
	local us=$((${EPOCHREALTIME/./} - ${BSPVM_T0/./}))

	printf '# %d.%01ds %s\n' $((us / 1000000)) $((us % 1000000 / 100000)) "$*"
}

# ---------------------------------------------------------------- checks

# expect_eq ACTUAL EXPECTED WHAT: fail unless the two strings are equal.
expect_eq()
{
	[ "$1" = "$2" ] ||
		fail "${3:-value}: expected '$2', got '$1'"
}

# expect_ne ACTUAL UNEXPECTED WHAT: fail if the two strings are equal.
expect_ne()
{
	[ "$1" != "$2" ] ||
		fail "${3:-value}: expected anything but '$2'"
}

# expect_ok CMD...: run CMD, fail (showing its output) unless it exits 0.
expect_ok()
{
	local out rc

	out=$("$@" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || fail "'$*' exited $rc: $out"
	[ -z "$out" ] || printf '%s\n' "$out"
}

# expect_fail CMD...: run CMD, fail if it exits 0.
expect_fail()
{
	local out rc

	out=$("$@" 2>&1)
	rc=$?
	[ $rc -ne 0 ] || fail "'$*' succeeded but was expected to fail: $out"
}

# need_cmd NAME...: fail if a command the case needs is not installed (it is
# a missing dependency of `make deps`, not a reason to skip).
need_cmd()
{
	local c

	for c in "$@"; do
		command -v "$c" >/dev/null ||
			fail "command '$c' not installed (run 'make deps')"
	done
}

# ---------------------------------------------------------------- cleanup

# Commands run at exit of the case, last registered first.
BSPVM_CLEANUPS=()

_bspvm_run_cleanups()
{
	local i rc=$?

	for ((i = ${#BSPVM_CLEANUPS[@]} - 1; i >= 0; i--)); do
		eval "${BSPVM_CLEANUPS[$i]}" || true
	done
	BSPVM_CLEANUPS=()
	return $rc
}
trap _bspvm_run_cleanups EXIT

# on_exit COMMAND: run COMMAND (a shell string) when the case exits.
on_exit()
{
	BSPVM_CLEANUPS+=("$1")
}

# ---------------------------------------------------------------- modules

# The module built for the kernel the guest runs (run-vm --kernel debug: the
# build in build/kernel-debug/ of make kernel-debug).
AF_BSP_KO=${BSPVM_AF_BSP_KO:-$BSPVM_REPO/kernel/af_bsp.ko}

# klog_has TEXT: true if the kernel log holds TEXT (a fixed string). Never
# "dmesg | grep -q": under pipefail, grep -q leaving at the first match
# kills dmesg with SIGPIPE once the log is longer than a pipe holds, and the
# pipeline fails although the text is there (kernel_stall in CI, late in
# the suite); "&& fail" checks then pass when they should fail.
klog_has()
{
	dmesg | grep -F -- "$1" >/dev/null
}

# module_loaded NAME: true if NAME is in /proc/modules.
module_loaded()
{
	grep -q "^$1 " /proc/modules
}

# af_bsp_load [PARAM=VALUE...]: insmod kernel/af_bsp.ko (built on the host
# by `make -C kernel`) and check it is listed; unloaded at case exit.
af_bsp_load()
{
	local out

	[ -f "$AF_BSP_KO" ] ||
		fail "$AF_BSP_KO not built (run 'make -C kernel' on the host)"
	module_loaded af_bsp && fail "af_bsp is already loaded"
	out=$(insmod "$AF_BSP_KO" "$@" 2>&1) || fail "insmod af_bsp.ko failed: $out"
	module_loaded af_bsp || fail "af_bsp not in /proc/modules after insmod"
	on_exit "af_bsp_unload_if_loaded"
}

# af_bsp_unload: rmmod af_bsp and check it is gone.
af_bsp_unload()
{
	local out

	out=$(rmmod af_bsp 2>&1) || fail "rmmod af_bsp failed: $out"
	! module_loaded af_bsp || fail "af_bsp still in /proc/modules after rmmod"
	[ ! -e /sys/module/af_bsp ] || fail "/sys/module/af_bsp still exists after rmmod"
}

af_bsp_unload_if_loaded()
{
	if module_loaded af_bsp; then
		rmmod af_bsp || echo "cleanup: rmmod af_bsp failed" >&2
	fi
}
