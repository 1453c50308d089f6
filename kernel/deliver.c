// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP delivery of a complete message to a bound socket of this
 * namespace.
 *
 * Delivery is reliable: a message is never dropped because its receiver
 * is slow.
 *
 * A message received over the rails was admitted and charged to the
 * receiver (sk_rmem_alloc and the namespace's net.bsp.mem) when its first
 * fragment arrived (transport.c): the receiver's memory is its whole
 * budget, so a full receiver refuses new messages and their senders wait
 * and resend. Such a message is queued at once.
 *
 * A message from a socket of the same node is taken into the receive
 * queue (charged to the receiver) while sk_rmem_alloc is below SO_RCVBUF,
 * or whenever the receive queue is empty (so one message always fits and
 * the reader can always make progress). Otherwise it waits, in arrival
 * order, on the receiver's "pending" queue and stays charged to its
 * sender's send buffer; recvmsg moves pending messages over as it makes
 * room. A local sender is therefore throttled by its own SO_SNDBUF
 * (sendmsg blocks, or fails with EAGAIN, in sock_alloc_send_pskb).
 *
 * Locking: pending.lock (bh) > sk_receive_queue.lock. The receive queue
 * is only fed under pending.lock, from the head of pending, which keeps
 * arrival order.
 */
#include "af_bsp.h"

static bool bsp_rcv_has_room(const struct sock *sk, struct sk_buff *skb)
{
	return bsp_cb(skb)->remote ||
	       skb_queue_empty_lockless(&sk->sk_receive_queue) ||
	       atomic_read(&sk->sk_rmem_alloc) < READ_ONCE(sk->sk_rcvbuf);
}

/* pending.lock held: move what fits from pending to the receive queue. */
static bool bsp_pending_drain(struct sock *sk)
{
	struct sk_buff_head *pending = &bsp_sk(sk)->pending;
	struct sk_buff *skb;
	bool moved = false;

	while ((skb = skb_peek(pending)) && bsp_rcv_has_room(sk, skb)) {
		__skb_unlink(skb, pending);
		if (!bsp_cb(skb)->remote)
			bsp_msg_transfer_to(skb, sk);
		skb_queue_tail(&sk->sk_receive_queue, skb);
		moved = true;
	}
	return moved;
}

/*
 * Any context. Hand message @skb (cb filled in) to @dst; consumes the
 * skb. Returns -ECONNREFUSED, without consuming, if @dst is closed.
 */
int bsp_deliver(struct sock *dst, struct sk_buff *skb)
{
	struct sk_buff_head *pending = &bsp_sk(dst)->pending;
	bool ready;

	spin_lock_bh(&pending->lock);
	if (sock_flag(dst, SOCK_DEAD) ||
	    (READ_ONCE(dst->sk_shutdown) & RCV_SHUTDOWN)) {
		spin_unlock_bh(&pending->lock);
		return -ECONNREFUSED;
	}
	__skb_queue_tail(pending, skb);
	ready = bsp_pending_drain(dst);
	spin_unlock_bh(&pending->lock);
	if (ready)
		dst->sk_data_ready(dst);
	return 0;
}

/*
 * Process context. Deliver @skb to the socket bound to @dst_port of @bn.
 * Consumes the skb on success; -ECONNREFUSED if no socket is bound there.
 */
int bsp_deliver_local(struct bsp_net *bn, struct sk_buff *skb, u16 dst_port)
{
	struct sock *dst;
	int err;

	dst = bsp_port_lookup_get(bn, dst_port);
	if (!dst)
		return -ECONNREFUSED;
	err = bsp_deliver(dst, skb);
	sock_put(dst);
	return err;
}

/* Any context: recvmsg made room; move pending messages over. */
void bsp_deliver_pending(struct sock *sk)
{
	struct sk_buff_head *pending = &bsp_sk(sk)->pending;
	bool ready;

	if (skb_queue_empty_lockless(pending))
		return;
	spin_lock_bh(&pending->lock);
	ready = bsp_pending_drain(sk);
	spin_unlock_bh(&pending->lock);
	if (ready)
		sk->sk_data_ready(sk);
}

/* Process context, socket dead: drop what still waits (senders' memory). */
void bsp_deliver_purge(struct sock *sk)
{
	struct sk_buff_head *pending = &bsp_sk(sk)->pending;
	struct sk_buff_head list;

	__skb_queue_head_init(&list);
	spin_lock_bh(&pending->lock);
	skb_queue_splice_init(pending, &list);
	spin_unlock_bh(&pending->lock);
	__skb_queue_purge(&list);
}
