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

struct bspe_hello_info;

extern unsigned int bsp_default_max_peers;

/* Least payload a rail (ours: bsp_rail_add; a peer's: its hellos) carries. */
#define BSP_PEER_MTU_MIN_PAYLOAD	64

/**
 * struct bsp_peer_rail - what the namespace knows about a peer on one of its rails
 * @addr:	the peer's MAC on the rail's segment.
 * @known:	@addr is valid.
 * @alive:	hellos arrive (or static entry).
 * @is_static:	configured, never expires.
 * @mtu:	largest packet the peer accepts here.
 * @last_seen:	jiffies of the last hello or valid frame.
 * @pass_seen:	@last_seen as the previous liveness pass found it.
 * @silent:	liveness passes in a row that found nothing new (saturates).
 * @hello_seq:	last hello sequence seen, 0: none yet.
 */
struct bsp_peer_rail {
	u8 addr[ETH_ALEN];
	bool known;
	bool alive;
	bool is_static;
	u8 silent;
	u16 mtu;
	unsigned long last_seen;
	unsigned long pass_seen;
	u32 hello_seq;
};

/**
 * struct bsp_peer - one node of the cluster
 * @hnode:	entry in bsp_net.peers (RCU).
 * @rcu:	frees the entry after a grace period.
 * @node_id:	the node's id.
 * @incarnation: incarnation of the peer's AF_BSP state.
 * @nrails:	rails the peer announces.
 * @heard:	a hello arrived (@incarnation is valid).
 * @down_since:	jiffies its last live rail died.
 * @rails:	the peer on each of OUR rails, by our rail index.
 */
struct bsp_peer {
	struct hlist_node hnode;
	struct rcu_head rcu;
	u32 node_id;
	u32 incarnation;
	u8 nrails;
	bool heard;
	unsigned long down_since;
	struct bsp_peer_rail rails[BSP_MAX_RAILS];
};

/**
 * bsp_peer_init_net() - set up a namespace's peer table
 * @bn: the namespace.
 */
void bsp_peer_init_net(struct bsp_net *bn);

/**
 * bsp_peer_exit_net() - free a namespace's peer table
 * @bn: the namespace.
 */
void bsp_peer_exit_net(struct bsp_net *bn);

/**
 * bsp_peer_lookup_rcu() - find a peer
 * @bn: the namespace.
 * @node_id: the node.
 *
 * Context: RCU read side held by the caller.
 * Return: the peer, or NULL.
 */
struct bsp_peer *bsp_peer_lookup_rcu(struct bsp_net *bn, u32 node_id);

/**
 * bsp_peer_reachable() - whether a node can be reached
 * @bn: the namespace.
 * @node_id: the node.
 * @grace: jiffies a node that lost its last live rail still counts.
 *
 * Hellos that come late under load make a rail look dead for a moment; the
 * engine holds messages for such a node and fails them only after the same
 * grace (net.bsp unreach_ms).
 *
 * Context: any context.
 * Return: true if @node_id has a live rail, or lost its last live rail
 * less than @grace jiffies ago.
 */
bool bsp_peer_reachable(struct bsp_net *bn, u32 node_id, unsigned long grace);

/**
 * bsp_peer_hello() - record a hello
 * @bn: the namespace.
 * @rail: our rail it was heard on.
 * @addr: the unicast MAC it came from.
 * @hi: its contents (node, incarnation, rails, MTU, sequence).
 * @authed: its keyed MAC was verified (authenticated mode).
 * @came_up: set when this rail of the peer turned alive.
 * @restarted: set when the peer's incarnation changed (its module was
 *             reloaded).
 *
 * Context: softirq.
 * Return: 0 or, with nothing changed:
 *   -ENOSPC   the table is full (net.bsp.max_peers);
 *   -ENOMEM   no memory;
 *   -EALREADY a replay: hello_seq not newer than the last one of this
 *             (node, rail, incarnation), or (authenticated) an older
 *             incarnation of a peer that is alive;
 *   -EBUSY    unauthenticated and unproven: it would move a live
 *             (peer, rail) to another MAC, or give a live peer a new
 *             incarnation from a MAC that is not the one known for it.
 */
int bsp_peer_hello(struct bsp_net *bn, u8 rail, const u8 *addr,
		   const struct bspe_hello_info *hi, bool authed,
		   bool *came_up, bool *restarted);

/**
 * bsp_peer_addr_ok() - whether a frame comes from a known address
 * @bn: the namespace.
 * @node_id: the node the frame claims to come from.
 * @rail: our rail it arrived on.
 * @addr: its source MAC.
 *
 * Frames from any other source are refused before any state is looked at
 * (we could not answer them anyway).
 *
 * Context: RCU read side held.
 * Return: true if (@node_id, @rail) is in the table with the MAC @addr.
 */
bool bsp_peer_addr_ok(struct bsp_net *bn, u32 node_id, u8 rail,
		      const u8 *addr);

/**
 * bsp_peer_touch() - a protocol frame from a peer was accepted
 * @bn: the namespace.
 * @node_id: the peer.
 * @rail: our rail it arrived on.
 *
 * The frame proves that (peer, rail) alive as well as a hello would, so a
 * rail whose hellos wait behind bulk data in a deep queue does not expire.
 *
 * Context: any context.
 */
void bsp_peer_touch(struct bsp_net *bn, u32 node_id, u8 rail);

/**
 * bsp_peer_mtu() - the MTU a peer accepts
 * @bn: the namespace.
 * @node_id: the peer.
 *
 * Context: any context.
 * Return: the smallest MTU @node_id announces on any of its live rails, 0
 * if none is known (the peer is not reachable).
 */
u32 bsp_peer_mtu(struct bsp_net *bn, u32 node_id);

/**
 * bsp_peers_min_mtu() - the MTU every peer accepts
 * @bn: the namespace.
 *
 * Context: any context.
 * Return: the smallest MTU any peer announces on a live rail, 0 if none.
 */
u32 bsp_peers_min_mtu(struct bsp_net *bn);

/**
 * bsp_peer_add_static() - configure a static entry (a proc.c write)
 * @bn: the namespace.
 * @node_id: the peer.
 * @rail: our rail.
 * @addr: the peer's MAC on it.
 * @mtu: the largest packet it accepts there.
 *
 * Context: process context.
 * Return: 0 or a negative errno (-EINVAL, -ENOSPC, -ENOMEM).
 */
int bsp_peer_add_static(struct bsp_net *bn, u32 node_id, u8 rail,
			const u8 *addr, u16 mtu);

/**
 * bsp_peer_del() - forget a peer (a proc.c write)
 * @bn: the namespace.
 * @node_id: the peer.
 *
 * Context: process context.
 * Return: 0, or -ENOENT if it is not in the table.
 */
int bsp_peer_del(struct bsp_net *bn, u32 node_id);

/**
 * bsp_peer_expire() - one liveness pass: mark silent rails dead
 * @bn: the namespace.
 * @timeout: jiffies without a hello or frame after which a live rail is dead.
 * @passes: passes in a row that must find the rail silent as well.
 * @down: called as @down(bn, node, rail) for each (with no lock held).
 *
 * Silence is what this node observed while it ran: a rail dies only when
 * @timeout has passed since it was last heard AND @passes calls in a row
 * (one per hello interval) found nothing new. A node that was not
 * scheduled for seconds (a loaded or emulated machine) runs one late pass
 * and has not observed a silent peer: the frames of that time are still
 * in its queues. Returns the number of rails marked dead.
 */
unsigned int bsp_peer_expire(struct bsp_net *bn, unsigned long timeout,
			     unsigned int passes,
			     void (*down)(struct bsp_net *bn, u32 node, u8 rail));

/**
 * bsp_peer_rail_down() - one of our rails went down
 * @bn: the namespace.
 * @rail: the rail; every peer on it is dead there.
 * @down: called as @down(bn, node, rail) for each.
 */
void bsp_peer_rail_down(struct bsp_net *bn, u8 rail,
			void (*down)(struct bsp_net *bn, u32 node, u8 rail));

/**
 * bsp_peer_reap() - shrink the table
 * @bn: the namespace.
 * @idle: jiffies since the last hello.
 *
 * Forgets peers that have no live and no static rail and were last heard
 * more than @idle jiffies ago.
 *
 * Context: process context.
 */
void bsp_peer_reap(struct bsp_net *bn, unsigned long idle);

/**
 * bsp_peer_rail_up_static() - one of our rails came up
 * @bn: the namespace.
 * @rail: the rail; static peers on it are alive again.
 * @up: called as @up(bn, node, rail) for each.
 */
void bsp_peer_rail_up_static(struct bsp_net *bn, u8 rail,
			     void (*up)(struct bsp_net *bn, u32 node, u8 rail));

/**
 * bsp_peer_forget_rail() - one of our rails went away
 * @bn: the namespace.
 * @rail: the rail; every peer address learnt on it is forgotten.
 */
void bsp_peer_forget_rail(struct bsp_net *bn, u8 rail);

#endif /* _BSP_PEER_H */
