// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP neighbour discovery (Documentation/protocol.rst, discovery).
 *
 * Every net.bsp.hello_interval_ms a work item of each namespace that has
 * a bsp master broadcasts a hello (struct bspe_hello, built by the
 * engine's bspe_hello_build) on every rail that is up. Hellos carry the
 * cluster id, the node id, the rail index, the rail MTU and the
 * namespace's incarnation (new with every module load). A received hello
 * of the same cluster from another node creates or refreshes the peer and
 * marks that (peer, rail) alive; a (peer, rail) not heard from for
 * net.bsp.peer_timeout_ms, and found silent by as many work runs in a row
 * as hello intervals fit in it, is marked dead (counting the runs keeps a
 * node that was not scheduled for a while from taking its own stall for
 * its peers' silence). Both transitions are fed to the
 * protocol engine of every socket of the namespace at once (transport.c),
 * as are our own rails going down or up. A peer whose incarnation changed
 * was reloaded: every channel to it is closed, since its sockets are new.
 *
 * Contexts: the work runs in process context; bsp_discovery_rcv in
 * softirq; bsp_discovery_rail_state under RTNL; bsp_discovery_kick in any
 * context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/workqueue.h>

#include "discovery.h"
#include "peer.h"
#include "rail.h"
#include "transport.h"
#include "auth.h"
#include "engine/bspe_wire.h"

static void bsp_rail_dead(struct bsp_net *bn, u32 node, u8 rail)
{
	bsp_transport_rail_set(bn, node, rail, false);
}

/* A (peer, rail) that stayed silent: not heard for peer_timeout_ms. */
static void bsp_rail_silent(struct bsp_net *bn, u32 node, u8 rail)
{
	atomic_long_inc(&bn->peer_rail_timeouts);
	net_info_ratelimited("node %u silent on rail %u for %u ms: rail dead\n",
			     node, rail, READ_ONCE(bn->peer_timeout_ms));
	bsp_rail_dead(bn, node, rail);
}

static void bsp_rail_alive(struct bsp_net *bn, u32 node, u8 rail)
{
	bsp_transport_rail_set(bn, node, rail, true);
}

/* RCU read side held. */
static void bsp_send_hello(struct bsp_net *bn, struct bsp_master *m,
			   struct bsp_rail *rail)
{
	struct bspe_hello_info hi = { };
	struct net_device *dev = rail->dev;
	u8 key[BSPE_KEY_LEN];
	struct sk_buff *skb;
	bool keyed;

	skb = alloc_skb(bsp_rail_headroom() + BSPE_HELLO_LEN, GFP_ATOMIC);
	if (!skb)
		return;
	skb_reserve(skb, bsp_rail_headroom());
	hi.cluster_id = READ_ONCE(bn->cluster_id);
	hi.node_id = bsp_node_id(bn);
	hi.rail = rail->index;
	hi.nrails = m->nrails;
	hi.mtu = min_t(u32, READ_ONCE(dev->mtu), U16_MAX);
	hi.caps = BSPE_CAP_CSUM;
	hi.incarnation = bn->incarnation;
	hi.hello_seq = ++bn->hello_seq[rail->index];
	hi.interval_ms = min_t(u32, READ_ONCE(bn->hello_interval_ms), U16_MAX);
	keyed = bsp_key_get(bn, key);
	bspe_hello_build(skb_put(skb, BSPE_HELLO_LEN), &hi,
			 keyed ? key : NULL);
	memzero_explicit(key, sizeof(key));
	if (!bsp_rail_xmit(bn, rail->index, dev->broadcast, skb))
		atomic_long_inc(&bn->hello_tx);
}

static void bsp_discovery_work(struct work_struct *work)
{
	struct bsp_net *bn = container_of(to_delayed_work(work),
					  struct bsp_net, discovery_work);
	unsigned int timeout_ms, interval_ms;
	struct bsp_master *m;
	bool rearm;
	int i;

	rcu_read_lock();
	m = rcu_dereference(bn->master);
	rearm = m && m->nrails;
	for (i = 0; m && i < BSP_MAX_RAILS; i++) {
		struct bsp_rail *rail = rcu_dereference(m->rails[i]);

		if (rail && READ_ONCE(rail->up))
			bsp_send_hello(bn, m, rail);
	}
	rcu_read_unlock();

	timeout_ms = READ_ONCE(bn->peer_timeout_ms);
	interval_ms = READ_ONCE(bn->hello_interval_ms);
	bsp_peer_expire(bn, msecs_to_jiffies(timeout_ms),
			DIV_ROUND_UP(timeout_ms, max(interval_ms, 1U)),
			bsp_rail_silent);
	bsp_peer_reap(bn, msecs_to_jiffies(READ_ONCE(bn->peer_expire_ms)));

	if (rearm && !READ_ONCE(bn->exiting))
		queue_delayed_work(system_wq, &bn->discovery_work,
				   msecs_to_jiffies(READ_ONCE(bn->hello_interval_ms)));
}

void bsp_discovery_init_net(struct bsp_net *bn)
{
	INIT_DELAYED_WORK(&bn->discovery_work, bsp_discovery_work);
	bn->exiting = false;
}

void bsp_discovery_exit_net(struct bsp_net *bn)
{
	WRITE_ONCE(bn->exiting, true);
	cancel_delayed_work_sync(&bn->discovery_work);
}

void bsp_discovery_kick(struct bsp_net *bn)
{
	if (!READ_ONCE(bn->exiting))
		mod_delayed_work(system_wq, &bn->discovery_work, 0);
}

void bsp_discovery_rcv(struct bsp_net *bn, struct bsp_rail *rail,
		       struct sk_buff *skb)
{
	struct bspe_hello_info hi;
	bool came_up, restarted, keyed;
	u8 key[BSPE_KEY_LEN];
	int err;

	/* a peer is an interface: never a group address (nor zero) */
	if (!is_valid_ether_addr(eth_hdr(skb)->h_source)) {
		bsp_count_drop(bn, BSP_DROP_SRC_MAC);
		goto out;
	}
	/* with a cluster key, nothing of an unauthenticated hello is used */
	keyed = bsp_key_get(bn, key);
	err = bspe_hello_parse(skb->data, skb->len, &hi, keyed ? key : NULL);
	memzero_explicit(key, sizeof(key));
	if (err) {
		if (err == -EACCES)
			bsp_count_drop(bn, BSP_DROP_AUTH);
		else if (err == -EPROTONOSUPPORT)
			bsp_count_drop(bn, BSP_DROP_VERSION);
		else if (skb->len >= BSPE_HELLO_LEN &&
			 !bspe_csum_ok(skb->data, BSPE_HELLO_LEN))
			bsp_count_drop(bn, BSP_DROP_CSUM);
		else
			bsp_count_drop(bn, BSP_DROP_SHORT);
		goto out;
	}
	if (hi.cluster_id != READ_ONCE(bn->cluster_id)) {
		bsp_count_drop(bn, BSP_DROP_CLUSTER);
		goto out;
	}
	if (hi.node_id == bsp_node_id(bn) || hi.node_id == BSP_NODE_LOCAL) {
		bsp_count_drop(bn, BSP_DROP_SELF);
		goto out;
	}
	if (hi.rail != rail->index) {
		net_warn_ratelimited("node %u announces rail %u on our rail %u (%s): enslave rails in the same order on every node\n",
				     hi.node_id, hi.rail, rail->index,
				     rail->dev->name);
		bsp_count_drop(bn, BSP_DROP_RAIL_MISMATCH);
		goto out;
	}
	if (hi.mtu < BSPE_HDR_LEN + BSP_PEER_MTU_MIN_PAYLOAD) {
		bsp_count_drop(bn, BSP_DROP_SHORT);
		goto out;
	}
	err = bsp_peer_hello(bn, rail->index, eth_hdr(skb)->h_source, &hi,
			     keyed, &came_up, &restarted);
	switch (err) {
	case 0:
		break;
	case -ENOSPC:
		bsp_count_drop(bn, BSP_DROP_PEER_TABLE_FULL);
		goto out;
	case -EALREADY:
		bsp_count_drop(bn, BSP_DROP_REPLAY);
		goto out;
	case -EBUSY:
		net_info_ratelimited("ignored hello of node %u from %pM on rail %u: the node is alive at another MAC or incarnation\n",
				     hi.node_id, eth_hdr(skb)->h_source,
				     rail->index);
		bsp_count_drop(bn, BSP_DROP_PEER_CONFLICT);
		goto out;
	default:
		bsp_count_drop(bn, BSP_DROP_NOMEM);
		goto out;
	}
	atomic_long_inc(&bn->hello_rx);
	if (restarted) {
		/* the peer's sockets are new: our channels to it are stale */
		net_info_ratelimited("node %u restarted; resetting channels to it\n",
				     hi.node_id);
		bsp_transport_node_reset(bn, hi.node_id);
	}
	if (came_up) {
		bsp_rail_alive(bn, hi.node_id, rail->index);
		/* answer at once so the new peer need not wait a period */
		bsp_discovery_kick(bn);
	}
out:
	consume_skb(skb);
}

void bsp_discovery_rail_state(struct bsp_net *bn, u8 index, bool up)
{
	if (up) {
		bsp_peer_rail_up_static(bn, index, bsp_rail_alive);
		bsp_discovery_kick(bn);
	} else {
		bsp_peer_rail_down(bn, index, bsp_rail_dead);
	}
}
