// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP master device, rtnl_link kind "bsp":
 *
 *   ip link add bsp0 type bsp
 *   ip link set dev eth1 master bsp0      (ndo_add_slave)
 *   ip link set dev eth1 nomaster         (ndo_del_slave)
 *   ip link del bsp0
 *   ip link set bsp0 type bsp node 7 cluster 1   (changelink)
 *   ip -d link show bsp0                         (fill_info)
 *
 * The master carries no IP traffic of its own (frames sent to it are
 * dropped and counted); it groups the rails of the namespace, reports
 * carrier when at least one rail is up, and counts the AF_BSP frames of
 * its rails (ip -s link). One master per namespace: it is the node's
 * cluster interface. It cannot move to another namespace. A master created
 * from another namespace (ip -n A link add bsp0 netns B type bsp) is the
 * master of the namespace it is created in (B), with B's state.
 *
 * Context: every rtnl_link_ops and ndo_* callback here runs with RTNL held.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <net/rtnetlink.h>

#include "rail.h"
#include "discovery.h"
#include "auth.h"
#include "xdp.h"

static netdev_tx_t bsp_master_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct bsp_master *m = netdev_priv(dev);

	atomic64_inc(&m->tx_dropped);
	kfree_skb(skb);
	return NETDEV_TX_OK;
}

static void bsp_master_get_stats64(struct net_device *dev,
				   struct rtnl_link_stats64 *s)
{
	struct bsp_master *m = netdev_priv(dev);

	s->rx_packets = atomic64_read(&m->rx_packets);
	s->rx_bytes = atomic64_read(&m->rx_bytes);
	s->tx_packets = atomic64_read(&m->tx_packets);
	s->tx_bytes = atomic64_read(&m->tx_bytes);
	s->tx_dropped = atomic64_read(&m->tx_dropped);
}

static int bsp_master_add_slave(struct net_device *dev,
				struct net_device *slave,
				struct netlink_ext_ack *extack)
{
	return bsp_rail_add(netdev_priv(dev), slave, extack);
}

static int bsp_master_del_slave(struct net_device *dev,
				struct net_device *slave)
{
	return bsp_rail_del(netdev_priv(dev), slave);
}

static int bsp_master_open(struct net_device *dev)
{
	bsp_master_update_carrier(netdev_priv(dev));
	return 0;
}

static void bsp_master_uninit(struct net_device *dev)
{
	struct bsp_master *m = netdev_priv(dev);

	bsp_rail_release_all(m);
	if (rtnl_dereference(m->bn->master) == m)
		RCU_INIT_POINTER(m->bn->master, NULL);
}

static const struct net_device_ops bsp_master_ops = {
	.ndo_uninit		= bsp_master_uninit,
	.ndo_open		= bsp_master_open,
	.ndo_start_xmit		= bsp_master_xmit,
	.ndo_get_stats64	= bsp_master_get_stats64,
	.ndo_add_slave		= bsp_master_add_slave,
	.ndo_del_slave		= bsp_master_del_slave,
};

static void bsp_master_setup(struct net_device *dev)
{
	struct bsp_master *m = netdev_priv(dev);

	memset(m, 0, sizeof(*m));
	m->dev = dev;
	dev->netdev_ops = &bsp_master_ops;
	dev->type = ARPHRD_NONE;
	dev->flags = IFF_NOARP;
	dev->priv_flags |= IFF_NO_QUEUE;
	dev->features |= NETIF_F_NETNS_LOCAL | NETIF_F_LLTX;
	dev->hard_header_len = 0;
	dev->addr_len = 0;
	dev->mtu = ETH_DATA_LEN;
	dev->min_mtu = 0;
	dev->max_mtu = ETH_MAX_MTU;
	dev->tx_queue_len = 0;
	dev->needs_free_netdev = true;
}

static struct netlink_range_validation bsp_hello_range = {
	.min = 1,
	.max = 60000,
};

static struct netlink_range_validation bsp_peers_range = {
	.min = 1,
	.max = 65536,
};

/* The bounds are those of the net.bsp sysctls of the same names. */
static const struct nla_policy bsp_master_policy[IFLA_BSP_MAX + 1] = {
	[IFLA_BSP_NODE_ID]	  = NLA_POLICY_MIN(NLA_U32, 1),
	[IFLA_BSP_CLUSTER_ID]	  = { .type = NLA_U32 },
	[IFLA_BSP_HELLO_MS]	  = NLA_POLICY_FULL_RANGE(NLA_U32,
							  &bsp_hello_range),
	[IFLA_BSP_PEER_TIMEOUT_MS] = NLA_POLICY_MIN(NLA_U32, 1),
	[IFLA_BSP_PEER_EXPIRE_MS] = NLA_POLICY_MIN(NLA_U32, 1),
	[IFLA_BSP_MAX_PEERS]	  = NLA_POLICY_FULL_RANGE(NLA_U32,
							  &bsp_peers_range),
	[IFLA_BSP_PEERS]	  = { .type = NLA_REJECT,
				      .reject_message = "peers is read-only" },
	[IFLA_BSP_AUTH]		  = { .type = NLA_REJECT,
				      .reject_message =
					"auth is read-only (net.bsp.cluster_key sets it)" },
	[IFLA_BSP_RAILS]	  = { .type = NLA_REJECT,
				      .reject_message =
					"rails are enslaved with ip link set DEV master" },
};

static int bsp_master_validate(struct nlattr *tb[], struct nlattr *data[],
			       struct netlink_ext_ack *extack)
{
	if (tb[IFLA_ADDRESS]) {
		NL_SET_ERR_MSG(extack, "a bsp device has no link-layer address");
		return -EINVAL;
	}
	return 0;
}

/*
 * RTNL: apply the writable IFLA_BSP_* attributes of @data (already checked
 * against bsp_master_policy) to the namespace @bn. The node id goes first:
 * it is the only one that can be refused, and then nothing has changed.
 */
static int bsp_master_apply(struct bsp_net *bn, struct nlattr *data[],
			    struct netlink_ext_ack *extack)
{
	int err;

	if (!data)
		return 0;
	if (data[IFLA_BSP_NODE_ID]) {
		err = bsp_set_node_id(bn, nla_get_u32(data[IFLA_BSP_NODE_ID]));
		if (err) {
			NL_SET_ERR_MSG_ATTR(extack, data[IFLA_BSP_NODE_ID],
					    "node id cannot change while a socket is bound");
			return err;
		}
	}
	if (data[IFLA_BSP_CLUSTER_ID])
		WRITE_ONCE(bn->cluster_id,
			   nla_get_u32(data[IFLA_BSP_CLUSTER_ID]));
	if (data[IFLA_BSP_HELLO_MS])
		WRITE_ONCE(bn->hello_interval_ms,
			   nla_get_u32(data[IFLA_BSP_HELLO_MS]));
	if (data[IFLA_BSP_PEER_TIMEOUT_MS])
		WRITE_ONCE(bn->peer_timeout_ms,
			   nla_get_u32(data[IFLA_BSP_PEER_TIMEOUT_MS]));
	if (data[IFLA_BSP_PEER_EXPIRE_MS])
		WRITE_ONCE(bn->peer_expire_ms,
			   nla_get_u32(data[IFLA_BSP_PEER_EXPIRE_MS]));
	if (data[IFLA_BSP_MAX_PEERS])
		WRITE_ONCE(bn->max_peers,
			   nla_get_u32(data[IFLA_BSP_MAX_PEERS]));
	return 0;
}

static int bsp_master_changelink(struct net_device *dev, struct nlattr *tb[],
				 struct nlattr *data[],
				 struct netlink_ext_ack *extack)
{
	struct bsp_master *m = netdev_priv(dev);
	int err = bsp_master_apply(m->bn, data, extack);

	bsp_xdp_sync_ids(m->bn);
	return err;
}

static size_t bsp_master_get_size(const struct net_device *dev)
{
	size_t rail = nla_total_size(0) +		/* IFLA_BSP_RAIL */
		      nla_total_size(sizeof(u8)) +	/* _RAIL_INDEX */
		      nla_total_size(sizeof(u32)) +	/* _RAIL_IFINDEX */
		      nla_total_size(sizeof(u8));	/* _RAIL_UP */

	return 7 * nla_total_size(sizeof(u32)) +	/* NODE_ID..PEERS */
	       nla_total_size(sizeof(u8)) +		/* AUTH */
	       nla_total_size(0) +			/* RAILS */
	       BSP_MAX_RAILS * rail;
}

static int bsp_master_fill_rails(struct sk_buff *skb,
				 const struct bsp_master *m)
{
	struct nlattr *rails, *one;
	struct bsp_rail *r;
	int i;

	rails = nla_nest_start(skb, IFLA_BSP_RAILS);
	if (!rails)
		return -EMSGSIZE;
	for (i = 0; i < BSP_MAX_RAILS; i++) {
		r = rtnl_dereference(m->rails[i]);
		if (!r)
			continue;
		one = nla_nest_start(skb, IFLA_BSP_RAIL);
		if (!one ||
		    nla_put_u8(skb, IFLA_BSP_RAIL_INDEX, r->index) ||
		    nla_put_u32(skb, IFLA_BSP_RAIL_IFINDEX, r->dev->ifindex) ||
		    nla_put_u8(skb, IFLA_BSP_RAIL_UP, READ_ONCE(r->up)))
			return -EMSGSIZE;
		nla_nest_end(skb, one);
	}
	nla_nest_end(skb, rails);
	return 0;
}

/* RTNL (rtnl_fill_ifinfo): the device's IFLA_INFO_DATA. */
static int bsp_master_fill_info(struct sk_buff *skb,
				const struct net_device *dev)
{
	const struct bsp_master *m = netdev_priv(dev);
	struct bsp_net *bn = m->bn;

	if (nla_put_u32(skb, IFLA_BSP_NODE_ID, bsp_node_id(bn)) ||
	    nla_put_u32(skb, IFLA_BSP_CLUSTER_ID, READ_ONCE(bn->cluster_id)) ||
	    nla_put_u32(skb, IFLA_BSP_HELLO_MS,
			READ_ONCE(bn->hello_interval_ms)) ||
	    nla_put_u32(skb, IFLA_BSP_PEER_TIMEOUT_MS,
			READ_ONCE(bn->peer_timeout_ms)) ||
	    nla_put_u32(skb, IFLA_BSP_PEER_EXPIRE_MS,
			READ_ONCE(bn->peer_expire_ms)) ||
	    nla_put_u32(skb, IFLA_BSP_MAX_PEERS, READ_ONCE(bn->max_peers)) ||
	    nla_put_u32(skb, IFLA_BSP_PEERS, READ_ONCE(bn->npeers)) ||
	    nla_put_u8(skb, IFLA_BSP_AUTH, bsp_key_is_set(bn)))
		return -EMSGSIZE;
	return bsp_master_fill_rails(skb, m);
}

static int bsp_master_newlink(struct net *net, struct net_device *dev,
			      struct nlattr *tb[], struct nlattr *data[],
			      struct netlink_ext_ack *extack)
{
	struct bsp_master *m = netdev_priv(dev);
	struct bsp_net *bn;
	int err;

	/*
	 * @net is the namespace of the request (ip -n A link add ... netns B
	 * passes A); the device lives in dev_net(dev), the namespace whose
	 * node it is and whose rails it will carry, and it cannot move
	 * (NETIF_F_NETNS_LOCAL). Its state is that namespace's: it lives as
	 * long as the device, whatever becomes of the requester's namespace.
	 */
	bn = bsp_pernet(dev_net(dev));
	if (rtnl_dereference(bn->master)) {
		NL_SET_ERR_MSG(extack,
			       "this namespace already has a bsp device (one per node)");
		return -EEXIST;
	}
	m->bn = bn;
	err = bsp_master_apply(bn, data, extack);
	if (err)
		return err;
	err = register_netdevice(dev);
	if (err)
		return err;
	netif_carrier_off(dev);
	rcu_assign_pointer(bn->master, m);
	return 0;
}

struct rtnl_link_ops bsp_link_ops __read_mostly = {
	.kind		= "bsp",
	.priv_size	= sizeof(struct bsp_master),
	.setup		= bsp_master_setup,
	.maxtype	= IFLA_BSP_MAX,
	.policy		= bsp_master_policy,
	.validate	= bsp_master_validate,
	.newlink	= bsp_master_newlink,
	.changelink	= bsp_master_changelink,
	.get_size	= bsp_master_get_size,
	.fill_info	= bsp_master_fill_info,
};

int bsp_rail_dev_register(void)
{
	return rtnl_link_register(&bsp_link_ops);
}

void bsp_rail_dev_unregister(void)
{
	rtnl_link_unregister(&bsp_link_ops);
}
