#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test: a case stuck in the kernel (insmod sleeping uninterruptibly)
# cannot be killed by its timeout; the runner's watchdog must fail it and
# stop the run.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
ko=$BSPVM_REPO/build/vm/selftest-splat/bspvm_splat.ko
[ -f "$ko" ] || fail "$ko not built (tests/vm/selftest.sh builds it)"
echo "insmod will sleep uninterruptibly on purpose"
insmod "$ko" kind=stuck
exit 0
