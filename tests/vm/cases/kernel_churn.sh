#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 200
# A long-lived server socket and many short-lived clients: 20 client
# sockets in turn (more than the server's 16 channels), the last 10 all bound
# to the same local port, each exchanging 20 verified ping-pong messages.
# Every client closes with CLOSE, so the server frees each channel (exactly
# 20 chan_closes), serves every client, and nothing is sent to a closed
# port. Before CLOSE the 17th client was refused, and a client on a reused
# port was taken for its predecessor.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

BENCH=$(ktest_bin bsp_bench)
CLIENTS=20
PINGS=20
af_bsp_load max_chans=16
bsp_nodes 2 2
bsp_wait_peers 1

# one more message than the clients send: a last one-ping client after the
# others closed, so the server's counters are read after every CLOSE came
ip netns exec n1 "$BENCH" echo 7501 $((CLIENTS * PINGS + 1)) >/tmp/echo.out 2>&1 &
echo_pid=$!
bsp_wait_bound n1 7501
for ((c = 0; c < CLIENTS; c++)); do
	local_port=0
	[ "$c" -ge $((CLIENTS / 2)) ] && local_port=7600
	out=$(timeout 30 ip netns exec n0 "$BENCH" ping 2 7501 "$PINGS" 64 "$local_port" 2>&1) ||
		fail "client $c (local port $local_port): $out"
	grep -q '^RESULT ' <<<"$out" || fail "client $c: $out"
done
out=$(timeout 30 ip netns exec n0 "$BENCH" ping 2 7501 1 64 2>&1) || fail "last client: $out"
wait "$echo_pid" || fail "echo server: $(cat /tmp/echo.out)"
stats=$(grep '^STATS echo' /tmp/echo.out) || fail "no stats: $(cat /tmp/echo.out)"
log "$stats"
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$stats"; }
expect_eq "$(field msgs_rx)" $((CLIENTS * PINGS + 1)) "messages the server received"
expect_eq "$(field chan_closes)" "$CLIENTS" "server channels freed by CLOSE"
for n in n0 n1; do
	expect_eq "$(ip netns exec $n awk '$1 == "drop_no_port" {print $2}' /proc/net/af_bsp/stats)" 0 \
		"frames to closed ports on $n"
done
rm -f /tmp/echo.out
