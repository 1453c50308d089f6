/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_BSP rail layer: the master device of kind "bsp" (rail_dev.c) and its
 * rails, the Ethernet devices enslaved to it (rail.c).
 *
 * A namespace has at most one master. Its rails are numbered 0..7 in the
 * order they are enslaved (the lowest free number); rail r of every node
 * must be on the same network, so nodes enslave their NICs in the same
 * order. RTNL protects changes; the data path reads master and rails
 * under RCU. A rail is freed only after dev_remove_pack(), whose
 * synchronize_net() also ends every RCU reader that could still see it.
 */
#ifndef _BSP_RAIL_H
#define _BSP_RAIL_H

#include <linux/netdevice.h>
#include <linux/u64_stats_sync.h>

#include "af_bsp.h"

struct bsp_master;

/**
 * struct bsp_rail - an Ethernet device enslaved to the bsp device
 * @dev:	the device (a reference is held).
 * @dev_tracker: tracks that reference.
 * @master:	the bsp device it is enslaved to.
 * @pt:		the packet handler of the AF_BSP EtherType on @dev.
 * @index:	the rail number, 0..BSP_MAX_RAILS-1.
 * @up:		running with carrier; written under RTNL, read with READ_ONCE.
 */
struct bsp_rail {
	struct net_device *dev;
	netdevice_tracker dev_tracker;
	struct bsp_master *master;
	struct packet_type pt;
	u8 index;
	bool up;
};

/**
 * struct bsp_master - the namespace's bsp device (ip link add ... type bsp)
 * @dev:	its net_device.
 * @bn:		its namespace.
 * @rails:	the rails by number (RCU; written under RTNL).
 * @nrails:	the number of rails.
 * @rx_packets:	AF_BSP frames received through the rails.
 * @rx_bytes:	their bytes.
 * @tx_packets:	AF_BSP frames sent through the rails.
 * @tx_bytes:	their bytes.
 * @tx_dropped:	frames the rails refused.
 *
 * The counters are shown by ip -s link show bspN.
 */
struct bsp_master {
	struct net_device *dev;
	struct bsp_net *bn;
	struct bsp_rail __rcu *rails[BSP_MAX_RAILS];
	u8 nrails;
	atomic64_t rx_packets, rx_bytes, tx_packets, tx_bytes, tx_dropped;
};

extern struct rtnl_link_ops bsp_link_ops;
extern unsigned int bsp_max_rails;

/**
 * bsp_rail_dev_register() - register the link kind "bsp"
 *
 * Return: 0 or a negative errno.
 */
int bsp_rail_dev_register(void);

/**
 * bsp_rail_dev_unregister() - unregister the link kind "bsp"
 */
void bsp_rail_dev_unregister(void);

/**
 * bsp_rail_add() - enslave a device as the next free rail
 * @m: the bsp device.
 * @slave: the Ethernet device.
 * @extack: where the reason of a refusal is reported.
 *
 * Context: RTNL held.
 * Return: 0, -ELOOP (a bsp device), -EOPNOTSUPP (not Ethernet), -EINVAL
 * (MTU too small), -ENOSPC (every rail number taken), -ENOMEM, or the
 * error of the device core.
 */
int bsp_rail_add(struct bsp_master *m, struct net_device *slave,
		 struct netlink_ext_ack *extack);

/**
 * bsp_rail_del() - release one rail
 * @m: the bsp device.
 * @slave: the rail's device.
 *
 * Context: RTNL held.
 * Return: 0, or -ENOENT if @slave is not a rail of @m.
 */
int bsp_rail_del(struct bsp_master *m, struct net_device *slave);

/**
 * bsp_rail_release_all() - release every rail (the bsp device goes)
 * @m: the bsp device.
 *
 * Context: RTNL held.
 */
void bsp_rail_release_all(struct bsp_master *m);

/**
 * bsp_rail_notifier_register() - follow the rails' device events
 *
 * Return: 0 or a negative errno.
 */
int bsp_rail_notifier_register(void);

/**
 * bsp_rail_notifier_unregister() - stop following device events
 */
void bsp_rail_notifier_unregister(void);

/**
 * bsp_master_update_carrier() - carrier of the bsp device from its rails
 * @m: the bsp device; it has carrier while any rail is up.
 *
 * Context: RTNL held.
 */
void bsp_master_update_carrier(struct bsp_master *m);

/**
 * bsp_rail_xmit() - transmit a frame on a rail
 * @bn: the namespace.
 * @rail: the rail.
 * @dst: the destination MAC.
 * @skb: the frame, already an AF_BSP packet at @skb->data; consumed.
 *
 * Context: any context, RCU read side held.
 * Return: 0 or a negative errno (the frame was dropped).
 */
int bsp_rail_xmit(struct bsp_net *bn, u8 rail, const u8 *dst,
		  struct sk_buff *skb);

/**
 * bsp_rail_gso_max() - bounds of a super-frame for a rail
 * @bn: the namespace.
 * @index: the rail.
 * @max_segs: set to the frames it may hold.
 *
 * Context: RCU read side.
 * Return: the bytes it may hold without the link header; 0 if the rail is
 * gone.
 */
unsigned int bsp_rail_gso_max(struct bsp_net *bn, u8 index,
			      unsigned int *max_segs);

/**
 * bsp_rail_headroom() - room a frame for the rail devices needs
 *
 * Return: the headroom and tailroom to reserve.
 */
unsigned int bsp_rail_headroom(void);

#endif /* _BSP_RAIL_H */
