#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 240
# Forged HELLO, CLOSE and epoch frames from a host on the segment that is
# not a cluster member change nothing: while node 1 (n0) sends to node 2
# (n1), a third namespace (nx, no bsp device) claims node 1 in hellos (a new
# incarnation, a newer hello of the same incarnation, a replay of a real
# hello) and sends CLOSE and next-epoch frames in
# node 1's name. n1 keeps node 1's MAC and channels, every message arrives
# exactly once, and each forged frame is dropped and counted by reason.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3
XFER=$(ktest_bin bsp_xfer)
FORGE=(python3 "$BSPVM_REPO/tests/vm/progs/bspforge.py")
af_bsp_load
bsp_nodes 2 1
on_exit 'ip netns del nx 2>/dev/null'
ip netns add nx || fail "netns nx"
ip netns exec nx sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec nx sysctl -qw net.ipv6.conf.default.disable_ipv6=1
ip link add nxr0 type veth peer name eth0 netns nx || fail "veth nx"
ip link set nxr0 master rail0 up
ip -n nx link set eth0 up
bsp_wait_peers 1
# node 1 says hello rarely, so that a forged hello that got through would
# stay in effect long enough to be seen (the data keeps the rail alive).
# n1's longer timeout first: in the other order, n1 expected hellos every
# 100 ms for as long as starting the second sysctl took, which on the debug
# kernel was longer than the 500 ms timeout, and node 1 died at once.
ip netns exec n1 sysctl -qw net.bsp.peer_timeout_ms=30000
ip netns exec n0 sysctl -qw net.bsp.hello_interval_ms=5000

stat1() { ip netns exec n1 awk -v k="$1" '$1 == k {print $2}' /proc/net/af_bsp/stats; }
mac_of() { ip -n "$1" -o link show "$2" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2; }
n0mac=$(mac_of n0 eth0)
n1mac=$(mac_of n1 eth0)
view() { ip netns exec n1 awk '$1 == 1 && $2 == 0 {print $3, $4}' /proc/net/af_bsp/peers; }
expect_eq "$(view)" "$n0mac up" "n1's view of node 1 before"

# a real hello of node 1, as the forger hears it
heard=$(ip netns exec nx "${FORGE[@]}" sniff eth0 1 20) || fail "no hello of node 1 heard in nx"
read -r inc seq smac hex <<<"$heard"
expect_eq "$smac" "$n0mac" "source of node 1's hello"

tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
# The receiver reads nothing until $tmp/go exists and holds at most 1 MiB
# (twice XFER_RCVBUF) plus two messages: the transfer is in progress, whatever its speed,
# until the forged frames below have been sent.
XFER_RCVBUF=524288 XFER_START_FILE=$tmp/go \
	ip netns exec n1 "$XFER" recv 7000 1 300 cycle:40000 >"$tmp/r" 2>&1 &
rpid=$!
bsp_wait_bound n1 7000
ip netns exec n0 "$XFER" send 2 7000 300 cycle:40000 >"$tmp/s" 2>&1 &
spid=$!
port=
for ((t = 0; t < 100; t++)); do
	port=$(ip netns exec n0 awk 'NR > 1 && $1 != 0 {print $1; exit}' /proc/net/af_bsp/sockets)
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || fail "n0's sending socket not found"

src0=$(stat1 drop_src_mac)
conf0=$(stat1 drop_peer_conflict)
repl0=$(stat1 drop_replay)
rx0=$(stat1 hello_rx)
# a new incarnation of node 1 from another MAC, while node 1 is alive
expect_ok ip netns exec nx "${FORGE[@]}" hello eth0 1 $((inc + 1)) 1
expect_eq "$(view)" "$n0mac up" "n1's view of node 1 after a hello with a new incarnation"
# node 1's incarnation, a newer hello_seq, from another MAC
expect_ok ip netns exec nx "${FORGE[@]}" hello eth0 1 "$inc" $((seq + 1000))
# the real hello again (a replay)
expect_ok ip netns exec nx "${FORGE[@]}" replay eth0 "$hex"
# CLOSE (an ACK with BSPE_F_CLOSE) and next-epoch DATA in node 1's name
expect_ok ip netns exec nx "${FORGE[@]}" frame eth0 "$n1mac" ack 1 "$port" 2 7000 --flags 0x0100 --count 5
expect_ok ip netns exec nx "${FORGE[@]}" frame eth0 "$n1mac" data 1 "$port" 2 7000 --epoch 1 --count 5
expect_eq "$(view)" "$n0mac up" "n1's view of node 1 after the forged hellos"

touch "$tmp/go"
wait $spid || { cat "$tmp/s"; fail "send from n0"; }
wait $rpid || { cat "$tmp/r"; fail "receive in n1"; }
grep -q "recv ok 300 " "$tmp/r" || { cat "$tmp/r"; fail "n1 did not receive 300 messages"; }
expect_eq "$(view)" "$n0mac up" "n1's view of node 1 at the end"
klog_has "node 1 restarted" && fail "n1 reset its channels to node 1"
expect_eq $(($(stat1 drop_peer_conflict) - conf0)) 2 "n1: hellos dropped as peer_conflict"
expect_eq $(($(stat1 drop_replay) - repl0)) 1 "n1: hellos dropped as replay"
expect_eq $(($(stat1 drop_src_mac) - src0)) 10 "n1: frames dropped as src_mac"
# n1 accepted no hello from nx: every hello it counted came from n0 (the
# number of periods is not known, so check that none was lost instead)
log "forged hellos, CLOSE and epoch frames dropped: $(($(stat1 hello_rx) - rx0)) real hellos accepted meanwhile"
exit 0
