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

struct bsp_rail {
	struct net_device *dev;
	netdevice_tracker dev_tracker;
	struct bsp_master *master;
	struct packet_type pt;
	u8 index;
	bool up;		/* running with carrier; RTNL, READ_ONCE */
};

struct bsp_master {
	struct net_device *dev;
	struct bsp_net *bn;
	struct bsp_rail __rcu *rails[BSP_MAX_RAILS];
	u8 nrails;
	/* AF_BSP frames through the rails, shown by ip -s link show bspN */
	atomic64_t rx_packets, rx_bytes, tx_packets, tx_bytes, tx_dropped;
};

extern struct rtnl_link_ops bsp_link_ops;
extern unsigned int bsp_max_rails;

int bsp_rail_dev_register(void);
void bsp_rail_dev_unregister(void);

/* rail.c */
int bsp_rail_add(struct bsp_master *m, struct net_device *slave,
		 struct netlink_ext_ack *extack);
int bsp_rail_del(struct bsp_master *m, struct net_device *slave);
void bsp_rail_release_all(struct bsp_master *m);
int bsp_rail_notifier_register(void);
void bsp_rail_notifier_unregister(void);
void bsp_master_update_carrier(struct bsp_master *m);

/*
 * Any context, RCU read side held: transmit a frame carrying @len bytes at
 * @skb->data (already an AF_BSP packet) to @dst on rail @rail. Consumes
 * the skb. Returns 0 or a negative errno (frame dropped).
 */
int bsp_rail_xmit(struct bsp_net *bn, u8 rail, const u8 *dst,
		  struct sk_buff *skb);
/* Headroom and tailroom a frame for rail devices needs. */
unsigned int bsp_rail_headroom(void);

#endif /* _BSP_RAIL_H */
