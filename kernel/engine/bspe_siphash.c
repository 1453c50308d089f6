// SPDX-License-Identifier: GPL-2.0
/*
 * Streaming SipHash-2-4 of the AF_BSP protocol engine
 * (bspe_siphash.h; Documentation/decisions.rst says why SipHash).
 */
#include "bspe_siphash.h"

static inline u64 bspe_rol64(u64 x, unsigned int n)
{
	return (x << n) | (x >> (64 - n));
}

static inline u64 bspe_le64(const u8 *p)
{
	return (u64)p[0] | (u64)p[1] << 8 | (u64)p[2] << 16 |
	       (u64)p[3] << 24 | (u64)p[4] << 32 | (u64)p[5] << 40 |
	       (u64)p[6] << 48 | (u64)p[7] << 56;
}

static inline void bspe_sipround(struct bspe_siphash *s)
{
	s->v0 += s->v1;
	s->v1 = bspe_rol64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = bspe_rol64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = bspe_rol64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = bspe_rol64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = bspe_rol64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = bspe_rol64(s->v2, 32);
}

static inline void bspe_sip_block(struct bspe_siphash *s, u64 m)
{
	s->v3 ^= m;
	bspe_sipround(s);
	bspe_sipround(s);
	s->v0 ^= m;
}

void bspe_siphash_init(struct bspe_siphash *s, const u8 key[BSPE_KEY_LEN])
{
	u64 k0 = bspe_le64(key), k1 = bspe_le64(key + 8);

	s->v0 = 0x736f6d6570736575ULL ^ k0;
	s->v1 = 0x646f72616e646f6dULL ^ k1;
	s->v2 = 0x6c7967656e657261ULL ^ k0;
	s->v3 = 0x7465646279746573ULL ^ k1;
	s->tail = 0;
	s->len = 0;
}

void bspe_siphash_update(struct bspe_siphash *s, const void *p, u32 len)
{
	const u8 *b = p;
	u32 fill = (u32)(s->len & 7);

	s->len += len;
	/* Complete a pending partial word first. */
	if (fill) {
		while (fill < 8 && len) {
			s->tail |= (u64)*b++ << (8 * fill);
			fill++;
			len--;
		}
		if (fill < 8)
			return;
		bspe_sip_block(s, s->tail);
		s->tail = 0;
	}
	for (; len >= 8; b += 8, len -= 8)
		bspe_sip_block(s, bspe_le64(b));
	for (fill = 0; fill < len; fill++)
		s->tail |= (u64)b[fill] << (8 * fill);
}

u64 bspe_siphash_final(struct bspe_siphash *s)
{
	bspe_sip_block(s, s->tail | (s->len & 0xff) << 56);
	s->v2 ^= 0xff;
	bspe_sipround(s);
	bspe_sipround(s);
	bspe_sipround(s);
	bspe_sipround(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

u64 bspe_siphash(const u8 key[BSPE_KEY_LEN], const void *p, u32 len)
{
	struct bspe_siphash s;

	bspe_siphash_init(&s, key);
	bspe_siphash_update(&s, p, len);
	return bspe_siphash_final(&s);
}
