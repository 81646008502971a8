// SPDX-License-Identifier: MIT
/*
 * The host and device ranges the guest knows about: device allocations,
 * pinned host allocations in the arena, and registered host memory.  They
 * let cudaMemcpyDefault and cudaPointerGetAttributes answer without a
 * round trip.  Kept sorted by start; ranges of live allocations never
 * overlap.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

static pthread_mutex_t xc_ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_range *xc_ranges;
static size_t xc_nranges, xc_ranges_cap;

/* First index whose start is > p. */
static size_t xc_range_upper(uintptr_t p)
{
	size_t lo = 0, hi = xc_nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (xc_ranges[mid].start <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int xc_range_add(const struct xc_range *r)
{
	size_t at;
	int ret = -1;

	pthread_mutex_lock(&xc_ranges_lock);
	if (xc_nranges == xc_ranges_cap) {
		size_t cap = xc_ranges_cap ? 2 * xc_ranges_cap : 64;
		struct xc_range *n = realloc(xc_ranges, cap * sizeof(*n));

		if (!n)
			goto out;
		xc_ranges = n;
		xc_ranges_cap = cap;
	}
	at = xc_range_upper(r->start);
	memmove(&xc_ranges[at + 1], &xc_ranges[at],
		(xc_nranges - at) * sizeof(*xc_ranges));
	xc_ranges[at] = *r;
	xc_nranges++;
	ret = 0;
out:
	pthread_mutex_unlock(&xc_ranges_lock);
	return ret;
}

static ssize_t xc_range_lookup(uintptr_t p)
{
	size_t i = xc_range_upper(p);

	/* Zero-sized ranges still name their start address. */
	while (i > 0) {
		struct xc_range *r = &xc_ranges[i - 1];

		if (p < r->start + (r->size ? r->size : 1))
			return (ssize_t)(i - 1);
		if (r->start != p)
			break;
		i--;
	}
	return -1;
}

int xc_range_find(uintptr_t p, struct xc_range *out)
{
	ssize_t i;

	pthread_mutex_lock(&xc_ranges_lock);
	i = xc_range_lookup(p);
	if (i >= 0)
		*out = xc_ranges[i];
	pthread_mutex_unlock(&xc_ranges_lock);
	return i >= 0 ? 0 : -1;
}

int xc_range_del(uintptr_t start, int kind, struct xc_range *out)
{
	ssize_t i;
	int ret = -1;

	pthread_mutex_lock(&xc_ranges_lock);
	i = xc_range_lookup(start);
	if (i >= 0 && xc_ranges[i].start == start &&
	    xc_ranges[i].kind == kind) {
		if (out)
			*out = xc_ranges[i];
		memmove(&xc_ranges[i], &xc_ranges[i + 1],
			(xc_nranges - i - 1) * sizeof(*xc_ranges));
		xc_nranges--;
		ret = 0;
	}
	pthread_mutex_unlock(&xc_ranges_lock);
	return ret;
}

void xc_range_drop_kind(int kind)
{
	size_t i, j = 0;

	pthread_mutex_lock(&xc_ranges_lock);
	for (i = 0; i < xc_nranges; i++)
		if (xc_ranges[i].kind != kind)
			xc_ranges[j++] = xc_ranges[i];
	xc_nranges = j;
	pthread_mutex_unlock(&xc_ranges_lock);
}

int xc_range_dev_extent(uintptr_t p, uint64_t len)
{
	struct xc_range r;

	return len && !xc_range_find(p, &r) &&
	       (r.kind == XC_R_DEVICE || r.kind == XC_R_MANAGED) &&
	       len <= r.size - (p - r.start);
}

uint64_t xc_extent_2d(uint64_t pitch, uint64_t width, uint64_t height)
{
	if (!width || !height || width > pitch ||
	    height - 1 > (UINT64_MAX - width) / pitch)
		return 0;
	return pitch * (height - 1) + width;
}
