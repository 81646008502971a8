// SPDX-License-Identifier: MIT
/*
 * The stream-ordered allocator and memory pools: the guest side of the
 * calls of spec/cudart-pools.calls that keep guest state (allocations in
 * the range table) or whose value's size depends on an argument.
 */
#include <string.h>

#include "guest.h"

/* Records a device allocation, as cudaMalloc's are recorded. */
static void xc_async_alloc(uint64_t p, size_t size)
{
	struct xc_range rg = { 0 };

	if (!p)
		return;
	rg.start = p;
	rg.size = size;
	rg.kind = XC_R_DEVICE;
	rg.device = xc_cur_device();
	xc_range_add(&rg);
}

static cudaError_t xc_malloc_async(void **devPtr, size_t size,
				   cudaStream_t stream, int per_thread)
{
	struct xcuda_malloc_async_args a = { 0 };
	struct xcuda_malloc_async_res r;
	cudaError_t err;

	if (!devPtr)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_stream_handle(stream, per_thread, &a.hStream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.size = size;
	err = xc_call_malloc_async(&a, &r);
	if (err)
		return err;
	*devPtr = (void *)(uintptr_t)r.devPtr;
	xc_async_alloc(r.devPtr, size);
	return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
	return xc_malloc_async(devPtr, size, stream, 0);
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size,
				 cudaStream_t stream);
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size,
				 cudaStream_t stream)
{
	return xc_malloc_async(devPtr, size, stream, 1);
}

static cudaError_t xc_malloc_from_pool(void **ptr, size_t size,
				       cudaMemPool_t pool,
				       cudaStream_t stream, int per_thread)
{
	struct xcuda_malloc_from_pool_async_args a = { 0 };
	struct xcuda_malloc_from_pool_async_res r;
	cudaError_t err;

	if (!ptr || !pool)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_handle_in(pool, &a.memPool) ||
	    xc_stream_handle(stream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.size = size;
	err = xc_call_malloc_from_pool_async(&a, &r);
	if (err)
		return err;
	*ptr = (void *)(uintptr_t)r.ptr;
	xc_async_alloc(r.ptr, size);
	return cudaSuccess;
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size,
				    cudaMemPool_t memPool,
				    cudaStream_t stream)
{
	return xc_malloc_from_pool(ptr, size, memPool, stream, 0);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
					 cudaMemPool_t memPool,
					 cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
					 cudaMemPool_t memPool,
					 cudaStream_t stream)
{
	return xc_malloc_from_pool(ptr, size, memPool, stream, 1);
}

static cudaError_t xc_free_async(void *devPtr, cudaStream_t stream,
				 int per_thread)
{
	struct xcuda_free_async_args a = { 0 };
	cudaError_t err;

	if (xc_stream_handle(stream, per_thread, &a.hStream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.devPtr = (uintptr_t)devPtr;
	err = xc_call_free_async(&a);
	if (!err && devPtr)
		xc_range_del((uintptr_t)devPtr, XC_R_DEVICE, NULL);
	return err;
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream)
{
	return xc_free_async(devPtr, stream, 0);
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream)
{
	return xc_free_async(devPtr, stream, 1);
}

/* The size of an attribute's value: CUDA documents each. */
static size_t xc_pool_attr_size(enum cudaMemPoolAttr attr)
{
	switch (attr) {
	case cudaMemPoolReuseFollowEventDependencies:
	case cudaMemPoolReuseAllowOpportunistic:
	case cudaMemPoolReuseAllowInternalDependencies:
		return sizeof(int);
	default:
		return sizeof(uint64_t);
	}
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool,
				    enum cudaMemPoolAttr attr, void *value)
{
	struct xcuda_mem_pool_set_attribute_args a = { 0 };

	if (!value || !memPool)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_handle_in(memPool, &a.memPool))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.attr = attr;
	/* Little-endian: an int is the first four of the eight bytes. */
	memcpy(&a.value, value, xc_pool_attr_size(attr));
	return xc_call_mem_pool_set_attribute(&a);
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool,
				    enum cudaMemPoolAttr attr, void *value)
{
	struct xcuda_mem_pool_get_attribute_args a = { 0 };
	struct xcuda_mem_pool_get_attribute_res r;
	cudaError_t err;

	if (!value || !memPool)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_handle_in(memPool, &a.memPool))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.attr = attr;
	err = xc_call_mem_pool_get_attribute(&a, &r);
	if (!err)
		memcpy(value, &r.value, xc_pool_attr_size(attr));
	return err;
}
