// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP files under /proc/net/af_bsp/ of each namespace:
 *
 *   sockets  one line per socket: port, queues, counters, epoch
 *   peers    the peer table, one line per (peer, rail); writable by
 *            CAP_NET_ADMIN of the namespace for static peers:
 *              echo "add NODE RAIL MAC [MTU]" > /proc/net/af_bsp/peers
 *              echo "del NODE" > /proc/net/af_bsp/peers
 *   stats    namespace counters: hellos, drops by reason
 *
 * Context: process context; readers walk lists under RCU.
 */
#include <linux/etherdevice.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/seq_file_net.h>
#include <net/net_namespace.h>

#include "af_bsp.h"
#include "peer.h"
#include "auth.h"

static const char * const bsp_drop_names[__BSP_DROP_MAX] = {
	[BSP_DROP_SHORT]		= "short",
	[BSP_DROP_VERSION]		= "version",
	[BSP_DROP_TYPE]			= "type",
	[BSP_DROP_CLUSTER]		= "cluster",
	[BSP_DROP_SELF]			= "self",
	[BSP_DROP_NOT_RAIL]		= "not_rail",
	[BSP_DROP_RAIL_MISMATCH]	= "rail_mismatch",
	[BSP_DROP_PEER_TABLE_FULL]	= "peer_table_full",
	[BSP_DROP_ADDR]			= "addr",
	[BSP_DROP_ENGINE]		= "engine",
	[BSP_DROP_NO_PORT]		= "no_port",
	[BSP_DROP_NOMEM]		= "nomem",
	[BSP_DROP_CSUM]			= "csum",
	[BSP_DROP_SRC_MAC]		= "src_mac",
	[BSP_DROP_PEER_CONFLICT]	= "peer_conflict",
	[BSP_DROP_REPLAY]		= "replay",
	[BSP_DROP_MEM]			= "mem",
	[BSP_DROP_AUTH]			= "auth",
};

static struct bsp_net *bsp_seq_net(struct seq_file *seq)
{
	return bsp_pernet(seq_file_single_net(seq));
}

static int bsp_sockets_show(struct seq_file *seq, void *v)
{
	struct bsp_net *bn = bsp_seq_net(seq);
	struct bsp_sock_stats st;
	struct bsp_sock *bs;

	seq_puts(seq, "port inode rmem wmem tx_msgs rx_msgs tx_local tx_remote rx_remote tx_errors retransmits epoch group\n");
	rcu_read_lock();
	hlist_for_each_entry_rcu(bs, &bn->socks, list_node) {
		memset(&st, 0, sizeof(st));
		st.tx_msgs = atomic64_read(&bs->stats.tx_msgs);
		st.rx_msgs = atomic64_read(&bs->stats.rx_msgs);
		st.tx_local_msgs = atomic64_read(&bs->stats.tx_local_msgs);
		st.tx_remote_msgs = atomic64_read(&bs->stats.tx_remote_msgs);
		st.rx_remote_msgs = atomic64_read(&bs->stats.rx_remote_msgs);
		st.tx_errors = atomic64_read(&bs->stats.tx_errors);
		seq_printf(seq, "%u %lu %d %d %llu %llu %llu %llu %llu %llu %u %u\n",
			   /* a port reserved by a bind() under way: 0 */
			   READ_ONCE(bs->port_live) ? READ_ONCE(bs->port) : 0,
			   sock_i_ino(&bs->sk),
			   sk_rmem_alloc_get(&bs->sk),
			   sk_wmem_alloc_get(&bs->sk), st.tx_msgs, st.rx_msgs,
			   st.tx_local_msgs, st.tx_remote_msgs,
			   st.rx_remote_msgs, st.tx_errors,
			   READ_ONCE(bs->epoch), READ_ONCE(bs->group_size));
	}
	rcu_read_unlock();
	return 0;
}

static int bsp_peers_show(struct seq_file *seq, void *v)
{
	struct bsp_net *bn = bsp_seq_net(seq);
	struct bsp_peer *p;
	int b, r;

	seq_printf(seq, "node %u cluster %u\n", bsp_node_id(bn),
		   READ_ONCE(bn->cluster_id));
	seq_puts(seq, "peer rail mac state kind mtu last_seen_ms hello_seq\n");
	rcu_read_lock();
	for (b = 0; b < ARRAY_SIZE(bn->peers); b++) {
		hlist_for_each_entry_rcu(p, &bn->peers[b], hnode) {
			for (r = 0; r < BSP_MAX_RAILS; r++) {
				const struct bsp_peer_rail *pr = &p->rails[r];

				if (!READ_ONCE(pr->known))
					continue;
				seq_printf(seq, "%u %d %pM %s %s %u %u %u\n",
					   p->node_id, r, pr->addr,
					   READ_ONCE(pr->alive) ? "up" : "down",
					   pr->is_static ? "static" : "hello",
					   pr->mtu,
					   jiffies_to_msecs(jiffies -
							    pr->last_seen),
					   pr->hello_seq);
			}
		}
	}
	rcu_read_unlock();
	return 0;
}

static int bsp_stats_show(struct seq_file *seq, void *v)
{
	struct bsp_net *bn = bsp_seq_net(seq);
	int i;

	seq_printf(seq, "hello_tx %lu\n", atomic_long_read(&bn->hello_tx));
	seq_printf(seq, "hello_rx %lu\n", atomic_long_read(&bn->hello_rx));
	seq_printf(seq, "peers %u\n", READ_ONCE(bn->npeers));
	seq_printf(seq, "peer_rail_timeouts %ld\n",
		   atomic_long_read(&bn->peer_rail_timeouts));
	seq_printf(seq, "rmem %ld\n", atomic_long_read(&bn->rmem));
	seq_printf(seq, "rmem_peak %ld\n", atomic_long_read(&bn->rmem_peak));
	seq_printf(seq, "rmem_limit %lu\n", READ_ONCE(bn->mem_pages) << PAGE_SHIFT);
	seq_printf(seq, "reasm_expired %ld\n",
		   atomic_long_read(&bn->reasm_expired));
	seq_printf(seq, "auth %d\n", bsp_key_is_set(bn));
	seq_printf(seq, "tx_paged %ld\n", atomic_long_read(&bn->tx_paged));
	seq_printf(seq, "tx_copied %ld\n", atomic_long_read(&bn->tx_copied));
	seq_printf(seq, "rx_paged %ld\n", atomic_long_read(&bn->rx_paged));
	seq_printf(seq, "rx_linearized %ld\n",
		   atomic_long_read(&bn->rx_linearized));
	seq_printf(seq, "rx_csum_vouched %ld\n",
		   atomic_long_read(&bn->rx_csum_vouched));
	seq_printf(seq, "rx_zcopy %ld\n", atomic_long_read(&bn->rx_zcopy));
	seq_printf(seq, "rx_zcopy_undone %ld\n",
		   atomic_long_read(&bn->rx_zcopy_undone));
	seq_printf(seq, "rx_copied_msgs %ld\n",
		   atomic_long_read(&bn->rx_copied_msgs));
	seq_printf(seq, "tx_gso %ld\n", atomic_long_read(&bn->tx_gso));
	seq_printf(seq, "tx_gso_segs %ld\n", atomic_long_read(&bn->tx_gso_segs));
	seq_printf(seq, "tx_gso_sw %ld\n", atomic_long_read(&bn->tx_gso_sw));
	seq_printf(seq, "tx_gso_sw_segs %ld\n",
		   atomic_long_read(&bn->tx_gso_sw_segs));
	seq_printf(seq, "rx_gso %ld\n", atomic_long_read(&bn->rx_gso));
	seq_printf(seq, "rx_gso_segs %ld\n", atomic_long_read(&bn->rx_gso_segs));
	seq_printf(seq, "rx_gso_flat %ld\n", atomic_long_read(&bn->rx_gso_flat));
	seq_printf(seq, "rx_gso_bad %ld\n", atomic_long_read(&bn->rx_gso_bad));
	for (i = 0; i < __BSP_DROP_MAX; i++)
		seq_printf(seq, "drop_%s %lu\n", bsp_drop_names[i],
			   atomic_long_read(&bn->drops[i]));
	return 0;
}

/* Writes to /proc/net/af_bsp/peers: static peer configuration. */
static int bsp_peers_write(struct file *file, char *buf, size_t size)
{
	struct net *net = seq_file_single_net(file->private_data);
	struct bsp_net *bn = bsp_pernet(net);
	unsigned int node, rail, mtu = ETH_DATA_LEN;
	u8 mac[ETH_ALEN];
	char macs[18];
	int n;

	if (!ns_capable(net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	n = sscanf(buf, "add %u %u %17s %u", &node, &rail, macs, &mtu);
	if (n >= 3) {
		if (!mac_pton(macs, mac) || rail >= BSP_MAX_RAILS ||
		    mtu > U16_MAX)
			return -EINVAL;
		return bsp_peer_add_static(bn, node, rail, mac, mtu);
	}
	if (sscanf(buf, "del %u", &node) == 1)
		return bsp_peer_del(bn, node);
	return -EINVAL;
}

int bsp_proc_init_net(struct bsp_net *bn)
{
	struct net *net = bn->net;

	bn->proc_dir = proc_net_mkdir(net, "af_bsp", net->proc_net);
	if (!bn->proc_dir)
		return -ENOMEM;
	if (!proc_create_net_single("sockets", 0444, bn->proc_dir,
				    bsp_sockets_show, NULL) ||
	    !proc_create_net_single("stats", 0444, bn->proc_dir,
				    bsp_stats_show, NULL) ||
	    !proc_create_net_single_write("peers", 0644, bn->proc_dir,
					  bsp_peers_show, bsp_peers_write,
					  NULL)) {
		remove_proc_subtree("af_bsp", net->proc_net);
		return -ENOMEM;
	}
	return 0;
}

void bsp_proc_exit_net(struct bsp_net *bn)
{
	remove_proc_subtree("af_bsp", bn->net->proc_net);
}
