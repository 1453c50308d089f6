// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP XDP pre-filter state: the module keeps the BPF map the XDP
 * program of the rails reads (struct bsp_xdp_state of <linux/bsp.h>,
 * ebpf/xdp_bsp.bpf.c) current.
 *
 * User space (tools/bsp-xdp) creates the map and hands its file descriptor
 * over with the socket option BSP_XDP_STATE;
 * the module takes a reference (bpf_map_get) and from then on writes the
 * value itself, in the same critical sections that change what it mirrors:
 *
 *   bound ports     bsp_port_bind/unbind, under bsp_net.port_lock
 *   node id         bsp_set_node_id, under port_lock
 *   cluster id      the sysctl and changelink, copied under port_lock
 *   rail ifindexes  rail add/release, under RTNL, copied under port_lock
 *
 * Registration fills the map from the tables under RTNL and port_lock, so
 * no change is lost between the snapshot and the first update. Each field
 * is one aligned store (WRITE_ONCE); the program reads each field once. A
 * frame the program judged against the old value of a port bit is exactly
 * a frame that arrived just before the bind or just after the unbind, which
 * the module's own checks would have treated the same way.
 */
#include <linux/bpf.h>
#include <linux/rtnetlink.h>

#include "af_bsp.h"
#include "rail.h"
#include "xdp.h"

/* port_lock held: the map value, or NULL if none is registered. */
static struct bsp_xdp_state *bsp_xdp_value(struct bsp_net *bn)
{
	return bn->xdp_value;
}

void bsp_xdp_port_set(struct bsp_net *bn, u16 port, bool bound)
{
	struct bsp_xdp_state *st = bsp_xdp_value(bn);
	u64 *w, bit = 1ULL << (port % 64);

	lockdep_assert_held(&bn->port_lock);
	if (!st)
		return;
	w = &st->ports[port / 64];
	WRITE_ONCE(*w, bound ? (*w | bit) : (*w & ~bit));
}

void bsp_xdp_sync_ids(struct bsp_net *bn)
{
	struct bsp_xdp_state *st;

	spin_lock_bh(&bn->port_lock);
	st = bsp_xdp_value(bn);
	if (st) {
		WRITE_ONCE(st->node_id, READ_ONCE(bn->node_id));
		WRITE_ONCE(st->cluster_id, READ_ONCE(bn->cluster_id));
	}
	spin_unlock_bh(&bn->port_lock);
}

/* RTNL and port_lock held: copy the rails' ifindexes. */
static void bsp_xdp_fill_rails(struct bsp_net *bn, struct bsp_xdp_state *st)
{
	struct bsp_master *m = rtnl_dereference(bn->master);
	int i;

	for (i = 0; i < BSP_XDP_MAX_RAILS; i++) {
		struct bsp_rail *r = m ? rtnl_dereference(m->rails[i]) : NULL;

		WRITE_ONCE(st->rail_ifindex[i], r ? r->dev->ifindex : 0);
	}
}

void bsp_xdp_sync_rails(struct bsp_net *bn)
{
	struct bsp_xdp_state *st;

	ASSERT_RTNL();
	spin_lock_bh(&bn->port_lock);
	st = bsp_xdp_value(bn);
	if (st)
		bsp_xdp_fill_rails(bn, st);
	spin_unlock_bh(&bn->port_lock);
}

/* RTNL and port_lock held: fill @st from the namespace's tables. */
static void bsp_xdp_fill(struct bsp_net *bn, struct bsp_xdp_state *st)
{
	struct bsp_sock *bs;
	int i;

	for (i = 0; i < BSP_XDP_PORT_WORDS; i++)
		WRITE_ONCE(st->ports[i], 0);
	for (i = 0; i < ARRAY_SIZE(bn->ports); i++)
		hlist_for_each_entry(bs, &bn->ports[i], port_node) {
			u64 *w = &st->ports[bs->port / 64];

			if (bs->port_live)	/* reserved only: not yet */
				WRITE_ONCE(*w, *w | 1ULL << (bs->port % 64));
		}
	WRITE_ONCE(st->node_id, READ_ONCE(bn->node_id));
	WRITE_ONCE(st->cluster_id, READ_ONCE(bn->cluster_id));
	bsp_xdp_fill_rails(bn, st);
	WRITE_ONCE(st->reserved, 0);
	/* the program trusts the rest only once it sees active */
	smp_wmb();
	WRITE_ONCE(st->active, 1);
}

/*
 * Returns the map of @fd with a reference, if it has the layout of a
 * struct bsp_xdp_state array, else an ERR_PTR.
 */
static struct bpf_map *bsp_xdp_map_get(int fd)
{
	struct bpf_map *map = bpf_map_get(fd);

	if (IS_ERR(map))
		return map;
	if (map->map_type != BPF_MAP_TYPE_ARRAY || map->key_size != 4 ||
	    map->value_size != sizeof(struct bsp_xdp_state) ||
	    map->max_entries != 1) {
		bpf_map_put(map);
		return ERR_PTR(-EINVAL);
	}
	return map;
}

int bsp_xdp_set_state(struct bsp_net *bn, int fd)
{
	struct bsp_xdp_state *st = NULL, *old_st;
	struct bpf_map *map = NULL, *old;
	u32 key = 0;

	if (fd >= 0) {
		map = bsp_xdp_map_get(fd);
		if (IS_ERR(map))
			return PTR_ERR(map);
		/* an array's value is fixed memory for the map's lifetime */
		st = map->ops->map_lookup_elem(map, &key);
		if (!st) {
			bpf_map_put(map);
			return -EINVAL;
		}
	} else if (fd != -1) {
		return -EBADF;
	}

	rtnl_lock();
	spin_lock_bh(&bn->port_lock);
	old = bn->xdp_map;
	old_st = bn->xdp_value;
	if (old_st && old_st != st)
		WRITE_ONCE(old_st->active, 0);
	if (st)
		bsp_xdp_fill(bn, st);
	bn->xdp_map = map;
	bn->xdp_value = st;
	spin_unlock_bh(&bn->port_lock);
	rtnl_unlock();
	/* the same map again keeps the new reference and drops the old */
	if (old)
		bpf_map_put(old);
	return 0;
}

void bsp_xdp_exit_net(struct bsp_net *bn)
{
	struct bpf_map *map;

	spin_lock_bh(&bn->port_lock);
	map = bn->xdp_map;
	if (bn->xdp_value)
		WRITE_ONCE(bn->xdp_value->active, 0);
	bn->xdp_map = NULL;
	bn->xdp_value = NULL;
	spin_unlock_bh(&bn->port_lock);
	if (map)
		bpf_map_put(map);
}
