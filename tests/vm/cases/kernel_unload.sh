#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module lifetime: the family number and its override, rmmod refused with
# EBUSY while sockets exist (also with traffic flowing), rmmod with bsp
# devices and rails present, (20 load/unload cycles: kernel_unload_cycles).
# The run fails on any kernel splat.
. "$BSPVM_REPO/tests/vm/lib/assert.sh"
. "$BSPVM_REPO/tests/kernel/vmlib.sh"

need_cmd python3
XFER=$(ktest_bin bsp_xfer)
KO=$AF_BSP_KO

# Run by expect_ok/expect_fail, which shellcheck cannot follow.
# shellcheck disable=SC2317
pysock()
{
	python3 -c "
import socket, sys
s = socket.socket($1, socket.SOCK_RDM, 0)
$2
"
}

# Sockets are freed after an RCU grace period and pin the module until
# then: bsp_unload retries rmmod for a moment.

# ---- family number: default 23, override, collision refused
af_bsp_load
expect_eq "$(cat /sys/module/af_bsp/parameters/family)" 23 "family parameter"
expect_ok pysock 23 "pass"
bsp_unload
af_bsp_load family=22
expect_eq "$(cat /sys/module/af_bsp/parameters/family)" 22 "family parameter"
expect_ok pysock 22 "pass"
expect_fail pysock 23 "pass"
bsp_unload
expect_fail insmod "$KO" family=2
expect_fail insmod "$KO" family=46
module_loaded af_bsp && fail "af_bsp loaded with a taken family"
log "family: default 23, family=22 works, AF_INET and >= AF_MAX refused"

# ---- rmmod refused while a socket is open
af_bsp_load
python3 -c "
import socket, time
s = socket.socket(23, socket.SOCK_RDM, 0)
open('/tmp/kunload.ready', 'w').close()
time.sleep(30)
" &
holder=$!
for ((t = 0; t < 100; t++)); do [ -e /tmp/kunload.ready ] && break; sleep 0.1; done
out=$(rmmod af_bsp 2>&1) && fail "rmmod succeeded with a socket open"
echo "$out" | grep -qi "in use" || fail "rmmod with a socket open: unexpected error '$out'"
module_loaded af_bsp || fail "af_bsp gone after a refused rmmod"
kill "$holder"
wait "$holder" 2>/dev/null
rm -f /tmp/kunload.ready
bsp_unload
log "rmmod refused (in use) while a socket is open, works after close"

# ---- rmmod refused while traffic flows; works with devices still present
af_bsp_load
bsp_nodes 2 2
bsp_wait_peers 1
# The receiver reads nothing until /tmp/kunload.go exists and holds at most
# 1 MiB plus two messages: the transfer is in progress, whatever its speed,
# during the rmmod.
rm -f /tmp/kunload.go
XFER_RCVBUF=524288 XFER_START_FILE=/tmp/kunload.go \
	ip netns exec n1 "$XFER" recv 7400 1 40 fixed:262144 >/tmp/kunload.r 2>&1 &
rpid=$!
bsp_wait_bound n1 7400
ip netns exec n0 "$XFER" send 2 7400 40 fixed:262144 >/tmp/kunload.s 2>&1 &
spid=$!
sleep 1
out=$(rmmod af_bsp 2>&1) && fail "rmmod succeeded during a transfer"
echo "$out" | grep -qi "in use" || fail "rmmod during traffic: unexpected error '$out'"
touch /tmp/kunload.go
wait "$spid" || fail "sender failed"
wait "$rpid" || fail "receiver failed: $(cat /tmp/kunload.r)"
grep -q "recv ok 40 " /tmp/kunload.r || fail "transfer incomplete"
rm -f /tmp/kunload.r /tmp/kunload.s /tmp/kunload.go
# bsp0 and its rails still exist: rmmod removes them
bsp_unload
expect_eq "$(ip -n n0 -o link show type bsp 2>/dev/null | wc -l)" 0 "bsp devices after rmmod"
ip -n n0 link show eth0 >/dev/null || fail "rail eth0 gone with the module"
bsp_nodes_cleanup
log "rmmod refused during traffic, then removed bsp devices and released rails"

exit 0
