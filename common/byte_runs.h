/* SPDX-License-Identifier: MIT */
/*
 * Runs of bytes in which two copies of memory differ, exact to the byte:
 * for keeping two copies in step against a shadow of what both last held
 * (dom0-daemon/up_mapped.c, guest-lib/hostreg_twin.c), where a byte that
 * did not change on one side must not be overwritten on the other.
 */
#ifndef XCUDA_BYTE_RUNS_H
#define XCUDA_BYTE_RUNS_H

#include <stddef.h>
#include <stdint.h>

/* From @pos, the first byte in which @a and @b differ (@end: none). */
size_t xcuda_runs_same(const uint8_t *a, const uint8_t *b, size_t pos,
		       size_t end);
/* From @pos, the first byte in which @a and @b agree (@end: none). */
size_t xcuda_runs_diff(const uint8_t *a, const uint8_t *b, size_t pos,
		       size_t end);
/*
 * Each run of @len bytes in which @src differs from @shadow goes into
 * @shadow and @dst: how many bytes went.
 */
size_t xcuda_runs_apply(const uint8_t *src, uint8_t *shadow, uint8_t *dst,
			size_t len);

#endif /* XCUDA_BYTE_RUNS_H */
