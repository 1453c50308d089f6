/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Shared between xdp_bsp.bpf.c (the XDP pre-filter of the rails) and its
 * loader tools/bsp-xdp and tools/bsp-ss: counters and configuration.
 * The state the module keeps (node, cluster, rails, bound ports) is
 * struct bsp_xdp_state of <linux/bsp.h>.
 */
#ifndef BSP_XDP_H
#define BSP_XDP_H

/*
 * Counters, the one value of the per-CPU array "bsp_xdp_counters" (sum
 * the CPUs). seen counts AF_BSP frames on a rail while the module keeps
 * the state; every one of them ends in exactly one of hello, passed,
 * steered or a drop_* counter. inactive counts AF_BSP frames passed unexamined (no
 * state registered, or the device is not a rail of the namespace).
 */
struct bsp_xdp_counters {
	__u64 seen;
	__u64 hello;		/* valid hellos, handed to the stack */
	__u64 passed;		/* valid DATA/ACK/PROD, handed to the stack here */
	__u64 steered;		/* valid, redirected to the channel's CPU */
	__u64 drop_short;	/* shorter than its header (+ payload) */
	__u64 drop_version;	/* another protocol version */
	__u64 drop_type;	/* unknown packet type */
	__u64 drop_cluster;	/* hello of another cluster id */
	__u64 drop_addr;	/* destination node is not this node */
	__u64 drop_no_port;	/* no socket bound to the destination port */
	__u64 inactive;
};

#define BSP_XDP_NCOUNTERS (sizeof(struct bsp_xdp_counters) / sizeof(__u64))

/* Most CPUs the pre-filter steers to (entries of the cpumap). */
#define BSP_XDP_MAX_CPUS	64

/*
 * Configuration written by bsp-xdp, the one value of the array
 * "bsp_xdp_conf": @ncpus > 0 steers valid DATA/ACK/PROD frames to CPU
 * cpus[hash(src node, src port, dst port) % @ncpus] of the cpumap.
 */
struct bsp_xdp_conf {
	__u32 ncpus;
	__u32 pad;
};

#endif /* BSP_XDP_H */
