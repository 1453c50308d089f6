#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 400
# Authenticated mode: the module's self-test (engine SipHash = kernel
# siphash()); the write-only cluster key sysctl (CAP_NET_ADMIN of the
# namespace's user namespace; malformed values refused); keyed hellos; a
# transfer between two keyed nodes while a third host, copying node 1's
# MAC address, forges hellos (no MAC, a wrong MAC, a replayed real hello),
# DATA and CLOSE frames without a MAC, and replays a real DATA frame:
# every forged or replayed frame is dropped and counted (exact counts), and
# every message arrives exactly once.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3 setpriv
BENCH=$(ktest_bin bsp_bench)
FORGE=(python3 "$BSPVM_REPO/tests/vm/progs/bspforge.py")
KEY=00112233445566778899aabbccddeeff
COUNT=400
PACING=500000	# bytes/s: the transfer lasts about 13 s
SIZE=16384

af_bsp_load selftest=1
klog_has "af_bsp: selftest: engine SipHash-2-4 equals the kernel's siphash() on 66 inputs" ||
	fail "no self-test report in the kernel log: $(dmesg | grep af_bsp)"
dmesg | grep "af_bsp: selftest: sealing a" | tail -n 2 | sed 's/^\[[ 0-9.]*\] //'

bsp_nodes 2 1
on_exit 'ip netns del nx 2>/dev/null'
ip netns add nx || fail "netns nx"
ip netns exec nx sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec nx sysctl -qw net.ipv6.conf.default.disable_ipv6=1
ip link add nxr0 type veth peer name eth0 netns nx || fail "veth nx"
ip link set nxr0 master rail0 up
# the switch must not learn node 1's MAC on nx's port from the forgeries
# (node 1's own traffic would then go to nx, and its retransmissions would
# be counted as duplicates)
ip link set nxr0 type bridge_slave learning off || fail "learning off on nxr0"
ip -n nx link set eth0 up
bsp_wait_peers 1

stat() { ip netns exec "$1" awk -v k="$2" '$1 == k {print $2}' /proc/net/af_bsp/stats; }
mac_of() { ip -n "$1" -o link show "$2" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2; }
setkey() { ip netns exec "$1" sh -c "echo $2 > /proc/sys/net/bsp/cluster_key"; }
n0mac=$(mac_of n0 eth0)
n1mac=$(mac_of n1 eth0)

# the key: write-only, CAP_NET_ADMIN of the namespace, 32 hex digits
expect_eq "$(stat n0 auth)" 0 "auth in n0 before"
for n in n0 n1; do
	setkey $n $KEY || fail "setting the key in $n"
done
expect_eq "$(stat n0 auth)" 1 "auth in n0"
expect_eq "$(stat n1 auth)" 1 "auth in n1"
# root without CAP_NET_ADMIN, and another user, may not set it
out=$(ip netns exec n0 setpriv --bounding-set -net_admin \
	bash -c "echo $KEY > /proc/sys/net/bsp/cluster_key" 2>&1) && fail "root without CAP_NET_ADMIN set the key"
echo "$out" | grep -q "Operation not permitted" || fail "root without CAP_NET_ADMIN: $out"
out=$(ip netns exec n0 setpriv --reuid 65534 --regid 65534 --clear-groups \
	bash -c "echo $KEY > /proc/sys/net/bsp/cluster_key" 2>&1) && fail "user nobody set the key"
echo "$out" | grep -q "Permission denied" || fail "user nobody: $out"
out=$(ip netns exec n0 cat /proc/sys/net/bsp/cluster_key 2>&1) && fail "the key is readable: $out"
expect_fail setkey n0 0011
expect_fail setkey n0 zz112233445566778899aabbccddeeff
expect_fail setkey n0 00112233445566778899aabbccddeeff00
# keyed hellos are heard
rx=$(stat n1 hello_rx)
for ((t = 0; t < 100; t++)); do
	[ "$(stat n1 hello_rx)" -gt $((rx + 2)) ] && break
	sleep 0.1
done
[ "$(stat n1 hello_rx)" -gt $((rx + 2)) ] || fail "n1 hears no keyed hellos of n0"
bsp_wait_peers 1

# a real hello of node 1, as the forger hears it
heard=$(ip netns exec nx "${FORGE[@]}" sniff eth0 1 20) || fail "no hello of node 1 heard in nx"
read -r inc _ _ hex <<<"$heard"

tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
# the sink is n1's only socket: every frame n1's engine refuses from here on
# is one of the sink's, counted there by reason
eng0=$(stat n1 drop_engine)
ip netns exec n1 "${FORGE[@]}" sniffdata eth0 1 60 >"$tmp/data" 2>&1 &
sniffer=$!
ip netns exec n1 "$BENCH" sink 7000 $COUNT $SIZE >"$tmp/r" 2>&1 &
rpid=$!
bsp_wait_bound n1 7000
# the source holds its last message until the forgeries are sent, so the
# transfer is still running when they arrive, however slow the kernel
ip netns exec n0 env BSP_BENCH_HOLD="$tmp/forged" "$BENCH" source 2 7000 $COUNT $SIZE $PACING \
	>"$tmp/s" 2>&1 &
spid=$!
wait $sniffer || { cat "$tmp/data"; fail "no DATA frame of node 1 seen in n1"; }
port=$(ip netns exec n0 awk 'NR > 1 && $1 != 0 {print $1; exit}' /proc/net/af_bsp/sockets)
[ -n "$port" ] || fail "n0's sending socket not found"

auth0=$(stat n1 drop_auth)
repl0=$(stat n1 drop_replay)
# all from node 1's MAC address (past the source MAC check), in one go
ip netns exec nx "${FORGE[@]}" batch >/dev/null <<EOT || fail "forging in nx"
replay eth0 $(cat "$tmp/data") --dst $n1mac --src $n0mac
hello eth0 1 $((inc + 1)) 1 --src $n0mac
hello eth0 1 $((inc + 1)) 1 --auth --src $n0mac
replay eth0 $hex --src $n0mac
frame eth0 $n1mac data 1 $port 2 7000 --count 5 --src $n0mac
frame eth0 $n1mac ack 1 $port 2 7000 --flags 0x0100 --count 5 --src $n0mac
EOT
# the transfer was still running (its sink socket received them)
kill -0 $rpid 2>/dev/null || fail "the sink ended before the forged frames were sent"
touch "$tmp/forged"

wait $spid || { cat "$tmp/s"; fail "source in n0"; }
wait $rpid || { cat "$tmp/r"; fail "sink in n1"; }
cat "$tmp/r"
ip netns exec n1 cat /proc/net/af_bsp/stats
grep -q "STATS sink .* msgs_rx=$COUNT " "$tmp/r" || fail "n1 did not receive exactly $COUNT messages"
expect_eq "$(ip netns exec n1 awk '$1 == 1 && $2 == 0 {print $3, $4}' /proc/net/af_bsp/peers)" \
	"$n0mac up" "n1's view of node 1"
klog_has "node 1 restarted" && fail "n1 reset its channels to node 1"
expect_eq $(($(stat n1 drop_auth) - auth0)) 2 "n1: hellos dropped as auth"
expect_eq $(($(stat n1 drop_replay) - repl0)) 1 "n1: hellos dropped as replay"
sink=$(grep '^STATS sink ' "$tmp/r")
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$sink"; }
# the 5 forged DATA and 5 forged ACK frames carry no valid MAC
expect_eq "$(field drop_auth)" 10 "sink: frames dropped as auth"
# the replayed DATA frame is a duplicate (it is not delivered twice: msgs_rx
# above); more duplicates are the source's own retransmissions, which a slow
# guest provokes, so their number is not fixed
[ "$(field drop_dup)" -ge 1 ] || fail "sink: the replayed DATA frame was not counted as a duplicate"
# every refusal of n1's engine is one of the sink's, counted by its reason
refused=$(grep -o ' drop_[a-z_]*=[0-9]*' <<<"$sink" | awk -F= '{ n += $2 } END { print n + 0 }')
expect_eq $(($(stat n1 drop_engine) - eng0)) "$refused" "n1: frames refused by the engine"
log "forged and replayed frames dropped and counted; $COUNT messages exactly once"

# a node without the key is not heard
auth0=$(stat n1 drop_auth)
setkey n0 off || fail "removing the key in n0"
expect_eq "$(stat n0 auth)" 0 "auth in n0 after off"
for ((t = 0; t < 100; t++)); do
	[ "$(stat n1 drop_auth)" -gt "$auth0" ] && break
	sleep 0.1
done
[ "$(stat n1 drop_auth)" -gt "$auth0" ] || fail "n1 accepts hellos of a node without the key"
setkey n1 off
exit 0
