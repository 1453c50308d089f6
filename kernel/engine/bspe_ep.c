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

/* Sizes of the per-channel arrays, in bytes. */
struct bspe_layout {
	size_t	ring;		/* one srail ring */
	size_t	rbits;		/* one rrail bitmap */
	size_t	msgs;
	size_t	slots;
	size_t	sbits;		/* one reassembly bitmap */
	size_t	foq;
	size_t	per_chan;	/* everything of one channel but the struct */
};

static u32 bspe_nfrags_max(const struct bspe_cfg *cfg)
{
	return cfg->max_msg / cfg->frag_size + 1;
}

static void bspe_layout_of(const struct bspe_cfg *cfg, struct bspe_layout *l)
{
	l->ring = bspe_align8(sizeof(struct bspe_spkt) * cfg->snd_wnd);
	l->rbits = bspe_align8(((size_t)cfg->rcv_wnd + 63) / 64 * 8);
	l->msgs = bspe_align8(sizeof(struct bspe_smsg) * cfg->msg_wnd);
	l->slots = bspe_align8(sizeof(struct bspe_rslot) * cfg->msg_wnd);
	l->sbits = ((size_t)bspe_nfrags_max(cfg) + 63) / 64 * 8;
	l->foq = bspe_align8(sizeof(struct bspe_fofrag) * cfg->snd_wnd *
			     cfg->nrails);
	l->per_chan = cfg->nrails * (l->ring + l->rbits) + l->msgs +
		      l->slots + cfg->msg_wnd * l->sbits + l->foq;
}

size_t bspe_mem_size(const struct bspe_cfg *cfg)
{
	struct bspe_layout l;

	if (bspe_cfg_check(cfg))
		return 0;
	bspe_layout_of(cfg, &l);
	return bspe_align8(sizeof(struct bspe_ep)) +
	       cfg->max_chans * (bspe_align8(sizeof(struct bspe_chan)) +
				 l.per_chan);
}

void bspe_update_thresh(struct bspe_ep *ep)
{
	u32 n = ep->cfg.sndbuf_pkts + ep->cfg.rcvbuf / ep->cfg.frag_size;
	u32 t = n / (2 * ep->cfg.nprocs);

	ep->ack_thresh = t ? t : 1;
}

static void bspe_chan_wire(struct bspe_ep *ep, struct bspe_chan *ch,
			   u8 **cursor, const struct bspe_layout *l)
{
	u8 *p = *cursor;
	u32 i;

	for (i = 0; i < ep->cfg.nrails; i++) {
		ch->srail[i].ring = (struct bspe_spkt *)p;
		p += l->ring;
		ch->rrail[i].bits = (u64 *)p;
		p += l->rbits;
	}
	ch->msgs = (struct bspe_smsg *)p;
	p += l->msgs;
	ch->slots = (struct bspe_rslot *)p;
	p += l->slots;
	for (i = 0; i < ep->cfg.msg_wnd; i++) {
		ch->slots[i].bits = (u64 *)p;
		p += l->sbits;
	}
	ch->foq = (struct bspe_fofrag *)p;
	p += l->foq;
	*cursor = p;
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
	    !ops->complete || !ops->timer)
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
	p = (u8 *)mem + bspe_align8(sizeof(*ep));
	ep->chans = (struct bspe_chan *)p;
	p += cfg->max_chans * bspe_align8(sizeof(struct bspe_chan));
	for (i = 0; i < cfg->max_chans; i++)
		bspe_chan_wire(ep, &ep->chans[i], &p, &l);
	bspe_update_thresh(ep);
	return ep;
}

const struct bspe_cfg *bspe_get_cfg(const struct bspe_ep *ep)
{
	return &ep->cfg;
}

struct bspe_chan *bspe_chan_get(struct bspe_ep *ep, int chan)
{
	if (chan < 0 || chan >= ep->cfg.max_chans || !ep->chans[chan].used)
		return NULL;
	return &ep->chans[chan];
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

int bspe_chan_find(const struct bspe_ep *ep, u32 node, u16 port)
{
	int i;

	for (i = 0; i < ep->cfg.max_chans; i++) {
		const struct bspe_chan *ch = &ep->chans[i];

		if (ch->used && ch->node == node && ch->port == port)
			return i;
	}
	return -ENOENT;
}

/* Live rails towards @node as known by another channel to it, or all. */
static u8 bspe_node_rails(const struct bspe_ep *ep, u32 node)
{
	int i;

	for (i = 0; i < ep->cfg.max_chans; i++) {
		const struct bspe_chan *ch = &ep->chans[i];

		if (ch->used && ch->node == node)
			return ch->rail_up;
	}
	return (u8)((1u << ep->cfg.nrails) - 1);
}

int bspe_chan_open(struct bspe_ep *ep, u32 node, u16 port, u32 flags,
		   void *cookie)
{
	struct bspe_chan *ch;
	int i = bspe_chan_find(ep, node, port);

	if (node == ep->cfg.node && port == ep->cfg.port)
		return -EINVAL;
	if (flags & ~BSPE_CHAN_GROUP)
		return -EINVAL;
	if (i >= 0) {
		ep->chans[i].flags = (u8)flags;
		ep->chans[i].cookie = cookie;
		return i;
	}
	for (i = 0; i < ep->cfg.max_chans; i++)
		if (!ep->chans[i].used)
			break;
	if (i == ep->cfg.max_chans)
		return -ENOSPC;
	ch = &ep->chans[i];
	ch->rail_up = bspe_node_rails(ep, node);
	ch->used = 1;
	ch->node = node;
	ch->port = port;
	ch->flags = (u8)flags;
	ch->cookie = cookie;
	ch->srtt = ep->cfg.rtt_init_ns;
	ch->prod_ivl = ch->srtt;
	return i;
}

/* Returns a channel to its pristine state, keeping its memory wiring. */
static void bspe_chan_clear(struct bspe_ep *ep, struct bspe_chan *ch)
{
	struct bspe_spkt *ring[BSPE_MAX_RAILS];
	u64 *rbits[BSPE_MAX_RAILS];
	struct bspe_smsg *msgs = ch->msgs;
	struct bspe_rslot *slots = ch->slots;
	struct bspe_fofrag *foq = ch->foq;
	u32 i;

	for (i = 0; i < ep->cfg.nrails; i++) {
		ring[i] = ch->srail[i].ring;
		rbits[i] = ch->rrail[i].bits;
		memset(ring[i], 0, sizeof(*ring[i]) * ep->cfg.snd_wnd);
		memset(rbits[i], 0, ep->rcv_words * 8);
	}
	for (i = 0; i < ep->cfg.msg_wnd; i++) {
		u64 *bits = slots[i].bits;

		memset(&slots[i], 0, sizeof(slots[i]));
		slots[i].bits = bits;
		memset(bits, 0, ep->rx_frag_words * 8);
	}
	memset(msgs, 0, sizeof(*msgs) * ep->cfg.msg_wnd);
	memset(ch, 0, sizeof(*ch));
	ch->msgs = msgs;
	ch->slots = slots;
	ch->foq = foq;
	for (i = 0; i < ep->cfg.nrails; i++) {
		ch->srail[i].ring = ring[i];
		ch->rrail[i].bits = rbits[i];
	}
}

static void bspe_chan_teardown(struct bspe_ep *ep, struct bspe_chan *ch)
{
	u32 i;

	bspe_msg_fail_all(ep, ch, -ECONNRESET);
	for (i = 0; i < ep->cfg.msg_wnd; i++)
		if (ch->slots[i].active)
			bspe_slot_abort(ep, ch, i);
}

static void bspe_stats_add(struct bspe_stats *out, const struct bspe_stats *s);

int bspe_chan_close(struct bspe_ep *ep, int chan, u64 now)
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
	bspe_chan_clear(ep, ch);
	return 0;
}

/*
 * The peer endpoint was replaced by a newer incarnation: what was sent to
 * or received from the old one is void. Like a close (messages fail with
 * -ECONNRESET, reassemblies are aborted), but the channel stays open to the
 * same address, with its flags, cookie, rail state and round-trip estimate.
 */
void bspe_chan_reset(struct bspe_ep *ep, struct bspe_chan *ch, u32 peer_inc,
		     u64 now)
{
	void *cookie = ch->cookie;
	u64 srtt = ch->srtt, down_since = ch->down_since;
	u32 node = ch->node;
	u16 port = ch->port;
	u8 flags = ch->flags, rail_up = ch->rail_up, suspect = ch->suspect;

	bspe_chan_close(ep, (int)(ch - ep->chans), now);
	ep->st.chan_resets++;
	ch->used = 1;
	ch->node = node;
	ch->port = port;
	ch->flags = flags;
	ch->cookie = cookie;
	ch->rail_up = rail_up;
	ch->suspect = suspect;
	ch->down_since = down_since;
	ch->srtt = srtt;
	ch->prod_ivl = srtt;
	ch->peer_inc = peer_inc;
}

void bspe_fini(struct bspe_ep *ep)
{
	u32 i;

	for (i = 0; i < ep->cfg.max_chans; i++)
		if (ep->chans[i].used)
			bspe_chan_teardown(ep, &ep->chans[i]);
}

void bspe_set_nprocs(struct bspe_ep *ep, u32 nprocs)
{
	ep->cfg.nprocs = nprocs ? nprocs : 1;
	bspe_update_thresh(ep);
}

u64 bspe_chan_rtt(const struct bspe_ep *ep, int chan)
{
	if (chan < 0 || chan >= ep->cfg.max_chans || !ep->chans[chan].used)
		return 0;
	return ep->chans[chan].srtt;
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
	int c, r;

	memset(out, 0, sizeof(*out));
	if (chan < 0 && rail < 0)
		bspe_stats_add(out, &ep->st);
	for (c = 0; c < ep->cfg.max_chans; c++) {
		const struct bspe_chan *ch = &ep->chans[c];

		if (!ch->used || (chan >= 0 && c != chan))
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
