// SPDX-License-Identifier: MIT
/*
 * Managed memory (spec/cudart-managed.calls).  The worker allocates real
 * managed memory, so that CUDA validates and records advice, prefetches
 * and attachments itself; the guest keeps its own host copy at the same
 * address and moves data with the ordinary copy commands.  Nothing in the
 * worker reads or writes managed memory on the CPU: a prefetch to the host
 * is the guest's to do, the worker only checks and orders it.
 *
 * MEM_PREFETCH  device destination: cudaMemPrefetchAsync as given.  Host
 *               destination: cudaMemRangeGetAttribute on the range (CUDA's
 *               error for memory that is not managed), then
 *               cudaStreamSynchronize(stream), after which the guest pulls.
 * MEM_ADVISE    cudaMemAdvise as given; rsvd must be 0.
 */
#include <cuda_runtime_api.h>

#include "ops.h"

/* A destination in host memory, in any of the ways CUDA 13 names one. */
static int xd_loc_is_host(int type, int id)
{
	return type == cudaMemLocationTypeHost ||
	       type == cudaMemLocationTypeHostNuma ||
	       type == cudaMemLocationTypeHostNumaCurrent ||
	       (type == cudaMemLocationTypeDevice && id == cudaCpuDeviceId);
}

int xd_op_mem_prefetch(struct xd_session *s,
		       const struct xcuda_mem_prefetch_args *a,
		       struct xd_call *call)
{
	struct cudaMemLocation loc = { 0 };
	const void *p = (const void *)(uintptr_t)a->ptr;
	cudaStream_t st;
	cudaError_t err;
	int last;

	(void)call;
	err = xd_stream_lookup(&s->streams, a->stream, &st);
	if (err)
		return err;
	loc.type = (enum cudaMemLocationType)a->loc_type;
	loc.id = a->loc_id;
	if (!xd_loc_is_host(a->loc_type, a->loc_id))
		return cudaMemPrefetchAsync(p, a->count, loc, a->flags, st);
	if (!a->count)
		return cudaErrorInvalidValue;
	err = cudaMemRangeGetAttribute(
		&last, sizeof(last), cudaMemRangeAttributeLastPrefetchLocation,
		p, a->count);
	if (err)
		return err;
	return cudaStreamSynchronize(st);
}

int xd_op_mem_advise(struct xd_session *s,
		     const struct xcuda_mem_advise_args *a,
		     struct xd_call *call)
{
	struct cudaMemLocation loc = { 0 };

	(void)s;
	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	loc.type = (enum cudaMemLocationType)a->loc_type;
	loc.id = a->loc_id;
	return cudaMemAdvise((const void *)(uintptr_t)a->ptr, a->count,
			     (enum cudaMemoryAdvise)a->advice, loc);
}
