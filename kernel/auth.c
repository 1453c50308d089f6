// SPDX-License-Identifier: GPL-2.0
/*
 * AF_BSP authenticated mode: the per-namespace cluster key.
 *
 * An administrator (CAP_NET_ADMIN in the namespace's user namespace) writes
 * a 128-bit key as 32 hexadecimal digits to the write-only sysctl
 * net.bsp.cluster_key ("off" removes it); it can never be read back. With
 * a key, hellos carry and require a SipHash-2-4 MAC under it, and every
 * socket bound afterwards runs its engine with BSPE_CFG_AUTH and the key:
 * every frame carries and requires the MAC (protocol.rst).
 *
 * The key lives in an RCU-protected allocation: readers (hello send and
 * receive, bind) copy it under rcu_read_lock; a writer replaces it under
 * key_mutex and frees the old copy, zeroed, after a grace period.
 *
 * The optional self-test (module parameter selftest=1) checks at load
 * that the engine's streaming SipHash (engine/bspe_siphash.c) equals the
 * kernel's siphash() on the reference key over inputs of every length up
 * to 64 bytes and one frame-sized input, fed whole and in pieces, and
 * gives the reference test vector of the SipHash paper. It then measures
 * what sealing a packet costs (bspe_seal_key: the Internet checksum
 * without a key, the SipHash MAC with one; the receiver's check costs the
 * same) for 1500- and 9000-byte packets, in interleaved rounds, and logs
 * the medians side by side.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/sort.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysctl.h>
#include <asm/unaligned.h>

#include "auth.h"
#include "engine/bspe_wire.h"

struct bsp_key {
	struct rcu_head rcu;
	u8 key[BSPE_KEY_LEN];
};

static DEFINE_MUTEX(bsp_key_mutex);

bool bsp_key_get(struct bsp_net *bn, u8 key[BSPE_KEY_LEN])
{
	struct bsp_key *k;
	bool set = false;

	rcu_read_lock();
	k = rcu_dereference(bn->key);
	if (k) {
		memcpy(key, k->key, BSPE_KEY_LEN);
		set = true;
	}
	rcu_read_unlock();
	return set;
}

bool bsp_key_is_set(struct bsp_net *bn)
{
	return rcu_access_pointer(bn->key);
}

static int bsp_key_set(struct bsp_net *bn, const u8 *key)
{
	struct bsp_key *k = NULL, *old;

	if (key) {
		k = kmalloc(sizeof(*k), GFP_KERNEL);
		if (!k)
			return -ENOMEM;
		memcpy(k->key, key, BSPE_KEY_LEN);
	}
	mutex_lock(&bsp_key_mutex);
	old = rcu_replace_pointer(bn->key, k,
				  lockdep_is_held(&bsp_key_mutex));
	mutex_unlock(&bsp_key_mutex);
	if (old) {
		synchronize_rcu();
		kfree_sensitive(old);
	}
	return 0;
}

void bsp_key_exit_net(struct bsp_net *bn)
{
	bsp_key_set(bn, NULL);
}

int bsp_sysctl_cluster_key(struct ctl_table *ctl, int write, void *buffer,
			   size_t *lenp, loff_t *ppos)
{
	struct bsp_net *bn = ctl->data;
	u8 key[BSPE_KEY_LEN];
	char buf[2 * BSPE_KEY_LEN + 2];
	size_t len = *lenp;
	char *s;
	int err;

	if (!write)
		return -EPERM;	/* never readable, even by its writer */
	if (!ns_capable(bn->net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	if (*ppos || !len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, buffer, len);
	buf[len] = '\0';
	s = strim(buf);
	if (!strcmp(s, "off")) {
		err = bsp_key_set(bn, NULL);
	} else if (strlen(s) != 2 * BSPE_KEY_LEN ||
		   hex2bin(key, s, BSPE_KEY_LEN)) {
		err = -EINVAL;
	} else {
		err = bsp_key_set(bn, key);
	}
	memzero_explicit(buf, sizeof(buf));
	memzero_explicit(key, sizeof(key));
	if (!err)
		*ppos += len;
	return err;
}

/* ---- self-test: the engine's SipHash is the kernel's ---- */

static bool bsp_siphash_same(const u8 *key, const u8 *in, u32 len)
{
	siphash_key_t k = {
		.key = { get_unaligned_le64(key), get_unaligned_le64(key + 8) },
	};
	struct bspe_siphash s;
	u64 want = siphash(in, len, &k);
	u32 off, step;

	if (bspe_siphash(key, in, len) != want)
		return false;
	/* the streaming form, in pieces of every size up to 9 */
	for (step = 1; step <= 9; step++) {
		bspe_siphash_init(&s, key);
		for (off = 0; off < len; off += step)
			bspe_siphash_update(&s, in + off, min(step, len - off));
		if (bspe_siphash_final(&s) != want)
			return false;
	}
	return true;
}

#define BSP_COST_ROUNDS	7
#define BSP_COST_BYTES	SZ_1M		/* sealed per measurement */

static int bsp_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Nanoseconds per packet of @len bytes sealed with @flags. */
static u64 bsp_seal_ns(const u8 *key, u8 *pkt, u32 len, u16 flags)
{
	struct bspe_hdr *h = (struct bspe_hdr *)pkt;
	u32 i, n = BSP_COST_BYTES / len;
	u64 t;

	h->flags = htons(flags);
	t = ktime_get_ns();
	for (i = 0; i < n; i++)
		bspe_seal_key(key, pkt, pkt + BSPE_HDR_LEN, len - BSPE_HDR_LEN);
	return div_u64(ktime_get_ns() - t, n);
}

static int bsp_auth_seal_cost(const u8 *key)
{
	static const u32 sizes[] = { 1500, 9000 };
	u64 csum[BSP_COST_ROUNDS], mac[BSP_COST_ROUNDS];
	u32 s, r;
	u8 *pkt;

	pkt = kzalloc(9000, GFP_KERNEL);
	if (!pkt)
		return -ENOMEM;
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (r = 0; r < BSP_COST_ROUNDS; r++) {
			csum[r] = bsp_seal_ns(key, pkt, sizes[s], BSPE_F_CSUM);
			mac[r] = bsp_seal_ns(key, pkt, sizes[s], BSPE_F_AUTH);
			cond_resched();
		}
		sort(csum, BSP_COST_ROUNDS, sizeof(u64), bsp_cmp_u64, NULL);
		sort(mac, BSP_COST_ROUNDS, sizeof(u64), bsp_cmp_u64, NULL);
		pr_info("selftest: sealing a %u-byte packet: checksum %llu ns, SipHash MAC %llu ns (medians of %u interleaved rounds)\n",
			sizes[s], csum[BSP_COST_ROUNDS / 2],
			mac[BSP_COST_ROUNDS / 2], BSP_COST_ROUNDS);
	}
	kfree(pkt);
	return 0;
}

int bsp_auth_selftest(void)
{
	/* Aumasson and Bernstein, SipHash paper, appendix A */
	static const u64 paper_vector = 0xa129ca6149be45e5ULL;
	const u32 big = 1500;
	u8 key[BSPE_KEY_LEN], *in;
	u32 i, n = 0;
	int err = 0;

	in = kmalloc(big, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	for (i = 0; i < BSPE_KEY_LEN; i++)
		key[i] = i;
	for (i = 0; i < big; i++)
		in[i] = i;
	if (bspe_siphash(key, in, 15) != paper_vector) {
		pr_err("selftest: engine SipHash differs from the reference vector\n");
		err = -EINVAL;
		goto out;
	}
	for (i = 0; i <= 64; i++, n++) {
		if (!bsp_siphash_same(key, in, i)) {
			pr_err("selftest: engine SipHash differs from siphash() on %u bytes\n",
			       i);
			err = -EINVAL;
			goto out;
		}
	}
	if (!bsp_siphash_same(key, in, big)) {
		pr_err("selftest: engine SipHash differs from siphash() on %u bytes\n",
		       big);
		err = -EINVAL;
		goto out;
	}
	n++;
	pr_info("selftest: engine SipHash-2-4 equals the kernel's siphash() on %u inputs (whole and streamed) and the reference vector\n",
		n);
	err = bsp_auth_seal_cost(key);
out:
	kfree(in);
	return err;
}
