#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Harness self-test: the host helper (BSPVM_HOST_HELPER of run-vm) runs beside
# the VM and shares BSPVM_RUNDIR with the case.
for ((i = 0; i < 100; i++)); do
	[ -f "$BSPVM_RUNDIR/helper.ready" ] && break
	sleep 0.1
done
[ -f "$BSPVM_RUNDIR/helper.ready" ] || { echo "no $BSPVM_RUNDIR/helper.ready"; exit 1; }
echo from-guest >"$BSPVM_RUNDIR/helper.seen" || exit 1
exit 0
