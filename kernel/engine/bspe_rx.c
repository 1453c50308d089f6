// SPDX-License-Identifier: GPL-2.0
/*
 * Receive path of the AF_BSP protocol engine: validation of
 * every header field, per-rail receive windows, reassembly, in-order
 * delivery, the receiver side of fine-grained acknowledgment and prods.
 */
#include "bspe_internal.h"

/* Decoded header in host byte order. */
struct bspe_pkt {
	u32	src_node;
	u32	dst_node;
	u32	seq;
	u32	base;
	u32	ack;
	u32	eoh;
	u32	epoch;
	u32	msg_id;
	u32	msg_len;
	u32	frag_off;
	u32	src_inc;
	u32	dst_inc;
	u16	flags;
	u16	src_port;
	u16	dst_port;
	u16	frag_unit;
	u16	payload_len;
	u8	type;
	u8	rail;
	u8	ack_rail;
};

#define BSPE_F_SYNC_LAST	(BSPE_F_SYNC | BSPE_F_LAST)
#define BSPE_F_CTRL_OK	(BSPE_F_ACKREQ | BSPE_F_CSUM | BSPE_F_PROBE | \
			 BSPE_F_REPLY | BSPE_F_CLOSE | BSPE_F_BUSY | \
			 BSPE_F_AUTH | BSPE_F_EVICT | BSPE_F_KEEP)
#define BSPE_F_DATA_OK	(BSPE_F_ALL & ~(BSPE_F_PROBE | BSPE_F_REPLY | \
					BSPE_F_CLOSE | BSPE_F_BUSY | \
					BSPE_F_EVICT | BSPE_F_KEEP))

static int bspe_drop(struct bspe_stats *st, enum bspe_drop why, int err)
{
	st->drops[why]++;
	return err;
}

static int bspe_bit(const u64 *bits, u32 i)
{
	return (bits[i / 64] >> (i % 64)) & 1;
}

static void bspe_bit_set(u64 *bits, u32 i)
{
	bits[i / 64] |= 1ULL << (i % 64);
}

static void bspe_bit_clear(u64 *bits, u32 i)
{
	bits[i / 64] &= ~(1ULL << (i % 64));
}

static int bspe_rcv_has(const struct bspe_ep *ep, const struct bspe_rrail *rr,
			u32 seq)
{
	return bspe_bit(rr->bits, seq % ep->cfg.rcv_wnd);
}

/* Moves rcv_nxt over received numbers and recomputes the first hole. */
static void bspe_rcv_settle(const struct bspe_ep *ep, struct bspe_rrail *rr)
{
	u32 w = ep->cfg.rcv_wnd, s;

	while (rr->ooo && bspe_rcv_has(ep, rr, rr->rcv_nxt)) {
		bspe_bit_clear(rr->bits, rr->rcv_nxt % w);
		rr->ooo--;
		rr->rcv_nxt++;
	}
	if (!rr->ooo || bspe_seq_lt(rr->rcv_nxt, rr->eoh))
		return;
	for (s = rr->rcv_nxt + 1; s != rr->rcv_nxt + w; s++) {
		if (bspe_rcv_has(ep, rr, s)) {
			rr->eoh = s;
			return;
		}
	}
}

static void bspe_rcv_mark(const struct bspe_ep *ep, struct bspe_rrail *rr,
			  u32 seq, u64 now)
{
	u32 ooo = rr->ooo;

	rr->changed = 1;
	if (seq == rr->rcv_nxt) {
		rr->rcv_nxt++;
		bspe_rcv_settle(ep, rr);
		/* The first hole closed: the next is known since ooo_at at most. */
		if (rr->ooo && rr->ooo != ooo)
			rr->hole_at = rr->ooo_at;
		return;
	}
	bspe_bit_set(rr->bits, seq % ep->cfg.rcv_wnd);
	if (!rr->ooo)
		rr->hole_at = now;
	rr->ooo_at = now;
	if (!rr->ooo++ || bspe_seq_lt(seq, rr->eoh))
		rr->eoh = seq;
}

/* The sender settled everything below @base: skip to it. */
static void bspe_rcv_skip(const struct bspe_ep *ep, struct bspe_rrail *rr,
			  u32 base)
{
	u32 n, i;

	if (!bspe_seq_lt(rr->rcv_nxt, base))
		return;
	n = base - rr->rcv_nxt;
	if (n > ep->cfg.rcv_wnd)
		n = ep->cfg.rcv_wnd;
	for (i = 0; i < n && rr->ooo; i++) {
		u32 b = (rr->rcv_nxt + i) % ep->cfg.rcv_wnd;

		if (bspe_bit(rr->bits, b)) {
			bspe_bit_clear(rr->bits, b);
			rr->ooo--;
		}
	}
	rr->rcv_nxt = base;
	rr->changed = 1;
	bspe_rcv_settle(ep, rr);
}

static void bspe_decode(const struct bspe_hdr *h, struct bspe_pkt *k)
{
	k->type = h->type;
	k->flags = bspe_ntohs(h->flags);
	k->src_node = bspe_ntohl(h->src_node);
	k->dst_node = bspe_ntohl(h->dst_node);
	k->src_port = bspe_ntohs(h->src_port);
	k->dst_port = bspe_ntohs(h->dst_port);
	k->rail = h->rail;
	k->ack_rail = h->ack_rail;
	k->src_inc = bspe_ntohl(h->src_inc);
	k->dst_inc = bspe_ntohl(h->dst_inc);
	k->seq = bspe_ntohl(h->seq);
	k->base = bspe_ntohl(h->base);
	k->ack = bspe_ntohl(h->ack);
	k->eoh = bspe_ntohl(h->eoh);
	k->epoch = bspe_ntohl(h->epoch);
	k->msg_id = bspe_ntohl(h->msg_id);
	k->msg_len = bspe_ntohl(h->msg_len);
	k->frag_off = bspe_ntohl(h->frag_off);
	k->frag_unit = bspe_ntohs(h->frag_unit);
	k->payload_len = bspe_ntohs(h->payload_len);
}

/* Checks the fields of a DATA packet; returns a drop reason or -1. */
static int bspe_check_data(const struct bspe_ep *ep, const struct bspe_pkt *k)
{
	u32 want, nfrags;

	if (k->flags & ~BSPE_F_DATA_OK)
		return BSPE_DROP_FLAGS;
	if (k->msg_len > ep->cfg.max_msg)
		return BSPE_DROP_TOOBIG;
	if (!k->frag_unit || k->frag_off % k->frag_unit)
		return BSPE_DROP_MALFORMED;
	if (!k->msg_len) {
		if (k->frag_off || k->payload_len)
			return BSPE_DROP_MALFORMED;
		return -1;
	}
	if (k->frag_off >= k->msg_len)
		return BSPE_DROP_MALFORMED;
	want = k->msg_len - k->frag_off;
	if (want > k->frag_unit)
		want = k->frag_unit;
	if (k->payload_len != want)
		return BSPE_DROP_MALFORMED;
	nfrags = (k->msg_len - 1) / k->frag_unit + 1;
	if (nfrags > ep->nfrags_max)
		return BSPE_DROP_MALFORMED;
	return -1;
}

/*
 * The MAC, checked before anything else is looked at: with BSPE_CFG_AUTH
 * every packet must carry a right one; without, none may (the peer is in
 * authenticated mode and we are not: a configuration mismatch).
 */
static int bspe_check_auth(const struct bspe_ep *ep, const void *pkt,
			   const struct bspe_pkt *k)
{
	if (!(ep->cfg.flags & BSPE_CFG_AUTH))
		return (k->flags & BSPE_F_AUTH) ? BSPE_DROP_AUTH : -1;
	if (!(k->flags & BSPE_F_AUTH) ||
	    !bspe_mac_ok(ep->cfg.key, pkt, BSPE_HDR_LEN + k->payload_len))
		return BSPE_DROP_AUTH;
	return -1;
}

/* Checks everything that needs no channel; returns a drop reason or -1. */
static int bspe_check(const struct bspe_ep *ep, const struct bspe_hdr *h,
		      const void *pkt, u8 rail, const struct bspe_pkt *k,
		      u32 rx_flags)
{
	if (k->flags & ~BSPE_F_ALL)
		return BSPE_DROP_FLAGS;
	if (k->flags & BSPE_F_AUTH) {
		/* Verified already; the MAC replaces the checksum. */
		if (k->flags & BSPE_F_CSUM)
			return BSPE_DROP_FLAGS;
	} else if (k->flags & BSPE_F_CSUM) {
		if (!(rx_flags & BSPE_RX_CSUM_OK) &&
		    ((rx_flags & BSPE_RX_HDR_ONLY) ||
		     !bspe_csum_ok(pkt, BSPE_HDR_LEN + k->payload_len)))
			return BSPE_DROP_CSUM;
	} else if (ep->cfg.flags & BSPE_CFG_REQUIRE_CSUM) {
		return BSPE_DROP_CSUM;
	}
	/* The field the flags do not use is zero (the MAC covers neither). */
	if ((k->flags & BSPE_F_AUTH) ? h->csum != 0 : h->mac != 0)
		return BSPE_DROP_MALFORMED;
	if (k->dst_node != ep->cfg.node || k->dst_port != ep->cfg.port)
		return BSPE_DROP_ADDR;
	/* The rail a frame came on is a fact; the header's is a claim. */
	if (k->rail != rail || k->rail >= ep->cfg.nrails ||
	    k->ack_rail >= ep->cfg.nrails)
		return BSPE_DROP_RAIL;
	if (!k->src_inc)
		return BSPE_DROP_MALFORMED;
	if (k->seq - k->base > BSPE_MAX_WND || k->eoh - k->ack > BSPE_MAX_WND)
		return BSPE_DROP_MALFORMED;
	if (k->type == BSPE_T_DATA)
		return bspe_check_data(ep, k);
	if (k->flags & ~BSPE_F_CTRL_OK)
		return BSPE_DROP_FLAGS;
	/* EVICT: on an ACK, alone; KEEP only on its answer */
	if ((k->flags & BSPE_F_KEEP) &&
	    (k->flags & (BSPE_F_EVICT | BSPE_F_REPLY)) !=
	    (BSPE_F_EVICT | BSPE_F_REPLY))
		return BSPE_DROP_FLAGS;
	if ((k->flags & BSPE_F_EVICT) &&
	    (k->type != BSPE_T_ACK ||
	     (k->flags & (BSPE_F_PROBE | BSPE_F_CLOSE | BSPE_F_BUSY))))
		return BSPE_DROP_FLAGS;
	/* msg_id is the attempt of an EVICT, zero otherwise */
	if (k->payload_len || (k->msg_id && !(k->flags & BSPE_F_EVICT)) ||
	    k->msg_len || k->frag_off || k->frag_unit)
		return BSPE_DROP_MALFORMED;
	/* one asks to evict a channel it knows the peer of */
	if ((k->flags & BSPE_F_EVICT) && !(k->flags & BSPE_F_REPLY) &&
	    !k->dst_inc)
		return BSPE_DROP_MALFORMED;
	if ((k->flags & BSPE_F_PROBE) && k->type != BSPE_T_ACK)
		return BSPE_DROP_MALFORMED;
	return -1;
}

void bspe_slot_abort(struct bspe_ep *ep, struct bspe_chan *ch, u32 slot)
{
	struct bspe_rslot *sl = ch->slots[slot];

	if (!sl || !sl->active)
		return;
	if (ep->ops->rx_abort)
		ep->ops->rx_abort(ep->ctx, (int)ch->idx, slot);
	ep->rx_reserved -= sl->len < ep->rx_reserved ? sl->len :
			   ep->rx_reserved;
	sl->active = 0;
	ch->rx_active--;
	bspe_trim_later(ep, ch);
}

static void bspe_rx_consumed_in(struct bspe_ep *ep, u32 bytes, u64 now)
{
	ep->rx_reserved -= bytes < ep->rx_reserved ? bytes : ep->rx_reserved;
	if (ep->rx_blocked) {
		ep->rx_blocked = 0;
		bspe_rx_resume(ep, now);
	}
}

void bspe_rx_consumed(struct bspe_ep *ep, u32 bytes, u64 now)
{
	bspe_enter(ep);
	bspe_rx_consumed_in(ep, bytes, now);
	bspe_leave(ep);
}

static void bspe_rx_resume_in(struct bspe_ep *ep, u64 now)
{
	struct bspe_chan *ch;
	u32 r;

	for (ch = ep->lists[BSPE_L_OPEN].first; ch;
	     ch = ch->link[BSPE_L_OPEN].next) {
		if (!ch->rx_blocked)
			continue;
		/* room again: no longer BUSY, its holes prodded as any */
		ch->rx_blocked = 0;
		for (r = 0; r < ep->cfg.nrails; r++) {
			struct bspe_rrail *rr = &ch->rrail[r];

			if (!(ch->rail_up & (1u << r)) || !bspe_rcv_hole(rr))
				continue;
			/* our own refusals: certain, never too young */
			rr->hole_at = 0;
			rr->hole_due = 0;
			bspe_send_ctrl(ep, ch, BSPE_T_PROD, BSPE_F_ACKREQ,
				       (u8)r, (u8)r, now);
		}
		ch->last_prod = now;
		ch->prod_tx = now;
		ch->prod_pending = BSPE_PROD_ASKED;
		bspe_arm_chan(ep, ch, now);
	}
}

void bspe_rx_resume(struct bspe_ep *ep, u64 now)
{
	bspe_enter(ep);
	bspe_rx_resume_in(ep, now);
	bspe_leave(ep);
}

static u32 bspe_rx_expire_in(struct bspe_ep *ep, u64 idle_ns, u64 now)
{
	struct bspe_chan *ch, *next;
	u32 n = 0;

	for (ch = ep->lists[BSPE_L_OPEN].first; ch; ch = next) {
		next = ch->link[BSPE_L_OPEN].next;
		if (!ch->rx_active || now - ch->last_rx < idle_ns)
			continue;
		bspe_chan_close(ep, (int)ch->idx, now);
		n++;
	}
	return n;
}

u32 bspe_rx_expire(struct bspe_ep *ep, u64 idle_ns, u64 now)
{
	u32 ret;

	bspe_enter(ep);
	ret = bspe_rx_expire_in(ep, idle_ns, now);
	bspe_leave(ep);
	return ret;
}

static int bspe_expect_in(struct bspe_ep *ep, int chan, u32 total,
			  u32 flags, u64 now)
{
	struct bspe_chan *ch = bspe_chan_get(ep, chan);
	u32 cls = flags & BSPE_EXPECT_SYNC ? 1 : 0;
	u32 have = 0, left;

	if (!ch || (flags & ~BSPE_EXPECT_SYNC))
		return -EINVAL;
	/* what was delivered of this epoch already counts */
	if (ch->dlv_epoch[cls] == ep->epoch + 1)
		have = ch->dlv_count[cls];
	else if (ch->dlv_epoch[cls] > ep->epoch + 1)
		have = total;	/* the peer is past this epoch */
	left = total > have ? total - have : 0;
	ch->expect_until = ch->rcv_next_msg + left;
	ch->expecting = left > 0;
	ch->expect_near = ep->follow;
	/* First prod no earlier than one interval from now. */
	ch->last_prod = now;
	bspe_arm_chan(ep, ch, now);
	return 0;
}

int bspe_expect(struct bspe_ep *ep, int chan, u32 total, u32 flags, u64 now)
{
	int ret;

	bspe_enter(ep);
	ret = bspe_expect_in(ep, chan, total, flags, now);
	bspe_leave(ep);
	return ret;
}

/* Count a delivered message for bspe_expect() totals. */
static void bspe_count_delivered(struct bspe_chan *ch,
				 const struct bspe_rslot *sl)
{
	u32 cls = sl->flags & BSPE_F_SYNC ? 1 : 0;
	u32 e = sl->epoch + 1;

	if (!e)
		return;
	if (ch->dlv_epoch[cls] != e) {
		ch->dlv_epoch[cls] = e;
		ch->dlv_count[cls] = 0;
	}
	ch->dlv_count[cls]++;
}

static void bspe_deliver_ready(struct bspe_ep *ep, struct bspe_chan *ch)
{
	for (;;) {
		u32 slot = ch->rcv_next_msg % ep->cfg.msg_wnd;
		struct bspe_rslot *sl = ch->slots[slot];
		struct bspe_delivery d;

		if (!sl || !sl->active || sl->msg_id != ch->rcv_next_msg ||
		    sl->got != sl->nfrags)
			break;
		d.chan = (int)ch->idx;
		d.chan_cookie = ch->cookie;
		d.node = ch->node;
		d.port = ch->port;
		d.slot = slot;
		d.msg_id = sl->msg_id;
		d.msg_len = sl->len;
		d.flags = sl->flags;
		bspe_count_delivered(ch, sl);
		sl->active = 0;
		ch->rx_active--;
		bspe_trim_later(ep, ch);
		ch->rcv_next_msg++;
		ch->st[0].msgs_rx++;
		ep->ops->deliver(ep->ctx, &d);
	}
	if (ch->expecting && !bspe_seq_lt(ch->rcv_next_msg, ch->expect_until))
		ch->expecting = 0;
}

/*
 * @ch is about to start afresh (bspe_chan_restart, bspe_chan_reset). Its
 * peer completed every message whose fragments all arrived, also those
 * that wait here behind an earlier one that never will arrive whole: those
 * are delivered, in msg_id order, and the partly received ones are dropped
 * (msgs_abandoned; their sender failed them, or is gone).
 */
void bspe_rx_salvage(struct bspe_ep *ep, struct bspe_chan *ch)
{
	u32 i;

	bspe_deliver_ready(ep, ch);
	for (i = 0; i < ep->cfg.msg_wnd && ch->rx_active; i++) {
		u32 slot = ch->rcv_next_msg % ep->cfg.msg_wnd;
		struct bspe_rslot *sl = ch->slots[slot];

		if (sl && sl->active && sl->msg_id == ch->rcv_next_msg) {
			bspe_slot_abort(ep, ch, slot);
			ch->st[0].msgs_abandoned++;
		}
		ch->rcv_next_msg++;
		bspe_deliver_ready(ep, ch);
	}
}

/*
 * Data arrives at the pace the sender's rate or its rails allow, which
 * may be much slower than a round trip. The receiver prods only after a
 * quiet spell of several inter-arrival gaps (and at least a round trip),
 * else a paced stream would draw a prod, and an answer, per packet. Gaps
 * are measured inside a message only: the pause between supersteps is
 * not a sign of the sender's pace.
 */
static void bspe_rx_gap(struct bspe_ep *ep, struct bspe_chan *ch,
			int was_active, u64 now)
{
	if (was_active && ch->last_rx && now > ch->last_rx) {
		u64 gap = now - ch->last_rx;

		if (gap > ep->cfg.prod_max_ns)
			gap = ep->cfg.prod_max_ns;
		if (gap > ch->rx_gap)
			ch->rx_gap += (gap - ch->rx_gap) / 4;
		else
			ch->rx_gap -= (ch->rx_gap - gap) / 8;
	}
	ch->prod_ivl = bspe_min64(bspe_max64(ch->srtt, 4 * ch->rx_gap),
				  ep->cfg.prod_max_ns);
}

/*
 * A valid DATA packet @seq was refused for lack of receive memory. It stays
 * unacknowledged; the sender has sent up to it, which makes it a known hole
 * (prodded for, resent on resume), and the channel answers probes with BUSY
 * until it takes a new message. Each rail remembers the first packet it
 * refused: its reports ask for the holes below it (fragments of a message
 * it has taken) and not for what it would refuse again (bspe_rcv_eoh).
 */
static void bspe_rx_refused(struct bspe_ep *ep, struct bspe_chan *ch,
			    struct bspe_rrail *rr, u32 seq)
{
	u32 r;

	if (bspe_seq_lt(rr->rcv_nxt, seq + 1) &&
	    (!bspe_seq_lt(rr->rcv_nxt, rr->hint_nxt) ||
	     bspe_seq_lt(rr->hint_nxt, seq + 1)))
		rr->hint_nxt = seq + 1;
	if (!ch->rx_blocked)
		for (r = 0; r < ep->cfg.nrails; r++)
			ch->rrail[r].refused = ch->rrail[r].rcv_nxt +
					       BSPE_SEQ_FAR;
	if (bspe_seq_lt(seq, rr->refused))
		rr->refused = seq;
	ch->rx_blocked = 1;
}

/* Accepts the fragment of a valid DATA packet; returns 0 or -errno. */
static int bspe_rx_data(struct bspe_ep *ep, struct bspe_chan *ch,
			const struct bspe_pkt *k, const u8 *payload, u64 now)
{
	struct bspe_rrail *rr = &ch->rrail[k->rail];
	struct bspe_stats *st = &ch->st[k->rail];
	struct bspe_rslot *sl;
	struct bspe_rx_frag f;
	u32 slot, fi, nfrags;
	int err, was_active;

	if (k->flags & BSPE_F_ACKREQ)
		rr->ack_wanted = 1;
	if (bspe_seq_lt(k->seq, rr->rcv_nxt) || bspe_rcv_has(ep, rr, k->seq))
		goto dup;
	if (k->seq - rr->rcv_nxt >= ep->cfg.rcv_wnd)
		return bspe_drop(st, BSPE_DROP_SEQ_WINDOW, -ENOBUFS);
	if (bspe_seq_lt(k->msg_id, ch->rcv_next_msg)) {
		/* A sender resends only its last msg_wnd messages. */
		if (ch->rcv_next_msg - k->msg_id > ep->cfg.msg_wnd)
			return bspe_drop(st, BSPE_DROP_MSG_WINDOW, -ENOBUFS);
		bspe_rcv_mark(ep, rr, k->seq, now);
		goto dup;
	}
	if (k->msg_id - ch->rcv_next_msg >= ep->cfg.msg_wnd)
		return bspe_drop(st, BSPE_DROP_MSG_WINDOW, -ENOBUFS);
	slot = k->msg_id % ep->cfg.msg_wnd;
	sl = ch->slots[slot];
	fi = k->frag_off / k->frag_unit;
	nfrags = k->msg_len ? (k->msg_len - 1) / k->frag_unit + 1 : 1;
	if (sl && sl->active) {
		if (sl->len != k->msg_len || sl->unit != k->frag_unit)
			return bspe_drop(st, BSPE_DROP_MALFORMED, -EBADMSG);
		if (bspe_bit(sl->bits, fi)) {
			bspe_rcv_mark(ep, rr, k->seq, now);
			goto dup;
		}
	} else if (!(ep->cfg.flags & BSPE_CFG_EXT_RCVBUF) &&
		   k->msg_id != ch->rcv_next_msg && k->seq != rr->rcv_nxt &&
		   ep->rx_reserved + (u64)k->msg_len > ep->cfg.rcvbuf) {
		/*
		 * Buffers low: only the next expected packets are accepted,
		 * those of the next message to deliver and the next in order
		 * on their rail (else a refused first hole would hide the
		 * holes behind it forever). The sender is told BUSY and
		 * prodded when the reader consumes.
		 */
		bspe_rx_refused(ep, ch, rr, k->seq);
		ep->rx_blocked = 1;
		return bspe_drop(st, BSPE_DROP_NOBUFS, -ENOBUFS);
	}
	if (!sl || !sl->active) {
		/* Memory for it before the caller allocates its buffer. */
		sl = bspe_slot_get(ep, ch, slot, nfrags);
		if (!sl)
			return bspe_drop(st, BSPE_DROP_NOMEM, -ENOMEM);
	}
	was_active = ch->rx_active != 0;
	f.chan = (int)ch->idx;
	f.chan_cookie = ch->cookie;
	f.slot = slot;
	f.first = !sl->active;
	f.next = k->msg_id == ch->rcv_next_msg;
	f.msg_id = k->msg_id;
	f.msg_len = k->msg_len;
	f.off = k->frag_off;
	f.data = payload;
	f.len = k->payload_len;
	f.flags = k->flags;
	err = ep->ops->rx_data(ep->ctx, &f);
	if (err == -ENOBUFS) {
		/* the caller's receive memory is full */
		bspe_rx_refused(ep, ch, rr, k->seq);
		return bspe_drop(st, BSPE_DROP_NOBUFS, -ENOBUFS);
	}
	if (err)
		return bspe_drop(st, BSPE_DROP_NOMEM, err < 0 ? err : -ENOMEM);
	if (!sl->active) {
		/* taken: its sender is no longer held back (BUSY) */
		ch->rx_blocked = 0;
		memset(sl->bits, 0, ((nfrags + 63) / 64) * 8);
		sl->msg_id = k->msg_id;
		sl->len = k->msg_len;
		sl->nfrags = nfrags;
		sl->unit = k->frag_unit;
		sl->flags = k->flags & BSPE_F_SYNC;
		sl->epoch = k->epoch;
		sl->got = 0;
		sl->active = 1;
		ch->rx_active++;
		if (!(ep->cfg.flags & BSPE_CFG_EXT_RCVBUF))
			ep->rx_reserved += k->msg_len;
	}
	bspe_bit_set(sl->bits, fi);
	sl->got++;
	st->data_rx++;
	st->bytes_rx += k->payload_len;
	bspe_rcv_mark(ep, rr, k->seq, now);
	rr->since_ack++;
	if (k->flags & BSPE_F_RETX)
		bspe_reo_resend_in(ch, 0);
	bspe_rx_gap(ep, ch, was_active, now);
	ch->last_rx = now;
	ep->last_rx_any = now;
	ch->prod_pending = 0;
	ch->prod_rounds = 0;
	if ((ch->flags & BSPE_CHAN_GROUP) && !(k->flags & BSPE_F_SYNC))
		bspe_guess_data(ep, ch, k->epoch, now);
	bspe_deliver_ready(ep, ch);
	return 0;
dup:
	st->dup_rx++;
	if (k->flags & BSPE_F_RETX) {
		st->spurious_rx++;
		bspe_reo_resend_in(ch, 1);
	}
	rr->changed = 1;
	return bspe_drop(st, BSPE_DROP_DUP, -EALREADY);
}

/*
 * An explicit ACK answering a WNDREQ packet sent once (Karn's rule) is a
 * round-trip sample that includes the queues the stream fills (the prod
 * interval and the timeout follow it).
 */
static void bspe_wndreq_sample(struct bspe_ep *ep, struct bspe_chan *ch,
			       struct bspe_srail *sr, u32 ack, u64 now)
{
	const struct bspe_spkt *p;

	if (!sr->wndreq_on || !bspe_seq_lt(sr->wndreq_seq, ack) ||
	    bspe_seq_lt(sr->wndreq_seq, sr->snd_una) ||
	    !bspe_seq_lt(sr->wndreq_seq, sr->snd_nxt))
		return;
	p = bspe_spkt_of(sr, sr->wndreq_seq);
	if (p->state != BSPE_SPKT_OUT || p->ntx != 1)
		return;
	bspe_rtt_sample(ep, ch, now - p->last_tx);
}

/*
 * Does a prod that drew no resend need an answer? If it asks for one
 * (ACKREQ: every prod but one for data merely expected), or if the answer
 * tells the prodder something: what the rail sent beyond what it
 * acknowledges (a lost tail), or that we refuse data for lack of memory
 * (BUSY). A prod for data merely expected that finds everything the rail
 * sent acknowledged is left unanswered: the prodder backs off as after an
 * answer "nothing" (Documentation/protocol.rst, "Prods").
 */
static int bspe_prod_wants_reply(const struct bspe_chan *ch,
				 const struct bspe_srail *sr,
				 const struct bspe_pkt *k)
{
	return (k->flags & BSPE_F_ACKREQ) || ch->rx_blocked ||
	       k->ack != sr->snd_nxt || k->eoh != k->ack ||
	       bspe_rcv_hole(&ch->rrail[k->ack_rail]);
}

/* Sender-side effects of the ack fields of a valid packet. */
static void bspe_rx_acks(struct bspe_ep *ep, struct bspe_chan *ch,
			 const struct bspe_pkt *k, u64 now)
{
	struct bspe_srail *sr = &ch->srail[k->ack_rail];
	enum bspe_cause cause = BSPE_CAUSE_HOLE;
	/* an answer to a probe of ours (a check or a timeout probe) */
	int answer = k->type == BSPE_T_ACK && bspe_answers_probe(k->flags);
	u32 sent, eoh = k->eoh;
	u64 seen = 0, asked = answer ? bspe_probe_answered(sr) : 0;

	if (k->type == BSPE_T_PROD) {
		cause = BSPE_CAUSE_PROD;
	} else if (answer && sr->chk_time && !sr->probes) {
		/*
		 * The answer to a check of a resend: the probe travelled
		 * behind the resend, so this report shows whether it was
		 * lost (bspe_emit_retx). It says it answers a probe
		 * (REPLY|PROBE) and is matched to the probe it answers
		 * (@asked): a REPLY alone answers a prod of ours, and the
		 * answer to an older probe may have been built before the
		 * resend arrived; either is taken for what it shows.
		 */
		seen = asked;
		if (asked && asked >= sr->chk_time) {
			bspe_rtt_sample(ep, ch, now - asked);
			sr->chk_time = 0;
		}
	} else if (answer && sr->probes) {
		cause = BSPE_CAUSE_TIMEOUT;
		seen = asked;
		if (asked >= sr->chk_time)
			sr->chk_time = 0;
		if (asked && asked >= sr->probe_time)
			bspe_rtt_sample(ep, ch, now - asked);
		/*
		 * An answer is progress only if it acknowledges something
		 * (bspe_ack_in then resets the probes) or says the receiver
		 * holds back for lack of memory (BUSY: it has our data in
		 * view and resumes by prodding). A peer that answers but
		 * never takes our packets (they do not reach it: an MTU it
		 * cannot receive) leaves the probes counting: the rail is
		 * suspected, or the message fails (bspe_chan_timer).
		 */
		if (k->flags & BSPE_F_BUSY) {
			sr->probes = 0;
			sr->progress = now;
		}
	} else if (k->type == BSPE_T_ACK && !(k->flags & BSPE_F_REPLY) &&
		   sr->ackreq_pending && sr->ackreq_clean &&
		   bspe_seq_lt(sr->ackreq_seq, k->ack)) {
		bspe_rtt_sample(ep, ch, now - sr->ackreq_time);
	} else if (k->type == BSPE_T_ACK && !(k->flags & BSPE_F_REPLY)) {
		bspe_wndreq_sample(ep, ch, sr, k->ack, now);
	}
	/*
	 * A receiver out of memory reports holes up to the first packet it
	 * refused (fragments of messages it took), never what it would refuse
	 * again. When that is nothing, the answer to a timeout probe draws
	 * the first packet (a window probe), once per timeout; the receiver
	 * prods for the rest once it has room.
	 */
	if ((k->flags & BSPE_F_BUSY) && cause == BSPE_CAUSE_TIMEOUT &&
	    !bspe_seq_lt(k->ack, eoh))
		eoh = k->ack + 1;
	sent = bspe_ack_in(ep, ch, k->ack_rail, k->ack, eoh, cause, seen, now);
	/* the prodder waits for what we have not sent yet */
	if (k->type == BSPE_T_PROD && !sent &&
	    (ch->flags & BSPE_CHAN_GROUP) && k->epoch + 1)
		ch->peer_waits = k->epoch + 1;
	if (k->type == BSPE_T_PROD && !sent &&
	    bspe_prod_wants_reply(ch, sr, k))
		ch->rrail[k->ack_rail].reply_now |= BSPE_REPLY_DUE;
}

/* Receiver-side effects of an ACK/PROD's sequence fields. */
static void bspe_rx_ctrl(struct bspe_ep *ep, struct bspe_chan *ch,
			 const struct bspe_pkt *k, u64 now)
{
	struct bspe_rrail *rr = &ch->rrail[k->rail];
	struct bspe_stats *st = &ch->st[k->rail];

	if (bspe_seq_lt(rr->rcv_nxt, k->seq) &&
	    (!bspe_seq_lt(rr->rcv_nxt, rr->hint_nxt) ||
	     bspe_seq_lt(rr->hint_nxt, k->seq))) {
		/*
		 * A control packet may overtake data too: a hole from now,
		 * unless it is a prod or a timeout probe, sent long after
		 * the data (certain: shown at once).
		 */
		if (k->type == BSPE_T_PROD || bspe_asks_answer(k->flags))
			rr->hole_at = 0;
		else if (!bspe_rcv_hole(rr))
			rr->hole_at = now;
		rr->hint_nxt = k->seq;
	}
	if (k->type == BSPE_T_PROD) {
		st->prods_rx++;
		return;
	}
	/* A PROBE asks for an answer; a REPLY|PROBE is that answer. */
	if (bspe_asks_answer(k->flags)) {
		rr->reply_now |= BSPE_REPLY_DUE | BSPE_REPLY_PROBE;
		return;
	}
	st->acks_rx++;
	if ((k->flags & BSPE_F_REPLY) && (ch->suspect & (1u << k->rail)))
		bspe_rail_revive(ep, ch, k->rail, now);
	if (!(k->flags & BSPE_F_REPLY))
		return;
	/*
	 * A prod goes out on every rail that may hold what we miss, and
	 * each rail's answer speaks for its rail. The first answer of the
	 * round closes it (round trip, back-off); any answer of the round
	 * that shows a lost tail on its rail is acted on, whichever came
	 * first.
	 */
	if (ch->prod_tx && !rr->ooo &&
	    bspe_seq_lt(rr->rcv_nxt, rr->hint_nxt) &&
	    (ch->prod_pending ||
	     now - ch->prod_tx <= 2 * ch->srtt + ep->cfg.ack_delay_ns)) {
		/*
		 * The answer travelled behind the sender's packets: what did
		 * not arrive is a lost tail. The next prod carries it as
		 * soon as the hole is older than the reordering allowance,
		 * not one prod interval later.
		 */
		ch->prod_at = bspe_max64(rr->hole_at + bspe_reo_wnd(ch), now);
	}
	if (!ch->prod_pending)
		return;
	ch->prod_pending = 0;
	bspe_rtt_sample(ep, ch, now - ch->last_prod);
	/* The prodded sender had nothing more: we only ran ahead. */
	if (k->seq == rr->rcv_nxt && !rr->ooo) {
		st->prods_early++;
		/* a guess is asked once per superstep (bspe_guess_walk) */
		if (ch->guess)
			ch->guess = 2;
		ch->prod_ivl = bspe_min64(2 * ch->prod_ivl,
					  ep->cfg.prod_max_ns);
	}
}

/*
 * A sender abandons at most a window of numbers at a time (settled out of
 * order, or moved off a dead rail), so once a rail is in sync its base
 * cannot run further ahead of rcv_nxt than the largest window.
 */
static int bspe_base_jump(const struct bspe_ep *ep,
			  const struct bspe_rrail *rr, u32 base)
{
	(void)ep;
	return rr->synced && bspe_seq_lt(rr->rcv_nxt, base) &&
	       base - rr->rcv_nxt > BSPE_MAX_WND;
}

/* Channel of the sender: the last one that sent (bursts), else a search. */
static int bspe_rx_chan(const struct bspe_ep *ep, const struct bspe_pkt *k)
{
	const struct bspe_chan *ch = ep->tab[ep->rx_hint];

	if (ch && ch->node == k->src_node && ch->port == k->src_port)
		return (int)ep->rx_hint;
	return bspe_chan_find(ep, k->src_node, k->src_port);
}

/*
 * Incarnation rules (Documentation/protocol.rst "Incarnations"); needs the
 * sender's channel @c (or -1) but changes nothing. Returns a drop reason or
 * -1; sets *@reset if the packet comes from a newer incarnation of the
 * channel's peer endpoint (the channel must be reset before it is used).
 */
static int bspe_check_inc(const struct bspe_ep *ep, int c,
			  const struct bspe_pkt *k, int *reset, int *gone,
			  u64 now)
{
	u32 known = c >= 0 ? ep->tab[c]->peer_inc : 0;

	*reset = 0;
	/*
	 * For a channel we no longer hold (evicted, closed, or of an earlier
	 * endpoint on our port): every channel we open is newer.
	 */
	*gone = k->dst_inc && (c < 0 || (k->dst_inc != ep->tab[c]->my_inc &&
					  k->dst_inc != ep->tab[c]->prev_inc));
	if (*gone)
		return BSPE_DROP_STALE;
	if (known) {
		/* Exactly 2^31 apart is neither: refused like an older one. */
		*reset = bspe_inc_newer(k->src_inc, known);
		if (k->src_inc != known && !*reset)
			return BSPE_DROP_STALE;
	} else if (bspe_tomb_stale(ep, k->src_node, k->src_port, k->src_inc,
				   now)) {
		return BSPE_DROP_STALE;
	}
	/*
	 * A CLOSE from a sender that never heard from us is honoured only by
	 * a channel that knows the sender's incarnation already: a late CLOSE
	 * of an earlier endpoint must not close the channel to a new one.
	 */
	if (k->type == BSPE_T_ACK && (k->flags & BSPE_F_CLOSE) &&
	    !k->dst_inc && (!known || *reset))
		return BSPE_DROP_STALE;
	return -1;
}

/*
 * A valid EVICT packet (Documentation/protocol.rst "Idle channel
 * eviction") for the channel @c, which it names exactly. Returns 0.
 */
static int bspe_rx_evict(struct bspe_ep *ep, int c, const struct bspe_pkt *k,
			 int reset, u8 rail, u64 now)
{
	struct bspe_chan *ch = c >= 0 ? ep->tab[c] : NULL;

	/* An answer names our channel (dst_inc), a request may not. */
	if (!ch || reset || !k->dst_inc)
		return bspe_drop(&ep->st, BSPE_DROP_STALE, -ESTALE);
	if (!(k->flags & BSPE_F_REPLY)) {
		/* The peer asks: agree if nothing is unsettled this side. */
		if (bspe_chan_idle(ep, ch) && ch->evict_refused != k->msg_id) {
			bspe_evict_raw(ep, ch->node, ch->port, rail, ch->my_inc,
				       k->src_inc, k->msg_id, BSPE_F_REPLY);
			ch->peer_inc = k->src_inc;
			bspe_evict_free(ep, ch, now);
			return 0;
		}
		/* Refused for good: a retry of this attempt gets KEEP too. */
		ch->evict_refused = k->msg_id;
		bspe_evict_raw(ep, ch->node, ch->port, rail, ch->my_inc,
			       k->src_inc, k->msg_id, BSPE_F_REPLY | BSPE_F_KEEP);
		return 0;
	}
	if (k->src_inc != ch->peer_inc)
		return bspe_drop(&ep->st, BSPE_DROP_STALE, -ESTALE);
	if (k->flags & BSPE_F_KEEP) {
		if (!ch->evicting || k->msg_id != ch->evict_nonce)
			return 0;
		ep->st.evicts_kept++;
		ch->evicting = 0;
		bspe_touch(ep, ch, now);
		bspe_kick(ep, ch, now);
		bspe_arm_chan(ep, ch, now);
		return 0;
	}
	/* The peer released the channel (agreed, or no longer holds it). */
	if (!ch->mcount && !ch->rx_active) {
		bspe_evict_free(ep, ch, now);
		return 0;
	}
	c = bspe_evict_renew(ep, ch, now);
	if (c < 0)
		return bspe_drop(&ep->st, BSPE_DROP_NOMEM, -ENOMEM);
	ch = ep->tab[c];
	bspe_kick(ep, ch, now);
	bspe_arm_chan(ep, ch, now);
	return 0;
}

int bspe_rx(struct bspe_ep *ep, u8 rail, const void *pkt, u32 len, u64 now)
{
	return bspe_rx_ext(ep, rail, pkt, len, 0, now);
}

static int bspe_rx_ext_in(struct bspe_ep *ep, u8 rail, const void *pkt, u32 len,
			  u32 rx_flags, u64 now)
{
	struct bspe_chan *ch;
	struct bspe_hdr h;
	struct bspe_pkt k;
	int why, c, reset, gone, old, ret = 0;

	/* 1. Structure: nothing else is looked at before the MAC. */
	if (len < BSPE_HDR_LEN)
		return bspe_drop(&ep->st, BSPE_DROP_TRUNCATED, -EBADMSG);
	memcpy(&h, pkt, sizeof(h));
	if (h.version != BSPE_VERSION)
		return bspe_drop(&ep->st, BSPE_DROP_VERSION, -EPROTONOSUPPORT);
	if (h.type != BSPE_T_DATA && h.type != BSPE_T_ACK &&
	    h.type != BSPE_T_PROD)
		return bspe_drop(&ep->st, BSPE_DROP_TYPE, -EBADMSG);
	bspe_decode(&h, &k);
	if (len < (u32)BSPE_HDR_LEN + k.payload_len)
		return bspe_drop(&ep->st, BSPE_DROP_TRUNCATED, -EBADMSG);
	/* 2. Authenticity (the MAC needs the payload). */
	if ((rx_flags & BSPE_RX_HDR_ONLY) && (ep->cfg.flags & BSPE_CFG_AUTH))
		return bspe_drop(&ep->st, BSPE_DROP_AUTH, -EACCES);
	why = bspe_check_auth(ep, pkt, &k);
	if (why >= 0)
		return bspe_drop(&ep->st, why, -EACCES);
	/* 3. Fields, address, rail, incarnations, epoch: no state changes. */
	why = bspe_check(ep, &h, pkt, rail, &k, rx_flags);
	if (why >= 0)
		return bspe_drop(&ep->st, why, -EBADMSG);
	c = bspe_rx_chan(ep, &k);
	why = bspe_check_inc(ep, c, &k, &reset, &gone, now);
	if (why >= 0 && gone && !(k.flags & BSPE_F_REPLY) &&
	    (k.type == BSPE_T_PROD ||
	     (k.type == BSPE_T_ACK &&
	      (k.flags & (BSPE_F_EVICT | BSPE_F_PROBE))))) {
		/*
		 * The sender asks about (EVICT) or waits on (PROBE, PROD) a
		 * channel we no longer hold: tell it so, and it starts
		 * afresh. Each is sent at most once per timeout or prod
		 * interval by a sender.
		 */
		ep->st.evicts_gone++;
		bspe_evict_raw(ep, k.src_node, k.src_port, rail, k.dst_inc,
			       k.src_inc, k.msg_id, BSPE_F_REPLY);
		if (k.flags & BSPE_F_EVICT)
			return 0;
	}
	if (why >= 0)
		return bspe_drop(&ep->st, why, -ESTALE);
	if (k.type == BSPE_T_ACK && (k.flags & BSPE_F_EVICT))
		return bspe_rx_evict(ep, c, &k, reset, rail, now);
	if (c >= 0 && (ep->tab[c]->flags & BSPE_CHAN_GROUP) &&
	    k.epoch > ep->epoch + 1)
		return bspe_drop(&ep->st, BSPE_DROP_EPOCH, -EBADMSG);
	if (c >= 0 && !reset &&
	    bspe_base_jump(ep, &ep->tab[c]->rrail[k.rail], k.base))
		return bspe_drop(&ep->st, BSPE_DROP_MALFORMED, -EBADMSG);
	/* 4. Only a packet that passed every check above opens a channel. */
	if (c < 0)
		c = bspe_chan_auto(ep, k.src_node, k.src_port, now);
	if (c == -ENOMEM)
		return bspe_drop(&ep->st, BSPE_DROP_NOMEM, -ENOMEM);
	if (c < 0)
		return bspe_drop(&ep->st, BSPE_DROP_NOCHAN, -ENOENT);
	ch = ep->tab[c];
	ep->rx_hint = (u32)c;
	if (reset) {
		/*
		 * The peer's channel is newer: its endpoint was replaced, or
		 * it released the channel (an answered EVICT of ours whose
		 * answer is late or lost: the held sends go on the new one).
		 */
		if (ch->evicting)
			c = bspe_evict_renew(ep, ch, now);
		else if (k.dst_inc)	/* it restarted its sending side only */
			bspe_chan_reset_rx(ep, ch, k.src_inc);
		else
			c = bspe_chan_reset(ep, ch, k.src_inc, now);
		if (c < 0)
			return bspe_drop(&ep->st, BSPE_DROP_NOMEM, -ENOMEM);
		ch = ep->tab[c];
		ep->rx_hint = (u32)c;
	}
	ch->peer_inc = k.src_inc;
	/*
	 * A packet naming our incarnation before the sending side restarted
	 * (prev_inc) is for the receiving side; the restart is still news to
	 * the peer. Any other speaks on the fresh channel.
	 */
	old = ch->prev_inc && k.dst_inc == ch->prev_inc;
	if (!old)
		ch->restart_at = 0;
	if (k.dst_inc && !old) {
		ch->peer_knows = 1;
		ch->prev_inc = 0;
	}
	bspe_rtt_adopt(ep, ch);

	/* The sender's own sequence state: skip what it settled. */
	ch->rrail[k.rail].synced = 1;
	bspe_rcv_skip(ep, &ch->rrail[k.rail], k.base);
	/*
	 * Ack fields of a sender that has not heard from us (dst_inc 0), or
	 * only of our sending side before it restarted, cannot be about what
	 * we send now: ignored. A prod of such a sender is answered, which
	 * tells it our incarnation.
	 */
	if (k.dst_inc && !old)
		bspe_rx_acks(ep, ch, &k, now);
	else if (k.type == BSPE_T_PROD)
		ch->rrail[k.rail].reply_now |= BSPE_REPLY_DUE;
	if (ch->flags & BSPE_CHAN_GROUP)
		bspe_implicit(ep, k.epoch, now);
	if (k.type == BSPE_T_DATA) {
		struct bspe_rrail *rr = &ch->rrail[k.rail];

		ret = bspe_rx_data(ep, ch, &k, (rx_flags & BSPE_RX_HDR_ONLY) ?
				   NULL : (const u8 *)pkt + BSPE_HDR_LEN, now);
		if (!ret)
			bspe_touch(ep, ch, now);
		/*
		 * A barrier message sent as the last to this peer (the end
		 * of a job, Documentation/protocol.rst) is acknowledged
		 * whatever the threshold: nothing else will.
		 */
		if (rr->ack_wanted && !rr->ack_due &&
		    (rr->since_ack >= ep->ack_thresh ||
		     (k.flags & BSPE_F_SYNC_LAST) == BSPE_F_SYNC_LAST))
			rr->ack_due = bspe_max64(now + ep->cfg.ack_delay_ns,
						 1);
		/*
		 * Window rule: the sender holds half its window of this
		 * rail; answered after ack_delay at the latest, whatever the
		 * n/(2p) count (a packet taken, or a duplicate: the first
		 * answer may be lost).
		 */
		if ((k.flags & BSPE_F_WNDREQ) && (!ret || ret == -EALREADY)) {
			u64 due = bspe_max64(now + ep->cfg.ack_delay_ns, 1);

			if (!rr->ack_due || rr->ack_due > due)
				rr->ack_due = due;
		}
	} else {
		bspe_touch(ep, ch, now);
		bspe_rx_ctrl(ep, ch, &k, now);
		if (k.type == BSPE_T_ACK && (k.flags & BSPE_F_CLOSE)) {
			/*
			 * The peer endpoint is gone. It sent one CLOSE per
			 * live rail, each with that rail's acks (applied
			 * above). Once every live rail's came, what it did not
			 * acknowledge can never be delivered and its partial
			 * messages never complete: free the channel for the
			 * next peer, leaving a tombstone that keeps the closed
			 * endpoint's late frames out. A lost CLOSE leaves the
			 * channel to the usual probes and timeouts.
			 */
			ch->peer_closing |= (u8)(1u << k.rail);
			if ((ch->peer_closing & ch->rail_up) == ch->rail_up) {
				ep->st.chan_closes++;
				bspe_tomb_add(ep, ch, now);
				bspe_chan_close(ep, c, now);
				return 0;
			}
		}
	}
	bspe_kick(ep, ch, now);
	bspe_acks_flush(ep, ch, now);
	bspe_arm_chan(ep, ch, now);
	return ret;
}

int bspe_rx_ext(struct bspe_ep *ep, u8 rail, const void *pkt, u32 len,
		u32 rx_flags, u64 now)
{
	int ret;

	bspe_enter(ep);
	ret = bspe_rx_ext_in(ep, rail, pkt, len, rx_flags, now);
	bspe_leave(ep);
	return ret;
}
