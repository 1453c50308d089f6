#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bspvm-timeout: 300
# Idle channel eviction (Documentation/protocol.rst "Idle channel eviction"):
# a long-lived server socket talks to 8 client sockets in turn; each client
# exchanges 20 verified ping-pong messages and then stays open and idle. With
# net.bsp.chan_idle_ms=1000 the server evicts every idle client's channel by
# the EVICT handshake (the clients never close while it happens: chan_closes
# 0), so it holds channels for the active client only: after the idle period
# its counters show exactly 8 channels evicted. Then once more with 5% netem
# loss on every rail. Every message arrives once and intact (the clients
# compare each echo, the server counts exactly what was sent).
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd tc
BENCH=$(ktest_bin bsp_bench)
CLIENTS=8
PINGS=20
HOLD_MS=60000
af_bsp_load
bsp_nodes 2 2
bsp_wait_peers 1
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
# Idle long enough that no scheduling stall of the emulated CPUs looks like
# idleness inside a client's ping-pong (that would evict and reopen its
# channel, correctly, but the count below would no longer be exact).
IDLE_MS=1000
[ "${BSPVM_KERNEL:-stock}" = debug ] && IDLE_MS=3000
for n in n0 n1; do
	ip netns exec $n sysctl -qw net.bsp.chan_idle_ms=$IDLE_MS || fail "sysctl chan_idle_ms on $n"
done

# round PORT: one server, CLIENTS holding clients, then one last client once
# the server evicted every idle channel; prints the server's STATS line
round()
{
	local port=$1 c i pids=() stats

	ip netns exec n1 "$BENCH" echo "$port" $((CLIENTS * PINGS + 1)) >"$tmp/echo" 2>&1 &
	local echo_pid=$!
	bsp_wait_bound n1 "$port"
	for ((c = 0; c < CLIENTS; c++)); do
		ip netns exec n0 "$BENCH" ping 2 "$port" "$PINGS" 1000 0 "$HOLD_MS" >"$tmp/c$c" 2>&1 &
		pids+=($!)
		for ((i = 0; i < 600; i++)); do
			grep -q '^HOLD ' "$tmp/c$c" && break
			kill -0 "${pids[c]}" 2>/dev/null || fail "client $c: $(cat "$tmp/c$c")"
			sleep 0.05
		done
		grep -q '^RESULT ' "$tmp/c$c" || fail "client $c: $(cat "$tmp/c$c")"
	done
	# the server evicts the idle clients' channels while they are open
	for ((i = 0; i < 2400; i++)); do
		ev=$(ip netns exec n1 "$SS" -i 2>/dev/null | sed -n 's/.*chans_evicted:\([0-9]*\).*/\1/p' | head -1)
		[ "${ev:-0}" -ge "$CLIENTS" ] && break
		sleep 0.05
	done
	out=$(timeout 60 ip netns exec n0 "$BENCH" ping 2 "$port" 1 64 2>&1) || fail "last client: $out"
	wait "$echo_pid" || fail "echo server: $(cat "$tmp/echo")"
	for pid in "${pids[@]}"; do
		kill -0 "$pid" 2>/dev/null || fail "a client ended before the server's stats were read"
		kill "$pid"
	done
	wait "${pids[@]}" 2>/dev/null
	grep '^STATS echo' "$tmp/echo" || fail "no stats: $(cat "$tmp/echo")"
}

SS=""
for d in "$BSPVM_REPO"/build/default "$BSPVM_REPO"/build/*; do
	[ -x "$d/tools/bsp-ss/bsp-ss" ] && SS="$d/tools/bsp-ss/bsp-ss" && break
done
[ -n "$SS" ] || fail "bsp-ss not built (make all, or cmake --build build/default)"

check()
{
	local stats=$1 what=$2
	field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$stats"; }
	log "$what: $stats"
	expect_eq "$(field msgs_rx)" $((CLIENTS * PINGS + 1)) "$what: messages the server received"
	expect_eq "$(field chans_evicted)" "$CLIENTS" "$what: idle channels the server evicted"
	expect_eq "$(field chan_closes)" 0 "$what: channels freed by CLOSE (the clients are open)"
}

check "$(round 7701)" "no loss"
bsp_rails_netem loss 5%
check "$(round 7702)" "5% loss"
bsp_rails_netem loss 0%
