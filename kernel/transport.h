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

/**
 * bsp_transport_create() - create a bound socket's engine endpoint
 * @bs: the socket.
 *
 * Context: process context, lock_sock held, socket bound.
 * Return: 0, -EINVAL if the module's parameters make no usable engine
 * configuration, -ENOMEM.
 */
int bsp_transport_create(struct bsp_sock *bs);

/**
 * bsp_transport_close() - linger, then settle everything
 * @bs: the socket.
 *
 * Waits (SO_LINGER, else close_linger_ms) until what was sent is settled,
 * tells the peers that the socket closes and tears the endpoint down.
 *
 * Context: process context, close().
 */
void bsp_transport_close(struct bsp_sock *bs);

/**
 * bsp_transport_free() - free the transport's memory
 * @bs: the socket.
 *
 * Context: the socket destructor, after an RCU grace period.
 */
void bsp_transport_free(struct bsp_sock *bs);

/**
 * bsp_transport_destroy() - settle and free now
 * @bs: the socket.
 *
 * Context: process context, lock_sock held, bind failed.
 */
void bsp_transport_destroy(struct bsp_sock *bs);

/**
 * bsp_transport_node_reachable() - whether a node can be sent to
 * @bn: the namespace.
 * @node: the node.
 *
 * Return: true if @node has a live rail, or lost its last live rail less
 * than unreach_ms ago.
 */
bool bsp_transport_node_reachable(struct bsp_net *bn, u32 node);

/**
 * bsp_transport_send() - hand a message to the engine
 * @bs: the sending socket.
 * @skb: the message; on success the engine owns it until it completes.
 * @node: destination node.
 * @port: destination port.
 * @send_flags: BSP_SEND_* flags of sendmsg.
 * @noblock: do not wait for room in the message window.
 * @timeo: the remaining send timeout, updated while waiting.
 *
 * Context: process context.
 * Return: 0, or the negative errno sendmsg returns (-ENOTCONN, -EMSGSIZE,
 * -EAGAIN, -EHOSTUNREACH, ...; Documentation/socket-api.rst).
 */
int bsp_transport_send(struct bsp_sock *bs, struct sk_buff *skb, u32 node,
		       u16 port, u32 send_flags, bool noblock, long *timeo);

/**
 * bsp_transport_rx_room() - receive memory was freed
 * @bs: the socket.
 *
 * If fragments were refused for lack of it, their senders are prodded to
 * resend now.
 *
 * Context: process context (recvmsg).
 */
void bsp_transport_rx_room(struct bsp_sock *bs);

/**
 * bsp_transport_channels() - the channel ceiling of a transport
 * @tp: the transport.
 *
 * Return: the most channels it opens at a time (BSP_CHANNELS).
 */
u32 bsp_transport_channels(const struct bsp_transport *tp);

/**
 * bsp_transport_set_group() - the socket's group changed (BSP_GROUP)
 * @bs: the socket.
 *
 * Channels already open to members get the group flag; the others get it
 * when first used.
 *
 * Context: process context, lock_sock held.
 * Return: 0, -ENOBUFS if the group has more remote members than the
 * channel ceiling, -ENOMEM.
 */
int bsp_transport_set_group(struct bsp_sock *bs);

/**
 * bsp_transport_superstep_done() - the barrier of a superstep completed
 * @bs: the socket.
 * @epoch: the superstep (BSP_BARRIER_DONE).
 *
 * Context: process context, lock_sock held.
 */
void bsp_transport_superstep_done(struct bsp_sock *bs, u32 epoch);

/**
 * bsp_transport_expect() - messages expected from a member (BSP_EXPECT)
 * @bs: the socket.
 * @e: the member and the number of messages.
 *
 * Context: process context, lock_sock held.
 * Return: 0 or a negative errno (the channel could not be opened).
 */
int bsp_transport_expect(struct bsp_sock *bs, const struct bsp_expect *e);

/**
 * bsp_transport_set_pacing() - set the transmit rate (BSP_PACING_RATE)
 * @bs: the socket.
 * @rate: bytes per second, 0 for unpaced.
 *
 * Context: process context, lock_sock held.
 */
void bsp_transport_set_pacing(struct bsp_sock *bs, u64 rate);

/**
 * bsp_transport_set_follow() - streams follow counts or not (BSP_FOLLOW)
 * @bs: the socket.
 * @follow: the value.
 *
 * Context: process context, lock_sock held.
 */
void bsp_transport_set_follow(struct bsp_sock *bs, bool follow);

/**
 * bsp_transport_stats() - the socket's counters (BSP_STATS)
 * @bs: the socket.
 * @st: filled with the engine's counters.
 *
 * Context: process context.
 */
void bsp_transport_stats(struct bsp_sock *bs, struct bsp_sock_stats *st);

/**
 * bsp_transport_proto_stats() - the socket's protocol counters
 * @bs: the socket.
 * @st: filled with the engine's counters.
 *
 * Context: process context.
 */
void bsp_transport_proto_stats(struct bsp_sock *bs,
			       struct bsp_proto_stats *st);

/**
 * bsp_transport_rcv_add() - a DATA, ACK or PROD frame arrived
 * @bn: the namespace.
 * @list: the frames of the rail waiting for bsp_transport_rcv_list().
 * @skb: the frame; consumed (added to @list, or dropped and counted).
 *
 * Context: softirq.
 */
void bsp_transport_rcv_add(struct bsp_net *bn, struct sk_buff_head *list,
			   struct sk_buff *skb);

/**
 * bsp_transport_rcv_list() - hand frames of a rail to their sockets
 * @bn: the namespace.
 * @rail: the rail they arrived on.
 * @list: the frames, in the order they arrived; emptied.
 *
 * Consecutive frames from one node and link address to one port (the
 * frames of a super-frame) share the lookups, one hold of the socket's
 * lock and one transmit flush.
 *
 * Context: softirq.
 */
void bsp_transport_rcv_list(struct bsp_net *bn, u8 rail,
			    struct sk_buff_head *list);

/**
 * bsp_transport_node_reset() - a node restarted
 * @bn: the namespace.
 * @node: the node; every channel to it is closed.
 *
 * Context: any context but hardirq.
 */
void bsp_transport_node_reset(struct bsp_net *bn, u32 node);

/**
 * bsp_transport_rail_set() - a rail to a node turned dead or alive
 * @bn: the namespace.
 * @node: the node.
 * @rail: the rail.
 * @up: true if it is alive.
 *
 * Context: any context but hardirq.
 */
void bsp_transport_rail_set(struct bsp_net *bn, u32 node, u8 rail, bool up);

#endif /* _BSP_TRANSPORT_H */
