// SPDX-License-Identifier: MIT
/*
 * Device memory, pinned host memory, copies, memsets and symbols.
 *
 * Pinned host memory (cudaMallocHost, cudaHostAlloc) is carved out of the
 * session's arena and pinned by the worker, so copies from it need no CPU
 * copy.  cudaHostRegister cannot move memory into the arena: on `local`
 * its pages move onto a memfd that the worker maps and pins (hostmem.c);
 * elsewhere it is recorded, and copies from it are staged like any
 * pageable copy.
 */
#include <string.h>

#include "guest.h"
#include "ptsz.h"

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	struct xcuda_malloc_args a = { size };
	struct xcuda_malloc_res r;
	struct xc_range rg = { 0 };
	cudaError_t err;

	if (!devPtr)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_call_malloc(&a, &r);
	if (err)
		return err;
	*devPtr = (void *)(uintptr_t)r.ptr;
	if (r.ptr) {
		rg.start = r.ptr;
		rg.size = size;
		rg.kind = XC_R_DEVICE;
		rg.device = xc_cur_device();
		xc_range_add(&rg);
	}
	return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
	struct xcuda_free_args a = { (uintptr_t)devPtr };
	cudaError_t err = xc_call_free(&a);

	/* The worker's cudaFree waited for the device, as CUDA's does. */
	if (!err && devPtr &&
	    xc_managed_free(xc_session_peek(), devPtr))
		xc_range_del((uintptr_t)devPtr, XC_R_DEVICE, NULL);
	return err;
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
			    size_t height)
{
	struct xcuda_malloc_pitch_args a = { width, height };
	struct xcuda_malloc_pitch_res r;
	struct xc_range rg = { 0 };
	cudaError_t err;

	if (!devPtr || !pitch)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_call_malloc_pitch(&a, &r);
	if (err)
		return err;
	*devPtr = (void *)(uintptr_t)r.ptr;
	*pitch = r.pitch;
	if (r.ptr) {
		rg.start = r.ptr;
		rg.size = r.pitch * height;
		rg.kind = XC_R_DEVICE;
		rg.device = xc_cur_device();
		xc_range_add(&rg);
	}
	return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
		       enum cudaMemcpyKind kind)
{
	return xc_memcpy(dst, src, count, kind, 0, 0, 0);
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
			    enum cudaMemcpyKind kind)
{
	return xc_memcpy(dst, src, count, kind, 0, 0, 1);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
			    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return xc_memcpy(dst, src, count, kind, stream, 1, 0);
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
				 enum cudaMemcpyKind kind,
				 cudaStream_t stream)
{
	return xc_memcpy(dst, src, count, kind, stream, 1, 1);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src,
			 size_t spitch, size_t width, size_t height,
			 enum cudaMemcpyKind kind)
{
	return xc_memcpy2d(dst, dpitch, src, spitch, width, height, kind, 0,
			   0, 0);
}

cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
			      size_t spitch, size_t width, size_t height,
			      enum cudaMemcpyKind kind)
{
	return xc_memcpy2d(dst, dpitch, src, spitch, width, height, kind, 0,
			   0, 1);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
			      size_t spitch, size_t width, size_t height,
			      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return xc_memcpy2d(dst, dpitch, src, spitch, width, height, kind,
			   stream, 1, 0);
}

cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch,
				   const void *src, size_t spitch,
				   size_t width, size_t height,
				   enum cudaMemcpyKind kind,
				   cudaStream_t stream)
{
	return xc_memcpy2d(dst, dpitch, src, spitch, width, height, kind,
			   stream, 1, 1);
}

/*
 * cudaMemset* (height 0: the 1D call) and cudaMemset2D*.  The asynchronous
 * ones are posted when they stay inside one of our allocations: CUDA
 * reports a bad pointer at the call, and the worker's CUDA then does.
 */
static cudaError_t xc_memset_any(void *p, size_t pitch, int value,
				 size_t width, size_t height,
				 cudaStream_t stream, int async,
				 int per_thread)
{
	struct xcuda_memset_2d_args a2 = { 0 };
	struct xcuda_memset_args a1 = { 0 };
	int post;
	uint32_t sh;

	if (xc_stream_handle(stream, per_thread, &sh))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a1.ptr = a2.ptr = (uintptr_t)p;
	a1.count = a2.width = width;
	a2.pitch = pitch;
	a2.height = height;
	a1.value = a2.value = value;
	a1.flags = a2.flags = async ? XCUDA_COPY_ASYNC : 0;
	a1.stream = a2.stream = sh;
	post = async && xc_range_dev_extent((uintptr_t)p, height ?
					    xc_extent_2d(pitch, width,
							 height) : width);
	if (height)
		return post ? xc_post_memset_2d(&a2) : xc_call_memset_2d(&a2);
	return post ? xc_post_memset(&a1) : xc_call_memset(&a1);
}

static cudaError_t xc_memset(void *p, int value, size_t count,
			     cudaStream_t stream, int async, int per_thread)
{
	return xc_memset_any(p, 0, value, count, 0, stream, async,
			     per_thread);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	return xc_memset(devPtr, value, count, 0, 0, 0);
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	return xc_memset(devPtr, value, count, 0, 0, 1);
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
			    cudaStream_t stream)
{
	return xc_memset(devPtr, value, count, stream, 1, 0);
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
				 cudaStream_t stream)
{
	return xc_memset(devPtr, value, count, stream, 1, 1);
}

static cudaError_t xc_memset2d(void *p, size_t pitch, int value,
			       size_t width, size_t height,
			       cudaStream_t stream, int async, int per_thread)
{
	/* A 2D memset of no rows does nothing; it must not become a 1D one. */
	if (!height)
		return cudaSuccess;
	return xc_memset_any(p, pitch, value, width, height, stream, async,
			     per_thread);
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width,
			 size_t height)
{
	return xc_memset2d(devPtr, pitch, value, width, height, 0, 0, 0);
}

cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value,
			      size_t width, size_t height)
{
	return xc_memset2d(devPtr, pitch, value, width, height, 0, 0, 1);
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value,
			      size_t width, size_t height,
			      cudaStream_t stream)
{
	return xc_memset2d(devPtr, pitch, value, width, height, stream, 1, 0);
}

cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value,
				   size_t width, size_t height,
				   cudaStream_t stream)
{
	return xc_memset2d(devPtr, pitch, value, width, height, stream, 1, 1);
}

/* ---- pinned host memory ---- */

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	struct xcuda_arena_pin_args a = { 0 };
	struct xcuda_arena_pin_res r;
	struct xcuda_request req;
	struct xc_range rg = { 0 };
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);
	uint64_t off, blk, start;

	if (err)
		return xc_ret(err);
	if (!pHost || (flags & ~(unsigned int)(cudaHostAllocPortable |
					       cudaHostAllocMapped |
					       cudaHostAllocWriteCombined)))
		return xc_ret(cudaErrorInvalidValue);
	if (!size) {
		*pHost = NULL;
		return cudaSuccess;
	}
	off = xc_arena_alloc(s->heap, size, XCUDA_PAGE_SIZE);
	if (off == UINT64_MAX)
		return xc_ret(cudaErrorMemoryAllocation);
	blk = xc_arena_find(s->heap, off, &start);
	if (blk > UINT32_MAX)
		goto nomem;
	a.flags = (flags & cudaHostAllocPortable ? cudaHostRegisterPortable
						 : 0) |
		  (flags & cudaHostAllocMapped ? cudaHostRegisterMapped : 0);
	xc_req_arena_pin(&req, &a);
	req.hdr.data_off = (uint32_t)off;
	req.hdr.data_len = (uint32_t)blk;
	err = xc_call(s, &req, &r, sizeof(r));
	if (err) {
		xc_arena_release(s->heap, off);
		return xc_ret(err);
	}
	rg.start = (uintptr_t)xc_arena_ptr(s, off);
	rg.size = size;
	rg.kind = XC_R_HOST_PINNED;
	rg.device = xc_cur_device();
	rg.arena_off = off;
	rg.devptr = r.device_ptr;
	rg.flags = flags;
	if (xc_range_add(&rg))
		goto nomem;
	*pHost = (void *)rg.start;
	return cudaSuccess;
nomem:
	xc_arena_release(s->heap, off);
	return xc_ret(cudaErrorMemoryAllocation);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void *ptr)
{
	struct xcuda_request req;
	struct xc_session *s;
	struct xc_range rg;
	cudaError_t err = xc_ready(&s);
	uint64_t start, size;

	if (err)
		return xc_ret(err);
	if (!ptr)
		return cudaSuccess;
	if (xc_range_del((uintptr_t)ptr, XC_R_HOST_PINNED, &rg))
		return xc_ret(cudaErrorInvalidValue);
	size = xc_arena_find(s->heap, rg.arena_off, &start);
	xc_req_arena_unpin(&req);
	req.hdr.data_off = (uint32_t)rg.arena_off;
	req.hdr.data_len = (uint32_t)size;
	err = xc_call(s, &req, NULL, 0);
	xc_arena_release(s->heap, rg.arena_off);
	return xc_ret(err);
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	struct xc_range rg = { 0 };
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);
	uint64_t devptr = 0;
	int moved, found;

	if (err)
		return xc_ret(err);
	if (!ptr || !size)
		return xc_ret(cudaErrorInvalidValue);
	if (!xc_range_find((uintptr_t)ptr, &rg) ||
	    !xc_range_find((uintptr_t)ptr + size - 1, &rg))
		return xc_ret(cudaErrorHostMemoryAlreadyRegistered);
	/* Shared with the worker where the transport can: pinned copies. */
	err = xc_hostmem_register(s, ptr, size, flags, &devptr, &moved);
	if (err)
		return xc_ret(err);
	memset(&rg, 0, sizeof(rg));
	rg.start = (uintptr_t)ptr;
	rg.size = size;
	rg.kind = XC_R_HOST_REGISTERED;
	rg.device = xc_cur_device();
	rg.devptr = devptr;
	rg.flags = flags;
	if (xc_range_add(&rg)) {
		if (moved)
			xc_hostmem_unregister(s, ptr, &found);
		return xc_ret(cudaErrorMemoryAllocation);
	}
	return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *ptr)
{
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);
	int found;

	if (err)
		return xc_ret(err);
	if (xc_range_del((uintptr_t)ptr, XC_R_HOST_REGISTERED, NULL))
		return xc_ret(cudaErrorHostMemoryNotRegistered);
	xc_twin_drop(s, (uintptr_t)ptr);
	/* A range that was only recorded has nothing in the worker. */
	return xc_ret(xc_hostmem_unregister(s, ptr, &found));
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost,
				     unsigned int flags)
{
	struct xc_session *s;
	struct xc_range rg;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!pDevice || flags)
		return xc_ret(cudaErrorInvalidValue);
	/* Registered memory has a device address once the worker pins it. */
	if (xc_range_find((uintptr_t)pHost, &rg) || rg.kind == XC_R_DEVICE ||
	    rg.kind == XC_R_MANAGED)
		return xc_ret(cudaErrorInvalidValue);
	/* Or, where the worker cannot map it, a twin's (hostreg_twin.c). */
	if (!rg.devptr && rg.kind == XC_R_HOST_REGISTERED &&
	    !xc_twin_devptr(s, rg.start, rg.size, &rg.devptr) &&
	    (xc_range_del(rg.start, XC_R_HOST_REGISTERED, NULL) ||
	     xc_range_add(&rg)))
		rg.devptr = 0;
	if (!rg.devptr)
		return xc_ret(cudaErrorInvalidValue);
	*pDevice = (void *)(uintptr_t)(rg.devptr +
				       ((uintptr_t)pHost - rg.start));
	return cudaSuccess;
}

cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
	struct xc_range rg;

	if (!pFlags)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_range_find((uintptr_t)pHost, &rg) || rg.kind == XC_R_DEVICE ||
	    rg.kind == XC_R_MANAGED)
		return xc_ret(cudaErrorInvalidValue);
	/* Under unified addressing all page-locked memory is mapped. */
	if (rg.kind == XC_R_HOST_REGISTERED)
		*pFlags = (rg.flags & cudaHostRegisterPortable) |
			  cudaHostAllocMapped;
	else
		*pFlags = rg.flags | cudaHostAllocMapped;
	return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr,
				     const void *ptr)
{
	struct xc_session *s;
	struct xc_range rg;
	cudaError_t err = xc_ready(&s);
	uintptr_t p = (uintptr_t)ptr;

	if (err)
		return xc_ret(err);
	if (!attr)
		return xc_ret(cudaErrorInvalidValue);
	memset(attr, 0, sizeof(*attr));
	attr->type = cudaMemoryTypeUnregistered;
	attr->device = -2;
	/* CUDA 13 calls any unknown address a host address. */
	attr->hostPointer = (void *)ptr;
	if (xc_range_find(p, &rg))
		return cudaSuccess;
	attr->device = rg.device;
	if (rg.kind == XC_R_MANAGED) {
		/* One address on both sides: the host copy is mapped at it. */
		attr->type = cudaMemoryTypeManaged;
		attr->devicePointer = (void *)ptr;
		attr->hostPointer = (void *)ptr;
	} else if (rg.kind == XC_R_DEVICE) {
		attr->type = cudaMemoryTypeDevice;
		attr->devicePointer = (void *)ptr;
		attr->hostPointer = NULL;
	} else {
		attr->type = cudaMemoryTypeHost;
		attr->hostPointer = (void *)ptr;
		if (rg.devptr)
			attr->devicePointer =
				(void *)(uintptr_t)(rg.devptr + p - rg.start);
	}
	return cudaSuccess;
}

/* ---- symbols ---- */

static cudaError_t xc_symbol(const void *symbol, size_t count, size_t offset,
			     struct xc_var **v)
{
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);

	if (err)
		return err;
	pthread_mutex_lock(&s->lock);
	err = xc_var_resolve(s, symbol, v);
	pthread_mutex_unlock(&s->lock);
	if (err)
		return err;
	if (offset > (*v)->size || count > (*v)->size - offset)
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

static cudaError_t xc_to_symbol(const void *symbol, const void *src,
				size_t count, size_t offset,
				enum cudaMemcpyKind kind, cudaStream_t stream,
				int async, int per_thread)
{
	struct xc_var *v;
	cudaError_t err;

	if (kind != cudaMemcpyHostToDevice &&
	    kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
		return xc_ret(cudaErrorInvalidMemcpyDirection);
	err = xc_symbol(symbol, count, offset, &v);
	if (err)
		return xc_ret(err);
	return xc_memcpy((void *)(uintptr_t)(v->dptr + offset), src, count,
			 kind, stream, async, per_thread);
}

static cudaError_t xc_from_symbol(void *dst, const void *symbol,
				  size_t count, size_t offset,
				  enum cudaMemcpyKind kind,
				  cudaStream_t stream, int async,
				  int per_thread)
{
	struct xc_var *v;
	cudaError_t err;

	if (kind != cudaMemcpyDeviceToHost &&
	    kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
		return xc_ret(cudaErrorInvalidMemcpyDirection);
	err = xc_symbol(symbol, count, offset, &v);
	if (err)
		return xc_ret(err);
	return xc_memcpy(dst, (void *)(uintptr_t)(v->dptr + offset), count,
			 kind, stream, async, per_thread);
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src,
			       size_t count, size_t offset,
			       enum cudaMemcpyKind kind)
{
	return xc_to_symbol(symbol, src, count, offset, kind, 0, 0, 0);
}

cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src,
				    size_t count, size_t offset,
				    enum cudaMemcpyKind kind)
{
	return xc_to_symbol(symbol, src, count, offset, kind, 0, 0, 1);
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src,
				    size_t count, size_t offset,
				    enum cudaMemcpyKind kind,
				    cudaStream_t stream)
{
	return xc_to_symbol(symbol, src, count, offset, kind, stream, 1, 0);
}

cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
					 size_t count, size_t offset,
					 enum cudaMemcpyKind kind,
					 cudaStream_t stream)
{
	return xc_to_symbol(symbol, src, count, offset, kind, stream, 1, 1);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
				 size_t offset, enum cudaMemcpyKind kind)
{
	return xc_from_symbol(dst, symbol, count, offset, kind, 0, 0, 0);
}

cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol,
				      size_t count, size_t offset,
				      enum cudaMemcpyKind kind)
{
	return xc_from_symbol(dst, symbol, count, offset, kind, 0, 0, 1);
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol,
				      size_t count, size_t offset,
				      enum cudaMemcpyKind kind,
				      cudaStream_t stream)
{
	return xc_from_symbol(dst, symbol, count, offset, kind, stream, 1, 0);
}

cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol,
					   size_t count, size_t offset,
					   enum cudaMemcpyKind kind,
					   cudaStream_t stream)
{
	return xc_from_symbol(dst, symbol, count, offset, kind, stream, 1, 1);
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
	struct xc_var *v;
	cudaError_t err;

	if (!devPtr)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_symbol(symbol, 0, 0, &v);
	if (err)
		return xc_ret(err);
	*devPtr = (void *)(uintptr_t)v->dptr;
	return cudaSuccess;
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
	struct xc_var *v;
	cudaError_t err;

	if (!size)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_symbol(symbol, 0, 0, &v);
	if (err)
		return xc_ret(err);
	*size = v->size;
	return cudaSuccess;
}

/* A plain constructor of a descriptor: no GPU, no round trip. */
struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
						   enum cudaChannelFormatKind f)
{
	struct cudaChannelFormatDesc d = { x, y, z, w, f };

	return d;
}
