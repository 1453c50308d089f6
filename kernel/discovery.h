/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_BSP neighbour discovery: periodic hello frames on every rail and the
 * per-rail liveness of peers derived from them.
 */
#ifndef _BSP_DISCOVERY_H
#define _BSP_DISCOVERY_H

#include "af_bsp.h"

struct bsp_rail;

extern unsigned int bsp_default_hello_ms;
extern unsigned int bsp_default_peer_timeout_ms;
extern unsigned int bsp_default_peer_expire_ms;

void bsp_discovery_init_net(struct bsp_net *bn);
void bsp_discovery_exit_net(struct bsp_net *bn);
/* Any context: send hellos on every rail now (rail added, up, new address). */
void bsp_discovery_kick(struct bsp_net *bn);
/* Softirq: a hello arrived on @rail. Consumes the skb. */
void bsp_discovery_rcv(struct bsp_net *bn, struct bsp_rail *rail,
		       struct sk_buff *skb);
/* RTNL: our rail @index stopped (down) or started (up) carrying frames. */
void bsp_discovery_rail_state(struct bsp_net *bn, u8 index, bool up);

#endif /* _BSP_DISCOVERY_H */
