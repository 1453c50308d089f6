#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test: a case that asks to be skipped.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
skip "skipping on purpose"
