#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unreachable nodes (2 nodes x 2 rails): messages in flight to a node whose
# rails all die fail with EHOSTUNREACH after unreach_ms (2 s) and the
# sender learns it (SO_ERROR, tx_errors); afterwards sendto and connect to
# that node fail with EHOSTUNREACH at once.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

XFER=$(ktest_bin bsp_xfer)
af_bsp_load
bsp_nodes 2 2
bsp_wait_peers 1
log "peers discovered"
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

# messages in flight to a node whose rails all die fail with EHOSTUNREACH
# after unreach_ms (2 s) and the sender learns it (SO_ERROR, tx_errors)
# The receiver holds its socket open without reading, so most of the 8 MiB
# stays unacknowledged (a receiver that exits would close its socket, and
# the sender would learn that from CLOSE, with ECONNRESET, instead).
ip netns exec n1 "$XFER" hold 7303 >"$tmp/hold" 2>&1 &
rcv=$!
for ((t = 0; t < 50; t++)); do grep -q '^holding' "$tmp/hold" && break; sleep 0.1; done
grep -q '^holding' "$tmp/hold" || fail "receiver did not start: $(cat "$tmp/hold")"
ip netns exec n0 "$XFER" strand 2 7303 8 >"$tmp/strand" 2>&1 &
spid=$!
for ((t = 0; t < 300; t++)); do grep -q '^sent' "$tmp/strand" && break; sleep 0.1; done
grep -q '^sent' "$tmp/strand" || fail "strand: sending did not finish: $(cat "$tmp/strand")"
log "8 MiB sent; cutting both rails of node 2"
ip link set n1r0 down
ip link set n1r1 down
wait "$spid" || fail "stranded messages: $(cat "$tmp/strand")"
cat "$tmp/strand"
kill "$rcv" 2>/dev/null
wait "$rcv" 2>/dev/null

# a node with every rail dead is unreachable, in bounded time
ip link set n1r0 down
ip link set n1r1 down
for ((t = 0; t < 50; t++)); do
	n=$(ip netns exec n0 awk '$1 == 2 && $4 == "up"' /proc/net/af_bsp/peers | wc -l)
	[ "$n" = 0 ] && break
	sleep 0.1
done
expect_eq "$n" 0 "live rails to node 2 after both were cut"
expect_ok ip netns exec n0 "$XFER" unreachable 2 7302
exit 0
