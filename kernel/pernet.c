// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP per network namespace state: identity and tunables under the
 * sysctl directory net.bsp, the port table, the peer table and the
 * counters. Every cluster node is one namespace
 * (Documentation/kernel-design.rst).
 *
 * Context: init and exit run in process context from the netns core
 * (net_mutex held); by the time exit runs no socket of the namespace is
 * left (each socket holds a reference on its netns) and the master device
 * has been unregistered by the rtnl_link core.
 */
#include <linux/random.h>
#include <linux/swap.h>
#include <linux/sysctl.h>
#include <linux/slab.h>

#include "af_bsp.h"
#include "peer.h"
#include "discovery.h"
#include "auth.h"
#include "xdp.h"

unsigned int bsp_net_id __read_mostly;

static u32 bsp_sysctl_one = 1;
static u32 bsp_sysctl_hello_max = 60000;
static u32 bsp_sysctl_peers_max = 65536;
static u32 bsp_sysctl_reasm_min = 100;
static u32 bsp_sysctl_reasm_max = 3600000;
/* two largest messages must fit (and one in half of it): 4 MiB */
static unsigned long bsp_sysctl_mem_min = BSP_MSG_MAX / PAGE_SIZE * 4;
/* the core's bounds of SO_RCVBUF / SO_SNDBUF (sock_setsockopt) */
static int bsp_sysctl_rmem_min = SOCK_MIN_RCVBUF;
static int bsp_sysctl_wmem_min = SOCK_MIN_SNDBUF;
static int bsp_sysctl_buf_max = INT_MAX / 2;

/* port_lock held: is any socket of @bn bound? */
static bool bsp_any_bound(struct bsp_net *bn)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(bn->ports); i++)
		if (!hlist_empty(&bn->ports[i]))
			return true;
	return false;
}

/*
 * Set the node id (net.bsp.node_id, IFLA_BSP_NODE_ID): -EBUSY if it would
 * change while a socket of the namespace is bound.
 */
int bsp_set_node_id(struct bsp_net *bn, u32 id)
{
	int err = 0;

	spin_lock_bh(&bn->port_lock);
	if (id != bn->node_id && bsp_any_bound(bn))
		err = -EBUSY;
	else
		WRITE_ONCE(bn->node_id, id);
	spin_unlock_bh(&bn->port_lock);
	if (!err)
		bsp_xdp_sync_ids(bn);
	return err;
}

/*
 * net.bsp.node_id: a bound socket's engine and its peers know it by the
 * node id it was bound with, so the id only changes while no socket of
 * the namespace is bound (else -EBUSY): nothing is left half renamed.
 */
static int bsp_sysctl_node_id(struct ctl_table *table, int write,
			      void *buffer, size_t *lenp, loff_t *ppos)
{
	struct bsp_net *bn = container_of(table->data, struct bsp_net,
					  node_id);
	struct ctl_table tmp = *table;
	u32 val = READ_ONCE(bn->node_id);
	int err;

	tmp.data = &val;
	err = proc_douintvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (err || !write)
		return err;
	return bsp_set_node_id(bn, val);
}

/* net.bsp.cluster_id: the XDP pre-filter's copy follows the value. */
static int bsp_sysctl_cluster_id(struct ctl_table *table, int write,
				 void *buffer, size_t *lenp, loff_t *ppos)
{
	struct bsp_net *bn = container_of(table->data, struct bsp_net,
					  cluster_id);
	int err = proc_douintvec(table, write, buffer, lenp, ppos);

	if (!err && write)
		bsp_xdp_sync_ids(bn);
	return err;
}

/* Template; each namespace gets a copy whose .data point into its bsp_net. */
static const struct ctl_table bsp_sysctl_template[] = {
	{
		.procname	= "node_id",
		.maxlen		= sizeof(u32),
		.mode		= 0644,
		.proc_handler	= bsp_sysctl_node_id,
		.extra1		= &bsp_sysctl_one,
	},
	{
		.procname	= "cluster_id",
		.maxlen		= sizeof(u32),
		.mode		= 0644,
		.proc_handler	= bsp_sysctl_cluster_id,
	},
	{
		.procname	= "hello_interval_ms",
		.maxlen		= sizeof(u32),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &bsp_sysctl_one,
		.extra2		= &bsp_sysctl_hello_max,
	},
	{
		.procname	= "peer_timeout_ms",
		.maxlen		= sizeof(u32),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &bsp_sysctl_one,
	},
	{
		.procname	= "peer_expire_ms",
		.maxlen		= sizeof(u32),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &bsp_sysctl_one,
	},
	{
		.procname	= "max_peers",
		.maxlen		= sizeof(u32),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &bsp_sysctl_one,
		.extra2		= &bsp_sysctl_peers_max,
	},
	{
		.procname	= "reasm_timeout_ms",
		.maxlen		= sizeof(u32),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &bsp_sysctl_reasm_min,
		.extra2		= &bsp_sysctl_reasm_max,
	},
	{
		.procname	= "chan_idle_ms",
		.maxlen		= sizeof(u32),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra2		= &bsp_sysctl_reasm_max,
	},
	{
		.procname	= "mem",
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &bsp_sysctl_mem_min,
	},
	{
		/* write-only: 32 hex digits or "off" (auth.c) */
		.procname	= "cluster_key",
		.mode		= 0200,
		.proc_handler	= bsp_sysctl_cluster_key,
	},
	{
		.procname	= "rmem_default",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &bsp_sysctl_rmem_min,
		.extra2		= &bsp_sysctl_buf_max,
	},
	{
		.procname	= "wmem_default",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= &bsp_sysctl_wmem_min,
		.extra2		= &bsp_sysctl_buf_max,
	},
	{ }
};

static int bsp_sysctl_init_net(struct bsp_net *bn)
{
	struct ctl_table *t;

	t = kmemdup(bsp_sysctl_template, sizeof(bsp_sysctl_template),
		    GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t[0].data = &bn->node_id;
	t[1].data = &bn->cluster_id;
	t[2].data = &bn->hello_interval_ms;
	t[3].data = &bn->peer_timeout_ms;
	t[4].data = &bn->peer_expire_ms;
	t[5].data = &bn->max_peers;
	t[6].data = &bn->reasm_timeout_ms;
	t[7].data = &bn->chan_idle_ms;
	t[8].data = &bn->mem_pages;
	t[9].data = bn;
	t[10].data = &bn->rmem_default;
	t[11].data = &bn->wmem_default;

	bn->sysctl_hdr = register_net_sysctl(bn->net, "net/bsp", t);
	if (!bn->sysctl_hdr) {
		kfree(t);
		return -ENOMEM;
	}
	return 0;
}

static void bsp_sysctl_exit_net(struct bsp_net *bn)
{
	struct ctl_table *t = bn->sysctl_hdr->ctl_table_arg;

	unregister_net_sysctl_table(bn->sysctl_hdr);
	kfree(t);
}

static int __net_init bsp_net_init(struct net *net)
{
	struct bsp_net *bn = bsp_pernet(net);
	int i, err;

	bn->net = net;
	/* A random default keeps nodes apart until an administrator (or
	 * bsprun) assigns ids; 0 is reserved for BSP_NODE_LOCAL.
	 */
	bn->node_id = get_random_u32() | 1;
	bn->cluster_id = 0;
	/*
	 * The real-time clock in ms: a namespace's state created later has a
	 * newer incarnation (serial arithmetic), so peers in authenticated
	 * mode can tell a restart from a replayed hello of an earlier one.
	 */
	bn->incarnation = bsp_realtime_ms() ?: 1;
	atomic_set(&bn->sock_inc, bsp_realtime_ms() - 1);
	bn->hello_interval_ms = bsp_default_hello_ms;
	bn->peer_timeout_ms = bsp_default_peer_timeout_ms;
	bn->peer_expire_ms = bsp_default_peer_expire_ms;
	bn->max_peers = bsp_default_max_peers;
	bn->reasm_timeout_ms = bsp_default_reasm_timeout_ms;
	bn->chan_idle_ms = bsp_default_chan_idle_ms;
	/* like udp_mem: a share of the memory free for buffers */
	bn->mem_pages = max(nr_free_buffer_pages() / 8, bsp_sysctl_mem_min);
	bn->rmem_default = clamp_t(unsigned int, bsp_default_rmem,
				   SOCK_MIN_RCVBUF, INT_MAX / 2);
	bn->wmem_default = clamp_t(unsigned int, bsp_default_wmem,
				   SOCK_MIN_SNDBUF, INT_MAX / 2);
	atomic_long_set(&bn->rmem, 0);
	atomic_long_set(&bn->rmem_peak, 0);
	atomic_long_set(&bn->reasm_expired, 0);
	atomic_set(&bn->mem_waiters, 0);

	spin_lock_init(&bn->port_lock);
	for (i = 0; i < ARRAY_SIZE(bn->ports); i++)
		INIT_HLIST_HEAD(&bn->ports[i]);
	INIT_HLIST_HEAD(&bn->socks);
	bn->next_port = BSP_PORT_AUTO_MIN;

	bsp_peer_init_net(bn);
	bsp_discovery_init_net(bn);

	for (i = 0; i < __BSP_DROP_MAX; i++)
		atomic_long_set(&bn->drops[i], 0);
	atomic_long_set(&bn->hello_tx, 0);
	atomic_long_set(&bn->hello_rx, 0);
	atomic_long_set(&bn->peer_rail_timeouts, 0);

	err = bsp_sysctl_init_net(bn);
	if (err)
		return err;
	err = bsp_proc_init_net(bn);
	if (err) {
		bsp_sysctl_exit_net(bn);
		return err;
	}
	return 0;
}

static void __net_exit bsp_net_exit(struct net *net)
{
	struct bsp_net *bn = bsp_pernet(net);

	bsp_discovery_exit_net(bn);
	bsp_peer_exit_net(bn);
	bsp_proc_exit_net(bn);
	bsp_sysctl_exit_net(bn);
	bsp_key_exit_net(bn);
	bsp_xdp_exit_net(bn);
	WARN_ON_ONCE(!hlist_empty(&bn->socks));
	WARN_ON_ONCE(atomic_long_read(&bn->rmem));
}

static struct pernet_operations bsp_net_ops = {
	.init	= bsp_net_init,
	.exit	= bsp_net_exit,
	.id	= &bsp_net_id,
	.size	= sizeof(struct bsp_net),
};

int bsp_pernet_register(void)
{
	return register_pernet_subsys(&bsp_net_ops);
}

void bsp_pernet_unregister(void)
{
	unregister_pernet_subsys(&bsp_net_ops);
}
