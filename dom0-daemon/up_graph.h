/* SPDX-License-Identifier: MIT */
/*
 * Graph copies over the upstream link (xcuda/upstream.h, "GEXT" and
 * "PUT" frames): the arena bytes an executable graph's copies read and
 * write, which no request names.  Both ends use this, without CUDA:
 *
 *  - the server turns the host side of each memcpy node (a pitched 3D
 *    region, in the arena or not) into spans (xd_up_gside_spans);
 *  - the relay keeps, per exec, the spans the server announced for it,
 *    bounded in all (struct xd_up_gtab), and sends their bytes before
 *    each launch.
 */
#ifndef XCUDAD_UP_GRAPH_H
#define XCUDAD_UP_GRAPH_H

#include <stdint.h>

#include "up_spans.h"

/* The spans announced for one exec. */
struct xd_up_gent {
	uint32_t exec;
	unsigned int n;
	struct xd_up_span *s;
};

/* The relay's table: at most XCUDA_UP_GEXT_TOTAL spans in all. */
struct xd_up_gtab {
	struct xd_up_gent *v;
	unsigned int n, cap;
	unsigned int total;
};

/*
 * Replaces what @t knows of @exec with @s[@n] (@n 0: forgets it).
 * Returns 0, -E2BIG when @n or the table's total would pass the caps
 * (what it knew of @exec is gone then), or -ENOMEM.
 */
int xd_up_gtab_set(struct xd_up_gtab *t, uint32_t exec,
		   const struct xd_up_span *s, unsigned int n);
/* @exec's entry, or NULL. */
const struct xd_up_gent *xd_up_gtab_find(const struct xd_up_gtab *t,
					 uint32_t exec);
void xd_up_gtab_fini(struct xd_up_gtab *t);

/*
 * One side of a copy: a pitched region whose start is arena offset @off
 * (cudaPitchedPtr and cudaPos in bytes: @pitch bytes a row, @ysize rows a
 * slice).
 */
struct xd_up_gside {
	uint64_t off;
	uint64_t pitch;
	uint64_t ysize;
	uint64_t pos[3];
};

/*
 * Appends to @v (holding *@n, at most @max) the spans of @depth slices of
 * @height rows of @width bytes at @sd: one span when the rows are evenly
 * spaced, else one a slice.  Returns 0, -EINVAL when the region is
 * malformed or not within an arena of @arena_size bytes, or -E2BIG when
 * more than @max spans it would take.
 */
int xd_up_gside_spans(const struct xd_up_gside *sd, uint64_t width,
		      uint64_t height, uint64_t depth, uint64_t arena_size,
		      struct xd_up_span *v, unsigned int *n, unsigned int max);

#endif /* XCUDAD_UP_GRAPH_H */
