// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP master device, rtnl_link kind "bsp":
 *
 *   ip link add bsp0 type bsp
 *   ip link set dev eth1 master bsp0      (ndo_add_slave)
 *   ip link set dev eth1 nomaster         (ndo_del_slave)
 *   ip link del bsp0
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

static int bsp_master_validate(struct nlattr *tb[], struct nlattr *data[],
			       struct netlink_ext_ack *extack)
{
	if (tb[IFLA_ADDRESS]) {
		NL_SET_ERR_MSG(extack, "a bsp device has no link-layer address");
		return -EINVAL;
	}
	return 0;
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
	.validate	= bsp_master_validate,
	.newlink	= bsp_master_newlink,
};

int bsp_rail_dev_register(void)
{
	return rtnl_link_register(&bsp_link_ops);
}

void bsp_rail_dev_unregister(void)
{
	rtnl_link_unregister(&bsp_link_ops);
}
