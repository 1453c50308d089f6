#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test: a case that fails by exit status.
echo "this case fails on purpose"
exit 3
