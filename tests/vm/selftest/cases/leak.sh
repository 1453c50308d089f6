#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test: a case that exits 0 but leaves a namespace and a process behind,
# which the runner must report as a failure (and clean up).
ip netns add n0 || exit 1
sleep 100000 &
echo "left namespace n0 and a sleep behind on purpose"
exit 0
