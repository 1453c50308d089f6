#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cost of the authenticated mode (a VM scenario, not a test: it prints
# figures side by side).
#
#   tests/vm/run-vm --case-timeout 900 --script tests/kernel/bench_auth.sh
#
# Two nodes, one unshaped rail at MTU 9000, so the emulated CPU is the
# bottleneck and what a packet costs shows. Rounds alternate without and
# with a cluster key (net.bsp.cluster_key, set on both nodes; each round
# binds new sockets, which take the key in force). Each round measures an
# unpaced transfer of 64 KiB messages (microseconds of receiver wall time
# per DATA packet, Mbit/s) and the half round trip of 8-byte messages. The
# ratios are per round (both measurements adjacent in time) and their
# median is printed, because the emulated CPU drifts between rounds.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3
BENCH=$(ktest_bin bsp_bench)
ROUNDS=${BENCH_ROUNDS:-5}
VOLUME=$((${BENCH_MIB:-8} << 20))
SIZE=65536
KEY=000102030405060708090a0b0c0d0e0f
af_bsp_load
bsp_nodes 2 1 9000
bsp_wait_peers 1

set_key()
{
	local i

	for i in 0 1; do
		ip netns exec "n$i" sh -c "echo $1 > /proc/sys/net/bsp/cluster_key" ||
			fail "cluster_key $1 in n$i"
	done
	for i in 0 1; do
		expect_eq "$(ip netns exec "n$i" awk '$1 == "auth" {print $2}' /proc/net/af_bsp/stats)" \
			"$2" "auth in n$i"
	done
	bsp_wait_peers 1
}

# one round -> "us_per_packet mbit half_rtt_us"
measure()
{
	local count=$((VOLUME / SIZE)) secs pkts mbit rtt

	ip netns exec n1 "$BENCH" sink 7500 "$count" "$SIZE" >"$TMPDIR/sink" 2>&1 &
	sleep 0.3
	ip netns exec n0 "$BENCH" source 2 7500 "$count" "$SIZE" >"$TMPDIR/src" ||
		fail "source: $(cat "$TMPDIR/src")"
	wait || fail "sink: $(cat "$TMPDIR/sink")"
	grep -h STATS "$TMPDIR/sink" | sed "s/^/# $1 /" >&2
	secs=$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' "$TMPDIR/sink")
	mbit=$(sed -n 's/.* mbit=\([0-9.]*\).*/\1/p' "$TMPDIR/sink")
	pkts=$(sed -n 's/.* data_rx=\([0-9]*\).*/\1/p' "$TMPDIR/sink")
	ip netns exec n1 "$BENCH" echo 7501 30 >/dev/null 2>&1 &
	sleep 0.3
	rtt=$(ip netns exec n0 "$BENCH" ping 2 7501 30 8 | sed -n 's/.* half_rtt_us=\([0-9.]*\).*/\1/p')
	wait
	[[ -n $secs && -n $pkts && -n $rtt ]] || fail "measurement $1"
	python3 -c "print('%.2f %s %s' % ($secs * 1e6 / $pkts, '$mbit', '$rtt'))"
}

plain=()
auth=()
for ((round = 0; round < ROUNDS; round++)); do
	set_key off 0
	plain+=("$(measure plain)")
	set_key $KEY 1
	auth+=("$(measure key)")
	log "round $round: no key ${plain[-1]}; key ${auth[-1]}"
done
set_key off 0

python3 - "${plain[@]}" -- "${auth[@]}" <<'PY'
import statistics, sys
args = sys.argv[1:]
cut = args.index("--")
p = [list(map(float, x.split())) for x in args[:cut]]
a = [list(map(float, x.split())) for x in args[cut + 1:]]
med = lambda v: statistics.median(v)
print()
print("authenticated mode cost, 1 unshaped rail, MTU 9000, %d interleaved rounds (medians)" % len(p))
print("%-34s %12s %12s %12s" % ("", "no key", "key", "key/no key"))
names = ["us per DATA packet (64 KiB msgs)", "Mbit/s (64 KiB msgs)", "8-byte half round trip us"]
for i, n in enumerate(names):
    print("%-34s %12.2f %12.2f %12.3f" % (n, med(x[i] for x in p), med(x[i] for x in a),
                                         med(y[i] / x[i] for x, y in zip(p, a))))
print("extra us per DATA packet with a key (median of the rounds' differences): %.2f" %
      med(y[0] - x[0] for x, y in zip(p, a)))
PY
