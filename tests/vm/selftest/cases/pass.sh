#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test: a plain passing case (also loads the splat module with kind=none,
# so a clean load/unload is not mistaken for a splat).
. "$(dirname "$0")/../splat-case.sh" none
