// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP sock_diag handler: lets ss-like tools list the AF_BSP sockets of
 * a namespace over NETLINK_SOCK_DIAG (request struct bsp_diag_req with
 * sdiag_family = the family in effect, answers struct bsp_diag_msg plus
 * BSP_DIAG_* attributes chosen by bdiag_show).
 *
 * Context: process context (netlink). Dumps walk the namespace's socket
 * list under RCU and resume by position.
 */
#include <linux/module.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "af_bsp.h"
#include "transport.h"

static int bsp_diag_fill(struct sock *sk, struct sk_buff *skb,
			 const struct bsp_diag_req *req, u32 portid, u32 seq,
			 u32 flags, unsigned long ino)
{
	struct bsp_net *bn = bsp_pernet(sock_net(sk));
	struct bsp_sock *bs = bsp_sk(sk);
	struct bsp_diag_msg *rep;
	struct nlmsghdr *nlh;

	nlh = nlmsg_put(skb, portid, seq, SOCK_DIAG_BY_FAMILY, sizeof(*rep),
			flags);
	if (!nlh)
		return -EMSGSIZE;
	rep = nlmsg_data(nlh);
	memset(rep, 0, sizeof(*rep));
	rep->bdiag_family = bsp_family;
	rep->bdiag_type = sk->sk_type;
	rep->bdiag_port = READ_ONCE(bs->port);
	rep->bdiag_node = bsp_node_id(bn);
	rep->bdiag_ino = ino;
	sock_diag_save_cookie(sk, rep->bdiag_cookie);
	rep->bdiag_rqueue = sk_rmem_alloc_get(sk);
	rep->bdiag_wqueue = sk_wmem_alloc_get(sk);

	if (req->bdiag_show & BSP_DIAG_SHOW_PEER) {
		struct sockaddr_bsp peer;
		bool connected;

		/* racy snapshot without lock_sock: only for display */
		connected = READ_ONCE(bs->connected);
		peer = bs->peer;
		if (connected &&
		    nla_put(skb, BSP_DIAG_PEER, sizeof(peer), &peer))
			goto cancel;
	}
	if ((req->bdiag_show & BSP_DIAG_SHOW_MEMINFO) &&
	    sock_diag_put_meminfo(sk, skb, BSP_DIAG_MEMINFO))
		goto cancel;
	if (req->bdiag_show & BSP_DIAG_SHOW_STATS) {
		struct bsp_sock_stats st = { };

		bsp_sock_stats_read(bs, &st);
		if (nla_put_64bit(skb, BSP_DIAG_STATS, sizeof(st), &st,
				  BSP_DIAG_UNSPEC))
			goto cancel;
	}
	if (req->bdiag_show & BSP_DIAG_SHOW_PROTO) {
		struct bsp_proto_stats pst;

		bsp_transport_proto_stats(bs, &pst);
		if (nla_put_64bit(skb, BSP_DIAG_PROTO, sizeof(pst), &pst,
				  BSP_DIAG_UNSPEC))
			goto cancel;
	}
	if (req->bdiag_show & BSP_DIAG_SHOW_SUPERSTEP) {
		struct bsp_diag_superstep ss = {
			.epoch = READ_ONCE(bs->epoch),
			.group_size = READ_ONCE(bs->group_size),
			.pacing_rate = READ_ONCE(bs->pacing_rate),
		};

		if (nla_put_64bit(skb, BSP_DIAG_SUPERSTEP, sizeof(ss), &ss,
				  BSP_DIAG_UNSPEC))
			goto cancel;
	}
	nlmsg_end(skb, nlh);
	return 0;
cancel:
	nlmsg_cancel(skb, nlh);
	return -EMSGSIZE;
}

/* Room for one answer with the attributes @req asks for. */
static size_t bsp_diag_msg_size(const struct bsp_diag_req *req)
{
	size_t size = NLMSG_ALIGN(sizeof(struct bsp_diag_msg));

	if (req->bdiag_show & BSP_DIAG_SHOW_PEER)
		size += nla_total_size(sizeof(struct sockaddr_bsp));
	if (req->bdiag_show & BSP_DIAG_SHOW_MEMINFO)
		size += nla_total_size(SK_MEMINFO_VARS * sizeof(u32));
	if (req->bdiag_show & BSP_DIAG_SHOW_STATS)
		size += nla_total_size_64bit(sizeof(struct bsp_sock_stats));
	if (req->bdiag_show & BSP_DIAG_SHOW_PROTO)
		size += nla_total_size_64bit(sizeof(struct bsp_proto_stats));
	if (req->bdiag_show & BSP_DIAG_SHOW_SUPERSTEP)
		size += nla_total_size_64bit(sizeof(struct bsp_diag_superstep));
	return size;
}

static bool bsp_diag_match(struct sock *sk, const struct bsp_diag_req *req,
			   unsigned long ino)
{
	if (!ino)
		return false;
	if (req->bdiag_port && req->bdiag_port != READ_ONCE(bsp_sk(sk)->port))
		return false;
	if (req->bdiag_ino && req->bdiag_ino != ino)
		return false;
	return true;
}

/*
 * A dump resumes by position in the namespace's socket list; a socket
 * added or removed between two parts shifts the positions, so the parts
 * are stamped with the list's generation and netlink flags the messages
 * of an inconsistent dump NLM_F_DUMP_INTR (the reader retries).
 */
static int bsp_diag_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct bsp_diag_req *req = nlmsg_data(cb->nlh);
	struct bsp_net *bn = bsp_pernet(sock_net(skb->sk));
	long skip = cb->args[0], num = 0;
	struct bsp_sock *bs;

	cb->seq = READ_ONCE(bn->socks_gen);
	rcu_read_lock();
	hlist_for_each_entry_rcu(bs, &bn->socks, list_node) {
		struct sock *sk = &bs->sk;
		unsigned long ino;
		int before;

		if (num++ < skip)
			continue;
		ino = sock_i_ino(sk);
		if (!bsp_diag_match(sk, req, ino))
			continue;
		before = skb->len;
		if (bsp_diag_fill(sk, skb, req, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, NLM_F_MULTI, ino) < 0) {
			num--;
			break;
		}
		nl_dump_check_consistent(cb, (struct nlmsghdr *)(skb->data +
								 before));
	}
	rcu_read_unlock();
	cb->args[0] = num;
	return skb->len;
}

static int bsp_diag_get_exact(struct sk_buff *in_skb,
			      const struct nlmsghdr *nlh,
			      const struct bsp_diag_req *req)
{
	struct net *net = sock_net(in_skb->sk);
	struct bsp_net *bn = bsp_pernet(net);
	struct sock *sk = NULL;
	struct bsp_sock *bs;
	struct sk_buff *rep;
	int err;

	if (!req->bdiag_ino)
		return -EINVAL;
	rcu_read_lock();
	hlist_for_each_entry_rcu(bs, &bn->socks, list_node) {
		if (sock_i_ino(&bs->sk) == req->bdiag_ino &&
		    refcount_inc_not_zero(&bs->sk.sk_refcnt)) {
			sk = &bs->sk;
			break;
		}
	}
	rcu_read_unlock();
	if (!sk)
		return -ENOENT;

	err = sock_diag_check_cookie(sk, req->bdiag_cookie);
	if (err)
		goto out;
	err = -ENOMEM;
	rep = nlmsg_new(bsp_diag_msg_size(req), GFP_KERNEL);
	if (!rep)
		goto out;
	err = bsp_diag_fill(sk, rep, req, NETLINK_CB(in_skb).portid,
			    nlh->nlmsg_seq, 0, req->bdiag_ino);
	if (err < 0) {
		nlmsg_free(rep);
		goto out;
	}
	err = nlmsg_unicast(net->diag_nlsk, rep, NETLINK_CB(in_skb).portid);
out:
	sock_put(sk);
	return err;
}

static int bsp_diag_handler_dump(struct sk_buff *skb, struct nlmsghdr *h)
{
	if (nlmsg_len(h) < sizeof(struct bsp_diag_req))
		return -EINVAL;
	if (h->nlmsg_flags & NLM_F_DUMP) {
		struct netlink_dump_control c = {
			.dump	= bsp_diag_dump,
			.module	= THIS_MODULE,
		};

		return netlink_dump_start(sock_net(skb->sk)->diag_nlsk, skb, h,
					  &c);
	}
	return bsp_diag_get_exact(skb, h, nlmsg_data(h));
}

static struct sock_diag_handler bsp_diag_handler = {
	.owner	= THIS_MODULE,
	.dump	= bsp_diag_handler_dump,
};

int bsp_diag_register(void)
{
	bsp_diag_handler.family = bsp_family;
	return sock_diag_register(&bsp_diag_handler);
}

void bsp_diag_unregister(void)
{
	sock_diag_unregister(&bsp_diag_handler);
}
