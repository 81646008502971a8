// SPDX-License-Identifier: MIT
/*
 * The arena spans of a request (up_spans.h).  Both ends of the upstream
 * link run this on the same request bytes: it must give the same answer
 * for any bytes at all, a hostile relay's included, and reads nothing
 * but the request.
 */
#include <string.h>

#include "xcuda/calls.h"
#include "up_spans.h"

/* An array's element is at most four 32-bit channels. */
#define XD_UP_ELEM_MAX	16

int xd_up_span_ok(const struct xd_up_span *sp, uint64_t arena_size)
{
	uint64_t reach;

	if (!sp->width || !sp->rows)
		return 0;
	if (sp->rows == 1)
		return xcuda_extent_ok(sp->off, sp->width, arena_size);
	if (sp->pitch < sp->width ||
	    __builtin_mul_overflow(sp->rows - 1, sp->pitch, &reach) ||
	    __builtin_add_overflow(reach, sp->width, &reach))
		return 0;
	return xcuda_extent_ok(sp->off, reach, arena_size);
}

/* Adds @rows rows of @width bytes @pitch apart at @off, if they fit. */
static void xd_add(struct xd_up_span *sp, unsigned int *n, uint64_t off,
		   uint64_t width, uint64_t pitch, uint64_t rows,
		   uint64_t arena_size)
{
	struct xd_up_span s = { off, width, rows == 1 ? width : pitch, rows };

	/* Rows that touch are one. */
	if (rows > 1 && pitch == width &&
	    !__builtin_mul_overflow(width, rows, &s.width)) {
		s.pitch = s.width;
		s.rows = 1;
	}
	if (*n < XD_UP_SPANS_MAX && xd_up_span_ok(&s, arena_size))
		sp[(*n)++] = s;
}

/*
 * ARRAY_COPY's source when it is the arena: from the offset to the last
 * byte the call may read, gaps included.  Where the destination is an
 * array of a 3D copy, the element size is the array's, which only the
 * worker knows: the largest there is, up to the end of the arena.
 */
static void xd_array_copy_in(const struct xcuda_array_copy_args *a,
			     struct xd_up_span *sp, unsigned int *n,
			     uint64_t arena_size)
{
	uint64_t es = 1, wb, slice, pos, span, t;
	const uint64_t *e = a->extent;
	int bound = 0, wraps;

	if (!(a->flags & XCUDA_COPY_SRC_ARENA) || a->src >= arena_size)
		return;
	switch (a->fn) {
	case XCUDA_AC_3D:
	case XCUDA_AC_3D_PEER:
		if (a->dst_array) {
			es = XD_UP_ELEM_MAX;
			bound = 1;
		}
		if (!e[0] || !e[1] || !e[2])
			return;
		wraps = __builtin_mul_overflow(e[0], es, &wb) ||
			__builtin_mul_overflow(a->spitch, a->sysize, &slice) ||
			__builtin_mul_overflow(a->spos[2], slice, &pos) ||
			__builtin_mul_overflow(a->spos[1], a->spitch, &t) ||
			__builtin_add_overflow(pos, t, &pos) ||
			__builtin_mul_overflow(a->spos[0], es, &t) ||
			__builtin_add_overflow(pos, t, &pos) ||
			__builtin_mul_overflow(e[2] - 1, slice, &span) ||
			__builtin_mul_overflow(e[1] - 1, a->spitch, &t) ||
			__builtin_add_overflow(span, t, &span) ||
			__builtin_add_overflow(span, pos, &span) ||
			__builtin_add_overflow(span, wb, &span);
		break;
	case XCUDA_AC_2D_TO_ARRAY:
		if (!e[0] || !e[1])
			return;
		wraps = __builtin_mul_overflow(e[1] - 1, a->spitch, &span) ||
			__builtin_add_overflow(span, e[0], &span);
		break;
	case XCUDA_AC_TO_ARRAY:
		span = e[0];
		wraps = 0;
		break;
	default:
		return;	/* the source is an array: nothing to read */
	}
	if (wraps || span > arena_size - a->src) {
		if (!bound)
			return;	/* the worker refuses it */
		span = arena_size - a->src;
	}
	xd_add(sp, n, a->src, span, 0, 1, arena_size);
}

/* The host side of a copy, if it is the arena and its @which way. */
static void xd_copy_spans(const struct xcuda_request *req,
			  uint64_t arena_size, int which,
			  struct xd_up_span *sp, unsigned int *n)
{
	switch (req->hdr.op) {
	case XCUDA_OP_MEMCPY: {
		struct xcuda_memcpy_args a;

		memcpy(&a, req->args, sizeof(a));
		if (a.dir == XCUDA_COPY_H2D && which == XD_UP_IN)
			xd_add(sp, n, a.src, a.count, 0, 1, arena_size);
		else if (a.dir == XCUDA_COPY_D2H && which == XD_UP_OUT)
			xd_add(sp, n, a.dst, a.count, 0, 1, arena_size);
		return;
	}
	case XCUDA_OP_MEMCPY_2D: {
		struct xcuda_memcpy_2d_args a;

		memcpy(&a, req->args, sizeof(a));
		if (a.dir == XCUDA_COPY_H2D && which == XD_UP_IN)
			xd_add(sp, n, a.src, a.width, a.spitch, a.height,
			       arena_size);
		else if (a.dir == XCUDA_COPY_D2H && which == XD_UP_OUT)
			xd_add(sp, n, a.dst, a.width, a.dpitch, a.height,
			       arena_size);
		return;
	}
	case XCUDA_OP_ARRAY_COPY: {
		struct xcuda_array_copy_args a;

		/* Its destination: the handler's word (note_out). */
		if (which != XD_UP_IN)
			return;
		memcpy(&a, req->args, sizeof(a));
		xd_array_copy_in(&a, sp, n, arena_size);
		return;
	}
	}
}

unsigned int xd_up_spans(const struct xcuda_request *req, uint64_t arena_size,
			 int which, struct xd_up_span *sp)
{
	const struct xcuda_req_hdr *h = &req->hdr;
	const struct xcuda_call_info *d = xcuda_call(h->op);
	unsigned int n = 0, i;

	/* What the worker refuses before it reads anything. */
	if (!d || h->len < d->min_len || h->len > d->args_size ||
	    h->len > sizeof(req->args))
		return 0;

	switch (d->data) {
	case XCUDA_DATA_IN:
	case XCUDA_DATA_OPT_IN:
		/* Memory to pin, or to unpin: its bytes are not read. */
		if (h->op == XCUDA_OP_ARENA_PIN ||
		    h->op == XCUDA_OP_ARENA_UNPIN)
			break;
		if (which == XD_UP_IN)
			xd_add(sp, &n, h->data_off, h->data_len, 0, 1,
			       arena_size);
		break;
	case XCUDA_DATA_OUT:
	case XCUDA_DATA_INOUT:
		/* Read too: see up_spans.h. */
		xd_add(sp, &n, h->data_off, h->data_len, 0, 1, arena_size);
		break;
	}

	for (i = 0; i < d->nr_ext; i++) {
		const struct xcuda_arg_ext *x = &d->ext[i];
		struct xcuda_extent e;

		/* Past the declared bytes the worker sees zeros: none. */
		if ((uint32_t)x->offset + sizeof(e) > h->len)
			continue;
		if (which == XD_UP_OUT && !(x->dir & XCUDA_EXT_OUT))
			continue;
		memcpy(&e, req->args + x->offset, sizeof(e));
		if (e.len)
			xd_add(sp, &n, e.off, e.len, 0, 1, arena_size);
	}

	xd_copy_spans(req, arena_size, which, sp, &n);
	return n;
}
