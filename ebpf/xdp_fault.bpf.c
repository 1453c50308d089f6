// SPDX-License-Identifier: GPL-2.0
/*
 * XDP fault injector for AF_BSP rails: drops exactly the AF_BSP frames the
 * rule table (bsp_fault.h) names, so that tests can lose chosen packets
 * before an skb exists. Non-AF_BSP traffic always passes.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xdp/xdp_helpers.h>

#include "bsp_fault.h"

#ifndef ETH_P_BSP
#define ETH_P_BSP 0x88B5
#endif

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BSP_FAULT_MAX_RULES + 1);
	__type(key, __u32);
	__type(value, struct bsp_fault_slot);
} rules SEC(".maps");

/* Returns 1 when this frame must be dropped by rule @st. */
static __always_inline int rule_decides_drop(struct bsp_fault_slot *st, __u32 word)
{
	int drop = 0;
	__u32 rnd = bpf_get_prandom_u32();

	bpf_spin_lock(&st->lock);
	if (st->rule.enabled && (word & st->rule.mask) == st->rule.value) {
		st->counters.matched++;
		if (st->rule.skip) {
			st->rule.skip--;
		} else if (st->rule.count &&
			   (st->rule.prob == BSP_FAULT_ALWAYS ||
			    rnd < st->rule.prob)) {
			if (st->rule.count != BSP_FAULT_FOREVER)
				st->rule.count--;
			st->counters.dropped++;
			drop = 1;
		}
	}
	bpf_spin_unlock(&st->lock);
	return drop;
}

/*
 * Returns 1 when rule @i drops this frame. Not inlined, to keep the program
 * small; static, so the verifier checks it in its caller's context and needs
 * no kernel BTF (a global function's context argument is typed against the
 * kernel's BTF, which a kernel built without CONFIG_DEBUG_INFO_BTF, such as
 * the debug kernel of tests/vm/debug-kernel, does not have).
 */
static __noinline int bsp_fault_rule_drops(struct xdp_md *ctx, __u32 i)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bsp_fault_slot *st;
	__u32 off, word = 0;
	__u8 *p;

	st = bpf_map_lookup_elem(&rules, &i);
	if (!st || !st->rule.enabled)
		return 0;
	if (st->rule.mask) {
		off = st->rule.offset & 0xfff;
		p = (__u8 *)data + sizeof(struct ethhdr) + off;
		if ((void *)(p + 4) > data_end)
			return 0;
		word = ((__u32)p[0] << 24) | ((__u32)p[1] << 16) |
		       ((__u32)p[2] << 8) | p[3];
	}
	return rule_decides_drop(st, word);
}

/*
 * Under libxdp's dispatcher (tools/bsp-fault) the injector runs before the
 * AF_BSP pre-filter (priority 20), so that it sees every frame; frames it
 * passes go on to the next program.
 */
struct {
	__uint(priority, 10);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_bsp_fault);

SEC("xdp")
int xdp_bsp_fault(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct bsp_fault_slot *global;
	__u32 key = BSP_FAULT_GLOBAL;
	int drop = 0;
	__u32 i;

	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_BSP))
		return XDP_PASS;

	global = bpf_map_lookup_elem(&rules, &key);
	if (!global)
		return XDP_PASS;

	for (i = 0; i < BSP_FAULT_MAX_RULES; i++) {
		if (bsp_fault_rule_drops(ctx, i)) {
			drop = 1;
			break;
		}
	}

	bpf_spin_lock(&global->lock);
	global->counters.matched++;
	if (drop)
		global->counters.dropped++;
	bpf_spin_unlock(&global->lock);
	return drop ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
