// SPDX-License-Identifier: GPL-2.0
/*
 * Send path of the AF_BSP protocol engine: message submission,
 * striping over rails, transmission scheduling, acknowledgment requests,
 * pacing and message completion.
 */
#include "bspe_internal.h"

#define BSPE_NSEC_PER_SEC	1000000000ULL

static u32 bspe_msg_nfrags(const struct bspe_ep *ep, u32 len)
{
	if (!len)
		return 1;
	return (len - 1) / ep->cfg.frag_size + 1;
}

void bspe_build_hdr(struct bspe_ep *ep, struct bspe_chan *ch,
		    struct bspe_hdr *h, u8 type, u16 flags, u8 rail,
		    u8 ack_rail, u64 now)
{
	struct bspe_srail *sr = &ch->srail[rail];
	struct bspe_rrail *rr = &ch->rrail[ack_rail];

	if (ep->cfg.flags & BSPE_CFG_AUTH)
		flags |= BSPE_F_AUTH;	/* the MAC replaces the checksum */
	else if (ep->cfg.flags & BSPE_CFG_CSUM)
		flags |= BSPE_F_CSUM;
	memset(h, 0, sizeof(*h));
	h->version = BSPE_VERSION;
	h->type = type;
	h->flags = bspe_htons(flags);
	h->src_node = bspe_htonl(ep->cfg.node);
	h->dst_node = bspe_htonl(ch->node);
	h->src_port = bspe_htons(ep->cfg.port);
	h->dst_port = bspe_htons(ch->port);
	h->rail = rail;
	h->ack_rail = ack_rail;
	h->src_inc = bspe_htonl(ch->my_inc);
	h->dst_inc = bspe_htonl(ch->peer_inc);
	h->seq = bspe_htonl(sr->snd_nxt);
	h->base = bspe_htonl(sr->snd_una);
	h->ack = bspe_htonl(rr->rcv_nxt);
	h->eoh = bspe_htonl(bspe_rcv_eoh(ep, ch, rr, now));
	h->epoch = bspe_htonl(ep->epoch);
	/* This packet acknowledges the reverse rail: reset the fine rule. */
	rr->since_ack = 0;
	rr->ack_wanted = 0;
	rr->ack_due = 0;
	rr->changed = 0;
	/* A hole too young to show is reported once it is old enough. */
	rr->hole_due = bspe_hole_young(ch, rr, now);
	if (rr->hole_due) {
		bspe_list_add(ep, ch, BSPE_L_TIMER);
		bspe_chan_due(ep, rr->hole_due);
		bspe_arm(ep, rr->hole_due);
	}
}

/* Reverse rail whose acknowledgment a DATA packet on @rail carries. */
static u8 bspe_pick_ack_rail(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail)
{
	u32 i, n = ep->cfg.nrails;

	for (i = 0; i < n; i++) {
		u8 r = (u8)((ch->ack_rr + i) % n);

		if (ch->rrail[r].ack_wanted || ch->rrail[r].changed) {
			ch->ack_rr = (u8)((r + 1) % n);
			return r;
		}
	}
	return rail;
}

static void bspe_rate_roll(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	if (now - ep->rate_start < ch->srtt)
		return;
	ep->rate_prev = now - ep->rate_start < 2 * ch->srtt ? ep->rate_cur : 0;
	ep->rate_cur = 0;
	ep->rate_start = now;
}

/* Fine-grained rule, sender side: will buffers run out within an RTT? */
static int bspe_want_ackreq(struct bspe_ep *ep, struct bspe_chan *ch,
			    struct bspe_srail *sr, u64 now)
{
	u32 free_ep = ep->cfg.sndbuf_pkts - ep->outstanding;
	u32 free_rail = ep->cfg.snd_wnd - (sr->snd_nxt - sr->snd_una);
	u32 rate = ep->rate_cur > ep->rate_prev ? ep->rate_cur : ep->rate_prev;
	u32 free = free_ep < free_rail ? free_ep : free_rail;

	if (free > rate)
		return 0;
	if (sr->ackreq_pending && now - sr->ackreq_time < ch->srtt)
		return 0;
	return 1;
}

/*
 * Window rule, sender side (WNDREQ in Documentation/protocol.rst). What
 * bounds a (channel, rail) is its window of snd_wnd packets or, when the
 * channel's message window is full (@full: @seq ends the rail's run of the
 * newest message and no message can be added), the packets it holds now.
 * A new packet @seq with which the rail holds half that bound asks for an
 * acknowledgment at once if it is at least half the bound in numbers after
 * the last request: a one-way stream never waits on a full window for its
 * timeout, and asks at most twice per bound, not per packet. The packet
 * after which nothing more is queued for the rail (@tail) asks too if the
 * last request was such a one and within the last window of numbers: the
 * end of such a stream is not left to the timeout either. Below half a
 * window with room for messages, as in a superstep's exchange, nothing
 * changes. Returns the kind of request (BSPE_WNDREQ_*) or 0.
 */
static int bspe_want_wndreq(const struct bspe_ep *ep,
			    const struct bspe_srail *sr, u32 seq, int tail,
			    int full)
{
	u32 span = sr->snd_nxt - sr->snd_una;
	u32 half = (full ? span : ep->cfg.snd_wnd) / 2;

	if (span >= half && span &&
	    (!sr->wndreq_on || seq - sr->wndreq_seq >= half))
		return BSPE_WNDREQ_HALF;
	if (tail && !full && sr->wndreq_on == BSPE_WNDREQ_HALF &&
	    seq - sr->wndreq_seq < ep->cfg.snd_wnd)
		return BSPE_WNDREQ_TAIL;
	return 0;
}

/* Transmits DATA packet @seq of (@ch, @rail) from its descriptor. */
static void bspe_xmit_data(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail,
			   u32 seq, u16 flags, u64 now)
{
	struct bspe_srail *sr = &ch->srail[rail];
	struct bspe_spkt *p = bspe_spkt_of(sr, seq);
	struct bspe_smsg *m = ch->msgs[p->mslot];
	struct bspe_stats *st = &ch->st[rail];
	struct bspe_xmit x;
	struct bspe_hdr *h = (struct bspe_hdr *)x.hdr;
	u32 off = p->frag * ep->cfg.frag_size;
	u32 len = m->len - off;
	int waits;

	if (ep->closed)
		return;
	if (len > ep->cfg.frag_size)
		len = ep->cfg.frag_size;
	if (p->flags & BSPE_SPKT_SYNC)
		flags |= BSPE_F_SYNC;
	if (p->flags & BSPE_SPKT_LAST)
		flags |= BSPE_F_LAST | BSPE_F_ACKREQ;
	else if (bspe_want_ackreq(ep, ch, sr, now))
		flags |= BSPE_F_ACKREQ;
	/*
	 * The last data packet, or the end of a barrier message, to a peer
	 * that prodded us in this superstep and found nothing: it waits,
	 * and nothing after this packet would reveal its loss. It asks for
	 * an answer at once (Documentation/protocol.rst, "Tail loss probe").
	 */
	switch (flags & (BSPE_F_SYNC | BSPE_F_LAST)) {
	case BSPE_F_LAST:
		waits = 1;
		break;
	case BSPE_F_SYNC:
		waits = off + len == m->len;
		break;
	default:
		waits = 0;	/* SYNC|LAST is answered at once anyway */
	}
	waits = waits && ch->peer_waits == ep->epoch + 1;
	if (waits)
		flags |= BSPE_F_WNDREQ | BSPE_F_ACKREQ;
	if (flags & BSPE_F_ACKREQ) {
		/* answered at once (SYNC|LAST, or WNDREQ): bspe_tlp_due */
		sr->ackreq_pending = (flags & (BSPE_F_SYNC | BSPE_F_LAST)) ==
				     (BSPE_F_SYNC | BSPE_F_LAST) || waits ?
				     BSPE_ACKREQ_NOW : 1;
		sr->ackreq_seq = seq;
		sr->ackreq_time = now;
		sr->ackreq_clean = p->ntx == 1;
		st->ackreq_tx++;
	}
	bspe_build_hdr(ep, ch, h, BSPE_T_DATA, flags, rail,
		       bspe_pick_ack_rail(ep, ch, rail), now);
	h->seq = bspe_htonl(seq);
	h->epoch = bspe_htonl(ep->epoch);
	h->msg_id = bspe_htonl(m->msg_id);
	h->msg_len = bspe_htonl(m->len);
	h->frag_off = bspe_htonl(off);
	h->frag_unit = bspe_htons(ep->cfg.frag_size);
	h->payload_len = bspe_htons((u16)len);
	x.node = ch->node;
	x.rail = rail;
	x.msg = m->cookie;
	x.off = off;
	x.len = len;
	st->data_tx++;
	st->bytes_tx += len;
	ep->rate_cur++;
	if (ep->pace_bps) {
		u64 cost = len + BSPE_HDR_LEN;

		ep->pace_tokens = ep->pace_tokens > cost ?
				  ep->pace_tokens - cost : 0;
	}
	ep->ops->xmit(ep->ctx, &x);
}

static int bspe_has_frag(const struct bspe_ep *ep, const struct bspe_chan *ch,
			 u8 rail);

/*
 * Resends outstanding packet @seq of (@ch, @rail), shown missing by a
 * report that was built after the receiver had seen every packet the
 * sender sent before time @seen (0: unknown). @last: @seq ends the hole
 * the report showed. Returns 1 if it was sent.
 */
int bspe_emit_retx(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail,
		   u32 seq, enum bspe_cause cause, u64 seen, int last, u64 now)
{
	struct bspe_srail *sr = &ch->srail[rail];
	struct bspe_stats *st = &ch->st[rail];
	u16 flags = BSPE_F_RETX;
	struct bspe_spkt *p;

	if (seq - sr->snd_una >= sr->snd_nxt - sr->snd_una)
		return 0;
	p = bspe_spkt_of(sr, seq);
	if (p->state != BSPE_SPKT_OUT || !(ch->rail_up & (1u << rail)))
		return 0;
	/*
	 * A hole is certain (a later packet, or a control packet, arrived
	 * behind it on its FIFO rail): resend at once the first time. A
	 * packet resent before is resent again only on a report built after
	 * the resend arrived: the answer to a probe sent after it. Any other
	 * report may predate the resend's arrival (it waits behind the queue
	 * the stream keeps filled, which may hold more than a round trip):
	 * one round trip after the resend, such a report draws one check, a
	 * probe behind the resend, whose answer tells. A check unanswered for
	 * two round-trip estimates was lost (or its answer was): the next
	 * such report draws another, or nothing but the sender timeout would
	 * resend the packet.
	 */
	if (p->ntx > 1 && seen <= p->last_tx) {
		if (now - p->last_tx >= ch->srtt &&
		    (sr->chk_time <= p->last_tx ||
		     now - sr->chk_time >= 2 * ch->srtt)) {
			sr->chk_time = now;
			bspe_send_probe(ep, ch, rail, now);
		}
		return 0;
	}
	if (p->ntx < 255)
		p->ntx++;
	p->last_tx = now;
	if (p->flags & BSPE_SPKT_FAILOVER)
		flags |= BSPE_F_FAILOVER;
	/*
	 * The end of a hole in a stream that asked for acknowledgments
	 * (window rule), with nothing more queued for the rail (no fragment
	 * bspe_pick_frag() would find): no later packet will ask, so the
	 * resend does. So does the last resend drawn by the answer to a
	 * timeout probe: the timeouts have backed off, and after a long
	 * outage the acknowledgment would wait seconds for the next one,
	 * which could fail the message (unreach_ns without progress) after
	 * it arrived.
	 */
	if (last && ((sr->wndreq_on && !bspe_has_frag(ep, ch, rail)) ||
		     cause == BSPE_CAUSE_TIMEOUT))
		flags |= BSPE_F_WNDREQ;
	if (cause == BSPE_CAUSE_HOLE)
		st->retx_hole++;
	else if (cause == BSPE_CAUSE_PROD)
		st->retx_prod++;
	else
		st->retx_timeout++;
	bspe_xmit_data(ep, ch, rail, seq, flags, now);
	return 1;
}

/*
 * Refills pacing tokens; returns 1 if a full packet may be sent now. When
 * not, records when it may (pace_wake) and arms the timer for it. Only the
 * timer clears pace_wake, by pushing every channel: a packet that another
 * channel sends meanwhile does not release this channel's waiting ones.
 */
static int bspe_pace_ok(struct bspe_ep *ep, u64 now)
{
	u64 burst, dt, wake, need = (u64)ep->cfg.frag_size + BSPE_HDR_LEN;

	if (!ep->pace_bps)
		return 1;
	burst = 4 * need;
	dt = now - ep->pace_last;
	/*
	 * Refill by the time elapsed, at most the burst: a refill that comes
	 * late or seldom (only the pacing timer drives a slow stream) must get
	 * all the tokens of its interval. Below the time to fill the burst,
	 * dt * pace_bps < burst * 10^9 (< 2^48): no overflow.
	 */
	if (dt >= ep->pace_fill_ns)
		ep->pace_tokens = burst;
	else
		ep->pace_tokens += bspe_div64(dt * ep->pace_bps,
					      (u32)1000000000u);
	if (ep->pace_tokens > burst)
		ep->pace_tokens = burst;
	ep->pace_last = now;
	if (ep->pace_tokens >= need)
		return 1;
	wake = now + bspe_div64_64((need - ep->pace_tokens) *
				   BSPE_NSEC_PER_SEC, ep->pace_bps) + 1;
	if (!ep->pace_wake || wake < ep->pace_wake)
		ep->pace_wake = wake;
	/*
	 * Arm here, not in the callers: pushes also come from paths that arm
	 * nothing themselves (a superstep completed, buffers consumed).
	 */
	bspe_arm(ep, ep->pace_wake);
	return 0;
}

void bspe_set_pacing(struct bspe_ep *ep, u64 bytes_per_sec, u64 now)
{
	if (bytes_per_sec > (1ULL << 36))
		bytes_per_sec = 1ULL << 36;
	ep->pace_bps = bytes_per_sec;
	if (bytes_per_sec)
		ep->pace_fill_ns = bspe_div64_64(4ULL * (ep->cfg.frag_size +
							  BSPE_HDR_LEN) *
						 BSPE_NSEC_PER_SEC,
						 bytes_per_sec);
	ep->pace_tokens = 0;
	ep->pace_last = now;
	ep->pace_wake = 0;
	/*
	 * Packets held back by the old rate wait for the new one: push now,
	 * which sends what the new rate allows and arms the timer for the
	 * rest (forgetting pace_wake alone would strand them).
	 */
	bspe_push_all(ep, now);
}

/*
 * Picks the next fragment to send on live rail @rail: the failover queue
 * first, then the oldest message with an unsent fragment in @rail's run or
 * in the run of a dead rail. Returns 0 and fills @mslot/@frag/@last, or
 * -ENOENT. @tail: the fragment ends @rail's run of the channel's newest
 * message, with no failover entry left: nothing more is queued for @rail.
 */
static int bspe_pick_frag(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail,
			  u16 *mslot, u32 *frag, int *last, int *fo, int *tail)
{
	u32 i, r, wnd = ep->cfg.msg_wnd;

	*fo = 0;
	*tail = 0;
	if (ch->fo_count) {
		struct bspe_fofrag *f = &ch->foq[ch->fo_head];
		struct bspe_smsg *m = ch->msgs[f->mslot];

		*mslot = f->mslot;
		*frag = f->frag;
		*last = (m->flags & BSPE_SEND_LAST) && f->frag + 1 == m->nfrags;
		*fo = 1;
		ch->fo_head = (ch->fo_head + 1) % ch->fo_cap;
		ch->fo_count--;
		ep->fo_total--;
		return 0;
	}
	for (i = 0; i < ch->mcount; i++) {
		u32 s = (ch->mhead + i) % wnd;
		struct bspe_smsg *m = ch->msgs[s];

		if (!m->active)
			continue;
		for (r = 0; r < ep->cfg.nrails; r++) {
			u32 q = (rail + r) % ep->cfg.nrails;

			if (q != rail && (ch->rail_up & (1u << q)))
				continue;
			if (m->run_next[q] >= m->run_end[q])
				continue;
			*mslot = (u16)s;
			*frag = m->run_next[q]++;
			*last = (m->flags & BSPE_SEND_LAST) &&
				m->run_next[q] == m->run_end[q];
			*tail = q == rail && i + 1 == ch->mcount &&
				m->run_next[q] == m->run_end[q];
			return 0;
		}
	}
	return -ENOENT;
}

/* Would bspe_pick_frag() find a fragment for @rail? */
static int bspe_has_frag(const struct bspe_ep *ep, const struct bspe_chan *ch,
			 u8 rail)
{
	u32 i, r, wnd = ep->cfg.msg_wnd;

	if (ch->fo_count)
		return 1;
	for (i = 0; i < ch->mcount; i++) {
		const struct bspe_smsg *m = ch->msgs[(ch->mhead + i) % wnd];

		if (!m->active)
			continue;
		for (r = 0; r < ep->cfg.nrails; r++) {
			if (r != rail && (ch->rail_up & (1u << r)))
				continue;
			if (m->run_next[r] < m->run_end[r])
				return 1;
		}
	}
	return 0;
}

/* Sends one new DATA packet on @rail if allowed; returns 1 if sent. */
static int bspe_push_one(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail,
			 u64 now)
{
	struct bspe_srail *sr = &ch->srail[rail];
	struct bspe_spkt *p;
	u32 frag;
	u16 mslot, flags;
	int last, fo, tail, wndreq;

	if (sr->snd_nxt - sr->snd_una >= ep->cfg.snd_wnd)
		return 0;
	if (ep->outstanding >= ep->cfg.sndbuf_pkts) {
		ep->budget_blocked = 1;
		return 0;
	}
	if (!bspe_has_frag(ep, ch, rail))
		return 0;
	/* Room for one more: the ring grows, the failover queue with it. */
	if (sr->snd_nxt - sr->snd_una >= sr->cap &&
	    bspe_ring_grow(ep, ch, rail))
		return 0;
	if (bspe_foq_reserve(ep, ch, rail))
		return 0;
	if (bspe_pick_frag(ep, ch, rail, &mslot, &frag, &last, &fo, &tail))
		return 0;
	p = bspe_spkt_of(sr, sr->snd_nxt);
	memset(p, 0, sizeof(*p));
	p->state = BSPE_SPKT_OUT;
	p->frag = frag;
	p->mslot = mslot;
	p->epoch = ch->msgs[mslot]->epoch;
	p->ntx = 1;
	p->last_tx = now;
	if (ch->msgs[mslot]->flags & BSPE_SEND_SYNC)
		p->flags |= BSPE_SPKT_SYNC;
	if (last)
		p->flags |= BSPE_SPKT_LAST;
	if (fo)
		p->flags |= BSPE_SPKT_FAILOVER;
	/*
	 * A rail that still takes new packets is not stuck: its answers may
	 * merely queue behind them (a paced or shaped stream asks once per
	 * half window, which can take longer than the timeout to leave). The
	 * timeout counts from the last settle or first transmission; a dead
	 * peer still fails once the window is full.
	 */
	sr->progress = now;
	/* An outstanding packet is a probe deadline: the timer walks it. */
	bspe_list_add(ep, ch, BSPE_L_TIMER);
	bspe_chan_due(ep, bspe_max64(now, sr->probe_time) +
			  bspe_rto(ep, ch, sr->probes));
	sr->outstanding++;
	ep->outstanding++;
	sr->snd_nxt++;
	flags = fo ? BSPE_F_RETX | BSPE_F_FAILOVER : 0;
	if (fo)
		ch->st[rail].retx_failover++;
	wndreq = bspe_want_wndreq(ep, sr, sr->snd_nxt - 1, tail,
				  tail && ch->mcount >= ep->cfg.msg_wnd);
	if (wndreq) {
		flags |= BSPE_F_WNDREQ;
		sr->wndreq_on = (u8)wndreq;
		sr->wndreq_seq = sr->snd_nxt - 1;
	}
	bspe_xmit_data(ep, ch, rail, sr->snd_nxt - 1, flags, now);
	return 1;
}

/*
 * Sends what the windows, the budget and pacing allow, one packet per
 * live rail in turn. The turn moves on with every packet, so a paced
 * channel (one packet per token) still alternates between its rails
 * instead of draining one rail's runs first at the whole socket's rate.
 * Returns 0 if pacing stopped it, 1 otherwise.
 */
int bspe_push(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	u32 n = ep->cfg.nrails;
	int sent = 1;

	/* Held until the peer answers the EVICT (bspe_inc.c). */
	if (ch->evicting)
		return 1;
	bspe_rate_roll(ep, ch, now);
	while (sent) {
		u32 i;

		sent = 0;
		for (i = 0; i < n; i++) {
			u8 q = (u8)((ch->tx_rr + i) % n);

			if (!(ch->rail_up & (1u << q)))
				continue;
			if (!bspe_pace_ok(ep, now))
				return 0;
			if (bspe_push_one(ep, ch, q, now)) {
				ch->tx_rr = (u8)((q + 1) % n);
				sent = 1;
				break;
			}
		}
	}
	return 1;
}

/* Has @m a fragment not yet sent (in any rail's run)? */
static int bspe_msg_unsent(const struct bspe_ep *ep, const struct bspe_smsg *m)
{
	u32 r;

	for (r = 0; r < ep->cfg.nrails; r++)
		if (m->run_next[r] < m->run_end[r])
			return 1;
	return 0;
}

/*
 * Paced endpoints send in submission order across channels: the
 * channel holding the oldest unsent message goes first, and the next
 * one only when it has nothing left that it may send. A destination
 * schedule chosen above ([DHS99]'s latin square, see
 * Documentation/messaging.rst) thus reaches the wire as it was chosen,
 * instead of in channel order whenever the pacing timer releases packets.
 *
 * The endpoint keeps its active messages in one FIFO in submission order
 * (bspe_send appends, settling removes), so the walk is over the messages
 * in flight, not over the channel table. A channel is due at its first
 * message in the FIFO that has an unsent fragment or heads its failover
 * queue; it is pushed once per walk (push_gen), and pushing it cannot
 * make an earlier message of another channel due.
 */
static void bspe_push_ordered(struct bspe_ep *ep, u64 now)
{
	struct bspe_smsg *m, *next;
	u32 gen = ++ep->push_gen;

	/*
	 * Messages before munsent have sent every fragment (a sent fragment
	 * is never unsent again: losses are resent from the ring, a dead
	 * rail's from the failover queue), so without failover entries the
	 * walk starts there: a release costs the channels with unsent data,
	 * not the messages that wait for their acknowledgements.
	 */
	while (ep->munsent && !bspe_msg_unsent(ep, ep->munsent))
		ep->munsent = ep->munsent->fnext;
	for (m = ep->fo_total ? ep->mfirst : ep->munsent; m; m = next) {
		struct bspe_chan *ch = m->ch;

		/* Pushing only sends: no message leaves the FIFO meanwhile. */
		next = m->fnext;
		if (ch->push_gen == gen)
			continue;
		if (!bspe_msg_unsent(ep, m) &&
		    !(ch->fo_count && ch->msgs[ch->foq[ch->fo_head].mslot] == m))
			continue;
		ch->push_gen = gen;
		ep->st.chan_visits++;
		if (!bspe_push(ep, ch, now))
			return;
	}
}

void bspe_push_all(struct bspe_ep *ep, u64 now)
{
	struct bspe_chan *ch, *next;

	ep->budget_blocked = 0;
	if (ep->pace_bps) {
		bspe_push_ordered(ep, now);
		return;
	}
	for (ch = ep->lists[BSPE_L_SEND].first; ch; ch = next) {
		next = ch->link[BSPE_L_SEND].next;
		ep->st.chan_visits++;
		bspe_push(ep, ch, now);
	}
}

/*
 * @ch may send more (a new message, freed window, a rail back). Paced,
 * every channel is served in submission order, so that @ch does not jump
 * ahead of older messages waiting for tokens; while the tokens are out
 * (before pace_wake) nothing could leave, and the pacing timer pushes every
 * channel when they are back, so a kick costs nothing then.
 */
void bspe_kick(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	if (ep->pace_bps) {
		if (!ep->pace_wake || now >= ep->pace_wake)
			bspe_push_all(ep, now);
		return;
	}
	if (ep->budget_blocked)
		bspe_push_all(ep, now);
	else
		bspe_push(ep, ch, now);
}

/*
 * The rail of a message that is not striped: live rail number (src_node +
 * dst_node + src_port + dst_port) mod L, the same at both ends of @ch while
 * they agree on the live rails; rail 0 if none is live.
 */
u8 bspe_short_rail(const struct bspe_ep *ep, const struct bspe_chan *ch)
{
	u32 i, nl = 0, k;

	for (i = 0; i < ep->cfg.nrails; i++)
		if (ch->rail_up & (1u << i))
			nl++;
	if (!nl)
		return 0;
	k = (ep->cfg.node + ch->node + ep->cfg.port + ch->port) % nl;
	for (i = 0; i < ep->cfg.nrails; i++)
		if ((ch->rail_up & (1u << i)) && !k--)
			break;
	return (u8)i;
}

static int bspe_send_in(struct bspe_ep *ep, int chan, void *msg, u32 len,
			u32 flags, u64 now)
{
	struct bspe_chan *ch = bspe_chan_get(ep, chan);
	u8 live[BSPE_MAX_RAILS];
	struct bspe_smsg *m;
	u32 i, s, nl = 0, k, nfrags, first;

	if (!ch || (flags & ~(BSPE_SEND_LAST | BSPE_SEND_SYNC)))
		return -EINVAL;
	if (len > ep->cfg.max_msg)
		return -EMSGSIZE;
	if (ep->closed)
		return -ESHUTDOWN;
	if (!ch->rail_up && ch->down_since &&
	    now - ch->down_since >= ep->cfg.unreach_ns)
		return -EHOSTUNREACH;
	if (ch->mcount >= ep->cfg.msg_wnd)
		return -EAGAIN;
	ep->now_hint = now;
	bspe_touch(ep, ch, now);
	bspe_rtt_adopt(ep, ch);
	s = (ch->mhead + ch->mcount) % ep->cfg.msg_wnd;
	m = bspe_msg_get(ep, ch, s);
	if (!m)
		return -EAGAIN;	/* counted: a message of @ch completes first */
	memset(m, 0, sizeof(*m));
	nfrags = bspe_msg_nfrags(ep, len);
	m->cookie = msg;
	m->msg_id = ch->snd_msg_id++;
	m->len = len;
	m->nfrags = nfrags;
	m->epoch = ep->epoch;
	m->unsettled = nfrags;
	m->order = ep->send_order++;
	m->flags = (u16)flags;
	m->active = 1;
	m->ch = ch;
	m->fnext = NULL;
	m->fprev = ep->mlast;
	if (ep->mlast)
		ep->mlast->fnext = m;
	else
		ep->mfirst = m;
	ep->mlast = m;
	if (!ep->munsent)
		ep->munsent = m;
	ch->mcount++;
	bspe_list_add(ep, ch, BSPE_L_SEND);
	for (i = 0; i < ep->cfg.nrails; i++)
		if (ch->rail_up & (1u << i))
			live[nl++] = (u8)i;
	if (nl >= 2 && nfrags >= 2 &&
	    len >= nl * (ep->cfg.stripe_min ? ep->cfg.stripe_min :
			 ep->cfg.frag_size)) {
		/* BCL-4 striping: one contiguous run per live rail. */
		k = nfrags < nl ? nfrags : nl;
		first = 0;
		for (i = 0; i < k; i++) {
			u32 sz = nfrags / k + (i < nfrags % k ? 1 : 0);

			m->run_next[live[i]] = first;
			m->run_end[live[i]] = first + sz;
			first += sz;
		}
	} else {
		m->run_end[bspe_short_rail(ep, ch)] = nfrags;
	}
	bspe_kick(ep, ch, now);
	bspe_arm_chan(ep, ch, now);
	return 0;
}

int bspe_send(struct bspe_ep *ep, int chan, void *msg, u32 len, u32 flags,
	      u64 now)
{
	int ret;

	bspe_enter(ep);
	ret = bspe_send_in(ep, chan, msg, len, flags, now);
	bspe_leave(ep);
	return ret;
}

/* @m is settled: out of the endpoint's FIFO. */
static void bspe_msg_unlink(struct bspe_ep *ep, struct bspe_smsg *m)
{
	if (ep->munsent == m)
		ep->munsent = m->fnext;
	if (m->fprev)
		m->fprev->fnext = m->fnext;
	else
		ep->mfirst = m->fnext;
	if (m->fnext)
		m->fnext->fprev = m->fprev;
	else
		ep->mlast = m->fprev;
	m->fprev = NULL;
	m->fnext = NULL;
	m->active = 0;
}

void bspe_msg_settle(struct bspe_ep *ep, struct bspe_chan *ch, u16 mslot,
		     u64 now)
{
	struct bspe_smsg *m = ch->msgs[mslot];

	(void)now;
	if (!m || !m->active || !m->unsettled)
		return;
	if (--m->unsettled)
		return;
	bspe_msg_unlink(ep, m);
	ch->st[0].msgs_tx++;
	ep->ops->complete(ep->ctx, m->cookie, 0);
	while (ch->mcount && !ch->msgs[ch->mhead]->active) {
		ch->mhead = (ch->mhead + 1) % ep->cfg.msg_wnd;
		ch->mcount--;
	}
	bspe_trim_later(ep, ch);
	if (!ch->mcount)
		bspe_list_del(ep, ch, BSPE_L_SEND);
}

void bspe_msg_fail_all(struct bspe_ep *ep, struct bspe_chan *ch, int status)
{
	u32 i, r;

	for (r = 0; r < ep->cfg.nrails; r++) {
		struct bspe_srail *sr = &ch->srail[r];

		memset(sr->ring, 0, sizeof(*sr->ring) * sr->cap);
		ep->outstanding -= sr->outstanding;
		sr->outstanding = 0;
		sr->snd_una = sr->snd_nxt;
		sr->ackreq_pending = 0;
		sr->probes = 0;
	}
	ep->fo_total -= ch->fo_count;
	ch->fo_count = 0;
	ch->fo_head = 0;
	for (i = 0; i < ch->mcount; i++) {
		struct bspe_smsg *m = ch->msgs[(ch->mhead + i) %
					       ep->cfg.msg_wnd];

		if (!m->active)
			continue;
		bspe_msg_unlink(ep, m);
		ch->st[0].msgs_failed++;
		ep->ops->complete(ep->ctx, m->cookie, status);
	}
	ch->mcount = 0;
	bspe_list_del(ep, ch, BSPE_L_SEND);
	bspe_trim_later(ep, ch);
}
