// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding and decoding helpers of the AF_BSP wire format
 * that are independent of engine state: hello frames, packet type,
 * checksum, keyed MAC (sealing and verifying), key derivation.
 */
#include "bspe_wire.h"

static void bspe_put_le64(u8 *p, u64 v)
{
	u32 i;

	for (i = 0; i < 8; i++)
		p[i] = (u8)(v >> (8 * i));
}

/* MAC of a hello: the 40 bytes with csum and mac zero. */
static u64 bspe_hello_mac(const struct bspe_hello *h, const u8 *key)
{
	struct bspe_hello c = *h;

	c.csum = 0;
	c.mac = 0;
	return bspe_siphash(key, &c, BSPE_HELLO_LEN);
}

void bspe_hello_build(void *out, const struct bspe_hello_info *hi,
		      const u8 *key)
{
	struct bspe_hello h;

	memset(&h, 0, sizeof(h));
	h.version = BSPE_VERSION;
	h.type = BSPE_T_HELLO;
	h.cluster_id = bspe_htonl(hi->cluster_id);
	h.node_id = bspe_htonl(hi->node_id);
	h.rail = hi->rail;
	h.nrails = hi->nrails;
	h.mtu = bspe_htons(hi->mtu);
	h.caps = bspe_htonl(hi->caps);
	h.incarnation = bspe_htonl(hi->incarnation);
	h.hello_seq = bspe_htonl(hi->hello_seq);
	h.interval_ms = bspe_htons(hi->interval_ms);
	if (key) {
		h.flags = bspe_htons(BSPE_HELLO_F_AUTH);
		h.mac = bspe_htonll(bspe_hello_mac(&h, key));
	}
	h.csum = bspe_csum_fold(bspe_csum_add(&h, BSPE_HELLO_LEN, 0));
	memcpy(out, &h, sizeof(h));
}

int bspe_hello_parse(const void *pkt, u32 len, struct bspe_hello_info *hi,
		     const u8 *key)
{
	struct bspe_hello h;
	u16 flags;

	if (len < 2)
		return -EBADMSG;
	if (((const u8 *)pkt)[0] != BSPE_VERSION)
		return -EPROTONOSUPPORT;
	if (len < BSPE_HELLO_LEN)
		return -EBADMSG;
	memcpy(&h, pkt, sizeof(h));
	if (!bspe_csum_ok(&h, BSPE_HELLO_LEN))
		return -EBADMSG;
	flags = bspe_ntohs(h.flags);
	if (h.type != BSPE_T_HELLO || (flags & ~BSPE_HELLO_F_AUTH))
		return -EBADMSG;
	if (key) {
		if (!(flags & BSPE_HELLO_F_AUTH) ||
		    bspe_ntohll(h.mac) != bspe_hello_mac(&h, key))
			return -EACCES;
	} else if (flags & BSPE_HELLO_F_AUTH) {
		return -EACCES;
	} else if (h.mac) {
		return -EBADMSG;
	}
	if (h.nrails == 0 || h.rail >= h.nrails)
		return -EBADMSG;
	if (bspe_ntohs(h.mtu) < BSPE_HDR_LEN + 1)
		return -EBADMSG;
	hi->cluster_id = bspe_ntohl(h.cluster_id);
	hi->node_id = bspe_ntohl(h.node_id);
	hi->rail = h.rail;
	hi->nrails = h.nrails;
	hi->mtu = bspe_ntohs(h.mtu);
	hi->caps = bspe_ntohl(h.caps);
	hi->incarnation = bspe_ntohl(h.incarnation);
	hi->hello_seq = bspe_ntohl(h.hello_seq);
	hi->interval_ms = bspe_ntohs(h.interval_ms);
	return 0;
}

int bspe_pkt_type(const void *pkt, u32 len)
{
	const u8 *p = pkt;

	if (len < 4)
		return -EBADMSG;
	if (p[0] != BSPE_VERSION)
		return -EPROTONOSUPPORT;
	if (p[1] == 0 || p[1] > BSPE_T_MAX)
		return -EBADMSG;
	return p[1];
}

/* Adds the partial sum @part of bytes that start at offset @off. */
static void bspe_seal_csum(struct bspe_seal_ctx *s, u32 part, u32 off)
{
	/* A chunk at an odd offset has its bytes swapped within words. */
	if (off & 1)
		part = (part >> 8) | (part << 24);
	s->csum += part;
}

void bspe_seal_key_begin(struct bspe_seal_ctx *s, const u8 *key, void *hdr)
{
	struct bspe_hdr *h = hdr;

	s->flags = bspe_ntohs(h->flags) & (BSPE_F_CSUM | BSPE_F_AUTH);
	s->csum = 0;
	s->len = 0;
	h->csum = 0;
	memset((u8 *)hdr + BSPE_HDR_MAC_OFF, 0, 8);
	if (!key)
		s->flags &= (u16)~BSPE_F_AUTH;
	if (s->flags & BSPE_F_AUTH) {
		/* The MAC replaces the checksum. */
		s->flags &= (u16)~BSPE_F_CSUM;
		bspe_siphash_init(&s->sh, key);
	}
	bspe_seal_update(s, hdr, BSPE_HDR_LEN);
}

void bspe_seal_update(struct bspe_seal_ctx *s, const void *p, u32 len)
{
	if (!len)
		return;
	if (s->flags & BSPE_F_AUTH)
		bspe_siphash_update(&s->sh, p, len);
	else if (s->flags & BSPE_F_CSUM)
		bspe_seal_csum(s, bspe_csum_add(p, len, 0), s->len);
	s->len += len;
}

void bspe_seal_final(struct bspe_seal_ctx *s, void *hdr)
{
	struct bspe_hdr *h = hdr;
	u64 sum = s->csum;
	__be64 mac;

	if (s->flags & BSPE_F_AUTH) {
		mac = bspe_htonll(bspe_siphash_final(&s->sh));
		memcpy((u8 *)hdr + BSPE_HDR_MAC_OFF, &mac, 8);
	} else if (s->flags & BSPE_F_CSUM) {
		while (sum >> 32)
			sum = (sum & 0xffffffffu) + (sum >> 32);
		h->csum = bspe_csum_fold((u32)sum);
	}
}

void bspe_seal_key(const u8 *key, void *hdr, const void *payload, u32 len)
{
	struct bspe_seal_ctx s;

	bspe_seal_key_begin(&s, key, hdr);
	bspe_seal_update(&s, payload, len);
	bspe_seal_final(&s, hdr);
}

int bspe_mac_ok(const u8 *key, const void *pkt, u32 len)
{
	struct bspe_siphash sh;
	struct bspe_hdr h;
	__be64 mac;

	if (len < BSPE_HDR_LEN)
		return 0;
	memcpy(&h, pkt, sizeof(h));
	mac = h.mac;
	h.csum = 0;
	h.mac = 0;
	bspe_siphash_init(&sh, key);
	bspe_siphash_update(&sh, &h, BSPE_HDR_LEN);
	bspe_siphash_update(&sh, (const u8 *)pkt + BSPE_HDR_LEN,
			    len - BSPE_HDR_LEN);
	return bspe_ntohll(mac) == bspe_siphash_final(&sh);
}

int bspe_csum_ok(const void *pkt, u32 len)
{
	return bspe_csum_fold(bspe_csum_add(pkt, len, 0)) == 0;
}

/*
 * Fixed public keys of the key derivation: the ASCII bytes of
 * "AF_BSP kdf key 0" and "AF_BSP kdf key 1" (Documentation/protocol.rst).
 */
static const u8 bspe_kdf_key0[BSPE_KEY_LEN] = {
	0x41, 0x46, 0x5f, 0x42, 0x53, 0x50, 0x20, 0x6b,
	0x64, 0x66, 0x20, 0x6b, 0x65, 0x79, 0x20, 0x30
};

static const u8 bspe_kdf_key1[BSPE_KEY_LEN] = {
	0x41, 0x46, 0x5f, 0x42, 0x53, 0x50, 0x20, 0x6b,
	0x64, 0x66, 0x20, 0x6b, 0x65, 0x79, 0x20, 0x31
};

static const char bspe_kdf_label[] = "AF_BSP v2 packet key";

void bspe_key_derive(const void *secret, u32 len, u8 key[BSPE_KEY_LEN])
{
	struct bspe_siphash s;

	bspe_siphash_init(&s, bspe_kdf_key0);
	bspe_siphash_update(&s, bspe_kdf_label, sizeof(bspe_kdf_label) - 1);
	bspe_siphash_update(&s, secret, len);
	bspe_put_le64(key, bspe_siphash_final(&s));
	bspe_siphash_init(&s, bspe_kdf_key1);
	bspe_siphash_update(&s, bspe_kdf_label, sizeof(bspe_kdf_label) - 1);
	bspe_siphash_update(&s, secret, len);
	bspe_put_le64(key + 8, bspe_siphash_final(&s));
}
