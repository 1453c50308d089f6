/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AF_BSP internal declarations shared by the files of af_bsp.ko.
 *
 * Locking order (outer to inner; see Documentation/kernel-design.rst):
 *
 *   RTNL  >  lock_sock(sk)  >  bsp_net.port_lock  >  bsp_net.peer_lock
 *
 * RTNL protects the master device and its rail list (writers); readers on
 * the data path use RCU. port_lock and peer_lock are taken with _bh because
 * rail receive (softirq) looks ports and peers up; softirq readers only use
 * RCU. No lock is held while sleeping except lock_sock and RTNL.
 */
#ifndef _AF_BSP_H
#define _AF_BSP_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/wait.h>
#include <linux/atomic.h>
#include <linux/math64.h>
#include <linux/timekeeping.h>
#include <linux/siphash.h>
#include <net/sock.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <uapi/linux/bsp.h>

#define BSP_PORT_HASH_BITS	8
#define BSP_PEER_HASH_BITS	10
#define BSP_MAX_RAILS		8

/* Module parameters (af_bsp_main.c). */
extern int bsp_family;
extern unsigned int bsp_default_reasm_timeout_ms;
extern unsigned int bsp_default_chan_idle_ms;
extern unsigned int bsp_default_rmem;
extern unsigned int bsp_default_wmem;

/* ---- per network namespace state (pernet.c) ---- */

struct bsp_master;
struct bsp_key;
struct bpf_map;
struct bsp_xdp_state;

struct bsp_net {
	struct net *net;

	/* sysctl net.bsp.*; read with READ_ONCE, written by the sysctl core */
	u32 node_id;
	u32 cluster_id;
	u32 incarnation;	/* of the namespace's state (realtime ms), in hellos */
	/* last socket incarnation (engine src_inc), see bsp_next_incarnation */
	atomic_t sock_inc;
	u32 hello_interval_ms;
	u32 peer_timeout_ms;
	u32 peer_expire_ms;
	u32 max_peers;
	u32 reasm_timeout_ms;
	u32 chan_idle_ms;	/* idle channel eviction (0: off), at bind */
	unsigned long mem_pages;	/* net.bsp.mem: receive memory limit */
	int rmem_default;	/* net.bsp.rmem_default: a new socket's SO_RCVBUF */
	int wmem_default;	/* net.bsp.wmem_default: a new socket's SO_SNDBUF */
	struct ctl_table_header *sysctl_hdr;
	/* cluster key (auth.c): NULL = unauthenticated; RCU, key_mutex */
	struct bsp_key __rcu *key;

	/*
	 * Receive memory of every socket of the namespace (bytes of skb
	 * truesize: messages being reassembled, queued or pending), charged
	 * with each socket's sk_rmem_alloc (message.c), and its peak.
	 */
	atomic_long_t rmem;
	atomic_long_t rmem_peak;
	atomic_long_t reasm_expired;	/* channels closed by reassembly expiry */
	/*
	 * The data path (transport.c): DATA frames whose payload references
	 * the message's pages or was copied; received frames handed to the
	 * engine header-only (payload copied from the frame's pages) or made
	 * linear first; frames whose checksum was vouched for (they never
	 * left this host).
	 */
	atomic_long_t tx_paged;
	atomic_long_t tx_copied;
	atomic_long_t rx_paged;
	atomic_long_t rx_linearized;
	atomic_long_t rx_csum_vouched;
	/*
	 * Zero-copy reassembly (transport.c): frames kept whole in their
	 * message instead of copied; messages that had to be copied into a
	 * buffer after all (a fragment out of order, a frame that cannot be
	 * kept, or no room), and those that were copied from the start.
	 */
	atomic_long_t rx_zcopy;
	atomic_long_t rx_zcopy_undone;
	atomic_long_t rx_copied_msgs;
	/*
	 * Super-frames (offload.c): built on transmit and the frames in
	 * them; split by gso_segment in software and the frames that gave;
	 * received whole and split, received flattened into one buffer and
	 * cut again, the frames of both, and malformed ones dropped.
	 */
	atomic_long_t tx_gso;
	atomic_long_t tx_gso_segs;
	atomic_long_t tx_gso_sw;
	atomic_long_t tx_gso_sw_segs;
	atomic_long_t rx_gso;
	atomic_long_t rx_gso_segs;
	atomic_long_t rx_gso_flat;
	atomic_long_t rx_gso_bad;
	atomic_t mem_waiters;		/* a socket was refused for net.bsp.mem */

	/* bound sockets by port; writers hold port_lock, readers RCU */
	spinlock_t port_lock;
	struct hlist_head ports[1 << BSP_PORT_HASH_BITS];
	/* every socket of the namespace, bound or not (sock_diag, /proc) */
	struct hlist_head socks;
	u32 socks_gen;		/* changes with socks: sock_diag dump check */
	u32 next_port;
	/* XDP pre-filter state map (xdp.c) and its value; port_lock */
	struct bpf_map *xdp_map;
	struct bsp_xdp_state *xdp_value;

	/* the namespace's master device (at most one); RTNL + RCU */
	struct bsp_master __rcu *master;

	/* peer table (peer.c); writers hold peer_lock, readers RCU */
	spinlock_t peer_lock;
	siphash_key_t peer_hash_key;	/* random: buckets unpredictable */
	struct hlist_head peers[1 << BSP_PEER_HASH_BITS];
	u32 npeers;
	/* last hello sequence sent per rail index (discovery work only): it
	 * never goes back within an incarnation, even if a rail is
	 * re-enslaved or the master re-created, so peers can refuse replays
	 */
	u32 hello_seq[BSP_MAX_RAILS];

	/* periodic hellos and liveness (discovery.c) */
	struct delayed_work discovery_work;
	bool exiting;

	/* counters shown in /proc/net/af_bsp/stats */
	atomic_long_t drops[__BSP_DROP_MAX];
	atomic_long_t hello_tx;
	atomic_long_t hello_rx;
	atomic_long_t peer_rail_timeouts;

	struct proc_dir_entry *proc_dir;
};

extern unsigned int bsp_net_id;

static inline struct bsp_net *bsp_pernet(const struct net *net)
{
	return net_generic(net, bsp_net_id);
}

static inline u32 bsp_node_id(const struct bsp_net *bn)
{
	return READ_ONCE(bn->node_id);
}

/* Real-time clock in milliseconds, modulo 2^32 (socket incarnations). */
static inline u32 bsp_realtime_ms(void)
{
	return (u32)div_u64(ktime_get_real_ns(), NSEC_PER_MSEC);
}

static inline void bsp_count_drop(struct bsp_net *bn, enum bsp_drop_reason r)
{
	atomic_long_inc(&bn->drops[r]);
}

/* Process context: set net.bsp.node_id; -EBUSY while a socket is bound. */
int bsp_set_node_id(struct bsp_net *bn, u32 id);

int bsp_pernet_register(void);
void bsp_pernet_unregister(void);

/* ---- sockets (socket.c, port.c, deliver.c, sockopt.c) ---- */

struct bsp_sock_counters {
	atomic64_t tx_msgs;
	atomic64_t tx_bytes;
	atomic64_t rx_msgs;
	atomic64_t rx_bytes;
	atomic64_t tx_local_msgs;
	atomic64_t tx_remote_msgs;
	atomic64_t tx_errors;
	atomic64_t rx_remote_msgs;
};

struct bsp_sock {
	struct sock sk;			/* must be first */

	struct hlist_node port_node;	/* bsp_net.ports, RCU */
	struct hlist_node list_node;	/* bsp_net.socks */
	u16 port;			/* 0 while unbound */
	/* frames and local messages find the socket by its port: set (release)
	 * once bind() has made the engine and given it the group, cleared at
	 * unbind; until then the port is only reserved
	 */
	bool port_live;

	/* default peer set by connect(); lock_sock */
	struct sockaddr_bsp peer;
	bool connected;

	/* messages waiting for receive buffer room (deliver.c) */
	struct sk_buff_head pending;

	/* superstep state (sockopt.c); lock_sock */
	u32 epoch;
	bool recv_epoch;
	u32 group_size;
	struct bsp_endpoint *group;	/* kvmalloc'd, group_size entries */
	struct bsp_expect *expect;	/* one per group member, or NULL */
	u64 pacing_rate;		/* bytes per second, 0 = unpaced */
	bool follow;			/* BSP_FOLLOW */
	u32 chans;			/* BSP_CHANNELS before bind, 0: default */

	/* rail transport: protocol engine endpoint (transport.c) */
	struct bsp_transport *tp;

	struct bsp_sock_counters stats;
};

static inline struct bsp_sock *bsp_sk(const struct sock *sk)
{
	return (struct bsp_sock *)sk;
}

/* Per-message metadata carried in skb->cb while a message is queued. */
struct bsp_skb_cb {
	u32 src_node;
	u16 src_port;
	u16 dst_port;
	u32 epoch;
	bool remote;		/* received over a rail (charged at arrival) */
	u32 dst_node;		/* sent over the rails: destination node */
	u32 seq;		/* sent over the rails: message number */
	/*
	 * While a message is reassembled from the received frames
	 * themselves (transport.c, rx_zcopy): its frames by fragment number,
	 * their number, the payload bytes of each but the last, the receive
	 * memory reserved for it (0: the message is a buffer the frames'
	 * payload is copied into) and how much of that the frames kept so
	 * far and the array take.
	 */
	struct sk_buff **rx_frames;
	u32 rx_nfrags;
	u32 rx_unit;
	u32 rx_resv;
	u32 rx_used;
};

static inline struct bsp_skb_cb *bsp_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct bsp_skb_cb) > sizeof_field(struct sk_buff, cb));
	return (struct bsp_skb_cb *)skb->cb;
}

int bsp_socket_register(void);
void bsp_socket_unregister(void);

/* port.c */
int bsp_port_bind(struct bsp_net *bn, struct bsp_sock *bs, u16 port);
void bsp_port_publish(struct bsp_net *bn, struct bsp_sock *bs);
void bsp_port_unbind(struct bsp_net *bn, struct bsp_sock *bs);
struct sock *bsp_port_lookup_get(struct bsp_net *bn, u16 port);
void bsp_sock_list_add(struct bsp_net *bn, struct bsp_sock *bs);
void bsp_sock_list_del(struct bsp_net *bn, struct bsp_sock *bs);

/* message.c */
struct sk_buff *bsp_msg_alloc(struct sock *sk, size_t len, bool noblock,
			      int *err);
struct sk_buff *bsp_msg_alloc_rx(size_t len, gfp_t gfp);
size_t bsp_msg_rx_truesize(size_t len);
void bsp_msg_charge_r(struct sk_buff *skb, struct sock *sk);
void bsp_rmem_note_peak(struct bsp_net *bn);
void bsp_msg_charge_r_reserved(struct sk_buff *skb, struct sock *sk,
			       size_t reserved);
void bsp_msg_transfer_to(struct sk_buff *skb, struct sock *dst);

/* deliver.c */
int bsp_deliver(struct sock *dst, struct sk_buff *skb);
int bsp_deliver_local(struct bsp_net *bn, struct sk_buff *skb, u16 dst_port);
void bsp_deliver_pending(struct sock *sk);
void bsp_deliver_purge(struct sock *sk);

/* sockopt.c */
int bsp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen);
int bsp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen);
void bsp_superstep_release(struct bsp_sock *bs);
void bsp_sock_stats_read(struct bsp_sock *bs, struct bsp_sock_stats *st);

/* diag.c */
int bsp_diag_register(void);
void bsp_diag_unregister(void);

/* proc.c */
int bsp_proc_init_net(struct bsp_net *bn);
void bsp_proc_exit_net(struct bsp_net *bn);

#endif /* _AF_BSP_H */
