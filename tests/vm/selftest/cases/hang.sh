#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test: a case that never finishes (with a child process that must be
# killed with it); the per-case timeout must fail it.
echo "hanging on purpose"
sleep 100000 &
sleep 100000
