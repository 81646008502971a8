// SPDX-License-Identifier: MIT
/*
 * The managed memory API (spec/cudart-managed.calls): allocation, which
 * maps the host copy (managed.c), and prefetches and advice, which the
 * worker's real managed memory validates.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "guest.h"

/* Addresses the guest could not map, tried again before giving up. */
#define XC_MG_TRIES 4

static cudaError_t xc_free_dev(uint64_t p)
{
	struct xcuda_free_args a = { p };

	return xc_call_free(&a);
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	struct xcuda_malloc_managed_args a = { 0 };
	struct xcuda_malloc_managed_res r;
	uint64_t taken[XC_MG_TRIES];
	struct xc_session *s;
	cudaError_t err;
	int i, n = 0, ret = -EEXIST;

	err = xc_ready(&s);
	if (err)
		return xc_ret(err);
	if (!devPtr)
		return xc_ret(cudaErrorInvalidValue);
	/*
	 * Whole chunks: CUDA may place small managed allocations in shared
	 * pages, which the guest could not map twice.
	 */
	a.size = size && size <= SIZE_MAX - XC_MG_CHUNK ?
		 (size + XC_MG_CHUNK - 1) & ~(size_t)(XC_MG_CHUNK - 1) : size;
	a.flags = flags;
	for (i = 0; i < XC_MG_TRIES; i++) {
		err = xc_call_malloc_managed(&a, &r);
		if (err)
			break;
		/* CUDA answers a NULL pointer for nothing allocated. */
		if (!r.devPtr) {
			*devPtr = NULL;
			break;
		}
		ret = xc_managed_map(s, r.devPtr, size, 0, xc_cur_device(),
				     flags);
		if (!ret) {
			*devPtr = (void *)(uintptr_t)r.devPtr;
			break;
		}
		/* Keep the one we cannot map, so the next is elsewhere. */
		taken[n++] = r.devPtr;
		if (ret != -EEXIST)
			break;
	}
	while (n)
		xc_free_dev(taken[--n]);
	if (err)
		return err;
	if (r.devPtr && ret) {
		static int said;

		xc_warn_once(&said, "cudaMallocManaged: cannot map host pages "
			     "at the device address (%s)", strerror(-ret));
		return xc_ret(cudaErrorMemoryAllocation);
	}
	return cudaSuccess;
}

/* cudaFree's part: 0 if @p was a managed allocation, now forgotten. */
int xc_managed_free(struct xc_session *s, void *p)
{
	struct xc_range rg;

	if (!xc_managed_any() || xc_range_find((uintptr_t)p, &rg) ||
	    rg.kind != XC_R_MANAGED || rg.start != (uintptr_t)p)
		return -1;
	return xc_managed_unmap(s, (uintptr_t)p, 0);
}

static int xc_loc_host(const struct cudaMemLocation *l)
{
	return l->type == cudaMemLocationTypeHost ||
	       l->type == cudaMemLocationTypeHostNuma ||
	       l->type == cudaMemLocationTypeHostNumaCurrent ||
	       (l->type == cudaMemLocationTypeDevice &&
		l->id == cudaCpuDeviceId);
}

static cudaError_t xc_prefetch(const void *devPtr, size_t count,
			       struct cudaMemLocation location,
			       unsigned int flags, cudaStream_t stream,
			       int per_thread)
{
	struct xcuda_mem_prefetch_args a = { 0 };
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err;

	err = xc_ready(&s);
	if (err)
		return xc_ret(err);
	if (xc_stream_handle(stream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.ptr = (uintptr_t)devPtr;
	a.count = count;
	a.loc_type = location.type;
	a.loc_id = location.id;
	a.flags = flags;
	/* To a device: the hook pushes what the host wrote first. */
	xc_req_mem_prefetch(&req, &a);
	err = xc_call(s, &req, NULL, 0);
	if (!err && xc_loc_host(&location))
		err = xc_managed_prefetch_host(s, a.ptr, count);
	return xc_ret(err);
}

cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count,
				 struct cudaMemLocation location,
				 unsigned int flags, cudaStream_t stream)
{
	return xc_prefetch(devPtr, count, location, flags, stream, 0);
}

cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
				      struct cudaMemLocation location,
				      unsigned int flags,
				      cudaStream_t stream);
cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
				      struct cudaMemLocation location,
				      unsigned int flags, cudaStream_t stream)
{
	return xc_prefetch(devPtr, count, location, flags, stream, 1);
}

/* One MEM_RANGE_GET_ATTRIBUTE per attribute, stopping at the first error. */
cudaError_t cudaMemRangeGetAttributes(void **data, size_t *dataSizes,
				      enum cudaMemRangeAttribute *attributes,
				      size_t numAttributes,
				      const void *devPtr, size_t count)
{
	cudaError_t err;
	size_t i;

	if (!numAttributes || !data || !dataSizes || !attributes)
		return xc_ret(cudaErrorInvalidValue);
	for (i = 0; i < numAttributes; i++) {
		err = cudaMemRangeGetAttribute(data[i], dataSizes[i],
					       attributes[i], devPtr, count);
		if (err)
			return err;
	}
	return cudaSuccess;
}

cudaError_t cudaMemAdvise(const void *devPtr, size_t count,
			  enum cudaMemoryAdvise advice,
			  struct cudaMemLocation location)
{
	struct xcuda_mem_advise_args a = { 0 };

	a.ptr = (uintptr_t)devPtr;
	a.count = count;
	a.advice = advice;
	a.loc_type = location.type;
	a.loc_id = location.id;
	return xc_call_mem_advise(&a);
}
