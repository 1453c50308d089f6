#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unreachable nodes (2 nodes x 2 rails): messages in flight to a node whose
# rails all die fail with EHOSTUNREACH after unreach_ms (2 s) and the
# sender learns it (error queue, tx_errors); once the rails live again, the
# next message on the same socket is delivered (the failed channel restarted;
# before, the receiver waited for the first failed message for good and the
# next one completed without ever being delivered); a node whose rails stay
# dead makes sendto and connect fail with EHOSTUNREACH at once. Unconnected senders learn of each
# failed message from the error queue (MSG_ERRQUEUE), not from SO_ERROR.
# Then a sender with a larger MTU than its receiver's: the message settles.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

XFER=$(ktest_bin bsp_xfer)
af_bsp_load
bsp_nodes 2 2
bsp_wait_peers 1
log "peers discovered"
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

# A node whose rails died less than unreach_ms ago is not unreachable yet:
# hellos that come late under load make rails look dead for a moment, and a
# send then must wait for a rail, not fail at once. unreach_ms is 10 s here
# (the sockets take it when created), so the window is not a race with the
# emulated CPU.
echo 10000 >/sys/module/af_bsp/parameters/unreach_ms
ip netns exec n1 "$XFER" recv 7304 1 4 fixed:1000 >"$tmp/late" 2>&1 &
rcv=$!
on_exit "kill $rcv 2>/dev/null; wait $rcv 2>/dev/null"
ip link set n1r0 down
ip link set n1r1 down
expect_eq "$(bsp_wait_rails_down n0 2)" 0 "live rails to node 2 after both were cut"
ip netns exec n0 "$XFER" send 2 7304 4 fixed:1000 >"$tmp/late.send" 2>&1 &
spid=$!
sleep 1
ip link set n1r0 up
ip link set n1r1 up
wait "$spid" || fail "send while the rails were down: $(cat "$tmp/late.send")"
wait "$rcv" || fail "receiver of the late send: $(cat "$tmp/late")"
grep -q '^recv ok 4 4000$' "$tmp/late" || fail "late send: $(cat "$tmp/late")"
echo 2000 >/sys/module/af_bsp/parameters/unreach_ms
bsp_wait_peers 1
log "sends to a node whose rails died a moment ago wait for a rail and arrive"

# messages in flight to a node whose rails all die fail with EHOSTUNREACH
# after unreach_ms (2 s) and the sender learns it (SO_ERROR, tx_errors)
# The receiver holds its socket open without reading, so most of the 8 MiB
# stays unacknowledged (a receiver that exits would close its socket, and
# the sender would learn that from CLOSE, with ECONNRESET, instead).
ip netns exec n1 "$XFER" hold 7303 >"$tmp/hold" 2>&1 &
rcv=$!
for ((t = 0; t < 50; t++)); do grep -q '^holding' "$tmp/hold" && break; sleep 0.1; done
grep -q '^holding' "$tmp/hold" || fail "receiver did not start: $(cat "$tmp/hold")"
ip netns exec n0 "$XFER" strand 2 7303 8 again >"$tmp/strand" 2>&1 &
spid=$!
for ((t = 0; t < 300; t++)); do grep -q '^sent' "$tmp/strand" && break; sleep 0.1; done
grep -q '^sent' "$tmp/strand" || fail "strand: sending did not finish: $(cat "$tmp/strand")"
log "8 MiB sent; cutting both rails of node 2"
ip link set n1r0 down
ip link set n1r1 down
for ((t = 0; t < 600; t++)); do
	grep -q '^stranded ok' "$tmp/strand" && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done
grep -q '^stranded ok' "$tmp/strand" || fail "stranded messages: $(cat "$tmp/strand")"
log "the stranded messages failed; the rails of node 2 come back"
ip link set n1r0 up
ip link set n1r1 up
kill -USR1 "$rcv"
wait "$spid" || fail "after the failures: $(cat "$tmp/strand")"
cat "$tmp/strand"
wait "$rcv" || fail "receiver: $(cat "$tmp/hold")"
grep -q '^got 1000$' "$tmp/hold" || fail "the message after the failures: $(cat "$tmp/hold")"
grep -q '^again delivered chan_restarts 1$' "$tmp/strand" ||
	fail "no restart counted: $(cat "$tmp/strand")"
log "the next message on the same channel was delivered: $(grep -c '^got' "$tmp/hold") read"
bsp_wait_peers 1

# a node with every rail dead is unreachable, in bounded time: once its
# rails have been dead for unreach_ms (2 s), not before (see above)
ip link set n1r0 down
ip link set n1r1 down
expect_eq "$(bsp_wait_rails_down n0 2)" 0 "live rails to node 2 after both were cut"
sleep 2
for ((t = 0; t < 50; t++)); do
	ip netns exec n0 "$XFER" unreachable 2 7302 >"$tmp/unreach" 2>&1 && break
	sleep 0.1
done
[ "$t" -lt 50 ] || fail "node 2 not unreachable 7 s after its rails died: $(cat "$tmp/unreach")"
bsp_nodes_cleanup

# A sender with MTU 9000 talking to a receiver with MTU 1500 on the same rail:
# the receiver answers probes but never gets a DATA frame. The message must
# settle in bounded time: delivered (the sender used the receiver's MTU) or
# failed with EHOSTUNREACH (answers that acknowledge nothing are no progress)
# instead of being resent for ever.
bsp_nodes 2 1 9000
ip -n n1 link set eth0 mtu 1500 || fail "MTU 1500 on n1"
bsp_wait_peers 1
ip netns exec n1 "$XFER" recv 7320 1 1 fixed:65536 >"$tmp/mr" 2>&1 &
rcv=$!
bsp_wait_bound n1 7320
out=$(ip netns exec n0 "$XFER" settle 2 7320 65536) || fail "sender: $out"
echo "$out"
case $out in
"settle delivered"*)
	wait "$rcv" || fail "receiver: $(cat "$tmp/mr")"
	grep -q '^recv ok 1 65536$' "$tmp/mr" || fail "receiver: $(cat "$tmp/mr")"
	;;
"settle failed EHOSTUNREACH"*)
	kill "$rcv"
	wait "$rcv" 2>/dev/null
	grep -q '^recv ok' "$tmp/mr" && fail "failed, but the receiver got it"
	;;
*)
	fail "MTU mismatch: $out"
	;;
esac
exit 0
