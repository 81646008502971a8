/* SPDX-License-Identifier: MIT */
/*
 * Which arena bytes a request makes the worker read or write, for the
 * upstream link (xcuda/upstream.h), where the worker's arena is a copy on
 * another host: the relay sends what the worker will read with the
 * request, the server sends back what it wrote with the answer.  Both
 * ends list them from the request alone, alike, so that the bytes need
 * no description on the wire:
 *
 *  - the header's data extent, by the command's data use (ARENA_PIN and
 *    ARENA_UNPIN name memory, they read none of it);
 *  - the extents among the arguments (calls.h, struct xcuda_arg_ext);
 *  - the host side of a copy: MEMCPY and MEMCPY_2D by their direction,
 *    ARRAY_COPY's source when it is the arena.
 *
 * What the worker writes it is sent to read as well, unless it writes
 * every byte (the host side of a copy into the arena): a handler that
 * writes an extent back whole after writing part of it (the generated
 * ones do) must find the guest's bytes in the rest.  ARRAY_COPY's
 * destination in the arena depends on an array's element size, which
 * only the worker knows: its handler says what it wrote (note_out in
 * transport.h).  An extent that does not lie within the arena is left
 * out: the worker refuses the request.
 */
#ifndef XCUDAD_UP_SPANS_H
#define XCUDAD_UP_SPANS_H

#include <stdint.h>

#include "xcuda/proto.h"

/* @rows rows of @width bytes, @pitch apart, from arena offset @off. */
struct xd_up_span {
	uint64_t off;
	uint64_t width;		/* not 0 */
	uint64_t pitch;		/* at least @width; @width for one row */
	uint64_t rows;		/* not 0 */
};

/* The most spans one request has: its header, its arguments, a copy. */
#define XD_UP_SPANS_MAX \
	(2 + XCUDA_REQ_INLINE / sizeof(struct xcuda_extent))

enum { XD_UP_IN = 0, XD_UP_OUT = 1 };

/*
 * The spans the worker reads (@which XD_UP_IN) or writes (XD_UP_OUT)
 * for @req in an arena of @arena_size bytes, into @sp (XD_UP_SPANS_MAX
 * of them): how many.
 */
unsigned int xd_up_spans(const struct xcuda_request *req, uint64_t arena_size,
			 int which, struct xd_up_span *sp);

/* The bytes of @sp (at most the arena's: it lies within). */
static inline uint64_t xd_up_span_bytes(const struct xd_up_span *sp)
{
	return sp->width * sp->rows;
}

/* Whether @sp is well formed and lies within an arena of @arena_size. */
int xd_up_span_ok(const struct xd_up_span *sp, uint64_t arena_size);

/* The bytes from @sp's first to its last, gaps included. */
static inline uint64_t xd_up_span_reach(const struct xd_up_span *sp)
{
	return (sp->rows - 1) * sp->pitch + sp->width;
}

#endif /* XCUDAD_UP_SPANS_H */
