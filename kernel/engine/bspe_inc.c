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
