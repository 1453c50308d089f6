/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The only file of the AF_BSP protocol engine that differs
 * between the kernel build (af_bsp.ko, __KERNEL__) and the user-space build
 * (libbsp's bsp_engine, BSPE_USERSPACE=1).
 *
 * It provides: fixed-width types (u8..u64, s32, s64), the sparse-checked
 * wire types (__be16, __be32, __be64, __sum16), byte-order helpers, memcpy/memset,
 * likely/unlikely, a 64-bit division helper, errno values, the Internet
 * checksum helper and a compile-time assertion.
 */
#ifndef _BSPE_SHIM_H
#define _BSPE_SHIM_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/compiler.h>
#include <linux/build_bug.h>
#include <linux/math64.h>
#include <asm/byteorder.h>
#include <net/checksum.h>

#define bspe_htons(x)	cpu_to_be16(x)
#define bspe_htonl(x)	cpu_to_be32(x)
#define bspe_ntohs(x)	be16_to_cpu(x)
#define bspe_ntohl(x)	be32_to_cpu(x)
#define bspe_htonll(x)	cpu_to_be64(x)
#define bspe_ntohll(x)	be64_to_cpu(x)

#define bspe_static_assert(cond, msg) static_assert(cond, msg)

static inline u64 bspe_div64(u64 a, u32 b)
{
	return div_u64(a, b);
}

static inline u64 bspe_div64_64(u64 a, u64 b)
{
	return div64_u64(a, b);
}

/* Ones' complement sum of @len bytes at @buf added to the partial sum @sum. */
static inline u32 bspe_csum_add(const void *buf, u32 len, u32 sum)
{
	return (__force u32)csum_partial(buf, len, (__force __wsum)sum);
}

/* Folds a partial sum into the 16-bit value stored in a header. */
static inline __sum16 bspe_csum_fold(u32 sum)
{
	return csum_fold((__force __wsum)sum);
}

#else /* user space */

#include <stddef.h>
#include <stdint.h>
#include <assert.h>
#include <string.h>
#include <errno.h>
#include <linux/types.h>

/* The <stdint.h> types, so that u64 is uint64_t for C++ callers. */
typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
typedef __INT32_TYPE__ s32;
typedef __INT64_TYPE__ s64;

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define bspe_htons(x)	((__be16)__builtin_bswap16((u16)(x)))
#define bspe_htonl(x)	((__be32)__builtin_bswap32((u32)(x)))
#define bspe_ntohs(x)	((u16)__builtin_bswap16((u16)(x)))
#define bspe_ntohl(x)	((u32)__builtin_bswap32((u32)(x)))
#define bspe_htonll(x)	((__be64)__builtin_bswap64((u64)(x)))
#define bspe_ntohll(x)	((u64)__builtin_bswap64((u64)(x)))
#else
#define bspe_htons(x)	((__be16)(u16)(x))
#define bspe_htonl(x)	((__be32)(u32)(x))
#define bspe_ntohs(x)	((u16)(x))
#define bspe_ntohl(x)	((u32)(x))
#define bspe_htonll(x)	((__be64)(u64)(x))
#define bspe_ntohll(x)	((u64)(x))
#endif

#define bspe_static_assert(cond, msg) static_assert(cond, msg)

static inline u64 bspe_div64(u64 a, u32 b)
{
	return a / b;
}

static inline u64 bspe_div64_64(u64 a, u64 b)
{
	return a / b;
}

/*
 * Ones' complement sum over 16-bit words in memory order, like the
 * kernel's csum_partial(); @len must be even except for the last chunk.
 */
static inline u32 bspe_csum_add(const void *buf, u32 len, u32 sum)
{
	const u8 *p = (const u8 *)buf;
	u64 acc = sum;
	u32 d;
	u16 w;

	/* 32-bit words summed in 64 bits fold to the same 16-bit sum. */
	while (len >= 4) {
		memcpy(&d, p, 4);
		acc += d;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		memcpy(&w, p, 2);
		acc += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, 1);
		acc += w;
	}
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (u32)acc;
}

static inline __sum16 bspe_csum_fold(u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__sum16)(u16)~sum;
}

#endif /* __KERNEL__ */

#endif /* _BSPE_SHIM_H */
