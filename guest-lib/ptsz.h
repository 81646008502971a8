/* SPDX-License-Identifier: MIT */
/*
 * The per-thread-default-stream entry points (_ptds, _ptsz) that the
 * runtime exports but whose prototypes its headers hide unless a program
 * is compiled with --default-stream per-thread.
 */
#ifndef XCUDA_GUEST_PTSZ_H
#define XCUDA_GUEST_PTSZ_H

#include <cuda_runtime_api.h>

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
			    enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
				 enum cudaMemcpyKind kind,
				 cudaStream_t stream);
cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts,
				      const void *const *srcs,
				      const size_t *sizes, size_t count,
				      struct cudaMemcpyAttributes *attrs,
				      size_t *attrsIdxs, size_t numAttrs,
				      cudaStream_t stream);
cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
				   cudaStream_t stream);
cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t numOps,
					struct cudaMemcpy3DBatchOp *opList,
					unsigned long long flags,
					cudaStream_t stream);
cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
			      size_t spitch, size_t width, size_t height,
			      enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch,
				   const void *src, size_t spitch,
				   size_t width, size_t height,
				   enum cudaMemcpyKind kind,
				   cudaStream_t stream);
cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
				 cudaStream_t stream);
cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value,
			      size_t width, size_t height);
cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value,
				   size_t width, size_t height,
				   cudaStream_t stream);
cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src,
				    size_t count, size_t offset,
				    enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
					 size_t count, size_t offset,
					 enum cudaMemcpyKind kind,
					 cudaStream_t stream);
cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol,
				      size_t count, size_t offset,
				      enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol,
					   size_t count, size_t offset,
					   enum cudaMemcpyKind kind,
					   cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
				     unsigned int flags);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim,
				  dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream);

#endif /* XCUDA_GUEST_PTSZ_H */
