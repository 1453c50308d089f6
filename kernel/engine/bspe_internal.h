/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private state of the AF_BSP protocol engine, shared by
 * the engine's .c files only. See Documentation/protocol.rst "Channel state".
 */
#ifndef _BSPE_INTERNAL_H
#define _BSPE_INTERNAL_H

#include "bspe.h"

/*
 * Sequence arithmetic modulo 2^32. BSPE_SEQ_FAR beyond a rail's rcv_nxt is
 * above every number a report of the rail can carry (at most a window
 * ahead, BSPE_MAX_WND) however far rcv_nxt then moves within a window.
 */
#define BSPE_SEQ_FAR	0x40000000u

static inline int bspe_seq_lt(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline int bspe_seq_le(u32 a, u32 b)
{
	return (s32)(a - b) <= 0;
}

static inline u64 bspe_max64(u64 a, u64 b)
{
	return a > b ? a : b;
}

static inline u64 bspe_min64(u64 a, u64 b)
{
	return a < b ? a : b;
}

/* Retransmission causes (index into the stats' retx_* counters). */
enum bspe_cause {
	BSPE_CAUSE_HOLE,
	BSPE_CAUSE_PROD,
	BSPE_CAUSE_TIMEOUT,
};

/* struct bspe_spkt.state */
#define BSPE_SPKT_FREE		0
#define BSPE_SPKT_OUT		1

/* struct bspe_spkt.flags */
#define BSPE_SPKT_SYNC		0x01	/* barrier traffic: implicit ack one epoch later */
#define BSPE_SPKT_LAST		0x02	/* carries LAST|ACKREQ */
#define BSPE_SPKT_FAILOVER	0x04	/* sent on this rail by failover */

/* Send ring descriptor: one outstanding DATA packet of a (channel, rail). */
struct bspe_spkt {
	u64	last_tx;	/* time of the last transmission */
	u32	frag;		/* fragment index in the message */
	u32	epoch;		/* epoch of the message */
	u16	mslot;		/* index of the message in the channel's ring */
	u8	state;		/* BSPE_SPKT_FREE or BSPE_SPKT_OUT */
	u8	ntx;		/* transmissions so far (saturating) */
	u8	flags;		/* BSPE_SPKT_* */
	u8	pad[7];
};

/* Outgoing message (sender side), in the channel's ring of msg_wnd. */
struct bspe_smsg {
	void	*cookie;
	u32	msg_id;
	u32	len;
	u32	nfrags;
	u32	epoch;
	u32	unsettled;	/* fragments not yet settled */
	u32	run_next[BSPE_MAX_RAILS];	/* next unsent fragment per rail */
	u32	run_end[BSPE_MAX_RAILS];	/* end of the rail's run */
	u32	order;		/* submission order over all channels */
	u16	flags;		/* BSPE_SEND_* */
	u8	active;
	u8	pad;
	/* the endpoint's FIFO of active messages in submission order */
	struct bspe_chan *ch;
	struct bspe_smsg *fprev, *fnext;
};

/* Failover queue entry: a fragment moved off a dead rail. */
struct bspe_fofrag {
	u32	frag;
	u16	mslot;
	u16	pad;
};

/*
 * Reassembly slot (receiver side): the channel's inline one (one bitmap
 * word) or an allocation of sizeof(struct bspe_rslot) + words * 8 bytes.
 */
struct bspe_rslot {
	u64	*bits;		/* fragment bitmap (@words words) */
	u32	msg_id;
	u32	len;
	u32	nfrags;
	u32	got;		/* fragments received */
	u16	unit;
	u16	flags;		/* header flags of the first fragment */
	u8	active;
	u8	pad;
	u16	words;		/* bitmap words at @bits */
	u32	epoch;		/* sender's epoch in the first fragment */
};

/*
 * Channel memory grows with what the channel holds (Documentation/
 * protocol.rst, "Channel memory and work"): what a channel holds in its
 * base allocation (bspe_chan_size()), the rest allocated through
 * ops->chan_alloc when needed and freed when no longer used.
 */
#define BSPE_RING_INLINE	1	/* send descriptors per rail, inline */
/*
 * bspe_chan.prod_pending: a prod round that is answered (or draws a
 * resend), or one for data merely expected, which the sender leaves
 * unanswered when it has nothing to tell (bspe_prod_wants_reply).
 */
#define BSPE_PROD_ASKED		1
#define BSPE_PROD_MUTE		2
/* bspe_srail.ackreq_pending: a request its receiver answers at once */
#define BSPE_ACKREQ_NOW		2
/*
 * Reordering allowance (bspe_reo_wnd): a quarter of the round-trip estimate
 * per step, 1 + bspe_chan.reo_steps steps, at most BSPE_REO_STEPS_MAX + 1
 * (the whole estimate); one step less after BSPE_REO_PERSIST real holes
 * filled without a spurious resend.
 */
#define BSPE_REO_STEPS_MAX	3
#define BSPE_REO_PERSIST	16
#define BSPE_FOQ_MIN		8	/* smallest failover queue allocation */
#define BSPE_PROBE_Q		2	/* probes awaiting an answer, per rail */

/* Per (channel, rail) send state. */
struct bspe_srail {
	struct bspe_spkt *ring;	/* @cap descriptors, index seq % cap */
	u32	cap;		/* BSPE_RING_INLINE .. snd_wnd */
	u32	snd_nxt;
	u32	snd_una;	/* lowest outstanding (wire field base) */
	u32	outstanding;	/* descriptors in state OUT */
	u32	ackreq_seq;	/* seq of the last ACKREQ packet */
	u64	ackreq_time;
	u64	probe_time;	/* last timeout probe */
	u64	chk_time;	/* unanswered check of a resend (0: none) */
	u64	progress;	/* last settle, or first send into an idle ring */
	u8	ackreq_pending;
	u8	ackreq_clean;	/* ACKREQ packet was a first transmission */
	u8	probes;		/* unanswered probes */
	u8	wndreq_on;	/* last WNDREQ packet (wndreq_seq): BSPE_WNDREQ_* */
	u8	probe_qn;	/* probes in @probe_q */
	u8	probe_more;	/* sent after @probe_q filled, not in it */
	u32	wndreq_seq;	/* seq of the last WNDREQ packet */
	/*
	 * When the probes whose answers are still to come were sent, oldest
	 * first: answers (REPLY|PROBE) come back in the order of the probes
	 * on a FIFO rail, so each is matched to the probe it answers.
	 */
	u64	probe_q[BSPE_PROBE_Q];
};

/* Descriptor of @seq, which must lie in [snd_una, snd_nxt). */
static inline struct bspe_spkt *bspe_spkt_of(const struct bspe_srail *sr,
					     u32 seq)
{
	return &sr->ring[seq % sr->cap];
}

/* struct bspe_srail.wndreq_on: the last WNDREQ packet's reason */
#define BSPE_WNDREQ_HALF	1	/* half the window outstanding */
#define BSPE_WNDREQ_TAIL	2	/* the end of such a stream */

/* Per (channel, rail) receive state. */
struct bspe_rrail {
	u64	*bits;		/* rcv_wnd bits, index seq % rcv_wnd */
	u64	ack_due;	/* explicit ack due at (0: none) */
	u64	hole_at;	/* the first hole is known since (Hole filling) */
	u64	ooo_at;		/* last out-of-order arrival */
	u64	hole_due;	/* report the hole hidden as too young at (0: none) */
	u32	rcv_nxt;
	u32	hint_nxt;	/* sender's snd_nxt learned from control packets */
	u32	since_ack;	/* packets arrived since the last ack of this rail */
	u32	ooo;		/* bits set above rcv_nxt */
	u32	eoh;		/* lowest set bit above rcv_nxt, valid if ooo */
	u32	refused;	/* first seq refused for memory, if rx_blocked */
	u8	ack_wanted;	/* an ack was requested and not yet given */
	u8	changed;	/* state changed since last reported */
	u8	reply_now;	/* BSPE_REPLY_*: a PROBE/PROD to answer at once */
	u8	synced;		/* a packet of this rail was accepted */
};

/*
 * bspe_rrail.reply_now: an answer (REPLY) is due at once; it answers a
 * sender's PROBE too (it is built after the probe arrived), so it carries
 * PROBE as well and the prober takes it as the answer to its probe, never
 * as an older answer to a prod of ours.
 */
#define BSPE_REPLY_DUE		0x01
#define BSPE_REPLY_PROBE	0x02

/* The rail has a hole: out-of-order arrivals, or a hint beyond rcv_nxt. */
static inline int bspe_rcv_hole(const struct bspe_rrail *rr)
{
	return rr->ooo || bspe_seq_lt(rr->rcv_nxt, rr->hint_nxt);
}

/* Lists of channels the engine walks (bspe_ep.lists[]). */
enum bspe_lists {
	BSPE_L_OPEN,	/* every open channel: rail events, stats, close */
	BSPE_L_SEND,	/* channels with messages not yet settled */
	BSPE_L_TIMER,	/* channels that may have a deadline */
	BSPE_L_IDLE,	/* channels by last activity, oldest first (eviction) */
	BSPE_L_TRIM,	/* channels that may hold memory they no longer use */
	BSPE_L_MAX,
};

struct bspe_link {
	struct bspe_chan *prev, *next;
};

struct bspe_list {
	struct bspe_chan *first, *last;
};

#define BSPE_NIL	0xffffu	/* end of a hash chain */

struct bspe_chan {
	void	*cookie;
	void	*priv;			/* caller's cfg.chan_priv bytes */
	struct bspe_link link[BSPE_L_MAX];
	u8	on[BSPE_L_MAX];		/* linked on lists[i] */
	u8	data_pkts;		/* non-SYNC DATA in data_epoch (to 2) */
	u16	idx;			/* index in the endpoint's table */
	u16	hnext;			/* next index in the hash chain */
	u16	pad1;
	u32	push_gen;		/* ordered push round that served it */
	/* msg_wnd outgoing messages, ring index (NULL: none there) */
	struct bspe_smsg **msgs;
	/* msg_wnd reassembly slots, msg_id % msg_wnd (NULL: none) */
	struct bspe_rslot **slots;
	struct bspe_smsg *m0;		/* the inline message */
	struct bspe_rslot *s0;		/* the inline slot (one word) */
	struct bspe_fofrag *foq;	/* fo_cap failover entries */
	struct bspe_srail *srail;	/* nrails, in the allocation */
	struct bspe_rrail *rrail;	/* nrails */
	struct bspe_stats *st;		/* nrails */
	u32	fo_cap;			/* >= fo_count + outstanding */
	u8	m0_used;		/* m0 is in msgs[] */
	u8	s0_used;		/* s0 is in slots[] */
	u8	restart_n;		/* announcements of the restart sent */
	u8	peer_knows;		/* the peer named my_inc (dst_inc) */
	u64	srtt;
	u64	last_rx;		/* last DATA accepted */
	u64	rx_gap;			/* smoothed DATA inter-arrival */
	u64	last_prod;
	u64	prod_tx;		/* last prod really sent */
	u64	prod_ivl;
	u64	prod_at;		/* a prod due earlier (0: none) */
	u64	down_since;		/* all rails dead since (0: not) */
	u32	node;
	u16	port;
	u8	used;
	u8	flags;			/* BSPE_CHAN_* */
	u32	snd_msg_id;		/* next msg_id to assign */
	u32	mhead;			/* oldest message ring index */
	u32	mcount;			/* messages in ring (head..head+count) */
	u32	rcv_next_msg;		/* next msg_id to deliver */
	u32	expect_until;		/* deliver up to this msg_id expected */
	u32	fo_head;
	u32	fo_count;
	u32	rx_active;		/* reassembly slots in use */
	u8	rail_up;		/* bitmask of live rails to the node */
	u8	ack_rr;			/* round-robin piggyback rail */
	u8	expecting;
	/* expected while streams followed counts: the channel's quiet counts */
	u8	expect_near;
	/* last prod round not answered yet: BSPE_PROD_ASKED or _MUTE */
	u8	prod_pending;
	u8	prod_rounds;		/* prod rounds since data last arrived */
	u8	tx_rr;
	u8	suspect;		/* rails the engine declared dead */
	u8	peer_closing;		/* rails a CLOSE of the peer came on */
	u8	push_done;		/* visited by the current ordered push */
	u8	reo_steps;		/* reordering allowance widened (bspe_reo_wnd) */
	u8	reo_fills;		/* real holes filled since it last changed */
	u32	peer_inc;		/* peer channel's incarnation, 0: unknown */
	u8	rx_blocked;		/* refused for lack of memory, not taken since */
	u8	evicting;		/* EVICT sent, no answer yet: sends held */
	u8	rtt_seen;		/* srtt follows a sample, not rtt_init */
	u8	guess;			/* guessed expectation: 1 on, 2 answered */
	/*
	 * epoch + 1 of a PROD of the peer that drew no resend: it waits for
	 * data of that superstep (0: none). The last packet of the data we
	 * send it in that superstep then asks for an answer at once.
	 */
	u32	peer_waits;
	u32	my_inc;			/* this channel's incarnation (src_inc) */
	/*
	 * my_inc before the sending side alone restarted, until the peer
	 * names the new one (0: none): its packets naming it are for our
	 * receiving side, which goes on (bspe_chan_restart).
	 */
	u32	prev_inc;
	u32	evict_nonce;		/* current (or last) eviction attempt */
	u32	evict_refused;		/* attempt of the peer we refused (KEEP) */
	u32	data_epoch;		/* epoch + 1 of the last non-SYNC DATA */
	/*
	 * Messages delivered per class (0: data, 1: SYNC) of the epoch
	 * dlv_epoch[class] - 1 (0: none yet), for bspe_expect() totals.
	 */
	u32	dlv_epoch[2];
	u32	dlv_count[2];
	u64	last_act;		/* last packet accepted or message sent */
	u64	evict_start;		/* first EVICT of the attempt */
	u64	evict_tx;		/* last EVICT of the attempt */
	/*
	 * Restarted after a failure (bspe_chan_restart) at restart_at, the
	 * peer not heard on the fresh channel yet (0: neither); the last
	 * announcement (a probe) went out at restart_tx.
	 */
	u64	restart_at;
	u64	restart_tx;
};

/* Tombstone of a peer endpoint whose CLOSE freed its channel. */
struct bspe_tomb {
	u64	until;		/* TIME-WAIT ends (0: free entry) */
	u32	node;
	u32	inc;
	u16	port;
	u8	pad[6];
};

#define BSPE_TOMBS	32	/* tombstone ring size */

struct bspe_ep {
	struct bspe_cfg cfg;
	const struct bspe_ops *ops;
	void	*ctx;
	struct bspe_chan **tab;		/* max_chans entries, NULL: free */
	u16	*free_idx;		/* stack of free table indices */
	u16	*bucket;		/* hash buckets: first index or NIL */
	struct bspe_list lists[BSPE_L_MAX];
	struct bspe_smsg *mfirst, *mlast; /* active messages, in order */
	/* the first of them that may have an unsent fragment */
	struct bspe_smsg *munsent;
	u64	hash_k0, hash_k1;	/* channel hash key (cfg.hash_key) */
	size_t	chan_size;		/* bytes of one channel's allocation */
	u32	nbuckets;		/* power of two */
	u32	nfree;
	u32	nopen;			/* open channels */
	u32	push_gen;
	struct bspe_stats st;		/* endpoint-level drops */
	u64	timer_at;		/* armed deadline, 0: none */
	u64	chan_due;		/* no channel deadline before (0: none) */
	u64	rate_start;		/* start of the rate window */
	u64	pace_bps;
	u64	pace_tokens;		/* bytes */
	u64	pace_last;
	u64	pace_wake;		/* blocked by pacing until (0: not) */
	u64	pace_fill_ns;		/* time to fill the burst at pace_bps */
	u64	last_rx_any;		/* last DATA accepted on any channel */
	u64	guess_walk;		/* last walk for guessed expectations */
	u64	guess_at;		/* a walk due (a member went past one packet) */
	u64	srtt;			/* round trip of all channels' samples */
	u32	epoch;
	u32	peer_epoch;		/* highest epoch seen from a member */
	u32	data_epoch;		/* highest data_epoch of any channel */
	u32	guess_ep;		/* data_epoch guess_at was set for */
	u32	outstanding;		/* descriptors OUT over all channels */
	u32	rx_reserved;		/* bytes reserved for reassembly */
	u32	ack_thresh;		/* n / (2p) */
	u32	rate_cur;
	u32	rate_prev;
	u32	rx_frag_words;		/* u64 words per reassembly bitmap */
	u32	rcv_words;		/* u64 words per rail receive bitmap */
	u32	nfrags_max;		/* fragments per message, receiver */
	u32	rx_hint;		/* channel of the last accepted packet */
	u32	send_order;		/* next bspe_smsg.order */
	u32	fo_total;		/* failover entries over all channels */
	u32	depth;			/* nested engine calls (bspe_trim) */
	u8	budget_blocked;		/* a channel waited for sndbuf_pkts */
	u8	closed;			/* bspe_close_notify() was called */
	u8	rx_blocked;		/* a channel refused for rcvbuf (own budget) */
	u8	follow;			/* streams follow counts (bspe_set_follow) */
	u32	tomb_next;		/* next tombstone ring entry to use */
	u32	inc_cur;		/* incarnation of channels opened now */
	u64	now_hint;		/* time of the latest call */
	struct bspe_tomb tombs[BSPE_TOMBS];
};

/*
 * A channel may have a deadline at @t: the timer walks the channels no
 * later than then (bspe_timer skips the walk before ep->chan_due).
 */
static inline void bspe_chan_due(struct bspe_ep *ep, u64 t)
{
	if (t && (!ep->chan_due || t < ep->chan_due))
		ep->chan_due = t;
}

/* Serial number arithmetic on incarnations (RFC 1982). */
static inline int bspe_inc_newer(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

/* bspe_ep.c */
struct bspe_chan *bspe_chan_get(struct bspe_ep *ep, int chan);
void bspe_list_add(struct bspe_ep *ep, struct bspe_chan *ch, int l);
void bspe_list_del(struct bspe_ep *ep, struct bspe_chan *ch, int l);
int bspe_chan_auto(struct bspe_ep *ep, u32 node, u16 port, u64 now);
void bspe_update_thresh(struct bspe_ep *ep);
u32 bspe_live_count(const struct bspe_chan *ch);

/* bspe_tx.c */
u8 bspe_short_rail(const struct bspe_ep *ep, const struct bspe_chan *ch);
int bspe_push(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
void bspe_kick(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
void bspe_push_all(struct bspe_ep *ep, u64 now);
int bspe_emit_retx(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail,
		   u32 seq, enum bspe_cause cause, u64 seen, int last, u64 now);
void bspe_build_hdr(struct bspe_ep *ep, struct bspe_chan *ch,
		    struct bspe_hdr *h, u8 type, u16 flags, u8 rail,
		    u8 ack_rail, u64 now);
void bspe_msg_settle(struct bspe_ep *ep, struct bspe_chan *ch, u16 mslot,
		     u64 now);
void bspe_msg_fail_all(struct bspe_ep *ep, struct bspe_chan *ch, int status);

/* bspe_ack.c */
u64 bspe_reo_wnd(const struct bspe_chan *ch);
void bspe_reo_resend_in(struct bspe_chan *ch, int spurious);
u64 bspe_hole_young(const struct bspe_chan *ch, const struct bspe_rrail *rr,
		    u64 now);
u32 bspe_rcv_eoh(const struct bspe_ep *ep, const struct bspe_chan *ch,
		 const struct bspe_rrail *rr, u64 now);
u32 bspe_ack_in(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail, u32 ack,
		u32 eoh, enum bspe_cause cause, u64 seen, u64 now);
void bspe_implicit(struct bspe_ep *ep, u32 epoch, u64 now);
void bspe_spkt_settle(struct bspe_ep *ep, struct bspe_chan *ch,
		      struct bspe_srail *sr, struct bspe_spkt *p, u64 now);
void bspe_advance_una(struct bspe_ep *ep, struct bspe_srail *sr);
void bspe_send_ctrl(struct bspe_ep *ep, struct bspe_chan *ch, u8 type,
		    u16 flags, u8 rail, u8 ack_rail, u64 now);
/* A probe (ACK with PROBE|ACKREQ) on @rail: its answer tells what arrived. */
static inline void bspe_send_probe(struct bspe_ep *ep, struct bspe_chan *ch,
				   u8 rail, u64 now)
{
	bspe_send_ctrl(ep, ch, BSPE_T_ACK, BSPE_F_PROBE | BSPE_F_ACKREQ, rail,
		       rail, now);
}

void bspe_acks_flush(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
u64 bspe_probe_answered(struct bspe_srail *sr);
void bspe_rtt_sample(struct bspe_ep *ep, struct bspe_chan *ch, u64 sample);
void bspe_rtt_adopt(const struct bspe_ep *ep, struct bspe_chan *ch);

/* bspe_timer.c */
void bspe_arm(struct bspe_ep *ep, u64 when);
void bspe_arm_chan(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
void bspe_guess_data(struct bspe_ep *ep, struct bspe_chan *ch, u32 epoch,
		     u64 now);
u64 bspe_guess_due(const struct bspe_ep *ep);
void bspe_rail_fail(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail,
		    u64 now);
u64 bspe_rto(const struct bspe_ep *ep, const struct bspe_chan *ch, u8 probes);

void bspe_rail_revive(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail,
		      u64 now);

/* bspe_ep.c */
int bspe_chan_reset(struct bspe_ep *ep, struct bspe_chan *ch, u32 peer_inc,
		    u64 now);
void bspe_inc_bump(struct bspe_ep *ep);
int bspe_chan_idle(const struct bspe_ep *ep, const struct bspe_chan *ch);
void bspe_touch(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
u64 bspe_evict_due(const struct bspe_ep *ep);
void bspe_evict_scan(struct bspe_ep *ep, u64 now);
void bspe_evict_free(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
int bspe_evict_renew(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
void bspe_chan_restart(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
void bspe_chan_reset_rx(struct bspe_ep *ep, struct bspe_chan *ch,
			u32 peer_inc);
u64 bspe_restart_due(const struct bspe_ep *ep, const struct bspe_chan *ch);
void bspe_restart_announce(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
void bspe_evict_send(struct bspe_ep *ep, struct bspe_chan *ch, u64 now);
void bspe_evict_raw(struct bspe_ep *ep, u32 node, u16 port, u8 rail,
		    u32 src_inc, u32 dst_inc, u32 nonce, u16 flags);

/* bspe_ep.c: channel memory beyond the base allocation */
int bspe_ring_grow(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail);
int bspe_foq_reserve(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail);
struct bspe_smsg *bspe_msg_get(struct bspe_ep *ep, struct bspe_chan *ch,
			       u32 s);
struct bspe_rslot *bspe_slot_get(struct bspe_ep *ep, struct bspe_chan *ch,
				 u32 s, u32 nfrags);
void bspe_trim_later(struct bspe_ep *ep, struct bspe_chan *ch);
void bspe_trim(struct bspe_ep *ep);

static inline void bspe_enter(struct bspe_ep *ep)
{
	ep->depth++;
}

/* Leaving the outermost engine call: give back what is no longer used. */
static inline void bspe_leave(struct bspe_ep *ep)
{
	if (!--ep->depth && ep->lists[BSPE_L_TRIM].first)
		bspe_trim(ep);
}

/* bspe_inc.c */
void bspe_tomb_add(struct bspe_ep *ep, const struct bspe_chan *ch, u64 now);
int bspe_tomb_stale(const struct bspe_ep *ep, u32 node, u16 port, u32 inc,
		    u64 now);

/* bspe_rx.c */
void bspe_slot_abort(struct bspe_ep *ep, struct bspe_chan *ch, u32 slot);
void bspe_rx_salvage(struct bspe_ep *ep, struct bspe_chan *ch);

#endif /* _BSPE_INTERNAL_H */
