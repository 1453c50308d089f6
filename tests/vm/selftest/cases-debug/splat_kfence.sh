#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test on the debug kernel: a kernel report (kfence) while this case runs
# must fail it.
. "$(dirname "$0")/../splat-case.sh" kfence
