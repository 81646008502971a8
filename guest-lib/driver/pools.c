// SPDX-License-Identifier: MIT
/*
 * The driver's stream-ordered allocation, memory pools, and managed
 * memory's prefetches, advice and range queries, made with the runtime's
 * calls: a CUmemoryPool is a cudaMemPool_t, and the driver's pool
 * properties, locations, access descriptors and export data are laid out
 * as the runtime's.
 */
#include <cuda_runtime_api.h>

#include "driver.h"

_Static_assert(sizeof(CUmemPoolProps) == sizeof(struct cudaMemPoolProps),
	       "pool properties");
_Static_assert(sizeof(CUmemLocation) == sizeof(struct cudaMemLocation),
	       "locations");
_Static_assert(sizeof(CUmemAccessDesc) == sizeof(struct cudaMemAccessDesc),
	       "access descriptors");
_Static_assert(sizeof(CUmemPoolPtrExportData) ==
	       sizeof(struct cudaMemPoolPtrExportData), "pool export data");

#define XC_PTR(p)	((void *)(uintptr_t)(p))
#define XC_PT(st)	((st) ? (st) : cudaStreamPerThread)

static struct cudaMemLocation xc_loc(CUmemLocation l)
{
	return (struct cudaMemLocation){ (enum cudaMemLocationType)l.type,
					 l.id };
}

/* The first versions named a device, or the host (CU_DEVICE_CPU). */
static struct cudaMemLocation xc_dev_loc(CUdevice dev)
{
	return dev == CU_DEVICE_CPU ?
	       (struct cudaMemLocation){ cudaMemLocationTypeHost, 0 } :
	       (struct cudaMemLocation){ cudaMemLocationTypeDevice, dev };
}

static CUresult xc_alloc_async(CUdeviceptr *dptr, size_t size,
			       CUmemoryPool pool, CUstream st)
{
	void *p = NULL;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	if (pool)
		err = XC_DRV_RT(cudaMallocFromPoolAsync(&p, size,
							(cudaMemPool_t)pool,
							st));
	else
		err = XC_DRV_RT(cudaMallocAsync(&p, size, st));
	if (!err)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return (CUresult)err;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return xc_alloc_async(dptr, bytesize, NULL, hStream);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
				 CUmemoryPool pool, CUstream hStream)
{
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	return xc_alloc_async(dptr, bytesize, pool, hStream);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	XC_DRV_CALL(cudaFreeAsync(XC_PTR(dptr), hStream));
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
			      CUstream hStream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
			      CUstream hStream)
{
	return xc_alloc_async(dptr, bytesize, NULL, XC_PT(hStream));
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
				      CUmemoryPool pool, CUstream hStream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
				      CUmemoryPool pool, CUstream hStream)
{
	return cuMemAllocFromPoolAsync(dptr, bytesize, pool, XC_PT(hStream));
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return cuMemFreeAsync(dptr, XC_PT(hStream));
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	XC_DRV_CALL(cudaMemPoolCreate((cudaMemPool_t *)pool,
				      (const struct cudaMemPoolProps *)
				      poolProps));
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	XC_DRV_CALL(cudaMemPoolDestroy((cudaMemPool_t)pool));
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
			       void *value)
{
	XC_DRV_CALL(cudaMemPoolSetAttribute((cudaMemPool_t)pool,
					    (enum cudaMemPoolAttr)attr, value));
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
			       void *value)
{
	XC_DRV_CALL(cudaMemPoolGetAttribute((cudaMemPool_t)pool,
					    (enum cudaMemPoolAttr)attr, value));
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	XC_DRV_CALL(cudaMemPoolTrimTo((cudaMemPool_t)pool, minBytesToKeep));
}

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map,
			    size_t count)
{
	XC_DRV_CALL(cudaMemPoolSetAccess((cudaMemPool_t)pool,
					 (const struct cudaMemAccessDesc *)map,
					 count));
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool,
			    CUmemLocation *location)
{
	XC_DRV_CALL(cudaMemPoolGetAccess((enum cudaMemAccessFlags *)flags,
					 (cudaMemPool_t)memPool,
					 (struct cudaMemLocation *)location));
}

CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
					  CUmemAllocationHandleType handleType,
					  unsigned long long flags)
{
	XC_DRV_CALL(cudaMemPoolExportToShareableHandle(
		handle_out, (cudaMemPool_t)pool,
		(enum cudaMemAllocationHandleType)handleType,
		(unsigned int)flags));
}

CUresult cuMemPoolImportFromShareableHandle(
	CUmemoryPool *pool_out, void *handle,
	CUmemAllocationHandleType handleType, unsigned long long flags)
{
	XC_DRV_CALL(cudaMemPoolImportFromShareableHandle(
		(cudaMemPool_t *)pool_out, handle,
		(enum cudaMemAllocationHandleType)handleType,
		(unsigned int)flags));
}

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out,
				CUdeviceptr ptr)
{
	XC_DRV_CALL(cudaMemPoolExportPointer(
		(struct cudaMemPoolPtrExportData *)shareData_out,
		XC_PTR(ptr)));
}

CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
				CUmemPoolPtrExportData *shareData)
{
	void *p = NULL;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!ptr_out)
		return CUDA_ERROR_INVALID_VALUE;
	err = XC_DRV_RT(cudaMemPoolImportPointer(
		&p, (cudaMemPool_t)pool,
		(struct cudaMemPoolPtrExportData *)shareData));
	if (!err)
		*ptr_out = (CUdeviceptr)(uintptr_t)p;
	return (CUresult)err;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	XC_DRV_CALL(cudaDeviceGetDefaultMemPool((cudaMemPool_t *)pool_out,
						dev));
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	XC_DRV_CALL(cudaDeviceGetMemPool((cudaMemPool_t *)pool, dev));
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	XC_DRV_CALL(cudaDeviceSetMemPool(dev, (cudaMemPool_t)pool));
}

CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
			       CUmemLocation location, unsigned int flags,
			       CUstream hStream)
{
	XC_DRV_CALL(cudaMemPrefetchAsync(XC_PTR(devPtr), count,
					 xc_loc(location), flags, hStream));
}

CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count,
				    CUmemLocation location,
				    unsigned int flags, CUstream hStream);
CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count,
				    CUmemLocation location,
				    unsigned int flags, CUstream hStream)
{
	return cuMemPrefetchAsync_v2(devPtr, count, location, flags,
				     XC_PT(hStream));
}

CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count,
			    CUdevice dstDevice, CUstream hStream)
{
	XC_DRV_CALL(cudaMemPrefetchAsync(XC_PTR(devPtr), count,
					 xc_dev_loc(dstDevice), 0, hStream));
}

CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count,
				 CUdevice dstDevice, CUstream hStream)
{
	return cuMemPrefetchAsync(devPtr, count, dstDevice, XC_PT(hStream));
}

CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
			CUmemLocation location)
{
	XC_DRV_CALL(cudaMemAdvise(XC_PTR(devPtr), count,
				  (enum cudaMemoryAdvise)advice,
				  xc_loc(location)));
}

CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
		     CUdevice device)
{
	XC_DRV_CALL(cudaMemAdvise(XC_PTR(devPtr), count,
				  (enum cudaMemoryAdvise)advice,
				  xc_dev_loc(device)));
}

CUresult cuMemRangeGetAttribute(void *data, size_t dataSize,
				CUmem_range_attribute attribute,
				CUdeviceptr devPtr, size_t count)
{
	XC_DRV_CALL(cudaMemRangeGetAttribute(
		data, dataSize, (enum cudaMemRangeAttribute)attribute,
		XC_PTR(devPtr), count));
}

CUresult cuMemRangeGetAttributes(void **data, size_t *dataSizes,
				 CUmem_range_attribute *attributes,
				 size_t numAttributes, CUdeviceptr devPtr,
				 size_t count)
{
	XC_DRV_CALL(cudaMemRangeGetAttributes(
		data, dataSizes, (enum cudaMemRangeAttribute *)attributes,
		numAttributes, XC_PTR(devPtr), count));
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	XC_DRV_CALL(cudaHostGetFlags(pFlags, p));
}
