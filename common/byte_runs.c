// SPDX-License-Identifier: MIT
/*
 * Runs of bytes in which two copies differ (byte_runs.h).
 */
#include <string.h>

#include "common/byte_runs.h"

/* Whether any of the 8 bytes of @x is 0. */
static int xcuda_zero_byte(uint64_t x)
{
	return !!((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull);
}

size_t xcuda_runs_same(const uint8_t *a, const uint8_t *b, size_t pos,
		       size_t end)
{
	uint64_t x, y;

	while (pos + 64 <= end && !memcmp(a + pos, b + pos, 64))
		pos += 64;
	while (pos + 8 <= end) {
		memcpy(&x, a + pos, 8);
		memcpy(&y, b + pos, 8);
		if (x != y)
			break;
		pos += 8;
	}
	while (pos < end && a[pos] == b[pos])
		pos++;
	return pos;
}

size_t xcuda_runs_diff(const uint8_t *a, const uint8_t *b, size_t pos,
		       size_t end)
{
	uint64_t x, y;

	while (pos + 8 <= end) {
		memcpy(&x, a + pos, 8);
		memcpy(&y, b + pos, 8);
		if (xcuda_zero_byte(x ^ y))
			break;
		pos += 8;
	}
	while (pos < end && a[pos] != b[pos])
		pos++;
	return pos;
}

size_t xcuda_runs_apply(const uint8_t *src, uint8_t *shadow, uint8_t *dst,
			size_t len)
{
	size_t s = 0, e, moved = 0;

	for (;;) {
		s = xcuda_runs_same(src, shadow, s, len);
		if (s == len)
			return moved;
		e = xcuda_runs_diff(src, shadow, s, len);
		memcpy(shadow + s, src + s, e - s);
		memcpy(dst + s, src + s, e - s);
		moved += e - s;
		s = e;
	}
}
