#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bsp master device and its rails through stock ip, neighbour
# discovery by hellos, per-rail liveness, rails still usable for IP,
# static peers, cluster ids, and namespaces kept apart.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3
af_bsp_load
bsp_nodes 2 2
bsp_wait_peers 1
log "2 nodes discovered each other on 2 rails"

# ip sees the master and its rails
expect_eq "$(ip -n n0 -o link show master bsp0 | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | xargs)" \
	"eth0 eth1" "rails of bsp0 in n0"
kind=$(ip -n n0 -d -j link show bsp0 |
	python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["linkinfo"]["info_kind"])')
expect_eq "$kind" bsp "link kind of bsp0 (ip -d link show)"
ip -n n0 link show bsp0 | grep -q 'LOWER_UP' || fail "bsp0 has no carrier with 2 rails up"

# one master per namespace; rails must be Ethernet; a rail is taken once
expect_fail ip -n n0 link add bsp1 type bsp
ip -n n0 link add dummy0 type dummy 2>/dev/null || modprobe dummy
ip -n n0 link add dummy0 type dummy 2>/dev/null
expect_fail ip -n n0 link set lo master bsp0

# the peer table: node 2 on both rails, with eth MACs of n1
mac0=$(ip -n n1 -o link show eth0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
line=$(ip netns exec n0 awk '$1 == 2 && $2 == 0' /proc/net/af_bsp/peers)
expect_eq "$(echo "$line" | cut -d' ' -f3-5)" "$mac0 up hello" "n0's view of node 2 on rail 0"

# rails still carry IP
ip -n n0 addr add 10.9.0.1/24 dev eth0
ip -n n1 addr add 10.9.0.2/24 dev eth0
# the server says when it is bound (python starts slowly in the VM: a
# datagram sent before would be lost)
ready=$TMPDIR/udp-ready
ip netns exec n1 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.9.0.2", 9999))
open(sys.argv[1], "w").close()
s.settimeout(10)
d, a = s.recvfrom(100)
s.sendto(d[::-1], a)
' "$ready" &
srv=$!
for ((t = 0; t < 100; t++)); do
	[ -e "$ready" ] && break
	sleep 0.1
done
[ -e "$ready" ] || fail "UDP server in n1 did not bind"
reply=$(ip netns exec n0 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.sendto(b"rail-ip", ("10.9.0.2", 9999))
print(s.recv(100).decode())
')
wait $srv
expect_eq "$reply" "pi-liar" "UDP over a rail"

# AF_BSP frames are counted on the master
rx=$(ip -n n0 -s -j link show bsp0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])')
[ "$rx" -gt 0 ] || fail "bsp0 counted no received AF_BSP frames"

# our rail down: its peers are dead at once on our side
ip -n n0 link set eth1 down
state=$(ip netns exec n0 awk '$1 == 2 && $2 == 1 {print $4}' /proc/net/af_bsp/peers)
expect_eq "$state" down "node 2 on rail 1 right after eth1 went down in n0"
# ... and the other side notices by missing hellos (peer_timeout_ms)
for ((t = 0; t < 50; t++)); do
	state=$(ip netns exec n1 awk '$1 == 1 && $2 == 1 {print $4}' /proc/net/af_bsp/peers)
	[ "$state" = down ] && break
	sleep 0.1
done
expect_eq "$state" down "node 1 on rail 1 seen from n1 after n0's eth1 went down"
state=$(ip netns exec n1 awk '$1 == 1 && $2 == 0 {print $4}' /proc/net/af_bsp/peers)
expect_eq "$state" up "node 1 on rail 0 seen from n1"
ip -n n0 link set eth1 up
bsp_wait_peers 1
log "rail down/up followed on both sides"

# nomaster releases the rail; enslaving again gives it back its index
ip -n n0 link set eth1 nomaster || fail "nomaster"
expect_eq "$(ip -n n0 -o link show master bsp0 | wc -l)" 1 "rails after nomaster"
ip -n n0 link set eth1 master bsp0 || fail "re-enslave"
ip -n n0 link set eth1 up
bsp_wait_peers 1

# static peers
ip netns exec n0 sh -c 'echo "add 99 0 02:00:00:00:00:99" > /proc/net/af_bsp/peers' ||
	fail "static peer add"
line=$(ip netns exec n0 awk '$1 == 99' /proc/net/af_bsp/peers)
expect_eq "$(echo "$line" | cut -d' ' -f2-5)" "0 02:00:00:00:00:99 up static" "static peer"
expect_fail ip netns exec n0 sh -c 'echo "add 98 9 02:00:00:00:00:98" > /proc/net/af_bsp/peers'
expect_fail ip netns exec n0 sh -c 'echo "bogus" > /proc/net/af_bsp/peers'
ip netns exec n0 sh -c 'echo "del 99" > /proc/net/af_bsp/peers' || fail "static peer del"
expect_eq "$(ip netns exec n0 awk '$1 == 99' /proc/net/af_bsp/peers | wc -l)" 0 "static peer after del"

# another cluster id: hellos are ignored and counted, peers expire
ip netns exec n1 sysctl -qw net.bsp.cluster_id=5
expect_eq "$(bsp_wait_rails_down n0)" 0 "live peers of n0 after n1 moved to cluster 5"
drops=$(ip netns exec n0 awk '$1 == "drop_cluster" {print $2}' /proc/net/af_bsp/stats)
[ "$drops" -gt 0 ] || fail "no drop_cluster counted"
ip netns exec n1 sysctl -qw net.bsp.cluster_id=0
bsp_wait_peers 1

# namespaces apart: the root namespace has neither peers nor sockets
expect_eq "$(awk 'NR > 2' /proc/net/af_bsp/peers | wc -l)" 0 "peers in the root namespace"

# deleting the master releases the rails (still usable for IP)
ip -n n0 link del bsp0 || fail "ip link del bsp0"
expect_eq "$(ip -n n0 -o link show master bsp0 2>/dev/null | wc -l)" 0 "rails after deleting bsp0"
ip -n n0 link show eth0 >/dev/null || fail "eth0 gone with bsp0"
exit 0
