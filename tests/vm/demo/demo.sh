#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo run by `make demo` (tests/vm/run-vm --script tests/vm/demo/demo.sh):
# load af_bsp.ko in the guest, show it loaded, unload it.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"

echo "== guest kernel: $(uname -r)"
echo "== insmod kernel/af_bsp.ko"
af_bsp_load
echo "== lsmod | grep af_bsp"
lsmod | grep -E '^(Module|af_bsp) ' || fail "af_bsp not in lsmod"
echo "== modinfo"
modinfo "$AF_BSP_KO" | grep -E '^(filename|description|version|license|vermagic):'
echo "== kernel log"
dmesg | grep -E 'af_bsp|AF_BSP' | tail -n 20
echo "== rmmod af_bsp"
af_bsp_unload
dmesg | grep -E 'af_bsp|AF_BSP' | tail -n 1
echo "== af_bsp unloaded"
exit 0
