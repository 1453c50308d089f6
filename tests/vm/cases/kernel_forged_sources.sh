#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 600
# Ceiling test: a host on the segment that is not a cluster member (nx)
# sends hellos from 5,000 distinct node ids and DATA frames from 100,000
# distinct forged (node, port) sources to node 1 (n0) while node 2 (n1)
# sends to n0. The peer table stays within net.bsp.max_peers, unreclaimable slab
# within a printed ceiling; every forged frame is dropped and counted; the
# legitimate transfer completes; afterwards the forged peers expire, the
# table shrinks, and a node that joins later (n2) is heard and served.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3
XFER=$(ktest_bin bsp_xfer)
FORGE=(python3 "$BSPVM_REPO/tests/vm/progs/bspforge.py")
HELLOS=5000
SOURCES=100000
MAX_PEERS=256
af_bsp_load
bsp_nodes 2 1
# Run by on_exit, which shellcheck cannot follow.
# shellcheck disable=SC2317
cleanup_extra()
{
	ip netns del nx 2>/dev/null
	ip netns del n2 2>/dev/null
	return 0
}
on_exit cleanup_extra
ip netns add nx || fail "netns nx"
ip netns exec nx sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec nx sysctl -qw net.ipv6.conf.default.disable_ipv6=1
ip link add nxr0 type veth peer name eth0 netns nx || fail "veth nx"
ip link set nxr0 master rail0 up
ip -n nx link set eth0 up
# Forged peers are kept until the floods are over (peer_expire_ms is lowered
# afterwards), so the table fills however slowly the hellos come: on the debug
# kernel 5,000 of them take minutes, and with a 1 s expiry the table would
# never hold more than a second's worth.
for n in n0 n1; do
	ip netns exec $n sysctl -qw net.bsp.max_peers=$MAX_PEERS
	ip netns exec $n sysctl -qw net.bsp.peer_expire_ms=600000
done
bsp_wait_peers 1

stat0() { ip netns exec n0 awk -v k="$1" '$1 == k {print $2}' /proc/net/af_bsp/stats; }
slab_kb() { awk '$1 == "SUnreclaim:" {print $2}' /proc/meminfo; }
softnet_drops()
{
	local s=0 b rest

	while read -r _ b rest; do
		s=$((s + 0x$b))
	done </proc/net/softnet_stat
	echo $s
}
n0mac=$(ip -n n0 -o link show eth0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)

tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
ip netns exec n0 "$XFER" recv 7000 1 200 cycle:40000 >"$tmp/r" 2>&1 &
rpid=$!
bsp_wait_bound n0 7000
ip netns exec n1 "$XFER" send 1 7000 200 cycle:40000 >"$tmp/s" 2>&1 &
spid=$!

slab0=$(slab_kb)
net0=$(softnet_drops)
rx0=$(stat0 hello_rx)
full0=$(stat0 drop_peer_table_full)
src0=$(stat0 drop_src_mac)
(
	peak=0
	speak=0
	while [ ! -e "$tmp/done" ]; do
		p=$(stat0 peers)
		[ "$p" -gt "$peak" ] && peak=$p
		s=$(slab_kb)
		[ "$s" -gt "$speak" ] && speak=$s
		echo "$peak $speak" >"$tmp/peak.new" && mv "$tmp/peak.new" "$tmp/peak"
		sleep 0.2
	done
) &
mon=$!
sent_h=$(ip netns exec nx "${FORGE[@]}" hellos eth0 $HELLOS 100000) || fail "forged hellos"
log "$sent_h hellos from distinct node ids sent"
sent_d=$(ip netns exec nx "${FORGE[@]}" flood eth0 "$n0mac" 1 7000 $SOURCES 300000) || fail "forged DATA"
log "$sent_d DATA frames from distinct (node, port) sources sent"
touch "$tmp/done"
wait $mon
read -r peak slab_peak <"$tmp/peak"
rx1=$(stat0 hello_rx)
full1=$(stat0 drop_peer_table_full)
src1=$(stat0 drop_src_mac)
net1=$(softnet_drops)

wait $spid || { cat "$tmp/s"; fail "send from n1"; }
wait $rpid || { cat "$tmp/r"; fail "receive in n0"; }
grep -q "recv ok 200 " "$tmp/r" || { cat "$tmp/r"; fail "n0 did not receive 200 messages"; }
log "legitimate transfer n1 -> n0 complete during the flood"

# the forged peers die (no more hellos) and are forgotten
for n in n0 n1; do
	ip netns exec $n sysctl -qw net.bsp.peer_expire_ms=1000
done
for ((t = 0; t < 200; t++)); do
	p=$(stat0 peers)
	[ "$p" = 1 ] && break
	sleep 0.1
done
expect_eq "$p" 1 "n0's peers once the forged ones expired"
echo "unreclaimable slab after expiry: $(slab_kb) kB"

# a node joining now is heard and served
ip netns add n2 || fail "netns n2"
ip netns exec n2 sysctl -qw net.bsp.node_id=3
ip -n n2 link add bsp0 type bsp || fail "bsp0 in n2"
ip link add n2r0 type veth peer name eth0 netns n2 || fail "veth n2"
ip link set n2r0 master rail0 up
ip -n n2 link set eth0 master bsp0 || fail "enslave eth0 in n2"
ip -n n2 link set eth0 up
ip -n n2 link set bsp0 up
for ((t = 0; t < 100; t++)); do
	ip netns exec n0 awk '$1 == 3 && $4 == "up"' /proc/net/af_bsp/peers | grep -q . && break
	sleep 0.1
done
ip netns exec n0 awk '$1 == 3 && $4 == "up"' /proc/net/af_bsp/peers | grep -q . ||
	fail "n0 does not hear node 3 after the flood"
ip netns exec n0 "$XFER" recv 7001 1 20 cycle:10000 >"$tmp/r2" 2>&1 &
rpid=$!
bsp_wait_bound n0 7001
ip netns exec n2 "$XFER" send 1 7001 20 cycle:10000 >"$tmp/s2" 2>&1 || { cat "$tmp/s2"; fail "send from n2"; }
wait $rpid || { cat "$tmp/r2"; fail "receive from n2"; }
grep -q "recv ok 20 " "$tmp/r2" || fail "n0 did not receive 20 messages from n2"
log "node 3 joined after the flood and was served"

expect_eq "$net1" "$net0" "frames the guest itself lost (softnet_stat): the counts below would be off"
hellos=$((rx1 - rx0))
full=$((full1 - full0))
srcmac=$((src1 - src0))
echo "n0: forged hellos accepted $hellos (and real ones of n1), refused as table full $full"
# every forged hello was either taken into the bounded table or refused
[ $((hellos + full)) -ge "$HELLOS" ] || fail "forged hellos unaccounted for: $hellos + $full < $HELLOS"
[ "$full" -gt 0 ] || fail "the table never filled"
expect_eq "$srcmac" "$SOURCES" "n0: DATA frames dropped as src_mac"
[ "$peak" -le "$MAX_PEERS" ] || fail "peer table peaked at $peak > max_peers $MAX_PEERS"
echo "ceiling: peer table peak $peak entries (net.bsp.max_peers $MAX_PEERS); unreclaimable slab $slab0 kB before, at most $slab_peak kB sampled during the flood (+$((slab_peak - slab0)) kB)"
[ $((slab_peak - slab0)) -lt 16384 ] || fail "unreclaimable slab grew by more than 16 MiB"

exit 0
