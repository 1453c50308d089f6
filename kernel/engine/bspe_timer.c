// SPDX-License-Identifier: GPL-2.0
/*
 * Time-driven behaviour of the AF_BSP protocol engine:
 * the endpoint's single timer, delayed explicit acks, prods with
 * exponential back-off, the conservative sender timeout (probe), rail
 * failure with failover, and giving up on unreachable peers.
 */
#include "bspe_internal.h"

void bspe_arm(struct bspe_ep *ep, u64 when)
{
	if (!when)
		when = 1;
	if (ep->timer_at && ep->timer_at <= when)
		return;
	ep->timer_at = when;
	ep->ops->timer(ep->ctx, when);
}

u64 bspe_rto(const struct bspe_ep *ep, const struct bspe_chan *ch, u8 probes)
{
	u64 rto = bspe_max64(ep->cfg.rto_min_ns, 8 * ch->srtt);

	return rto << (probes < 6 ? probes : 6);
}

/*
 * Guessed expectations (Documentation/protocol.rst, "Prods"): a group
 * member that sent data (not barrier traffic) in the previous superstep, or
 * never sent data and was sent data in this one, and that sent nothing yet
 * in this one while other members did, most likely sends in this one too. Its first
 * message of a superstep (the messaging layer's count message) is expected
 * by nobody: when it is lost, its sender may be waiting for a count of its
 * own and send nothing after it, so only this receiver can find the loss.
 * Records the epoch of a DATA packet that is not barrier traffic.
 */
void bspe_guess_data(struct bspe_ep *ep, struct bspe_chan *ch, u32 epoch,
		     u64 now)
{
	u32 e = epoch + 1;

	if (!e)
		return;
	if (e > ch->data_epoch) {
		ch->data_epoch = e;
		ch->data_pkts = 0;
		ch->guess = 0;
	}
	if (e > ep->data_epoch)
		ep->data_epoch = e;
	if (e != ch->data_epoch || ch->data_pkts >= 2)
		return;
	/*
	 * A member past its first packet of this superstep (the messaging
	 * layer's count message) had every member's count: the others have
	 * sent theirs, to us too. Look for the missing ones a round trip on.
	 * Not when streams follow counts: its data came right behind its
	 * count, whatever the others' counts.
	 */
	if (++ch->data_pkts == 2 && e == ep->epoch + 1 && !ep->follow &&
	    ep->guess_ep != e) {
		ep->guess_ep = e;
		ep->guess_at = now + (ep->srtt ? ep->srtt : ep->cfg.rtt_init_ns);
	}
}

/* A prodded guess, not answered "nothing" yet. */
static int bspe_guessing(const struct bspe_ep *ep, const struct bspe_chan *ch)
{
	return ch->guess == 1 &&
	       (ch->data_epoch == ep->epoch || !ch->data_epoch);
}

/*
 * When to look for guessed expectations, once data of this superstep came
 * from some member: a round trip after a member sent more than one packet
 * of it (once a superstep), and after two round-trip estimates without
 * data (once per such quiet spell).
 */
u64 bspe_guess_due(const struct bspe_ep *ep)
{
	u64 rtt = ep->srtt ? ep->srtt : ep->cfg.rtt_init_ns, t = 0;

	if (!ep->epoch || ep->data_epoch != ep->epoch + 1)
		return 0;
	if (ep->last_rx_any && ep->guess_walk < ep->last_rx_any)
		t = ep->last_rx_any + 2 * rtt;
	if (ep->guess_at && ep->guess_ep == ep->data_epoch &&
	    (!t || ep->guess_at < t))
		t = ep->guess_at;
	return t;
}

/* Rails of @ch with a known hole. */
static u8 bspe_holes(const struct bspe_ep *ep, const struct bspe_chan *ch)
{
	u8 rails = 0;
	u32 r;

	for (r = 0; r < ep->cfg.nrails; r++) {
		const struct bspe_rrail *rr = &ch->rrail[r];

		if (rr->ooo || bspe_seq_lt(rr->rcv_nxt, rr->hint_nxt))
			rails |= (u8)(1u << r);
	}
	return rails;
}

/* Does the receiver side of @ch need data from the peer ([DHS99] 4.3)? */
static int bspe_needs_data(const struct bspe_ep *ep, const struct bspe_chan *ch,
			   u8 *rails)
{
	int need = ch->expecting || bspe_guessing(ep, ch);

	*rails = bspe_holes(ep, ch);
	/* A dead rail's holes are filled by failover on the others. */
	*rails &= ch->rail_up;
	if (*rails)
		return 1;
	if (ch->rx_active)
		need = 1;
	if (need)
		*rails = ch->rail_up;
	/* a guess is about a message not striped: its one rail */
	if (!ch->expecting && !ch->rx_active && need)
		*rails &= (u8)(1u << bspe_short_rail(ep, ch));
	/*
	 * Nothing in reassembly, no hole known: ask on the short rail, which
	 * carries every message not striped and a run of every striped one;
	 * every fourth round on every live rail (the peer may count other
	 * rails live, or have moved data off a failed one).
	 */
	if (ch->expecting && !ch->rx_active && (ch->prod_rounds & 3) != 3 &&
	    need &&
	    (*rails & (1u << bspe_short_rail(ep, ch))))
		*rails = (u8)(1u << bspe_short_rail(ep, ch));
	return need && *rails;
}

static u64 bspe_prod_due(const struct bspe_ep *ep, const struct bspe_chan *ch)
{
	u64 quiet = ch->last_rx, t, ivl;
	u32 r;
	u8 rails;

	/*
	 * Refused for lack of memory: the holes are our own refusals, a prod
	 * would only draw a resend refused again. bspe_rx_resume prods when
	 * there is room; the sender's timeout probes go on meanwhile.
	 */
	if (ch->rx_blocked || !bspe_needs_data(ep, ch, &rails))
		return 0;
	/*
	 * A known hole is certain loss: prod once the channel is quiet. So
	 * is a message partly received whose channel went quiet: a sender
	 * sends a message's fragments back to back, the rest of it is not
	 * queued behind other senders' data. Data merely expected may be
	 * (its sender serves other destinations first) while this endpoint
	 * is receiving: wait until the endpoint is quiet. Unless it was
	 * expected while streams followed counts (bspe_set_follow): then it
	 * left right behind the count message that announced it, which has
	 * arrived, and the channel's quiet is what counts.
	 */
	for (r = 0; r < ep->cfg.nrails && !ch->rx_active && !ch->expect_near;
	     r++)
		if (rails & (1u << r) && !ch->rrail[r].ooo &&
		    !bspe_seq_lt(ch->rrail[r].rcv_nxt, ch->rrail[r].hint_nxt))
			quiet = bspe_max64(quiet, ep->last_rx_any);
	/*
	 * A round for data merely expected, not answered yet, backs off as
	 * one answered "nothing" would have (bspe_send_prods doubles the
	 * interval): the sender does not answer it when it has nothing to
	 * tell. A round about a hole is answered, or draws a resend.
	 */
	ivl = ch->prod_pending == BSPE_PROD_MUTE ?
	      bspe_min64(2 * ch->prod_ivl, ep->cfg.prod_max_ns) : ch->prod_ivl;
	t = bspe_max64(quiet, ch->last_prod) + ivl;
	/* A tail the answer to a prod revealed (bspe_rx_ctrl): at once. */
	for (r = 0; ch->prod_at && ch->prod_at < t && r < ep->cfg.nrails; r++)
		if (rails & (1u << r) &&
		    bspe_seq_lt(ch->rrail[r].rcv_nxt, ch->rrail[r].hint_nxt))
			t = ch->prod_at;
	return t;
}

static u64 bspe_probe_due(const struct bspe_ep *ep, const struct bspe_chan *ch,
			  u32 r)
{
	const struct bspe_srail *sr = &ch->srail[r];

	if (!sr->outstanding || !(ch->rail_up & (1u << r)))
		return 0;
	return bspe_max64(sr->progress, sr->probe_time) +
	       bspe_rto(ep, ch, sr->probes);
}

/*
 * Tail loss probe (RFC 8985): a packet whose receiver acknowledges it at
 * once (barrier traffic sent as the last to its destination, the end of a
 * job) and whose acknowledgment is two round-trip estimates overdue was
 * lost, or its acknowledgment was. One check (a probe behind it, see
 * bspe_emit_retx) per transmission finds out which, not the timeout.
 */
static u64 bspe_tlp_due(const struct bspe_ep *ep, const struct bspe_chan *ch,
			u32 r)
{
	const struct bspe_srail *sr = &ch->srail[r];

	if (sr->ackreq_pending != BSPE_ACKREQ_NOW || sr->probes ||
	    sr->chk_time > sr->ackreq_time || !(ch->rail_up & (1u << r)))
		return 0;
	return sr->ackreq_time + 2 * ch->srtt + ep->cfg.ack_delay_ns;
}

/* Suspected rails are probed again, slowly, until one answers. */
static u64 bspe_revive_due(const struct bspe_ep *ep, const struct bspe_chan *ch,
			   u32 r)
{
	if (!(ch->suspect & (1u << r)))
		return 0;
	return ch->srail[r].probe_time + (bspe_rto(ep, ch, 0) << 3);
}

static u64 bspe_chan_deadline(const struct bspe_ep *ep,
			      const struct bspe_chan *ch)
{
	u64 t, best = 0;
	u32 r;

	for (r = 0; r < ep->cfg.nrails; r++) {
		t = ch->rrail[r].ack_due;
		if (t && (!best || t < best))
			best = t;
		t = ch->rrail[r].hole_due;
		if (t && (!best || t < best))
			best = t;
		t = bspe_probe_due(ep, ch, r);
		if (t && (!best || t < best))
			best = t;
		t = bspe_tlp_due(ep, ch, r);
		if (t && (!best || t < best))
			best = t;
		t = bspe_revive_due(ep, ch, r);
		if (t && (!best || t < best))
			best = t;
	}
	t = bspe_prod_due(ep, ch);
	if (t && (!best || t < best))
		best = t;
	if (!ch->rail_up && ch->mcount && ch->down_since) {
		t = ch->down_since + ep->cfg.unreach_ns;
		if (!best || t < best)
			best = t;
	}
	if (ch->evicting) {
		t = ch->evict_tx + bspe_rto(ep, ch, 0);
		if (!best || t < best)
			best = t;
	}
	t = bspe_restart_due(ep, ch);
	if (t && (!best || t < best))
		best = t;
	return best;
}

void bspe_arm_chan(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	u64 t = bspe_chan_deadline(ep, ch), g = bspe_guess_due(ep);

	/* The timer walks only channels that may have something due. */
	if (t)
		bspe_list_add(ep, ch, BSPE_L_TIMER);
	bspe_chan_due(ep, t);
	if (ep->pace_wake && (!t || ep->pace_wake < t))
		t = ep->pace_wake;
	if (g && (!t || g < t))
		t = g;
	if (t)
		bspe_arm(ep, bspe_max64(t, now));
}

void bspe_rail_fail(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail,
		    u64 now)
{
	struct bspe_srail *sr = &ch->srail[rail];
	struct bspe_rrail *rr = &ch->rrail[rail];
	u32 s;

	if (!(ch->rail_up & (1u << rail)))
		return;
	ch->rail_up &= (u8)~(1u << rail);
	ch->st[rail].rail_down++;
	/* Failover: outstanding packets go to the queue for live rails. */
	for (s = sr->snd_una; s != sr->snd_nxt; s++) {
		struct bspe_spkt *p = bspe_spkt_of(sr, s);
		struct bspe_fofrag *f;

		if (p->state != BSPE_SPKT_OUT)
			continue;
		/* room reserved when it was sent (bspe_foq_reserve) */
		f = &ch->foq[(ch->fo_head + ch->fo_count) % ch->fo_cap];
		f->frag = p->frag;
		f->mslot = p->mslot;
		ch->fo_count++;
		ep->fo_total++;
		p->state = BSPE_SPKT_FREE;
		sr->outstanding--;
		ep->outstanding--;
	}
	sr->snd_una = sr->snd_nxt;
	sr->probes = 0;
	sr->ackreq_pending = 0;
	rr->ack_due = 0;
	rr->reply_now = 0;
	if (!ch->rail_up)
		ch->down_since = now ? now : 1;
	bspe_kick(ep, ch, now);
}

static void bspe_rail_set_in(struct bspe_ep *ep, u32 node, u8 rail, int up,
			     u64 now)
{
	struct bspe_chan *ch;

	if (rail >= ep->cfg.nrails)
		return;
	for (ch = ep->lists[BSPE_L_OPEN].first; ch;
	     ch = ch->link[BSPE_L_OPEN].next) {
		if (ch->node != node)
			continue;
		if (!up) {
			bspe_rail_fail(ep, ch, rail, now);
		} else if (!(ch->rail_up & (1u << rail))) {
			ch->suspect &= (u8)~(1u << rail);
			ch->rail_up |= (u8)(1u << rail);
			ch->st[rail].rail_up++;
			ch->down_since = 0;
			ch->srail[rail].probes = 0;
			ch->srail[rail].progress = now;
			bspe_kick(ep, ch, now);
		}
		bspe_arm_chan(ep, ch, now);
	}
}

void bspe_rail_set(struct bspe_ep *ep, u32 node, u8 rail, int up, u64 now)
{
	bspe_enter(ep);
	bspe_rail_set_in(ep, node, rail, up, now);
	bspe_leave(ep);
}

/* Engine evidence: a rail of @ch's node stopped answering. */
static void bspe_node_suspect(struct bspe_ep *ep, u32 node, u8 rail, int on)
{
	struct bspe_chan *ch;

	for (ch = ep->lists[BSPE_L_OPEN].first; ch;
	     ch = ch->link[BSPE_L_OPEN].next) {
		if (ch->node != node)
			continue;
		if (on) {
			ch->suspect |= (u8)(1u << rail);
			bspe_list_add(ep, ch, BSPE_L_TIMER);	/* revive */
			bspe_chan_due(ep, 1);
		} else {
			ch->suspect &= (u8)~(1u << rail);
		}
	}
}

static void bspe_rail_suspect(struct bspe_ep *ep, struct bspe_chan *ch,
			      u8 rail, u64 now)
{
	u32 node = ch->node;

	bspe_rail_set(ep, node, rail, 0, now);
	bspe_node_suspect(ep, node, rail, 1);
	ch->srail[rail].probe_time = now;
	if (ep->ops->rail_event)
		ep->ops->rail_event(ep->ctx, node, rail, 0);
}

/* A probe on a rail the engine declared dead was answered on it. */
void bspe_rail_revive(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail,
		      u64 now)
{
	u32 node = ch->node;

	if (!(ch->suspect & (1u << rail)))
		return;
	bspe_rail_set(ep, node, rail, 1, now);
	if (ep->ops->rail_event)
		ep->ops->rail_event(ep->ctx, node, rail, 1);
}

static void bspe_send_prods(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	u8 rails;
	u32 r;
	u16 f;
	int merely, guess;

	if (!bspe_needs_data(ep, ch, &rails))
		return;
	/* nothing of it in reassembly, no hole known */
	merely = !ch->rx_active && !bspe_holes(ep, ch);
	guess = merely && !ch->expecting && bspe_guessing(ep, ch);
	/*
	 * A prod asks for an answer (ACKREQ) even if it is "nothing": that
	 * says a message partly received has no more (its rest is lost) or
	 * a hole was filled meanwhile. A prod for data merely expected or
	 * guessed (nothing of it in reassembly, no hole known) does not:
	 * its sender answers only if it has something to tell
	 * (bspe_prod_wants_reply); usually it has sent nothing yet. Without
	 * a round-trip sample every prod asks (the answer is one).
	 */
	f = (ch->expecting || guess) && merely &&
	    (ch->rtt_seen || ep->srtt) ? 0 : BSPE_F_ACKREQ;
	/*
	 * The previous prod got no answer: lost, or the sender had nothing
	 * to tell. Back off as after an answer "nothing".
	 */
	if (ch->prod_pending)
		ch->prod_ivl = bspe_min64(2 * ch->prod_ivl,
					  ep->cfg.prod_max_ns);
	for (r = 0; r < ep->cfg.nrails; r++)
		if (rails & (1u << r))
			bspe_send_ctrl(ep, ch, BSPE_T_PROD, f, (u8)r, (u8)r,
				       now);
	ch->last_prod = now;
	ch->prod_tx = now;
	ch->prod_pending = f ? BSPE_PROD_ASKED : BSPE_PROD_MUTE;
	/*
	 * A guess asked without an answer is asked once: a sender with
	 * packets we lack answers (the tail is then a known hole), one with
	 * nothing knows that we wait and covers its last packet to us by a
	 * tail loss probe (bspe_xmit_data).
	 */
	if (guess && !f)
		ch->guess = 2;
	ch->prod_at = 0;
	if (ch->prod_rounds < 255)
		ch->prod_rounds++;
}

static void bspe_chan_timer(struct bspe_ep *ep, struct bspe_chan *ch, u64 now)
{
	u64 t;
	u32 r;
	int late;

	if (!ch->rail_up && ch->mcount && ch->down_since &&
	    now - ch->down_since >= ep->cfg.unreach_ns) {
		bspe_msg_fail_all(ep, ch, -EHOSTUNREACH);
		bspe_chan_restart(ep, ch, now);
		return;
	}
	for (r = 0; r < ep->cfg.nrails; r++) {
		struct bspe_srail *sr = &ch->srail[r];

		t = bspe_probe_due(ep, ch, r);
		if (!t || t > now)
			continue;
		ch->st[r].timeouts++;
		/*
		 * A timeout that runs more than rto_min late says that this
		 * endpoint did not run (a stalled machine, a caller busy
		 * elsewhere): the answers to its probes may be waiting,
		 * unprocessed, behind this timer, and the time without
		 * progress counted its own absence. It probes, and the peer is
		 * judged afresh, from now: its unanswered probes and its time
		 * without progress start again (so neither verdict below can
		 * follow: rail_fail_probes is at least 1).
		 */
		late = now - t > ep->cfg.rto_min_ns;
		if (late) {
			sr->probes = 0;
			sr->progress = now;
		}
		if (sr->probes >= ep->cfg.rail_fail_probes &&
		    bspe_live_count(ch) > 1) {
			bspe_rail_suspect(ep, ch, (u8)r, now);
			continue;
		}
		if (sr->probes >= ep->cfg.rail_fail_probes &&
		    now - sr->progress >= ep->cfg.unreach_ns) {
			bspe_msg_fail_all(ep, ch, -EHOSTUNREACH);
			bspe_chan_restart(ep, ch, now);
			return;
		}
		if (sr->probes < 255 && !late)
			sr->probes++;
		sr->probe_time = now;
		bspe_send_probe(ep, ch, (u8)r, now);
	}
	for (r = 0; r < ep->cfg.nrails; r++) {
		t = bspe_tlp_due(ep, ch, r);
		if (t && t <= now) {
			ch->srail[r].chk_time = now;
			bspe_send_probe(ep, ch, (u8)r, now);
		}
	}
	for (r = 0; r < ep->cfg.nrails; r++) {
		t = bspe_revive_due(ep, ch, r);
		if (t && t <= now) {
			ch->srail[r].probe_time = now;
			bspe_send_probe(ep, ch, (u8)r, now);
		}
	}
	t = bspe_prod_due(ep, ch);
	if (t && t <= now)
		bspe_send_prods(ep, ch, now);
	t = bspe_restart_due(ep, ch);
	if (t && t <= now)
		bspe_restart_announce(ep, ch, now);
	bspe_acks_flush(ep, ch, now);
	if (ch->evicting && now - ch->evict_tx >= bspe_rto(ep, ch, 0))
		bspe_evict_send(ep, ch, now);
}

/* @ch holds a message of this superstep that is not barrier traffic. */
static int bspe_sent_data(const struct bspe_ep *ep, const struct bspe_chan *ch)
{
	u32 i;

	for (i = 0; i < ch->mcount; i++) {
		const struct bspe_smsg *m =
			ch->msgs[(ch->mhead + i) % ep->cfg.msg_wnd];

		if (m->epoch == ep->epoch && !(m->flags & BSPE_SEND_SYNC))
			return 1;
	}
	return 0;
}

/*
 * Prods, on the rail of its short messages, every group channel whose peer
 * sent data in the previous superstep and nothing yet in this one, at most
 * once per channel and superstep, and, while no channel expects data, every
 * one whose peer never sent data and holds data of ours of this superstep,
 * once until the peer sends data (a prod that asks for no answer, or an
 * answer "nothing", ends the guess; an answer that shows a lost tail leaves
 * a known hole, prodded for as usual). A walk over the open channels, only
 * in the middle of a superstep.
 */
static void bspe_guess_walk(struct bspe_ep *ep, u64 now)
{
	struct bspe_chan *ch;
	int idle = 1;

	ep->guess_walk = now;
	ep->guess_at = 0;
	/* peers that never sent data: only while nothing is expected */
	for (ch = ep->lists[BSPE_L_OPEN].first; ch && idle;
	     ch = ch->link[BSPE_L_OPEN].next)
		if (ch->expecting)
			idle = 0;
	for (ch = ep->lists[BSPE_L_OPEN].first; ch;
	     ch = ch->link[BSPE_L_OPEN].next) {
		ep->st.chan_visits++;
		/* data told expected (bspe_expect) is prodded for as such */
		if (!(ch->flags & BSPE_CHAN_GROUP) || !ch->rail_up ||
		    ch->expecting || ch->rx_blocked ||
		    (ch->guess && (ch->data_epoch == ep->epoch ||
				   !ch->data_epoch)) ||
		    (ch->data_epoch != ep->epoch &&
		     (ch->data_epoch || !idle || !bspe_sent_data(ep, ch))))
			continue;
		ch->guess = 1;
		bspe_send_prods(ep, ch, now);
		bspe_arm_chan(ep, ch, now);
	}
}

/*
 * An EVICT unanswered for unreach_ns: the peer is gone. The held messages
 * fail like those of any unreachable peer, and the channel is freed.
 */
static int bspe_evict_give_up(struct bspe_ep *ep, struct bspe_chan *ch,
			      u64 now)
{
	if (!ch->evicting || now - ch->evict_start < ep->cfg.unreach_ns)
		return 0;
	bspe_msg_fail_all(ep, ch, -EHOSTUNREACH);
	bspe_evict_free(ep, ch, now);
	return 1;
}

/*
 * Walks the channels that may have a deadline (linked by bspe_arm_chan,
 * by a packet sent and by a rail suspected), not the whole table; one
 * found without any leaves the list. Channels linked during the walk (a
 * rail declared dead re-arms every channel to its node) are walked too.
 * The walk happens only when a channel deadline may be due (chan_due): a
 * pacing release alone sends the next packets without visiting channels
 * that merely wait for their acknowledgements.
 */
static void bspe_timer_in(struct bspe_ep *ep, u64 now)
{
	struct bspe_chan *ch, *next;
	u64 best = 0, t;

	ep->timer_at = 0;
	ep->now_hint = now;
	t = bspe_evict_due(ep);
	if (t && t <= now)
		bspe_evict_scan(ep, now);
	if (ep->pace_wake && ep->pace_wake <= now) {
		ep->pace_wake = 0;
		bspe_push_all(ep, now);
	}
	t = bspe_guess_due(ep);
	if (t && t <= now)
		bspe_guess_walk(ep, now);
	if (ep->chan_due && ep->chan_due <= now) {
		ep->chan_due = 0;
		for (ch = ep->lists[BSPE_L_TIMER].first; ch; ch = next) {
			ep->st.chan_visits++;
			next = ch->link[BSPE_L_TIMER].next;
			/* freeing @ch unlinks @ch only */
			if (bspe_evict_give_up(ep, ch, now))
				continue;
			bspe_chan_timer(ep, ch, now);
			next = ch->link[BSPE_L_TIMER].next;
			t = bspe_chan_deadline(ep, ch);
			if (!t)
				bspe_list_del(ep, ch, BSPE_L_TIMER);
			else if (!best || t < best)
				best = t;
		}
		bspe_chan_due(ep, best);
	}
	best = ep->chan_due;
	if (ep->pace_wake && (!best || ep->pace_wake < best))
		best = ep->pace_wake;
	t = bspe_evict_due(ep);
	if (t && (!best || t < best))
		best = t;
	t = bspe_guess_due(ep);
	if (t && (!best || t < best))
		best = t;
	if (best)
		bspe_arm(ep, bspe_max64(best, now + 1));
}

void bspe_timer(struct bspe_ep *ep, u64 now)
{
	bspe_enter(ep);
	bspe_timer_in(ep, now);
	bspe_leave(ep);
}
