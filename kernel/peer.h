/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_BSP peer table: the nodes of the cluster this namespace knows, learnt
 * from hellos (discovery.c) or configured statically, with per-rail
 * addresses and liveness.
 */
#ifndef _BSP_PEER_H
#define _BSP_PEER_H

#include <linux/if_ether.h>
#include <linux/rcupdate.h>

#include "af_bsp.h"

extern unsigned int bsp_default_max_peers;

/* What the namespace knows about one peer on one of its own rails. */
struct bsp_peer_rail {
	u8 addr[ETH_ALEN];	/* peer's MAC on the rail's segment */
	bool known;		/* addr is valid */
	bool alive;		/* hellos arrive (or static entry) */
	bool is_static;		/* configured, never expires */
	u16 mtu;		/* largest packet the peer accepts here */
	unsigned long last_seen;	/* jiffies of the last hello */
	u32 hello_seq;		/* last hello sequence seen */
};

struct bsp_peer {
	struct hlist_node hnode;	/* bsp_net.peers, RCU */
	struct rcu_head rcu;
	u32 node_id;
	u32 incarnation;		/* of the peer's AF_BSP state */
	u8 nrails;			/* rails the peer announces */
	bool heard;			/* a hello arrived (incarnation valid) */
	struct bsp_peer_rail rails[BSP_MAX_RAILS];	/* by OUR rail index */
};

void bsp_peer_init_net(struct bsp_net *bn);
void bsp_peer_exit_net(struct bsp_net *bn);

/* RCU read side held by the caller. */
struct bsp_peer *bsp_peer_lookup_rcu(struct bsp_net *bn, u32 node_id);
/* Any context: true if @node_id has at least one live rail. */
bool bsp_peer_reachable(struct bsp_net *bn, u32 node_id);

/*
 * Record a hello from @node_id heard on our rail @rail from @addr.
 * Softirq context. Returns 0, or -ENOSPC when the table is full.
 * *@came_up is set when this rail of the peer turned alive, *@restarted
 * when the peer's incarnation changed (its module was reloaded).
 */
struct bspe_hello_info;
int bsp_peer_hello(struct bsp_net *bn, u8 rail, const u8 *addr,
		   const struct bspe_hello_info *hi, bool *came_up,
		   bool *restarted);

/*
 * Any context: a protocol frame from @node_id arrived on our rail @rail;
 * it proves that (peer, rail) alive as well as a hello would, so a rail
 * whose hellos wait behind bulk data in a deep queue does not expire.
 */
void bsp_peer_touch(struct bsp_net *bn, u32 node_id, u8 rail);

/* Static entries (proc.c writes). Process context. */
int bsp_peer_add_static(struct bsp_net *bn, u32 node_id, u8 rail,
			const u8 *addr, u16 mtu);
int bsp_peer_del(struct bsp_net *bn, u32 node_id);

/*
 * Mark live rails not heard from for @timeout jiffies dead; call
 * @down(bn, node, rail) for each (with no lock held).
 */
void bsp_peer_expire(struct bsp_net *bn, unsigned long timeout,
		     void (*down)(struct bsp_net *bn, u32 node, u8 rail));
/* Our rail @rail went down: every peer on it is dead there (reported). */
void bsp_peer_rail_down(struct bsp_net *bn, u8 rail,
			void (*down)(struct bsp_net *bn, u32 node, u8 rail));
/* Our rail @rail came up: static peers on it are alive again (reported). */
void bsp_peer_rail_up_static(struct bsp_net *bn, u8 rail,
			     void (*up)(struct bsp_net *bn, u32 node, u8 rail));
/* Our rail @rail went away: forget every peer address learnt on it. */
void bsp_peer_forget_rail(struct bsp_net *bn, u8 rail);

#endif /* _BSP_PEER_H */
