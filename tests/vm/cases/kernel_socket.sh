#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# AF_BSP socket semantics between sockets of one node (no rail): bind,
# automatic ports, every size up to BSP_MSG_MAX byte for byte, scatter-
# gather, MSG_PEEK/MSG_TRUNC/MSG_DONTWAIT, timeouts, errno values, connect,
# shutdown, poll, signals, flow control, many senders, superstep options.
# Runs in a fresh namespace, then checks the module unloads afterwards.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

TEST=$(ktest_bin bsp_socket_test)
af_bsp_load

ip netns add ksock || fail "netns"
on_exit "ip netns del ksock"
ip netns exec ksock sysctl -qw net.bsp.node_id=77 || fail "sysctl net.bsp.node_id"
expect_eq "$(ip netns exec ksock cat /proc/sys/net/bsp/node_id)" 77 "node id"
# the root namespace keeps its own (random, odd) id
expect_ne "$(cat /proc/sys/net/bsp/node_id)" 77 "root namespace node id"
# node id 0 is reserved for BSP_NODE_LOCAL
expect_fail ip netns exec ksock sysctl -qw net.bsp.node_id=0
# the id does not change under a bound socket (its engine and its peers know
# it by the old one): EBUSY; once no socket is bound it changes again
ip netns exec ksock "$(ktest_bin bsp_xfer)" hold 7001 >"$BSPVM_SCRATCH/hold" 2>&1 &
holder=$!
on_exit "kill $holder 2>/dev/null"
for ((t = 0; t < 50; t++)); do grep -q '^holding' "$BSPVM_SCRATCH/hold" && break; sleep 0.1; done
grep -q '^holding' "$BSPVM_SCRATCH/hold" || fail "holder did not start"
err=$(ip netns exec ksock sysctl -w net.bsp.node_id=78 2>&1) &&
	fail "node id changed under a bound socket"
case $err in *"Device or resource busy"*) ;; *) fail "node id change under a bound socket: $err (want EBUSY)" ;; esac
expect_eq "$(ip netns exec ksock cat /proc/sys/net/bsp/node_id)" 77 "node id under a bound socket"
expect_ok ip netns exec ksock sysctl -qw net.bsp.node_id=77
kill "$holder"
wait "$holder" 2>/dev/null
for ((t = 0; t < 50; t++)); do
	ip netns exec ksock sysctl -qw net.bsp.node_id=78 2>/dev/null && break
	sleep 0.1
done
expect_eq "$(ip netns exec ksock cat /proc/sys/net/bsp/node_id)" 78 "node id with no socket bound"
ip netns exec ksock sysctl -qw net.bsp.node_id=77 || fail "node id back to 77"

expect_ok ip netns exec ksock "$TEST"

# the C example of tools/examples: two processes, ten echoed messages
out=$(ip netns exec ksock "$(ktest_bin bsp_pingpong)") || fail "bsp_pingpong: $out"
expect_eq "$(echo "$out" | grep -c ': echoed$')" 10 "echoed messages of bsp_pingpong"

# the namespace's sockets are gone: nothing left in /proc
left=$(ip netns exec ksock awk 'NR > 1' /proc/net/af_bsp/sockets | wc -l)
expect_eq "$left" 0 "sockets left in /proc/net/af_bsp/sockets"
bsp_unload
exit 0
