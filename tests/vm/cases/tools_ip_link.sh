#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 180
# The iproute2 plugin link_bsp.so (tools/ip-bsp) with the stock ip against the
# module's IFLA_BSP_* attributes: every writable option round-trips through
# ip link add and ip link set (text and JSON, and the net.bsp sysctls it
# stands for), bad values are refused by the plugin and by the kernel's
# policy (raw netlink), read-only attributes are refused, a node id change
# while a socket is bound fails with EBUSY and changes nothing, the rails
# and their state, the peer count and the authenticated mode are shown, the
# ip -s counters of bsp0 equal the AF_BSP frames its rails carried, and the
# stock ip without the plugin still lists the device.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3

PLUGIN=$(find_built tools/ip-bsp/link_bsp.so)
export IP_LIB_DIR=${PLUGIN%/link_bsp.so}
STOCK=/nonexistent/ip-lib-dir
log "plugin: $PLUGIN"

af_bsp_load
WORK=$(mktemp -d /tmp/tools_ip_link.XXXXXX)
on_exit "rm -rf '$WORK'; ip netns del n9 2>/dev/null"

# info_data of bsp0 in namespace $1 as "key=value ..." (JSON of ip -j -d)
info()
{
	ip -n "$1" -j -d link show bsp0 | python3 -c '
import json, sys
d = json.load(sys.stdin)[0]["linkinfo"]["info_data"]
rails = d.pop("rails", [])
out = ["%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in d.items()]
out += ["rail%d=%s/%s" % (r["rail"], r["dev"], r["state"]) for r in rails]
print(" ".join(out))'
}

# the plugin's part of ip -d link show bsp0 in namespace $1 (text)
dtext()
{
	ip -n "$1" -d link show bsp0 | sed -n 's/^ *bsp \(.*\) addrgenmode.*/\1/p'
}

sysctls()
{
	ip netns exec "$1" sysctl -n net.bsp.node_id net.bsp.cluster_id \
		net.bsp.hello_interval_ms net.bsp.peer_timeout_ms \
		net.bsp.peer_expire_ms net.bsp.max_peers | xargs
}

# ---- every option through ip link add, then ip link set ----
ip netns add n9 || fail "netns n9"
ip -n n9 link add bsp0 type bsp node 9 cluster 3 hello 250 peer_timeout 900 \
	peer_expire 20000 max_peers 77 || fail "ip link add bsp0 type bsp with every option"
expect_eq "$(sysctls n9)" "9 3 250 900 20000 77" "net.bsp sysctls after ip link add"
text=$(ip -n n9 -d link show bsp0)
echo "$text"
[[ "$text" == *"bsp node 9 cluster 3 hello 250 peer_timeout 900 peer_expire 20000 max_peers 77 peers 0 auth off rails 0"* ]] ||
	fail "ip -d link show bsp0 after add: $text"
expect_eq "$(info n9)" \
	"node=9 cluster=3 hello=250 peer_timeout=900 peer_expire=20000 max_peers=77 peers=0 auth=false" \
	"ip -j -d after add"

ip -n n9 link set bsp0 type bsp node 4294967295 cluster 0 hello 60000 \
	peer_timeout 1 peer_expire 4294967295 max_peers 65536 || fail "ip link set every option"
expect_eq "$(sysctls n9)" "4294967295 0 60000 1 4294967295 65536" "sysctls after ip link set"
expect_eq "$(dtext n9)" \
	"node 4294967295 cluster 0 hello 60000 peer_timeout 1 peer_expire 4294967295 max_peers 65536 peers 0 auth off rails 0" \
	"ip -d after set"
# one option leaves the others alone
ip -n n9 link set bsp0 type bsp hello 1 || fail "ip link set hello 1"
expect_eq "$(sysctls n9)" "4294967295 0 1 1 4294967295 65536" "sysctls after set hello only"
# the sysctls are what ip shows
ip netns exec n9 sysctl -qw net.bsp.cluster_id=12 net.bsp.max_peers=5 || fail "sysctl write"
expect_eq "$(dtext n9)" \
	"node 4294967295 cluster 12 hello 1 peer_timeout 1 peer_expire 4294967295 max_peers 5 peers 0 auth off rails 0" \
	"ip -d after sysctl writes"

# the authenticated mode
ip netns exec n9 sh -c 'echo 00112233445566778899aabbccddeeff >/proc/sys/net/bsp/cluster_key' ||
	fail "set cluster_key"
[[ "$(ip -n n9 -d link show bsp0)" == *" auth on "* ]] || fail "auth on not shown"
ip netns exec n9 sh -c 'echo off >/proc/sys/net/bsp/cluster_key' || fail "cluster_key off"
[[ "$(ip -n n9 -d link show bsp0)" == *" auth off "* ]] || fail "auth off not shown"

# ---- bad values: the plugin refuses them before sending ----
for bad in "hello 0" "hello 60001" "max_peers 0" "max_peers 65537" "node 0" \
	"node 4294967296" "peer_timeout 0" "peer_expire -1" "cluster x" "hello" \
	"bogus 1" "node 3 node 4"; do
	# shellcheck disable=SC2086
	out=$(ip -n n9 link set bsp0 type bsp $bad 2>&1) && fail "ip accepted '$bad'"
	[[ "$out" == *"bsp: "* ]] || fail "no clear message for '$bad': $out"
done
expect_eq "$(sysctls n9)" "4294967295 12 1 1 4294967295 5" "sysctls unchanged by refused options"

# ---- and the kernel's policy refuses them from any netlink client ----
cat >"$WORK/nl.py" <<'PY'
import errno, socket, struct, sys

IFLA_LINKINFO, IFLA_INFO_KIND, IFLA_INFO_DATA = 18, 1, 2


def attr(t, payload):
    a = struct.pack("=HH", 4 + len(payload), t) + payload
    return a + b"\0" * ((4 - len(a) % 4) % 4)


ifindex = socket.if_nametoindex("bsp0")
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.setsockopt(270, 11, 1)  # SOL_NETLINK, NETLINK_EXT_ACK
for seq, spec in enumerate(sys.argv[1:], 1):
    atype, fmt, val = spec.split()
    data = attr(int(atype), struct.pack(fmt, int(val)))
    li = attr(IFLA_LINKINFO, attr(IFLA_INFO_KIND, b"bsp\0") + attr(IFLA_INFO_DATA, data))
    body = struct.pack("=BxHiII", 0, 0, ifindex, 0, 0) + li
    s.send(struct.pack("=IHHII", 16 + len(body), 16, 1 | 4, seq, 0) + body)  # RTM_NEWLINK
    r = s.recv(65536)
    flags = struct.unpack("=H", r[6:8])[0]
    err = -struct.unpack("=i", r[16:20])[0]
    off = 20 + (16 if flags & 0x100 else struct.unpack("=I", r[20:24])[0])
    text = ""
    while off + 4 <= len(r):  # extended ack TLVs; NLMSGERR_ATTR_MSG = 1
        ln, t = struct.unpack("=HH", r[off:off + 4])
        if ln < 4:
            break
        if t == 1:
            text = r[off + 4:off + ln].rstrip(b"\0").decode()
        off += (ln + 3) & ~3
    print("%s: %s %s" % (spec, errno.errorcode.get(err, err) if err else "OK", text))
PY
# out of range (ERANGE): IFLA_BSP_HELLO_MS 0 and 60001, MAX_PEERS 65537,
# NODE_ID 0; refused (EINVAL): PEERS, AUTH,
# RAILS (read-only); CLUSTER_ID 41 (accepted)
out=$(ip netns exec n9 python3 "$WORK/nl.py" "3 =I 0" "3 =I 60001" "6 =I 65537" "1 =I 0" \
	"7 =I 1" "8 =B 1" "9 =I 0" "2 =I 41") || fail "raw netlink client"
echo "$out"
expect_eq "$(echo "$out" | cut -d' ' -f4 | xargs)" "ERANGE ERANGE ERANGE ERANGE EINVAL EINVAL EINVAL OK" \
	"kernel answers to raw IFLA_BSP_* requests"
expect_eq "$(echo "$out" | sed -n 5,7p | cut -d' ' -f5- | tr '\n' '|')" \
	"peers is read-only|auth is read-only (net.bsp.cluster_key sets it)|rails are enslaved with ip link set DEV master|" \
	"messages of the read-only attributes"
expect_eq "$(sysctls n9)" "4294967295 41 1 1 4294967295 5" "sysctls after the raw netlink requests"

# ---- two nodes, two rails: rails, state, peers ----
log "add, set, bounds: ok"
bsp_nodes 2 2
bsp_wait_peers 1
log "2 nodes, 2 rails"
ip -n n0 link set bsp0 type bsp hello 100 peer_timeout 500 || fail "set timers n0"
text=$(ip -n n0 -d link show bsp0)
[[ "$text" == *"node 1 cluster 0 hello 100 peer_timeout 500 "*" peers 1 auth off rails 2 rail 0 eth0 up rail 1 eth1 up"* ]] ||
	fail "ip -d link show bsp0 in n0: $text"
[[ "$(info n0)" == *"peers=1 auth=false rail0=eth0/up rail1=eth1/up" ]] ||
	fail "ip -j -d in n0: $(info n0)"
topo_link_down_sw() { ip link set "n$1r$2" down || fail "n$1r$2 down"; }
topo_link_down_sw 0 1
for ((t = 0; t < 50; t++)); do
	[[ "$(dtext n0)" == *"rail 1 eth1 down" ]] && break
	sleep 0.1
done
[[ "$(dtext n0)" == *"rails 2 rail 0 eth0 up rail 1 eth1 down" ]] || fail "rail 1 not down: $(dtext n0)"
ip link set n0r1 up || fail "n0r1 up"
for ((t = 0; t < 50; t++)); do
	[[ "$(dtext n0)" == *"rail 1 eth1 up" ]] && break
	sleep 0.1
done
[[ "$(dtext n0)" == *"rail 1 eth1 up" ]] || fail "rail 1 not up again: $(dtext n0)"

log "rails and their state: ok"
# ---- node id while a socket is bound: EBUSY, nothing changed ----
cat >"$WORK/hold.py" <<'PY'
import ctypes, signal, socket, struct, sys
F = int(open("/sys/module/af_bsp/parameters/family").read())
libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket(F, socket.SOCK_RDM, 0)
a = struct.pack("=HHI8x", F, 5000, 0)
assert libc.bind(s.fileno(), a, len(a)) == 0, "bind"
open(sys.argv[1], "w").close()
signal.pause()
PY
ip netns exec n0 python3 "$WORK/hold.py" "$WORK/bound" &
holder=$!
on_exit "kill $holder 2>/dev/null"
for ((t = 0; t < 100; t++)); do
	[ -e "$WORK/bound" ] && break
	sleep 0.1
done
[ -e "$WORK/bound" ] || fail "holder did not bind"
out=$(ip -n n0 link set bsp0 type bsp cluster 9 node 50 2>&1) && fail "node id changed while bound"
[[ "$out" == *"node id cannot change while a socket is bound"* ]] || fail "EBUSY message: $out"
expect_eq "$(ip netns exec n0 sysctl -n net.bsp.node_id net.bsp.cluster_id | xargs)" "1 0" \
	"node and cluster after the refused change"
ip -n n0 link set bsp0 type bsp node 1 cluster 0 || fail "same node id while bound"
kill "$holder"
wait "$holder" 2>/dev/null

log "EBUSY: ok"
# ---- ip -s: the counters of bsp0 ----
# Every AF_BSP frame one node's bsp0 sends, the other's receives (one
# bridge per rail, nothing lost), and 20 messages of 3000 bytes are at
# least 40 data frames.
stats()
{
	# bsp0's tx packets, tx bytes, rx packets, rx bytes
	ip -n "$1" -s -j link show bsp0 | python3 -c '
import json, sys
s = json.load(sys.stdin)[0]["stats64"]
print(s["tx"]["packets"], s["tx"]["bytes"], s["rx"]["packets"], s["rx"]["bytes"])'
}
cat >"$WORK/xfer.py" <<'PY'
import ctypes, os, socket, struct, sys, time
F = int(open("/sys/module/af_bsp/parameters/family").read())
libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket(F, socket.SOCK_RDM, 0)
if sys.argv[1] == "recv":
    a = struct.pack("=HHI8x", F, 6000, 0)
    assert libc.bind(s.fileno(), a, len(a)) == 0, "bind"
    open(sys.argv[2], "w").close()
    s.settimeout(20)
    for i in range(20):
        d = s.recv(65536)
        assert d == bytes([i]) * 3000, "message %d wrong" % i
    print("received 20")
    open(sys.argv[3], "w").close()
else:
    a = struct.pack("=HHI8x", F, 6000, 2)
    for i in range(20):
        m = bytes([i]) * 3000
        assert libc.sendto(s.fileno(), m, len(m), 0, a, len(a)) == len(m), "sendto"
    # close only once all arrived (closing first would abandon them)
    for t in range(200):
        if os.path.exists(sys.argv[2]):
            break
        time.sleep(0.1)
PY
# no hello while the counters are read (a frame between the bsp0 and the
# eth rows of one dump would be counted on one side only). Both nodes stop
# timing out peers before either goes quiet: a node still at peer_timeout
# 500 ms when the other stops its hellos would declare it dead if the next
# ip command came later than that (it does on the debug kernel), and then
# could not acknowledge anything.
for n in n0 n1; do
	ip -n $n link set bsp0 type bsp peer_timeout 600000 peer_expire 600000 ||
		fail "no peer timeout in $n"
done
for n in n0 n1; do
	ip -n $n link set bsp0 type bsp hello 60000 || fail "quiet hellos in $n"
done
sleep 0.3
read -r a0 b0 c0 d0 <<<"$(stats n0)"
read -r a1 b1 c1 d1 <<<"$(stats n1)"
rm -f "$WORK/ready"
ip netns exec n1 python3 "$WORK/xfer.py" recv "$WORK/ready" "$WORK/done" >"$WORK/recv.out" &
rcv=$!
for ((t = 0; t < 100; t++)); do
	[ -e "$WORK/ready" ] && break
	sleep 0.1
done
ip netns exec n0 python3 "$WORK/xfer.py" send "$WORK/done" || fail "sender"
wait "$rcv" || fail "receiver: $(cat "$WORK/recv.out")"
expect_eq "$(cat "$WORK/recv.out")" "received 20" "messages received"
sleep 0.5
read -r A0 B0 C0 D0 <<<"$(stats n0)"
read -r A1 B1 C1 D1 <<<"$(stats n1)"
log "bsp0 of n0: tx $((A0 - a0)) packets $((B0 - b0)) bytes, rx $((C0 - c0)) packets $((D0 - d0)) bytes"
[ $((A0 - a0)) -ge 40 ] || fail "bsp0 tx packets $((A0 - a0)) < 40 (20 messages of 2 fragments)"
[ $((B0 - b0)) -ge 60000 ] || fail "bsp0 tx bytes $((B0 - b0)) < 60000"
expect_eq "$((A0 - a0)) $((B0 - b0))" "$((C1 - c1)) $((D1 - d1))" "n0 tx = n1 rx (packets bytes)"
expect_eq "$((A1 - a1)) $((B1 - b1))" "$((C0 - c0)) $((D0 - d0))" "n1 tx = n0 rx (packets bytes)"
[ $((A1 - a1)) -ge 1 ] || fail "n1 sent no acknowledgement"
ip -n n0 -d -s link show bsp0

# ---- the stock ip (no plugin) still lists the device ----
out=$(IP_LIB_DIR=$STOCK ip -n n0 -d link show bsp0) || fail "stock ip -d link show bsp0"
[[ "$out" == *"bsp0:"* && "$out" == *"bsp "* ]] || fail "stock ip output: $out"
[[ "$out" != *"node 1"* ]] || fail "stock ip printed plugin output: $out"
IP_LIB_DIR=$STOCK ip -n n0 -s link show bsp0 >/dev/null || fail "stock ip -s"
IP_LIB_DIR=$STOCK ip -n n0 -j -d link show bsp0 | python3 -c 'import json,sys; json.load(sys.stdin)' ||
	fail "stock ip JSON"
log "ok"
