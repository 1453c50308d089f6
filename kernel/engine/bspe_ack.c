// SPDX-License-Identifier: GPL-2.0
/*
 * Acknowledgment in the AF_BSP protocol engine: cumulative
 * ack and end-of-hole processing with hole-filling retransmission
 * ([DHS99] 4.3), implicit superstep acknowledgment
 * (Documentation/protocol.rst), explicit control packets (ACK, PROD,
 * probes) and the round-trip estimate.
 */
#include "bspe_internal.h"

/*
 * Reordering allowance: one rail's frames may arrive slightly out of order
 * (a NIC or veth processing them on several CPUs at once), so a hole (an
 * out-of-order arrival, or a hint beyond rcv_nxt) is reported only once it
 * is older than a quarter of the round-trip estimate (RACK's reordering
 * window, RFC 8985 6.2). A slow link stretches reordering: two frames
 * swapped before a 1 Mbit/s port arrive one frame time (12 ms) apart. So,
 * as RACK does on a DSACK, every resend that arrives as a duplicate (the
 * hole was not one) widens the allowance by another quarter, up to the
 * whole estimate, and BSPE_REO_PERSIST real holes filled in a row narrow it
 * again by one step.
 */
u64 bspe_reo_wnd(const struct bspe_chan *ch)
{
	return (ch->srtt >> 2) * (1 + ch->reo_steps);
}

/* A resend arrived: a duplicate (@spurious) or the fill of a real hole. */
void bspe_reo_resend_in(struct bspe_chan *ch, int spurious)
{
	if (spurious) {
		if (ch->reo_steps < BSPE_REO_STEPS_MAX)
			ch->reo_steps++;
		ch->reo_fills = 0;
	} else if (ch->reo_steps && ++ch->reo_fills >= BSPE_REO_PERSIST) {
		ch->reo_steps--;
		ch->reo_fills = 0;
	}
}

/*
 * Returns when a hole too young to report becomes old enough, or 0 if there
 * is no such hole.
 */
u64 bspe_hole_young(const struct bspe_chan *ch, const struct bspe_rrail *rr,
		    u64 now)
{
	u64 ripe = rr->hole_at + bspe_reo_wnd(ch);

	if (!bspe_rcv_hole(rr) || now >= ripe)
		return 0;
	return ripe;
}

static u32 bspe_rcv_eoh_in(const struct bspe_chan *ch,
			   const struct bspe_rrail *rr, u64 now)
{
	if (bspe_hole_young(ch, rr, now))
		return rr->rcv_nxt;
	/*
	 * A control packet on a rail travels behind the DATA packets sent
	 * before it (rails are FIFO), so every number below the sender's
	 * snd_nxt it carried (hint_nxt) that has not arrived is lost.
	 */
	if (rr->ooo)
		return rr->eoh;
	if (bspe_seq_lt(rr->rcv_nxt, rr->hint_nxt))
		return rr->hint_nxt;
	return rr->rcv_nxt;
}

u32 bspe_rcv_eoh(const struct bspe_ep *ep, const struct bspe_chan *ch,
		 const struct bspe_rrail *rr, u64 now)
{
	u32 eoh = bspe_rcv_eoh_in(ch, rr, now);

	(void)ep;
	/*
	 * Out of memory: the hole ends at the first packet refused, which
	 * would be refused again; below it are fragments of messages taken
	 * (Documentation/protocol.rst, "Receive memory").
	 */
	if (ch->rx_blocked && bspe_seq_lt(rr->refused, eoh))
		eoh = bspe_seq_lt(rr->refused, rr->rcv_nxt) ? rr->rcv_nxt :
							    rr->refused;
	return eoh;
}

void bspe_rtt_sample(struct bspe_ep *ep, struct bspe_chan *ch, u64 sample)
{
	s64 d = (s64)(sample - ch->srtt);

	/*
	 * The first sample replaces the initial guess (RFC 6298): a channel
	 * that sees few exchanges (a superstep's handful of packets) would
	 * otherwise keep rtt_init, which sizes its prod interval and its
	 * reordering allowance, for dozens of samples.
	 */
	if (!ch->rtt_seen) {
		ch->rtt_seen = 1;
		d = (s64)(sample - ch->srtt) * 8;
	}
	ch->srtt = (u64)((s64)ch->srtt + d / 8);
	if (ch->srtt < ep->cfg.rtt_min_ns)
		ch->srtt = ep->cfg.rtt_min_ns;
	if (ch->srtt > ep->cfg.rtt_max_ns)
		ch->srtt = ep->cfg.rtt_max_ns;
	/* The endpoint's estimate, for channels without samples of their own. */
	d = (s64)(ch->srtt - ep->srtt);
	ep->srtt = ep->srtt ? (u64)((s64)ep->srtt + d / 8) : ch->srtt;
}

/*
 * A channel that has no sample of its own yet takes the endpoint's
 * estimate (its peers are on the same networks) instead of rtt_init.
 */
void bspe_rtt_adopt(const struct bspe_ep *ep, struct bspe_chan *ch)
{
	if (!ch->rtt_seen && ep->srtt)
		ch->srtt = ep->srtt;
}

void bspe_advance_una(struct bspe_ep *ep, struct bspe_srail *sr)
{
	(void)ep;
	while (sr->snd_una != sr->snd_nxt &&
	       bspe_spkt_of(sr, sr->snd_una)->state == BSPE_SPKT_FREE)
		sr->snd_una++;
}

void bspe_spkt_settle(struct bspe_ep *ep, struct bspe_chan *ch,
		      struct bspe_srail *sr, struct bspe_spkt *p, u64 now)
{
	p->state = BSPE_SPKT_FREE;
	sr->outstanding--;
	ep->outstanding--;
	sr->progress = now;
	bspe_msg_settle(ep, ch, p->mslot, now);
}

u32 bspe_ack_in(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail, u32 ack,
		u32 eoh, enum bspe_cause cause, u64 seen, u64 now)
{
	struct bspe_srail *sr = &ch->srail[rail];
	u32 s, sent = 0;

	/* Acknowledges something never sent: stale or bogus, ignore. */
	if (!bspe_seq_le(ack, sr->snd_nxt))
		return 0;
	if (bspe_seq_lt(ack, sr->snd_una))
		ack = sr->snd_una;
	if (bspe_seq_lt(eoh, ack))
		eoh = ack;
	if (!bspe_seq_le(eoh, sr->snd_nxt))
		eoh = sr->snd_nxt;
	for (s = sr->snd_una; bspe_seq_lt(s, ack); s++) {
		struct bspe_spkt *p = bspe_spkt_of(sr, s);

		if (p->state != BSPE_SPKT_OUT)
			continue;
		ch->st[rail].acked_piggy++;
		bspe_spkt_settle(ep, ch, sr, p, now);
		sr->probes = 0;
	}
	bspe_advance_una(ep, sr);
	if (sr->ackreq_pending && bspe_seq_lt(sr->ackreq_seq, ack))
		sr->ackreq_pending = 0;
	/*
	 * Hole filling: resend [ack, eoh); a packet resent before only on a
	 * report built after its resend arrived (@seen, bspe_emit_retx).
	 */
	for (s = ack; bspe_seq_lt(s, eoh); s++)
		sent += bspe_emit_retx(ep, ch, rail, s, cause, seen,
				       s + 1 == eoh, now);
	return sent;
}

/* Removes failover entries of messages settled by the epoch rule. */
static void bspe_foq_implicit(struct bspe_ep *ep, struct bspe_chan *ch,
			      u32 epoch, u64 now)
{
	u32 size = ch->fo_cap;
	u32 i, n = ch->fo_count, kept = 0;

	for (i = 0; i < n; i++) {
		struct bspe_fofrag f = ch->foq[(ch->fo_head + i) % size];
		struct bspe_smsg *m = ch->msgs[f.mslot];

		if (m->epoch < epoch - ((m->flags & BSPE_SEND_SYNC) ? 1 : 0)) {
			ch->st[0].acked_implicit++;
			bspe_msg_settle(ep, ch, f.mslot, now);
			continue;
		}
		ch->foq[(ch->fo_head + kept) % size] = f;
		kept++;
	}
	ep->fo_total -= n - kept;
	ch->fo_count = kept;
}

/*
 * Barrier (SYNC) packets settle one epoch later than the rest: a packet of
 * barrier e carries epoch e - 1 and is settled by evidence of epoch e + 1
 * (Documentation/protocol.rst, the coarse-grained rule).
 */
static u32 bspe_sync_lag(const struct bspe_spkt *p)
{
	return (p->flags & BSPE_SPKT_SYNC) ? 1 : 0;
}

/*
 * Settles by the epoch rule. Only channels with unsettled messages are
 * walked; settling may take @ch off that list, so the next is read first.
 */
void bspe_implicit(struct bspe_ep *ep, u32 epoch, u64 now)
{
	struct bspe_chan *ch, *next;
	u32 r, freed = 0;

	if (epoch <= ep->peer_epoch)
		return;
	ep->peer_epoch = epoch;
	for (ch = ep->lists[BSPE_L_SEND].first; ch; ch = next) {
		u32 settled = 0;

		next = ch->link[BSPE_L_SEND].next;
		ep->st.chan_visits++;
		if (!(ch->flags & BSPE_CHAN_GROUP))
			continue;
		for (r = 0; r < ep->cfg.nrails; r++) {
			struct bspe_srail *sr = &ch->srail[r];
			u32 s;

			for (s = sr->snd_una; s != sr->snd_nxt; s++) {
				struct bspe_spkt *p = bspe_spkt_of(sr, s);

				if (p->state != BSPE_SPKT_OUT ||
				    p->epoch >= epoch - bspe_sync_lag(p))
					continue;
				ch->st[r].acked_implicit++;
				bspe_spkt_settle(ep, ch, sr, p, now);
				settled++;
			}
			bspe_advance_una(ep, sr);
		}
		if (ch->fo_count)
			bspe_foq_implicit(ep, ch, epoch, now);
		/*
		 * Freed ring space: this channel may send more now (paced,
		 * every channel in submission order, once at the end).
		 */
		if (settled && ch->mcount) {
			if (ep->pace_bps)
				freed = 1;
			else
				bspe_push(ep, ch, now);
		}
	}
	if (freed)
		bspe_push_all(ep, now);
}

static void bspe_superstep_done_in(struct bspe_ep *ep, u32 epoch, u64 now)
{
	if (epoch <= ep->epoch)
		return;
	ep->epoch = epoch;
	ep->follow = 0;
	/*
	 * Our own barrier completion is the same evidence as a member's
	 * packet of this epoch (Documentation/protocol.rst).
	 */
	bspe_implicit(ep, epoch, now);
	bspe_push_all(ep, now);
	/* data of this superstep may have come before: guesses may be due */
	if (bspe_guess_due(ep))
		bspe_arm(ep, bspe_max64(bspe_guess_due(ep), now));
}

void bspe_superstep_done(struct bspe_ep *ep, u32 epoch, u64 now)
{
	bspe_enter(ep);
	bspe_superstep_done_in(ep, epoch, now);
	bspe_leave(ep);
}

void bspe_set_follow(struct bspe_ep *ep, int follow)
{
	bspe_enter(ep);
	ep->follow = follow ? 1 : 0;
	bspe_leave(ep);
}

/* No epoch of any group settles what @ch sent so far: only acks will. */
static void bspe_epoch_forget(struct bspe_ep *ep, struct bspe_chan *ch)
{
	u32 i, r, s;

	for (i = 0; i < ch->mcount; i++)
		ch->msgs[(ch->mhead + i) % ep->cfg.msg_wnd]->epoch = ~0u;
	for (r = 0; r < ep->cfg.nrails; r++) {
		struct bspe_srail *sr = &ch->srail[r];

		for (s = sr->snd_una; s != sr->snd_nxt; s++)
			bspe_spkt_of(sr, s)->epoch = ~0u;
	}
}

static void bspe_group_reset_in(struct bspe_ep *ep, u64 now)
{
	struct bspe_chan *ch;

	(void)now;
	ep->epoch = 0;
	ep->peer_epoch = 0;
	ep->data_epoch = 0;
	ep->guess_ep = 0;
	ep->guess_at = 0;
	for (ch = ep->lists[BSPE_L_OPEN].first; ch;
	     ch = ch->link[BSPE_L_OPEN].next) {
		ch->flags &= (u8)~BSPE_CHAN_GROUP;
		ch->data_epoch = 0;
		ch->data_pkts = 0;
		ch->guess = 0;
		memset(ch->dlv_epoch, 0, sizeof(ch->dlv_epoch));
		ch->peer_waits = 0;
		bspe_epoch_forget(ep, ch);
	}
}

void bspe_group_reset(struct bspe_ep *ep, u64 now)
{
	bspe_enter(ep);
	bspe_group_reset_in(ep, now);
	bspe_leave(ep);
}

/*
 * A probe (a timeout probe, a check, a tail-loss probe or a revival) left on
 * rail @sr at @now. Probes older than the timeout are forgotten first (the
 * probe or its answer was lost), and with them those not recorded. A probe
 * that finds the queue full (or probes not recorded before it) is counted,
 * not recorded: the answers come in the order of the probes, so the answer
 * to such a probe is matched to the newest probe recorded before it (a
 * lower bound of its own time, see bspe_probe_answered), never to a probe
 * sent after it.
 */
static void bspe_probe_sent(const struct bspe_ep *ep,
			    const struct bspe_chan *ch, struct bspe_srail *sr,
			    u64 now)
{
	u64 old = bspe_rto(ep, ch, 0);
	u8 i, n = 0;

	for (i = 0; i < sr->probe_qn; i++)
		if (sr->probe_q[i] + old > now)
			sr->probe_q[n++] = sr->probe_q[i];
	if (n < sr->probe_qn)
		sr->probe_more = 0;
	sr->probe_qn = n;
	if (n < BSPE_PROBE_Q && !sr->probe_more)
		sr->probe_q[sr->probe_qn++] = now;
	else if (sr->probe_more < 255)
		sr->probe_more++;
}

/*
 * An answer to a probe (REPLY|PROBE) arrived on @sr: it answers the oldest
 * probe still waiting (a rail is FIFO both ways). Returns when that probe
 * was sent, or a lower bound of it (a probe sent after the queue filled
 * takes the time of the newest one recorded before it), 0 if none is
 * recorded. A lost probe or answer only makes later matches older.
 */
u64 bspe_probe_answered(struct bspe_srail *sr)
{
	u64 t;
	u8 i;

	if (!sr->probe_qn) {
		if (sr->probe_more)
			sr->probe_more--;
		return 0;
	}
	t = sr->probe_q[0];
	for (i = 1; i < sr->probe_qn; i++)
		sr->probe_q[i - 1] = sr->probe_q[i];
	sr->probe_qn--;
	if (sr->probe_more) {
		sr->probe_q[sr->probe_qn] = sr->probe_qn ?
					    sr->probe_q[sr->probe_qn - 1] : t;
		sr->probe_qn++;
		sr->probe_more--;
	}
	return t;
}

void bspe_send_ctrl(struct bspe_ep *ep, struct bspe_chan *ch, u8 type,
		    u16 flags, u8 rail, u8 ack_rail, u64 now)
{
	struct bspe_xmit x;
	struct bspe_hdr *h = (struct bspe_hdr *)x.hdr;
	u32 i;

	if (ep->closed)
		return;
	/*
	 * Probes and their answers test the rail they are about, even one
	 * believed dead (that is how a suspected rail is found alive).
	 */
	if (!(ch->rail_up & (1u << rail)) &&
	    !(flags & (BSPE_F_PROBE | BSPE_F_REPLY))) {
		for (i = 0; i < ep->cfg.nrails; i++)
			if (ch->rail_up & (1u << i))
				break;
		if (i == ep->cfg.nrails) {
			ch->rrail[ack_rail].ack_due = 0;
			return;
		}
		rail = (u8)i;
	}
	if (type == BSPE_T_PROD) {
		ch->st[ack_rail].prods_tx++;
	} else if (bspe_asks_answer(flags)) {
		ch->st[rail].probes_tx++;
		bspe_probe_sent(ep, ch, &ch->srail[rail], now);
	} else {
		ch->st[ack_rail].acks_tx++;
	}
	bspe_build_hdr(ep, ch, h, type, flags, rail, ack_rail, now);
	x.node = ch->node;
	x.rail = rail;
	x.msg = NULL;
	x.off = 0;
	x.len = 0;
	ep->ops->xmit(ep->ctx, &x);
}

void bspe_acks_flush(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	u32 r;

	for (r = 0; r < ep->cfg.nrails; r++) {
		struct bspe_rrail *rr = &ch->rrail[r];

		if (rr->reply_now) {
			u16 f = BSPE_F_REPLY;

			if (rr->reply_now & BSPE_REPLY_PROBE)
				f |= BSPE_F_PROBE;
			if (ch->rx_blocked)
				f |= BSPE_F_BUSY;
			rr->reply_now = 0;
			bspe_send_ctrl(ep, ch, BSPE_T_ACK, f, (u8)r, (u8)r,
				       now);
		} else if (rr->ack_due && rr->ack_due <= now) {
			bspe_send_ctrl(ep, ch, BSPE_T_ACK, 0, (u8)r, (u8)r,
				       now);
		} else if (rr->hole_due && rr->hole_due <= now) {
			/* A hole hidden as too young: report it if it stayed. */
			rr->hole_due = bspe_hole_young(ch, rr, now);
			if (!rr->hole_due && bspe_rcv_hole(rr))
				bspe_send_ctrl(ep, ch, BSPE_T_ACK, 0, (u8)r,
					       (u8)r, now);
		}
	}
}

void bspe_close_notify(struct bspe_ep *ep, u64 now)
{
	struct bspe_chan *ch;
	u32 r;

	for (ch = ep->lists[BSPE_L_OPEN].first; ch;
	     ch = ch->link[BSPE_L_OPEN].next) {
		for (r = 0; r < ep->cfg.nrails; r++)
			if (ch->rail_up & (1u << r))
				bspe_send_ctrl(ep, ch, BSPE_T_ACK, BSPE_F_CLOSE,
					       (u8)r, (u8)r, now);
	}
	/* After the CLOSEs nothing more leaves the endpoint. */
	ep->closed = 1;
}
