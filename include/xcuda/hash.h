/* SPDX-License-Identifier: MIT */
/*
 * FNV-1a 64, the checksum both ends of xcuda compute over arena bytes:
 * ECHO's integrity check and the fatbinary hash of MODULE_DATA.  It is not
 * a cryptographic hash; it only has to agree on both sides and catch torn
 * or misplaced bytes.
 */
#ifndef XCUDA_HASH_H
#define XCUDA_HASH_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define XCUDA_FNV64_BASIS	0xcbf29ce484222325ull
#define XCUDA_FNV64_PRIME	0x00000100000001b3ull

/*
 * FNV-1a 64 of @len bytes at @p.  @seed 0 gives the standard hash; a
 * nonzero @seed is folded in first, as if its 8 little-endian bytes came
 * before the data, so that different seeds give unrelated checksums.
 */
static inline uint64_t xcuda_fnv1a64(uint64_t seed, const void *p,
				     uint64_t len)
{
	const uint8_t *b = (const uint8_t *)p;
	uint64_t h = XCUDA_FNV64_BASIS;
	uint64_t i;

	if (seed) {
		for (i = 0; i < 8; i++) {
			h ^= (seed >> (8 * i)) & 0xff;
			h *= XCUDA_FNV64_PRIME;
		}
	}
	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= XCUDA_FNV64_PRIME;
	}
	return h;
}

#endif /* XCUDA_HASH_H */
