/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_BSP rail transport: drives one protocol engine endpoint (bspe_ep)
 * per bound socket. See transport.c for contexts and locking.
 */
#ifndef _BSP_TRANSPORT_H
#define _BSP_TRANSPORT_H

#include "af_bsp.h"

extern unsigned int bsp_max_chans;
extern unsigned int bsp_unreach_ms;
extern unsigned int bsp_close_linger_ms;
extern unsigned int bsp_rto_min_ms;
extern bool bsp_checksum;

struct bsp_transport;

/* Process context, lock_sock held, socket bound: create the endpoint. */
int bsp_transport_create(struct bsp_sock *bs);
/* Process context, close(): linger, then settle everything. */
void bsp_transport_close(struct bsp_sock *bs);
/* Socket destructor (after an RCU grace period): free the memory. */
void bsp_transport_free(struct bsp_sock *bs);
/* Process context, lock_sock held, bind failed: settle and free now. */
void bsp_transport_destroy(struct bsp_sock *bs);

bool bsp_transport_node_reachable(struct bsp_net *bn, u32 node);
/*
 * Process context: hand message @skb (@len bytes) to the engine for
 * (@node, @port). On success the engine owns the skb until it completes.
 */
int bsp_transport_send(struct bsp_sock *bs, struct sk_buff *skb, u32 node,
		       u16 port, u32 send_flags, bool noblock, long *timeo);
/*
 * Process context: receive memory was freed (recvmsg). If fragments were
 * refused for lack of it, their senders are prodded to resend now.
 */
void bsp_transport_rx_room(struct bsp_sock *bs);

/* Superstep interface (sockopt.c); lock_sock held. */
u32 bsp_transport_channels(const struct bsp_transport *tp);
int bsp_transport_set_group(struct bsp_sock *bs);
void bsp_transport_superstep_done(struct bsp_sock *bs, u32 epoch);
int bsp_transport_expect(struct bsp_sock *bs, const struct bsp_expect *e);
void bsp_transport_set_pacing(struct bsp_sock *bs, u64 rate);
void bsp_transport_stats(struct bsp_sock *bs, struct bsp_sock_stats *st);
void bsp_transport_proto_stats(struct bsp_sock *bs,
			       struct bsp_proto_stats *st);

/* Softirq: a DATA/ACK/PROD frame arrived on rail @rail. Consumes @skb. */
void bsp_transport_rcv(struct bsp_net *bn, u8 rail, struct sk_buff *skb);
/* Any context but hardirq: @node restarted; close every channel to it. */
void bsp_transport_node_reset(struct bsp_net *bn, u32 node);
/* Any context but hardirq: (node, rail) turned dead or alive. */
void bsp_transport_rail_set(struct bsp_net *bn, u32 node, u8 rail, bool up);

#endif /* _BSP_TRANSPORT_H */
