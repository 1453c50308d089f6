// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP rails: Ethernet devices enslaved to the namespace's bsp master.
 *
 * Each rail receives AF_BSP frames through its own packet_type (type
 * ETH_P_BSP, bound to the rail device), not an rx_handler, so the device
 * keeps working for IP and everything else. A netdevice notifier follows
 * the rails: going down or losing carrier takes the rail out of service
 * at once (the engine moves its outstanding packets to the surviving
 * rails), coming up sends hellos immediately, an address change is
 * announced by a hello, MTU changes take effect on the next frame, and
 * unregistering (or moving to another namespace) releases the rail.
 *
 * Contexts: add/del/release and the notifier run under RTNL (process
 * context). bsp_rail_rcv runs in softirq. bsp_rail_xmit runs in any
 * context under RCU (process, softirq, hrtimer softirq).
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "rail.h"
#include "discovery.h"
#include "transport.h"
#include "peer.h"
#include "xdp.h"
#include "offload.h"
#include "engine/bspe_wire.h"

static bool bsp_rail_oper_up(const struct net_device *dev)
{
	return netif_running(dev) && netif_carrier_ok(dev);
}

void bsp_master_update_carrier(struct bsp_master *m)
{
	bool any = false;
	int i;

	ASSERT_RTNL();
	for (i = 0; i < BSP_MAX_RAILS; i++) {
		struct bsp_rail *r = rtnl_dereference(m->rails[i]);

		if (r && r->up)
			any = true;
	}
	if (any)
		netif_carrier_on(m->dev);
	else
		netif_carrier_off(m->dev);
}

unsigned int bsp_rail_headroom(void)
{
	/* LL_MAX_HEADER covers Ethernet plus any stacked tag */
	return LL_MAX_HEADER;
}

/*
 * Softirq: frame @skb (data at its AF_BSP header) arrived on @rail, or is
 * one of a super-frame's frames, which arrive one after the other, in
 * order, as if each had come alone. Frames for the transport are queued on
 * @list, which bsp_rail_rcv hands over once the super-frame is taken apart.
 */
static void bsp_rail_rcv_frame(struct bsp_rail *rail, struct sk_buff *skb,
			       struct sk_buff_head *list)
{
	struct bsp_master *m = rail->master;
	struct bsp_net *bn = m->bn;
	int type;

	/*
	 * Only the header needs to be linear: DATA payload is copied from
	 * the frame's pages into the message (bsp_transport_rcv).
	 */
	if (!pskb_may_pull(skb, min_t(unsigned int, skb->len, BSPE_HDR_LEN))) {
		bsp_count_drop(bn, BSP_DROP_NOMEM);
		goto drop;
	}
	atomic64_inc(&m->rx_packets);
	atomic64_add(skb->len, &m->rx_bytes);

	type = bspe_pkt_type(skb->data, skb->len);
	if (type < 0) {
		bsp_count_drop(bn, type == -EPROTONOSUPPORT ?
			       BSP_DROP_VERSION : BSP_DROP_SHORT);
		goto drop;
	}
	if (type != BSPE_T_DATA && type != BSPE_T_ACK &&
	    type != BSPE_T_PROD && type != BSPE_T_HELLO) {
		bsp_count_drop(bn, BSP_DROP_TYPE);
		goto drop;
	}
	if (type == BSPE_T_HELLO) {
		if (skb_linearize(skb)) {
			bsp_count_drop(bn, BSP_DROP_NOMEM);
			goto drop;
		}
		/* in order, and discovery may take transport locks */
		bsp_transport_rcv_list(bn, rail->index, list);
		bsp_discovery_rcv(bn, rail, skb);
		return;
	}
	bsp_transport_rcv_add(bn, list, skb);
	return;
drop:
	kfree_skb(skb);
}

/* Softirq: an AF_BSP frame, or a super-frame (offload.c), arrived on a rail. */
static int bsp_rail_rcv(struct sk_buff *skb, struct net_device *dev,
			struct packet_type *pt, struct net_device *orig_dev)
{
	struct bsp_rail *rail = pt->af_packet_priv;
	struct bsp_master *m = rail->master;
	struct bsp_net *bn = m->bn;
	struct sk_buff_head list;
	struct sk_buff *next;

	if (skb->pkt_type == PACKET_OTHERHOST ||
	    skb->pkt_type == PACKET_LOOPBACK) {
		kfree_skb(skb);
		return NET_RX_DROP;
	}
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb) {
		bsp_count_drop(bn, BSP_DROP_NOMEM);
		return NET_RX_DROP;
	}
	/* the rail may be leaving: its pointer is cleared before removal */
	if (rcu_access_pointer(m->rails[rail->index]) != rail) {
		bsp_count_drop(bn, BSP_DROP_NOT_RAIL);
		kfree_skb(skb);
		return NET_RX_DROP;
	}
	skb = bsp_gso_rx_split(bn, skb);
	if (!skb)
		return NET_RX_DROP;
	__skb_queue_head_init(&list);
	skb_list_walk_safe(skb, skb, next) {
		skb_mark_not_on_list(skb);
		bsp_rail_rcv_frame(rail, skb, &list);
	}
	bsp_transport_rcv_list(bn, rail->index, &list);
	return NET_RX_SUCCESS;
}

int bsp_rail_xmit(struct bsp_net *bn, u8 index, const u8 *dst,
		  struct sk_buff *skb)
{
	struct bsp_master *m = rcu_dereference(bn->master);
	struct bsp_rail *rail;
	struct net_device *dev;
	unsigned int len = skb->len;
	unsigned int segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	int err;

	rail = m && index < BSP_MAX_RAILS ?
	       rcu_dereference(m->rails[index]) : NULL;
	if (!rail || !READ_ONCE(rail->up)) {
		err = -ENETDOWN;
		goto drop;
	}
	dev = rail->dev;
	/* a super-frame's gso_size is its longest frame (offload.c) */
	if ((skb_is_gso(skb) ? skb_shinfo(skb)->gso_size : len) >
	    READ_ONCE(dev->mtu)) {
		err = -EMSGSIZE;
		goto drop;
	}
	skb->dev = dev;
	skb->protocol = htons(ETH_P_BSP);
	skb_reset_network_header(skb);
	err = dev_hard_header(skb, dev, ETH_P_BSP, dst, dev->dev_addr, len);
	if (err < 0)
		goto drop;
	err = dev_queue_xmit(skb);
	if (err != NET_XMIT_SUCCESS && err != NET_XMIT_CN) {
		atomic64_inc(&m->tx_dropped);
		return -ENOBUFS;
	}
	atomic64_add(segs, &m->tx_packets);
	atomic64_add(len, &m->tx_bytes);
	return 0;
drop:
	if (m)
		atomic64_inc(&m->tx_dropped);
	kfree_skb(skb);
	return err;
}

/*
 * RCU read side: how many bytes (without the link header) and frames a
 * super-frame for rail @index may hold; 0 if the rail is gone or its
 * device has no scatter-gather: it would have to make a chain linear
 * (validate_xmit_skb), which costs more than the chain saves.
 */
unsigned int bsp_rail_gso_max(struct bsp_net *bn, u8 index,
			      unsigned int *max_segs)
{
	struct bsp_master *m = rcu_dereference(bn->master);
	struct bsp_rail *rail;
	struct net_device *dev;
	unsigned int size;

	rail = m && index < BSP_MAX_RAILS ?
	       rcu_dereference(m->rails[index]) : NULL;
	if (!rail)
		return 0;
	dev = rail->dev;
	if (!(READ_ONCE(dev->features) & NETIF_F_SG))
		return 0;
	*max_segs = min_t(unsigned int, READ_ONCE(dev->gso_max_segs),
			  BSP_GSO_MAX_SEGS);
	size = min_t(unsigned int, READ_ONCE(dev->gso_max_size),
		     BSP_GSO_MAX_SIZE);
	return size > LL_MAX_HEADER ? size - LL_MAX_HEADER : 0;
}

/* RTNL: the operational state of @rail changed (or may have). */
static void bsp_rail_update_state(struct bsp_rail *rail)
{
	bool up = bsp_rail_oper_up(rail->dev);

	if (up == rail->up)
		return;
	WRITE_ONCE(rail->up, up);
	bsp_master_update_carrier(rail->master);
	bsp_discovery_rail_state(rail->master->bn, rail->index, up);
}

static struct bsp_rail *bsp_rail_find(struct bsp_master *m,
				      const struct net_device *dev)
{
	int i;

	for (i = 0; i < BSP_MAX_RAILS; i++) {
		struct bsp_rail *r = rtnl_dereference(m->rails[i]);

		if (r && r->dev == dev)
			return r;
	}
	return NULL;
}

int bsp_rail_add(struct bsp_master *m, struct net_device *slave,
		 struct netlink_ext_ack *extack)
{
	struct bsp_rail *rail;
	int i, err;

	ASSERT_RTNL();
	if (slave->rtnl_link_ops == &bsp_link_ops) {
		NL_SET_ERR_MSG(extack, "a bsp device cannot be a rail");
		return -ELOOP;
	}
	if (slave->type != ARPHRD_ETHER || slave->addr_len != ETH_ALEN ||
	    (slave->flags & IFF_LOOPBACK)) {
		NL_SET_ERR_MSG(extack, "rails must be Ethernet devices");
		return -EOPNOTSUPP;
	}
	if (slave->mtu < BSPE_HDR_LEN + BSP_PEER_MTU_MIN_PAYLOAD) {
		NL_SET_ERR_MSG(extack, "rail MTU too small for AF_BSP");
		return -EINVAL;
	}
	for (i = 0; i < bsp_max_rails; i++)
		if (!rtnl_dereference(m->rails[i]))
			break;
	if (i == bsp_max_rails) {
		NL_SET_ERR_MSG(extack,
			       "bsp device has max_rails rails (module parameter)");
		return -ENOSPC;
	}

	rail = kzalloc(sizeof(*rail), GFP_KERNEL);
	if (!rail)
		return -ENOMEM;
	rail->dev = slave;
	rail->master = m;
	rail->index = i;

	err = netdev_master_upper_dev_link(slave, m->dev, NULL, NULL, extack);
	if (err) {
		kfree(rail);
		return err;
	}
	netdev_hold(slave, &rail->dev_tracker, GFP_KERNEL);

	rail->pt.type = htons(ETH_P_BSP);
	rail->pt.dev = slave;
	rail->pt.func = bsp_rail_rcv;
	rail->pt.af_packet_priv = rail;
	rcu_assign_pointer(m->rails[i], rail);
	m->nrails++;
	dev_add_pack(&rail->pt);
	bsp_xdp_sync_rails(m->bn);

	netdev_info(m->dev, "rail %d: %s\n", i, slave->name);
	bsp_rail_update_state(rail);
	return 0;
}

/* RTNL: take @rail out of service and free it. */
static void bsp_rail_release(struct bsp_rail *rail)
{
	struct bsp_master *m = rail->master;
	struct bsp_net *bn = m->bn;
	u8 index = rail->index;

	if (rail->up) {
		WRITE_ONCE(rail->up, false);
		bsp_discovery_rail_state(bn, index, false);
	}
	RCU_INIT_POINTER(m->rails[index], NULL);
	m->nrails--;
	bsp_xdp_sync_rails(bn);
	/* waits for receivers and for RCU readers that saw the rail */
	dev_remove_pack(&rail->pt);
	netdev_upper_dev_unlink(rail->dev, m->dev);
	netdev_info(m->dev, "rail %d: %s released\n", index, rail->dev->name);
	netdev_put(rail->dev, &rail->dev_tracker);
	kfree(rail);
	bsp_master_update_carrier(m);
}

int bsp_rail_del(struct bsp_master *m, struct net_device *slave)
{
	struct bsp_rail *rail = bsp_rail_find(m, slave);

	if (!rail)
		return -ENOENT;
	bsp_rail_release(rail);
	return 0;
}

void bsp_rail_release_all(struct bsp_master *m)
{
	int i;

	for (i = 0; i < BSP_MAX_RAILS; i++) {
		struct bsp_rail *r = rtnl_dereference(m->rails[i]);

		if (r)
			bsp_rail_release(r);
	}
}

static int bsp_rail_event(struct notifier_block *nb, unsigned long event,
			  void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct net_device *upper;
	struct bsp_rail *rail;

	if (dev->rtnl_link_ops == &bsp_link_ops)
		return NOTIFY_DONE;
	upper = netdev_master_upper_dev_get(dev);
	if (!upper || upper->rtnl_link_ops != &bsp_link_ops)
		return NOTIFY_DONE;
	rail = bsp_rail_find(netdev_priv(upper), dev);
	if (!rail)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		bsp_rail_release(rail);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		bsp_rail_update_state(rail);
		break;
	case NETDEV_GOING_DOWN:
		/* fail over before the queues stop */
		if (rail->up) {
			WRITE_ONCE(rail->up, false);
			bsp_master_update_carrier(rail->master);
			bsp_discovery_rail_state(rail->master->bn, rail->index,
						 false);
		}
		break;
	case NETDEV_CHANGEADDR:
	case NETDEV_CHANGEMTU:
		/* peers learn the new address / MTU from a hello now */
		bsp_discovery_kick(rail->master->bn);
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block bsp_rail_notifier = {
	.notifier_call = bsp_rail_event,
};

int bsp_rail_notifier_register(void)
{
	return register_netdevice_notifier(&bsp_rail_notifier);
}

void bsp_rail_notifier_unregister(void)
{
	unregister_netdevice_notifier(&bsp_rail_notifier);
}
