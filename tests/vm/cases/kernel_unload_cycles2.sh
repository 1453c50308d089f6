#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Ten more load/unload cycles (kernel_unload_cycles does the first ten):
# one case each keeps every case within the harness's time limit on a
# loaded machine. Same checks: slab and vmalloc back at baseline, no splat.
exec bash "$(dirname "${BASH_SOURCE[0]}")/kernel_unload_cycles.sh"
