// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP port table: which socket of a namespace is bound to which port,
 * and the list of all sockets of a namespace.
 *
 * Writers (bind, release) run in process context and hold
 * bsp_net.port_lock with bottom halves disabled; readers (sendmsg, rail
 * receive in softirq) walk the hash under RCU and take a reference on the
 * socket they find. Sockets are freed with SOCK_RCU_FREE, so a reader
 * that raced with release sees either a live socket or a refcount of 0.
 */
#include <linux/hash.h>
#include <linux/rculist.h>

#include "af_bsp.h"
#include "xdp.h"

static struct hlist_head *bsp_port_bucket(struct bsp_net *bn, u16 port)
{
	return &bn->ports[hash_32(port, BSP_PORT_HASH_BITS)];
}

static bool bsp_port_in_use(struct bsp_net *bn, u16 port)
{
	struct bsp_sock *bs;

	hlist_for_each_entry(bs, bsp_port_bucket(bn, port), port_node)
		if (bs->port == port)
			return true;
	return false;
}

/*
 * Reserve @port for @bs, or a free automatic port if @port is
 * BSP_PORT_ANY. Nothing is delivered to @bs before bsp_port_publish():
 * a frame or local message for the port meanwhile finds no socket, as it
 * would have a moment earlier. Caller holds lock_sock. Returns 0, -EINVAL
 * if already bound, -EADDRINUSE or -EADDRNOTAVAIL (no automatic port left).
 */
int bsp_port_bind(struct bsp_net *bn, struct bsp_sock *bs, u16 port)
{
	const u32 span = BSP_PORT_AUTO_MAX - BSP_PORT_AUTO_MIN + 1;
	int err = 0;
	u32 i;

	spin_lock_bh(&bn->port_lock);
	if (bs->port) {
		err = -EINVAL;
		goto out;
	}
	if (port == BSP_PORT_ANY) {
		for (i = 0; i < span; i++) {
			u32 p = bn->next_port;

			bn->next_port = p == BSP_PORT_AUTO_MAX ?
					BSP_PORT_AUTO_MIN : p + 1;
			if (!bsp_port_in_use(bn, p)) {
				port = p;
				break;
			}
		}
		if (port == BSP_PORT_ANY) {
			err = -EADDRNOTAVAIL;
			goto out;
		}
	} else if (bsp_port_in_use(bn, port)) {
		err = -EADDRINUSE;
		goto out;
	}
	bs->port = port;
	hlist_add_head_rcu(&bs->port_node, bsp_port_bucket(bn, port));
out:
	spin_unlock_bh(&bn->port_lock);
	return err;
}

/*
 * The socket of a reserved port is ready (engine made, group set): from
 * now on frames and local messages for the port reach it. lock_sock held.
 */
void bsp_port_publish(struct bsp_net *bn, struct bsp_sock *bs)
{
	spin_lock_bh(&bn->port_lock);
	if (bs->port && !hlist_unhashed(&bs->port_node)) {
		/* pairs with smp_load_acquire() in bsp_port_lookup_get() */
		smp_store_release(&bs->port_live, true);
		bsp_xdp_port_set(bn, bs->port, true);
	}
	spin_unlock_bh(&bn->port_lock);
}

void bsp_port_unbind(struct bsp_net *bn, struct bsp_sock *bs)
{
	spin_lock_bh(&bn->port_lock);
	if (bs->port && !hlist_unhashed(&bs->port_node)) {
		hlist_del_init_rcu(&bs->port_node);
		if (bs->port_live)
			bsp_xdp_port_set(bn, bs->port, false);
		WRITE_ONCE(bs->port_live, false);
	}
	spin_unlock_bh(&bn->port_lock);
}

/* Any context. Returns the socket bound to @port with a reference held. */
struct sock *bsp_port_lookup_get(struct bsp_net *bn, u16 port)
{
	struct sock *found = NULL;
	struct bsp_sock *bs;

	rcu_read_lock();
	hlist_for_each_entry_rcu(bs, bsp_port_bucket(bn, port), port_node) {
		/* pairs with smp_store_release() in bsp_port_publish() */
		if (bs->port == port && smp_load_acquire(&bs->port_live) &&
		    refcount_inc_not_zero(&bs->sk.sk_refcnt)) {
			found = &bs->sk;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

void bsp_sock_list_add(struct bsp_net *bn, struct bsp_sock *bs)
{
	spin_lock_bh(&bn->port_lock);
	hlist_add_head_rcu(&bs->list_node, &bn->socks);
	WRITE_ONCE(bn->socks_gen, bn->socks_gen + 1);
	spin_unlock_bh(&bn->port_lock);
}

void bsp_sock_list_del(struct bsp_net *bn, struct bsp_sock *bs)
{
	spin_lock_bh(&bn->port_lock);
	hlist_del_init_rcu(&bs->list_node);
	WRITE_ONCE(bn->socks_gen, bn->socks_gen + 1);
	spin_unlock_bh(&bn->port_lock);
}
