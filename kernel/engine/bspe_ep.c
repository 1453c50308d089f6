// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoint life cycle of the AF_BSP protocol engine:
 * configuration, memory layout, channel table, statistics.
 */
#include "bspe_internal.h"

void bspe_cfg_default(struct bspe_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nrails = 1;
	cfg->max_chans = 64;
	cfg->frag_size = 1500 - BSPE_HDR_LEN;
	cfg->snd_wnd = 256;
	cfg->rcv_wnd = 256;
	cfg->msg_wnd = 32;
	cfg->rail_fail_probes = 3;
	cfg->max_msg = 1 << 20;
	cfg->sndbuf_pkts = 1024;
	cfg->rcvbuf = 4 << 20;
	cfg->nprocs = 2;
	cfg->rtt_init_ns = 1000000;
	cfg->rtt_min_ns = 10000;
	cfg->rtt_max_ns = 100000000;
	cfg->rto_min_ns = 200000000;
	cfg->prod_max_ns = 1000000000;
	cfg->ack_delay_ns = 0;
	cfg->unreach_ns = 10000000000ULL;
	cfg->timewait_ns = 60000000000ULL;
	cfg->incarnation = 1;
}

int bspe_cfg_check(const struct bspe_cfg *cfg)
{
	if (!cfg->nrails || cfg->nrails > BSPE_MAX_RAILS)
		return -EINVAL;
	if (!cfg->max_chans || !cfg->frag_size || !cfg->incarnation)
		return -EINVAL;
	if (cfg->snd_wnd < 2 || cfg->snd_wnd > BSPE_MAX_WND)
		return -EINVAL;
	if (cfg->rcv_wnd < 2 || cfg->rcv_wnd > BSPE_MAX_WND)
		return -EINVAL;
	if (!cfg->msg_wnd || cfg->msg_wnd > BSPE_MAX_MSG_WND)
		return -EINVAL;
	if (cfg->max_msg / cfg->frag_size >= BSPE_MAX_FRAGS)
		return -EINVAL;
	if (!cfg->sndbuf_pkts || !cfg->rcvbuf || !cfg->nprocs)
		return -EINVAL;
	if (cfg->chan_priv > 65536)
		return -EINVAL;
	if (!cfg->rtt_init_ns || !cfg->rtt_min_ns ||
	    cfg->rtt_min_ns > cfg->rtt_max_ns || !cfg->rto_min_ns ||
	    !cfg->prod_max_ns || !cfg->rail_fail_probes)
		return -EINVAL;
	return 0;
}

static size_t bspe_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Sizes of the parts of a channel's base allocation, in bytes. */
struct bspe_layout {
	size_t	rails;		/* srail, rrail and stats of every rail */
	size_t	rbits;		/* one rrail bitmap */
	size_t	ring0;		/* one rail's inline send descriptors */
	size_t	tab;		/* the msgs or the slots pointer table */
	size_t	m0;		/* the inline message */
	size_t	s0;		/* the inline slot and its bitmap word */
	size_t	foq0;		/* the inline failover queue */
	size_t	sbits;		/* largest reassembly bitmap */
	size_t	chan;		/* one channel's whole base allocation */
	u32	nbuckets;
};

static u32 bspe_nfrags_max(const struct bspe_cfg *cfg)
{
	return cfg->max_msg / cfg->frag_size + 1;
}

static void bspe_layout_of(const struct bspe_cfg *cfg, struct bspe_layout *l)
{
	l->rails = cfg->nrails * (bspe_align8(sizeof(struct bspe_srail)) +
				  bspe_align8(sizeof(struct bspe_rrail)) +
				  bspe_align8(sizeof(struct bspe_stats)));
	l->rbits = bspe_align8(((size_t)cfg->rcv_wnd + 63) / 64 * 8);
	l->ring0 = bspe_align8(sizeof(struct bspe_spkt) * BSPE_RING_INLINE);
	l->tab = bspe_align8(sizeof(void *) * cfg->msg_wnd);
	l->m0 = bspe_align8(sizeof(struct bspe_smsg));
	l->s0 = bspe_align8(sizeof(struct bspe_rslot)) + 8;
	l->foq0 = bspe_align8(sizeof(struct bspe_fofrag) * cfg->nrails *
			      BSPE_RING_INLINE);
	l->sbits = ((size_t)bspe_nfrags_max(cfg) + 63) / 64 * 8;
	l->chan = bspe_align8(sizeof(struct bspe_chan)) + l->rails +
		  cfg->nrails * (l->rbits + l->ring0) + 2 * l->tab + l->m0 +
		  l->s0 + l->foq0 + bspe_align8(cfg->chan_priv);
	l->nbuckets = 1;
	while (l->nbuckets < cfg->max_chans)
		l->nbuckets <<= 1;
}

/* The endpoint's fixed part: struct, table, free list, buckets. */
static size_t bspe_fixed_size(const struct bspe_cfg *cfg,
			      const struct bspe_layout *l)
{
	return bspe_align8(sizeof(struct bspe_ep)) +
	       bspe_align8(sizeof(struct bspe_chan *) * cfg->max_chans) +
	       bspe_align8(sizeof(u16) * cfg->max_chans) +
	       bspe_align8(sizeof(u16) * l->nbuckets);
}

size_t bspe_mem_size(const struct bspe_cfg *cfg)
{
	struct bspe_layout l;

	if (bspe_cfg_check(cfg))
		return 0;
	bspe_layout_of(cfg, &l);
	return bspe_fixed_size(cfg, &l);
}

size_t bspe_chan_size(const struct bspe_cfg *cfg)
{
	struct bspe_layout l;

	if (bspe_cfg_check(cfg))
		return 0;
	bspe_layout_of(cfg, &l);
	return l.chan;
}

/*
 * The fine-grained rule acknowledges after n / (2p) packets: the buffers
 * are shared by the peers that may have packets in flight at once. Those
 * are the processes this endpoint has channels with (channels open when a
 * process first sends or receives), not every process of the group: p is
 * min(nprocs, open channels + 1), so that a process talking to 8 others
 * of 1024 acknowledges as rarely as in a group of 9.
 */
void bspe_update_thresh(struct bspe_ep *ep)
{
	u32 n = ep->cfg.sndbuf_pkts + ep->cfg.rcvbuf / ep->cfg.frag_size;
	u32 p = ep->nopen + 1 < ep->cfg.nprocs ? ep->nopen + 1 :
		ep->cfg.nprocs;
	u32 t = n / (2 * p);

	ep->ack_thresh = t ? t : 1;
}

/* Points a fresh channel's arrays into its allocation. */
static void bspe_chan_wire(struct bspe_ep *ep, struct bspe_chan *ch,
			   const struct bspe_layout *l)
{
	u8 *p = (u8 *)ch + bspe_align8(sizeof(*ch));
	u32 i, n = ep->cfg.nrails;

	ch->srail = (struct bspe_srail *)p;
	p += n * bspe_align8(sizeof(struct bspe_srail));
	ch->rrail = (struct bspe_rrail *)p;
	p += n * bspe_align8(sizeof(struct bspe_rrail));
	ch->st = (struct bspe_stats *)p;
	p += n * bspe_align8(sizeof(struct bspe_stats));
	for (i = 0; i < n; i++) {
		ch->srail[i].ring = (struct bspe_spkt *)p;
		ch->srail[i].cap = BSPE_RING_INLINE;
		p += l->ring0;
		ch->rrail[i].bits = (u64 *)p;
		p += l->rbits;
	}
	ch->msgs = (struct bspe_smsg **)p;
	p += l->tab;
	ch->slots = (struct bspe_rslot **)p;
	p += l->tab;
	ch->m0 = (struct bspe_smsg *)p;
	p += l->m0;
	ch->s0 = (struct bspe_rslot *)p;
	ch->s0->bits = (u64 *)(p + bspe_align8(sizeof(struct bspe_rslot)));
	ch->s0->words = 1;
	p += l->s0;
	ch->foq = (struct bspe_fofrag *)p;
	ch->fo_cap = n * BSPE_RING_INLINE;
	p += l->foq0;
	ch->priv = ep->cfg.chan_priv ? p : NULL;
}

/* The inline send descriptors of (@ch, @r), in its base allocation. */
static struct bspe_spkt *bspe_ring0(const struct bspe_ep *ep,
				    const struct bspe_chan *ch, u32 r)
{
	struct bspe_layout l;

	bspe_layout_of(&ep->cfg, &l);
	return (struct bspe_spkt *)((u8 *)ch + bspe_align8(sizeof(*ch)) +
				    l.rails + r * (l.ring0 + l.rbits));
}

/* The inline failover queue of @ch, after its inline slot. */
static struct bspe_fofrag *bspe_foq0(const struct bspe_chan *ch)
{
	return (struct bspe_fofrag *)((u8 *)ch->s0 +
				      bspe_align8(sizeof(struct bspe_rslot)) +
				      8);
}

/*
 * The send ring of (@ch, @rail) is full: double it, up to snd_wnd. Every
 * outstanding descriptor moves to its index in the new ring. Returns 0,
 * or -ENOMEM (counted; the rail sends again once something settles).
 */
int bspe_ring_grow(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail)
{
	struct bspe_srail *sr = &ch->srail[rail];
	u32 cap = sr->cap * 2 < ep->cfg.snd_wnd ? sr->cap * 2 :
		  ep->cfg.snd_wnd;
	struct bspe_spkt *ring;
	u32 s;

	if (cap <= sr->cap)
		return -ENOSPC;
	ring = ep->ops->chan_alloc(ep->ctx, sizeof(*ring) * cap);
	if (!ring) {
		ch->st[rail].grow_nomem++;
		return -ENOMEM;
	}
	memset(ring, 0, sizeof(*ring) * cap);
	for (s = sr->snd_una; s != sr->snd_nxt; s++)
		ring[s % cap] = sr->ring[s % sr->cap];
	if (sr->ring != bspe_ring0(ep, ch, rail))
		ep->ops->chan_free(ep->ctx, sr->ring,
				   sizeof(*ring) * sr->cap);
	sr->ring = ring;
	sr->cap = cap;
	return 0;
}

static u32 bspe_chan_outstanding(const struct bspe_ep *ep,
				 const struct bspe_chan *ch)
{
	u32 r, n = 0;

	for (r = 0; r < ep->cfg.nrails; r++)
		n += ch->srail[r].outstanding;
	return n;
}

/*
 * The failover queue can always take every outstanding packet of the
 * channel, so a rail failure allocates nothing: before a new packet goes
 * out (the next from the queue itself, or else one more outstanding),
 * make room for it. Returns 0 or -ENOMEM (counted; the channel has
 * packets outstanding then, whose settling sends again).
 */
int bspe_foq_reserve(struct bspe_ep *ep, struct bspe_chan *ch, u8 rail)
{
	u32 need = ch->fo_count + bspe_chan_outstanding(ep, ch) +
		   (ch->fo_count ? 0 : 1);
	u32 max = ep->cfg.snd_wnd * ep->cfg.nrails, cap, i;
	struct bspe_fofrag *q;

	if (need <= ch->fo_cap)
		return 0;
	cap = ch->fo_cap < BSPE_FOQ_MIN ? BSPE_FOQ_MIN : ch->fo_cap;
	while (cap < need)
		cap *= 2;
	if (cap > max)
		cap = max;
	if (cap < need)
		return -ENOSPC;
	q = ep->ops->chan_alloc(ep->ctx, sizeof(*q) * cap);
	if (!q) {
		ch->st[rail].grow_nomem++;
		return -ENOMEM;
	}
	for (i = 0; i < ch->fo_count; i++)
		q[i] = ch->foq[(ch->fo_head + i) % ch->fo_cap];
	if (ch->foq != bspe_foq0(ch))
		ep->ops->chan_free(ep->ctx, ch->foq,
				   sizeof(*q) * ch->fo_cap);
	ch->foq = q;
	ch->fo_cap = cap;
	ch->fo_head = 0;
	return 0;
}

/*
 * Memory for the message in ring index @s (about to be used): the one it
 * held last, else the inline message, else an allocation. NULL: none
 * (counted); the send waits for a completion of the channel.
 */
struct bspe_smsg *bspe_msg_get(struct bspe_ep *ep, struct bspe_chan *ch,
			       u32 s)
{
	struct bspe_smsg *m = ch->msgs[s];
	u32 i, w = ep->cfg.msg_wnd;

	if (m)
		return m;
	if (ch->m0_used) {
		/* the inline message may be left over in a free index */
		for (i = ch->mcount; i < w; i++) {
			u32 j = (ch->mhead + i) % w;

			if (ch->msgs[j] == ch->m0) {
				ch->msgs[j] = NULL;
				ch->m0_used = 0;
				break;
			}
		}
	}
	if (!ch->m0_used) {
		ch->m0_used = 1;
		m = ch->m0;
	} else {
		m = ep->ops->chan_alloc(ep->ctx, sizeof(*m));
		if (!m) {
			ch->st[0].grow_nomem++;
			return NULL;
		}
	}
	ch->msgs[s] = m;
	return m;
}

static size_t bspe_slot_bytes(const struct bspe_rslot *sl)
{
	return bspe_align8(sizeof(*sl)) + (size_t)sl->words * 8;
}

static void bspe_slot_put(struct bspe_ep *ep, struct bspe_chan *ch, u32 s)
{
	struct bspe_rslot *sl = ch->slots[s];

	ch->slots[s] = NULL;
	if (sl == ch->s0)
		ch->s0_used = 0;
	else
		ep->ops->chan_free(ep->ctx, sl, bspe_slot_bytes(sl));
}

/*
 * A reassembly slot for index @s (inactive) able to hold a bitmap of
 * @nfrags fragments: the one it held last if large enough, else the
 * inline slot (one word), else an allocation. NULL: none (counted).
 */
struct bspe_rslot *bspe_slot_get(struct bspe_ep *ep, struct bspe_chan *ch,
				 u32 s, u32 nfrags)
{
	u32 words = (nfrags + 63) / 64, i;
	struct bspe_rslot *sl = ch->slots[s];

	if (sl && sl->words >= words)
		return sl;
	if (sl)
		bspe_slot_put(ep, ch, s);
	if (words == 1 && ch->s0_used) {
		/* the inline slot may be left over, inactive, elsewhere */
		for (i = 0; i < ep->cfg.msg_wnd; i++) {
			if (ch->slots[i] == ch->s0 && !ch->s0->active) {
				ch->slots[i] = NULL;
				ch->s0_used = 0;
				break;
			}
		}
	}
	if (words == 1 && !ch->s0_used) {
		ch->s0_used = 1;
		sl = ch->s0;
	} else {
		sl = ep->ops->chan_alloc(ep->ctx, bspe_align8(sizeof(*sl)) +
					 (size_t)words * 8);
		if (!sl) {
			ch->st[0].grow_nomem++;
			return NULL;
		}
		memset(sl, 0, sizeof(*sl));
		sl->bits = (u64 *)((u8 *)sl + bspe_align8(sizeof(*sl)));
		sl->words = (u16)words;
	}
	ch->slots[s] = sl;
	return sl;
}

/* @ch may hold memory it no longer uses: bspe_trim looks at it. */
void bspe_trim_later(struct bspe_ep *ep, struct bspe_chan *ch)
{
	bspe_list_add(ep, ch, BSPE_L_TRIM);
}

/*
 * Gives back what @ch holds beyond its base allocation and does not use
 * (@all: everything, the channel closes). Runs only between engine calls
 * (bspe_leave), never while a caller up the stack may hold a pointer to a
 * ring, a message or a slot.
 */
static void bspe_chan_trim(struct bspe_ep *ep, struct bspe_chan *ch, int all)
{
	u32 i, r, w = ep->cfg.msg_wnd;

	for (r = 0; r < ep->cfg.nrails; r++) {
		struct bspe_srail *sr = &ch->srail[r];

		if (sr->ring == bspe_ring0(ep, ch, r) ||
		    (!all && sr->snd_una != sr->snd_nxt))
			continue;
		ep->ops->chan_free(ep->ctx, sr->ring,
				   sizeof(*sr->ring) * sr->cap);
		sr->ring = bspe_ring0(ep, ch, r);
		sr->cap = BSPE_RING_INLINE;
		memset(sr->ring, 0, sizeof(*sr->ring) * BSPE_RING_INLINE);
	}
	if (ch->foq != bspe_foq0(ch) &&
	    (all || (!ch->fo_count && !bspe_chan_outstanding(ep, ch)))) {
		ep->ops->chan_free(ep->ctx, ch->foq,
				   sizeof(*ch->foq) * ch->fo_cap);
		ch->foq = bspe_foq0(ch);
		ch->fo_cap = ep->cfg.nrails * BSPE_RING_INLINE;
		ch->fo_head = 0;
	}
	for (i = all ? 0 : ch->mcount; i < w; i++) {
		u32 j = (ch->mhead + i) % w;
		struct bspe_smsg *m = ch->msgs[j];

		if (!m)
			continue;
		ch->msgs[j] = NULL;
		if (m == ch->m0)
			ch->m0_used = 0;
		else
			ep->ops->chan_free(ep->ctx, m, sizeof(*m));
	}
	for (i = 0; i < w; i++)
		if (ch->slots[i] && (all || !ch->slots[i]->active))
			bspe_slot_put(ep, ch, i);
}

void bspe_trim(struct bspe_ep *ep)
{
	struct bspe_chan *ch;

	while ((ch = ep->lists[BSPE_L_TRIM].first)) {
		bspe_list_del(ep, ch, BSPE_L_TRIM);
		bspe_chan_trim(ep, ch, 0);
	}
}

struct bspe_ep *bspe_init(void *mem, size_t size, const struct bspe_cfg *cfg,
			  const struct bspe_ops *ops, void *ctx)
{
	struct bspe_layout l;
	struct bspe_ep *ep;
	size_t need;
	u8 *p;
	u32 i;

	need = bspe_mem_size(cfg);
	if (!need || size < need || !mem || ((unsigned long)mem & 7))
		return NULL;
	if (!ops || !ops->xmit || !ops->rx_data || !ops->deliver ||
	    !ops->complete || !ops->timer || !ops->chan_alloc ||
	    !ops->chan_free)
		return NULL;
	memset(mem, 0, need);
	bspe_layout_of(cfg, &l);
	ep = mem;
	ep->cfg = *cfg;
	ep->ops = ops;
	ep->ctx = ctx;
	ep->rx_frag_words = (u32)(l.sbits / 8);
	ep->rcv_words = (u32)(l.rbits / 8);
	ep->nfrags_max = bspe_nfrags_max(cfg);
	ep->chan_size = l.chan;
	ep->nbuckets = l.nbuckets;
	ep->hash_k0 = cfg->hash_key[0];
	ep->hash_k1 = cfg->hash_key[1];
	p = (u8 *)mem + bspe_align8(sizeof(*ep));
	ep->tab = (struct bspe_chan **)p;
	p += bspe_align8(sizeof(struct bspe_chan *) * cfg->max_chans);
	ep->free_idx = (u16 *)p;
	p += bspe_align8(sizeof(u16) * cfg->max_chans);
	ep->bucket = (u16 *)p;
	for (i = 0; i < cfg->max_chans; i++)
		ep->free_idx[i] = (u16)(cfg->max_chans - 1 - i);
	ep->nfree = cfg->max_chans;
	ep->inc_cur = cfg->incarnation;
	for (i = 0; i < l.nbuckets; i++)
		ep->bucket[i] = BSPE_NIL;
	bspe_update_thresh(ep);
	return ep;
}

const struct bspe_cfg *bspe_get_cfg(const struct bspe_ep *ep)
{
	return &ep->cfg;
}

struct bspe_chan *bspe_chan_get(struct bspe_ep *ep, int chan)
{
	if (chan < 0 || chan >= ep->cfg.max_chans)
		return NULL;
	return ep->tab[chan];
}

void *bspe_chan_priv(const struct bspe_ep *ep, int chan)
{
	if (chan < 0 || chan >= ep->cfg.max_chans || !ep->tab[chan])
		return NULL;
	return ep->tab[chan]->priv;
}

u32 bspe_chan_count(const struct bspe_ep *ep)
{
	return ep->nopen;
}

void bspe_list_add(struct bspe_ep *ep, struct bspe_chan *ch, int l)
{
	struct bspe_list *li = &ep->lists[l];
	struct bspe_link *k = &ch->link[l];

	if (ch->on[l])
		return;
	ch->on[l] = 1;
	k->next = NULL;
	k->prev = li->last;
	if (li->last)
		li->last->link[l].next = ch;
	else
		li->first = ch;
	li->last = ch;
}

void bspe_list_del(struct bspe_ep *ep, struct bspe_chan *ch, int l)
{
	struct bspe_list *li = &ep->lists[l];
	struct bspe_link *k = &ch->link[l];

	if (!ch->on[l])
		return;
	ch->on[l] = 0;
	if (k->prev)
		k->prev->link[l].next = k->next;
	else
		li->first = k->next;
	if (k->next)
		k->next->link[l].prev = k->prev;
	else
		li->last = k->prev;
	k->prev = NULL;
	k->next = NULL;
}

u32 bspe_live_count(const struct bspe_chan *ch)
{
	u32 n = 0;
	u8 m = ch->rail_up;

	while (m) {
		n += m & 1;
		m >>= 1;
	}
	return n;
}

static inline u64 bspe_rotl(u64 x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline void bspe_sipround(u64 v[4])
{
	v[0] += v[1];
	v[1] = bspe_rotl(v[1], 13) ^ v[0];
	v[0] = bspe_rotl(v[0], 32);
	v[2] += v[3];
	v[3] = bspe_rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = bspe_rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = bspe_rotl(v[1], 17) ^ v[2];
	v[2] = bspe_rotl(v[2], 32);
}

/*
 * Bucket of (@node, @port): SipHash-2-4 keyed with cfg.hash_key of the
 * single 64-bit word node << 16 | port (like the kernel's siphash_1u64()).
 * Remote addresses are chosen by whoever sends the packets; without the
 * key they cannot be chosen to fall into one bucket.
 */
static u32 bspe_bucket_of(const struct bspe_ep *ep, u32 node, u16 port)
{
	u64 m = ((u64)node << 16) | port;
	u64 b = (u64)8 << 56;
	u64 v[4] = {
		0x736f6d6570736575ULL ^ ep->hash_k0,
		0x646f72616e646f6dULL ^ ep->hash_k1,
		0x6c7967656e657261ULL ^ ep->hash_k0,
		0x7465646279746573ULL ^ ep->hash_k1,
	};

	v[3] ^= m;
	bspe_sipround(v);
	bspe_sipround(v);
	v[0] ^= m;
	v[3] ^= b;
	bspe_sipround(v);
	bspe_sipround(v);
	v[0] ^= b;
	v[2] ^= 0xff;
	bspe_sipround(v);
	bspe_sipround(v);
	bspe_sipround(v);
	bspe_sipround(v);
	return (u32)(v[0] ^ v[1] ^ v[2] ^ v[3]) & (ep->nbuckets - 1);
}

int bspe_chan_find(const struct bspe_ep *ep, u32 node, u16 port)
{
	u16 i = ep->bucket[bspe_bucket_of(ep, node, port)];

	while (i != BSPE_NIL) {
		const struct bspe_chan *ch = ep->tab[i];

		if (ch->node == node && ch->port == port)
			return i;
		i = ch->hnext;
	}
	return -ENOENT;
}

/* Live rails towards @node as known by another channel to it, or all. */
static u8 bspe_node_rails(const struct bspe_ep *ep, u32 node)
{
	const struct bspe_chan *ch;

	for (ch = ep->lists[BSPE_L_OPEN].first; ch;
	     ch = ch->link[BSPE_L_OPEN].next)
		if (ch->node == node)
			return ch->rail_up;
	return (u8)((1u << ep->cfg.nrails) - 1);
}

/* Allocates and links a new channel; returns its index or -errno. */
static int bspe_chan_new(struct bspe_ep *ep, u32 node, u16 port, u32 flags,
			 void *cookie, u8 rails, u64 now)
{
	struct bspe_layout l;
	struct bspe_chan *ch;
	u32 b;
	u16 i;

	if (!ep->nfree)
		return -ENOSPC;
	ch = ep->ops->chan_alloc(ep->ctx, ep->chan_size);
	if (!ch)
		return -ENOMEM;
	memset(ch, 0, ep->chan_size);
	bspe_layout_of(&ep->cfg, &l);
	bspe_chan_wire(ep, ch, &l);
	i = ep->free_idx[--ep->nfree];
	ep->tab[i] = ch;
	ep->nopen++;
	bspe_update_thresh(ep);
	ep->st.chans_opened++;
	b = bspe_bucket_of(ep, node, port);
	ch->idx = i;
	ch->hnext = ep->bucket[b];
	ep->bucket[b] = i;
	ch->rail_up = rails & (u8)((1u << ep->cfg.nrails) - 1);
	ch->used = 1;
	ch->node = node;
	ch->port = port;
	ch->flags = (u8)flags;
	ch->cookie = cookie;
	/* the endpoint's estimate if it has one: one network, one scale */
	ch->srtt = ep->srtt ? ep->srtt : ep->cfg.rtt_init_ns;
	ch->prod_ivl = ch->srtt;
	ch->my_inc = ep->inc_cur;
	bspe_list_add(ep, ch, BSPE_L_OPEN);
	bspe_touch(ep, ch, now);
	return i;
}

int bspe_chan_open(struct bspe_ep *ep, u32 node, u16 port, u32 flags,
		   void *cookie)
{
	int i;

	if (node == ep->cfg.node && port == ep->cfg.port)
		return -EINVAL;
	if (flags & ~BSPE_CHAN_GROUP)
		return -EINVAL;
	i = bspe_chan_find(ep, node, port);
	if (i >= 0) {
		ep->tab[i]->flags = (u8)flags;
		ep->tab[i]->cookie = cookie;
		return i;
	}
	return bspe_chan_new(ep, node, port, flags, cookie,
			     bspe_node_rails(ep, node), ep->now_hint);
}

/*
 * A valid packet came from unknown (@node, @port): open a channel for it
 * if the endpoint and the caller agree. Returns the index or -errno.
 */
int bspe_chan_auto(struct bspe_ep *ep, u32 node, u16 port, u64 now)
{
	u8 rails = bspe_node_rails(ep, node);
	void *cookie = NULL;
	int flags = 0;

	if (!(ep->cfg.flags & BSPE_CFG_AUTO_OPEN))
		return -ENOENT;
	if (node == ep->cfg.node && port == ep->cfg.port)
		return -EINVAL;
	if (!ep->nfree)
		return -ENOSPC;
	if (ep->ops->chan_new) {
		flags = ep->ops->chan_new(ep->ctx, node, port, &cookie, &rails);
		if (flags < 0)
			return flags;
		flags &= BSPE_CHAN_GROUP;
	}
	return bspe_chan_new(ep, node, port, (u32)flags, cookie, rails, now);
}

static void bspe_chan_teardown(struct bspe_ep *ep, struct bspe_chan *ch)
{
	u32 i;

	bspe_msg_fail_all(ep, ch, -ECONNRESET);
	for (i = 0; i < ep->cfg.msg_wnd; i++)
		if (ch->slots[i] && ch->slots[i]->active)
			bspe_slot_abort(ep, ch, i);
}

static void bspe_stats_add(struct bspe_stats *out, const struct bspe_stats *s);

/* Unlinks a torn-down channel and gives its memory back. */
static void bspe_chan_release(struct bspe_ep *ep, struct bspe_chan *ch)
{
	u16 *pp = &ep->bucket[bspe_bucket_of(ep, ch->node, ch->port)];
	u32 l;

	while (*pp != ch->idx)
		pp = &ep->tab[*pp]->hnext;
	*pp = ch->hnext;
	for (l = 0; l < BSPE_L_MAX; l++)
		bspe_list_del(ep, ch, (int)l);
	if (ep->rx_hint == ch->idx)
		ep->rx_hint = 0;
	ep->tab[ch->idx] = NULL;
	ep->free_idx[ep->nfree++] = ch->idx;
	ep->nopen--;
	bspe_update_thresh(ep);
	bspe_chan_trim(ep, ch, 1);
	ep->ops->chan_free(ep->ctx, ch, ep->chan_size);
}

static int bspe_chan_close_in(struct bspe_ep *ep, int chan, u64 now)
{
	struct bspe_chan *ch = bspe_chan_get(ep, chan);
	u32 r;

	(void)now;
	if (!ch)
		return -EINVAL;
	bspe_chan_teardown(ep, ch);
	/* The endpoint's totals stay monotonic: keep the channel's counts. */
	for (r = 0; r < ep->cfg.nrails; r++)
		bspe_stats_add(&ep->st, &ch->st[r]);
	bspe_chan_release(ep, ch);
	/* The peer may still know the channel: a later one must be newer. */
	bspe_inc_bump(ep);
	return 0;
}

int bspe_chan_close(struct bspe_ep *ep, int chan, u64 now)
{
	int ret;

	bspe_enter(ep);
	ret = bspe_chan_close_in(ep, chan, now);
	bspe_leave(ep);
	return ret;
}

/*
 * The peer endpoint was replaced by a newer incarnation: what was sent to
 * or received from the old one is void. Like a close (messages fail with
 * -ECONNRESET, reassemblies are aborted), but the channel stays open to the
 * same address, with its flags, cookie, rail state and round-trip estimate.
 */
int bspe_chan_reset(struct bspe_ep *ep, struct bspe_chan *ch, u32 peer_inc,
		    u64 now)
{
	void *cookie = ch->cookie;
	u64 srtt = ch->srtt, down_since = ch->down_since;
	u32 node = ch->node;
	u16 port = ch->port;
	u8 flags = ch->flags, rail_up = ch->rail_up, suspect = ch->suspect;
	u8 rtt_seen = ch->rtt_seen;
	int c;

	bspe_rx_salvage(ep, ch);
	bspe_chan_close(ep, ch->idx, now);
	ep->st.chan_resets++;
	c = bspe_chan_open(ep, node, port, flags, cookie);
	if (c < 0)
		return c;
	ch = ep->tab[c];
	ch->rail_up = rail_up;
	ch->suspect = suspect;
	ch->down_since = down_since;
	ch->srtt = srtt;
	ch->rtt_seen = rtt_seen;
	ch->prod_ivl = srtt;
	ch->peer_inc = peer_inc;
	return c;
}

static u32 bspe_node_close_in(struct bspe_ep *ep, u32 node, u64 now)
{
	struct bspe_chan *ch = ep->lists[BSPE_L_OPEN].first, *next;
	u32 n = 0;

	for (; ch; ch = next) {
		next = ch->link[BSPE_L_OPEN].next;
		if (ch->node != node)
			continue;
		bspe_chan_close(ep, ch->idx, now);
		n++;
	}
	return n;
}

u32 bspe_node_close(struct bspe_ep *ep, u32 node, u64 now)
{
	u32 ret;

	bspe_enter(ep);
	ret = bspe_node_close_in(ep, node, now);
	bspe_leave(ep);
	return ret;
}

void bspe_fini(struct bspe_ep *ep)
{
	struct bspe_chan *ch;

	while ((ch = ep->lists[BSPE_L_OPEN].first)) {
		bspe_chan_teardown(ep, ch);
		bspe_chan_release(ep, ch);
	}
}

void bspe_set_nprocs(struct bspe_ep *ep, u32 nprocs)
{
	ep->cfg.nprocs = nprocs ? nprocs : 1;
	bspe_update_thresh(ep);
}

u64 bspe_chan_rtt(const struct bspe_ep *ep, int chan)
{
	if (chan < 0 || chan >= ep->cfg.max_chans || !ep->tab[chan])
		return 0;
	return ep->tab[chan]->srtt;
}

u32 bspe_live_rails(const struct bspe_ep *ep, u32 node)
{
	u8 m = bspe_node_rails(ep, node);
	u32 n = 0;

	while (m) {
		n += m & 1;
		m >>= 1;
	}
	return n;
}

static void bspe_stats_add(struct bspe_stats *out, const struct bspe_stats *s)
{
	const u64 *src = (const u64 *)s;
	u64 *dst = (u64 *)out;
	u32 i;

	for (i = 0; i < sizeof(*s) / sizeof(u64); i++)
		dst[i] += src[i];
}

void bspe_stats_get(const struct bspe_ep *ep, int chan, int rail,
		    struct bspe_stats *out)
{
	const struct bspe_chan *ch;
	int r;

	memset(out, 0, sizeof(*out));
	if (chan < 0 && rail < 0)
		bspe_stats_add(out, &ep->st);
	for (ch = ep->lists[BSPE_L_OPEN].first; ch;
	     ch = ch->link[BSPE_L_OPEN].next) {
		if (chan >= 0 && ch->idx != chan)
			continue;
		for (r = 0; r < ep->cfg.nrails; r++)
			if (rail < 0 || r == rail)
				bspe_stats_add(out, &ch->st[r]);
	}
}

const char *bspe_drop_name(enum bspe_drop reason)
{
	static const char * const names[BSPE_DROP_MAX] = {
		[BSPE_DROP_TRUNCATED] = "truncated",
		[BSPE_DROP_VERSION] = "version",
		[BSPE_DROP_TYPE] = "type",
		[BSPE_DROP_FLAGS] = "flags",
		[BSPE_DROP_CSUM] = "csum",
		[BSPE_DROP_ADDR] = "addr",
		[BSPE_DROP_RAIL] = "rail",
		[BSPE_DROP_NOCHAN] = "nochan",
		[BSPE_DROP_MALFORMED] = "malformed",
		[BSPE_DROP_TOOBIG] = "toobig",
		[BSPE_DROP_EPOCH] = "epoch",
		[BSPE_DROP_SEQ_WINDOW] = "seq_window",
		[BSPE_DROP_MSG_WINDOW] = "msg_window",
		[BSPE_DROP_NOBUFS] = "nobufs",
		[BSPE_DROP_NOMEM] = "nomem",
		[BSPE_DROP_DUP] = "dup",
		[BSPE_DROP_AUTH] = "auth",
		[BSPE_DROP_STALE] = "stale",
	};

	if ((unsigned int)reason >= BSPE_DROP_MAX)
		return "unknown";
	return names[reason];
}
