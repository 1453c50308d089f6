#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test topology helpers: 4 nodes x 2 rails are created; every node
# reaches every other over each rail; tbf shaping shows in tc statistics;
# 100% netem loss on one node's rail cuts that rail only; a rail taken down
# and up comes back; teardown leaves nothing behind.
. "$BSPVM_REPO/tests/vm/lib/topology.sh"
need_cmd ip tc ping

N=4
R=2
topo_create $N $R

expect_eq "$(ip netns list | awk '{print $1}' | sort | tr '\n' ' ')" "n0 n1 n2 n3 " "namespaces"
for r in 0 1; do
	ports=$(ip -o link show master "rail$r" | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | sort | tr '\n' ' ')
	expect_eq "$ports" "n0r$r n1r$r n2r$r n3r$r " "ports of rail$r"
done
expect_eq "$(topo_exec 2 cat /sys/class/net/eth1/address)" "$(topo_mac 2 1)" "MAC of n2 eth1"
expect_eq "$(ip -n n3 -4 -o addr show dev eth0 | awk '{print $4}')" "10.1.0.4/24" "address of n3 eth0"

log "full mesh ping over both rails"
for ((r = 0; r < R; r++)); do
	failed=$(topo_ping_mesh "$r") || fail "pings over rail $r failed: $failed"
done

log "tbf shaping on node 1 rail 0"
topo_rate 1 0 10mbit 65536
qd=$(tc -n n1 qdisc show dev eth0)
[[ "$qd" == *"tbf 10: root"*"rate 10Mbit"* ]] || fail "no tbf on n1 eth0: $qd"
qd=$(tc qdisc show dev n1r0)
[[ "$qd" == *"tbf 10: root"*"rate 10Mbit"* ]] || fail "no tbf on n1r0: $qd"
sent_before=$(tc -n n1 -s qdisc show dev eth0 | awk '/Sent/ { print $4; exit }')
topo_exec 1 ping -q -n -c 5 -i 0.2 -W 1 "$(topo_ip 0 0)" >/dev/null || fail "ping through tbf failed"
sent_after=$(tc -n n1 -s qdisc show dev eth0 | awk '/Sent/ { print $4; exit }')
[ "$((sent_after - sent_before))" -ge 5 ] ||
	fail "tbf on n1 eth0 counted $((sent_after - sent_before)) packets for 5 pings"
log "tbf counted $((sent_after - sent_before)) packets"

log "netem loss 100% on node 2 rail 1, with tbf kept underneath"
topo_rate 2 1 50mbit
topo_netem 2 1 loss 100%
qd=$(tc -n n2 qdisc show dev eth1)
[[ "$qd" == *"netem 1: root"*"loss 100%"* && "$qd" == *"tbf 10: parent 1:1"* ]] ||
	fail "expected netem with a tbf child on n2 eth1: $qd"
topo_ping 0 2 1 && fail "ping n0 -> n2 over rail 1 succeeded despite 100% loss"
topo_ping 0 2 0 || fail "ping n0 -> n2 over rail 0 failed, only rail 1 is impaired"
topo_ping 2 3 0 || fail "ping n2 -> n3 over rail 0 failed"
topo_ping 1 3 1 || fail "ping n1 -> n3 over rail 1 failed, only n2 is impaired"
log "impairments in one direction only: tx loss on n2 rail 1"
topo_netem --dir tx 2 1 loss 100%
topo_netem --dir rx 2 1 delay 1ms
topo_ping 0 2 1 && fail "ping to n2 over rail 1 succeeded with n2's replies dropped"
topo_clear 2 1
qd=$(tc -n n2 qdisc show dev eth1)
[[ "$qd" != *netem* && "$qd" != *tbf* ]] || fail "topo_clear left qdiscs: $qd"
topo_ping 0 2 1 || fail "ping n0 -> n2 over rail 1 failed after topo_clear"

log "other netem impairments are accepted"
topo_netem 3 0 delay 2ms 1ms reorder 25% 50%
topo_netem 3 1 duplicate 10% corrupt 1%
topo_ping 3 0 0 3 || fail "ping over a delayed/reordered rail failed"
topo_clear 3 0
topo_clear 3 1

log "rail down and up"
topo_link_down 0 1
expect_eq "$(topo_exec 0 cat /sys/class/net/eth1/carrier)" 0 "n0 eth1 carrier with its switch port down"
topo_ping 0 1 1 && fail "ping n0 -> n1 over rail 1 succeeded with n0's rail 1 down"
topo_ping 0 1 0 || fail "ping n0 -> n1 over rail 0 failed with only rail 1 down"
topo_link_up 0 1
# Up to 3 probes: the first may still wait for ARP, whose entry failed while the link was down.
topo_ping 0 1 1 3 || fail "ping n0 -> n1 over rail 1 failed after link up"
topo_link_down --local 3 0
topo_ping 3 2 0 && fail "ping from n3 over its rail 0 succeeded with eth0 down"
topo_link_up --local 3 0
topo_ping 3 2 0 3 || fail "ping n3 -> n2 over rail 0 failed after local link up"

log "teardown"
topo_destroy
expect_eq "$(ip netns list)" "" "namespaces after topo_destroy"
expect_eq "$(ip -o link show type bridge)" "" "bridges after topo_destroy"
expect_eq "$(ip -o link show type veth)" "" "veths after topo_destroy"
exit 0
