/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SipHash-2-4 of the AF_BSP protocol engine, streaming.
 *
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF")
 * with a 128-bit key and a 64-bit output, the same function as the
 * kernel's siphash() (lib/siphash.c). The engine carries its own streaming
 * form because a packet is not contiguous in the kernel (header, then the
 * payload in socket buffer fragments) and because the same code runs in
 * user space. Key bytes are read as two little-endian 64-bit words k0, k1
 * (the reference implementation's convention; the kernel's siphash_key_t
 * is { le64(k[0..7]), le64(k[8..15]) }).
 */
#ifndef _BSPE_SIPHASH_H
#define _BSPE_SIPHASH_H

#include "bspe_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BSPE_KEY_LEN	16

/* Running state; any contents are overwritten by bspe_siphash_init(). */
struct bspe_siphash {
	u64	v0, v1, v2, v3;
	u64	tail;		/* up to 7 pending bytes, little-endian */
	u64	len;		/* bytes absorbed so far */
};

void bspe_siphash_init(struct bspe_siphash *s, const u8 key[BSPE_KEY_LEN]);

/* Absorbs @len bytes at @p (any alignment, any split of the input). */
void bspe_siphash_update(struct bspe_siphash *s, const void *p, u32 len);

/* Returns the 64-bit tag; @s must be initialised again before reuse. */
u64 bspe_siphash_final(struct bspe_siphash *s);

/* One-shot SipHash-2-4 of @len bytes at @p. */
u64 bspe_siphash(const u8 key[BSPE_KEY_LEN], const void *p, u32 len);

#ifdef __cplusplus
}
#endif

#endif /* _BSPE_SIPHASH_H */
