#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 900
# Receive memory is charged and bounded (Documentation/security.rst,
# "Memory bounds"); each part prints the ceiling it measured:
#  1. a receiver that does not read while a sender sends 400 x 1 MiB holds
#     at most SO_RCVBUF + 2 messages (the sender waits and resends); then it
#     reads all 400, byte for byte, exactly once;
#  2. senders flooding two receivers that do not read: the namespace holds
#     at most net.bsp.mem, refusals are counted (drop_mem); then everything
#     arrives;
#  3. 256 valid 86-byte frames, each the last fragment of a different 1 MiB
#     message: at most SO_RCVBUF + 2 messages are pinned, and freed when
#     the reassemblies expire (net.bsp.reasm_timeout_ms), counted;
#  4. a receiver with a 64 KiB SO_RCVBUF that starts reading late, behind a
#     sender with a 4 MiB SO_SNDBUF (40 x 256 KiB): everything arrives once
#     the reader reads, without waiting for sender timeouts (it took more
#     than 60 s when BUSY answers asked the sender for nothing).
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

XFER=$(ktest_bin bsp_xfer)
FORGE=$BSPVM_REPO/tests/vm/progs/bsp_partial.py
VERSION=$(awk '$2 == "BSPE_VERSION" { print $3 }' "$BSPVM_REPO/kernel/engine/bspe_wire.h")
MIB=1048576
# truesize of a 1 MiB message buffer at most: 16 chunks of 64 KiB, each
# with its skb (< 1 KiB) and a page of slack (bsp_msg_rx_truesize)
MSG_TRUESIZE=$((MIB + 16 * (4096 + 1024)))
af_bsp_load
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

stat_of() # NODE NAME
{
	ip netns exec "$1" awk -v k="$2" '$1 == k { print $2 }' /proc/net/af_bsp/stats
}

mem_avail()
{
	awk '$1 == "MemAvailable:" { print $2 * 1024 }' /proc/meminfo
}

wait_line() # FILE REGEX WHAT
{
	local t

	for ((t = 0; t < 100; t++)); do
		grep -q "$2" "$1" && return 0
		sleep 0.1
	done
	fail "$3: $(cat "$1")"
}

# Wait until n1 holds at least $1 bytes of receive memory (bounded).
wait_rmem() # BYTES
{
	local t r

	for ((t = 0; t < 600; t++)); do
		r=$(stat_of n1 rmem)
		[ "${r:-0}" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "n1 never held $1 bytes (rmem $r)"
}

# ---- 1. a receiver that does not read, 400 x 1 MiB
bsp_nodes 2 1
bsp_wait_peers 1
avail0=$(mem_avail)
rcvbuf=$((4 * MIB))
XFER_RCVBUF=$rcvbuf XFER_START_FILE=$tmp/go1 ip netns exec n1 "$XFER" recv 7400 1 400 \
	"fixed:$MIB" >"$tmp/r1" 2>&1 &
rcv=$!
wait_line "$tmp/r1" '^bound' "receiver did not start"
XFER_SNDBUF=$((16 * MIB)) ip netns exec n0 "$XFER" send 2 7400 400 "fixed:$MIB" >"$tmp/s1" 2>&1 &
snd=$!
# SO_RCVBUFFORCE doubles the value, as SO_RCVBUF does
ceiling=$((2 * rcvbuf + 2 * MSG_TRUESIZE))
wait_rmem $((2 * rcvbuf))
sleep 3	# the sender keeps offering; nothing more may be taken
peak=$(stat_of n1 rmem_peak)
sock=$(ip netns exec n1 awk '$1 == 7400 { print $3 }' /proc/net/af_bsp/sockets)
avail1=$(mem_avail)
echo "part 1: rmem_peak $peak socket rmem $sock ceiling $ceiling" \
	"MemAvailable drop $((avail0 - avail1))"
[ "$peak" -le "$ceiling" ] || fail "n1 held $peak bytes, ceiling $ceiling"
# the sender's SO_SNDBUF (16 MiB) and the page cache move too: a loose bound,
# but the unbounded receiver of old took 400 MiB here
[ "$((avail0 - avail1))" -le $((ceiling + 128 * MIB)) ] ||
	fail "MemAvailable fell by $((avail0 - avail1)) bytes"
touch "$tmp/go1"
wait "$rcv" || fail "receiver: $(cat "$tmp/r1")"
wait "$snd" || fail "sender: $(cat "$tmp/s1")"
cat "$tmp/r1"
grep -q "^recv ok 400 $((400 * MIB))\$" "$tmp/r1" || fail "not all 400 messages arrived"
nobufs=$(awk '$1 == "recv" && $2 == "nobufs" { print $3 }' "$tmp/r1")
[ "${nobufs:-0}" -gt 0 ] || fail "the receiver never refused a fragment (nobufs 0)"
expect_eq "$(stat_of n1 rmem)" 0 "n1 receive memory after the transfer"
log "part 1 ok: peak $peak <= $ceiling, nobufs $nobufs"
bsp_nodes_cleanup

# ---- 2. floods against net.bsp.mem
bsp_nodes 2 1
bsp_wait_peers 1
limit_pages=2048
ip netns exec n1 sysctl -qw net.bsp.mem=$limit_pages || fail "net.bsp.mem"
limit=$((limit_pages * $(getconf PAGESIZE)))
expect_eq "$(stat_of n1 rmem_limit)" "$limit" "rmem_limit"
XFER_RCVBUF=$((16 * MIB)) XFER_START_FILE=$tmp/go2 ip netns exec n1 "$XFER" recv 7500 2 40 \
	"fixed:$MIB" >"$tmp/r2a" 2>&1 &
ra=$!
XFER_RCVBUF=$((16 * MIB)) XFER_START_FILE=$tmp/go2 ip netns exec n1 "$XFER" recv 7501 1 40 \
	"cycle:$MIB" >"$tmp/r2b" 2>&1 &
rb=$!
wait_line "$tmp/r2a" '^bound' "receiver 7500 did not start"
wait_line "$tmp/r2b" '^bound' "receiver 7501 did not start"
XFER_SNDBUF=$((8 * MIB)) ip netns exec n0 "$XFER" send 2 7500 40 "fixed:$MIB" 2 >"$tmp/s2a" 2>&1 &
sa=$!
XFER_SNDBUF=$((8 * MIB)) ip netns exec n0 "$XFER" send 2 7501 40 "cycle:$MIB" >"$tmp/s2b" 2>&1 &
sb=$!
wait_rmem $((limit - 2 * MSG_TRUESIZE))
sleep 3
peak=$(stat_of n1 rmem_peak)
drops=$(stat_of n1 drop_mem)
echo "part 2: rmem_peak $peak ceiling (net.bsp.mem) $limit drop_mem $drops"
[ "$peak" -le "$limit" ] || fail "n1 held $peak bytes, net.bsp.mem is $limit"
[ "$drops" -gt 0 ] || fail "no refusal counted (drop_mem 0)"
touch "$tmp/go2"
for p in $ra $rb $sa $sb; do
	wait "$p" || fail "a transfer failed: $(cat "$tmp"/r2* "$tmp"/s2*)"
done
cat "$tmp"/r2a "$tmp"/r2b
grep -q "^recv ok 80 $((80 * MIB))\$" "$tmp/r2a" || fail "7500 did not receive 2 x 40 MiB"
grep -q "^recv ok 40 " "$tmp/r2b" || fail "7501 did not receive 40 messages"
expect_eq "$(stat_of n1 rmem)" 0 "n1 receive memory after the floods"
log "part 2 ok: peak $peak <= $limit, drop_mem $drops"
bsp_nodes_cleanup

# ---- 3. half-full reassemblies
bsp_nodes 2 1
bsp_wait_peers 1
ip netns exec n1 sysctl -qw net.bsp.reasm_timeout_ms=1000 || fail "net.bsp.reasm_timeout_ms"
ip netns exec n1 "$XFER" hold 7600 >"$tmp/h3" 2>&1 &
hold=$!
wait_line "$tmp/h3" '^holding' "holder did not start"
avail0=$(mem_avail)
mac1=$(ip netns exec n1 cat /sys/class/net/eth0/address)
# the frames come from node 1's own rail address and id: valid in every way
ip netns exec n0 python3 "$FORGE" partial eth0 "$mac1" "$VERSION" 1 2 7600 8 32 ||
	fail "forging frames"
sleep 0.5
peak=$(stat_of n1 rmem_peak)
avail1=$(mem_avail)
# the holder's SO_RCVBUF: 4096, doubled
ceiling=$((8192 + 2 * MSG_TRUESIZE))
echo "part 3: rmem_peak $peak ceiling $ceiling MemAvailable drop $((avail0 - avail1))"
[ "$peak" -le "$ceiling" ] || fail "256 partial messages pinned $peak bytes, ceiling $ceiling"
for ((t = 0; t < 100; t++)); do
	[ "$(stat_of n1 rmem)" = 0 ] && break
	sleep 0.1
done
expect_eq "$(stat_of n1 rmem)" 0 "n1 receive memory after expiry"
# exactly the two admitted reassemblies (one within SO_RCVBUF, one beyond it
# as the next message of its channel) expired, each closing its channel
expect_eq "$(stat_of n1 reasm_expired)" 2 "reassemblies expired"
kill "$hold"
wait "$hold" 2>/dev/null
log "part 3 ok: peak $peak <= $ceiling, freed after expiry"
bsp_nodes_cleanup

# ---- 4. a small receive buffer behind a sender with much in flight
bsp_nodes 2 1
bsp_wait_peers 1
KIB=1024
XFER_RCVBUF=$((32 * KIB)) XFER_START_FILE=$tmp/go4 ip netns exec n1 "$XFER" recv 7700 1 40 \
	"fixed:$((256 * KIB))" >"$tmp/r4" 2>&1 &
rcv=$!
wait_line "$tmp/r4" '^bound' "receiver did not start"
XFER_SNDBUF=$((2 * MIB)) ip netns exec n0 "$XFER" send 2 7700 40 "fixed:$((256 * KIB))" \
	>"$tmp/s4" 2>&1 &
snd=$!
on_exit "kill $rcv $snd 2>/dev/null"
sleep 3	# the sender fills its window; the receiver refuses all of it
t0=$(date +%s%N)
touch "$tmp/go4"
# 10 MiB: 0.6 s here; 33 s when every message waited for sender timeouts
deadline=$((t0 + 10000000000 * ${BSPVM_TIMEOUT_SCALE:-1}))
while kill -0 "$rcv" 2>/dev/null && [ "$(date +%s%N)" -lt "$deadline" ]; do
	sleep 0.1
done
t1=$(date +%s%N)
kill -0 "$rcv" 2>/dev/null &&
	fail "40 x 256 KiB not received $(((t1 - t0) / 1000000)) ms after the reader started"

wait "$rcv" || fail "receiver: $(cat "$tmp/r4")"
wait "$snd" || fail "sender: $(cat "$tmp/s4")"
cat "$tmp/r4"
grep -q "^recv ok 40 $((40 * 256 * KIB))\$" "$tmp/r4" || fail "not all 40 messages arrived"
retx=$(sed -n 's/^send stats: .* retransmits \([0-9]*\) .*/\1/p' "$tmp/s4")
echo "part 4: 40 x 256 KiB in $(((t1 - t0) / 1000000)) ms after the reader started," \
	"$(grep '^recv nobufs' "$tmp/r4"), sender retransmits ${retx:-?}"
log "part 4 ok"
exit 0
