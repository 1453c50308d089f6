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

/* Least payload a rail (ours: bsp_rail_add; a peer's: its hellos) carries. */
#define BSP_PEER_MTU_MIN_PAYLOAD	64

/* What the namespace knows about one peer on one of its own rails. */
struct bsp_peer_rail {
	u8 addr[ETH_ALEN];	/* peer's MAC on the rail's segment */
	bool known;		/* addr is valid */
	bool alive;		/* hellos arrive (or static entry) */
	bool is_static;		/* configured, never expires */
	u16 mtu;		/* largest packet the peer accepts here */
	unsigned long last_seen;	/* jiffies of the last hello */
	u32 hello_seq;		/* last hello sequence seen, 0: none yet */
};

struct bsp_peer {
	struct hlist_node hnode;	/* bsp_net.peers, RCU */
	struct rcu_head rcu;
	u32 node_id;
	u32 incarnation;		/* of the peer's AF_BSP state */
	u8 nrails;			/* rails the peer announces */
	bool heard;			/* a hello arrived (incarnation valid) */
	unsigned long down_since;	/* jiffies its last live rail died */
	struct bsp_peer_rail rails[BSP_MAX_RAILS];	/* by OUR rail index */
};

void bsp_peer_init_net(struct bsp_net *bn);
void bsp_peer_exit_net(struct bsp_net *bn);

/* RCU read side held by the caller. */
struct bsp_peer *bsp_peer_lookup_rcu(struct bsp_net *bn, u32 node_id);
/*
 * Any context: true if @node_id has a live rail, or lost its last live
 * rail less than @grace jiffies ago (hellos that come late under load make
 * a rail look dead for a moment; the engine holds messages for such a node
 * and fails them only after the same grace, net.bsp unreach_ms).
 */
bool bsp_peer_reachable(struct bsp_net *bn, u32 node_id, unsigned long grace);

/*
 * Record a hello from @node_id heard on our rail @rail from the unicast
 * MAC @addr; @authed: its keyed MAC was verified (authenticated mode).
 * Softirq context. Returns 0 or, with nothing changed:
 *   -ENOSPC   the table is full (net.bsp.max_peers);
 *   -ENOMEM   no memory;
 *   -EALREADY a replay: hello_seq not newer than the last one of this
 *             (node, rail, incarnation), or (authenticated) an older
 *             incarnation of a peer that is alive;
 *   -EBUSY    unauthenticated and unproven: it would move a live
 *             (peer, rail) to another MAC, or give a live peer a new
 *             incarnation from a MAC that is not the one known for it.
 * *@came_up is set when this rail of the peer turned alive, *@restarted
 * when the peer's incarnation changed (its module was reloaded).
 */
struct bspe_hello_info;
int bsp_peer_hello(struct bsp_net *bn, u8 rail, const u8 *addr,
		   const struct bspe_hello_info *hi, bool authed,
		   bool *came_up, bool *restarted);

/*
 * RCU read side held: true if (@node_id, @rail) is in the table with the
 * MAC @addr. Frames from any other source are refused before any state
 * is looked at (we could not answer them anyway).
 */
bool bsp_peer_addr_ok(struct bsp_net *bn, u32 node_id, u8 rail,
		      const u8 *addr);

/*
 * Any context: a protocol frame from @node_id arrived on our rail @rail
 * and the engine accepted it; it proves that (peer, rail) alive as well
 * as a hello would, so a rail whose hellos wait behind bulk data in a
 * deep queue does not expire.
 */
void bsp_peer_touch(struct bsp_net *bn, u32 node_id, u8 rail);

/*
 * Smallest MTU @node_id announces on any of its live rails, 0 if none is
 * known (the peer is not reachable). Any context.
 */
u32 bsp_peer_mtu(struct bsp_net *bn, u32 node_id);
/* Smallest MTU any peer announces on a live rail, 0 if none. Any context. */
u32 bsp_peers_min_mtu(struct bsp_net *bn);

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
/*
 * Forget peers that have no live and no static rail and were last heard
 * more than @idle jiffies ago, so the table shrinks. Process context.
 */
void bsp_peer_reap(struct bsp_net *bn, unsigned long idle);
/* Our rail @rail came up: static peers on it are alive again (reported). */
void bsp_peer_rail_up_static(struct bsp_net *bn, u8 rail,
			     void (*up)(struct bsp_net *bn, u32 node, u8 rail));
/* Our rail @rail went away: forget every peer address learnt on it. */
void bsp_peer_forget_rail(struct bsp_net *bn, u8 rail);

#endif /* _BSP_PEER_H */
