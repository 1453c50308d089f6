#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test: a kernel report (refcount) while this case runs must fail it.
. "$(dirname "$0")/../splat-case.sh" refcount
