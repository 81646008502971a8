// SPDX-License-Identifier: MIT
/*
 * The driver API's memory calls.  Allocations are recorded in the
 * runtime's range table, so that either API's copies know them; copies
 * and host memory are the runtime's own paths (pinned staging, the
 * arena's pinned heap, registered memory), answered as CUresults.
 */
#include <string.h>

#include "driver.h"

static void xc_drv_record(uint64_t p, uint64_t size)
{
	struct xc_range rg;

	if (!p || !size)
		return;
	memset(&rg, 0, sizeof(rg));
	rg.start = (uintptr_t)p;
	rg.size = (size_t)size;
	rg.kind = XC_R_DEVICE;
	rg.device = xc_cur_device();
	xc_range_add(&rg);
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct xcuda_drv_mem_alloc_args a = { bytesize };
	struct xcuda_drv_mem_alloc_res r = { 0 };
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_call_drv_mem_alloc(&a, &r);
	if (err)
		return xc_drv_result(err);
	if (!r.dptr || r.dptr > UINTPTR_MAX - bytesize)
		return CUDA_ERROR_UNKNOWN;
	xc_drv_record(r.dptr, bytesize);
	*dptr = r.dptr;
	return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct xcuda_drv_mem_free_args a = { dptr };
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	err = xc_call_drv_mem_free(&a);
	if (!err && dptr)
		xc_range_del((uintptr_t)dptr, XC_R_DEVICE, NULL);
	return xc_drv_result(err);
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes,
			      CUmodule hmod, const char *name)
{
	struct xcuda_drv_module_get_global_args a;
	struct xcuda_drv_module_get_global_res r = { 0, 0 };
	struct xc_range rg;
	struct xc_xfer x;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	memset(&a, 0, sizeof(a));
	if (!name || !hmod)
		return CUDA_ERROR_INVALID_VALUE;
	if (xc_handle_in(hmod, &a.hmod))
		return CUDA_ERROR_INVALID_HANDLE;
	x.ptr = (void *)name;
	x.len = xc_strsize(name, XCUDA_NAME_MAX);
	x.dir = XC_XFER_IN;
	x.ext = &a.name;
	err = xc_drv_forward_xfer(XCUDA_OP_DRV_MODULE_GET_GLOBAL, &a,
				  sizeof(a), &r, sizeof(r), &x, 1);
	if (err)
		return xc_drv_result(err);
	if (r.bytes > UINTPTR_MAX - r.dptr)
		return CUDA_ERROR_UNKNOWN;
	/* A module's variable is device memory to the copies, too. */
	if (xc_range_find((uintptr_t)r.dptr, &rg))
		xc_drv_record(r.dptr, r.bytes);
	if (dptr)
		*dptr = r.dptr;
	if (bytes)
		*bytes = (size_t)r.bytes;
	return CUDA_SUCCESS;
}

/* ---- mapped memory of the virtual memory management API ---- */

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle handle,
		  unsigned long long flags)
{
	struct xcuda_drv_mem_map_args a = { ptr, size, offset, handle, flags };
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	err = xc_call_drv_mem_map(&a);
	if (err)
		return xc_drv_result(err);
	/* Mapped memory is device memory to either API's copies. */
	if (ptr <= UINTPTR_MAX - size)
		xc_drv_record(ptr, size);
	return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct xcuda_drv_mem_unmap_args a = { ptr, size };
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	err = xc_call_drv_mem_unmap(&a);
	if (!err)
		xc_range_del((uintptr_t)ptr, XC_R_DEVICE, NULL);
	return xc_drv_result(err);
}

/* ---- copies: the runtime's, which stage pageable memory ---- */

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
			    enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
				 enum cudaMemcpyKind kind,
				 cudaStream_t stream);

static CUresult xc_drv_copy(void *dst, const void *src, size_t n,
			    enum cudaMemcpyKind kind, int per_thread)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (per_thread)
		return XC_DRV_RT(cudaMemcpy_ptds(dst, src, n, kind));
	return XC_DRV_RT(cudaMemcpy(dst, src, n, kind));
}

static CUresult xc_drv_copy_async(void *dst, const void *src, size_t n,
				  enum cudaMemcpyKind kind, CUstream st,
				  int per_thread)
{
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (per_thread)
		return XC_DRV_RT(cudaMemcpyAsync_ptsz(dst, src, n, kind, st));
	return XC_DRV_RT(cudaMemcpyAsync(dst, src, n, kind, st));
}

#define XC_DEV(p)	((void *)(uintptr_t)(p))

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	return xc_drv_copy(XC_DEV(dst), src, n, cudaMemcpyHostToDevice, 0);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	return xc_drv_copy(dst, XC_DEV(src), n, cudaMemcpyDeviceToHost, 0);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return xc_drv_copy(XC_DEV(dst), XC_DEV(src), n,
			   cudaMemcpyDeviceToDevice, 0);
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return xc_drv_copy(XC_DEV(dst), XC_DEV(src), n, cudaMemcpyDefault, 0);
}

CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
	return xc_drv_copy(XC_DEV(dst), src, n, cudaMemcpyHostToDevice, 1);
}

CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
	return xc_drv_copy(dst, XC_DEV(src), n, cudaMemcpyDeviceToHost, 1);
}

CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return xc_drv_copy(XC_DEV(dst), XC_DEV(src), n,
			   cudaMemcpyDeviceToDevice, 1);
}

CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return xc_drv_copy(XC_DEV(dst), XC_DEV(src), n, cudaMemcpyDefault, 1);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
			      CUstream st)
{
	return xc_drv_copy_async(XC_DEV(dst), src, n, cudaMemcpyHostToDevice,
				 st, 0);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
			      CUstream st)
{
	return xc_drv_copy_async(dst, XC_DEV(src), n, cudaMemcpyDeviceToHost,
				 st, 0);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n,
			      CUstream st)
{
	return xc_drv_copy_async(XC_DEV(dst), XC_DEV(src), n,
				 cudaMemcpyDeviceToDevice, st, 0);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n,
		       CUstream st)
{
	return xc_drv_copy_async(XC_DEV(dst), XC_DEV(src), n,
				 cudaMemcpyDefault, st, 0);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src,
				   size_t n, CUstream st);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src,
				   size_t n, CUstream st)
{
	return xc_drv_copy_async(XC_DEV(dst), src, n, cudaMemcpyHostToDevice,
				 st, 1);
}

CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n,
				   CUstream st);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n,
				   CUstream st)
{
	return xc_drv_copy_async(dst, XC_DEV(src), n, cudaMemcpyDeviceToHost,
				 st, 1);
}

CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src,
				   size_t n, CUstream st);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src,
				   size_t n, CUstream st)
{
	return xc_drv_copy_async(XC_DEV(dst), XC_DEV(src), n,
				 cudaMemcpyDeviceToDevice, st, 1);
}

CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
			    CUstream st);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
			    CUstream st)
{
	return xc_drv_copy_async(XC_DEV(dst), XC_DEV(src), n,
				 cudaMemcpyDefault, st, 1);
}

/* ---- host memory: the runtime's pinned heap and registrations ---- */

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	int err = xc_drv_enter(1);

	return err ? (CUresult)err : XC_DRV_RT(cudaMallocHost(pp, bytesize));
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	int err = xc_drv_enter(1);

	/* CU_MEMHOSTALLOC_* are cudaHostAlloc*'s values. */
	return err ? (CUresult)err :
		     XC_DRV_RT(cudaHostAlloc(pp, bytesize, Flags));
}

CUresult cuMemFreeHost(void *p)
{
	int err = xc_drv_enter(1);

	return err ? (CUresult)err : XC_DRV_RT(cudaFreeHost(p));
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p,
				      unsigned int Flags)
{
	int err = xc_drv_enter(1);
	void *d = NULL;

	if (err)
		return (CUresult)err;
	if (!pdptr)
		return CUDA_ERROR_INVALID_VALUE;
	err = XC_DRV_RT(cudaHostGetDevicePointer(&d, p, Flags));
	if (!err)
		*pdptr = (CUdeviceptr)(uintptr_t)d;
	return (CUresult)err;
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
	int err = xc_drv_enter(1);

	return err ? (CUresult)err :
		     XC_DRV_RT(cudaHostRegister(p, bytesize, Flags));
}

CUresult cuMemHostUnregister(void *p)
{
	int err = xc_drv_enter(1);

	return err ? (CUresult)err : XC_DRV_RT(cudaHostUnregister(p));
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
			   unsigned int flags)
{
	int err = xc_drv_enter(1);
	void *p = NULL;

	if (err)
		return (CUresult)err;
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	err = XC_DRV_RT(cudaMallocManaged(&p, bytesize, flags));
	if (!err)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return (CUresult)err;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch,
			    size_t WidthInBytes, size_t Height,
			    unsigned int ElementSizeBytes)
{
	int err = xc_drv_enter(1);
	void *p = NULL;

	if (err)
		return (CUresult)err;
	/* The driver's own rule; the runtime's allocation otherwise. */
	if (!dptr || (ElementSizeBytes != 4 && ElementSizeBytes != 8 &&
		      ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	err = XC_DRV_RT(cudaMallocPitch(&p, pPitch, WidthInBytes, Height));
	if (!err)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return (CUresult)err;
}
