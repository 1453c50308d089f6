#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The XDP fault injector (ebpf/xdp_fault.bpf.c via tools/bsp-fault) drops
# exactly the AF_BSP frames its rules name, counts them, and lets every other
# frame and all non-AF_BSP traffic through.
. "$BSPVM_REPO/tests/vm/lib/topology.sh"

tool=$BSPVM_REPO/build/default/tools/bsp-fault/bsp-fault
frames=$BSPVM_REPO/tests/vm/progs/rawframes.py
[ -x "$tool" ] || fail "$tool not built (make all)"

topo_create 2 1
# nsenter joins only the network namespace: "ip netns exec" would remount
# /sys and hide bpffs, where bsp-fault pins its rule map.
in_n1() { nsenter --net=/run/netns/n1 "$@"; }

expect_ok in_n1 "$tool" attach eth0
on_exit "in_n1 $tool detach eth0 >/dev/null 2>&1"
# The first matching frames (tag "FLT1" at offset 0): 10 pass, 10 dropped.
expect_ok in_n1 "$tool" rule eth0 0 --offset 0 --mask 0xffffffff --value 0x464c5431 \
	--skip 10 --count 10
# Frame with sequence 50 (be32 at offset 4): dropped.
expect_ok in_n1 "$tool" rule eth0 1 --offset 4 --mask 0xffffffff --value 50
# Bad input gets a clear error.
expect_fail in_n1 "$tool" rule eth0 16
expect_fail in_n1 "$tool" rule eth0 2 --mask 0xff --value 0x100
expect_fail in_n1 "$tool" rule eth0 2 --prob 1.5
expect_fail in_n1 "$tool" rule nosuchdev 0

ready=/tmp/ebpf_fault.ready
rm -f "$ready"
# The receiver stops at the last frame (99, which passes); its idle limit
# only ends a run that lost frames, and must outlast the sender's start (a
# python3 start took over 20 s on the debug kernel under load).
in_n1 /usr/bin/python3 "$frames" recv eth0 120 "$ready" 99 >/tmp/ebpf_fault.seqs &
rx=$!
for _ in $(seq 300); do
	[ -e "$ready" ] && break
	kill -0 "$rx" 2>/dev/null || fail "receiver exited early"
	sleep 0.1
done
[ -e "$ready" ] || fail "receiver did not start"
topo_exec 0 /usr/bin/python3 "$frames" send eth0 "$(topo_mac 1 0)" 100 ||
	fail "sending frames failed"
wait "$rx" || fail "receiver failed"

stats=$(in_n1 "$tool" stats eth0) || fail "stats failed"
log "$stats"
expect_eq "$(grep '^total' <<<"$stats")" "total seen=100 dropped=11" "global counters"
expect_eq "$(grep '^rule 0 ' <<<"$stats")" "rule 0 matched=100 dropped=10" "rule 0 counters"
expect_eq "$(grep '^rule 1 ' <<<"$stats")" "rule 1 matched=1 dropped=1" "rule 1 counters"

expected=$( (seq 0 9; seq 20 49; seq 51 99) | tr '\n' ' ')
got=$(sort -n /tmp/ebpf_fault.seqs | tr '\n' ' ')
expect_eq "$got" "$expected" "sequence numbers that passed the injector"

# IP traffic is untouched while the injector is attached.
expect_ok topo_exec 0 ping -c 2 -W 2 "$(topo_ip 1 0)"

expect_ok in_n1 "$tool" detach eth0
expect_fail in_n1 "$tool" stats eth0
exit 0
