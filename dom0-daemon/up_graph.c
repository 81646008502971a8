// SPDX-License-Identifier: MIT
/*
 * Graph copies over the upstream link (up_graph.h): the spans of a
 * copy's host side, and the relay's table of them.  Everything here may
 * come from the other end: counts are capped, arithmetic is checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xcuda/upstream.h"
#include "up_graph.h"

const struct xd_up_gent *xd_up_gtab_find(const struct xd_up_gtab *t,
					 uint32_t exec)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].exec == exec)
			return &t->v[i];
	return NULL;
}

static void xd_up_gtab_drop(struct xd_up_gtab *t, uint32_t exec)
{
	struct xd_up_gent *e = (struct xd_up_gent *)xd_up_gtab_find(t, exec);

	if (!e)
		return;
	t->total -= e->n;
	free(e->s);
	*e = t->v[--t->n];
}

int xd_up_gtab_set(struct xd_up_gtab *t, uint32_t exec,
		   const struct xd_up_span *s, unsigned int n)
{
	struct xd_up_span *c;

	xd_up_gtab_drop(t, exec);
	if (!n)
		return 0;
	if (n > XCUDA_UP_GEXT_MAX || n > XCUDA_UP_GEXT_TOTAL - t->total)
		return -E2BIG;
	if (t->n == t->cap) {
		/* Entries hold a span each at least: the total bounds them. */
		unsigned int cap = t->cap ? t->cap * 2 : 16;
		struct xd_up_gent *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	c = malloc(n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	memcpy(c, s, n * sizeof(*c));
	t->v[t->n++] = (struct xd_up_gent){ exec, n, c };
	t->total += n;
	return 0;
}

void xd_up_gtab_fini(struct xd_up_gtab *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].s);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static int xd_up_gpush(struct xd_up_span *v, unsigned int *n, unsigned int max,
		       struct xd_up_span s, uint64_t arena_size)
{
	/* Rows that touch are one. */
	if (s.rows > 1 && s.pitch == s.width &&
	    !__builtin_mul_overflow(s.width, s.rows, &s.width)) {
		s.pitch = s.width;
		s.rows = 1;
	}
	if (s.rows == 1)
		s.pitch = s.width;
	if (!xd_up_span_ok(&s, arena_size))
		return -EINVAL;
	if (*n >= max)
		return -E2BIG;
	v[(*n)++] = s;
	return 0;
}

int xd_up_gside_spans(const struct xd_up_gside *sd, uint64_t width,
		      uint64_t height, uint64_t depth, uint64_t arena_size,
		      struct xd_up_span *v, unsigned int *n, unsigned int max)
{
	uint64_t row0, start, slice, rows, k, at;
	int ret;

	if (!width || !height || !depth)
		return 0;	/* copies nothing */
	if (__builtin_mul_overflow(height, depth, &rows))
		return -EINVAL;
	/* Rows within the pitch, slices within ysize. */
	if (rows > 1 &&
	    (sd->pitch < width || sd->pos[0] > sd->pitch - width))
		return -EINVAL;
	if (depth > 1 && (sd->ysize < height ||
			  sd->pos[1] > sd->ysize - height))
		return -EINVAL;
	if (__builtin_mul_overflow(sd->pos[2], sd->ysize, &row0) ||
	    __builtin_add_overflow(row0, sd->pos[1], &row0) ||
	    __builtin_mul_overflow(row0, sd->pitch, &start) ||
	    __builtin_add_overflow(start, sd->pos[0], &start) ||
	    __builtin_add_overflow(start, sd->off, &start))
		return -EINVAL;
	if (rows == 1)
		return xd_up_gpush(v, n, max, (struct xd_up_span){
			start, width, width, 1 }, arena_size);
	if (__builtin_mul_overflow(sd->pitch, sd->ysize, &slice))
		return -EINVAL;
	/* Whole slices' rows are evenly spaced: one span. */
	if (depth == 1 || sd->ysize == height)
		return xd_up_gpush(v, n, max, (struct xd_up_span){
			start, width, sd->pitch, rows }, arena_size);
	if (depth > max)
		return -E2BIG;
	for (k = 0; k < depth; k++) {
		if (__builtin_mul_overflow(k, slice, &at) ||
		    __builtin_add_overflow(at, start, &at))
			return -EINVAL;
		ret = xd_up_gpush(v, n, max, (struct xd_up_span){
			at, width, sd->pitch, height }, arena_size);
		if (ret)
			return ret;
	}
	return 0;
}
