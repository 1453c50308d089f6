/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * AF_BSP user-space API: reliable datagram sockets striped over Ethernet
 * rails, for bulk-synchronous parallel programs.
 *
 * See Documentation/socket-api.rst for the meaning of every definition here.
 */
#ifndef _UAPI_LINUX_BSP_H
#define _UAPI_LINUX_BSP_H

#include <linux/types.h>
#include <linux/socket.h>

/*
 * Address family. sock_register() refuses numbers >= AF_MAX (46 on 6.1),
 * so AF_BSP reuses the number of AF_IRDA, whose stack left the kernel in
 * 4.17 and which no in-tree code registers, uses for rtnetlink or for
 * sock_diag (Documentation/decisions.rst). The module parameter "family"
 * can move it; programs read the number in effect from
 * /sys/module/af_bsp/parameters/family (BSP_FAMILY_PARAM_PATH).
 */
#define AF_BSP		23
#define PF_BSP		AF_BSP
#define BSP_FAMILY_PARAM_PATH	"/sys/module/af_bsp/parameters/family"

/* IEEE 802 local experimental EtherType carrying AF_BSP frames. */
#define ETH_P_BSP	0x88B5

/* Socket option level of the options below (any number above SOL_VSOCK). */
#define SOL_BSP		290

/*
 * Addresses. A node is one network namespace (one cluster node); its id is
 * the sysctl net.bsp.node_id of that namespace. Ports are 16-bit and
 * per node.
 */
#define BSP_NODE_LOCAL		0U	/* "this node" in bind/connect/sendto */
#define BSP_PORT_ANY		0U	/* bind: choose a free port */
#define BSP_PORT_AUTO_MIN	32768U	/* automatic ports are taken from */
#define BSP_PORT_AUTO_MAX	65535U	/* [BSP_PORT_AUTO_MIN, _MAX] */

struct sockaddr_bsp {
	__kernel_sa_family_t	sbsp_family;	/* AF_BSP */
	__u16			sbsp_port;	/* host byte order */
	__u32			sbsp_node;	/* host byte order */
	__u8			sbsp_zero[8];	/* must be zero */
};

/*
 * Largest message (datagram) a socket accepts; longer ones fail with
 * EMSGSIZE. Zero-length messages are valid.
 */
#define BSP_MSG_MAX		(1U << 20)

/* ---- socket options at level SOL_BSP ---- */

/*
 * BSP_GROUP (set, get): the group of endpoints this socket exchanges
 * supersteps with (struct bsp_group followed by count struct bsp_endpoint).
 * Setting it resets the epoch to 0. An empty group (count 0) leaves the
 * socket without a group.
 */
#define BSP_GROUP		1
/*
 * BSP_BARRIER_DONE (set, __u32): the barrier of superstep e has completed
 * (every member received all data of superstep e - 1). Messages sent after
 * this carry epoch e. Epochs only move forward: a smaller or equal value
 * fails with EINVAL.
 */
#define BSP_BARRIER_DONE	2
/* BSP_EPOCH (get, __u32): the current epoch of the socket. */
#define BSP_EPOCH		3
/*
 * BSP_EXPECT (set, struct bsp_expect): the volume this socket expects to
 * receive from one peer in the current superstep, in all (messages already
 * received included).
 */
#define BSP_EXPECT		4
/*
 * BSP_PACING_RATE (set, get, __u64 bytes per second): the rate at which
 * the kernel releases this socket's packets onto the rails; 0 = unpaced.
 * Same-node delivery is a memory copy and is not paced.
 */
#define BSP_PACING_RATE		5
/* BSP_SOCK_STATS (get, struct bsp_sock_stats): the socket's counters. */
#define BSP_SOCK_STATS		6
/*
 * BSP_RECVEPOCH (set, get, int boolean): deliver a BSP_CMSG_EPOCH control
 * message with every received message.
 */
#define BSP_RECVEPOCH		7
/*
 * BSP_PROTO_STATS (get, struct bsp_proto_stats): the protocol engine's
 * counters of this socket, summed over its peers and rails, with received
 * packets refused counted by reason. A shorter buffer gets a prefix of the
 * structure and optlen says how much was written (like TCP_INFO).
 */
#define BSP_PROTO_STATS		8
/*
 * BSP_CHANNELS (set before bind, get; __u32): the most remote sockets this
 * socket can have protocol channels to at a time (1..BSP_GROUP_MAX), a
 * ceiling: each channel is allocated when first used. The default is the
 * module parameter max_chans. Set on a bound socket: EBUSY.
 */
#define BSP_CHANNELS		9
/*
 * BSP_FOLLOW (set, get; int boolean): in the current superstep every
 * member sends each destination its data right after its first message
 * there (the messaging layer's count message), not once it has every count
 * of its own. Data expected (BSP_EXPECT) is then prodded for as soon as its
 * peer's channel is quiet, not the whole socket. Set after BSP_BARRIER_DONE,
 * cleared at the end of the superstep's exchange; BSP_BARRIER_DONE clears
 * it too. Without a group: ENOTCONN.
 */
#define BSP_FOLLOW		10
/*
 * BSP_XDP_STATE (set, int): the namespace's XDP pre-filter state map
 * (struct bsp_xdp_state below), given as a BPF map file descriptor; the
 * module fills it and keeps it current from then on. -1 gives it back
 * (the pre-filter then passes every frame). Needs CAP_NET_ADMIN in the
 * namespace. Namespace-wide: the socket is only the way in (bound or not).
 */
#define BSP_XDP_STATE		32

/* Limit of BSP_GROUP members. */
#define BSP_GROUP_MAX		4096U

struct bsp_endpoint {
	__u32	node;
	__u16	port;
	__u16	reserved;	/* must be zero */
};

struct bsp_group {
	__u32			count;		/* number of members[] */
	__u32			reserved;	/* must be zero */
	struct bsp_endpoint	members[];
};

/* struct bsp_expect flags */
#define BSP_EXPECT_SYNC		0x1	/* count BSP_SEND_SYNC messages */

struct bsp_expect {
	struct bsp_endpoint	peer;
	__u32			messages;	/* messages from peer, in all */
	__u32			flags;		/* 0 or BSP_EXPECT_SYNC */
	__u64			bytes;		/* bytes expected from peer */
};

struct bsp_sock_stats {
	__u64	tx_msgs;	/* messages accepted by sendmsg */
	__u64	tx_bytes;
	__u64	rx_msgs;	/* messages handed to recvmsg (not peeks) */
	__u64	rx_bytes;
	__u64	tx_local_msgs;	/* of tx_msgs, delivered without a rail */
	__u64	tx_remote_msgs;	/* of tx_msgs, sent over rails */
	__u64	tx_errors;	/* messages that failed after sendmsg returned */
	__u64	rx_remote_msgs;	/* of rx_msgs, received over rails */
	/* protocol engine counters of this socket (all peers, all rails) */
	__u64	pkts_tx;	/* DATA packets sent, retransmissions included */
	__u64	pkts_rx;	/* DATA packets accepted */
	__u64	retransmits;	/* DATA packets sent again (any cause) */
	__u64	failovers;	/* of retransmits, moved off a dead rail */
	__u64	acks_tx;	/* explicit ACK packets sent */
	__u64	acks_rx;	/* explicit ACK packets received */
	__u64	acked_implicit;	/* packets acknowledged by the epoch rule */
	__u64	rx_dropped;	/* received packets refused, any reason */
};

/* Reasons the protocol engine refuses a received packet. */
enum bsp_proto_drop {
	BSP_PROTO_DROP_TRUNCATED,	/* shorter than header + payload */
	BSP_PROTO_DROP_VERSION,		/* unknown protocol version */
	BSP_PROTO_DROP_TYPE,		/* unknown packet type */
	BSP_PROTO_DROP_FLAGS,		/* undefined flags set */
	BSP_PROTO_DROP_CSUM,		/* checksum wrong or missing */
	BSP_PROTO_DROP_ADDR,		/* not addressed to this socket */
	BSP_PROTO_DROP_RAIL,		/* rail number out of range */
	BSP_PROTO_DROP_NOCHAN,		/* new peer, no channel free */
	BSP_PROTO_DROP_MALFORMED,	/* inconsistent header fields */
	BSP_PROTO_DROP_TOOBIG,		/* message longer than the limit */
	BSP_PROTO_DROP_EPOCH,		/* epoch more than one ahead */
	BSP_PROTO_DROP_SEQ_WINDOW,	/* beyond the rail receive window */
	BSP_PROTO_DROP_MSG_WINDOW,	/* beyond the reassembly window */
	BSP_PROTO_DROP_NOBUFS,		/* receive buffer full */
	BSP_PROTO_DROP_NOMEM,		/* no memory for the message */
	BSP_PROTO_DROP_DUP,		/* already received */
	BSP_PROTO_DROP_AUTH,		/* MAC missing or wrong */
	BSP_PROTO_DROP_STALE,		/* for or from an earlier socket */
	__BSP_PROTO_DROP_MAX,
};

#define BSP_PROTO_DROP_SLOTS	32	/* size of bsp_proto_stats.drops[] */

struct bsp_proto_stats {
	__u64	data_tx;	/* DATA packets sent, retransmissions included */
	__u64	data_rx;	/* DATA packets accepted (new fragments) */
	__u64	bytes_tx;	/* payload bytes sent */
	__u64	bytes_rx;	/* payload bytes accepted */
	__u64	retx_hole;	/* resent: hole reported by an ack */
	__u64	retx_prod;	/* resent: answering a receiver's prod */
	__u64	retx_timeout;	/* resent: after a sender timeout probe */
	__u64	retx_failover;	/* resent on another rail (rail died) */
	__u64	spurious_rx;	/* retransmissions received twice */
	__u64	dup_rx;		/* duplicate DATA packets received */
	__u64	acks_tx;	/* explicit ACK packets sent */
	__u64	acks_rx;	/* explicit ACK packets received */
	__u64	ackreq_tx;	/* DATA packets that requested an ack */
	__u64	acked_piggy;	/* sent packets freed by ack fields */
	__u64	acked_implicit;	/* sent packets freed by the epoch rule */
	__u64	prods_tx;	/* PROD packets sent */
	__u64	prods_rx;	/* PROD packets received */
	__u64	prods_early;	/* prods answered without data (back-off) */
	__u64	probes_tx;	/* sender timeout probes sent */
	__u64	timeouts;	/* sender timeouts fired */
	__u64	rail_down;	/* rails declared dead */
	__u64	rail_up;	/* rails declared alive again */
	__u64	msgs_tx;	/* messages completed (sender side) */
	__u64	msgs_rx;	/* messages delivered (receiver side) */
	__u64	msgs_failed;	/* messages completed with an error */
	__u64	chan_closes;	/* peers forgotten because they closed */
	__u64	srtt_max_ns;	/* largest smoothed round trip of a peer */
	__u64	drops[BSP_PROTO_DROP_SLOTS];	/* by enum bsp_proto_drop */
	__u64	chans_evicted;	/* idle channels freed (net.bsp.chan_idle_ms) */
	__u64	evicts_tx;	/* EVICT requests sent */
	__u64	evicts_kept;	/* EVICT requests the peer refused */
	__u64	evicts_gone;	/* answers for channels no longer held */
	__u64	chan_restarts;	/* channels restarted after a message failed */
	__u64	msgs_abandoned;	/* partly received messages a reset dropped */
	__u64	chan_resets;	/* channels reset: the peer's channel is newer */
};

/* ---- control messages at level SOL_BSP ---- */

/* recvmsg: the epoch the sender stamped on the message (__u32). */
#define BSP_CMSG_EPOCH		1
/* sendmsg: BSP_SEND_* flags of this message (__u32). */
#define BSP_CMSG_SEND		2
/*
 * recvmsg(MSG_ERRQUEUE): a message this unconnected socket sent to another
 * node failed; struct sock_extended_err (linux/errqueue.h) with
 * ee_errno = EHOSTUNREACH (no progress, or no live rail, for unreach_ms),
 * ECONNRESET (the peer closed or restarted, or this socket closed first),
 * ee_origin = SO_EE_ORIGIN_LOCAL, ee_info = destination port,
 * ee_data = the message's number: the n-th message this socket sent to
 * another node (counting from 1, in the order sendmsg accepted them).
 * msg_name is the destination; no data is returned. Connected sockets
 * report failures through SO_ERROR (sk_err) instead.
 */
#define BSP_CMSG_ERR		3

/* The last message this socket sends to that peer in this superstep. */
#define BSP_SEND_LAST		0x1
/* Barrier traffic: never acknowledged implicitly (protocol.rst). */
#define BSP_SEND_SYNC		0x2

/* ---- sock_diag (NETLINK_SOCK_DIAG, sdiag_family = AF_BSP) ---- */

struct bsp_diag_req {
	__u8	sdiag_family;		/* AF_BSP */
	__u8	sdiag_protocol;		/* 0 */
	__u16	bdiag_port;		/* 0 = every port */
	__u32	bdiag_show;		/* BSP_DIAG_SHOW_* */
	__u32	bdiag_ino;		/* 0 = every socket */
	__u32	bdiag_cookie[2];
};

#define BSP_DIAG_SHOW_PEER	(1U << 0)	/* BSP_DIAG_PEER */
#define BSP_DIAG_SHOW_MEMINFO	(1U << 1)	/* BSP_DIAG_MEMINFO */
#define BSP_DIAG_SHOW_STATS	(1U << 2)	/* BSP_DIAG_STATS */
#define BSP_DIAG_SHOW_SUPERSTEP	(1U << 3)	/* BSP_DIAG_SUPERSTEP */
#define BSP_DIAG_SHOW_PROTO	(1U << 4)	/* BSP_DIAG_PROTO */

struct bsp_diag_msg {
	__u8	bdiag_family;		/* AF_BSP */
	__u8	bdiag_type;		/* SOCK_RDM */
	__u16	bdiag_port;		/* 0 if unbound */
	__u32	bdiag_node;		/* node id of the namespace */
	__u32	bdiag_ino;
	__u32	bdiag_cookie[2];
	__u32	bdiag_rqueue;		/* bytes queued for recvmsg */
	__u32	bdiag_wqueue;		/* bytes charged to the send buffer */
};

enum {
	BSP_DIAG_UNSPEC,
	BSP_DIAG_PEER,		/* struct sockaddr_bsp, connected sockets */
	BSP_DIAG_MEMINFO,	/* __u32[SK_MEMINFO_VARS] */
	BSP_DIAG_STATS,		/* struct bsp_sock_stats */
	BSP_DIAG_SUPERSTEP,	/* struct bsp_diag_superstep */
	BSP_DIAG_PROTO,		/* struct bsp_proto_stats */
	__BSP_DIAG_MAX,
};

#define BSP_DIAG_MAX (__BSP_DIAG_MAX - 1)

struct bsp_diag_superstep {
	__u32	epoch;
	__u32	group_size;
	__u64	pacing_rate;
};

/* ---- rtnetlink: the master device of kind "bsp" (ip -d link) ---- */

/*
 * Attributes of IFLA_INFO_DATA of a "bsp" link. The writable ones (ip link
 * add/set ... type bsp ...) are the namespace's net.bsp sysctls of the same
 * name, within the same bounds; the others are read-only (sent: EINVAL).
 * Documentation/admin-guide.rst, "The ip plugin".
 */
enum {
	IFLA_BSP_UNSPEC,
	IFLA_BSP_NODE_ID,		/* __u32 >= 1: net.bsp.node_id */
	IFLA_BSP_CLUSTER_ID,		/* __u32: net.bsp.cluster_id */
	IFLA_BSP_HELLO_MS,		/* __u32 1..60000: hello_interval_ms */
	IFLA_BSP_PEER_TIMEOUT_MS,	/* __u32 >= 1: peer_timeout_ms */
	IFLA_BSP_PEER_EXPIRE_MS,	/* __u32 >= 1: peer_expire_ms */
	IFLA_BSP_MAX_PEERS,		/* __u32 1..65536: max_peers */
	IFLA_BSP_PEERS,			/* __u32, read-only: peers known */
	IFLA_BSP_AUTH,			/* __u8, read-only: cluster key set */
	IFLA_BSP_RAILS,			/* nest, read-only: IFLA_BSP_RAIL */
	__IFLA_BSP_MAX,
};

#define IFLA_BSP_MAX (__IFLA_BSP_MAX - 1)

/* One IFLA_BSP_RAIL (nested) in IFLA_BSP_RAILS per enslaved device. */
#define IFLA_BSP_RAIL		1

enum {
	IFLA_BSP_RAIL_UNSPEC,
	IFLA_BSP_RAIL_INDEX,		/* __u8: rail number 0..7 */
	IFLA_BSP_RAIL_IFINDEX,		/* __u32: the enslaved device */
	IFLA_BSP_RAIL_UP,		/* __u8: running with carrier */
	__IFLA_BSP_RAIL_MAX,
};

#define IFLA_BSP_RAIL_MAX (__IFLA_BSP_RAIL_MAX - 1)

/* ---- per-namespace statistics, /proc/net/af_bsp/stats ---- */

/* Reasons a received frame is dropped; each is counted separately. */
enum bsp_drop_reason {
	BSP_DROP_SHORT,		/* shorter than its header */
	BSP_DROP_VERSION,	/* unknown protocol version */
	BSP_DROP_TYPE,		/* unknown frame type */
	BSP_DROP_CLUSTER,	/* hello of another cluster id */
	BSP_DROP_SELF,		/* hello carrying our own node id */
	BSP_DROP_NOT_RAIL,	/* arrived on a device that is no longer a rail */
	BSP_DROP_RAIL_MISMATCH,	/* hello of rail r heard on our rail s != r */
	BSP_DROP_PEER_TABLE_FULL, /* peer table at net.bsp.max_peers */
	BSP_DROP_ADDR,		/* destination node is not this node */
	BSP_DROP_ENGINE,	/* refused by the protocol engine (any reason) */
	BSP_DROP_NO_PORT,	/* no socket bound to the destination port */
	BSP_DROP_NOMEM,		/* allocation failed */
	BSP_DROP_CSUM,		/* hello with a wrong checksum */
	BSP_DROP_SRC_MAC,	/* source MAC not unicast, or not the one the
				 * peer table has for (node, arrival rail)
				 */
	BSP_DROP_PEER_CONFLICT,	/* unproven hello: would move a live peer to
				 * another MAC or incarnation
				 */
	BSP_DROP_REPLAY,	/* hello not newer than the last one heard */
	BSP_DROP_MEM,		/* data refused: net.bsp.mem reached */
	BSP_DROP_AUTH,		/* hello without the cluster key's MAC (or
				 * with one while no key is set)
				 */
	__BSP_DROP_MAX,
};

/*
 * The XDP pre-filter's state (ebpf/xdp_bsp.bpf.c, tools/bsp-xdp): the one
 * value of a BPF_MAP_TYPE_ARRAY map (key __u32 0, max_entries 1), created
 * by user space (its creation fd read-only, BPF_F_RDONLY) and written only
 * by the module (BSP_XDP_STATE). Every field is written with a single
 * store, so the program reads each consistently.
 */
#define BSP_XDP_MAX_RAILS	8
#define BSP_XDP_PORT_WORDS	(65536 / 64)

struct bsp_xdp_state {
	__u32	active;		/* 1 while the module keeps this map */
	__u32	node_id;	/* net.bsp.node_id */
	__u32	cluster_id;	/* net.bsp.cluster_id */
	__u32	reserved;
	__u32	rail_ifindex[BSP_XDP_MAX_RAILS];	/* 0: no rail */
	__u64	ports[BSP_XDP_PORT_WORDS];	/* bit p: port p is bound */
};

#endif /* _UAPI_LINUX_BSP_H */
