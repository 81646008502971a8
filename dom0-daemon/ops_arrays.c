// SPDX-License-Identifier: MIT
/*
 * The hand-written worker side of arrays, textures and surfaces:
 *
 * ARRAY_COPY    every copy that names an array, cudaMemcpy3D and
 *               cudaMemcpy3DPeer.  Array
 *               handles come from the session's tables; a pointer side
 *               flagged as arena is an offset whose every touched byte
 *               must lie in the arena (the span is computed without
 *               wrapping, or the copy is refused).
 * CREATE_TEXTURE_OBJECT, CREATE_SURFACE_OBJECT
 *               the resource descriptor comes field by field, arrays as
 *               handles; the object's value goes back and into the
 *               session's table.
 * GET_{TEXTURE,SURFACE}_OBJECT_RESOURCE_DESC
 *               the descriptor CUDA answers, its arrays turned back into
 *               the session's handles.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array_copy.h"
#include "common/res_desc.h"
#include "ops.h"

#define XD_AC_FLAGS	(XCUDA_COPY_ASYNC | XCUDA_COPY_STAGED | \
			 XCUDA_COPY_SRC_ARENA | XCUDA_COPY_DST_ARENA)

/* a * b + c without wrapping; 0 when it would wrap. */
static int xd_muladd(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
	uint64_t m;

	if (__builtin_mul_overflow(a, b, &m) ||
	    __builtin_add_overflow(m, c, out))
		return 0;
	return 1;
}

/*
 * The bytes from a pitched pointer's start that a copy touches: rows of
 * @wb bytes from @pos (x in units of @es bytes), @pitch apart, @ysize
 * rows a slice, @ext[1] rows of @ext[2] slices.  0 with *ok set for an
 * empty copy.
 */
static uint64_t xd_span_3d(uint64_t pitch, uint64_t ysize,
			   const uint64_t pos[3], uint64_t es, uint64_t wb,
			   const uint64_t ext[3], int *ok)
{
	uint64_t slice, off, span;

	*ok = 1;
	if (!wb || !ext[1] || !ext[2])
		return 0;
	*ok = 0;
	if (!xd_muladd(pitch, ysize, 0, &slice) ||
	    !xd_muladd(pos[2], slice, 0, &off) ||
	    !xd_muladd(pos[1], pitch, off, &off) ||
	    !xd_muladd(pos[0], es, off, &off) ||
	    xcuda_rows_span(off, wb, pitch, ext[1], slice, ext[2], &span))
		return 0;
	*ok = 1;
	return span;
}

/* Bytes an element of @arr takes; 0 for formats without one. */
static uint64_t xd_elem_size(cudaArray_const_t arr)
{
	struct cudaChannelFormatDesc d;

	if (cudaArrayGetInfo(&d, NULL, NULL, (cudaArray_t)arr))
		return 0;
	if (d.x < 0 || d.y < 0 || d.z < 0 || d.w < 0)
		return 0;
	return ((uint64_t)d.x + d.y + d.z + d.w) / 8;
}

/* Resolves an array handle; 0 stands for none (NULL). */
static int xd_array_arg(struct xd_session *s, uint32_t h, cudaArray_t *arr)
{
	*arr = NULL;
	if (!h)
		return 0;
	*arr = xd_object_get(&s->objects[XD_H_ARRAY], h);
	return *arr ? 0 : cudaErrorInvalidResourceHandle;
}

/*
 * The host span of the pointer side of @a that is @src's (or the
 * destination's), as the call @a->fn reads it.
 */
static int xd_copy_span(const struct xcuda_array_copy_args *a, int src,
			cudaArray_const_t other, uint64_t *span)
{
	uint64_t pitch = src ? a->spitch : a->dpitch, es = 1, wb;
	const uint64_t *pos = src ? a->spos : a->dpos;
	uint64_t one[3] = { 0, 0, 0 };
	int ok = 1;

	switch (a->fn) {
	case XCUDA_AC_3D:
	case XCUDA_AC_3D_PEER:
		if (other) {
			es = xd_elem_size(other);
			if (!es)
				return cudaErrorInvalidValue;
		}
		/* An array on the other side: its elements, x included. */
		if (!xd_muladd(a->extent[0], es, 0, &wb))
			return cudaErrorInvalidValue;
		*span = xd_span_3d(pitch, src ? a->sysize : a->dysize, pos,
				   es, wb, a->extent, &ok);
		break;
	case XCUDA_AC_2D_TO_ARRAY:
	case XCUDA_AC_2D_FROM_ARRAY:
		/* CUDA refuses a pitch below the width; the span is exact. */
		*span = xd_span_3d(pitch, 0, one, 1, a->extent[0],
				   (uint64_t[3]){ 0, a->extent[1], 1 }, &ok);
		break;
	case XCUDA_AC_TO_ARRAY:
	case XCUDA_AC_FROM_ARRAY:
		*span = a->extent[0];
		break;
	default:
		return cudaErrorInvalidValue;
	}
	return ok ? 0 : cudaErrorInvalidValue;
}

/* A pointer side: an arena offset checked and made a pointer, or as is. */
static int xd_copy_ptr(struct xd_session *s,
		       const struct xcuda_array_copy_args *a, int src,
		       cudaArray_const_t other, void **p)
{
	uint64_t off = src ? a->src : a->dst, span = 0;
	int err;

	if (!(a->flags & (src ? XCUDA_COPY_SRC_ARENA : XCUDA_COPY_DST_ARENA))) {
		*p = (void *)(uintptr_t)off;
		return 0;
	}
	err = xd_copy_span(a, src, other, &span);
	if (err)
		return err;
	if (!xcuda_extent_ok(off, span, s->chan->arena_size))
		return cudaErrorInvalidValue;
	*p = s->chan->arena + off;
	return 0;
}

/* A 3D copy into the arena noted slice by slice up to this many. */
#define XD_WROTE_SLICES	4096

/*
 * Tells a transport that copies the arena (xd_arena_wrote()) what a copy
 * that succeeded wrote into its arena destination: its rows, not the
 * gaps between them, since the guest's bytes there are not ours.  Only
 * here is the element size of an array on the other side known.  The
 * span was checked against the arena before the copy, so nothing here
 * wraps.  A 3D copy of more than XD_WROTE_SLICES slices is noted as the
 * whole span, gaps between slices included.
 */
static void xd_copy_wrote(struct xd_session *s,
			  const struct xcuda_array_copy_args *a,
			  cudaArray_const_t other)
{
	uint64_t es = 1, wb, slice, off, z;
	const uint64_t *e = a->extent;

	if (!(a->flags & XCUDA_COPY_DST_ARENA))
		return;
	switch (a->fn) {
	case XCUDA_AC_3D:
	case XCUDA_AC_3D_PEER:
		if (other)
			es = xd_elem_size(other);
		wb = e[0] * es;
		if (!wb || !e[1] || !e[2])
			return;
		slice = a->dpitch * a->dysize;
		off = a->dst + a->dpos[2] * slice + a->dpos[1] * a->dpitch +
		      a->dpos[0] * es;
		if (e[2] == 1 || (a->dpitch == wb && slice == wb * e[1])) {
			/* One slice, or slices that touch: rows alone. */
			if (a->dpitch == wb)
				xd_arena_wrote(s, off, wb * e[1] * e[2], 0, 1);
			else
				xd_arena_wrote(s, off, wb, a->dpitch, e[1]);
			return;
		}
		if (e[2] > XD_WROTE_SLICES) {
			xd_arena_wrote(s, off, (e[2] - 1) * slice +
				       (e[1] - 1) * a->dpitch + wb, 0, 1);
			return;
		}
		for (z = 0; z < e[2]; z++)
			xd_arena_wrote(s, off + z * slice, wb, a->dpitch, e[1]);
		return;
	case XCUDA_AC_2D_FROM_ARRAY:
		xd_arena_wrote(s, a->dst, e[0], a->dpitch, e[1]);
		return;
	case XCUDA_AC_FROM_ARRAY:
		xd_arena_wrote(s, a->dst, e[0], 0, 1);
		return;
	}
}

static int xd_copy_3d(const struct xcuda_array_copy_args *a,
		      cudaArray_t sa, void *sp, cudaArray_t da, void *dp,
		      int async, cudaStream_t st)
{
	struct cudaMemcpy3DParms p;

	memset(&p, 0, sizeof(p));
	p.srcArray = sa;
	p.srcPtr = (struct cudaPitchedPtr){ sp, a->spitch, a->sxsize,
					    a->sysize };
	p.srcPos = (struct cudaPos){ a->spos[0], a->spos[1], a->spos[2] };
	p.dstArray = da;
	p.dstPtr = (struct cudaPitchedPtr){ dp, a->dpitch, a->dxsize,
					    a->dysize };
	p.dstPos = (struct cudaPos){ a->dpos[0], a->dpos[1], a->dpos[2] };
	p.extent = (struct cudaExtent){ a->extent[0], a->extent[1],
					a->extent[2] };
	p.kind = (enum cudaMemcpyKind)a->kind;
	return async ? cudaMemcpy3DAsync(&p, st) : cudaMemcpy3D(&p);
}

static int xd_copy_3d_peer(const struct xcuda_array_copy_args *a,
			   cudaArray_t sa, void *sp, cudaArray_t da, void *dp,
			   int async, cudaStream_t st)
{
	struct cudaMemcpy3DPeerParms p;

	memset(&p, 0, sizeof(p));
	p.srcArray = sa;
	p.srcPtr = (struct cudaPitchedPtr){ sp, a->spitch, a->sxsize,
					    a->sysize };
	p.srcPos = (struct cudaPos){ a->spos[0], a->spos[1], a->spos[2] };
	p.srcDevice = a->sdev;
	p.dstArray = da;
	p.dstPtr = (struct cudaPitchedPtr){ dp, a->dpitch, a->dxsize,
					    a->dysize };
	p.dstPos = (struct cudaPos){ a->dpos[0], a->dpos[1], a->dpos[2] };
	p.dstDevice = a->ddev;
	p.extent = (struct cudaExtent){ a->extent[0], a->extent[1],
					a->extent[2] };
	return async ? cudaMemcpy3DPeerAsync(&p, st) : cudaMemcpy3DPeer(&p);
}

/* The deprecated 1D array copies are still CUDA's: call them as they are. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static int xd_copy_call(const struct xcuda_array_copy_args *a,
			cudaArray_t sa, void *sp, cudaArray_t da, void *dp,
			int async, cudaStream_t st)
{
	enum cudaMemcpyKind k = (enum cudaMemcpyKind)a->kind;
	const uint64_t *e = a->extent, *so = a->spos, *dO = a->dpos;

	switch (a->fn) {
	case XCUDA_AC_3D:
		return xd_copy_3d(a, sa, sp, da, dp, async, st);
	case XCUDA_AC_3D_PEER:
		return xd_copy_3d_peer(a, sa, sp, da, dp, async, st);
	case XCUDA_AC_2D_TO_ARRAY:
		return async ?
			cudaMemcpy2DToArrayAsync(da, dO[0], dO[1], sp,
						 a->spitch, e[0], e[1], k, st) :
			cudaMemcpy2DToArray(da, dO[0], dO[1], sp, a->spitch,
					    e[0], e[1], k);
	case XCUDA_AC_2D_FROM_ARRAY:
		return async ?
			cudaMemcpy2DFromArrayAsync(dp, a->dpitch, sa, so[0],
						   so[1], e[0], e[1], k, st) :
			cudaMemcpy2DFromArray(dp, a->dpitch, sa, so[0], so[1],
					      e[0], e[1], k);
	case XCUDA_AC_2D_ARRAY_TO_ARRAY:
		return cudaMemcpy2DArrayToArray(da, dO[0], dO[1], sa, so[0],
						so[1], e[0], e[1], k);
	case XCUDA_AC_TO_ARRAY:
		return async ?
			cudaMemcpyToArrayAsync(da, dO[0], dO[1], sp, e[0], k,
					       st) :
			cudaMemcpyToArray(da, dO[0], dO[1], sp, e[0], k);
	case XCUDA_AC_FROM_ARRAY:
		return async ?
			cudaMemcpyFromArrayAsync(dp, sa, so[0], so[1], e[0], k,
						 st) :
			cudaMemcpyFromArray(dp, sa, so[0], so[1], e[0], k);
	case XCUDA_AC_ARRAY_TO_ARRAY:
		return cudaMemcpyArrayToArray(da, dO[0], dO[1], sa, so[0],
					      so[1], e[0], k);
	}
	return cudaErrorInvalidValue;
}
#pragma GCC diagnostic pop

/*
 * Whether a position plus the extent wraps on either side: no array is
 * that large, and CUDA's own bounds checks must not see a wrapped end.
 */
static int xd_copy_wraps(const struct xcuda_array_copy_args *a)
{
	uint64_t end;
	int i;

	for (i = 0; i < 3; i++)
		if (__builtin_add_overflow(a->spos[i], a->extent[i], &end) ||
		    __builtin_add_overflow(a->dpos[i], a->extent[i], &end))
			return 1;
	return 0;
}

/*
 * The kind CUDA gets.  A pointer side that is not the arena is device
 * memory, as the guest classifies it: a kind that calls it host memory
 * (or cudaMemcpyDefault, which lets CUDA decide) could have CUDA read
 * or write the worker's own memory.  Default becomes the kind the
 * sides are; a host kind on a side that is not the arena is refused.
 */
static int xd_copy_kind(const struct xcuda_array_copy_args *a, int arrays,
			int32_t *kind)
{
	/* The sides that are arrays: by the call, or named (3D). */
	int three = a->fn == XCUDA_AC_3D || a->fn == XCUDA_AC_3D_PEER;
	int sa = three ? !!a->src_array : arrays & 1;
	int da = three ? !!a->dst_array : !!(arrays & 2);
	int sarena = !!(a->flags & XCUDA_COPY_SRC_ARENA);
	int darena = !!(a->flags & XCUDA_COPY_DST_ARENA);
	int sh, dh;

	if (a->fn == XCUDA_AC_3D_PEER) {
		*kind = cudaMemcpyDeviceToDevice;	/* not used */
		return 0;
	}
	switch (a->kind) {
	case cudaMemcpyHostToHost:
		sh = 1; dh = 1;
		break;
	case cudaMemcpyHostToDevice:
		sh = 1; dh = 0;
		break;
	case cudaMemcpyDeviceToHost:
		sh = 0; dh = 1;
		break;
	case cudaMemcpyDeviceToDevice:
		sh = 0; dh = 0;
		break;
	case cudaMemcpyDefault:
		sh = sarena;
		dh = darena;
		*kind = sh ? (dh ? cudaMemcpyHostToHost :
			      cudaMemcpyHostToDevice) :
			(dh ? cudaMemcpyDeviceToHost :
			      cudaMemcpyDeviceToDevice);
		return 0;
	default:
		return cudaErrorInvalidMemcpyDirection;
	}
	if ((sh && !sa && !sarena) || (dh && !da && !darena))
		return cudaErrorInvalidValue;
	*kind = a->kind;
	return 0;
}

int xd_op_array_copy(struct xd_session *s,
		     const struct xcuda_array_copy_args *a,
		     struct xd_call *call)
{
	int async = !!(a->flags & XCUDA_COPY_ASYNC), arrays, err, captured = 0;
	struct xcuda_array_copy_args b;
	cudaArray_t sa, da;
	void *sp = NULL, *dp = NULL;
	cudaStream_t st = NULL;

	(void)call;
	if ((a->flags & ~XD_AC_FLAGS) || a->fn < XCUDA_AC_3D ||
	    a->fn > XCUDA_AC_3D_PEER || xd_copy_wraps(a))
		return cudaErrorInvalidValue;
	/* Only a peer copy names devices. */
	if (a->fn != XCUDA_AC_3D_PEER && (a->sdev || a->ddev))
		return cudaErrorInvalidValue;
	arrays = xcuda_ac_arrays(a->fn);
	/* An array side is never the arena. */
	if (((arrays & 1) && (a->flags & XCUDA_COPY_SRC_ARENA)) ||
	    ((arrays & 2) && (a->flags & XCUDA_COPY_DST_ARENA)))
		return cudaErrorInvalidValue;
	b = *a;
	err = xd_copy_kind(a, arrays, &b.kind);
	if (err)
		return err;
	err = xd_array_arg(s, a->src_array, &sa);
	if (!err)
		err = xd_array_arg(s, a->dst_array, &da);
	if (err)
		return err;
	/* A 3D copy's arena side may not be an array too. */
	if ((sa && (a->flags & XCUDA_COPY_SRC_ARENA)) ||
	    (da && (a->flags & XCUDA_COPY_DST_ARENA)))
		return cudaErrorInvalidValue;
	if (!(arrays & 1))
		err = xd_copy_ptr(s, a, 1, da, &sp);
	if (!err && !(arrays & 2))
		err = xd_copy_ptr(s, a, 0, sa, &dp);
	if (!err && async)
		err = xd_stream_lookup(&s->streams, a->stream, &st);
	if (!err && async &&
	    (a->flags & (XCUDA_COPY_SRC_ARENA | XCUDA_COPY_DST_ARENA)))
		captured = xd_remote_capturing(s, st);
	if (err)
		return err;
	err = xd_copy_call(&b, sa, sp, da, dp, async, st);
	if (!err && async && (a->flags & XCUDA_COPY_STAGED))
		err = cudaStreamSynchronize(st);
	/* A captured copy writes at the graph's launches. */
	if (!err && !captured)
		xd_copy_wrote(s, a, sa);
	return err;
}

/* ---- resource descriptors ---- */

/* The wire's descriptor: CREATE_SURFACE_OBJECT's arguments. */
typedef struct xcuda_create_surface_object_args xd_res_t;

_Static_assert(sizeof(xd_res_t) == 72, "resource descriptor");
_Static_assert(offsetof(struct xcuda_create_texture_object_args, tex) ==
	       sizeof(xd_res_t), "texture arguments start with a resource");

static int xd_res_from_wire(struct xd_session *s, const xd_res_t *w,
			    struct cudaResourceDesc *r)
{
	xcuda_res_from_wire(w, r);
	switch (w->res_type) {
	case cudaResourceTypeArray:
		r->res.array.array = xd_object_get(&s->objects[XD_H_ARRAY],
						   w->array);
		return r->res.array.array ? 0 :
			cudaErrorInvalidResourceHandle;
	case cudaResourceTypeMipmappedArray:
		r->res.mipmap.mipmap = xd_object_get(&s->objects[XD_H_MIPMAP],
						     w->array);
		return r->res.mipmap.mipmap ? 0 :
			cudaErrorInvalidResourceHandle;
	case cudaResourceTypeLinear:
	case cudaResourceTypePitch2D:
		return 0;
	}
	return cudaErrorInvalidValue;
}

static void xd_res_to_wire(struct xd_session *s,
			   const struct cudaResourceDesc *r, xd_res_t *w)
{
	xcuda_res_to_wire(r, w);
	switch (r->resType) {
	case cudaResourceTypeArray:
		w->array = xd_object_handle(&s->objects[XD_H_ARRAY],
					    r->res.array.array);
		break;
	case cudaResourceTypeMipmappedArray:
		w->array = xd_object_handle(&s->objects[XD_H_MIPMAP],
					    r->res.mipmap.mipmap);
		break;
	default:
		break;
	}
}

int xd_op_create_texture_object(
	struct xd_session *s,
	const struct xcuda_create_texture_object_args *a,
	struct xcuda_create_texture_object_res *r, struct xd_call *call)
{
	struct cudaResourceViewDesc view;
	struct cudaResourceDesc res;
	struct cudaTextureDesc tex;
	cudaTextureObject_t obj = 0;
	xd_res_t w;
	int err;

	(void)call;
	if ((a->tex.len && a->tex.len != sizeof(tex)) ||
	    (a->view.len && a->view.len != sizeof(view)))
		return cudaErrorInvalidValue;
	memcpy(&w, a, sizeof(w));
	err = xd_res_from_wire(s, &w, &res);
	if (err)
		return err;
	/* The extents were checked against the arena: copy each once. */
	if (a->tex.len)
		memcpy(&tex, s->chan->arena + a->tex.off, sizeof(tex));
	if (a->view.len)
		memcpy(&view, s->chan->arena + a->view.off, sizeof(view));
	/* A missing descriptor is CUDA's to answer for. */
	err = cudaCreateTextureObject(&obj, &res, a->tex.len ? &tex : NULL,
				      a->view.len ? &view : NULL);
	if (err)
		return err;
	err = xd_value_add(&s->objects[XD_H_TEXOBJ], obj, s->device);
	if (err) {
		cudaDestroyTextureObject(obj);
		return err;
	}
	r->obj = obj;
	return 0;
}

int xd_op_create_surface_object(
	struct xd_session *s,
	const struct xcuda_create_surface_object_args *a,
	struct xcuda_create_surface_object_res *r, struct xd_call *call)
{
	struct cudaResourceDesc res;
	cudaSurfaceObject_t obj = 0;
	int err;

	(void)call;
	err = xd_res_from_wire(s, a, &res);
	if (err)
		return err;
	err = cudaCreateSurfaceObject(&obj, &res);
	if (err)
		return err;
	err = xd_value_add(&s->objects[XD_H_SURFOBJ], obj, s->device);
	if (err) {
		cudaDestroySurfaceObject(obj);
		return err;
	}
	r->obj = obj;
	return 0;
}

/* The getters: the object must be the session's, the extent one wire. */
static int xd_get_res(struct xd_session *s, int tex, uint64_t obj,
		      const struct xcuda_extent *e)
{
	struct cudaResourceDesc res;
	xd_res_t w;
	int err;

	if (e->len != sizeof(w))
		return cudaErrorInvalidValue;
	if (!xd_value_find(&s->objects[tex ? XD_H_TEXOBJ : XD_H_SURFOBJ],
			   obj))
		return cudaErrorInvalidValue;
	memset(&res, 0, sizeof(res));
	err = tex ? cudaGetTextureObjectResourceDesc(&res, obj) :
		cudaGetSurfaceObjectResourceDesc(&res, obj);
	if (err)
		return err;
	xd_res_to_wire(s, &res, &w);
	xd_arena_put(s, e, (const uint8_t *)&w);
	return 0;
}

int xd_op_get_texture_object_resource_desc(
	struct xd_session *s,
	const struct xcuda_get_texture_object_resource_desc_args *a,
	struct xd_call *call)
{
	(void)call;
	return xd_get_res(s, 1, a->obj, &a->desc);
}

int xd_op_get_surface_object_resource_desc(
	struct xd_session *s,
	const struct xcuda_get_surface_object_resource_desc_args *a,
	struct xd_call *call)
{
	(void)call;
	return xd_get_res(s, 0, a->obj, &a->desc);
}
