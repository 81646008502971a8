// SPDX-License-Identifier: MIT
/*
 * cuPointerGetAttribute(s).  Device memory is the worker's to describe
 * (DRV_POINTER_GET_ATTRIBUTE), and its answer says how many bytes the
 * driver writes.  Memory the guest library holds as host memory (the
 * arena's pinned heap, registered memory, managed memory's host copies)
 * lives at other addresses in the worker: the runtime's pointer
 * attributes describe it here, for the attributes they can give.
 */
#include <string.h>

#include "driver.h"

/* The bytes an attribute's value takes, for clearing one. */
static size_t xc_attr_size(CUpointer_attribute a)
{
	switch (a) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_MAPPED:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
	case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
		return 4;
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		return 16;
	default:
		return 8;
	}
}

/* Host memory of the guest's: what the runtime's attributes tell. */
static CUresult xc_host_attr(void *data, CUpointer_attribute attr,
			     CUdeviceptr ptr)
{
	struct cudaPointerAttributes pa;
	unsigned int u;
	uint64_t v;
	int err;

	err = XC_DRV_RT(cudaPointerGetAttributes(&pa,
						 (void *)(uintptr_t)ptr));
	if (err)
		return (CUresult)err;
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		u = pa.type == cudaMemoryTypeManaged ? CU_MEMORYTYPE_DEVICE :
						       CU_MEMORYTYPE_HOST;
		memcpy(data, &u, sizeof(u));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		u = pa.type == cudaMemoryTypeManaged;
		memcpy(data, &u, sizeof(u));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		memcpy(data, &pa.device, sizeof(pa.device));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		v = (uintptr_t)pa.devicePointer;
		memcpy(data, &v, sizeof(v));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		v = (uintptr_t)pa.hostPointer;
		memcpy(data, &v, sizeof(v));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		return cuDevicePrimaryCtxRetain((CUcontext *)data, pa.device) ?
		       CUDA_ERROR_INVALID_VALUE :
		       cuDevicePrimaryCtxRelease_v2(pa.device);
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
			       CUdeviceptr ptr)
{
	struct xcuda_drv_pointer_get_attribute_args a = { 0, 0, 0 };
	struct xcuda_drv_pointer_get_attribute_res r;
	struct xc_range rg;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (!xc_range_find((uintptr_t)ptr, &rg) && rg.kind != XC_R_DEVICE)
		return xc_host_attr(data, attribute, ptr);
	a.attr = attribute;
	a.ptr = ptr;
	memset(&r, 0, sizeof(r));
	err = xc_drv_forward(XCUDA_OP_DRV_POINTER_GET_ATTRIBUTE, &a, sizeof(a),
			     &r, sizeof(r));
	if (err)
		return xc_drv_result(err);
	if (r.size > sizeof(r.value))
		return CUDA_ERROR_UNKNOWN;
	if (attribute == CU_POINTER_ATTRIBUTE_CONTEXT) {
		int dev;

		memcpy(&dev, r.value, sizeof(dev));
		err = cuDevicePrimaryCtxRetain((CUcontext *)data, dev);
		return err ? (CUresult)err : cuDevicePrimaryCtxRelease_v2(dev);
	}
	if (attribute == CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE) {
		uint32_t h;
		void *pool;

		memcpy(&h, r.value, sizeof(h));
		pool = h ? (void *)(uintptr_t)h : NULL;
		memcpy(data, &pool, sizeof(pool));
		return CUDA_SUCCESS;
	}
	memcpy(data, r.value, r.size);
	return CUDA_SUCCESS;
}

/*
 * Unlike the single query, a pointer CUDA does not know is no error:
 * every value is cleared, as the driver does.
 */
CUresult cuPointerGetAttributes(unsigned int numAttributes,
				CUpointer_attribute *attributes, void **data,
				CUdeviceptr ptr)
{
	unsigned int i;
	CUresult err;

	err = (CUresult)xc_drv_enter(1);
	if (err)
		return err;
	if (!attributes || !data)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < numAttributes; i++) {
		if (!data[i])
			return CUDA_ERROR_INVALID_VALUE;
		err = cuPointerGetAttribute(data[i], attributes[i], ptr);
		if (err == CUDA_ERROR_INVALID_VALUE &&
		    attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
			/* No device's: the driver's CU_DEVICE_INVALID. */
			int none = CU_DEVICE_INVALID;

			memcpy(data[i], &none, sizeof(none));
		} else if (err == CUDA_ERROR_INVALID_VALUE) {
			memset(data[i], 0, xc_attr_size(attributes[i]));
		} else if (err) {
			return err;
		}
	}
	return CUDA_SUCCESS;
}
