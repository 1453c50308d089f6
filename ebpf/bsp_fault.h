/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Shared between xdp_fault.bpf.c and its loader tools/bsp-fault: the rule
 * table of the XDP fault injector.
 *
 * A rule looks at AF_BSP frames (EtherType ETH_P_BSP) only. It matches when
 * the 32-bit big-endian word at byte @offset of the AF_BSP header (the first
 * byte after the Ethernet header), masked with @mask, equals @value; a mask
 * of 0 matches every AF_BSP frame. Of the matching frames, the first @skip
 * pass, then the next @count are dropped (BSP_FAULT_FOREVER: all of them),
 * each with probability @prob / 2^32 (BSP_FAULT_ALWAYS: every one).
 */
#ifndef BSP_FAULT_H
#define BSP_FAULT_H

#define BSP_FAULT_MAX_RULES	16
#define BSP_FAULT_FOREVER	0xffffffffU
#define BSP_FAULT_ALWAYS	0xffffffffU

struct bsp_fault_rule {
	__u32 enabled;
	__u32 offset;
	__u32 mask;
	__u32 value;
	__u32 skip;
	__u32 count;
	__u32 prob;
	__u32 pad;
};

struct bsp_fault_counters {
	__u64 matched;
	__u64 dropped;
};

/*
 * One slot of the "rules" array map: the lock serialises the XDP program on
 * all CPUs and the loader (which updates with BPF_F_LOCK).
 */
struct bsp_fault_slot {
	struct bpf_spin_lock lock;
	struct bsp_fault_rule rule;
	struct bsp_fault_counters counters;
};

/* Global counters, index BSP_FAULT_MAX_RULES of the counters map. */
#define BSP_FAULT_GLOBAL	BSP_FAULT_MAX_RULES

#endif /* BSP_FAULT_H */
