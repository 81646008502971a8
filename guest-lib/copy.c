// SPDX-License-Identifier: MIT
/*
 * Copies between guest memory and the device.  The host side of a copy is
 * the arena on the wire, or a registered region: memory that
 * cudaMallocHost gave out is in the arena already and goes as is, memory
 * that cudaHostRegister shared with the worker (hostmem.c) goes by region
 * and offset; other pageable memory is staged through the arena in
 * chunks, several in flight, so that staging chunk k+1 here overlaps the
 * worker's DMA of chunk k.
 */
#include <string.h>

#include "graph_bounce.h"
#include "guest.h"

#define XC_WINDOW 8
/*
 * A direct copy's answer is spun for as long as the copy would take at
 * this rate, well below PCIe 5.0's 55 GB/s: CUDA, too, spins through it.
 */
#define XC_COPY_BYTES_PER_NS 32

/* Where a pointer of a copy lives; XC_REG: a registered region. */
enum xc_side { XC_HOST, XC_ARENA, XC_DEV, XC_REG };

/*
 * A pageable side that lies in a registered region becomes that region.
 * Session lock held: cudaHostUnregister sends HOST_UNREGISTER under it,
 * so the region lives until this copy's request is on the ring.
 */
static enum xc_side xc_registered(enum xc_side side, const void *p,
				  uint64_t len, uint32_t *region,
				  uint64_t *off)
{
	if (side == XC_HOST && xc_hostmem_find(p, len, region, off))
		return XC_REG;
	return side;
}

static enum xc_side xc_classify(struct xc_session *s, const void *p,
				size_t len, int host, uint64_t *off)
{
	struct xc_range r;

	if (xc_in_arena(s, p, len, off))
		return XC_ARENA;
	/*
	 * Managed memory is device memory whatever the kind says: the
	 * library never touches the program's managed pages (managed.c).
	 */
	if (xc_managed_any() && !xc_range_find((uintptr_t)p, &r) &&
	    r.kind == XC_R_MANAGED)
		return XC_DEV;
	if (host == 1)
		return XC_HOST;
	if (host == 0)
		return XC_DEV;
	/* cudaMemcpyDefault: what the guest allocated tells. */
	if (!xc_range_find((uintptr_t)p, &r) && r.kind == XC_R_DEVICE)
		return XC_DEV;
	return XC_HOST;
}

int xc_kind_sides(enum cudaMemcpyKind kind, int *src, int *dst)
{
	switch (kind) {
	case cudaMemcpyHostToHost:
		*src = 1; *dst = 1;
		return 0;
	case cudaMemcpyHostToDevice:
		*src = 1; *dst = 0;
		return 0;
	case cudaMemcpyDeviceToHost:
		*src = 0; *dst = 1;
		return 0;
	case cudaMemcpyDeviceToDevice:
		*src = 0; *dst = 0;
		return 0;
	case cudaMemcpyDefault:
		*src = -1; *dst = -1;
		return 0;
	}
	return -1;
}

struct xc_inflight {
	uint64_t id;
	uint64_t off;		/* staging block, D2H: read on answer */
	uint8_t *host;		/* D2H: where the chunk goes */
	uint64_t len;
	uint64_t rows;		/* D2H: rows of @width, @hpitch apart */
	uint64_t width;
	uint64_t hpitch;
};

/* Staging rows @width apart to or from host rows @hpitch apart. */
static void xc_copy_rows(uint8_t *dst, size_t dpitch, const uint8_t *src,
			 size_t spitch, size_t width, uint64_t rows)
{
	uint64_t i;

	if (rows == 1) {
		xc_par_memcpy(dst, src, width);
		return;
	}
	for (i = 0; i < rows; i++)
		memcpy(dst + i * dpitch, src + i * spitch, width);
}

/* Waits for the oldest chunk; D2H chunks are copied out.  Lock held. */
static cudaError_t xc_retire(struct xc_session *s, struct xc_inflight *q,
			     unsigned int *head, unsigned int *n,
			     cudaError_t err)
{
	struct xc_inflight *c = &q[*head % XC_WINDOW];
	struct xcuda_response rsp;
	cudaError_t e;

	e = xc_wait_locked(s, c->id, &rsp);
	if (!e)
		e = (cudaError_t)rsp.status;
	if (!e && !err && c->host)
		xc_copy_rows(c->host, c->hpitch, xc_arena_ptr(s, c->off),
			     c->width, c->width, c->rows);
	if (c->host)
		xc_arena_release(s->staging, c->off);
	(*head)++;
	(*n)--;
	return err ? err : e;
}

/*
 * A 1D or 2D copy with one host side that is pageable: @rows rows of
 * @width bytes, host rows @hpitch apart, device rows @dpitch apart.
 */
static cudaError_t xc_staged_raw(struct xc_session *s, int to_dev,
				 uint8_t *host, size_t hpitch, uint64_t dev,
				 size_t dpitch, size_t width, size_t rows,
				 uint32_t stream, int async, int two_d)
{
	struct xc_inflight q[XC_WINDOW];
	unsigned int head = 0, n = 0;
	cudaError_t err = cudaSuccess;
	size_t row = 0, col = 0;

	while (row < rows && !err) {
		struct xcuda_request req;
		uint64_t want, got, off, nrows;
		struct xc_inflight *c;

		/* Leave staging room for others while chunks fly. */
		if (n == XC_WINDOW ||
		    (n && (n + 1) * s->chunk > s->staging_size / 2))
			err = xc_retire(s, q, &head, &n, err);
		if (err)
			break;
		/* 1D copies are one long row, cut into chunks. */
		want = two_d ? width * (rows - row) : width - col;
		if (want > s->chunk)
			want = s->chunk;
		off = xc_staging_get(s, want, two_d ? width : 1, &got);
		if (off == UINT64_MAX) {
			err = cudaErrorMemoryAllocation;
			break;
		}
		c = &q[(head + n) % XC_WINDOW];
		c->off = off;
		c->host = NULL;
		if (two_d) {
			nrows = got / width;
			c->len = nrows * width;
		} else {
			nrows = 1;
			c->len = got < width - col ? got : width - col;
		}
		c->rows = nrows;
		c->width = two_d ? width : c->len;
		c->hpitch = hpitch;
		if (to_dev)
			xc_copy_rows(xc_arena_ptr(s, off), c->width,
				     host + row * hpitch + col, hpitch,
				     c->width, nrows);
		else
			c->host = host + row * hpitch + col;
		if (two_d) {
			struct xcuda_memcpy_2d_args a = { 0 };
			uint64_t d = dev + row * dpitch;

			a.dst = to_dev ? d : off;
			a.dpitch = to_dev ? dpitch : width;
			a.src = to_dev ? off : d;
			a.spitch = to_dev ? width : dpitch;
			a.width = width;
			a.height = nrows;
			a.dir = to_dev ? XCUDA_COPY_H2D : XCUDA_COPY_D2H;
			a.flags = XCUDA_COPY_STAGED |
				  (async ? XCUDA_COPY_ASYNC : 0);
			a.stream = stream;
			xc_req_memcpy_2d(&req, &a);
		} else {
			struct xcuda_memcpy_args a = { 0 };

			a.dst = to_dev ? dev + col : off;
			a.src = to_dev ? off : dev + col;
			a.count = c->len;
			a.dir = to_dev ? XCUDA_COPY_H2D : XCUDA_COPY_D2H;
			a.flags = XCUDA_COPY_STAGED |
				  (async ? XCUDA_COPY_ASYNC : 0);
			a.stream = stream;
			xc_req_memcpy(&req, &a);
		}
		/* H2D blocks are freed on the answer; D2H ones after use. */
		err = xc_send_locked(s, &req, to_dev ? off : UINT64_MAX,
				     &c->id);
		if (err) {
			if (!to_dev)
				xc_arena_release(s->staging, off);
			break;
		}
		n++;
		if (two_d) {
			row += nrows;
		} else {
			col += c->len;
			if (col == width)
				row = rows;
		}
	}
	while (n)
		err = xc_retire(s, q, &head, &n, err);
	return err;
}

/* A staged copy of the program's: also reports a latched error. */
static cudaError_t xc_staged(struct xc_session *s, int to_dev,
			     uint8_t *host, size_t hpitch, uint64_t dev,
			     size_t dpitch, size_t width, size_t rows,
			     uint32_t stream, int async, int two_d)
{
	cudaError_t err = xc_staged_raw(s, to_dev, host, hpitch, dev, dpitch,
					width, rows, stream, async, two_d);

	if (!err)
		err = xc_take_latched(s);
	return err;
}

cudaError_t xc_copy_managed_locked(struct xc_session *s, int to_dev,
				   void *host, uint64_t dev, size_t len)
{
	struct xcuda_host_memcpy_args h = { 0 };
	struct xcuda_request req;
	cudaError_t err;
	uint64_t off;
	uint32_t reg;

	if (!s)
		return cudaErrorDevicesUnavailable;
	if (!xc_hostmem_find(host, len, &reg, &off))
		return xc_staged_raw(s, to_dev, host, len, dev, len, len, 1,
				     0, 0, 0);
	h.region = reg;
	h.dir = to_dev ? XCUDA_COPY_H2D : XCUDA_COPY_D2H;
	h.off = off;
	h.dev = dev;
	h.count = len;
	xc_req_host_memcpy(&req, &h);
	/* Not xc_call_locked(): a latched error is not this copy's. */
	s->t.expect_ns = len / XC_COPY_BYTES_PER_NS;
	err = xc_round_trip_locked(s, &req, NULL, 0);
	s->t.expect_ns = 0;
	return err;
}

/*
 * One request naming arena offsets or device pointers only.  Lock held.
 * An asynchronous one is posted only if its device sides are our own
 * allocations (@known): CUDA reports other pointers at the call.
 */
static cudaError_t xc_direct(struct xc_session *s, struct xcuda_request *req,
			     int async, int known, uint64_t bytes)
{
	cudaError_t err;

	if (async && known)
		return xc_post_locked(s, req, UINT64_MAX);
	s->t.expect_ns = bytes / XC_COPY_BYTES_PER_NS;
	err = xc_call_locked(s, req, NULL, 0);
	s->t.expect_ns = 0;
	return err;
}

/* Whether the device sides of a copy are extents of our allocations. */
static int xc_known(enum xc_side ss, const void *src, uint64_t sext,
		    enum xc_side ds, const void *dst, uint64_t dext)
{
	return (ss != XC_DEV || xc_range_dev_extent((uintptr_t)src, sext)) &&
	       (ds != XC_DEV || xc_range_dev_extent((uintptr_t)dst, dext));
}

/*
 * A pageable async copy while a capture may be under way: bounced into
 * the graph if its stream is captured (1, *@err), else 0.  Memory the
 * worker maps (registered regions) is copied as usual.
 */
static int xc_staged_capture(struct xc_session *s, void *dst, const void *src,
			     size_t count, enum cudaMemcpyKind kind,
			     cudaStream_t stream, int per_thread,
			     enum xc_side ss, enum xc_side ds, cudaError_t *err)
{
	uint64_t off;
	uint32_t reg;

	pthread_mutex_lock(&s->lock);
	ss = xc_registered(ss, src, count, &reg, &off);
	ds = xc_registered(ds, dst, count, &reg, &off);
	pthread_mutex_unlock(&s->lock);
	if (ss != XC_HOST && ds != XC_HOST)
		return 0;
	return xc_bounce_capture(dst, src, count, kind, stream, per_thread,
				 ss == XC_HOST ? XC_BOUNCE_SRC : XC_BOUNCE_DST,
				 err);
}

cudaError_t xc_memcpy(void *dst, const void *src, size_t count,
		      enum cudaMemcpyKind kind, cudaStream_t stream,
		      int async, int per_thread)
{
	struct xcuda_memcpy_args a = { 0 };
	struct xcuda_request req;
	struct xc_session *s;
	enum xc_side ss, ds;
	int hs, hd;
	uint64_t soff = 0, doff = 0;
	uint32_t sh, reg = 0;
	cudaError_t err;

	err = xc_ready(&s);
	if (err)
		return xc_ret(err);
	if (xc_kind_sides(kind, &hs, &hd))
		return xc_ret(cudaErrorInvalidMemcpyDirection);
	if (xc_stream_handle(stream, per_thread, &sh))
		return xc_ret(cudaErrorInvalidResourceHandle);
	if (!count)
		return cudaSuccess;
	ss = xc_classify(s, src, count, hs, &soff);
	ds = xc_classify(s, dst, count, hd, &doff);
	if (ss != XC_DEV && ds != XC_DEV) {
		memmove(dst, src, count);
		return cudaSuccess;
	}
	/* Staging would run now: a capture needs the copy at each launch. */
	if (async && (ss == XC_HOST || ds == XC_HOST) &&
	    xc_capture_maybe && xc_capture_maybe() &&
	    xc_staged_capture(s, dst, src, count, kind, stream, per_thread,
			      ss, ds, &err))
		return err;
	pthread_mutex_lock(&s->lock);
	ss = xc_registered(ss, src, count, &reg, &soff);
	ds = xc_registered(ds, dst, count, &reg, &doff);
	if (ss == XC_HOST) {
		err = xc_staged(s, 1, (uint8_t *)src, count, (uintptr_t)dst,
				count, count, 1, sh, async, 0);
	} else if (ds == XC_HOST) {
		err = xc_staged(s, 0, dst, count, (uintptr_t)src, count,
				count, 1, sh, async, 0);
	} else if (ss == XC_REG || ds == XC_REG) {
		struct xcuda_host_memcpy_args h = { 0 };

		h.region = reg;
		h.dir = ss == XC_REG ? XCUDA_COPY_H2D : XCUDA_COPY_D2H;
		h.off = ss == XC_REG ? soff : doff;
		h.dev = ss == XC_REG ? (uintptr_t)dst : (uintptr_t)src;
		h.count = count;
		h.flags = async ? XCUDA_COPY_ASYNC : 0;
		h.stream = sh;
		xc_req_host_memcpy(&req, &h);
		err = xc_direct(s, &req, async,
				xc_known(ss, src, count, ds, dst, count),
				count);
	} else {
		a.dst = ds == XC_ARENA ? doff : (uintptr_t)dst;
		a.src = ss == XC_ARENA ? soff : (uintptr_t)src;
		a.count = count;
		a.dir = ss == XC_ARENA ? XCUDA_COPY_H2D :
			ds == XC_ARENA ? XCUDA_COPY_D2H : XCUDA_COPY_D2D;
		a.flags = async ? XCUDA_COPY_ASYNC : 0;
		a.stream = sh;
		xc_req_memcpy(&req, &a);
		err = xc_direct(s, &req, async,
				xc_known(ss, src, count, ds, dst, count),
				count);
	}
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

cudaError_t xc_memcpy2d(void *dst, size_t dpitch, const void *src,
			size_t spitch, size_t width, size_t height,
			enum cudaMemcpyKind kind, cudaStream_t stream,
			int async, int per_thread)
{
	struct xcuda_memcpy_2d_args a = { 0 };
	struct xcuda_request req;
	struct xc_session *s;
	enum xc_side ss, ds;
	size_t sext, dext;
	uint64_t soff = 0, doff = 0;
	uint32_t sh, reg = 0;
	int hs, hd;
	cudaError_t err;

	err = xc_ready(&s);
	if (err)
		return xc_ret(err);
	if (xc_kind_sides(kind, &hs, &hd))
		return xc_ret(cudaErrorInvalidMemcpyDirection);
	if (xc_stream_handle(stream, per_thread, &sh))
		return xc_ret(cudaErrorInvalidResourceHandle);
	if (width > dpitch || width > spitch)
		return xc_ret(cudaErrorInvalidPitchValue);
	if (!width || !height)
		return cudaSuccess;
	sext = spitch * (height - 1) + width;
	dext = dpitch * (height - 1) + width;
	ss = xc_classify(s, src, sext, hs, &soff);
	ds = xc_classify(s, dst, dext, hd, &doff);
	if (ss != XC_DEV && ds != XC_DEV) {
		size_t i;

		for (i = 0; i < height; i++)
			memmove((uint8_t *)dst + i * dpitch,
				(const uint8_t *)src + i * spitch, width);
		return cudaSuccess;
	}
	pthread_mutex_lock(&s->lock);
	ss = xc_registered(ss, src, sext, &reg, &soff);
	ds = xc_registered(ds, dst, dext, &reg, &doff);
	if (ss == XC_REG || ds == XC_REG) {
		struct xcuda_host_memcpy_2d_args h = { 0 };

		h.region = reg;
		h.dir = ss == XC_REG ? XCUDA_COPY_H2D : XCUDA_COPY_D2H;
		h.off = ss == XC_REG ? soff : doff;
		h.hpitch = ss == XC_REG ? spitch : dpitch;
		h.dev = ss == XC_REG ? (uintptr_t)dst : (uintptr_t)src;
		h.dpitch = ss == XC_REG ? dpitch : spitch;
		h.width = width;
		h.height = height;
		h.flags = async ? XCUDA_COPY_ASYNC : 0;
		h.stream = sh;
		xc_req_host_memcpy_2d(&req, &h);
		err = xc_direct(s, &req, async,
				xc_known(ss, src, sext, ds, dst, dext),
				(uint64_t)width * height);
	} else if (ss == XC_HOST && width <= s->chunk) {
		err = xc_staged(s, 1, (uint8_t *)src, spitch, (uintptr_t)dst,
				dpitch, width, height, sh, async, 1);
	} else if (ds == XC_HOST && width <= s->chunk) {
		err = xc_staged(s, 0, dst, dpitch, (uintptr_t)src, spitch,
				width, height, sh, async, 1);
	} else if (ss == XC_HOST || ds == XC_HOST) {
		err = cudaErrorInvalidValue;
	} else {
		a.dst = ds == XC_ARENA ? doff : (uintptr_t)dst;
		a.dpitch = dpitch;
		a.src = ss == XC_ARENA ? soff : (uintptr_t)src;
		a.spitch = spitch;
		a.width = width;
		a.height = height;
		a.dir = ss == XC_ARENA ? XCUDA_COPY_H2D :
			ds == XC_ARENA ? XCUDA_COPY_D2H : XCUDA_COPY_D2D;
		a.flags = async ? XCUDA_COPY_ASYNC : 0;
		a.stream = sh;
		xc_req_memcpy_2d(&req, &a);
		err = xc_direct(s, &req, async,
				xc_known(ss, src, sext, ds, dst, dext),
				(uint64_t)width * height);
	}
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}
