// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP message buffers. A message of up to BSP_MSG_MAX bytes is one
 * sk_buff whose data live in page fragments, split into chunks of at most
 * BSP_MSG_CHUNK bytes: the first chunk is the head skb, the others hang
 * off its frag_list. While the sender owns the message every chunk is
 * charged to the sender's sk_wmem_alloc; when the message is handed to a
 * receiving socket all chunks are uncharged and the head is charged, with
 * the summed truesize, to the receiver's sk_rmem_alloc.
 *
 * Send buffer rule: sendmsg waits (or fails with EAGAIN) until the socket
 * has send buffer room for the first chunk; the remaining chunks of the
 * same message are charged without waiting, so a socket exceeds SO_SNDBUF
 * by at most one message. This keeps a message larger than SO_SNDBUF from
 * deadlocking against itself.
 */
#include <linux/skbuff.h>

#include "af_bsp.h"

/* Fits MAX_SKB_FRAGS order-0 pages, the worst case of alloc_skb_with_frags. */
#define BSP_MSG_CHUNK	(16 * PAGE_SIZE)

static void bsp_msg_set_len(struct sk_buff *skb, size_t len)
{
	skb->len = len;
	skb->data_len = len;
}

/*
 * Process context. Returns a message buffer of @len bytes (contents not
 * yet copied) or NULL with *err set (-EAGAIN, -ERESTARTSYS/-EINTR,
 * -ENOBUFS, -EPIPE after shutdown).
 */
struct sk_buff *bsp_msg_alloc(struct sock *sk, size_t len, bool noblock,
			      int *err)
{
	struct sk_buff *head, *prev = NULL;
	size_t first = min_t(size_t, len, BSP_MSG_CHUNK);
	size_t done;

	head = sock_alloc_send_pskb(sk, 0, first, noblock, err,
				    PAGE_ALLOC_COSTLY_ORDER);
	if (!head)
		return NULL;
	bsp_msg_set_len(head, first);

	for (done = first; done < len; ) {
		size_t n = min_t(size_t, len - done, BSP_MSG_CHUNK);
		struct sk_buff *skb;

		skb = alloc_skb_with_frags(0, n, PAGE_ALLOC_COSTLY_ORDER, err,
					   sk->sk_allocation);
		if (!skb) {
			kfree_skb(head);
			return NULL;
		}
		bsp_msg_set_len(skb, n);
		skb_set_owner_w(skb, sk);
		if (prev)
			prev->next = skb;
		else
			skb_shinfo(head)->frag_list = skb;
		prev = skb;
		head->len += n;
		head->data_len += n;
		done += n;
	}
	memset(head->cb, 0, sizeof(head->cb));
	return head;
}

/*
 * Any context. An unowned message buffer of @len bytes for reassembly of
 * a message received over the rails; NULL if memory is short.
 */
struct sk_buff *bsp_msg_alloc_rx(size_t len, gfp_t gfp)
{
	struct sk_buff *head = NULL, *prev = NULL;
	size_t done = 0;
	int err;

	do {
		size_t n = min_t(size_t, len - done, BSP_MSG_CHUNK);
		struct sk_buff *skb;

		skb = alloc_skb_with_frags(0, n, PAGE_ALLOC_COSTLY_ORDER, &err,
					   gfp);
		if (!skb) {
			kfree_skb(head);
			return NULL;
		}
		bsp_msg_set_len(skb, n);
		if (!head) {
			head = skb;
		} else {
			if (prev == head)
				skb_shinfo(head)->frag_list = skb;
			else
				prev->next = skb;
			head->len += n;
			head->data_len += n;
		}
		prev = skb;
		done += n;
	} while (done < len);
	memset(head->cb, 0, sizeof(head->cb));
	return head;
}

/*
 * Upper bound of the truesize of a receive buffer of @len bytes from
 * bsp_msg_alloc_rx: what admission control charges before allocating.
 */
size_t bsp_msg_rx_truesize(size_t len)
{
	size_t chunks = len ? DIV_ROUND_UP(len, BSP_MSG_CHUNK) : 1;

	return chunks * SKB_TRUESIZE(0) + PAGE_ALIGN(len) +
	       chunks * PAGE_SIZE;
}

/* Receive memory of a socket goes back to the socket and its namespace. */
static void bsp_msg_rfree(struct sk_buff *skb)
{
	struct bsp_net *bn = bsp_pernet(sock_net(skb->sk));

	atomic_long_sub(skb->truesize, &bn->rmem);
	sock_rfree(skb);
}

/* The namespace's receive memory now counts towards its peak. */
void bsp_rmem_note_peak(struct bsp_net *bn)
{
	long now = atomic_long_read(&bn->rmem);
	long peak = atomic_long_read(&bn->rmem_peak);

	while (now > peak &&
	       !atomic_long_try_cmpxchg(&bn->rmem_peak, &peak, now))
		;
}

/*
 * Charge unowned message @skb (head and frag_list chunks) whole to @sk's
 * receive memory (sk_rmem_alloc) and to its namespace's (bsp_net.rmem,
 * bounded by net.bsp.mem), where @reserved bytes were already added for
 * it (admission control reserves an upper bound of the truesize before
 * it allocates: bsp_rx_admit); freeing the skb uncharges both. Any
 * context.
 */
void bsp_msg_charge_r_reserved(struct sk_buff *skb, struct sock *sk,
			       size_t reserved)
{
	struct bsp_net *bn = bsp_pernet(sock_net(sk));
	unsigned int truesize = 0;
	struct sk_buff *frag;

	skb_walk_frags(skb, frag)
		truesize += frag->truesize;
	skb->truesize += truesize;
	skb_set_owner_r(skb, sk);
	skb->destructor = bsp_msg_rfree;
	atomic_long_add((long)skb->truesize - (long)reserved, &bn->rmem);
	bsp_rmem_note_peak(bn);
}

void bsp_msg_charge_r(struct sk_buff *skb, struct sock *sk)
{
	bsp_msg_charge_r_reserved(skb, sk, 0);
}

/*
 * Move the ownership of message @skb from its sender to @dst: uncharge
 * every chunk from the sender, charge the whole to @dst's receive buffer.
 * Any context.
 */
void bsp_msg_transfer_to(struct sk_buff *skb, struct sock *dst)
{
	struct sk_buff *frag;

	skb_orphan(skb);
	skb_walk_frags(skb, frag)
		skb_orphan(frag);
	bsp_msg_charge_r(skb, dst);
}
