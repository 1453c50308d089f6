#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 12
# Self-test: a case's own time limit (the header above) overrides
# --case-timeout.
echo "sleeping past my own limit on purpose"
sleep 100000
