// SPDX-License-Identifier: MIT
/*
 * Batched copies (cudaMemcpyBatchAsync): each copy of the batch is an
 * asynchronous cudaMemcpyDefault on the stream, in the order given, which
 * CUDA allows (it promises no order within a batch).  The arguments are
 * checked here as CUDA documents them.
 */
#include "guest.h"
#include "ptsz.h"

/* A source the copy reads after the call returns, unless we wait. */
static int xc_late_source(const void *src)
{
	struct xc_range r;

	if (xc_range_find((uintptr_t)src, &r))
		return 0;		/* pageable: staged during the call */
	return r.kind == XC_R_HOST_PINNED || r.kind == XC_R_HOST_REGISTERED;
}

static cudaError_t xc_batch(void *const *dsts, const void *const *srcs,
			    const size_t *sizes, size_t count,
			    struct cudaMemcpyAttributes *attrs,
			    size_t *attrsIdxs, size_t numAttrs,
			    cudaStream_t stream, int per_thread)
{
	cudaError_t err = cudaSuccess;
	size_t i, k = 0;
	int wait = 0;

	if (!dsts || !srcs || !sizes || !count || !attrs || !attrsIdxs ||
	    !numAttrs || numAttrs > count || attrsIdxs[0] != 0)
		return cudaErrorInvalidValue;
	/* Not the legacy stream: it would order the batch with everything. */
	if (stream == cudaStreamLegacy || (!stream && !per_thread))
		return cudaErrorInvalidValue;
	for (i = 0; i < numAttrs; i++) {
		if ((i && attrsIdxs[i] <= attrsIdxs[i - 1]) ||
		    attrsIdxs[i] >= count)
			return cudaErrorInvalidValue;
		if (attrs[i].srcAccessOrder <
		    cudaMemcpySrcAccessOrderStream ||
		    attrs[i].srcAccessOrder > cudaMemcpySrcAccessOrderAny)
			return cudaErrorInvalidValue;
	}
	for (i = 0; i < count && !err; i++) {
		while (k + 1 < numAttrs && attrsIdxs[k + 1] <= i)
			k++;
		/*
		 * "During the call": the source may be reused once we return,
		 * so a pinned one is waited for (pageable ones are staged).
		 */
		if (attrs[k].srcAccessOrder ==
		    cudaMemcpySrcAccessOrderDuringApiCall &&
		    xc_late_source(srcs[i]))
			wait = 1;
		err = xc_memcpy(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault,
				stream, 1, per_thread);
	}
	if (!err && wait) {
		if (per_thread)
			err = cudaStreamSynchronize_ptsz(stream);
		else
			err = cudaStreamSynchronize(stream);
	}
	return err;
}

cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs,
				 const size_t *sizes, size_t count,
				 struct cudaMemcpyAttributes *attrs,
				 size_t *attrsIdxs, size_t numAttrs,
				 cudaStream_t stream)
{
	return xc_ret(xc_batch(dsts, srcs, sizes, count, attrs, attrsIdxs,
			       numAttrs, stream, 0));
}

cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts,
				      const void *const *srcs,
				      const size_t *sizes, size_t count,
				      struct cudaMemcpyAttributes *attrs,
				      size_t *attrsIdxs, size_t numAttrs,
				      cudaStream_t stream)
{
	return xc_ret(xc_batch(dsts, srcs, sizes, count, attrs, attrsIdxs,
			       numAttrs, stream, 1));
}
