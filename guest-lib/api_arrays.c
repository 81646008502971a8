// SPDX-License-Identifier: MIT
/*
 * Arrays, 3D memory, texture and surface objects: the guest side of the
 * calls of spec/cudart-arrays.calls that are not generated.
 *
 * Every copy that names an array, and cudaMemcpy3D, is one ARRAY_COPY
 * request naming the CUDA call to make.  Device memory and pinned host
 * memory (the arena) go as they are; pageable host memory is staged
 * through the arena in chunks of whole rows (whole slices when a slice
 * fits), several in flight, each chunk the same call on its part of the
 * copy, so that any size goes through a bounded staging block.
 */
#include <string.h>

#include "common/array_copy.h"
#include "common/res_desc.h"
#include "guest.h"
#include "ptsz.h"

#define XC_AC_WINDOW 8

/* ---- 3D memory ---- */

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr,
			 struct cudaExtent extent)
{
	struct xcuda_malloc_3d_args a;
	struct xcuda_malloc_3d_res r;
	struct xc_range rg = { 0 };
	cudaError_t err;
	uint64_t size;

	if (!pitchedDevPtr)
		return xc_ret(cudaErrorInvalidValue);
	memset(&a, 0, sizeof(a));
	a.extent = extent;
	err = xc_call_malloc_3d(&a, &r);
	if (err)
		return err;
	*pitchedDevPtr = r.pitchedDevPtr;
	/* The allocation, as cudaMalloc's: copies and queries know it. */
	if (r.pitchedDevPtr.ptr &&
	    !__builtin_mul_overflow((uint64_t)r.pitchedDevPtr.pitch,
				    (uint64_t)extent.height, &size) &&
	    !__builtin_mul_overflow(size, (uint64_t)(extent.depth ?
						     extent.depth : 1),
				    &size)) {
		rg.start = (uintptr_t)r.pitchedDevPtr.ptr;
		rg.size = size;
		rg.kind = XC_R_DEVICE;
		rg.device = xc_cur_device();
		xc_range_add(&rg);
	}
	return cudaSuccess;
}

/* ---- copies ---- */

/* Where a pointer side of a copy lives. */
enum xc_ac_side { XC_AC_NONE, XC_AC_DEV, XC_AC_ARENA, XC_AC_HOST };

/* One copy as the program asked for it, on its way to the wire. */
struct xc_ac {
	/* src and dst: the guest's own pointers, until they travel */
	struct xcuda_array_copy_args a;
	cudaArray_const_t sarr;
	cudaArray_t darr;
	int async;
};

/* Bytes per element of @arr's format; 0 when it has none. */
cudaError_t xc_array_elem_size(cudaArray_const_t arr, uint64_t *es,
			       uint64_t *width)
{
	struct cudaChannelFormatDesc d;
	struct cudaExtent e;
	cudaError_t err;

	err = cudaArrayGetInfo(&d, &e, NULL, (cudaArray_t)arr);
	if (err)
		return err;
	if (d.x < 0 || d.y < 0 || d.z < 0 || d.w < 0 ||
	    !(*es = ((uint64_t)d.x + d.y + d.z + d.w) / 8))
		return xc_ret(cudaErrorInvalidValue);
	if (width)
		*width = e.width;
	return cudaSuccess;
}

/* Which sides of a call are arrays: bit 0 the source, 1 the destination. */
static int xc_ac_arrays(const struct xc_ac *c)
{
	int by_fn = xcuda_ac_arrays(c->a.fn);

	if (by_fn)
		return by_fn;
	/* cudaMemcpy3D: whichever names an array. */
	return (c->sarr ? 1 : 0) | (c->darr ? 2 : 0);
}

/*
 * The row model of a pointer side: rows of @wb bytes, @hpitch apart,
 * @rows of them a slice, slices @hslice apart, from @off bytes into the
 * pointer.  1D copies are rows of one byte, contiguous.
 */
struct xc_rows {
	uint64_t off, wb, hpitch, hslice, rows, slices;
};

/*
 * The row model and the span (the last byte touched, plus one) of the
 * pointer side @src of @c; refuses what would wrap.
 */
static cudaError_t xc_ac_rows(const struct xc_ac *c, int src,
			      struct xc_rows *m, uint64_t *span)
{
	const struct xcuda_array_copy_args *a = &c->a;
	uint64_t pitch = src ? a->spitch : a->dpitch, es = 1, t;
	const uint64_t *pos = src ? a->spos : a->dpos;
	cudaArray_const_t other = src ? c->darr : c->sarr;
	cudaError_t err;

	memset(m, 0, sizeof(*m));
	m->slices = 1;
	switch (a->fn) {
	case XCUDA_AC_3D:
	case XCUDA_AC_3D_PEER:
		if (other) {
			err = xc_array_elem_size(other, &es, NULL);
			if (err)
				return err;
		}
		/*
		 * With an array on the other side, CUDA counts the width
		 * and the pointer's x position in that array's elements;
		 * between two pointers both are bytes.
		 */
		/* A row wider than the pitch: CUDA's answer comes first. */
		if (__builtin_mul_overflow(a->extent[0], es, &m->wb) ||
		    m->wb > pitch)
			return cudaErrorInvalidPitchValue;
		if (__builtin_mul_overflow(pitch, src ? a->sysize : a->dysize,
					   &m->hslice))
			return cudaErrorInvalidValue;
		m->hpitch = pitch;
		m->rows = a->extent[1];
		m->slices = a->extent[2];
		if (__builtin_mul_overflow(pos[2], m->hslice, &m->off) ||
		    __builtin_mul_overflow(pos[1], pitch, &t) ||
		    __builtin_add_overflow(m->off, t, &m->off) ||
		    __builtin_mul_overflow(pos[0], es, &t) ||
		    __builtin_add_overflow(m->off, t, &m->off))
			return cudaErrorInvalidValue;
		break;
	case XCUDA_AC_2D_TO_ARRAY:
	case XCUDA_AC_2D_FROM_ARRAY:
		m->wb = a->extent[0];
		m->hpitch = pitch;
		m->rows = a->extent[1];
		break;
	default:
		/* 1D: bytes, one a row. */
		m->wb = 1;
		m->hpitch = 1;
		m->rows = a->extent[0];
		break;
	}
	if (xcuda_rows_span(m->off, m->wb, m->hpitch, m->rows, m->hslice,
			    m->slices, span))
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

static enum xc_ac_side xc_ac_classify(struct xc_session *s, const void *p,
				      uint64_t span, int host, uint64_t *off)
{
	struct xc_range r;

	if (xc_in_arena(s, p, span, off))
		return XC_AC_ARENA;
	/*
	 * Managed memory is device memory whatever the kind says: the
	 * library never touches the program's managed pages (managed.c).
	 */
	if (xc_managed_any() && !xc_range_find((uintptr_t)p, &r) &&
	    r.kind == XC_R_MANAGED)
		return XC_AC_DEV;
	if (host == 1)
		return XC_AC_HOST;
	if (host == 0)
		return XC_AC_DEV;
	if (!xc_range_find((uintptr_t)p, &r) && r.kind == XC_R_DEVICE)
		return XC_AC_DEV;
	return XC_AC_HOST;
}

/* Rows of a chunk between the host and a packed staging block. */
static void xc_ac_pack(uint8_t *stage, uint8_t *host, const struct xc_rows *m,
		       uint64_t n, uint64_t k, int to_stage)
{
	uint64_t z, y;

	for (z = 0; z < k; z++) {
		uint8_t *h = host + z * m->hslice;
		uint8_t *st = stage + z * n * m->wb;

		if (m->hpitch == m->wb) {
			if (to_stage)
				xc_par_memcpy(st, h, n * m->wb);
			else
				xc_par_memcpy(h, st, n * m->wb);
			continue;
		}
		for (y = 0; y < n; y++) {
			if (to_stage)
				memcpy(st + y * m->wb, h + y * m->hpitch,
				       m->wb);
			else
				memcpy(h + y * m->hpitch, st + y * m->wb,
				       m->wb);
		}
	}
}

/*
 * The request for the part of @c from row @y0 of slice @z0, @n rows of
 * @k slices, the host side in the staging block at @off.  @rb: an array
 * row's bytes (1D copies of more than one chunk).
 */
static int xc_ac_part(const struct xc_ac *c, int to_dev, uint64_t off,
		      uint64_t z0, uint64_t y0, uint64_t n, uint64_t k,
		      uint64_t wb, uint64_t rb,
		      struct xcuda_array_copy_args *b)
{
	uint64_t *pos = to_dev ? b->dpos : b->spos, lin;

	*b = c->a;
	b->flags |= XCUDA_COPY_STAGED |
		    (to_dev ? XCUDA_COPY_SRC_ARENA : XCUDA_COPY_DST_ARENA);
	if (to_dev)
		b->src = off;
	else
		b->dst = off;
	switch (c->a.fn) {
	case XCUDA_AC_3D:
		if (to_dev) {
			b->spitch = b->sxsize = wb;
			b->sysize = n;
			memset(b->spos, 0, sizeof(b->spos));
		} else {
			b->dpitch = b->dxsize = wb;
			b->dysize = n;
			memset(b->dpos, 0, sizeof(b->dpos));
		}
		if (__builtin_add_overflow(pos[1], y0, &pos[1]) ||
		    __builtin_add_overflow(pos[2], z0, &pos[2]))
			return -1;
		b->extent[1] = n;
		b->extent[2] = k;
		return 0;
	case XCUDA_AC_2D_TO_ARRAY:
	case XCUDA_AC_2D_FROM_ARRAY:
		if (to_dev)
			b->spitch = wb;
		else
			b->dpitch = wb;
		b->extent[1] = n;
		return __builtin_add_overflow(pos[1], y0, &pos[1]) ? -1 : 0;
	}
	/* 1D: the array position of byte y0 of the copy. */
	b->extent[0] = n;
	if (!rb)
		return 0;
	if (__builtin_mul_overflow(pos[1], rb, &lin) ||
	    __builtin_add_overflow(lin, pos[0], &lin) ||
	    __builtin_add_overflow(lin, y0, &lin))
		return -1;
	pos[0] = lin % rb;
	pos[1] = lin / rb;
	return 0;
}

struct xc_ac_flight {
	uint64_t id;
	uint64_t off;
	uint8_t *host;		/* D2H: where the chunk goes */
	uint64_t n, k;
};

static cudaError_t xc_ac_retire(struct xc_session *s, struct xc_ac_flight *q,
				unsigned int *head, unsigned int *nq,
				const struct xc_rows *m, int to_dev,
				cudaError_t err)
{
	struct xc_ac_flight *f = &q[*head % XC_AC_WINDOW];
	struct xcuda_response rsp;
	cudaError_t e;

	e = xc_wait_locked(s, f->id, &rsp);
	if (!e)
		e = (cudaError_t)rsp.status;
	if (!to_dev) {
		if (!e && !err)
			xc_ac_pack(xc_arena_ptr(s, f->off), f->host, m, f->n,
				   f->k, 0);
		xc_arena_release(s->staging, f->off);
	}
	(*head)++;
	(*nq)--;
	return err ? err : e;
}

/*
 * A copy with one pageable host side (@to_dev: the source), the other an
 * array or device memory.  Lock held.
 */
static cudaError_t xc_ac_staged(struct xc_session *s, const struct xc_ac *c,
				int to_dev, uint8_t *host,
				const struct xc_rows *m, uint64_t rb)
{
	struct xc_ac_flight q[XC_AC_WINDOW];
	unsigned int head = 0, nq = 0;
	cudaError_t err = cudaSuccess;
	uint64_t z = 0, y = 0, slice;
	int by_slice;

	/* Whole slices a chunk when one fits, else rows of one slice. */
	by_slice = !__builtin_mul_overflow(m->wb, m->rows, &slice) &&
		   slice <= s->chunk;
	if (m->wb > s->chunk)
		return cudaErrorInvalidValue;
	while (z < m->slices && !err) {
		struct xcuda_array_copy_args b;
		struct xcuda_request req;
		uint64_t want, got, off, n, k;
		struct xc_ac_flight *f;
		uint8_t *h;

		if (nq == XC_AC_WINDOW ||
		    (nq && (nq + 1) * s->chunk > s->staging_size / 2))
			err = xc_ac_retire(s, q, &head, &nq, m, to_dev, err);
		if (err)
			break;
		if (by_slice) {
			want = slice * (m->slices - z);
			if (want > s->chunk)
				want = s->chunk;
			off = xc_staging_get(s, want, slice, &got);
			n = m->rows;
			k = got / slice;
			if (k > m->slices - z)
				k = m->slices - z;
		} else {
			want = m->wb * (m->rows - y);
			if (want > s->chunk)
				want = s->chunk;
			off = xc_staging_get(s, want, m->wb, &got);
			n = got / m->wb;
			if (n > m->rows - y)
				n = m->rows - y;
			k = 1;
		}
		if (off == UINT64_MAX) {
			err = cudaErrorMemoryAllocation;
			break;
		}
		h = host + m->off + z * m->hslice + y * m->hpitch;
		if (xc_ac_part(c, to_dev, off, z, y, n, k, m->wb, rb, &b)) {
			xc_arena_release(s->staging, off);
			err = cudaErrorInvalidValue;
			break;
		}
		f = &q[(head + nq) % XC_AC_WINDOW];
		f->off = off;
		f->host = h;
		f->n = n;
		f->k = k;
		if (to_dev)
			xc_ac_pack(xc_arena_ptr(s, off), h, m, n, k, 1);
		xc_req_array_copy(&req, &b);
		/* H2D blocks are freed on the answer; D2H ones after use. */
		err = xc_send_locked(s, &req, to_dev ? off : UINT64_MAX,
				     &f->id);
		if (err) {
			if (!to_dev)
				xc_arena_release(s->staging, off);
			break;
		}
		nq++;
		if (by_slice) {
			z += k;
		} else {
			y += n;
			if (y == m->rows) {
				y = 0;
				z++;
			}
		}
	}
	while (nq)
		err = xc_ac_retire(s, q, &head, &nq, m, to_dev, err);
	if (!err)
		err = xc_take_latched(s);
	return err;
}

/* A 3D copy between two host sides: CUDA copies it on the host too. */
static void xc_ac_host(const uint8_t *src, const struct xc_rows *sm,
		       uint8_t *dst, const struct xc_rows *dm)
{
	uint64_t z, y;

	for (z = 0; z < sm->slices; z++)
		for (y = 0; y < sm->rows; y++)
			memmove(dst + dm->off + z * dm->hslice +
				y * dm->hpitch,
				src + sm->off + z * sm->hslice +
				y * sm->hpitch, sm->wb);
}

static cudaError_t xc_ac_run(struct xc_ac *c, cudaStream_t stream,
			     int per_thread)
{
	struct xcuda_array_copy_args *a = &c->a;
	enum xc_ac_side ss = XC_AC_NONE, ds = XC_AC_NONE;
	struct xc_rows sm = { 0 }, dm = { 0 };
	uint64_t sspan = 0, dspan = 0, soff = 0, doff = 0, rb = 0, es, end;
	const void *sp = (const void *)(uintptr_t)a->src;
	void *dp = (void *)(uintptr_t)a->dst;
	struct xc_session *s;
	int hs, hd, arrays, i;
	cudaError_t err;

	err = xc_ready(&s);
	if (err)
		return xc_ret(err);
	if (xc_kind_sides((enum cudaMemcpyKind)a->kind, &hs, &hd))
		return xc_ret(cudaErrorInvalidMemcpyDirection);
	if (c->async) {
		a->flags |= XCUDA_COPY_ASYNC;
		if (xc_stream_handle(stream, per_thread, &a->stream))
			return xc_ret(cudaErrorInvalidResourceHandle);
	}
	if (xc_handle_in(c->sarr, &a->src_array) ||
	    xc_handle_in(c->darr, &a->dst_array))
		return xc_ret(cudaErrorInvalidResourceHandle);
	arrays = xc_ac_arrays(c);
	/* A position plus the extent that wraps names no array's part. */
	for (i = 0; i < 3; i++)
		if (__builtin_add_overflow(a->spos[i], a->extent[i], &end) ||
		    __builtin_add_overflow(a->dpos[i], a->extent[i], &end))
			return xc_ret(cudaErrorInvalidValue);
	/* CUDA refuses a host pitch below the row. */
	if ((a->fn == XCUDA_AC_2D_TO_ARRAY && a->extent[0] > a->spitch) ||
	    (a->fn == XCUDA_AC_2D_FROM_ARRAY && a->extent[0] > a->dpitch))
		return xc_ret(cudaErrorInvalidPitchValue);
	if (!(arrays & 1)) {
		err = xc_ac_rows(c, 1, &sm, &sspan);
		if (err)
			return xc_ret(err);
		ss = xc_ac_classify(s, sp, sspan, hs, &soff);
	}
	if (!(arrays & 2)) {
		err = xc_ac_rows(c, 0, &dm, &dspan);
		if (err)
			return xc_ret(err);
		ds = xc_ac_classify(s, dp, dspan, hd, &doff);
	}
	/*
	 * Managed memory that the kind calls host memory: the worker is
	 * told it is device memory, which it refuses to be called otherwise.
	 */
	if (hs >= 0 && hd >= 0 && ((ss == XC_AC_DEV && hs == 1) ||
				   (ds == XC_AC_DEV && hd == 1))) {
		hs = ss == XC_AC_DEV ? 0 : hs;
		hd = ds == XC_AC_DEV ? 0 : hd;
		a->kind = hs ? (hd ? cudaMemcpyHostToHost :
			       cudaMemcpyHostToDevice) :
			       (hd ? cudaMemcpyDeviceToHost :
				     cudaMemcpyDeviceToDevice);
	}
	/* An empty copy goes as it is: CUDA says what it says of it. */
	if (ss == XC_AC_HOST && !sspan)
		ss = XC_AC_ARENA;
	if (ds == XC_AC_HOST && !dspan)
		ds = XC_AC_ARENA;
	if (ss >= XC_AC_ARENA && ds >= XC_AC_ARENA &&
	    a->fn != XCUDA_AC_3D_PEER) {
		/* Host to host: only cudaMemcpy3D has two pointer sides. */
		if (sm.wb > sm.hpitch || sm.wb > dm.hpitch)
			return xc_ret(cudaErrorInvalidPitchValue);
		xc_ac_host(sp, &sm, dp, &dm);
		return cudaSuccess;
	}
	if (ss == XC_AC_ARENA) {
		a->src = soff;
		a->flags |= XCUDA_COPY_SRC_ARENA;
	}
	if (ds == XC_AC_ARENA) {
		a->dst = doff;
		a->flags |= XCUDA_COPY_DST_ARENA;
	}
	if (ss != XC_AC_HOST && ds != XC_AC_HOST)
		return xc_call_array_copy(a);
	/* Pageable: the staging block's rows are packed; CUDA's are not. */
	if (a->fn == XCUDA_AC_3D &&
	    ((ss == XC_AC_HOST && sm.wb > sm.hpitch && sm.rows > 1) ||
	     (ds == XC_AC_HOST && dm.wb > dm.hpitch && dm.rows > 1)))
		return xc_ret(cudaErrorInvalidPitchValue);
	/* A 1D copy of more than a chunk needs the array's row. */
	if ((a->fn == XCUDA_AC_TO_ARRAY || a->fn == XCUDA_AC_FROM_ARRAY) &&
	    a->extent[0] > s->chunk) {
		err = xc_array_elem_size(a->fn == XCUDA_AC_TO_ARRAY ?
				   (cudaArray_const_t)c->darr : c->sarr,
				   &es, &rb);
		if (err)
			return err;
		rb *= es;
		if (!rb)
			return xc_ret(cudaErrorInvalidValue);
	}
	pthread_mutex_lock(&s->lock);
	if (ss == XC_AC_HOST)
		err = xc_ac_staged(s, c, 1, (uint8_t *)sp, &sm, rb);
	else
		err = xc_ac_staged(s, c, 0, dp, &dm, rb);
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

/* The fields cudaMemcpy3DParms and cudaMemcpy3DPeerParms share. */
static void xc_ac_3d(struct xc_ac *c, cudaArray_const_t sarr,
		     struct cudaPos spos, struct cudaPitchedPtr sptr,
		     cudaArray_t darr, struct cudaPos dpos,
		     struct cudaPitchedPtr dptr, struct cudaExtent extent)
{
	c->sarr = sarr;
	c->darr = darr;
	c->a.src = (uintptr_t)sptr.ptr;
	c->a.spitch = sptr.pitch;
	c->a.sxsize = sptr.xsize;
	c->a.sysize = sptr.ysize;
	c->a.dst = (uintptr_t)dptr.ptr;
	c->a.dpitch = dptr.pitch;
	c->a.dxsize = dptr.xsize;
	c->a.dysize = dptr.ysize;
	c->a.spos[0] = spos.x;
	c->a.spos[1] = spos.y;
	c->a.spos[2] = spos.z;
	c->a.dpos[0] = dpos.x;
	c->a.dpos[1] = dpos.y;
	c->a.dpos[2] = dpos.z;
	c->a.extent[0] = extent.width;
	c->a.extent[1] = extent.height;
	c->a.extent[2] = extent.depth;
}

/* cudaMemcpy3D(Async): the parameters' fields, one for one. */
static cudaError_t xc_memcpy3d(const struct cudaMemcpy3DParms *p,
			       cudaStream_t stream, int async, int per_thread)
{
	struct xc_ac c;

	if (!p)
		return xc_ret(cudaErrorInvalidValue);
	memset(&c, 0, sizeof(c));
	c.a.fn = XCUDA_AC_3D;
	c.a.kind = p->kind;
	xc_ac_3d(&c, p->srcArray, p->srcPos, p->srcPtr, p->dstArray,
		 p->dstPos, p->dstPtr, p->extent);
	c.async = async;
	return xc_ac_run(&c, stream, per_thread);
}

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
	return xc_memcpy3d(p, 0, 0, 0);
}

cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p);
cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
	return xc_memcpy3d(p, 0, 0, 1);
}

cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p,
			      cudaStream_t stream)
{
	return xc_memcpy3d(p, stream, 1, 0);
}

cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
				   cudaStream_t stream);
cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
				   cudaStream_t stream)
{
	return xc_memcpy3d(p, stream, 1, 1);
}

/*
 * cudaMemcpy3DPeer(Async): device memory and arrays on both sides, so
 * never staged; a pointer in the arena goes as its offset, as in
 * cudaMemcpy3D, and CUDA says what it says of it.
 */
static cudaError_t xc_memcpy3d_peer(const struct cudaMemcpy3DPeerParms *p,
				    cudaStream_t stream, int async,
				    int per_thread)
{
	struct xc_ac c;

	if (!p)
		return xc_ret(cudaErrorInvalidValue);
	memset(&c, 0, sizeof(c));
	c.a.fn = XCUDA_AC_3D_PEER;
	c.a.kind = cudaMemcpyDeviceToDevice;
	c.a.sdev = p->srcDevice;
	c.a.ddev = p->dstDevice;
	xc_ac_3d(&c, p->srcArray, p->srcPos, p->srcPtr, p->dstArray,
		 p->dstPos, p->dstPtr, p->extent);
	c.async = async;
	return xc_ac_run(&c, stream, per_thread);
}

cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
	return xc_memcpy3d_peer(p, 0, 0, 0);
}

cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p);
cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p)
{
	return xc_memcpy3d_peer(p, 0, 0, 1);
}

cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p,
				  cudaStream_t stream)
{
	return xc_memcpy3d_peer(p, stream, 1, 0);
}

cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p,
				       cudaStream_t stream);
cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p,
				       cudaStream_t stream)
{
	return xc_memcpy3d_peer(p, stream, 1, 1);
}

/* The 2D and 1D array calls: one copy of the 3D kind's fields. */
static cudaError_t xc_acopy(uint32_t fn, cudaArray_t darr, size_t dx,
			    size_t dy, void *dst, size_t dpitch,
			    cudaArray_const_t sarr, size_t sx, size_t sy,
			    const void *src, size_t spitch, size_t width,
			    size_t height, enum cudaMemcpyKind kind,
			    cudaStream_t stream, int async, int per_thread)
{
	struct xc_ac c;

	memset(&c, 0, sizeof(c));
	c.a.fn = fn;
	c.a.kind = kind;
	c.darr = darr;
	c.sarr = sarr;
	c.a.dst = (uintptr_t)dst;
	c.a.dpitch = dpitch;
	c.a.src = (uintptr_t)src;
	c.a.spitch = spitch;
	c.a.dpos[0] = dx;
	c.a.dpos[1] = dy;
	c.a.spos[0] = sx;
	c.a.spos[1] = sy;
	c.a.extent[0] = width;
	c.a.extent[1] = height;
	c.a.extent[2] = 1;
	c.async = async;
	return xc_ac_run(&c, stream, per_thread);
}

/*
 * Each entry point is declared first: the headers hide the per-thread
 * variants' prototypes.
 */
#define XC_2D_TO(name, async, pt)					\
XC_2D_TO_SIG(name, async);						\
XC_2D_TO_SIG(name, async)						\
{									\
	return xc_acopy(XCUDA_AC_2D_TO_ARRAY, dst, wOffset, hOffset,	\
			NULL, 0, NULL, 0, 0, src, spitch, width, height, \
			kind, XC_STREAM_A(async), async, pt);		\
}
#define XC_2D_TO_SIG(name, async)					\
cudaError_t name(cudaArray_t dst, size_t wOffset, size_t hOffset,	\
		 const void *src, size_t spitch, size_t width,		\
		 size_t height, enum cudaMemcpyKind kind XC_STREAM_P(async))
#define XC_2D_FROM(name, async, pt)					\
XC_2D_FROM_SIG(name, async);						\
XC_2D_FROM_SIG(name, async)						\
{									\
	return xc_acopy(XCUDA_AC_2D_FROM_ARRAY, NULL, 0, 0, dst, dpitch, \
			src, wOffset, hOffset, NULL, 0, width, height,	\
			kind, XC_STREAM_A(async), async, pt);		\
}
#define XC_2D_FROM_SIG(name, async)					\
cudaError_t name(void *dst, size_t dpitch, cudaArray_const_t src,	\
		 size_t wOffset, size_t hOffset, size_t width,		\
		 size_t height, enum cudaMemcpyKind kind XC_STREAM_P(async))
#define XC_1D_TO(name, async, pt)					\
XC_1D_TO_SIG(name, async);						\
XC_1D_TO_SIG(name, async)						\
{									\
	return xc_acopy(XCUDA_AC_TO_ARRAY, dst, wOffset, hOffset, NULL,	\
			0, NULL, 0, 0, src, 0, count, 1, kind,		\
			XC_STREAM_A(async), async, pt);			\
}
#define XC_1D_TO_SIG(name, async)					\
cudaError_t name(cudaArray_t dst, size_t wOffset, size_t hOffset,	\
		 const void *src, size_t count,				\
		 enum cudaMemcpyKind kind XC_STREAM_P(async))
#define XC_1D_FROM(name, async, pt)					\
XC_1D_FROM_SIG(name, async);						\
XC_1D_FROM_SIG(name, async)						\
{									\
	return xc_acopy(XCUDA_AC_FROM_ARRAY, NULL, 0, 0, dst, 0, src,	\
			wOffset, hOffset, NULL, 0, count, 1, kind,	\
			XC_STREAM_A(async), async, pt);			\
}
#define XC_1D_FROM_SIG(name, async)					\
cudaError_t name(void *dst, cudaArray_const_t src, size_t wOffset,	\
		 size_t hOffset, size_t count,				\
		 enum cudaMemcpyKind kind XC_STREAM_P(async))
/* The stream parameter of the Async forms, and its argument. */
#define XC_STREAM_P(async)	XC_STREAM_P_##async
#define XC_STREAM_P_0
#define XC_STREAM_P_1		, cudaStream_t stream
#define XC_STREAM_A(async)	XC_STREAM_A_##async
#define XC_STREAM_A_0		0
#define XC_STREAM_A_1		stream

XC_2D_TO(cudaMemcpy2DToArray, 0, 0)
XC_2D_TO(cudaMemcpy2DToArray_ptds, 0, 1)
XC_2D_TO(cudaMemcpy2DToArrayAsync, 1, 0)
XC_2D_TO(cudaMemcpy2DToArrayAsync_ptsz, 1, 1)
XC_2D_FROM(cudaMemcpy2DFromArray, 0, 0)
XC_2D_FROM(cudaMemcpy2DFromArray_ptds, 0, 1)
XC_2D_FROM(cudaMemcpy2DFromArrayAsync, 1, 0)
XC_2D_FROM(cudaMemcpy2DFromArrayAsync_ptsz, 1, 1)
XC_1D_TO(cudaMemcpyToArray, 0, 0)
XC_1D_TO(cudaMemcpyToArray_ptds, 0, 1)
XC_1D_TO(cudaMemcpyToArrayAsync, 1, 0)
XC_1D_TO(cudaMemcpyToArrayAsync_ptsz, 1, 1)
XC_1D_FROM(cudaMemcpyFromArray, 0, 0)
XC_1D_FROM(cudaMemcpyFromArray_ptds, 0, 1)
XC_1D_FROM(cudaMemcpyFromArrayAsync, 1, 0)
XC_1D_FROM(cudaMemcpyFromArrayAsync_ptsz, 1, 1)

cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst,
				     size_t hOffsetDst, cudaArray_const_t src,
				     size_t wOffsetSrc, size_t hOffsetSrc,
				     size_t width, size_t height,
				     enum cudaMemcpyKind kind)
{
	return xc_acopy(XCUDA_AC_2D_ARRAY_TO_ARRAY, dst, wOffsetDst,
			hOffsetDst, NULL, 0, src, wOffsetSrc, hOffsetSrc,
			NULL, 0, width, height, kind, 0, 0, 0);
}

cudaError_t cudaMemcpy2DArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
					  size_t hOffsetDst,
					  cudaArray_const_t src,
					  size_t wOffsetSrc,
					  size_t hOffsetSrc, size_t width,
					  size_t height,
					  enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
					  size_t hOffsetDst,
					  cudaArray_const_t src,
					  size_t wOffsetSrc,
					  size_t hOffsetSrc, size_t width,
					  size_t height,
					  enum cudaMemcpyKind kind)
{
	return xc_acopy(XCUDA_AC_2D_ARRAY_TO_ARRAY, dst, wOffsetDst,
			hOffsetDst, NULL, 0, src, wOffsetSrc, hOffsetSrc,
			NULL, 0, width, height, kind, 0, 0, 1);
}

cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst,
				   size_t hOffsetDst, cudaArray_const_t src,
				   size_t wOffsetSrc, size_t hOffsetSrc,
				   size_t count, enum cudaMemcpyKind kind)
{
	return xc_acopy(XCUDA_AC_ARRAY_TO_ARRAY, dst, wOffsetDst,
			hOffsetDst, NULL, 0, src, wOffsetSrc, hOffsetSrc,
			NULL, 0, count, 1, kind, 0, 0, 0);
}

cudaError_t cudaMemcpyArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
					size_t hOffsetDst,
					cudaArray_const_t src,
					size_t wOffsetSrc, size_t hOffsetSrc,
					size_t count,
					enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
					size_t hOffsetDst,
					cudaArray_const_t src,
					size_t wOffsetSrc, size_t hOffsetSrc,
					size_t count,
					enum cudaMemcpyKind kind)
{
	return xc_acopy(XCUDA_AC_ARRAY_TO_ARRAY, dst, wOffsetDst,
			hOffsetDst, NULL, 0, src, wOffsetSrc, hOffsetSrc,
			NULL, 0, count, 1, kind, 0, 0, 1);
}

/* ---- texture and surface objects ---- */

/* The wire's resource descriptor: CREATE_SURFACE_OBJECT's arguments. */
typedef struct xcuda_create_surface_object_args xc_res_t;

_Static_assert(offsetof(struct xcuda_create_texture_object_args, tex) ==
	       sizeof(xc_res_t), "texture arguments start with a resource");

static cudaError_t xc_res_out(const struct cudaResourceDesc *r, xc_res_t *w)
{
	xcuda_res_to_wire(r, w);
	switch (r->resType) {
	case cudaResourceTypeArray:
		if (xc_handle_in(r->res.array.array, &w->array))
			return cudaErrorInvalidResourceHandle;
		break;
	case cudaResourceTypeMipmappedArray:
		if (xc_handle_in(r->res.mipmap.mipmap, &w->array))
			return cudaErrorInvalidResourceHandle;
		break;
	default:
		break;
	}
	return cudaSuccess;
}

/* The worker's answer: handles become the guest's array pointers. */
static void xc_res_in(const xc_res_t *w, struct cudaResourceDesc *r)
{
	xcuda_res_from_wire(w, r);
	switch (w->res_type) {
	case cudaResourceTypeArray:
		r->res.array.array = (cudaArray_t)(uintptr_t)w->array;
		break;
	case cudaResourceTypeMipmappedArray:
		r->res.mipmap.mipmap =
			(cudaMipmappedArray_t)(uintptr_t)w->array;
		break;
	}
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t *pTexObject,
				    const struct cudaResourceDesc *pResDesc,
				    const struct cudaTextureDesc *pTexDesc,
				    const struct cudaResourceViewDesc *view)
{
	struct xcuda_create_texture_object_args a;
	struct xcuda_create_texture_object_res r;
	struct xc_xfer x[2];
	xc_res_t w;
	cudaError_t err;

	/* A NULL texture descriptor travels as none: CUDA answers for it. */
	if (!pTexObject || !pResDesc)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_res_out(pResDesc, &w);
	if (err)
		return xc_ret(err);
	memset(&a, 0, sizeof(a));
	memcpy(&a, &w, sizeof(w));
	x[0].ptr = (void *)pTexDesc;
	x[0].len = pTexDesc ? sizeof(*pTexDesc) : 0;
	x[0].dir = XC_XFER_IN;
	x[0].ext = &a.tex;
	x[1].ptr = (void *)view;
	x[1].len = view ? sizeof(*view) : 0;
	x[1].dir = XC_XFER_IN;
	x[1].ext = &a.view;
	err = xc_forward_xfer(XCUDA_OP_CREATE_TEXTURE_OBJECT, &a, sizeof(a),
			      &r, sizeof(r), x, 2);
	if (err)
		return err;
	*pTexObject = r.obj;
	return cudaSuccess;
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *pSurfObject,
				    const struct cudaResourceDesc *pResDesc)
{
	struct xcuda_create_surface_object_res r;
	xc_res_t w;
	cudaError_t err;

	if (!pSurfObject || !pResDesc)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_res_out(pResDesc, &w);
	if (err)
		return xc_ret(err);
	err = xc_call_create_surface_object(&w, &r);
	if (err)
		return err;
	*pSurfObject = r.obj;
	return cudaSuccess;
}

static cudaError_t xc_get_res(uint16_t op, struct cudaResourceDesc *out,
			      uint64_t obj)
{
	struct xcuda_get_texture_object_resource_desc_args a;
	struct xc_xfer x;
	xc_res_t w;
	cudaError_t err;

	typedef struct xcuda_get_surface_object_resource_desc_args surf_t;

	_Static_assert(sizeof(a) == sizeof(surf_t),
		       "the two getters share their layout");
	if (!out)
		return xc_ret(cudaErrorInvalidValue);
	memset(&a, 0, sizeof(a));
	memset(&w, 0, sizeof(w));
	a.obj = obj;
	x.ptr = &w;
	x.len = sizeof(w);
	x.dir = XC_XFER_OUT;
	x.ext = &a.desc;
	err = xc_forward_xfer(op, &a, sizeof(a), NULL, 0, &x, 1);
	if (err)
		return err;
	xc_res_in(&w, out);
	return cudaSuccess;
}

cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *pResDesc,
					     cudaTextureObject_t texObject)
{
	return xc_get_res(XCUDA_OP_GET_TEXTURE_OBJECT_RESOURCE_DESC, pResDesc,
			  texObject);
}

cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *pResDesc,
					     cudaSurfaceObject_t surfObject)
{
	return xc_get_res(XCUDA_OP_GET_SURFACE_OBJECT_RESOURCE_DESC, pResDesc,
			  surfObject);
}
