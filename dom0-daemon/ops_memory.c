// SPDX-License-Identifier: MIT
/*
 * Memory commands.  Device pointers travel as they are: CUDA checks them
 * in this worker's own context, which holds nothing but this session's
 * allocations.  Host memory is always the session's arena, named by
 * offset; every host extent is checked against the arena here.
 *
 * MALLOC        cudaMalloc(args.size) -> {ptr}
 * FREE          cudaFree(args.ptr)
 * MALLOC_PITCH  cudaMallocPitch(args.width, args.height) -> {ptr, pitch}
 * MEMCPY        dir H2D: src is an arena offset; D2H: dst is an arena
 *               offset; D2D: both are device pointers.  The host extent
 *               [off, off + count) must lie in the arena (else
 *               cudaErrorInvalidValue); another dir answers
 *               cudaErrorInvalidMemcpyDirection, unknown flags
 *               cudaErrorInvalidValue.  XCUDA_COPY_ASYNC: cudaMemcpyAsync
 *               on args.stream (unknown handle: 400), else cudaMemcpy.
 *               XCUDA_COPY_STAGED with ASYNC: the stream is synchronized
 *               before the answer, since the guest reuses (H2D) or reads
 *               (D2H) the staging block as soon as it has it.
 * MEMCPY_2D     likewise with cudaMemcpy2D(Async); the host extent is
 *               pitch * (height - 1) + width (overflow-checked, empty when
 *               width or height is 0) and width must not exceed the host
 *               pitch (else cudaErrorInvalidValue).
 * MEMSET        cudaMemset, or cudaMemsetAsync with XCUDA_COPY_ASYNC.
 * MEMSET_2D     cudaMemset2D, or cudaMemset2DAsync with XCUDA_COPY_ASYNC.
 * ARENA_PIN     cudaHostRegister(arena + data_off, data_len, (args.flags &
 *               Portable) | Mapped); the result is the extent's device
 *               address (cudaHostGetDevicePointer), which is the guest's
 *               own address of it with XCUDA_FEAT_SAME_VA.  The extent is
 *               remembered and unpinned when the session ends.
 * ARENA_UNPIN   cudaHostUnregister of the pinned extent that starts at
 *               data_off; none there: cudaErrorHostMemoryNotRegistered.
 */
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "ops.h"

/* At most this many pinned extents per session, to bound the list. */
#define XD_MAX_PINS	XCUDA_MAX_HANDLES

static void *xd_dev(uint64_t p)
{
	return (void *)(uintptr_t)p;
}

int xd_op_malloc(struct xd_session *s, const struct xcuda_malloc_args *a,
		 struct xcuda_malloc_res *r, struct xd_call *call)
{
	void *p = NULL;
	cudaError_t err;

	(void)s;
	(void)call;
	err = cudaMalloc(&p, a->size);
	if (!err) {
		r->ptr = (uintptr_t)p;
	}
	return err;
}

int xd_op_free(struct xd_session *s, const struct xcuda_free_args *a,
	       struct xd_call *call)
{

	(void)s;
	(void)call;
	return cudaFree(xd_dev(a->ptr));
}

int xd_op_malloc_pitch(struct xd_session *s,
		       const struct xcuda_malloc_pitch_args *a,
		       struct xcuda_malloc_pitch_res *r, struct xd_call *call)
{
	size_t pitch = 0;
	void *p = NULL;
	cudaError_t err;

	(void)s;
	(void)call;
	err = cudaMallocPitch(&p, &pitch, a->width, a->height);
	if (!err) {
		r->ptr = (uintptr_t)p;
		r->pitch = pitch;
	}
	return err;
}

/*
 * Resolves the two sides of a copy: the host side becomes a pointer into
 * the arena once [off, off + span) is known to lie inside it.
 */
static int xd_copy_sides(struct xd_session *s, uint32_t dir, uint64_t dst,
			 uint64_t src, uint64_t span, void **d, void **sp,
			 enum cudaMemcpyKind *kind)
{
	uint64_t size = s->chan->arena_size;

	switch (dir) {
	case XCUDA_COPY_H2D:
		if (!xcuda_extent_ok(src, span, size))
			return cudaErrorInvalidValue;
		*sp = s->chan->arena + src;
		*d = xd_dev(dst);
		*kind = cudaMemcpyHostToDevice;
		return 0;
	case XCUDA_COPY_D2H:
		if (!xcuda_extent_ok(dst, span, size))
			return cudaErrorInvalidValue;
		*d = s->chan->arena + dst;
		*sp = xd_dev(src);
		*kind = cudaMemcpyDeviceToHost;
		return 0;
	case XCUDA_COPY_D2D:
		*d = xd_dev(dst);
		*sp = xd_dev(src);
		*kind = cudaMemcpyDeviceToDevice;
		return 0;
	}
	return cudaErrorInvalidMemcpyDirection;
}

uint64_t xd_span_2d(uint64_t pitch, uint64_t width, uint64_t height, int *ok)
{
	uint64_t span;

	*ok = 1;
	if (!width || !height)
		return 0;
	if (width > pitch || height - 1 > UINT64_MAX / pitch) {
		*ok = 0;
		return 0;
	}
	span = pitch * (height - 1);
	if (span > UINT64_MAX - width) {
		*ok = 0;
		return 0;
	}
	return span + width;
}

#define XD_COPY_FLAGS	(XCUDA_COPY_ASYNC | XCUDA_COPY_STAGED)

int xd_op_memcpy(struct xd_session *s, const struct xcuda_memcpy_args *a,
		 struct xd_call *call)
{
	enum cudaMemcpyKind kind;
	cudaStream_t st;
	void *d, *sp;
	cudaError_t err;

	(void)call;
	if (a->flags & ~XD_COPY_FLAGS)
		return cudaErrorInvalidValue;
	err = xd_copy_sides(s, a->dir, a->dst, a->src, a->count, &d, &sp, &kind);
	if (err)
		return err;
	if (!(a->flags & XCUDA_COPY_ASYNC))
		return cudaMemcpy(d, sp, a->count, kind);
	err = xd_stream_lookup(&s->streams, a->stream, &st);
	if (!err && a->dir != XCUDA_COPY_D2D)
		(void)xd_remote_capturing(s, st);
	if (!err)
		err = cudaMemcpyAsync(d, sp, a->count, kind, st);
	if (!err && (a->flags & XCUDA_COPY_STAGED))
		err = cudaStreamSynchronize(st);
	return err;
}

int xd_op_memcpy_2d(struct xd_session *s, const struct xcuda_memcpy_2d_args *a,
		    struct xd_call *call)
{
	enum cudaMemcpyKind kind;
	uint64_t span = 0;
	cudaStream_t st;
	void *d, *sp;
	cudaError_t err;
	int ok = 1;

	(void)call;
	if (a->flags & ~XD_COPY_FLAGS)
		return cudaErrorInvalidValue;
	if (a->dir == XCUDA_COPY_H2D)
		span = xd_span_2d(a->spitch, a->width, a->height, &ok);
	else if (a->dir == XCUDA_COPY_D2H)
		span = xd_span_2d(a->dpitch, a->width, a->height, &ok);
	if (!ok)
		return cudaErrorInvalidValue;
	err = xd_copy_sides(s, a->dir, a->dst, a->src, span, &d, &sp, &kind);
	if (err)
		return err;
	if (!(a->flags & XCUDA_COPY_ASYNC))
		return cudaMemcpy2D(d, a->dpitch, sp, a->spitch, a->width,
				    a->height, kind);
	err = xd_stream_lookup(&s->streams, a->stream, &st);
	if (!err && a->dir != XCUDA_COPY_D2D)
		(void)xd_remote_capturing(s, st);
	if (!err)
		err = cudaMemcpy2DAsync(d, a->dpitch, sp, a->spitch, a->width,
					a->height, kind, st);
	if (!err && (a->flags & XCUDA_COPY_STAGED))
		err = cudaStreamSynchronize(st);
	return err;
}

/* MEMSET (@two_d 0: width is the count) and MEMSET_2D. */
static int xd_memset_any(struct xd_session *s, uint64_t ptr, uint64_t pitch,
			 int value, uint64_t width, uint64_t height,
			 uint32_t flags, uint32_t stream, int two_d)
{
	int async = !!(flags & XCUDA_COPY_ASYNC);
	cudaStream_t st = 0;
	cudaError_t err;

	if (flags & ~XCUDA_COPY_ASYNC)
		return cudaErrorInvalidValue;
	if (async) {
		err = xd_stream_lookup(&s->streams, stream, &st);
		if (err)
			return err;
	}
	if (two_d)
		return async ? cudaMemset2DAsync(xd_dev(ptr), pitch, value,
						 width, height, st) :
			       cudaMemset2D(xd_dev(ptr), pitch, value, width,
					    height);
	return async ? cudaMemsetAsync(xd_dev(ptr), value, width, st) :
		       cudaMemset(xd_dev(ptr), value, width);
}

int xd_op_memset(struct xd_session *s, const struct xcuda_memset_args *a,
		 struct xd_call *call)
{

	(void)call;
	return xd_memset_any(s, a->ptr, 0, a->value, a->count, 1, a->flags,
			     a->stream, 0);
}

int xd_op_memset_2d(struct xd_session *s, const struct xcuda_memset_2d_args *a,
		    struct xd_call *call)
{

	(void)call;
	return xd_memset_any(s, a->ptr, a->pitch, a->value, a->width, a->height,
			     a->flags, a->stream, 1);
}

int xd_op_arena_pin(struct xd_session *s, const struct xcuda_arena_pin_args *a,
		    struct xcuda_arena_pin_res *r, struct xd_call *call)
{
	struct xd_pin *p;
	unsigned int flags;
	void *dp = NULL;
	cudaError_t err;

	if (s->npins >= XD_MAX_PINS)
		return cudaErrorMemoryAllocation;
	p = calloc(1, sizeof(*p));
	if (!p)
		return cudaErrorMemoryAllocation;
	/* Under unified addressing pinned memory is mapped anyway. */
	flags = (a->flags & cudaHostRegisterPortable) | cudaHostRegisterMapped;
	err = cudaHostRegister(call->data, call->data_len, flags);
	if (err) {
		free(p);
		return err;
	}
	err = cudaHostGetDevicePointer(&dp, call->data, 0);
	if (err) {
		cudaHostUnregister(call->data);
		free(p);
		return err;
	}
	/*
	 * A guest on another host (XD_CHAN_REMOTE) gets the device address
	 * only where this copy of the arena is at the guest's address: the
	 * link then keeps the copy in step where kernels are handed it
	 * (up_mapped.h).  Elsewhere a kernel would read this copy, not the
	 * guest's memory: cudaHostGetDevicePointer then fails in the guest.
	 */
	r->device_ptr = (s->chan->flags & XD_CHAN_REMOTE) && !s->same_va ?
			0 : (uintptr_t)dp;
	p->off = call->req->hdr.data_off;
	p->len = call->data_len;
	p->next = s->pins;
	s->pins = p;
	s->npins++;
	return 0;
}

int xd_op_arena_unpin(struct xd_session *s, struct xd_call *call)
{
	uint64_t off = call->req->hdr.data_off;
	struct xd_pin **pp, *p;

	for (pp = &s->pins; (p = *pp); pp = &p->next)
		if (p->off == off)
			break;
	if (!p)
		return cudaErrorHostMemoryNotRegistered;
	*pp = p->next;
	s->npins--;
	free(p);
	return cudaHostUnregister(call->data);
}

static void xd_pins_fini(struct xd_session *s)
{
	struct xd_pin *p;

	while ((p = s->pins)) {
		s->pins = p->next;
		/* A device reset may have dropped it already. */
		cudaHostUnregister(s->chan->arena + p->off);
		free(p);
	}
	s->npins = 0;
}

XD_SESSION_HOOKS(pins, 30, NULL, xd_pins_fini);
