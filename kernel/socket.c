// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP sockets: the address family, struct proto and the proto_ops of
 * SOCK_RDM sockets (reliable datagrams, message boundaries kept).
 *
 * Contexts: every proto_ops entry runs in process context and may sleep.
 * lock_sock serialises bind/connect/setsockopt against each other;
 * sendmsg and recvmsg take it only briefly (never while sleeping), so
 * several threads may send and receive on one socket at once.
 *
 * Lifetime: a socket holds a reference on the module (through
 * bsp_ops.owner), so rmmod fails with EBUSY while any AF_BSP socket
 * exists. Sockets are freed after an RCU grace period (SOCK_RCU_FREE)
 * because the port table is read under RCU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errqueue.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/sockios.h>
#include <linux/termios.h>
#include <linux/uaccess.h>
#include <net/sock.h>

#include "af_bsp.h"
#include "transport.h"

static struct proto bsp_proto = {
	.name		= "AF_BSP",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct bsp_sock),
};

static const struct proto_ops bsp_ops;

/* Validate a user address. Returns 0 or the errno a caller expects. */
static int bsp_check_addr(const struct sockaddr *uaddr, int len)
{
	const struct sockaddr_bsp *a = (const struct sockaddr_bsp *)uaddr;

	if (len < (int)sizeof(*a))
		return -EINVAL;
	if (a->sbsp_family != bsp_family)
		return -EAFNOSUPPORT;
	if (memchr_inv(a->sbsp_zero, 0, sizeof(a->sbsp_zero)))
		return -EINVAL;
	return 0;
}

static bool bsp_node_is_local(struct bsp_net *bn, u32 node)
{
	return node == BSP_NODE_LOCAL || node == bsp_node_id(bn);
}

static void bsp_fill_addr(struct sockaddr_bsp *a, u32 node, u16 port)
{
	memset(a, 0, sizeof(*a));
	a->sbsp_family = bsp_family;
	a->sbsp_port = port;
	a->sbsp_node = node;
}

/* lock_sock held: bind to @port and create the rail transport. */
static int bsp_do_bind(struct sock *sk, u16 port)
{
	struct bsp_net *bn = bsp_pernet(sock_net(sk));
	struct bsp_sock *bs = bsp_sk(sk);
	int err;

	err = bsp_port_bind(bn, bs, port);
	if (err)
		return err;
	err = bsp_transport_create(bs);
	if (err) {
		bsp_port_unbind(bn, bs);
		bs->port = 0;
		return err;
	}
	/* superstep state set before bind reaches the engine now */
	err = bsp_transport_set_group(bs);
	if (err) {
		/* the group does not fit: the socket stays unbound */
		bsp_port_unbind(bn, bs);
		bsp_transport_destroy(bs);
		bs->port = 0;
		return err;
	}
	if (bs->pacing_rate)
		bsp_transport_set_pacing(bs, bs->pacing_rate);
	bsp_port_publish(bn, bs);
	return 0;
}

static int bsp_autobind(struct sock *sk)
{
	int err = 0;

	lock_sock(sk);
	if (!bsp_sk(sk)->port)
		err = bsp_do_bind(sk, BSP_PORT_ANY);
	release_sock(sk);
	return err;
}

static int bsp_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct bsp_net *bn;
	struct bsp_sock *bs;

	if (!sk)
		return 0;
	bs = bsp_sk(sk);
	bn = bsp_pernet(sock_net(sk));

	/* linger for unacknowledged data, then settle the engine */
	bsp_transport_close(bs);

	lock_sock(sk);
	sock_orphan(sk);
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	bsp_port_unbind(bn, bs);
	release_sock(sk);

	bsp_deliver_purge(sk);
	skb_queue_purge(&sk->sk_receive_queue);
	skb_queue_purge(&sk->sk_error_queue);
	bsp_sock_list_del(bn, bs);

	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

static int bsp_bind(struct socket *sock, struct sockaddr *uaddr, int len)
{
	const struct sockaddr_bsp *a = (const struct sockaddr_bsp *)uaddr;
	struct sock *sk = sock->sk;
	struct bsp_net *bn = bsp_pernet(sock_net(sk));
	int err;

	err = bsp_check_addr(uaddr, len);
	if (err)
		return err;
	if (!bsp_node_is_local(bn, a->sbsp_node))
		return -EADDRNOTAVAIL;

	lock_sock(sk);
	err = bsp_sk(sk)->port ? -EINVAL : bsp_do_bind(sk, a->sbsp_port);
	release_sock(sk);
	return err;
}

static int bsp_connect(struct socket *sock, struct sockaddr *uaddr, int len,
		       int flags)
{
	const struct sockaddr_bsp *a = (const struct sockaddr_bsp *)uaddr;
	struct sock *sk = sock->sk;
	struct bsp_sock *bs = bsp_sk(sk);
	struct bsp_net *bn = bsp_pernet(sock_net(sk));
	int err;

	if (len >= (int)sizeof(sa_family_t) &&
	    uaddr->sa_family == AF_UNSPEC) {
		lock_sock(sk);
		WRITE_ONCE(bs->connected, false);
		memset(&bs->peer, 0, sizeof(bs->peer));
		release_sock(sk);
		return 0;
	}
	err = bsp_check_addr(uaddr, len);
	if (err)
		return err;
	if (!a->sbsp_port)
		return -EINVAL;
	if (!bsp_node_is_local(bn, a->sbsp_node) &&
	    !bsp_transport_node_reachable(bn, a->sbsp_node))
		return -EHOSTUNREACH;
	err = bsp_autobind(sk);
	if (err)
		return err;

	lock_sock(sk);
	/* A local peer is recorded by its node id, so getpeername() and
	 * sock_diag name it as getsockname() names this socket.
	 */
	bsp_fill_addr(&bs->peer,
		      bsp_node_is_local(bn, a->sbsp_node) ? bsp_node_id(bn) :
		      a->sbsp_node, a->sbsp_port);
	WRITE_ONCE(bs->connected, true);
	release_sock(sk);
	return 0;
}

static int bsp_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct sockaddr_bsp *a = (struct sockaddr_bsp *)uaddr;
	struct sock *sk = sock->sk;
	struct bsp_sock *bs = bsp_sk(sk);
	int err = sizeof(*a);

	lock_sock(sk);
	if (peer) {
		if (bs->connected)
			*a = bs->peer;
		else
			err = -ENOTCONN;
	} else {
		bsp_fill_addr(a, bsp_node_id(bsp_pernet(sock_net(sk))),
			      bs->port);
	}
	release_sock(sk);
	return err;
}

static int bsp_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sock *sk = sock->sk;
	struct sk_buff *skb;
	int amount;

	switch (cmd) {
	case SIOCINQ:
		/* length of the next message, as for UDP */
		spin_lock_bh(&sk->sk_receive_queue.lock);
		skb = skb_peek(&sk->sk_receive_queue);
		amount = skb ? skb->len : 0;
		spin_unlock_bh(&sk->sk_receive_queue.lock);
		return put_user(amount, (int __user *)arg);
	case SIOCOUTQ:
		amount = sk_wmem_alloc_get(sk);
		return put_user(amount, (int __user *)arg);
	default:
		return -ENOIOCTLCMD;
	}
}

static int bsp_shutdown(struct socket *sock, int how)
{
	struct sock *sk = sock->sk;

	/* SHUT_RD (0) -> RCV_SHUTDOWN, SHUT_WR (1) -> SEND_SHUTDOWN, ... */
	how++;
	if (how & ~SHUTDOWN_MASK || !how)
		return -EINVAL;
	lock_sock(sk);
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | how);
	release_sock(sk);
	sk->sk_state_change(sk);
	if (how & RCV_SHUTDOWN)
		bsp_deliver_purge(sk);
	return 0;
}

/*
 * Resolve the destination of a sendmsg: the address given, else the
 * connected peer. Returns 0 or -EINVAL/-EAFNOSUPPORT/-EDESTADDRREQ.
 */
static int bsp_send_dest(struct bsp_sock *bs, struct msghdr *msg,
			 struct sockaddr_bsp *dst)
{
	int err;

	if (msg->msg_name) {
		err = bsp_check_addr(msg->msg_name, msg->msg_namelen);
		if (err)
			return err;
		*dst = *(struct sockaddr_bsp *)msg->msg_name;
		if (!dst->sbsp_port)
			return -EINVAL;
		return 0;
	}
	lock_sock(&bs->sk);
	err = bs->connected ? 0 : -EDESTADDRREQ;
	if (!err)
		*dst = bs->peer;
	release_sock(&bs->sk);
	return err;
}

/* Control messages of sendmsg: BSP_CMSG_SEND only. */
static int bsp_send_cmsg(struct msghdr *msg, u32 *flags)
{
	struct cmsghdr *cmsg;

	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_BSP ||
		    cmsg->cmsg_type != BSP_CMSG_SEND ||
		    cmsg->cmsg_len != CMSG_LEN(sizeof(u32)))
			return -EINVAL;
		memcpy(flags, CMSG_DATA(cmsg), sizeof(u32));
		if (*flags & ~(BSP_SEND_LAST | BSP_SEND_SYNC))
			return -EINVAL;
	}
	return 0;
}

static int bsp_sendmsg(struct socket *sock, struct msghdr *msg, size_t len)
{
	struct sock *sk = sock->sk;
	struct bsp_sock *bs = bsp_sk(sk);
	struct bsp_net *bn = bsp_pernet(sock_net(sk));
	bool noblock = msg->msg_flags & MSG_DONTWAIT;
	struct sockaddr_bsp dst;
	struct sk_buff *skb;
	u32 send_flags = 0;
	bool local;
	long timeo;
	int err;

	if (msg->msg_flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (len > BSP_MSG_MAX)
		return -EMSGSIZE;
	err = bsp_send_dest(bs, msg, &dst);
	if (err)
		return err;
	err = bsp_send_cmsg(msg, &send_flags);
	if (err)
		return err;
	if (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN) {
		if (!(msg->msg_flags & MSG_NOSIGNAL))
			send_sig(SIGPIPE, current, 0);
		return -EPIPE;
	}
	local = bsp_node_is_local(bn, dst.sbsp_node);
	if (!local && !bsp_transport_node_reachable(bn, dst.sbsp_node))
		return -EHOSTUNREACH;
	err = bsp_autobind(sk);
	if (err)
		return err;

	timeo = sock_sndtimeo(sk, noblock);
	skb = bsp_msg_alloc(sk, len, noblock, &err);
	if (!skb)
		return err;
	err = skb_copy_datagram_from_iter(skb, 0, &msg->msg_iter, len);
	if (err)
		goto free;

	bsp_cb(skb)->src_node = bsp_node_id(bn);
	bsp_cb(skb)->src_port = bs->port;
	bsp_cb(skb)->dst_port = dst.sbsp_port;
	bsp_cb(skb)->epoch = READ_ONCE(bs->epoch);

	if (local) {
		err = bsp_deliver_local(bn, skb, dst.sbsp_port);
		if (err)
			goto free;
		atomic64_inc(&bs->stats.tx_local_msgs);
	} else {
		err = bsp_transport_send(bs, skb, dst.sbsp_node, dst.sbsp_port,
					 send_flags, noblock, &timeo);
		if (err)
			goto free;
		atomic64_inc(&bs->stats.tx_remote_msgs);
	}
	atomic64_inc(&bs->stats.tx_msgs);
	atomic64_add(len, &bs->stats.tx_bytes);
	return len;
free:
	kfree_skb(skb);
	return err;
}

/*
 * recvmsg(MSG_ERRQUEUE): the report of one failed message (see
 * BSP_CMSG_ERR): its destination in msg_name, a struct sock_extended_err
 * in the control message, no data. -EAGAIN if there is none.
 */
static int bsp_recv_error(struct sock *sk, struct msghdr *msg)
{
	DECLARE_SOCKADDR(struct sockaddr_bsp *, addr, msg->msg_name);
	struct sock_exterr_skb *serr;
	struct sk_buff *skb;

	skb = sock_dequeue_err_skb(sk);
	if (!skb)
		return -EAGAIN;
	if (addr) {
		skb_copy_bits(skb, 0, addr, sizeof(*addr));
		msg->msg_namelen = sizeof(*addr);
	}
	serr = SKB_EXT_ERR(skb);
	put_cmsg(msg, SOL_BSP, BSP_CMSG_ERR, sizeof(serr->ee), &serr->ee);
	msg->msg_flags |= MSG_ERRQUEUE;
	kfree_skb(skb);
	return 0;
}

/*
 * Process context: free message @skb once read. Its frag_list (kept
 * frames, or buffer chunks) goes back to this CPU's NAPI skb cache, as
 * a received frame that is copied does in the softirq, for the next frames
 * this CPU builds or receives.
 */
static void bsp_msg_free_read(struct sk_buff *skb)
{
	struct sk_buff *list, *next;

	if (!skb_unref(skb))
		return;
	list = skb_shinfo(skb)->frag_list;
	if (list && !skb_cloned(skb))
		skb_shinfo(skb)->frag_list = NULL;
	else
		list = NULL;
	consume_skb(skb);
	if (!list)
		return;
	local_bh_disable();
	skb_list_walk_safe(list, list, next) {
		skb_mark_not_on_list(list);
		napi_consume_skb(list, 1);
	}
	local_bh_enable();
}

static int bsp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		       int flags)
{
	DECLARE_SOCKADDR(struct sockaddr_bsp *, addr, msg->msg_name);
	struct sock *sk = sock->sk;
	struct bsp_sock *bs = bsp_sk(sk);
	struct sk_buff *skb;
	size_t copied;
	int err;

	if (flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (flags & MSG_ERRQUEUE)
		return bsp_recv_error(sk, msg);

	skb = skb_recv_datagram(sk, flags, &err);
	if (!skb)
		return err;

	copied = skb->len;
	if (copied > len) {
		copied = len;
		msg->msg_flags |= MSG_TRUNC;
	}
	err = skb_copy_datagram_msg(skb, 0, msg, copied);
	if (err)
		goto out;

	if (addr) {
		bsp_fill_addr(addr, bsp_cb(skb)->src_node,
			      bsp_cb(skb)->src_port);
		msg->msg_namelen = sizeof(*addr);
	}
	if (READ_ONCE(bs->recv_epoch)) {
		u32 epoch = bsp_cb(skb)->epoch;

		put_cmsg(msg, SOL_BSP, BSP_CMSG_EPOCH, sizeof(epoch), &epoch);
	}
	err = (flags & MSG_TRUNC) ? skb->len : copied;
	if (!(flags & MSG_PEEK)) {
		atomic64_inc(&bs->stats.rx_msgs);
		atomic64_add(skb->len, &bs->stats.rx_bytes);
		if (bsp_cb(skb)->remote)
			atomic64_inc(&bs->stats.rx_remote_msgs);
	}
out:
	/* a message that could not be copied is gone too (as for UDP) */
	bsp_msg_free_read(skb);
	if (!(flags & MSG_PEEK)) {
		bsp_deliver_pending(sk);
		bsp_transport_rx_room(bs);
	}
	return err;
}

static void bsp_sock_destruct(struct sock *sk)
{
	struct bsp_sock *bs = bsp_sk(sk);

	skb_queue_purge(&sk->sk_receive_queue);
	skb_queue_purge(&sk->sk_error_queue);
	bsp_deliver_purge(sk);
	bsp_superstep_release(bs);
	bsp_transport_free(bs);
	WARN_ON_ONCE(atomic_read(&sk->sk_rmem_alloc));
}

static int bsp_create(struct net *net, struct socket *sock, int protocol,
		      int kern)
{
	struct bsp_sock *bs;
	struct sock *sk;

	if (sock->type != SOCK_RDM)
		return -ESOCKTNOSUPPORT;
	if (protocol)
		return -EPROTONOSUPPORT;

	sk = sk_alloc(net, bsp_family, GFP_KERNEL, &bsp_proto, kern);
	if (!sk)
		return -ENOMEM;
	sock->ops = &bsp_ops;
	sock->state = SS_UNCONNECTED;
	sock_init_data(sock, sk);
	/*
	 * The namespace's defaults, not net.core's (sized for one UDP or
	 * raw socket): a superstep's messages to and from every peer are
	 * outstanding at once, and are bounded by net.bsp.mem anyway.
	 */
	sk->sk_rcvbuf = READ_ONCE(bsp_pernet(net)->rmem_default);
	sk->sk_sndbuf = READ_ONCE(bsp_pernet(net)->wmem_default);
	sock_set_flag(sk, SOCK_RCU_FREE);
	sk->sk_destruct = bsp_sock_destruct;

	/* sk_alloc zeroed all of it (bsp_proto.obj_size): unbound, no group */
	bs = bsp_sk(sk);
	skb_queue_head_init(&bs->pending);

	bsp_sock_list_add(bsp_pernet(net), bs);
	return 0;
}

/*
 * .family is informational only (the core dispatches on
 * bsp_family_ops.family, set from the module parameter).
 */
static const struct proto_ops bsp_ops = {
	.family		= PF_BSP,
	.owner		= THIS_MODULE,
	.release	= bsp_release,
	.bind		= bsp_bind,
	.connect	= bsp_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= bsp_getname,
	.poll		= datagram_poll,
	.ioctl		= bsp_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= bsp_shutdown,
	.setsockopt	= bsp_setsockopt,
	.getsockopt	= bsp_getsockopt,
	.sendmsg	= bsp_sendmsg,
	.recvmsg	= bsp_recvmsg,
	.mmap		= sock_no_mmap,
	.sendpage	= sock_no_sendpage,
};

static struct net_proto_family bsp_family_ops = {
	.create	= bsp_create,
	.owner	= THIS_MODULE,
};

int bsp_socket_register(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct sockaddr_bsp) != 16);
	BUILD_BUG_ON(sizeof(struct bsp_endpoint) != 8);
	BUILD_BUG_ON(sizeof(struct bsp_group) != 8);
	BUILD_BUG_ON(sizeof(struct bsp_expect) != 24);
	BUILD_BUG_ON(sizeof(struct bsp_sock_stats) != 128);
	BUILD_BUG_ON(sizeof(struct bsp_diag_req) != 20);
	BUILD_BUG_ON(sizeof(struct bsp_diag_msg) != 28);
	BUILD_BUG_ON(sizeof(struct bsp_diag_superstep) != 16);
	BUILD_BUG_ON(sizeof(struct bsp_proto_stats) != 528);

	bsp_family_ops.family = bsp_family;

	err = proto_register(&bsp_proto, 1);
	if (err)
		return err;
	err = sock_register(&bsp_family_ops);
	if (err) {
		pr_err("family %d is taken (%d); load with family=N\n",
		       bsp_family, err);
		proto_unregister(&bsp_proto);
	}
	return err;
}

void bsp_socket_unregister(void)
{
	sock_unregister(bsp_family);
	proto_unregister(&bsp_proto);
}
