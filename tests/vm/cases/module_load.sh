#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# af_bsp.ko loads, is listed in /proc/modules and /sys/module, unloads
# cleanly, and survives repeated load/unload cycles. Assumes nothing about
# what the module registers beyond loading.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"

module_loaded af_bsp && fail "af_bsp loaded before the case started"

af_bsp_load
[ -d /sys/module/af_bsp ] || fail "/sys/module/af_bsp missing after insmod"
state=$(cat /sys/module/af_bsp/initstate)
expect_eq "$state" live "/sys/module/af_bsp/initstate"
refs=$(awk '$1 == "af_bsp" { print $3 }' /proc/modules)
expect_eq "$refs" 0 "af_bsp use count with no users"
log "loaded: $(grep '^af_bsp ' /proc/modules)"
af_bsp_unload
log "unloaded"

for i in 1 2 3 4 5; do
	af_bsp_load
	af_bsp_unload
done
log "5 load/unload cycles done"

loads=$(dmesg | grep -c 'af_bsp' || true)
[ "$loads" -gt 0 ] || log "note: af_bsp printed nothing to the kernel log"
exit 0
