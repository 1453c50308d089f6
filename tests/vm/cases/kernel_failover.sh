#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Rail failure in the middle of a large transfer (2 nodes x 2 rails): the
# sender's rail 1 goes down, later comes back; then the receiver's rail 1
# dies on the switch side. Nothing is lost or duplicated, and after the
# rail is back both rails carry data again.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3
XFER=$(ktest_bin bsp_xfer)
af_bsp_load
bsp_nodes 2 2
bsp_wait_peers 1
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

tx_bytes()
{
	ip -n "$1" -s -j link show "$2" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'
}

transfer_with()
{
	local what=$1 down=$2 up=$3 rc=0 j

	ip netns exec n1 "$XFER" recv 7300 1 40 fixed:262144 >"$tmp/r" 2>&1 &
	bsp_wait_bound n1 7300
	ip netns exec n0 "$XFER" send 2 7300 40 fixed:262144 >"$tmp/s" 2>&1 &
	sleep 1.5
	eval "$down"
	sleep 1.5
	eval "$up"
	for j in $(jobs -p); do wait "$j" || rc=1; done
	cat "$tmp"/r "$tmp"/s
	[ $rc = 0 ] || fail "$what: transfer failed"
	grep -q "recv ok 40 10485760" "$tmp/r" || fail "$what: not all 40 messages arrived"
	log "$what: 40 x 256 KiB intact; $(grep -o 'failovers [0-9]*' "$tmp/s")"
}

transfer_with "sender rail 1 down and up" \
	"ip -n n0 link set eth1 down" "ip -n n0 link set eth1 up"
bsp_wait_peers 1

# both rails carry data again
b0=$(tx_bytes n0 eth0)
b1=$(tx_bytes n0 eth1)
ip netns exec n1 "$XFER" recv 7301 1 10 fixed:1048576 >"$tmp/r2" 2>&1 &
bsp_wait_bound n1 7301
expect_ok ip netns exec n0 "$XFER" send 2 7301 10 fixed:1048576
wait
grep -q "recv ok 10 " "$tmp/r2" || fail "transfer after the rail came back"
d0=$(($(tx_bytes n0 eth0) - b0))
d1=$(($(tx_bytes n0 eth1) - b1))
log "after recovery: rail 0 sent $d0 bytes, rail 1 sent $d1 bytes"
# 10 MiB striped evenly: each rail must carry a substantial share
[ "$d0" -gt 3000000 ] || fail "rail 0 carried only $d0 bytes"
[ "$d1" -gt 3000000 ] || fail "rail 1 carried only $d1 bytes after it came back"

transfer_with "receiver rail 1 cut at the switch" \
	"ip link set n1r1 down" "ip link set n1r1 up"
bsp_wait_peers 1

exit 0
