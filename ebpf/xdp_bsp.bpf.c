// SPDX-License-Identifier: GPL-2.0
/*
 * XDP pre-filter of the AF_BSP rails (Documentation/kernel-design.rst, "XDP
 * receive fast path"): frames of other EtherTypes pass at once; AF_BSP
 * frames that the module would drop for their length, version, type,
 * cluster, destination node or an unbound destination port are dropped
 * here, before the stack builds an skb, and counted by reason; valid
 * DATA/ACK/PROD frames are steered through a cpumap so that one channel
 * (source node, source port, destination port) is always processed on the
 * same CPU and several channels spread over the CPUs.
 *
 * The module keeps the state map (struct bsp_xdp_state of <linux/bsp.h>)
 * current; the header layout comes from the engine's bspe_wire.h, so a
 * new wire version changes this program with it.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xdp/xdp_helpers.h>

#include <linux/bsp.h>
#include "engine/bspe_wire.h"
#include "bsp_xdp.h"

/*
 * Every map is pinned by name in the namespace's directory (tools/bsp-xdp),
 * so the programs of all rails of a node share them.
 *
 * The state: the module writes it (kernel/xdp.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_RDONLY);
	__type(key, __u32);
	__type(value, struct bsp_xdp_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bsp_xdp_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bsp_xdp_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bsp_xdp_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bsp_xdp_conf);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bsp_xdp_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, BSP_XDP_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bsp_xdp_cpus SEC(".maps");

/* frames steered to each cpumap slot (tests check a channel stays on one) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BSP_XDP_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bsp_xdp_cpu_hits SEC(".maps");

/* after the fault injector (priority 10), which must see frames first */
struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_bsp_filter);

/*
 * The module writes the state concurrently, each field with one aligned
 * store; the program uses each field once, and a BPF load of an aligned
 * 4- or 8-byte field is a single instruction, so it sees either value.
 * (clang 14 cannot lower atomic loads for BPF; volatile is not kernel style.)
 */

static __always_inline int drop(__u64 *reason)
{
	(*reason)++;
	return XDP_DROP;
}

static __always_inline int on_rail(const struct bsp_xdp_state *st,
				   __u32 ifindex)
{
	__u32 r;
	int i;

	for (i = 0; i < BSP_XDP_MAX_RAILS; i++) {
		r = st->rail_ifindex[i];
		if (r && r == ifindex)
			return 1;
	}
	return 0;
}

/* The channel's slot: a multiplicative hash of (src node, src port, dst port). */
static __always_inline __u32 channel_hash(const struct bspe_hdr *h)
{
	__u32 a = bpf_ntohl(h->src_node) * 0x9e3779b1U;
	__u32 b = (((__u32)bpf_ntohs(h->src_port) << 16) |
		   bpf_ntohs(h->dst_port)) * 0x85ebca6bU;

	a ^= b;
	a ^= a >> 15;
	return a * 0xc2b2ae35U;
}

static __always_inline int steer(struct bsp_xdp_counters *c,
				 const struct bspe_hdr *h)
{
	__u32 zero = 0, slot;
	struct bsp_xdp_conf *conf = bpf_map_lookup_elem(&bsp_xdp_conf, &zero);
	__u64 *hits;
	long ret;

	if (!conf || !conf->ncpus || conf->ncpus > BSP_XDP_MAX_CPUS) {
		c->passed++;
		return XDP_PASS;
	}
	slot = (channel_hash(h) >> 8) % conf->ncpus;
	ret = bpf_redirect_map(&bsp_xdp_cpus, slot, XDP_PASS);
	if (ret != XDP_REDIRECT) {
		c->passed++;
		return XDP_PASS;
	}
	hits = bpf_map_lookup_elem(&bsp_xdp_cpu_hits, &slot);
	if (hits)
		__sync_fetch_and_add(hits, 1);
	c->steered++;
	return XDP_REDIRECT;
}

SEC("xdp")
int xdp_bsp_filter(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	const struct bsp_xdp_state *st;
	struct bsp_xdp_counters *c;
	const struct bspe_hello *hello;
	const struct bspe_hdr *h;
	__u8 *pkt = (__u8 *)(eth + 1);
	__u32 zero = 0, len, port;
	__u64 word;

	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_BSP))
		return XDP_PASS;
	/* per-CPU counters: the program runs with migration disabled */
	c = bpf_map_lookup_elem(&bsp_xdp_counters, &zero);
	st = bpf_map_lookup_elem(&bsp_xdp_state, &zero);
	if (!c || !st)
		return XDP_PASS;
	if (!st->active || !on_rail(st, ctx->ingress_ifindex)) {
		c->inactive++;
		return XDP_PASS;
	}
	c->seen++;
	len = (__u32)((long)data_end - (long)pkt);

	/* the first 4 bytes are common to every version (protocol.rst) */
	if (pkt + 4 > (__u8 *)data_end)
		return drop(&c->drop_short);
	if (pkt[0] != BSPE_VERSION)
		return drop(&c->drop_version);

	switch (pkt[1]) {
	case BSPE_T_HELLO:
		hello = (const void *)pkt;
		if ((void *)(hello + 1) > data_end)
			return drop(&c->drop_short);
		if (bpf_ntohl(hello->cluster_id) != st->cluster_id)
			return drop(&c->drop_cluster);
		c->hello++;
		return XDP_PASS;
	case BSPE_T_DATA:
	case BSPE_T_ACK:
	case BSPE_T_PROD:
		break;
	default:
		return drop(&c->drop_type);
	}

	h = (const void *)pkt;
	if ((void *)(h + 1) > data_end)
		return drop(&c->drop_short);
	if (len < BSPE_HDR_LEN + (__u32)bpf_ntohs(h->payload_len))
		return drop(&c->drop_short);
	if (bpf_ntohl(h->dst_node) != st->node_id)
		return drop(&c->drop_addr);
	port = bpf_ntohs(h->dst_port);
	word = st->ports[(port / 64) & (BSP_XDP_PORT_WORDS - 1)];
	if (!(word & (1ULL << (port % 64))))
		return drop(&c->drop_no_port);
	return steer(c, h);
}

char LICENSE[] SEC("license") = "GPL";
