// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP peer table, one per namespace.
 *
 * Writers (hello receive in softirq, the discovery work, static
 * configuration, rail removal) hold bsp_net.peer_lock with bottom halves
 * disabled. Readers use RCU; entries are freed with kfree_rcu. The
 * per-rail fields of an entry are updated in place under the lock; an
 * RCU reader may see a MAC address mid-update while the peer changes its
 * address, which at worst misdirects one frame that the engine then
 * retransmits. The table holds at most net.bsp.max_peers entries; hellos
 * of further nodes are dropped and counted (BSP_DROP_PEER_TABLE_FULL).
 * Peers with no live rail are forgotten net.bsp.peer_expire_ms after they
 * were last heard (bsp_peer_reap), so forged or departed node ids do not
 * hold the table. Buckets are chosen by SipHash of the node id with a
 * random key per namespace: a sender cannot aim node ids at one bucket.
 *
 * What a hello may change (bsp_peer_hello): a (node, rail) keeps the MAC
 * it was learnt with while it is alive, and a peer keeps its incarnation
 * while any rail of it is alive, unless the hello is authenticated (then
 * only a newer incarnation, and a newer hello_seq of the same one, count)
 * or, for a new incarnation, comes from the MAC already known for that
 * (node, rail). Anything else waits until the old state is dead.
 */
#include <linux/etherdevice.h>
#include <linux/rculist.h>
#include <linux/siphash.h>
#include <linux/slab.h>

#include "peer.h"
#include "engine/bspe_wire.h"

static struct hlist_head *bsp_peer_bucket(struct bsp_net *bn, u32 node_id)
{
	u64 h = siphash_1u32(node_id, &bn->peer_hash_key);

	return &bn->peers[h & (ARRAY_SIZE(bn->peers) - 1)];
}

/* RFC 1982 serial number arithmetic: @a is newer than @b. */
static bool bsp_serial_after(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

void bsp_peer_init_net(struct bsp_net *bn)
{
	int i;

	get_random_bytes(&bn->peer_hash_key, sizeof(bn->peer_hash_key));
	spin_lock_init(&bn->peer_lock);
	for (i = 0; i < ARRAY_SIZE(bn->peers); i++)
		INIT_HLIST_HEAD(&bn->peers[i]);
	bn->npeers = 0;
}

void bsp_peer_exit_net(struct bsp_net *bn)
{
	struct bsp_peer *p;
	struct hlist_node *tmp;
	int i;

	spin_lock_bh(&bn->peer_lock);
	for (i = 0; i < ARRAY_SIZE(bn->peers); i++) {
		hlist_for_each_entry_safe(p, tmp, &bn->peers[i], hnode) {
			hlist_del_rcu(&p->hnode);
			kfree_rcu(p, rcu);
		}
	}
	bn->npeers = 0;
	spin_unlock_bh(&bn->peer_lock);
}

struct bsp_peer *bsp_peer_lookup_rcu(struct bsp_net *bn, u32 node_id)
{
	struct bsp_peer *p;

	hlist_for_each_entry_rcu(p, bsp_peer_bucket(bn, node_id), hnode)
		if (p->node_id == node_id)
			return p;
	return NULL;
}

bool bsp_peer_reachable(struct bsp_net *bn, u32 node_id, unsigned long grace)
{
	unsigned long down;
	struct bsp_peer *p;
	bool ok = false;
	int r;

	rcu_read_lock();
	p = bsp_peer_lookup_rcu(bn, node_id);
	for (r = 0; p && r < BSP_MAX_RAILS && !ok; r++)
		ok = READ_ONCE(p->rails[r].alive);
	if (p && !ok) {
		down = READ_ONCE(p->down_since);
		ok = down && time_before(jiffies, down + grace);
	}
	rcu_read_unlock();
	return ok;
}

void bsp_peer_touch(struct bsp_net *bn, u32 node_id, u8 rail)
{
	struct bsp_peer *p;

	if (rail >= BSP_MAX_RAILS)
		return;
	rcu_read_lock();
	p = bsp_peer_lookup_rcu(bn, node_id);
	/* refresh only: a dead rail comes back through a hello */
	if (p && READ_ONCE(p->rails[rail].alive))
		WRITE_ONCE(p->rails[rail].last_seen, jiffies);
	rcu_read_unlock();
}

bool bsp_peer_addr_ok(struct bsp_net *bn, u32 node_id, u8 rail,
		      const u8 *addr)
{
	struct bsp_peer *p;

	if (rail >= BSP_MAX_RAILS)
		return false;
	p = bsp_peer_lookup_rcu(bn, node_id);
	return p && READ_ONCE(p->rails[rail].known) &&
	       ether_addr_equal(p->rails[rail].addr, addr);
}

/* RCU: smallest MTU @p announces on a live rail, 0 if none. */
static u32 bsp_peer_mtu_rcu(const struct bsp_peer *p)
{
	u32 mtu = 0;
	int r;

	for (r = 0; r < BSP_MAX_RAILS; r++) {
		const struct bsp_peer_rail *pr = &p->rails[r];
		u32 m = READ_ONCE(pr->mtu);

		if (READ_ONCE(pr->alive) && m && (!mtu || m < mtu))
			mtu = m;
	}
	return mtu;
}

u32 bsp_peer_mtu(struct bsp_net *bn, u32 node_id)
{
	struct bsp_peer *p;
	u32 mtu = 0;

	rcu_read_lock();
	p = bsp_peer_lookup_rcu(bn, node_id);
	if (p)
		mtu = bsp_peer_mtu_rcu(p);
	rcu_read_unlock();
	return mtu;
}

u32 bsp_peers_min_mtu(struct bsp_net *bn)
{
	struct bsp_peer *p;
	u32 mtu = 0, m;
	int b;

	rcu_read_lock();
	for (b = 0; b < ARRAY_SIZE(bn->peers); b++) {
		hlist_for_each_entry_rcu(p, &bn->peers[b], hnode) {
			m = bsp_peer_mtu_rcu(p);
			if (m && (!mtu || m < mtu))
				mtu = m;
		}
	}
	rcu_read_unlock();
	return mtu;
}

/* peer_lock held. */
static struct bsp_peer *bsp_peer_get_or_create(struct bsp_net *bn,
					       u32 node_id, int *err)
{
	struct bsp_peer *p;

	hlist_for_each_entry(p, bsp_peer_bucket(bn, node_id), hnode)
		if (p->node_id == node_id)
			return p;
	if (bn->npeers >= READ_ONCE(bn->max_peers)) {
		*err = -ENOSPC;
		return NULL;
	}
	p = kzalloc(sizeof(*p), GFP_ATOMIC);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	p->node_id = node_id;
	hlist_add_head_rcu(&p->hnode, bsp_peer_bucket(bn, node_id));
	bn->npeers++;
	return p;
}

static bool bsp_peer_any_alive(const struct bsp_peer *p)
{
	int r;

	for (r = 0; r < BSP_MAX_RAILS; r++)
		if (p->rails[r].alive)
			return true;
	return false;
}

/*
 * peer_lock held: may the hello @hi (heard on our rail @rail from @addr)
 * change known peer @p? 0 or the errno of bsp_peer_hello.
 */
static int bsp_peer_hello_check(const struct bsp_peer *p, u8 rail,
				const u8 *addr,
				const struct bspe_hello_info *hi, bool authed)
{
	const struct bsp_peer_rail *pr = &p->rails[rail];
	bool same_mac = pr->known && ether_addr_equal(pr->addr, addr);

	if (!p->heard)		/* static only so far: nothing to protect */
		return 0;
	if (hi->incarnation == p->incarnation) {
		if (pr->hello_seq &&
		    !bsp_serial_after(hi->hello_seq, pr->hello_seq))
			return -EALREADY;
		if (!authed && pr->alive && !pr->is_static && !same_mac)
			return -EBUSY;
		return 0;
	}
	if (!bsp_peer_any_alive(p))
		return 0;	/* the old incarnation is dead */
	if (authed)
		return bsp_serial_after(hi->incarnation, p->incarnation) ?
		       0 : -EALREADY;
	return same_mac ? 0 : -EBUSY;
}

int bsp_peer_hello(struct bsp_net *bn, u8 rail, const u8 *addr,
		   const struct bspe_hello_info *hi, bool authed,
		   bool *came_up, bool *restarted)
{
	struct bsp_peer_rail *pr;
	struct bsp_peer *p;
	int err = 0, r;

	*came_up = false;
	*restarted = false;
	if (rail >= BSP_MAX_RAILS)
		return -EINVAL;
	spin_lock_bh(&bn->peer_lock);
	p = bsp_peer_get_or_create(bn, hi->node_id, &err);
	if (!p)
		goto out;
	err = bsp_peer_hello_check(p, rail, addr, hi, authed);
	if (err)
		goto out;
	if (p->heard && p->incarnation != hi->incarnation) {
		*restarted = true;
		/* sequence numbers are per incarnation */
		for (r = 0; r < BSP_MAX_RAILS; r++)
			p->rails[r].hello_seq = 0;
	}
	p->heard = true;
	p->incarnation = hi->incarnation;
	p->nrails = hi->nrails;
	pr = &p->rails[rail];
	if (!pr->is_static)
		ether_addr_copy(pr->addr, addr);
	WRITE_ONCE(pr->mtu, hi->mtu);
	WRITE_ONCE(pr->known, true);
	pr->last_seen = jiffies;
	pr->hello_seq = hi->hello_seq;
	if (!pr->alive) {
		WRITE_ONCE(pr->alive, true);
		*came_up = true;
	}
out:
	spin_unlock_bh(&bn->peer_lock);
	return err;
}

int bsp_peer_add_static(struct bsp_net *bn, u32 node_id, u8 rail,
			const u8 *addr, u16 mtu)
{
	struct bsp_peer_rail *pr;
	struct bsp_peer *p;
	int err = 0;

	if (rail >= BSP_MAX_RAILS || !node_id || !is_valid_ether_addr(addr))
		return -EINVAL;
	if (node_id == bsp_node_id(bn))
		return -EINVAL;
	spin_lock_bh(&bn->peer_lock);
	p = bsp_peer_get_or_create(bn, node_id, &err);
	if (p) {
		pr = &p->rails[rail];
		ether_addr_copy(pr->addr, addr);
		WRITE_ONCE(pr->mtu, mtu);
		WRITE_ONCE(pr->known, true);
		pr->is_static = true;
		pr->last_seen = jiffies;
		WRITE_ONCE(pr->alive, true);
	}
	spin_unlock_bh(&bn->peer_lock);
	return err;
}

int bsp_peer_del(struct bsp_net *bn, u32 node_id)
{
	struct bsp_peer *p;
	int err = -ENOENT;

	spin_lock_bh(&bn->peer_lock);
	hlist_for_each_entry(p, bsp_peer_bucket(bn, node_id), hnode) {
		if (p->node_id == node_id) {
			hlist_del_rcu(&p->hnode);
			bn->npeers--;
			kfree_rcu(p, rcu);
			err = 0;
			break;
		}
	}
	spin_unlock_bh(&bn->peer_lock);
	return err;
}

/*
 * peer_lock held, once per liveness pass for each live (peer, rail): count
 * the passes that found nothing new and say whether the rail has been
 * silent both for @timeout and for @passes passes in a row. Wall time
 * alone would kill every peer after a local stall of @timeout (the
 * frames that arrived meanwhile not yet processed); passes alone would
 * kill peers faster when the work is kicked.
 */
static bool bsp_peer_rail_silent(struct bsp_peer_rail *pr,
				 unsigned long timeout, unsigned int passes)
{
	unsigned long seen = READ_ONCE(pr->last_seen);

	if (seen != pr->pass_seen) {
		pr->pass_seen = seen;
		pr->silent = 0;
		return false;
	}
	if (pr->silent < U8_MAX)
		pr->silent++;
	return pr->silent >= min_t(unsigned int, passes, U8_MAX) &&
	       !time_before(jiffies, seen + timeout);
}

/* Dead (node, rail) pairs found by one pass, reported unlocked. */
#define BSP_DEAD_BATCH	32

/*
 * Mark live (peer, rail) pairs dead: those on our rail @only (or on any
 * rail if @only < 0) that are either all of them (@timeout 0) or silent
 * for @timeout jiffies; static entries only when @only is given. Reports
 * each through @down with no lock held. Process context.
 */
static unsigned int bsp_peer_mark_dead(struct bsp_net *bn, int only,
				       unsigned long timeout, unsigned int passes,
				       void (*down)(struct bsp_net *bn,
						    u32 node, u8 rail))
{
	struct { u32 node; u8 rail; } dead[BSP_DEAD_BATCH];
	unsigned int n, i, total = 0;
	struct bsp_peer *p;
	int b, r;

	do {
		n = 0;
		spin_lock_bh(&bn->peer_lock);
		for (b = 0; b < ARRAY_SIZE(bn->peers); b++) {
			hlist_for_each_entry(p, &bn->peers[b], hnode) {
				for (r = 0; r < BSP_MAX_RAILS; r++) {
					struct bsp_peer_rail *pr = &p->rails[r];

					if (!pr->alive || (only >= 0 && r != only))
						continue;
					if (only < 0 &&
					    (pr->is_static ||
					     !bsp_peer_rail_silent(pr, timeout,
								   passes)))
						continue;
					if (n == BSP_DEAD_BATCH)
						goto report;
					WRITE_ONCE(pr->alive, false);
					if (!bsp_peer_any_alive(p))
						WRITE_ONCE(p->down_since,
							   jiffies | 1);
					dead[n].node = p->node_id;
					dead[n].rail = r;
					n++;
				}
			}
		}
report:
		spin_unlock_bh(&bn->peer_lock);
		for (i = 0; i < n; i++)
			down(bn, dead[i].node, dead[i].rail);
		total += n;
	} while (n == BSP_DEAD_BATCH);
	return total;
}

unsigned int bsp_peer_expire(struct bsp_net *bn, unsigned long timeout,
			     unsigned int passes,
			     void (*down)(struct bsp_net *bn, u32 node, u8 rail))
{
	return bsp_peer_mark_dead(bn, -1, timeout, passes, down);
}

/* peer_lock held: nothing of @p is alive or static, all heard long ago. */
static bool bsp_peer_idle(const struct bsp_peer *p, unsigned long idle)
{
	int r;

	for (r = 0; r < BSP_MAX_RAILS; r++) {
		const struct bsp_peer_rail *pr = &p->rails[r];

		if (pr->alive || pr->is_static)
			return false;
		if (pr->known && time_before(jiffies, pr->last_seen + idle))
			return false;
	}
	return true;
}

void bsp_peer_reap(struct bsp_net *bn, unsigned long idle)
{
	struct hlist_node *tmp;
	struct bsp_peer *p;
	int b;

	spin_lock_bh(&bn->peer_lock);
	for (b = 0; b < ARRAY_SIZE(bn->peers); b++) {
		hlist_for_each_entry_safe(p, tmp, &bn->peers[b], hnode) {
			if (!bsp_peer_idle(p, idle))
				continue;
			hlist_del_rcu(&p->hnode);
			bn->npeers--;
			kfree_rcu(p, rcu);
		}
	}
	spin_unlock_bh(&bn->peer_lock);
}

void bsp_peer_rail_down(struct bsp_net *bn, u8 rail,
			void (*down)(struct bsp_net *bn, u32 node, u8 rail))
{
	bsp_peer_mark_dead(bn, rail, 0, 0, down);
}

/* Our rail @rail came back: static entries on it are usable again. */
void bsp_peer_rail_up_static(struct bsp_net *bn, u8 rail,
			     void (*up)(struct bsp_net *bn, u32 node, u8 rail))
{
	struct bsp_peer *p;
	u32 nodes[BSP_DEAD_BATCH];
	unsigned int n, i;
	int b;

	do {
		n = 0;
		spin_lock_bh(&bn->peer_lock);
		for (b = 0; b < ARRAY_SIZE(bn->peers); b++) {
			hlist_for_each_entry(p, &bn->peers[b], hnode) {
				struct bsp_peer_rail *pr = &p->rails[rail];

				if (!pr->is_static || pr->alive)
					continue;
				if (n == BSP_DEAD_BATCH)
					goto report;
				WRITE_ONCE(pr->alive, true);
				nodes[n++] = p->node_id;
			}
		}
report:
		spin_unlock_bh(&bn->peer_lock);
		for (i = 0; i < n; i++)
			up(bn, nodes[i], rail);
	} while (n == BSP_DEAD_BATCH);
}

void bsp_peer_forget_rail(struct bsp_net *bn, u8 rail)
{
	struct bsp_peer *p;
	int b;

	if (rail >= BSP_MAX_RAILS)
		return;
	spin_lock_bh(&bn->peer_lock);
	for (b = 0; b < ARRAY_SIZE(bn->peers); b++) {
		hlist_for_each_entry(p, &bn->peers[b], hnode) {
			WRITE_ONCE(p->rails[rail].alive, false);
			WRITE_ONCE(p->rails[rail].known, false);
			p->rails[rail].is_static = false;
			p->rails[rail].hello_seq = 0;
		}
	}
	spin_unlock_bh(&bn->peer_lock);
}
