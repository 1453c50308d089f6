// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoint incarnations and packet sealing of the AF_BSP
 * protocol engine: tombstones of peer endpoints that closed (TIME-WAIT),
 * and the endpoint-keyed forms of the seal functions of bspe_wire.h.
 * Documentation/protocol.rst "Incarnations" specifies the rules.
 */
#include "bspe_internal.h"

/*
 * The CLOSE of the peer endpoint of @ch freed the channel: its late frames
 * (not newer than its incarnation) are dropped for cfg.timewait_ns. The
 * ring is bounded: when it is full the oldest tombstone goes first.
 */
void bspe_tomb_add(struct bspe_ep *ep, const struct bspe_chan *ch, u64 now)
{
	struct bspe_tomb *t = NULL;
	u32 i;

	if (!ch->peer_inc || !ep->cfg.timewait_ns)
		return;
	for (i = 0; i < BSPE_TOMBS; i++) {
		struct bspe_tomb *e = &ep->tombs[i];

		if (e->until && e->node == ch->node && e->port == ch->port) {
			t = e;
			break;
		}
	}
	if (!t) {
		t = &ep->tombs[ep->tomb_next];
		ep->tomb_next = (ep->tomb_next + 1) % BSPE_TOMBS;
	} else if (bspe_inc_newer(t->inc, ch->peer_inc)) {
		t->until = bspe_max64(now + ep->cfg.timewait_ns, 1);
		return;
	}
	t->node = ch->node;
	t->port = ch->port;
	t->inc = ch->peer_inc;
	t->until = bspe_max64(now + ep->cfg.timewait_ns, 1);
}

/* Is (@node, @port, @inc) a closed peer endpoint within its TIME-WAIT? */
int bspe_tomb_stale(const struct bspe_ep *ep, u32 node, u16 port, u32 inc,
		    u64 now)
{
	u32 i;

	for (i = 0; i < BSPE_TOMBS; i++) {
		const struct bspe_tomb *t = &ep->tombs[i];

		if (t->until && now < t->until && t->node == node &&
		    t->port == port && !bspe_inc_newer(inc, t->inc))
			return 1;
	}
	return 0;
}

void bspe_seal_begin(const struct bspe_ep *ep, struct bspe_seal_ctx *s,
		     void *hdr)
{
	bspe_seal_key_begin(s, (ep->cfg.flags & BSPE_CFG_AUTH) ?
			    ep->cfg.key : NULL, hdr);
}

void bspe_seal(const struct bspe_ep *ep, void *hdr, const void *payload,
	       u32 len)
{
	struct bspe_seal_ctx s;

	bspe_seal_begin(ep, &s, hdr);
	bspe_seal_update(&s, payload, len);
	bspe_seal_final(&s, hdr);
}

/*
 * Channel incarnations and idle channel eviction
 * (Documentation/protocol.rst "Idle channel eviction").
 *
 * A channel's src_inc is the endpoint's current channel incarnation when it
 * opened. Once a channel is freed while its peer may still know it, the
 * endpoint moves to a newer one, so that a later channel to the same peer
 * is told from the freed one by its incarnation alone: the peer's late
 * frames of the freed channel name it in dst_inc and are dropped (stale),
 * and the peer's channel, seeing a newer src_inc, starts afresh.
 */
void bspe_inc_bump(struct bspe_ep *ep)
{
	u32 n = ep->ops->new_inc ? ep->ops->new_inc(ep->ctx) :
		ep->inc_cur + 1;

	if (!bspe_inc_newer(n, ep->inc_cur))
		n = ep->inc_cur + 1;
	if (!n)
		n = 1;
	ep->inc_cur = n;
}

/*
 * Nothing of @ch is unsettled in either direction, and nothing is owed:
 * freeing it loses nothing this side knows of. A restart still being
 * announced to a reachable peer is owed (the peer may hold messages whole
 * behind the failed ones until it learns of it).
 */
int bspe_chan_idle(const struct bspe_ep *ep, const struct bspe_chan *ch)
{
	u32 r;

	if ((ch->flags & BSPE_CHAN_GROUP) || ch->mcount || ch->fo_count ||
	    ch->rx_active || ch->expecting || ch->peer_closing ||
	    (ch->restart_at && ch->rail_up))
		return 0;
	for (r = 0; r < ep->cfg.nrails; r++) {
		const struct bspe_srail *sr = &ch->srail[r];
		const struct bspe_rrail *rr = &ch->rrail[r];

		if (sr->outstanding || rr->ooo || rr->ack_due || rr->reply_now ||
		    bspe_seq_lt(rr->rcv_nxt, rr->hint_nxt))
			return 0;
	}
	return 1;
}

/* @ch accepted a packet or took a message: the youngest to evict. */
void bspe_touch(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	ch->last_act = now;
	ep->now_hint = now;
	if (!ep->cfg.evict_ns || ch->evicting)
		return;
	bspe_list_del(ep, ch, BSPE_L_IDLE);
	bspe_list_add(ep, ch, BSPE_L_IDLE);
	if (!ep->closed)
		bspe_arm(ep, bspe_evict_due(ep));
}

/* When the oldest channel's idle time is up (0: nothing to evict). */
u64 bspe_evict_due(const struct bspe_ep *ep)
{
	const struct bspe_chan *ch = ep->lists[BSPE_L_IDLE].first;

	if (!ep->cfg.evict_ns || !ch || ep->closed)
		return 0;
	return bspe_max64(ch->last_act + ep->cfg.evict_ns, 1);
}

/* An EVICT packet that needs no channel (an answer for a freed one). */
void bspe_evict_raw(struct bspe_ep *ep, u32 node, u16 port, u8 rail,
		    u32 src_inc, u32 dst_inc, u32 nonce, u16 flags)
{
	struct bspe_xmit x;
	struct bspe_hdr *h = (struct bspe_hdr *)x.hdr;

	if (ep->closed)
		return;
	flags |= BSPE_F_EVICT;
	if (ep->cfg.flags & BSPE_CFG_AUTH)
		flags |= BSPE_F_AUTH;
	else if (ep->cfg.flags & BSPE_CFG_CSUM)
		flags |= BSPE_F_CSUM;
	memset(h, 0, sizeof(*h));
	h->version = BSPE_VERSION;
	h->type = BSPE_T_ACK;
	h->flags = bspe_htons(flags);
	h->src_node = bspe_htonl(ep->cfg.node);
	h->dst_node = bspe_htonl(node);
	h->src_port = bspe_htons(ep->cfg.port);
	h->dst_port = bspe_htons(port);
	h->rail = rail;
	h->ack_rail = rail;
	h->src_inc = bspe_htonl(src_inc);
	h->dst_inc = bspe_htonl(dst_inc);
	h->epoch = bspe_htonl(ep->epoch);
	h->msg_id = bspe_htonl(nonce);
	x.node = node;
	x.rail = rail;
	x.msg = NULL;
	x.off = 0;
	x.len = 0;
	ep->ops->xmit(ep->ctx, &x);
}

/* First live rail of @ch, or -1. */
static int bspe_evict_rail(const struct bspe_ep *ep, const struct bspe_chan *ch)
{
	u32 r;

	for (r = 0; r < ep->cfg.nrails; r++)
		if (ch->rail_up & (1u << r))
			return (int)r;
	return -1;
}

/* (Re)sends the EVICT request of the current attempt. */
void bspe_evict_send(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	int r = bspe_evict_rail(ep, ch);

	ch->evict_tx = now;
	if (r < 0)
		return;
	ep->st.evicts_tx++;
	bspe_evict_raw(ep, ch->node, ch->port, (u8)r, ch->my_inc, ch->peer_inc,
		       ch->evict_nonce, BSPE_F_ACKREQ);
}

/*
 * Frees @ch for good: both sides agreed (or the peer never learned it).
 * Its peer's late frames of it are kept out by its incarnation (they name
 * ours, which no channel has any more) and, for first-contact frames, by
 * a tombstone of the peer's.
 */
void bspe_evict_free(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	ep->st.chans_evicted++;
	bspe_tomb_add(ep, ch, now);
	bspe_chan_close(ep, (int)ch->idx, now);
}

/*
 * Starts the sending side of @ch afresh, nothing of it in flight: its
 * sequence numbers and message numbers from zero (the @ch->mcount messages
 * it holds, which never left, renumbered first).
 */
static void bspe_chan_renumber_tx(struct bspe_ep *ep, struct bspe_chan *ch,
				  u64 now)
{
	u32 r, i;

	for (r = 0; r < ep->cfg.nrails; r++) {
		struct bspe_srail *sr = &ch->srail[r];
		struct bspe_spkt *ring = sr->ring;
		u32 cap = sr->cap;

		memset(sr, 0, sizeof(*sr));
		sr->ring = ring;
		sr->cap = cap;
		sr->progress = now;
	}
	for (i = 0; i < ch->mcount; i++)
		ch->msgs[(ch->mhead + i) % ep->cfg.msg_wnd]->msg_id = i;
	ch->snd_msg_id = ch->mcount;
	ch->peer_waits = 0;
	ch->last_act = now;
}

/*
 * Starts the receiving side of @ch afresh: sequence and message numbers
 * from zero, the peer's incarnation unknown (the caller may set it). What
 * it held must be delivered or dropped first (bspe_rx_salvage).
 */
static void bspe_chan_renumber_rx(struct bspe_ep *ep, struct bspe_chan *ch)
{
	u32 r;

	for (r = 0; r < ep->cfg.nrails; r++) {
		struct bspe_rrail *rr = &ch->rrail[r];
		u64 *bits = rr->bits;

		memset(rr, 0, sizeof(*rr));
		rr->bits = bits;
		memset(bits, 0, (size_t)ep->rcv_words * 8);
	}
	ch->rcv_next_msg = 0;
	ch->expect_until = 0;
	ch->expecting = 0;
	ch->prod_pending = 0;
	ch->data_epoch = 0;
	ch->data_pkts = 0;
	ch->guess = 0;
	memset(ch->dlv_epoch, 0, sizeof(ch->dlv_epoch));
	ch->peer_closing = 0;
	ch->peer_inc = 0;
	ch->peer_knows = 0;
}

/*
 * Starts @ch afresh in place; nothing of it is in flight: a newer
 * incarnation, both directions' sequence numbers and message numbers from
 * zero, the peer's incarnation unknown, so that the peer, seeing a newer
 * src_inc, starts its side afresh too. Rail states, the round-trip
 * estimate and the counters stay.
 */
static void bspe_chan_renumber(struct bspe_ep *ep, struct bspe_chan *ch,
			       u64 now)
{
	bspe_inc_bump(ep);
	bspe_chan_renumber_tx(ep, ch, now);
	bspe_chan_renumber_rx(ep, ch);
	ch->my_inc = ep->inc_cur;
}

/*
 * A packet of a newer incarnation of the peer of @ch, @peer_inc, names our
 * current one: the peer restarted only its sending side (bspe_chan_restart
 * of a peer that had not seen us name its incarnation) and receives from
 * us as before. Our receiving side starts afresh, once what it received
 * whole is delivered; our sending side goes on. Resetting the whole
 * channel would fail what we send and move our incarnation on.
 */
void bspe_chan_reset_rx(struct bspe_ep *ep, struct bspe_chan *ch,
			u32 peer_inc)
{
	ep->st.chan_resets++;
	bspe_rx_salvage(ep, ch);
	bspe_chan_renumber_rx(ep, ch);
	ch->peer_inc = peer_inc;
}

/*
 * The peer released the channel while sends were held (bspe_send on an
 * evicting channel): start a fresh channel in place, newer incarnation,
 * numbering from zero, and give it the held messages, which never left.
 * Anything else in flight means the channel was not idle: reset it.
 * Returns the channel index or -errno.
 */
int bspe_evict_renew(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	u32 r;

	/* bspe_chan_reset closes the channel: the incarnation moves on */
	if (!ch->evicting || ch->rx_active || ch->fo_count)
		return bspe_chan_reset(ep, ch, 0, now);
	for (r = 0; r < ep->cfg.nrails; r++)
		if (ch->srail[r].outstanding)
			return bspe_chan_reset(ep, ch, 0, now);
	bspe_chan_renumber(ep, ch, now);
	ep->st.chans_evicted++;
	ch->evicting = 0;
	bspe_list_add(ep, ch, BSPE_L_IDLE);
	return (int)ch->idx;
}

/*
 * A message of @ch failed (bspe_msg_fail_all: no progress, or no live
 * rail, for unreach_ns), and every message after it with it. The peer may
 * hold fragments of them, and would hold whatever we send next behind the
 * first one for good, acknowledging it all the same: the channel restarts
 * in place. @ch stays where it is (a timer walk holds it).
 *
 * A peer that never named our incarnation (none of its packets carried
 * it) may never have taken anything of ours: only the sending side starts
 * afresh, on a newer incarnation, and what we receive from it goes on as
 * it was (forgetting its incarnation would make us take its packets, which
 * carry no dst_inc, as first contact on a fresh receiving side:
 * duplicates). If it did take ours (and what it sent since was lost), it
 * sees the newer incarnation name its current one and starts only its
 * receiving side afresh (bspe_chan_reset_rx): our renumbered messages are
 * new to it. On the same incarnation they would have been taken for those
 * it had already delivered. Until it names the new incarnation, its
 * packets naming the previous one (prev_inc) are taken for our receiving
 * side, their acknowledgment fields (about the old numbering) ignored:
 * "gone" answers would have reset its channel and then ours.
 *
 * Otherwise the whole channel restarts (bspe_chan_renumber) once what it
 * received whole is delivered (bspe_rx_salvage), and a tombstone keeps
 * the peer's old incarnation out, should a late packet of it carry no
 * dst_inc. The peer learns of the restart from our next packet, or from a
 * probe per timeout (bspe_restart_announce) until it answers on the fresh
 * channel, for unreach_ns at most; its messages in flight to us then fail
 * with -ECONNRESET there.
 */
void bspe_chan_restart(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	ep->st.chan_restarts++;
	if (ch->peer_inc && !ch->peer_knows) {
		if (!ch->prev_inc)
			ch->prev_inc = ch->my_inc;
		bspe_inc_bump(ep);
		bspe_chan_renumber_tx(ep, ch, now);
		ch->my_inc = ep->inc_cur;
	} else {
		bspe_rx_salvage(ep, ch);
		bspe_tomb_add(ep, ch, now);
		bspe_chan_renumber(ep, ch, now);
		ch->prev_inc = 0;
	}
	ch->restart_at = bspe_max64(now, 1);
	ch->restart_tx = 0;
	ch->restart_n = 0;
	bspe_restart_announce(ep, ch, now);
}

/* When the restart of @ch is to be announced (again) (0: not). */
u64 bspe_restart_due(const struct bspe_ep *ep, const struct bspe_chan *ch)
{
	if (!ch->restart_at || !ch->rail_up)
		return 0;
	if (!ch->restart_tx)
		return ch->restart_at;
	return ch->restart_tx + bspe_rto(ep, ch, ch->restart_n);
}

/*
 * Tells the peer of @ch that the channel restarted: a probe, which it
 * answers. Repeated per timeout (backed off) for unreach_ns from the first
 * one, which goes out as soon as a rail to the peer lives.
 */
void bspe_restart_announce(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	int r = bspe_evict_rail(ep, ch);

	if (!ch->restart_at || r < 0)
		return;
	if (!ch->restart_tx) {
		ch->restart_at = bspe_max64(now, 1);
	} else if (now - ch->restart_at >= ep->cfg.unreach_ns) {
		ch->restart_at = 0;
		return;
	}
	ch->restart_tx = now;
	if (ch->restart_n < 255)
		ch->restart_n++;
	bspe_send_probe(ep, ch, (u8)r, now);
}

/*
 * Timer: the channels idle for evict_ns, oldest first. One with something
 * unsettled goes to the back of the line; one whose peer never heard of it
 * is freed; the others start the handshake (their sends are held until
 * the peer answers).
 */
void bspe_evict_scan(struct bspe_ep *ep, u64 now)
{
	struct bspe_chan *ch;

	while (!ep->closed && ep->cfg.evict_ns &&
	       (ch = ep->lists[BSPE_L_IDLE].first) &&
	       now - ch->last_act >= ep->cfg.evict_ns) {
		ep->st.chan_visits++;
		if (!bspe_chan_idle(ep, ch)) {
			bspe_touch(ep, ch, now);
			continue;
		}
		if (!ch->peer_inc || bspe_evict_rail(ep, ch) < 0) {
			/*
			 * The peer never told us its incarnation, so it never
			 * acknowledged anything of ours: nothing it holds can
			 * be confused with a later channel, which has a newer
			 * incarnation anyway.
			 */
			bspe_evict_free(ep, ch, now);
			continue;
		}
		bspe_list_del(ep, ch, BSPE_L_IDLE);
		ch->evicting = 1;
		ch->evict_nonce++;
		if (!ch->evict_nonce)
			ch->evict_nonce = 1;
		ch->evict_start = now;
		bspe_evict_send(ep, ch, now);
		bspe_arm_chan(ep, ch, now);
	}
}
