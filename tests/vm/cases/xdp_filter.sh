#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 600
# The AF_BSP XDP pre-filter (ebpf/xdp_bsp.bpf.c, tools/bsp-xdp) on node n1's
# rail: every invalid kind of frame (length, version, type, cluster,
# destination node, unbound port) is dropped by XDP and counted under its
# reason, and the module's own counters do not see it (without the filter
# they do, one by one); valid traffic passes intact and exactly once,
# steered one channel to one CPU (the per-slot counts of forged channels
# equal the program's hash); ping and TCP pass; a port bound after attach is
# accepted and dropped as unbound after close; the fault injector works
# together with it (it runs first); releasing the rail makes the filter
# inert; rmmod with the filter attached is clean; detach removes it.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3 nsenter ping
XDP=$(find_built tools/bsp-xdp/bsp-xdp)
FAULT=$(find_built tools/bsp-fault/bsp-fault)
SS=$(find_built tools/bsp-ss/bsp-ss)
XFER=$(ktest_bin bsp_xfer)
JUNK=(python3 "$BSPVM_REPO/tests/vm/progs/xdpjunk.py")
N=5

af_bsp_load
bsp_nodes 2 1
bsp_wait_peers 1
on_exit "nsenter --net=/run/netns/n1 $XDP detach eth0 >/dev/null 2>&1"
on_exit "nsenter --net=/run/netns/n1 $FAULT detach eth0 >/dev/null 2>&1"

in_n1() { nsenter --net=/run/netns/n1 "$@"; }
stat1() { ip netns exec n1 awk -v k="$1" '$1 == k {print $2}' /proc/net/af_bsp/stats; }
xstat() { in_n1 "$XDP" stats | awk -v k="$1" '$1 == k {print $2}'; }
mac_of() { ip -n "$1" -o link show "$2" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2; }
n0mac=$(mac_of n0 eth0)
n1mac=$(mac_of n1 eth0)
# the frames come from n0 itself (its MAC and node id 1), so the module
# sees a known peer and counts an unbound port as drop_no_port
junk() { ip netns exec n0 "${JUNK[@]}" "$@" >/dev/null || fail "xdpjunk $*"; }
MOD_KEYS="drop_short drop_version drop_type drop_cluster drop_addr drop_no_port drop_src_mac drop_engine"
mod_snapshot() {
	local k
	for k in $MOD_KEYS; do printf '%s=%s ' "$k" "$(stat1 "$k")"; done
}
bound1() { ip netns exec n1 awk -v p="$1" 'NR > 1 && $1 == p' /proc/net/af_bsp/sockets | grep -q .; }
wait_bound() {
	local t
	for ((t = 0; t < 100; t++)); do bound1 "$1" && return 0; sleep 0.1; done
	fail "nothing bound to port $1 on n1"
}
XDP_KEYS="drop_short drop_version drop_type drop_cluster drop_addr drop_no_port"
# frames reach the module or the filter a moment after they were sent
settle() { sleep 0.5; }

# ---- without the filter the module counts each kind itself (the reference)
before=$(mod_snapshot)
junk kinds eth0 "$n1mac" "$n0mac" 2 9999 0 "$N"
settle
# (the module counts an unknown type as drop_short: bspe_pkt_type)
for kn in drop_short:$((2 * N)) drop_version:$N drop_type:0 drop_cluster:$N drop_addr:$N \
	drop_no_port:$N; do
	k=${kn%%:*}
	b=$(sed -n "s/.*$k=\([0-9]*\).*/\1/p" <<<"$before")
	expect_eq "$(stat1 "$k")" "$((b + ${kn#*:}))" "module $k without XDP"
done

# ---- bad input gets a clear error
expect_fail in_n1 "$XDP" attach nosuchdev
expect_fail in_n1 "$XDP" detach eth0
expect_fail in_n1 "$XDP" stats
expect_fail in_n1 "$SS" -X

expect_ok in_n1 "$XDP" attach eth0
expect_fail in_n1 "$XDP" attach eth0
[[ "$(ip -n n1 link show dev eth0)" == *"prog/xdp id"* ]] ||
	fail "eth0 of n1 shows no XDP program: $(ip -n n1 link show dev eth0)"
bpftool map show pinned "/sys/fs/bpf/bsp_xdp/$(stat -L -c %i /run/netns/n1)/bsp_xdp_state" ||
	fail "state map not pinned"

# ---- every invalid kind: dropped by XDP, counted by reason, module untouched
before=$(mod_snapshot)
junk kinds eth0 "$n1mac" "$n0mac" 2 9999 0 "$N"
settle
for k in $XDP_KEYS; do
	expect_eq "$(xstat "$k")" "$N" "XDP $k"
done
expect_eq "$(mod_snapshot)" "$before" "module counters while XDP drops the junk"
ss_out=$(in_n1 "$SS" -X) || fail "bsp-ss -X failed"
log "$ss_out"
expect_eq "$(awk '$1 == "drop_no_port" {print $2}' <<<"$ss_out")" "$N" "bsp-ss -X drop_no_port"
in_n1 "$SS" -X -j | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["drop_type"] == '"$N" ||
	fail "bsp-ss -X -j"
dump=$(bpftool map dump pinned "/sys/fs/bpf/bsp_xdp/$(stat -L -c %i /run/netns/n1)/bsp_xdp_counters") ||
	fail "bpftool map dump of the counters"
[[ "$dump" == *'"drop_cluster"'* ]] || fail "bpftool shows no named counters: $dump"

# ---- valid traffic: intact, exactly once; no drop on the way
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
xb=$(for k in $XDP_KEYS; do xstat "$k"; done | tr '\n' ' ')
steered0=$(xstat steered)
ip netns exec n1 "$XFER" recv 7000 1 24 ladder >"$tmp/r" 2>&1 &
rx=$!
# frames sent before the bind would be dropped as unbound (rightly)
wait_bound 7000
ip netns exec n0 "$XFER" send 2 7000 24 ladder >"$tmp/s" 2>&1 || { cat "$tmp/s"; fail "send"; }
wait "$rx" || { cat "$tmp/r"; fail "receive through the XDP filter"; }
grep -q "recv ok 24 " "$tmp/r" || fail "n1 did not receive 24 messages: $(cat "$tmp/r")"
expect_eq "$(for k in $XDP_KEYS; do xstat "$k"; done | tr '\n' ' ')" "$xb" "XDP drops during a valid transfer"
expect_eq "$(xstat steered)" "$steered0" "nothing steered without --steer"

# ---- steering (--steer): one channel to one cpumap slot, channels spread
XFER_START_FILE=/nonexistent ip netns exec n1 "$XFER" recv 7100 1 1 fixed:16 >"$tmp/hold" 2>&1 &
hold=$!
on_exit "kill $hold 2>/dev/null"
for _ in $(seq 50); do grep -q bound "$tmp/hold" && break; sleep 0.1; done
grep -q bound "$tmp/hold" || fail "holder did not bind 7100"
ncpus=$(nproc)
if [ "$ncpus" -gt 1 ]; then
	expect_ok in_n1 "$XDP" detach eth0
	expect_ok in_n1 "$XDP" attach eth0 --steer
	slots() { in_n1 "$XDP" stats | awk '$1 == "cpu" {print "slot", $2, $4}'; }
	# 8 frames of one channel (forged, so that their checksum is complete)
	junk data eth0 "$n1mac" "$n0mac" 1 2 7100 2000 1
	for _ in 1 2 3 4 5 6 7; do junk data eth0 "$n1mac" "$n0mac" 1 2 7100 2000 1; done
	settle
	expect_eq "$(slots)" "$("${JUNK[@]}" slots 1 7100 2000 1 "$ncpus" | awk '{print $1, $2, 8}')" \
		"8 frames of one channel on its one slot"
	h0=$(slots)
	junk data eth0 "$n1mac" "$n0mac" 1 2 7100 2100 32
	settle
	# per-slot difference (the guest has no /dev/fd for process substitution)
	got=$( (cut -d' ' -f2- <<<"$h0" | awk '{print $1, -$2}'; slots | cut -d' ' -f2-) |
		awk '{d[$1] += $2} END {for (k in d) if (d[k]) print "slot", k, d[k]}' | sort -n -k2)
	want=$("${JUNK[@]}" slots 1 7100 2100 32 "$ncpus")
	expect_eq "$got" "$want" "frames per cpumap slot of 32 channels"
	[ "$(wc -l <<<"$want")" -gt 1 ] || fail "32 channels did not spread over the CPUs: $want"
	expect_eq "$(xstat steered)" 40 "steered frames"
fi

# ---- a port bound after attach is accepted; after close, dropped as unbound
p0=$(xstat passed)
s0=$(xstat steered)
np0=$(xstat drop_no_port)
junk data eth0 "$n1mac" "$n0mac" 1 2 7100 3000 4
settle
expect_eq "$(($(xstat passed) + $(xstat steered) - p0 - s0))" 4 "frames for bound 7100 passed"
expect_eq "$(xstat drop_no_port)" "$np0" "no unbound-port drop while 7100 is bound"
kill "$hold"
wait "$hold" 2>/dev/null
for _ in $(seq 50); do bound1 7100 || break; sleep 0.1; done
junk data eth0 "$n1mac" "$n0mac" 1 2 7100 3000 4
settle
expect_eq "$(xstat drop_no_port)" "$((np0 + 4))" "frames for 7100 after close: unbound"

# ---- non-AF_BSP traffic passes: ping and TCP
ip -n n0 addr add 10.9.0.1/24 dev eth0
ip -n n1 addr add 10.9.0.2/24 dev eth0
expect_ok ip netns exec n0 ping -c 3 -W 2 10.9.0.2
ip netns exec n1 timeout 60 python3 -c '
import socket, hashlib, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.9.0.2", 7777)); s.listen(1); open(sys.argv[1], "w").close()
c, _ = s.accept(); h = hashlib.sha256(); n = 0
while True:
    b = c.recv(65536)
    if not b: break
    h.update(b); n += len(b)
print(n, h.hexdigest())' "$tmp/listening" >"$tmp/tcp" &
srv=$!
for _ in $(seq 100); do [ -e "$tmp/listening" ] && break; sleep 0.1; done
[ -e "$tmp/listening" ] || fail "TCP server did not start"
want=$(ip netns exec n0 timeout 60 python3 -c '
import socket, hashlib, os
d = os.urandom(4 << 20); c = socket.create_connection(("10.9.0.2", 7777), timeout=30)
c.sendall(d); c.close()
print(len(d), hashlib.sha256(d).hexdigest())') || {
	ip -n n1 -s link show eth0
	ip netns exec n1 ss -tni
	fail "TCP client"
}
wait "$srv" || fail "TCP server"
expect_eq "$(cat "$tmp/tcp")" "$want" "4 MiB over TCP through the XDP filter"

# ---- the fault injector on the same rail, before the filter
expect_ok in_n1 "$FAULT" attach eth0
ip -n n1 link show dev eth0 | grep -q "prog/xdp" || fail "no XDP on eth0 after both"
# drop every frame for port 9998 (bytes 12..15: src_port, dst_port)
expect_ok in_n1 "$FAULT" rule eth0 0 --offset 12 --mask 0xffff --value 9998
np0=$(xstat drop_no_port)
junk data eth0 "$n1mac" "$n0mac" 1 2 9998 4000 6
settle
expect_eq "$(in_n1 "$FAULT" stats eth0 | grep '^rule 0 ' | awk '{print $4}')" "dropped=6" \
	"fault injector dropped the frames for 9998"
expect_eq "$(xstat drop_no_port)" "$np0" "the filter never saw what the injector dropped"
expect_ok in_n1 "$FAULT" disable eth0 0
junk data eth0 "$n1mac" "$n0mac" 1 2 9998 4000 6
settle
expect_eq "$(xstat drop_no_port)" "$((np0 + 6))" "the filter after the injector passed them"
# the injector leaves, the filter stays
expect_ok in_n1 "$FAULT" detach eth0
junk data eth0 "$n1mac" "$n0mac" 1 2 9998 4000 2
settle
expect_eq "$(xstat drop_no_port)" "$((np0 + 8))" "the filter alone again"

# ---- the rail released: the filter is inert; enslaved again: active
in0=$(xstat inactive)
xd=$(for k in $XDP_KEYS; do xstat "$k"; done | tr '\n' ' ')
ip -n n1 link set eth0 nomaster || fail "nomaster"
before=$(mod_snapshot)
junk kinds eth0 "$n1mac" "$n0mac" 2 9999 0 1
settle
# (n0's hellos and retransmissions are counted inactive too: at least 6)
[ "$(xstat inactive)" -ge $((in0 + 6)) ] ||
	fail "frames on a released rail not passed unexamined: $in0 -> $(xstat inactive)"
expect_eq "$(for k in $XDP_KEYS; do xstat "$k"; done | tr '\n' ' ')" "$xd" \
	"no XDP drop on a released rail"
expect_eq "$(mod_snapshot)" "$before" "module counters (the frames reach no rail)"
ip -n n1 link set eth0 master bsp0 || fail "enslave again"
ip -n n1 link set eth0 up
np0=$(xstat drop_no_port)
junk data eth0 "$n1mac" "$n0mac" 1 2 9998 4000 3
settle
expect_eq "$(xstat drop_no_port)" "$((np0 + 3))" "the filter active again on the rail"

# ---- rmmod with the filter attached: clean, the filter then passes everything
bsp_unload
in0=$(xstat inactive)
junk data eth0 "$n1mac" "$n0mac" 1 2 9998 4000 3
settle
[ "$(xstat inactive)" -ge $((in0 + 3)) ] ||
	fail "frames not passed unexamined without the module: $in0 -> $(xstat inactive)"
expect_ok in_n1 "$XDP" detach eth0
[[ "$(ip -n n1 link show dev eth0)" != *"prog/xdp"* ]] || fail "XDP still attached after detach"
[ ! -e "/sys/fs/bpf/bsp_xdp/$(stat -L -c %i /run/netns/n1)" ] || fail "pins left after detach"
exit 0
