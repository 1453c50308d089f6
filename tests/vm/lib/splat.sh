# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Kernel-log "splat" detection shared by the host (tests/vm/run-vm) and the
# guest runner (tests/vm/lib/guest-runner.sh). Sourced by bash; defines data
# and functions only.
#
# A line of the guest kernel log that matches any of these extended regular
# expressions fails the run (and the case during which it was logged).

BSPVM_SPLAT_PATTERNS=(
	'\bBUG[: ]'			# BUG: ..., kernel BUG at, slub "BUG kmalloc-64 (...)"
	'WARNING:'			# WARN_ON*(), lockdep
	'\bOops\b'
	'general protection fault'
	'refcount_t:'			# refcount over/underflow, use-after-free
	'list_(add|del) corruption'	# CONFIG_DEBUG_LIST
	'UBSAN:'
	'KASAN:'
	'Call Trace:'
	'soft lockup'
	'hard LOCKUP'
	'rcu: INFO: .*detected stall'
	'rcu_(sched|preempt) (self-)?detected stall'
	'detected stalls on CPUs'
	'blocked for more than [0-9]+ seconds'
	'[Ss]lab corruption'
	'Poison overwritten'
	'Redzone overwritten'
	'Object padding'
	'Padding overwritten'
	'Freepointer corrupt'
	'Kernel panic'
	'invalid opcode:'
	'stack-protector:'
	'double fault'
	'unreferenced object 0x'	# kmemleak (debug kernel, verbose after boot)
	'KFENCE:'			# "BUG: KFENCE: use-after-free read in ..."
	'possible circular locking dependency'	# lockdep (also "WARNING:")
	'possible recursive locking'
	'inconsistent lock state'
	'inconsistent .* usage'
	'possible irq lock inversion'
	'suspicious RCU usage'
	'DEBUG_LOCKS_WARN_ON'
	'sleeping function called from invalid context'
	'scheduling while atomic'
	'ODEBUG:'			# debug objects: timer/work freed while active
	'INFO: task .* blocked'
)

# bspvm_splat_regex: print the patterns joined as one ERE alternation.
bspvm_splat_regex()
{
	local IFS='|'

	printf '%s\n' "${BSPVM_SPLAT_PATTERNS[*]}"
}

# bspvm_splat_grep [FILE...]: print the offending lines (with line numbers)
# of a kernel log read from FILEs or stdin. Exit 0 if any were found, 1 if the
# log is clean (grep semantics).
bspvm_splat_grep()
{
	grep -n -a -E -- "$(bspvm_splat_regex)" "$@"
}
