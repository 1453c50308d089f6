#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Native XDP on a rail veth works in the guest: a program dropping IPv4 ICMP,
# attached with `ip link set dev eth0 xdpdrv obj ... sec xdp` on node 1, cuts
# ping to node 1 on that rail only; detached, ping works again.
. "$BSPVM_REPO/tests/vm/lib/topology.sh"
need_cmd clang ip ping

src=$TMPDIR/xdp_drop_icmp.c
obj=$TMPDIR/xdp_drop_icmp.o
cat >"$src" <<'PROG'
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

SEC("xdp")
int xdp_drop_icmp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	return ip->protocol == IPPROTO_ICMP ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
PROG
out=$(clang -O2 -g -target bpf -I/usr/include/x86_64-linux-gnu -c "$src" -o "$obj" 2>&1) ||
	fail "clang -target bpf failed: $out"

topo_create 2 2
topo_ping 0 1 0 || fail "ping n0 -> n1 over rail 0 failed before XDP"

out=$(topo_exec 1 ip link set dev eth0 xdpdrv obj "$obj" sec xdp 2>&1) ||
	fail "attaching native XDP to eth0 of n1 failed: $out"
[[ "$(ip -n n1 link show dev eth0)" == *"prog/xdp id"* ]] ||
	fail "eth0 of n1 shows no native XDP program: $(ip -n n1 link show dev eth0)"
topo_ping 0 1 0 && fail "ping n0 -> n1 over rail 0 passed through the ICMP-dropping XDP program"
topo_ping 0 1 1 || fail "ping n0 -> n1 over rail 1 failed; XDP is only on rail 0"

topo_exec 1 ip link set dev eth0 xdpdrv off || fail "detaching XDP failed"
[[ "$(ip -n n1 link show dev eth0)" != *"prog/xdp"* ]] || fail "XDP program still attached"
topo_ping 0 1 0 || fail "ping n0 -> n1 over rail 0 failed after detaching XDP"
exit 0
