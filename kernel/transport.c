// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP rail transport: the kernel driver of the protocol engine.
 *
 * Every bound socket owns one engine endpoint (struct bspe_ep, see
 * engine/bspe.h). Reliability, acknowledgment, striping, failover and
 * pacing are the engine's; this file only feeds it events and carries out
 * its actions:
 *
 *   events in:   sendmsg (bspe_send), frames from the rails (bspe_rx),
 *                the endpoint's hrtimer (bspe_timer), recvmsg consuming
 *                (bspe_rx_resume once memory frees), rail/peer
 *                liveness (bspe_rail_set),
 *                superstep socket options;
 *   actions out: xmit (a frame is built as an skb whose payload
 *                references the message's pages, its checksum left to the
 *                device, and queued for the rail after the lock is
 *                dropped), rx_data (payload copied once, from the received
 *                frame's pages, into the message being reassembled),
 *                deliver (message queued to the socket), complete (the
 *                sender's message buffer freed, or the socket error set),
 *                timer (hrtimer).
 *
 * Contexts and locking: bsp_transport.lock (spin, bottom halves off)
 * serialises every call into one endpoint; it is taken in process
 * context (sendmsg, recvmsg, setsockopt, close, rail events under RTNL),
 * in softirq (rail receive) and in the hrtimer's softirq. Engine
 * callbacks run under it and never sleep. Frames the engine transmits are
 * queued on bsp_transport.txq under the lock and handed to the rail
 * devices after it is released, so no device transmit path runs under
 * it. Order: lock_sock > bsp_transport.lock > pending.lock >
 * sk_receive_queue.lock. The peer table is read under RCU only.
 *
 * Channel memory: the engine's fixed part is allocated at bind; each
 * channel (one remote socket) is allocated when it opens, through
 * bsp_cb_chan_alloc, and charged to the memory cgroup of the socket's
 * creator and to sk_omem_alloc; BSP_CHANNELS is a ceiling on open channels.
 * A channel's rings grow with what it holds in flight through the same
 * callback (atomic, charged the same way) and are freed when it settles.
 * Engine calls run under a spin lock, so a channel opened in process
 * context (send, expect) takes a spare allocated before the lock
 * (kvmalloc, may sleep); one the engine opens for a new sender in softirq
 * takes the spare or an atomic allocation, and a work item refills the
 * spare. A sender gets a channel only for a frame that passed the engine's
 * validation (bsp_cb_chan_new).
 *
 * Lifetime: the endpoint is created at bind and settled at close
 * (bspe_fini completes whatever is left with -ECONNRESET and aborts
 * partial reassemblies); its memory is freed by the socket destructor,
 * which runs after an RCU grace period, so RCU walkers of the namespace's
 * socket list (rail events) can still lock a closing socket's transport
 * and see it dead.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errqueue.h>
#include <linux/etherdevice.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/bsearch.h>

#include "transport.h"
#include "peer.h"
#include "rail.h"
#include "auth.h"
#include "offload.h"
#include "engine/bspe.h"

struct bsp_transport {
	spinlock_t lock;		/* serialises all engine calls */
	struct bspe_ep *ep;		/* NULL once settled */
	void *mem;
	struct bsp_sock *bs;
	struct bsp_net *bn;
	struct hrtimer timer;
	u16 msg_wnd;
	u16 max_chans;
	u16 frag_size;			/* payload bytes per DATA frame */
	struct sk_buff **slots;		/* [chan * msg_wnd + slot] */
	size_t chan_size;		/* bytes of one engine channel */
	void *spare;			/* a channel's memory, ready for softirq */
	struct bsp_endpoint *members;	/* remote group members, sorted */
	u32 nmembers;
	struct mem_cgroup *memcg;	/* charged for channels, or NULL */
	struct work_struct refill;	/* allocates the next spare */
	struct sk_buff_head txq;	/* frames to send after unlock */
	bool flushing;			/* a context is sending txq */
	u32 rx_epoch;			/* epoch of the frame in bspe_rx */
	struct sk_buff *rx_skb;		/* that frame, for its payload */
	u32 outstanding;		/* messages not yet completed */
	u32 tx_seq;			/* messages accepted by the engine */
	u64 completions;		/* for senders waiting in EAGAIN */
	wait_queue_head_t send_wait;
	/*
	 * Receive memory (see bsp_rx_admit): the slot admitted beyond
	 * SO_RCVBUF so that the reader can make progress (-1: none), the
	 * slots holding a buffer, and whether a fragment was refused for
	 * lack of room since the last resume.
	 */
	s32 over_idx;
	u32 rx_held;
	bool rx_refused;
	struct timer_list reasm_timer;	/* expiry of stalled reassembly */
};

/* Frame metadata while on txq. */
struct bsp_tx_cb {
	u32 node;
	u8 rail;
};

static struct bsp_tx_cb *bsp_tx_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct bsp_tx_cb) > sizeof_field(struct sk_buff, cb));
	return (struct bsp_tx_cb *)skb->cb;
}

static u64 bsp_now(void)
{
	return ktime_get_ns();
}

static int bsp_member_cmp(const void *a, const void *b)
{
	const struct bsp_endpoint *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (int)x->port - (int)y->port;
}

/* Under tp->lock: BSPE_CHAN_GROUP if (@node, @port) is a group member. */
static u32 bsp_member_flags(struct bsp_transport *tp, u32 node, u16 port)
{
	struct bsp_endpoint key = { .node = node, .port = port };

	if (!tp->nmembers)
		return 0;
	return bsearch(&key, tp->members, tp->nmembers, sizeof(key),
		       bsp_member_cmp) ? BSPE_CHAN_GROUP : 0;
}

/* ---- engine callbacks: tp->lock held, bottom halves off ---- */

/*
 * Frame @skb (header linear, payload in its pages) gets bytes [@off,
 * @off + @len) of message @msg as page fragments, each holding a reference
 * on its page: nothing is copied, and the pages outlive the message if it
 * completes while the frame is still queued. -EMSGSIZE if that needs more
 * than MAX_SKB_FRAGS fragments, -EINVAL if the message has bytes in a
 * linear part (neither happens with bsp_msg_alloc's buffers); the caller
 * then frees @skb, which drops the references taken so far.
 */
static int bsp_frame_ref_pages(struct sk_buff *skb, struct sk_buff *msg,
			       u32 off, u32 len)
{
	u32 pos = 0, end = off + len;
	struct sk_buff *c = msg;
	int i, n = skb_shinfo(skb)->nr_frags;

	while (c && pos < end) {
		const struct skb_shared_info *si = skb_shinfo(c);

		if (skb_headlen(c))
			return -EINVAL;
		for (i = 0; i < si->nr_frags && pos < end; i++) {
			const skb_frag_t *f = &si->frags[i];
			u32 sz = skb_frag_size(f), from, to;

			if (pos + sz > off) {
				from = max(off, pos);
				to = min(end, pos + sz);
				if (n == MAX_SKB_FRAGS)
					return -EMSGSIZE;
				skb_fill_page_desc(skb, n++, skb_frag_page(f),
						   skb_frag_off(f) + from - pos,
						   to - from);
				get_page(skb_frag_page(f));
				skb->len += to - from;
				skb->data_len += to - from;
				skb->truesize += to - from;
			}
			pos += sz;
		}
		c = c == msg ? skb_shinfo(msg)->frag_list : c->next;
	}
	return pos < end ? -EINVAL : 0;
}

/*
 * Seal frame @skb (header at skb->data, payload after it, linear or not).
 * The checksum is left to the device (CHECKSUM_PARTIAL: the Internet
 * checksum from the header's first byte to the frame's end, stored in the
 * header's csum field, which is exactly the protocol's checksum); devices
 * without NETIF_F_HW_CSUM get it from skb_checksum_help() in
 * dev_queue_xmit, and a frame that stays on this host (veth, bridge) is
 * never summed at all. The keyed MAC is computed here, over the pages.
 */
static void bsp_frame_seal(struct bsp_transport *tp, struct sk_buff *skb)
{
	struct bspe_hdr *h = (struct bspe_hdr *)skb->data;
	u16 flags = ntohs(h->flags);
	struct bspe_seal_ctx s;
	struct skb_seq_state st;
	const u8 *data;
	u32 done = 0, n;

	if (flags & BSPE_F_AUTH) {
		bspe_seal_begin(tp->ep, &s, h);
		skb_prepare_seq_read(skb, BSPE_HDR_LEN, skb->len, &st);
		while ((n = skb_seq_read(done, &data, &st)) != 0) {
			bspe_seal_update(&s, data, n);
			done += n;
		}
		bspe_seal_final(&s, h);
	} else if (flags & BSPE_F_CSUM) {
		h->csum = 0;
		skb_partial_csum_set(skb, 0, offsetof(struct bspe_hdr, csum));
	}
}

static bool bsp_tx_cache = true;
module_param_named(tx_cache, bsp_tx_cache, bool, 0644);
MODULE_PARM_DESC(tx_cache,
		 "build paged DATA frames from the per-CPU skb and page-fragment caches, and return received frames to them (default on)");

/*
 * May this context use the per-CPU caches of net/core/skbuff.c (the
 * skb heads of napi_build_skb and napi_consume_skb, the page fragments
 * of napi_alloc_frag)? They are serialised by disabling bottom halves
 * only: softirq, or process context with bottom halves off (tp->lock),
 * never a hard interrupt.
 */
static bool bsp_napi_cache_ok(void)
{
	return READ_ONCE(bsp_tx_cache) && in_softirq() && !in_hardirq();
}

/*
 * The header of a paged DATA frame: the rail devices' headroom and the
 * header, then skb_shared_info, in one page fragment (cache-line aligned,
 * as napi_build_skb wants it).
 */
static unsigned int bsp_frame_head_size(void)
{
	return SKB_DATA_ALIGN(bsp_rail_headroom() + BSPE_HDR_LEN) +
	       SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
}

/*
 * An empty skb for a paged DATA frame (its header to be put, its payload
 * referenced), or NULL. With bsp_napi_cache_ok(), the cheapest the stack
 * has: the linear part (headroom, header, skb_shared_info) is a fragment
 * of the CPU's page-fragment cache and the sk_buff comes from the CPU's
 * NAPI cache of skb heads, so no slab object is made for the linear part
 * and the sk_buff is one that napi_consume_skb gave back (a received
 * frame, bsp_frame_consume) while the cache has one, else one of a bulk
 * refill of 16 (a sender's window is larger than the cache). Such a frame
 * is an ordinary skb with head_frag set: whoever frees it, wherever, puts
 * the fragment's page reference (page_frag_free) and frees the sk_buff
 * to its slab cache or, from softirq, to that CPU's NAPI cache. Its
 * truesize is that of the fragment (build_skb). Otherwise alloc_skb, as
 * before: a kmalloc'd head and a slab sk_buff.
 */
static struct sk_buff *bsp_frame_alloc(void)
{
	unsigned int size = bsp_frame_head_size();
	struct sk_buff *skb;
	void *data;

	if (!bsp_napi_cache_ok())
		return alloc_skb(bsp_rail_headroom() + BSPE_HDR_LEN,
				 GFP_ATOMIC);
	data = napi_alloc_frag(size);
	if (!data)
		return NULL;
	skb = napi_build_skb(data, size);
	if (!skb) {
		skb_free_frag(data);
		return NULL;
	}
	return skb;
}

/*
 * Free a frame the transport has received and is done with: from softirq,
 * its sk_buff goes back to this CPU's NAPI cache (napi_consume_skb), where
 * the next frame this CPU sends (bsp_frame_alloc) takes it again, both
 * without a slab allocation; anywhere else, consume_skb.
 */
static void bsp_frame_consume(struct sk_buff *skb)
{
	if (bsp_napi_cache_ok())
		napi_consume_skb(skb, 1);
	else
		consume_skb(skb);
}

static void bsp_cb_xmit(void *ctx, const struct bspe_xmit *x)
{
	struct bsp_transport *tp = ctx;
	struct sk_buff *skb, *msg = x->msg;
	/*
	 * With a MAC, every byte is read here anyway and the receiver must
	 * check it over the whole frame: a linear frame costs the sender a
	 * copy next to the MAC and spares the receiver one.
	 */
	bool copy = ntohs(((const struct bspe_hdr *)x->hdr)->flags) &
		    BSPE_F_AUTH;
	u8 *pkt;

again:
	if (copy)
		skb = alloc_skb(bsp_rail_headroom() + BSPE_HDR_LEN + x->len,
				GFP_ATOMIC);
	else
		skb = bsp_frame_alloc();
	if (!skb) {
		bsp_count_drop(tp->bn, BSP_DROP_NOMEM);
		return;	/* lost: the engine recovers it */
	}
	skb_reserve(skb, bsp_rail_headroom());
	pkt = skb_put(skb, BSPE_HDR_LEN);
	memcpy(pkt, x->hdr, BSPE_HDR_LEN);
	if (x->len && copy) {
		if (skb_copy_bits(msg, x->off, skb_put(skb, x->len), x->len)) {
			kfree_skb(skb);
			return;
		}
		atomic_long_inc(&tp->bn->tx_copied);
	} else if (x->len) {
		if (bsp_frame_ref_pages(skb, msg, x->off, x->len)) {
			kfree_skb(skb);
			copy = true;
			goto again;
		}
		atomic_long_inc(&tp->bn->tx_paged);
	}
	bsp_frame_seal(tp, skb);
	bsp_tx_cb(skb)->node = x->node;
	bsp_tx_cb(skb)->rail = x->rail;
	__skb_queue_tail(&tp->txq, skb);
}

static bool bsp_rx_zcopy = true;
module_param_named(rx_zcopy, bsp_rx_zcopy, bool, 0644);
MODULE_PARM_DESC(rx_zcopy,
		 "keep received DATA frames in their message, payload not copied (default on)");

/*
 * Zero-copy reassembly. A message whose frames carry their payload in
 * pages the engine need not read (no MAC, checksum vouched for or absent:
 * BSPE_RX_HDR_ONLY) is kept as its frames: each is trimmed to its payload
 * and held by fragment number, in any order (rails interleave); once the
 * message is complete they hang, in order, on the frag_list of an empty
 * head skb, which recvmsg copies from as from any message. The payload is
 * then copied once, to user space, as TCP's is.
 *
 * Its receive memory is reserved whole at the first fragment that
 * arrives, as for a buffer: what its frames take if the others are like
 * that one (their number times its truesize) and the array, at least what
 * a buffer takes (bsp_msg_rx_truesize), never more than twice that; it is
 * charged to the socket (sk_rmem_alloc) from then on. A message whose
 * frame takes more than 5/4 of its bytes (1500-byte frames do, 9000-byte
 * ones do not), whose frames are fatter than that reservation, or whose
 * first fragment to arrive is its last, is copied from the start
 * (rx_copied_msgs), as it is when the namespace is more than half full.
 *
 * A fragment that cannot be kept (payload given linear, a frame with a
 * frag_list of its own, more truesize than was reserved) turns the
 * message into a buffer: what its frames held is copied into it once and
 * they are freed (rx_zcopy_undone); the reservation covers the buffer.
 * Delivery, or any freeing, settles the reservation: the frames are
 * chained and the message is charged what it holds, never more than was
 * reserved, like any other (bsp_reasm_settle).
 */
static void bsp_reasm_settle(struct bsp_transport *tp, struct sk_buff *skb)
{
	struct bsp_skb_cb *cb = bsp_cb(skb);
	u32 resv = cb->rx_resv, i, n;
	struct sk_buff **pos;

	if (!resv)
		return;
	n = cb->rx_nfrags;
	pos = &skb_shinfo(skb)->frag_list;
	for (i = 0; i < n; i++) {
		struct sk_buff *frame = cb->rx_frames[i];

		if (!frame)	/* a partial message, to be freed */
			continue;
		frame->next = NULL;
		*pos = frame;
		pos = &frame->next;
	}
	kfree(cb->rx_frames);
	cb->rx_frames = NULL;
	cb->rx_resv = 0;
	atomic_sub(resv, &tp->bs->sk.sk_rmem_alloc);
	bsp_msg_charge_r_reserved(skb, &tp->bs->sk, resv);
}

/*
 * tp->lock held: slot @idx gives up its buffer (delivered or freed), a
 * message charged to the socket like any other.
 */
static struct sk_buff *bsp_slot_take(struct bsp_transport *tp, u32 idx)
{
	struct sk_buff *skb = tp->slots[idx];

	tp->slots[idx] = NULL;
	if (skb) {
		tp->rx_held--;
		bsp_reasm_settle(tp, skb);
	}
	if (tp->over_idx == (s32)idx)
		tp->over_idx = -1;
	return skb;
}

/*
 * tp->lock held. May the first fragment of a message needing @est bytes
 * of receive memory (slot @idx) be taken? Its whole buffer (or the
 * frames it is kept as) is charged to the socket now,
 * so what a sender (or a forger) makes this socket hold is bounded:
 *
 *   - never beyond the namespace's net.bsp.mem (refused, counted
 *     BSP_DROP_MEM); and beyond half of it only in order, i.e. if the
 *     message before it on its channel was taken too (@in_order): what
 *     the namespace holds is then mostly messages that become readable
 *     as soon as their senders finish them, never a set of out-of-order
 *     messages waiting for predecessors there is no room for;
 *   - while sk_rmem_alloc is below SO_RCVBUF (as UDP: the last message
 *     taken may overshoot by its own size);
 *   - beyond that only the next message its channel delivers, only
 *     while the receive queue is empty (the reader has nothing to read:
 *     without it, partial or out-of-order messages holding the budget
 *     could wait for each other for ever), and only one at a time.
 *
 * So the socket holds at most SO_RCVBUF + 2 * 2 * bsp_msg_rx_truesize(
 * BSP_MSG_MAX) (a message kept as frames reserves up to twice what a
 * buffer takes: bsp_reasm_zc_resv). A refused fragment stays unacknowledged (-ENOBUFS, the
 * engine counts BSPE_DROP_NOBUFS): its sender keeps the message and
 * resends when prodded after recvmsg makes room (bsp_transport_rx_room).
 */
static int bsp_rx_admit(struct bsp_transport *tp, long est, bool next,
			bool in_order, u32 idx, size_t *reserved)
{
	struct sock *sk = &tp->bs->sk;
	struct bsp_net *bn = tp->bn;
	long limit = READ_ONCE(bn->mem_pages) << PAGE_SHIFT;
	/*
	 * Reserve first, then check: sockets of the namespace admit on
	 * several CPUs at once, and reading rmem before charging let two of
	 * them take the same last bytes of net.bsp.mem.
	 */
	long ns = atomic_long_add_return(est, &bn->rmem);

	if (ns > limit || (!in_order && ns > limit / 2)) {
		atomic_long_sub(est, &bn->rmem);
		bsp_count_drop(bn, BSP_DROP_MEM);
		tp->rx_refused = true;
		atomic_set(&bn->mem_waiters, 1);
		return -ENOBUFS;
	}
	*reserved = est;
	if (atomic_read(&sk->sk_rmem_alloc) < READ_ONCE(sk->sk_rcvbuf))
		return 0;
	if (next && tp->over_idx < 0 &&
	    skb_queue_empty_lockless(&sk->sk_receive_queue)) {
		tp->over_idx = idx;
		return 0;
	}
	atomic_long_sub(est, &bn->rmem);
	tp->rx_refused = true;
	return -ENOBUFS;
}

/*
 * Bytes [@from, @from + @len) of @src, wherever its pages are, are copied
 * to offset @off of message @msg.
 */
static int bsp_copy_bytes(struct sk_buff *msg, u32 off, struct sk_buff *src,
			  u32 from, u32 len)
{
	struct skb_seq_state st;
	const u8 *data;
	u32 done = 0, n;

	if (!src || from + len > src->len)
		return -EINVAL;
	skb_prepare_seq_read(src, from, from + len, &st);
	while ((n = skb_seq_read(done, &data, &st)) != 0) {
		if (skb_store_bits(msg, off + done, data, n)) {
			skb_abort_seq_read(&st);
			return -EINVAL;
		}
		done += n;
	}
	return done == len ? 0 : -EINVAL;
}

/*
 * tp->lock held. The receive memory to reserve for the message that
 * fragment @f (in frame tp->rx_skb), the first of it to arrive, opens, if
 * it is to be kept as its frames; 0 if it is to be copied into a buffer.
 * *@unit: the payload bytes of each of its fragments but the last.
 */
static long bsp_reasm_zc_resv(struct bsp_transport *tp,
			      const struct bspe_rx_frag *f, u32 *unit)
{
	struct sk_buff *frame = tp->rx_skb;
	long buf = bsp_msg_rx_truesize(f->msg_len), need;
	struct bsp_net *bn = tp->bn;
	u32 n;

	/*
	 * A frame is kept only if what it holds beyond its payload is at
	 * most a quarter of it (9000-byte frames: about a tenth): keeping
	 * 1500-byte frames would hold half as much again as their payload,
	 * and each frame's sk_buff until the reader frees it, where copying
	 * them lets their sk_buffs go back to the CPU's cache at once.
	 */
	if (!READ_ONCE(bsp_rx_zcopy) || f->data || !frame || !f->len ||
	    skb_has_frag_list(frame) ||
	    (u64)frame->truesize * 4 > (u64)(BSPE_HDR_LEN + f->len) * 5 ||
	    (f->off && f->off + f->len >= f->msg_len) || f->off % f->len)
		return 0;
	n = DIV_ROUND_UP(f->msg_len, f->len);
	need = (long)n * (frame->truesize + sizeof(frame)) + SKB_TRUESIZE(0);
	if (need > 2 * buf ||
	    atomic_long_read(&bn->rmem) + max(need, buf) >
	    (long)(READ_ONCE(bn->mem_pages) << PAGE_SHIFT) / 2)
		return 0;
	*unit = f->len;
	return max(need, buf);
}

/*
 * tp->lock held: an empty message of @len bytes in fragments of @unit
 * bytes to keep frames in, @resv reserved.
 */
static struct sk_buff *bsp_reasm_zc_start(struct bsp_transport *tp, u32 len,
					  u32 unit, u32 resv)
{
	u32 n = DIV_ROUND_UP(len, unit);
	struct sk_buff *skb = alloc_skb(0, GFP_ATOMIC | __GFP_NOWARN);
	struct sk_buff **frames;

	if (!skb)
		return NULL;
	frames = kcalloc(n, sizeof(*frames), GFP_ATOMIC | __GFP_NOWARN);
	if (!frames) {
		kfree_skb(skb);
		return NULL;
	}
	memset(skb->cb, 0, sizeof(skb->cb));
	bsp_cb(skb)->rx_frames = frames;
	bsp_cb(skb)->rx_nfrags = n;
	bsp_cb(skb)->rx_unit = unit;
	bsp_cb(skb)->rx_resv = resv;
	bsp_cb(skb)->rx_used = skb->truesize + n * sizeof(*frames);
	atomic_add(resv, &tp->bs->sk.sk_rmem_alloc);
	return skb;
}

/*
 * tp->lock held. Keep frame tp->rx_skb, which brings fragment @f, in
 * message @msg (kept as frames)? Only a frame without a frag_list of its
 * own, within the reservation; the frame is then the message's (tp->rx_skb
 * cleared: not the caller's to free).
 */
static bool bsp_reasm_keep(struct bsp_transport *tp, struct sk_buff *msg,
			   const struct bspe_rx_frag *f)
{
	struct bsp_skb_cb *cb = bsp_cb(msg);
	struct sk_buff *frame = tp->rx_skb;
	u32 i = f->off / cb->rx_unit;

	if (f->data || !frame || f->off % cb->rx_unit ||
	    i >= cb->rx_nfrags || cb->rx_frames[i] ||
	    skb_has_frag_list(frame) ||
	    cb->rx_used + frame->truesize > cb->rx_resv ||
	    BSPE_HDR_LEN + f->len > frame->len ||
	    pskb_trim(frame, BSPE_HDR_LEN + f->len))
		return false;
	__skb_pull(frame, BSPE_HDR_LEN);
	skb_orphan(frame);
	skb_dst_drop(frame);
	nf_reset_ct(frame);
	frame->next = NULL;
	cb->rx_frames[i] = frame;
	cb->rx_used += frame->truesize;
	msg->len += f->len;
	msg->data_len += f->len;
	tp->rx_skb = NULL;
	atomic_long_inc(&tp->bn->rx_zcopy);
	return true;
}

/*
 * tp->lock held: message @idx of @len bytes, kept as frames so far,
 * becomes a buffer that the bytes its frames held are copied into; the
 * frames are freed, and the reservation (at least what the buffer takes)
 * pays for the buffer.
 */
static int bsp_reasm_unzip(struct bsp_transport *tp, u32 idx, u32 len)
{
	struct sk_buff *z = tp->slots[idx], *buf;
	struct bsp_skb_cb *cb = bsp_cb(z);
	u32 resv = cb->rx_resv, i, n = cb->rx_nfrags;

	buf = bsp_msg_alloc_rx(len, GFP_ATOMIC | __GFP_NOWARN);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct sk_buff *frame = cb->rx_frames[i];

		if (frame && bsp_copy_bytes(buf, i * cb->rx_unit, frame, 0,
					    frame->len)) {
			kfree_skb(buf);
			return -EINVAL;
		}
	}
	bsp_cb(buf)->epoch = cb->epoch;
	atomic_sub(resv, &tp->bs->sk.sk_rmem_alloc);
	bsp_msg_charge_r_reserved(buf, &tp->bs->sk, resv);
	tp->slots[idx] = buf;
	for (i = 0; i < n; i++)
		kfree_skb(cb->rx_frames[i]);
	kfree(cb->rx_frames);
	kfree_skb(z);	/* unowned, uncharged */
	atomic_long_inc(&tp->bn->rx_zcopy_undone);
	return 0;
}

static int bsp_cb_rx_data(void *ctx, const struct bspe_rx_frag *f)
{
	struct bsp_transport *tp = ctx;
	u32 idx = f->chan * tp->msg_wnd + f->slot, prev;
	struct sk_buff *skb;
	size_t reserved;
	u32 unit = 0;
	long resv;
	int err;

	if (f->chan < 0 || f->chan >= tp->max_chans || f->slot >= tp->msg_wnd)
		return -EINVAL;
	skb = tp->slots[idx];
	if (f->first) {
		/* never expected: the engine aborts first */
		kfree_skb(bsp_slot_take(tp, idx));
		prev = f->chan * tp->msg_wnd +
		       (f->slot + tp->msg_wnd - 1) % tp->msg_wnd;
		resv = bsp_reasm_zc_resv(tp, f, &unit);
		err = bsp_rx_admit(tp, resv ?: bsp_msg_rx_truesize(f->msg_len),
				   f->next, f->next || tp->slots[prev], idx,
				   &reserved);
		if (err)
			return err;
		if (resv)
			skb = bsp_reasm_zc_start(tp, f->msg_len, unit,
						 reserved);
		else
			skb = bsp_msg_alloc_rx(f->msg_len,
					       GFP_ATOMIC | __GFP_NOWARN);
		if (!skb) {
			atomic_long_sub(reserved, &tp->bn->rmem);
			if (tp->over_idx == (s32)idx)
				tp->over_idx = -1;
			return -ENOMEM;
		}
		if (!resv) {
			bsp_msg_charge_r_reserved(skb, &tp->bs->sk, reserved);
			atomic_long_inc(&tp->bn->rx_copied_msgs);
		}
		bsp_rmem_note_peak(tp->bn);
		tp->slots[idx] = skb;
		tp->rx_held++;
		bsp_cb(skb)->epoch = tp->rx_epoch;
		if (!timer_pending(&tp->reasm_timer))
			mod_timer(&tp->reasm_timer, jiffies +
				  msecs_to_jiffies(READ_ONCE(tp->bn->reasm_timeout_ms)));
	}
	if (!skb)
		return -ENOMEM;
	if (!f->len)
		return 0;
	if (bsp_cb(skb)->rx_resv) {
		if (bsp_reasm_keep(tp, skb, f))
			return 0;
		err = bsp_reasm_unzip(tp, idx, f->msg_len);
		if (err)
			return err;
		skb = tp->slots[idx];
	}
	if (f->data)
		return skb_store_bits(skb, f->off, f->data, f->len) ? -EINVAL : 0;
	return bsp_copy_bytes(skb, f->off, tp->rx_skb, BSPE_HDR_LEN, f->len);
}

static void bsp_cb_rx_abort(void *ctx, int chan, u32 slot)
{
	struct bsp_transport *tp = ctx;
	u32 idx;

	if (chan < 0 || chan >= tp->max_chans || slot >= tp->msg_wnd)
		return;
	idx = chan * tp->msg_wnd + slot;
	kfree_skb(bsp_slot_take(tp, idx));
}

static void bsp_cb_deliver(void *ctx, const struct bspe_delivery *d)
{
	struct bsp_transport *tp = ctx;
	struct sock *sk = &tp->bs->sk;
	struct sk_buff *skb;
	u32 idx;

	if (d->chan < 0 || d->chan >= tp->max_chans || d->slot >= tp->msg_wnd)
		return;
	idx = d->chan * tp->msg_wnd + d->slot;
	skb = bsp_slot_take(tp, idx);
	if (!skb) {
		skb = bsp_msg_alloc_rx(0, GFP_ATOMIC);	/* empty message */
		if (!skb) {
			bsp_count_drop(tp->bn, BSP_DROP_NOMEM);
			return;
		}
		bsp_msg_charge_r(skb, sk);
		bsp_cb(skb)->epoch = tp->rx_epoch;
	}
	bsp_cb(skb)->src_node = d->node;
	bsp_cb(skb)->src_port = d->port;
	bsp_cb(skb)->dst_port = tp->bs->port;
	bsp_cb(skb)->remote = true;
	if (bsp_deliver(sk, skb)) {
		/* socket closing: nobody will read it */
		kfree_skb(skb);
	}
}

/*
 * A message of an unconnected socket failed: queue its report on the error
 * queue (recvmsg MSG_ERRQUEUE, BSP_CMSG_ERR), bounded by SO_RCVBUF like
 * received data; a report that does not fit is dropped (tx_errors still
 * counts the failure).
 */
static void bsp_report_failure(struct sock *sk, struct sk_buff *msg,
			       int status)
{
	struct sock_exterr_skb *serr;
	struct sockaddr_bsp *a;
	struct sk_buff *skb;

	skb = alloc_skb(sizeof(*a), GFP_ATOMIC);
	if (!skb)
		return;
	a = skb_put_zero(skb, sizeof(*a));
	a->sbsp_family = bsp_family;
	a->sbsp_node = bsp_cb(msg)->dst_node;
	a->sbsp_port = bsp_cb(msg)->dst_port;
	serr = SKB_EXT_ERR(skb);
	memset(serr, 0, sizeof(*serr));
	serr->ee.ee_errno = -status;
	serr->ee.ee_origin = SO_EE_ORIGIN_LOCAL;
	serr->ee.ee_info = bsp_cb(msg)->dst_port;
	serr->ee.ee_data = bsp_cb(msg)->seq;
	if (sock_queue_err_skb(sk, skb))
		kfree_skb(skb);
}

static void bsp_cb_complete(void *ctx, void *msg, int status)
{
	struct bsp_transport *tp = ctx;
	struct sock *sk = &tp->bs->sk;

	if (status) {
		atomic64_inc(&tp->bs->stats.tx_errors);
		/* connected: the socket's error; else the message's own */
		if (READ_ONCE(tp->bs->connected)) {
			WRITE_ONCE(sk->sk_err, -status);
			sk_error_report(sk);
		} else {
			bsp_report_failure(sk, msg, status);
		}
	}
	consume_skb(msg);
	tp->outstanding--;
	tp->completions++;
	wake_up_interruptible_all(&tp->send_wait);
}

static void bsp_cb_timer(void *ctx, u64 when)
{
	struct bsp_transport *tp = ctx;

	hrtimer_start(&tp->timer, ns_to_ktime(when), HRTIMER_MODE_ABS_SOFT);
}

static void bsp_cb_rail_event(void *ctx, u32 node, u8 rail, int up)
{
	struct bsp_transport *tp = ctx;

	net_info_ratelimited("port %u: engine sees rail %u of node %u %s\n",
			     tp->bs->port, rail, node, up ? "alive" : "dead");
}

/* Allocates @size bytes for a channel, charged to the socket's creator. */
static void *bsp_chan_mem_alloc(struct bsp_transport *tp, size_t size,
				gfp_t gfp)
{
	struct mem_cgroup *old = set_active_memcg(tp->memcg);
	void *mem;

	if (gfpflags_allow_blocking(gfp))
		mem = kvmalloc(size, gfp | __GFP_ACCOUNT);
	else
		mem = kmalloc(size, gfp | __GFP_ACCOUNT | __GFP_NOWARN);
	set_active_memcg(old);
	return mem;
}

static void bsp_refill_fn(struct work_struct *work)
{
	struct bsp_transport *tp = container_of(work, struct bsp_transport,
						refill);
	void *mem = bsp_chan_mem_alloc(tp, tp->chan_size, GFP_KERNEL);

	spin_lock_bh(&tp->lock);
	if (!tp->spare && tp->ep) {
		tp->spare = mem;
		mem = NULL;
	}
	spin_unlock_bh(&tp->lock);
	kvfree(mem);
}

static void *bsp_cb_chan_alloc(void *ctx, size_t size)
{
	struct bsp_transport *tp = ctx;
	void *mem = tp->spare;

	if (size != tp->chan_size) {
		/*
		 * A channel's ring grows (what it holds in flight): atomic,
		 * charged like the channel; the engine waits or drops the
		 * fragment (to be resent) if it fails.
		 */
		mem = bsp_chan_mem_alloc(tp, size, GFP_ATOMIC);
		if (mem)
			atomic_add(size, &tp->bs->sk.sk_omem_alloc);
		return mem;
	}
	if (mem) {
		tp->spare = NULL;
		schedule_work(&tp->refill);
	} else {
		mem = bsp_chan_mem_alloc(tp, size, GFP_ATOMIC);
		if (!mem) {
			schedule_work(&tp->refill);
			return NULL;
		}
	}
	atomic_add(size, &tp->bs->sk.sk_omem_alloc);
	return mem;
}

static void bsp_cb_chan_free(void *ctx, void *mem, size_t size)
{
	struct bsp_transport *tp = ctx;

	atomic_sub(size, &tp->bs->sk.sk_omem_alloc);
	kvfree(mem);	/* deferred if vmalloc'd: bottom halves are off */
}

/*
 * A frame that passed validation comes from a socket without a channel:
 * the engine opens one, with the rails the peer table knows alive.
 */
static int bsp_cb_chan_new(void *ctx, u32 node, u16 port, void **cookie,
			   u8 *rails)
{
	struct bsp_transport *tp = ctx;
	struct bsp_peer *p;
	u8 r, up = 0;

	rcu_read_lock();
	p = bsp_peer_lookup_rcu(tp->bn, node);
	for (r = 0; p && r < bsp_max_rails; r++)
		if (READ_ONCE(p->rails[r].alive))
			up |= BIT(r);
	rcu_read_unlock();
	*rails = up;
	return bsp_member_flags(tp, node, port);
}

static u32 bsp_next_incarnation(struct bsp_net *bn);

/*
 * A channel was freed while its peer may still know it (eviction, close):
 * the next channels get a newer incarnation, from the counter the sockets'
 * come from, so that a later socket on the same port is newer still.
 */
static u32 bsp_cb_new_inc(void *ctx)
{
	struct bsp_transport *tp = ctx;

	return bsp_next_incarnation(tp->bn);
}

static const struct bspe_ops bsp_engine_ops = {
	.xmit		= bsp_cb_xmit,
	.rx_data	= bsp_cb_rx_data,
	.deliver	= bsp_cb_deliver,
	.rx_abort	= bsp_cb_rx_abort,
	.complete	= bsp_cb_complete,
	.timer		= bsp_cb_timer,
	.rail_event	= bsp_cb_rail_event,
	.chan_alloc	= bsp_cb_chan_alloc,
	.chan_free	= bsp_cb_chan_free,
	.chan_new	= bsp_cb_chan_new,
	.new_inc	= bsp_cb_new_inc,
};

/* ---- helpers ---- */

static void bsp_lock(struct bsp_transport *tp)
	__acquires(&tp->lock)
{
	spin_lock_bh(&tp->lock);
}

/*
 * RCU read side, flusher only: frame @head, just taken from @q, and the
 * frames after it in @q for the same (node, rail), oldest first, as one
 * super-frame (offload.c) as far as it may hold them. A frame of that
 * (node, rail) that cannot join ends the chain: it and the ones after it
 * stay in @q, so no frame overtakes an older one on its rail. Frames for
 * other (node, rail) pairs stay where they are.
 */
static struct sk_buff *bsp_tx_chain(struct bsp_transport *tp,
				    struct sk_buff *head,
				    struct sk_buff_head *q)
{
	const struct bsp_tx_cb *hcb = bsp_tx_cb(head);
	struct bsp_gso_chain c;
	struct sk_buff *skb, *tmp;
	unsigned int max_len, max_segs = 0;

	if (!READ_ONCE(bsp_tx_gso) || skb_queue_empty(q))
		return head;
	max_len = bsp_rail_gso_max(tp->bn, hcb->rail, &max_segs);
	if (!bsp_gso_start(&c, head, max_len, max_segs))
		return head;
	skb_queue_walk_safe(q, skb, tmp) {
		const struct bsp_tx_cb *cb = bsp_tx_cb(skb);

		if (cb->node != hcb->node || cb->rail != hcb->rail)
			continue;
		if (!bsp_gso_fits(&c, skb))
			break;
		__skb_unlink(skb, q);
		bsp_gso_add(&c, skb);
	}
	return bsp_gso_finish(&c, tp->bn);
}

/*
 * Unlock, then send what the engine queued. Any context but hardirq.
 *
 * Frames must reach each rail in the order the engine made them: a
 * control frame tells the receiver that every DATA frame sent before it on
 * its rail has left (bspe_rcv_eoh), so a frame overtaking an older one
 * would be taken for a loss and resent for nothing. One context at a time
 * is the flusher; others only leave their frames on txq, and the flusher
 * sends them, oldest first, before it gives up the role. Consecutive
 * frames for one (node, rail) leave as one super-frame (bsp_tx_chain),
 * which keeps their order on that rail; frames for different rails or
 * nodes are not ordered with respect to each other anyway.
 */
static void bsp_unlock_flush(struct bsp_transport *tp)
	__releases(&tp->lock)
{
	struct sk_buff_head q;
	struct sk_buff *skb;

	if (tp->flushing || skb_queue_empty(&tp->txq)) {
		spin_unlock_bh(&tp->lock);
		return;
	}
	tp->flushing = true;
	__skb_queue_head_init(&q);
	do {
		skb_queue_splice_init(&tp->txq, &q);
		spin_unlock_bh(&tp->lock);

		rcu_read_lock();
		while ((skb = __skb_dequeue(&q))) {
			struct bsp_tx_cb *cb = bsp_tx_cb(skb);
			u8 dst[ETH_ALEN];
			struct bsp_peer *p;
			bool ok = false;

			p = bsp_peer_lookup_rcu(tp->bn, cb->node);
			if (p && cb->rail < BSP_MAX_RAILS &&
			    p->rails[cb->rail].known) {
				ether_addr_copy(dst, p->rails[cb->rail].addr);
				ok = true;
			}
			if (!ok) {
				kfree_skb(skb);	/* no address: lost, recovered */
				continue;
			}
			skb = bsp_tx_chain(tp, skb, &q);
			bsp_rail_xmit(tp->bn, cb->rail, dst, skb);
		}
		rcu_read_unlock();

		spin_lock_bh(&tp->lock);
	} while (!skb_queue_empty(&tp->txq));
	tp->flushing = false;
	spin_unlock_bh(&tp->lock);
}

/* Under tp->lock: tell a (new) channel's engine which rails of @node live. */
static void bsp_sync_rails(struct bsp_transport *tp, u32 node, u64 now)
{
	struct bsp_peer *p;
	u8 r;

	rcu_read_lock();
	p = bsp_peer_lookup_rcu(tp->bn, node);
	for (r = 0; r < bsp_max_rails; r++)
		bspe_rail_set(tp->ep, node, r,
			      p && READ_ONCE(p->rails[r].alive), now);
	rcu_read_unlock();
}

/*
 * Process context, before tp->lock: make sure a spare channel allocation
 * is ready, so that opening a channel under the lock need not allocate.
 */
static void bsp_spare_fill(struct bsp_transport *tp)
{
	void *mem;

	if (READ_ONCE(tp->spare))
		return;
	mem = bsp_chan_mem_alloc(tp, tp->chan_size, GFP_KERNEL);
	if (!mem)
		return;	/* the open falls back to an atomic allocation */
	spin_lock_bh(&tp->lock);
	if (!tp->spare && tp->ep) {
		tp->spare = mem;
		mem = NULL;
	}
	spin_unlock_bh(&tp->lock);
	kvfree(mem);
}

/* Under tp->lock: the channel to (@node, @port), opened if needed. */
static int bsp_chan_get(struct bsp_transport *tp, u32 node, u16 port,
			u32 flags, u64 now)
{
	int chan = bspe_chan_find(tp->ep, node, port);
	bool fresh = chan < 0;

	if (chan >= 0 && !flags)
		return chan;
	flags |= bsp_member_flags(tp, node, port);
	chan = bspe_chan_open(tp->ep, node, port, flags, NULL);
	if (chan >= 0 && fresh)
		bsp_sync_rails(tp, node, now);
	return chan;
}

static enum hrtimer_restart bsp_timer_fn(struct hrtimer *t)
{
	struct bsp_transport *tp = container_of(t, struct bsp_transport,
						timer);

	bsp_lock(tp);
	if (tp->ep)
		bspe_timer(tp->ep, bsp_now());
	bsp_unlock_flush(tp);
	return HRTIMER_NORESTART;
}

/*
 * Incarnation of a new socket (Documentation/protocol.rst "Incarnations"):
 * strictly newer, in serial arithmetic, than that of every earlier socket of
 * the namespace, and not older than the real-time clock in milliseconds, so
 * that a socket after a module reload is newer than those before it too.
 */
static u32 bsp_next_incarnation(struct bsp_net *bn)
{
	u32 now = bsp_realtime_ms(), old, inc;

	do {
		old = atomic_read(&bn->sock_inc);
		inc = old + 1;
		if ((s32)(now - inc) > 0)
			inc = now;
		if (!inc)
			inc = 1;
	} while (atomic_cmpxchg(&bn->sock_inc, old, inc) != old);
	return inc;
}

/*
 * Softirq: reassembly expiry. A channel holding a partial (or complete
 * but undeliverable) message that accepted no fragment for
 * net.bsp.reasm_timeout_ms is closed: its buffers are freed and counted
 * (reasm_expired). Runs while any slot holds a buffer, every quarter of
 * the timeout, so a stalled reassembly goes within 1.25 timeouts.
 */
static void bsp_reasm_timer_fn(struct timer_list *t)
{
	struct bsp_transport *tp = from_timer(tp, t, reasm_timer);
	u32 ms = READ_ONCE(tp->bn->reasm_timeout_ms);
	u32 closed = 0;
	bool again;

	bsp_lock(tp);
	if (tp->ep)
		closed = bspe_rx_expire(tp->ep, (u64)ms * NSEC_PER_MSEC,
					bsp_now());
	again = tp->ep && tp->rx_held;
	if (again)
		mod_timer(&tp->reasm_timer,
			  jiffies + msecs_to_jiffies(max(ms / 4, 1U)));
	bsp_unlock_flush(tp);
	if (closed)
		atomic_long_add(closed, &tp->bn->reasm_expired);
}

/* Smallest MTU of the namespace's rails now, or Ethernet's. RTNL-free. */
static u32 bsp_rails_mtu(struct bsp_net *bn)
{
	struct bsp_master *m;
	u32 mtu = 0;
	int i;

	rcu_read_lock();
	m = rcu_dereference(bn->master);
	for (i = 0; m && i < BSP_MAX_RAILS; i++) {
		struct bsp_rail *r = rcu_dereference(m->rails[i]);
		u32 d = r ? READ_ONCE(r->dev->mtu) : 0;

		if (d && (!mtu || d < mtu))
			mtu = d;
	}
	rcu_read_unlock();
	return mtu ?: ETH_DATA_LEN;
}

/* ---- socket side ---- */

/*
 * Frees @tp and what it holds (any of it may be NULL): after
 * bsp_transport_close, or when bsp_transport_create fails (the timers and
 * the refill work were never started).
 */
static void bsp_transport_free_tp(struct bsp_transport *tp)
{
	kvfree(tp->spare);
	kvfree(tp->members);
	mem_cgroup_put(tp->memcg);
	kvfree(tp->slots);
	kvfree(tp->mem);
	kfree(tp);
}

int bsp_transport_create(struct bsp_sock *bs)
{
	struct bsp_net *bn = bsp_pernet(sock_net(&bs->sk));
	struct bsp_transport *tp;
	struct bspe_cfg cfg;
	size_t size;
	u32 mtu, peer_mtu;
	int err;

	bspe_cfg_default(&cfg);
	cfg.node = bsp_node_id(bn);
	cfg.port = bs->port;
	cfg.incarnation = bsp_next_incarnation(bn);
	cfg.nrails = bsp_max_rails;
	cfg.flags = BSPE_CFG_AUTO_OPEN | BSPE_CFG_EXT_RCVBUF;
	get_random_bytes(cfg.hash_key, sizeof(cfg.hash_key));
	if (bsp_key_get(bn, cfg.key))
		/* every frame signed and checked: the MAC covers the checksum */
		cfg.flags |= BSPE_CFG_AUTH;
	else if (bsp_checksum)
		cfg.flags |= BSPE_CFG_CSUM | BSPE_CFG_REQUIRE_CSUM;
	cfg.max_chans = bs->chans ?: bsp_max_chans;	/* a ceiling */
	/*
	 * A superstep's total exchange holds two packets or more per peer
	 * until the next barrier settles them (a count and a data message),
	 * sent in one burst when streams follow counts: the packet budget
	 * follows the channel ceiling (BSP_CHANNELS, the job's p), 8 per
	 * channel, never below the default, so that neither the sender's
	 * nor the receiver's fine-grained rule asks for acknowledgements
	 * the barrier gives anyway. Bytes stay bounded by SO_SNDBUF;
	 * descriptors are allocated as they are used.
	 */
	cfg.sndbuf_pkts = max_t(u32, cfg.sndbuf_pkts, 8 * (u32)cfg.max_chans);
	/* our rails and what the peers known now accept (their hellos) */
	mtu = bsp_rails_mtu(bn);
	peer_mtu = bsp_peers_min_mtu(bn);
	if (peer_mtu && peer_mtu < mtu)
		mtu = peer_mtu;
	mtu = min_t(u32, mtu, U16_MAX);
	cfg.frag_size = mtu - BSPE_HDR_LEN;
	cfg.max_msg = BSP_MSG_MAX;
	cfg.rcvbuf = max_t(u32, READ_ONCE(bs->sk.sk_rcvbuf), BSP_MSG_MAX);
	cfg.unreach_ns = (u64)bsp_unreach_ms * NSEC_PER_MSEC;
	cfg.evict_ns = (u64)READ_ONCE(bn->chan_idle_ms) * NSEC_PER_MSEC;
	cfg.rto_min_ns = (u64)clamp_t(unsigned int, READ_ONCE(bsp_rto_min_ms),
				      1, 60000) * NSEC_PER_MSEC;
	if (bspe_cfg_check(&cfg))
		return -EINVAL;
	size = bspe_mem_size(&cfg);
	if (!size)
		return -EINVAL;

	tp = kzalloc(sizeof(*tp), GFP_KERNEL_ACCOUNT);
	if (!tp)
		return -ENOMEM;
	/*
	 * The engine's fixed part (12 bytes per channel of the BSP_CHANNELS
	 * ceiling) and the reassembly slot pointers (msg_wnd per channel of
	 * the ceiling); channels are allocated when they open.
	 */
	tp->mem = kvzalloc(size, GFP_KERNEL_ACCOUNT);
	tp->slots = kvcalloc((size_t)cfg.max_chans * cfg.msg_wnd,
			     sizeof(*tp->slots), GFP_KERNEL_ACCOUNT);
	err = -ENOMEM;
	if (!tp->mem || !tp->slots)
		goto out_free;
	tp->memcg = get_mem_cgroup_from_mm(current->mm);
	tp->chan_size = bspe_chan_size(&cfg);
	INIT_WORK(&tp->refill, bsp_refill_fn);
	spin_lock_init(&tp->lock);
	skb_queue_head_init(&tp->txq);
	init_waitqueue_head(&tp->send_wait);
	hrtimer_init(&tp->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	tp->timer.function = bsp_timer_fn;
	timer_setup(&tp->reasm_timer, bsp_reasm_timer_fn, 0);
	tp->over_idx = -1;
	tp->bs = bs;
	tp->bn = bn;
	tp->msg_wnd = cfg.msg_wnd;
	tp->frag_size = cfg.frag_size;
	tp->max_chans = cfg.max_chans;
	tp->ep = bspe_init(tp->mem, size, &cfg, &bsp_engine_ops, tp);
	memzero_explicit(cfg.key, sizeof(cfg.key));	/* the engine has it */
	err = -EINVAL;
	if (!tp->ep)
		goto out_free;
	if (READ_ONCE(bs->pacing_rate))
		bspe_set_pacing(tp->ep, bs->pacing_rate, bsp_now());
	WRITE_ONCE(bs->tp, tp);
	bsp_spare_fill(tp);	/* the first sender's channel, in softirq */
	return 0;

out_free:
	bsp_transport_free_tp(tp);
	return err;
}

void bsp_transport_close(struct bsp_sock *bs)
{
	struct bsp_transport *tp = bs->tp;
	struct sock *sk = &bs->sk;
	void *spare;
	long linger;
	u32 i;

	if (!tp)
		return;
	/*
	 * Linger until the engine settled what was sent: a message completes
	 * when acknowledged, or fails after unreach_ms without progress; but
	 * one to a receiver that is alive and full (BUSY) waits as long as
	 * that receiver does not read. SO_LINGER, else close_linger_ms
	 * (default 30 s; 0 = no cap) bounds the wait; a signal ends it.
	 */
	if (sock_flag(sk, SOCK_LINGER))
		linger = sk->sk_lingertime;
	else if (bsp_close_linger_ms)
		linger = msecs_to_jiffies(bsp_close_linger_ms);
	else
		linger = MAX_SCHEDULE_TIMEOUT;
	if (linger)
		wait_event_interruptible_timeout(tp->send_wait,
						 !READ_ONCE(tp->outstanding),
						 linger);

	/*
	 * Tell the peers this socket goes: they settle what it received
	 * (instead of probing a closed port until unreach_ms) and free their
	 * channel to it (a new socket on the same port starts afresh).
	 */
	bsp_lock(tp);
	if (tp->ep)
		bspe_close_notify(tp->ep, bsp_now());
	bsp_unlock_flush(tp);

	bsp_lock(tp);
	if (tp->ep) {
		bspe_fini(tp->ep);
		tp->ep = NULL;
	}
	for (i = 0; i < (u32)tp->max_chans * tp->msg_wnd; i++)
		kfree_skb(bsp_slot_take(tp, i));
	tp->rx_held = 0;
	tp->over_idx = -1;
	spare = tp->spare;
	tp->spare = NULL;
	__skb_queue_purge(&tp->txq);
	spin_unlock_bh(&tp->lock);
	hrtimer_cancel(&tp->timer);
	del_timer_sync(&tp->reasm_timer);
	cancel_work_sync(&tp->refill);	/* it finds tp->ep NULL: keeps nothing */
	kvfree(spare);
}

void bsp_transport_free(struct bsp_sock *bs)
{
	struct bsp_transport *tp = bs->tp;

	if (!tp)
		return;
	bs->tp = NULL;
	bsp_transport_free_tp(tp);
}

void bsp_transport_destroy(struct bsp_sock *bs)
{
	struct bsp_transport *tp = bs->tp;

	if (!tp)
		return;
	bsp_transport_close(bs);
	WRITE_ONCE(bs->tp, NULL);
	/* rail events and receivers find sockets under RCU */
	synchronize_rcu();
	bsp_transport_free_tp(tp);
}

bool bsp_transport_node_reachable(struct bsp_net *bn, u32 node)
{
	return bsp_peer_reachable(bn, node,
				  msecs_to_jiffies(READ_ONCE(bsp_unreach_ms)));
}

int bsp_transport_send(struct bsp_sock *bs, struct sk_buff *skb, u32 node,
		       u16 port, u32 send_flags, bool noblock, long *timeo)
{
	struct bsp_transport *tp = READ_ONCE(bs->tp);
	u32 flags = 0, peer_mtu;
	u64 seen;
	int chan, err;
	long rc;

	if (!tp)
		return -ENOTCONN;
	/*
	 * The packet size is fixed at bind; a peer that announces a smaller
	 * MTU on one of its live rails would never receive our larger
	 * frames: refuse at once what would need them.
	 */
	peer_mtu = bsp_peer_mtu(tp->bn, node);
	if (peer_mtu && BSPE_HDR_LEN + min_t(u32, skb->len, tp->frag_size) >
			peer_mtu)
		return -EMSGSIZE;
	if (send_flags & BSP_SEND_LAST)
		flags |= BSPE_SEND_LAST;
	if (send_flags & BSP_SEND_SYNC)
		flags |= BSPE_SEND_SYNC;

	for (;;) {
		u64 now;

		bsp_spare_fill(tp);
		now = bsp_now();

		bsp_lock(tp);
		if (!tp->ep) {
			bsp_unlock_flush(tp);
			return -EPIPE;
		}
		chan = bsp_chan_get(tp, node, port, 0, now);
		if (chan < 0) {
			bsp_unlock_flush(tp);
			return chan == -ENOSPC || chan == -ENOMEM ? -ENOBUFS :
			       chan;
		}
		bsp_cb(skb)->dst_node = node;
		bsp_cb(skb)->seq = tp->tx_seq + 1;
		err = bspe_send(tp->ep, chan, skb, skb->len, flags, now);
		if (!err) {
			tp->outstanding++;
			tp->tx_seq++;
		}
		seen = tp->completions;
		bsp_unlock_flush(tp);
		if (err != -EAGAIN)
			return err;
		/* the channel's message window is full: wait for a completion */
		if (noblock || !*timeo)
			return -EAGAIN;
		rc = wait_event_interruptible_timeout(tp->send_wait,
						      READ_ONCE(tp->completions) != seen,
						      *timeo);
		if (rc < 0)
			return sock_intr_errno(*timeo);
		*timeo = rc;
	}
}

/*
 * RCU read side: prod the senders of @tp's refused fragments, if a message
 * of the largest size would now be taken (else they would only be refused
 * again: the engine's own prods, and recvmsg making more room, retry).
 */
static bool bsp_ns_has_room(struct bsp_net *bn)
{
	unsigned long limit = READ_ONCE(bn->mem_pages) << PAGE_SHIFT;

	return (unsigned long)atomic_long_read(&bn->rmem) +
	       bsp_msg_rx_truesize(BSP_MSG_MAX) <= limit;
}

static void bsp_rx_resume_tp(struct bsp_transport *tp)
{
	struct sock *sk;

	if (!tp || !READ_ONCE(tp->rx_refused) || !bsp_ns_has_room(tp->bn))
		return;
	sk = &tp->bs->sk;
	if (atomic_read(&sk->sk_rmem_alloc) >= READ_ONCE(sk->sk_rcvbuf) &&
	    !skb_queue_empty_lockless(&sk->sk_receive_queue))
		return;
	bsp_lock(tp);
	if (tp->ep && tp->rx_refused) {
		tp->rx_refused = false;
		bspe_rx_resume(tp->ep, bsp_now());
	}
	bsp_unlock_flush(tp);
}

void bsp_transport_rx_room(struct bsp_sock *bs)
{
	struct bsp_net *bn = bsp_pernet(sock_net(&bs->sk));
	struct bsp_sock *other;

	rcu_read_lock();
	bsp_rx_resume_tp(READ_ONCE(bs->tp));
	/*
	 * Sockets refused because the namespace was full (net.bsp.mem) may
	 * have nothing to read themselves: memory freed here is theirs too.
	 * One lock at a time, as for rail events.
	 */
	if (atomic_read(&bn->mem_waiters) && bsp_ns_has_room(bn) &&
	    atomic_xchg(&bn->mem_waiters, 0))
		hlist_for_each_entry_rcu(other, &bn->socks, list_node)
			if (other != bs)
				bsp_rx_resume_tp(READ_ONCE(other->tp));
	rcu_read_unlock();
}

u32 bsp_transport_channels(const struct bsp_transport *tp)
{
	return tp->max_chans;
}

/*
 * The group's remote members get their channels when they are first used
 * (a send, an expectation, or a valid frame from them), with the GROUP
 * flag; channels already open to members get it now. A group with more
 * remote members than the channel ceiling is refused (ENOBUFS).
 */
int bsp_transport_set_group(struct bsp_sock *bs)
{
	struct bsp_net *bn = bsp_pernet(sock_net(&bs->sk));
	struct bsp_transport *tp = bs->tp;
	struct bsp_endpoint *members = NULL;
	u32 i, n = 0;
	int chan;

	if (!tp)
		return 0;
	if (bs->group_size) {
		members = kvmalloc_array(bs->group_size, sizeof(*members),
					 GFP_KERNEL_ACCOUNT);
		if (!members)
			return -ENOMEM;
	}
	for (i = 0; i < bs->group_size; i++) {
		const struct bsp_endpoint *m = &bs->group[i];

		if (m->node == BSP_NODE_LOCAL || m->node == bsp_node_id(bn))
			continue;	/* same node: no channel */
		members[n].node = m->node;
		members[n].port = m->port;
		members[n].reserved = 0;
		n++;
	}
	if (n > tp->max_chans) {
		kvfree(members);
		return -ENOBUFS;
	}
	sort(members, n, sizeof(*members), bsp_member_cmp, NULL);
	bsp_lock(tp);
	if (tp->ep) {
		/* the socket's epoch restarts from 0: the engine's with it */
		bspe_group_reset(tp->ep, bsp_now());
		bspe_set_nprocs(tp->ep, max_t(u32, bs->group_size, 1));
		swap(tp->members, members);
		tp->nmembers = n;
		for (i = 0; i < n; i++) {
			const struct bsp_endpoint *m = &tp->members[i];

			chan = bspe_chan_find(tp->ep, m->node, m->port);
			if (chan >= 0)
				bspe_chan_open(tp->ep, m->node, m->port,
					       BSPE_CHAN_GROUP, NULL);
		}
	}
	bsp_unlock_flush(tp);
	kvfree(members);	/* the previous group's */
	return 0;
}

void bsp_transport_superstep_done(struct bsp_sock *bs, u32 epoch)
{
	struct bsp_transport *tp = bs->tp;

	if (!tp)
		return;
	bsp_lock(tp);
	if (tp->ep)
		bspe_superstep_done(tp->ep, epoch, bsp_now());
	bsp_unlock_flush(tp);
}

int bsp_transport_expect(struct bsp_sock *bs, const struct bsp_expect *e)
{
	struct bsp_net *bn = bsp_pernet(sock_net(&bs->sk));
	struct bsp_transport *tp = bs->tp;
	int chan, err = 0;
	u64 now;

	if (!tp || e->peer.node == BSP_NODE_LOCAL ||
	    e->peer.node == bsp_node_id(bn))
		return 0;	/* local messages need no prods */
	bsp_spare_fill(tp);
	now = bsp_now();
	bsp_lock(tp);
	if (tp->ep) {
		chan = bsp_chan_get(tp, e->peer.node, e->peer.port,
				    BSPE_CHAN_GROUP, now);
		err = chan < 0 ? chan :
		      bspe_expect(tp->ep, chan, e->messages,
				  e->flags & BSP_EXPECT_SYNC ?
				  BSPE_EXPECT_SYNC : 0, now);
	}
	bsp_unlock_flush(tp);
	return err;
}

void bsp_transport_set_pacing(struct bsp_sock *bs, u64 rate)
{
	struct bsp_transport *tp = bs->tp;

	if (!tp)
		return;
	bsp_lock(tp);
	if (tp->ep)
		bspe_set_pacing(tp->ep, rate, bsp_now());
	bsp_unlock_flush(tp);
}

void bsp_transport_set_follow(struct bsp_sock *bs, bool follow)
{
	struct bsp_transport *tp = bs->tp;

	if (!tp)
		return;
	bsp_lock(tp);
	if (tp->ep)
		bspe_set_follow(tp->ep, follow);
	bsp_unlock_flush(tp);
}

void bsp_transport_stats(struct bsp_sock *bs, struct bsp_sock_stats *st)
{
	struct bsp_transport *tp = READ_ONCE(bs->tp);
	struct bspe_stats stats = { }, *s = &stats;
	int i;

	if (!tp)
		return;
	bsp_lock(tp);
	if (tp->ep)
		bspe_stats_get(tp->ep, -1, -1, s);
	spin_unlock_bh(&tp->lock);

	st->pkts_tx = s->data_tx;
	st->pkts_rx = s->data_rx;
	st->retransmits = s->retx_hole + s->retx_prod + s->retx_timeout +
			  s->retx_failover;
	st->failovers = s->retx_failover;
	st->acks_tx = s->acks_tx;
	st->acks_rx = s->acks_rx;
	st->acked_implicit = s->acked_implicit;
	st->rx_dropped = 0;
	for (i = 0; i < BSPE_DROP_MAX; i++)
		st->rx_dropped += s->drops[i];
}

/* The UAPI drop reasons are the engine's, number for number. */
#define BSP_SAME_DROP(x) \
	BUILD_BUG_ON((int)BSPE_DROP_##x != (int)BSP_PROTO_DROP_##x)

static void bsp_proto_drop_check(void)
{
	BUILD_BUG_ON((int)BSPE_DROP_MAX != (int)__BSP_PROTO_DROP_MAX);
	BUILD_BUG_ON(__BSP_PROTO_DROP_MAX > BSP_PROTO_DROP_SLOTS);
	BSP_SAME_DROP(TRUNCATED);
	BSP_SAME_DROP(VERSION);
	BSP_SAME_DROP(TYPE);
	BSP_SAME_DROP(FLAGS);
	BSP_SAME_DROP(CSUM);
	BSP_SAME_DROP(ADDR);
	BSP_SAME_DROP(RAIL);
	BSP_SAME_DROP(NOCHAN);
	BSP_SAME_DROP(MALFORMED);
	BSP_SAME_DROP(TOOBIG);
	BSP_SAME_DROP(EPOCH);
	BSP_SAME_DROP(SEQ_WINDOW);
	BSP_SAME_DROP(MSG_WINDOW);
	BSP_SAME_DROP(NOBUFS);
	BSP_SAME_DROP(NOMEM);
	BSP_SAME_DROP(DUP);
	BSP_SAME_DROP(AUTH);
	BSP_SAME_DROP(STALE);
}

void bsp_transport_proto_stats(struct bsp_sock *bs,
			       struct bsp_proto_stats *st)
{
	struct bsp_transport *tp = READ_ONCE(bs->tp);
	struct bspe_stats stats = { }, *s = &stats;
	u64 srtt = 0;
	int i;

	bsp_proto_drop_check();
	memset(st, 0, sizeof(*st));
	if (!tp)
		return;
	bsp_lock(tp);
	if (tp->ep) {
		bspe_stats_get(tp->ep, -1, -1, s);
		for (i = 0; i < tp->max_chans; i++)
			srtt = max(srtt, bspe_chan_rtt(tp->ep, i));
	}
	spin_unlock_bh(&tp->lock);

	st->data_tx = s->data_tx;
	st->data_rx = s->data_rx;
	st->bytes_tx = s->bytes_tx;
	st->bytes_rx = s->bytes_rx;
	st->retx_hole = s->retx_hole;
	st->retx_prod = s->retx_prod;
	st->retx_timeout = s->retx_timeout;
	st->retx_failover = s->retx_failover;
	st->spurious_rx = s->spurious_rx;
	st->dup_rx = s->dup_rx;
	st->acks_tx = s->acks_tx;
	st->acks_rx = s->acks_rx;
	st->ackreq_tx = s->ackreq_tx;
	st->acked_piggy = s->acked_piggy;
	st->acked_implicit = s->acked_implicit;
	st->prods_tx = s->prods_tx;
	st->prods_rx = s->prods_rx;
	st->prods_early = s->prods_early;
	st->probes_tx = s->probes_tx;
	st->timeouts = s->timeouts;
	st->rail_down = s->rail_down;
	st->rail_up = s->rail_up;
	st->msgs_tx = s->msgs_tx;
	st->msgs_rx = s->msgs_rx;
	st->msgs_failed = s->msgs_failed;
	st->chan_closes = s->chan_closes;
	st->srtt_max_ns = srtt;
	for (i = 0; i < BSPE_DROP_MAX; i++)
		st->drops[i] = s->drops[i];
	st->chans_evicted = s->chans_evicted;
	st->evicts_tx = s->evicts_tx;
	st->evicts_kept = s->evicts_kept;
	st->evicts_gone = s->evicts_gone;
	st->chan_restarts = s->chan_restarts;
	st->msgs_abandoned = s->msgs_abandoned;
	st->chan_resets = s->chan_resets;
}

/* ---- rail side ---- */

/*
 * tp->lock held, tp->ep set: hand frame @skb (its header linear) to the
 * engine.
 *
 * A frame that never left this host (CHECKSUM_PARTIAL: a rail's veth peer
 * passed a frame of this host on) was never summed; its checksum is what
 * the sending device would have filled in, so it is vouched for, as TCP
 * does. Without a MAC to check, the engine then needs only the header and
 * the frame is kept in its message, its payload not copied
 * (bsp_reasm_keep), or the payload is copied once, from the frame's pages;
 * otherwise the frame is made linear first and checked whole. *@kept:
 * the frame is the message's now, not the caller's to free.
 */
static int bsp_engine_rx(struct bsp_transport *tp, u8 rail,
			 struct sk_buff *skb, bool *kept)
{
	u16 flags = ntohs(((const struct bspe_hdr *)skb->data)->flags);
	u8 hdr[BSPE_HDR_LEN];
	const void *pkt;
	u32 rx_flags = 0;
	int err;

	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		rx_flags |= BSPE_RX_CSUM_OK;
		atomic_long_inc(&tp->bn->rx_csum_vouched);
	}
	if (skb_is_nonlinear(skb) &&
	    !(bspe_get_cfg(tp->ep)->flags & BSPE_CFG_AUTH) &&
	    (!(flags & BSPE_F_CSUM) || (rx_flags & BSPE_RX_CSUM_OK))) {
		rx_flags |= BSPE_RX_HDR_ONLY;
		atomic_long_inc(&tp->bn->rx_paged);
	} else if (skb_is_nonlinear(skb)) {
		if (skb_linearize(skb))
			return -ENOMEM;
		atomic_long_inc(&tp->bn->rx_linearized);
	}
	/*
	 * Header only: the engine reads a copy, as the frame may become the
	 * message's (bsp_reasm_keep) and be delivered, read and freed by
	 * the time the engine is done with the header.
	 */
	pkt = skb->data;
	if (rx_flags & BSPE_RX_HDR_ONLY) {
		memcpy(hdr, skb->data, BSPE_HDR_LEN);
		pkt = hdr;
	}
	tp->rx_skb = skb;
	err = bspe_rx_ext(tp->ep, rail, pkt, skb->len, rx_flags, bsp_now());
	*kept = !tp->rx_skb;
	tp->rx_skb = NULL;
	return err;
}

/*
 * The checks of frame @skb that need no lookup: its header, to this node.
 * False: dropped and counted, consumed.
 */
static bool bsp_rx_frame_ok(struct bsp_net *bn, struct sk_buff *skb)
{
	const struct bspe_hdr *h;

	if (skb->len < BSPE_HDR_LEN) {
		bsp_count_drop(bn, BSP_DROP_SHORT);
		goto drop;
	}
	if (!pskb_may_pull(skb, BSPE_HDR_LEN)) {
		bsp_count_drop(bn, BSP_DROP_NOMEM);
		goto drop;
	}
	h = (const struct bspe_hdr *)skb->data;
	if (ntohl(h->dst_node) != bsp_node_id(bn)) {
		bsp_count_drop(bn, BSP_DROP_ADDR);
		goto drop;
	}
	return true;
drop:
	bsp_frame_consume(skb);
	return false;
}

/* The source node, link address and destination port of a frame. */
struct bsp_rx_flow {
	__be32 src_node;
	__be16 dst_port;
	u8 addr[ETH_ALEN];
};

static void bsp_rx_flow_of(struct bsp_rx_flow *f, const struct sk_buff *skb)
{
	const struct bspe_hdr *h = (const struct bspe_hdr *)skb->data;

	f->src_node = h->src_node;
	f->dst_port = h->dst_port;
	ether_addr_copy(f->addr, eth_hdr(skb)->h_source);
}

static bool bsp_rx_flow_is(const struct bsp_rx_flow *f,
			   const struct sk_buff *skb)
{
	const struct bspe_hdr *h = (const struct bspe_hdr *)skb->data;

	return h->src_node == f->src_node && h->dst_port == f->dst_port &&
	       ether_addr_equal(eth_hdr(skb)->h_source, f->addr);
}

static bool bsp_rx_batch = true;
module_param_named(rx_batch, bsp_rx_batch, bool, 0644);
MODULE_PARM_DESC(rx_batch,
		 "hand consecutive received frames for one socket to its engine under one lock, lookup and flush (default on)");

/*
 * Frame @skb (checked by bsp_rx_frame_ok) and the frames at the head of
 * @list that come from the same node and link address to the same port:
 * the peer and port lookups of the first serve them all, under one hold of
 * the socket's lock, and what they made the engine send leaves in one
 * flush. A super-frame's frames are such a run (offload.c).
 */
static void bsp_transport_rcv_run(struct bsp_net *bn, u8 rail,
				  struct sk_buff *skb,
				  struct sk_buff_head *list)
{
	const struct bspe_hdr *h = (const struct bspe_hdr *)skb->data;
	u32 src = ntohl(h->src_node);
	struct bsp_transport *tp;
	struct bsp_rx_flow flow;
	bool known, valid = false;
	struct sock *sk;

	/*
	 * Only a known peer, from the MAC it has on the rail the frame
	 * arrived on, reaches a socket: anything else could not be answered,
	 * and must not open channels or touch liveness.
	 */
	rcu_read_lock();
	known = bsp_peer_addr_ok(bn, src, rail, eth_hdr(skb)->h_source);
	rcu_read_unlock();
	if (!known) {
		bsp_count_drop(bn, BSP_DROP_SRC_MAC);
		goto out;
	}
	sk = bsp_port_lookup_get(bn, ntohs(h->dst_port));
	if (!sk) {
		bsp_count_drop(bn, BSP_DROP_NO_PORT);
		goto out;
	}
	tp = READ_ONCE(bsp_sk(sk)->tp);
	if (!tp) {
		bsp_count_drop(bn, BSP_DROP_NO_PORT);
		sock_put(sk);
		goto out;
	}
	/* a frame the engine keeps may be read and freed before it returns */
	bsp_rx_flow_of(&flow, skb);
	bsp_lock(tp);
	for (;;) {
		bool kept = false;
		int err = -ENOENT;

		if (tp->ep) {
			/* the engine opens a channel only for a valid frame */
			h = (const struct bspe_hdr *)skb->data;
			tp->rx_epoch = ntohl(h->epoch);
			err = bsp_engine_rx(tp, rail, skb, &kept);
		}
		if (err)
			bsp_count_drop(bn, BSP_DROP_ENGINE);
		else
			valid = true;
		if (!kept)
			bsp_frame_consume(skb);
		skb = skb_peek(list);
		if (!skb || !READ_ONCE(bsp_rx_batch) ||
		    !bsp_rx_flow_is(&flow, skb))
			break;
		__skb_unlink(skb, list);
	}
	bsp_unlock_flush(tp);
	/* a valid frame of the peer proves the rail works */
	if (valid)
		bsp_peer_touch(bn, src, rail);
	sock_put(sk);
	return;
out:
	bsp_frame_consume(skb);
}

void bsp_transport_rcv_list(struct bsp_net *bn, u8 rail,
			    struct sk_buff_head *list)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(list)))
		bsp_transport_rcv_run(bn, rail, skb, list);
}

/*
 * Adds frame @skb to @list, the frames of a rail that bsp_transport_rcv_list
 * takes in order, if its header passes the checks that need no lookup.
 */
void bsp_transport_rcv_add(struct bsp_net *bn, struct sk_buff_head *list,
			   struct sk_buff *skb)
{
	if (bsp_rx_frame_ok(bn, skb))
		__skb_queue_tail(list, skb);
}

void bsp_transport_node_reset(struct bsp_net *bn, u32 node)
{
	struct bsp_sock *bs;

	rcu_read_lock();
	hlist_for_each_entry_rcu(bs, &bn->socks, list_node) {
		struct bsp_transport *tp = READ_ONCE(bs->tp);
		u64 now = bsp_now();

		if (!tp)
			continue;
		bsp_lock(tp);
		if (tp->ep)
			bspe_node_close(tp->ep, node, now);
		bsp_unlock_flush(tp);
	}
	rcu_read_unlock();
}

void bsp_transport_rail_set(struct bsp_net *bn, u32 node, u8 rail, bool up)
{
	struct bsp_sock *bs;

	rcu_read_lock();
	hlist_for_each_entry_rcu(bs, &bn->socks, list_node) {
		struct bsp_transport *tp = READ_ONCE(bs->tp);

		if (!tp)
			continue;
		bsp_lock(tp);
		if (tp->ep && rail < bsp_max_rails)
			bspe_rail_set(tp->ep, node, rail, up, bsp_now());
		bsp_unlock_flush(tp);
	}
	rcu_read_unlock();
}
