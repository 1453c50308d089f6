// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP delivery of a complete message to a bound socket of this
 * namespace.
 *
 * Delivery is reliable: a message is never dropped because its receiver
 * is slow. A receiver takes a message into its receive queue (charged to
 * its sk_rmem_alloc) while sk_rmem_alloc is below SO_RCVBUF, so one
 * message always fits into an empty queue whatever its size. Otherwise the
 * message waits, in arrival order, on the receiver's "pending" queue and
 * stays charged to its sender's send buffer; recvmsg moves pending
 * messages over as it makes room. A sender is therefore throttled by its
 * own SO_SNDBUF (sendmsg blocks, or fails with EAGAIN, in
 * sock_alloc_send_pskb) and POLLOUT means exactly "sendmsg will not
 * block". The pending queue is bounded by the senders' send buffers.
 *
 * Locking: pending.lock (bh) > sk_receive_queue.lock. The receive queue
 * is only fed under pending.lock, which keeps arrival order.
 */
#include "af_bsp.h"

static bool bsp_rcv_has_room(const struct sock *sk)
{
	return atomic_read(&sk->sk_rmem_alloc) < READ_ONCE(sk->sk_rcvbuf);
}

/* pending.lock held. */
static void bsp_accept_msg(struct sock *sk, struct sk_buff *skb)
{
	bsp_msg_transfer_to(skb, sk);
	skb_queue_tail(&sk->sk_receive_queue, skb);
}

/*
 * Any context. Hand message @skb (cb filled in) to @dst; consumes the
 * skb. Returns -ECONNREFUSED, without consuming, if @dst is closed.
 */
int bsp_deliver(struct sock *dst, struct sk_buff *skb)
{
	struct sk_buff_head *pending = &bsp_sk(dst)->pending;
	bool ready = false;

	spin_lock_bh(&pending->lock);
	if (sock_flag(dst, SOCK_DEAD) ||
	    (READ_ONCE(dst->sk_shutdown) & RCV_SHUTDOWN)) {
		spin_unlock_bh(&pending->lock);
		return -ECONNREFUSED;
	}
	if (skb_queue_empty(pending) && bsp_rcv_has_room(dst)) {
		bsp_accept_msg(dst, skb);
		ready = true;
	} else {
		__skb_queue_tail(pending, skb);
	}
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
	struct sk_buff *skb;
	bool ready = false;

	if (skb_queue_empty_lockless(pending))
		return;
	spin_lock_bh(&pending->lock);
	while (bsp_rcv_has_room(sk) && (skb = __skb_dequeue(pending))) {
		bsp_accept_msg(sk, skb);
		ready = true;
	}
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
