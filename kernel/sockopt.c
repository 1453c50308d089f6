// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP socket options at level SOL_BSP: the superstep interface
 * (group, barrier completion, expected volume), the pacing rate and the
 * per-socket counters. See Documentation/socket-api.rst.
 *
 * Context: process context; the superstep state is changed under
 * lock_sock. The data path reads epoch and pacing rate with READ_ONCE.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/bsearch.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include "af_bsp.h"
#include "transport.h"
#include "xdp.h"

static int bsp_endpoint_cmp(const void *a, const void *b)
{
	const struct bsp_endpoint *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return 0;
}

/* Index of @ep in the (sorted) group, or -1. lock_sock held. */
static int bsp_group_find(struct bsp_sock *bs, const struct bsp_endpoint *ep)
{
	struct bsp_endpoint key = { .node = ep->node, .port = ep->port };
	struct bsp_endpoint *m;

	if (!bs->group)
		return -1;
	m = bsearch(&key, bs->group, bs->group_size, sizeof(key),
		    bsp_endpoint_cmp);
	return m ? m - bs->group : -1;
}

void bsp_superstep_release(struct bsp_sock *bs)
{
	kvfree(bs->group);
	kvfree(bs->expect);
	bs->group = NULL;
	bs->expect = NULL;
	bs->group_size = 0;
}

static int bsp_set_group(struct bsp_sock *bs, sockptr_t optval,
			 unsigned int optlen)
{
	struct bsp_endpoint *members = NULL;
	struct bsp_expect *expect = NULL;
	struct bsp_group hdr;
	int err;
	u32 i;

	if (optlen < sizeof(hdr))
		return -EINVAL;
	if (copy_from_sockptr(&hdr, optval, sizeof(hdr)))
		return -EFAULT;
	if (hdr.reserved || hdr.count > BSP_GROUP_MAX)
		return -EINVAL;
	if (optlen != sizeof(hdr) + (size_t)hdr.count * sizeof(*members))
		return -EINVAL;

	if (hdr.count) {
		members = kvcalloc(hdr.count, sizeof(*members), GFP_KERNEL);
		expect = kvcalloc(hdr.count, sizeof(*expect), GFP_KERNEL);
		err = -ENOMEM;
		if (!members || !expect)
			goto out_free;
		err = -EFAULT;
		if (copy_from_sockptr_offset(members, optval, sizeof(hdr),
					     hdr.count * sizeof(*members)))
			goto out_free;
		err = -EINVAL;
		for (i = 0; i < hdr.count; i++) {
			if (members[i].reserved || !members[i].port)
				goto out_free;
		}
		sort(members, hdr.count, sizeof(*members), bsp_endpoint_cmp,
		     NULL);
		for (i = 1; i < hdr.count; i++) {
			if (!bsp_endpoint_cmp(&members[i - 1], &members[i]))
				goto out_free;	/* duplicate member */
		}
		for (i = 0; i < hdr.count; i++)
			expect[i].peer = members[i];
	}

	lock_sock(&bs->sk);
	bsp_superstep_release(bs);
	bs->group = members;
	bs->expect = expect;
	bs->group_size = hdr.count;
	WRITE_ONCE(bs->epoch, 0);
	err = bsp_transport_set_group(bs);
	release_sock(&bs->sk);
	return err;

out_free:
	kvfree(members);
	kvfree(expect);
	return err;
}

static int bsp_set_barrier_done(struct bsp_sock *bs, u32 epoch)
{
	int err = 0;

	lock_sock(&bs->sk);
	if (!bs->group_size)
		err = -ENOTCONN;	/* no group: no superstep to complete */
	else if (epoch <= bs->epoch)
		err = -EINVAL;
	else
		WRITE_ONCE(bs->epoch, epoch);
	if (!err) {
		/* the engine clears it too (bspe_superstep_done) */
		WRITE_ONCE(bs->follow, false);
		bsp_transport_superstep_done(bs, epoch);
	}
	if (!err && bs->expect) {
		u32 i;

		/* expectations belong to one superstep */
		for (i = 0; i < bs->group_size; i++) {
			bs->expect[i].messages = 0;
			bs->expect[i].bytes = 0;
		}
	}
	release_sock(&bs->sk);
	return err;
}

static int bsp_set_expect(struct bsp_sock *bs, const struct bsp_expect *e)
{
	int idx, err = 0;

	if ((e->flags & ~BSP_EXPECT_SYNC) || e->peer.reserved)
		return -EINVAL;
	lock_sock(&bs->sk);
	idx = bsp_group_find(bs, &e->peer);
	if (idx < 0) {
		err = bs->group_size ? -ESRCH : -ENOTCONN;
	} else {
		bs->expect[idx] = *e;
		err = bsp_transport_expect(bs, e);
	}
	release_sock(&bs->sk);
	return err;
}

static int bsp_set_follow(struct bsp_sock *bs, bool follow)
{
	int err = 0;

	lock_sock(&bs->sk);
	if (!bs->group_size) {
		err = -ENOTCONN;	/* no group: no superstep */
	} else {
		WRITE_ONCE(bs->follow, follow);
		bsp_transport_set_follow(bs, follow);
	}
	release_sock(&bs->sk);
	return err;
}

/* The channel ceiling is fixed when bind creates the transport. */
static int bsp_set_channels(struct bsp_sock *bs, u32 val)
{
	int err = 0;

	if (!val || val > BSP_GROUP_MAX)
		return -EINVAL;
	lock_sock(&bs->sk);
	if (bs->tp)
		err = -EBUSY;
	else
		bs->chans = val;
	release_sock(&bs->sk);
	return err;
}

int bsp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen)
{
	struct bsp_sock *bs = bsp_sk(sock->sk);
	struct bsp_expect e;
	u64 rate;
	u32 val;

	if (level != SOL_BSP)
		return -ENOPROTOOPT;

	switch (optname) {
	case BSP_GROUP:
		return bsp_set_group(bs, optval, optlen);
	case BSP_BARRIER_DONE:
		if (optlen != sizeof(val))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		return bsp_set_barrier_done(bs, val);
	case BSP_EXPECT:
		if (optlen != sizeof(e))
			return -EINVAL;
		if (copy_from_sockptr(&e, optval, sizeof(e)))
			return -EFAULT;
		return bsp_set_expect(bs, &e);
	case BSP_PACING_RATE:
		if (optlen != sizeof(rate))
			return -EINVAL;
		if (copy_from_sockptr(&rate, optval, sizeof(rate)))
			return -EFAULT;
		lock_sock(&bs->sk);
		WRITE_ONCE(bs->pacing_rate, rate);
		bsp_transport_set_pacing(bs, rate);
		release_sock(&bs->sk);
		return 0;
	case BSP_RECVEPOCH:
		if (optlen < sizeof(int))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		WRITE_ONCE(bs->recv_epoch, !!val);
		return 0;
	case BSP_CHANNELS:
		if (optlen != sizeof(val))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		return bsp_set_channels(bs, val);
	case BSP_FOLLOW:
		if (optlen < sizeof(int))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		return bsp_set_follow(bs, !!val);
	case BSP_XDP_STATE:
		if (!ns_capable(sock_net(sock->sk)->user_ns, CAP_NET_ADMIN))
			return -EPERM;
		if (optlen != sizeof(val))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		return bsp_xdp_set_state(bsp_pernet(sock_net(sock->sk)),
					 (int)val);
	case BSP_EPOCH:
	case BSP_SOCK_STATS:
	case BSP_PROTO_STATS:
		return -EPERM;	/* read-only */
	default:
		return -ENOPROTOOPT;
	}
}

void bsp_sock_stats_read(struct bsp_sock *bs, struct bsp_sock_stats *st)
{
	st->tx_msgs = atomic64_read(&bs->stats.tx_msgs);
	st->tx_bytes = atomic64_read(&bs->stats.tx_bytes);
	st->rx_msgs = atomic64_read(&bs->stats.rx_msgs);
	st->rx_bytes = atomic64_read(&bs->stats.rx_bytes);
	st->tx_local_msgs = atomic64_read(&bs->stats.tx_local_msgs);
	st->tx_remote_msgs = atomic64_read(&bs->stats.tx_remote_msgs);
	st->tx_errors = atomic64_read(&bs->stats.tx_errors);
	st->rx_remote_msgs = atomic64_read(&bs->stats.rx_remote_msgs);
	bsp_transport_stats(bs, st);
}

static int bsp_get_group(struct bsp_sock *bs, char __user *optval,
			 int __user *optlen, int len)
{
	struct bsp_group hdr = { };
	size_t need;
	int err = 0;

	lock_sock(&bs->sk);
	hdr.count = bs->group_size;
	need = sizeof(hdr) + (size_t)hdr.count * sizeof(struct bsp_endpoint);
	if (len < sizeof(hdr)) {
		err = -EINVAL;
	} else if (copy_to_user(optval, &hdr, sizeof(hdr))) {
		err = -EFAULT;
	} else if (len >= need && hdr.count &&
		   copy_to_user(optval + sizeof(hdr), bs->group,
				need - sizeof(hdr))) {
		err = -EFAULT;
	}
	release_sock(&bs->sk);
	if (err)
		return err;
	/* like getsockopt(SO_PEERGROUPS): report the size needed */
	if (put_user((int)need, optlen))
		return -EFAULT;
	return len < need ? -ERANGE : 0;
}

int bsp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen)
{
	struct bsp_sock *bs = bsp_sk(sock->sk);
	struct bsp_proto_stats pst;
	struct bsp_sock_stats st;
	const void *src;
	u64 rate;
	int len, ival;
	u32 val;
	size_t size;

	if (level != SOL_BSP)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;

	switch (optname) {
	case BSP_GROUP:
		return bsp_get_group(bs, optval, optlen, len);
	case BSP_EPOCH:
		val = READ_ONCE(bs->epoch);
		src = &val;
		size = sizeof(val);
		break;
	case BSP_PACING_RATE:
		rate = READ_ONCE(bs->pacing_rate);
		src = &rate;
		size = sizeof(rate);
		break;
	case BSP_CHANNELS:
		lock_sock(&bs->sk);
		val = bs->tp ? bsp_transport_channels(bs->tp) :
		      bs->chans ?: READ_ONCE(bsp_max_chans);
		release_sock(&bs->sk);
		src = &val;
		size = sizeof(val);
		break;
	case BSP_RECVEPOCH:
		ival = READ_ONCE(bs->recv_epoch);
		src = &ival;
		size = sizeof(ival);
		break;
	case BSP_FOLLOW:
		ival = READ_ONCE(bs->follow);
		src = &ival;
		size = sizeof(ival);
		break;
	case BSP_SOCK_STATS:
		bsp_sock_stats_read(bs, &st);
		src = &st;
		size = sizeof(st);
		break;
	case BSP_PROTO_STATS:
		/* a prefix for a shorter buffer, as TCP_INFO does */
		bsp_transport_proto_stats(bs, &pst);
		size = min_t(size_t, len, sizeof(pst));
		src = &pst;
		break;
	default:
		return -ENOPROTOOPT;
	}
	if (len < size)
		return -EINVAL;
	if (copy_to_user(optval, src, size) || put_user((int)size, optlen))
		return -EFAULT;
	return 0;
}
