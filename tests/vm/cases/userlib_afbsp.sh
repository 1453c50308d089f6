#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 300
# BSPlib programs under bsprun on 4 nodes x 2 rails over AF_BSP and over UDP
# on the rails (the scenario lives with the userlib tests).
exec bash "$BSPVM_REPO/tests/userlib/vm/bsplib_afbsp.sh"
