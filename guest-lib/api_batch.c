// SPDX-License-Identifier: MIT
/*
 * Batched copies (cudaMemcpyBatchAsync): each copy of the batch is an
 * asynchronous cudaMemcpyDefault on the stream, in the order given, which
 * CUDA allows (it promises no order within a batch).  The arguments are
 * checked here as CUDA documents them.
 */
#include <string.h>

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

/* Sources read "during the call" are read once the stream is. */
static cudaError_t xc_batch_wait(cudaStream_t stream, int per_thread)
{
	return per_thread ? cudaStreamSynchronize_ptsz(stream) :
			    cudaStreamSynchronize(stream);
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
	if (!err && wait)
		err = xc_batch_wait(stream, per_thread);
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

/* One operand of a 3D batch copy as cudaMemcpy3D takes it. */
static cudaError_t xc_operand(const struct cudaMemcpy3DOperand *o,
			      const struct cudaMemcpy3DOperand *other,
			      struct cudaExtent e, cudaArray_t *arr,
			      struct cudaPos *pos, struct cudaPitchedPtr *ptr)
{
	uint64_t es = 1, row, layer;
	cudaError_t err;

	if (o->type == cudaMemcpyOperandTypeArray) {
		*arr = o->op.array.array;
		pos->x = o->op.array.offset.x;
		pos->y = o->op.array.offset.y;
		pos->z = o->op.array.offset.z;
		return *arr ? cudaSuccess : cudaErrorInvalidValue;
	}
	if (o->type != cudaMemcpyOperandTypePointer)
		return cudaErrorInvalidValue;
	/* Elements are the other side's array's, else bytes. */
	if (other->type == cudaMemcpyOperandTypeArray) {
		err = xc_array_elem_size(other->op.array.array, &es, NULL);
		if (err)
			return err;
		if (!es)
			return cudaErrorInvalidValue;
	}
	row = o->op.ptr.rowLength ? o->op.ptr.rowLength : e.width;
	layer = o->op.ptr.layerHeight ? o->op.ptr.layerHeight : e.height;
	if (row < e.width || layer < e.height ||
	    __builtin_mul_overflow(row, es, &row))
		return cudaErrorInvalidValue;
	ptr->ptr = o->op.ptr.ptr;
	ptr->pitch = row;
	ptr->xsize = row;
	ptr->ysize = layer;
	memset(pos, 0, sizeof(*pos));
	return cudaSuccess;
}

static cudaError_t xc_batch3d(size_t numOps, struct cudaMemcpy3DBatchOp *ops,
			      unsigned long long flags, cudaStream_t stream,
			      int per_thread)
{
	struct cudaMemcpy3DParms p;
	cudaError_t err = cudaSuccess;
	size_t i;
	int wait = 0;

	if (!numOps || !ops || flags)
		return cudaErrorInvalidValue;
	if (stream == cudaStreamLegacy || (!stream && !per_thread))
		return cudaErrorInvalidValue;
	for (i = 0; i < numOps; i++) {
		const struct cudaMemcpy3DBatchOp *o = &ops[i];

		if (!o->extent.width || !o->extent.height || !o->extent.depth ||
		    o->srcAccessOrder < cudaMemcpySrcAccessOrderStream ||
		    o->srcAccessOrder > cudaMemcpySrcAccessOrderAny)
			return cudaErrorInvalidValue;
	}
	for (i = 0; i < numOps && !err; i++) {
		const struct cudaMemcpy3DBatchOp *o = &ops[i];

		memset(&p, 0, sizeof(p));
		p.extent = o->extent;
		p.kind = cudaMemcpyDefault;
		err = xc_operand(&o->src, &o->dst, o->extent, &p.srcArray,
				 &p.srcPos, &p.srcPtr);
		if (!err)
			err = xc_operand(&o->dst, &o->src, o->extent,
					 &p.dstArray, &p.dstPos, &p.dstPtr);
		if (err)
			break;
		if (o->srcAccessOrder ==
		    cudaMemcpySrcAccessOrderDuringApiCall &&
		    p.srcPtr.ptr && xc_late_source(p.srcPtr.ptr))
			wait = 1;
		if (per_thread)
			err = cudaMemcpy3DAsync_ptsz(&p, stream);
		else
			err = cudaMemcpy3DAsync(&p, stream);
	}
	if (!err && wait)
		err = xc_batch_wait(stream, per_thread);
	return err;
}

cudaError_t cudaMemcpy3DBatchAsync(size_t numOps,
				   struct cudaMemcpy3DBatchOp *opList,
				   unsigned long long flags,
				   cudaStream_t stream)
{
	return xc_ret(xc_batch3d(numOps, opList, flags, stream, 0));
}

cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t numOps,
					struct cudaMemcpy3DBatchOp *opList,
					unsigned long long flags,
					cudaStream_t stream)
{
	return xc_ret(xc_batch3d(numOps, opList, flags, stream, 1));
}
