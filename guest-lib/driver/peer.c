// SPDX-License-Identifier: MIT
/*
 * The driver's peer access, interprocess handles, capture mode and
 * profiler switches, made with the runtime's calls: a context stands for
 * its device, a CUipcMemHandle is a cudaIpcMemHandle_t and a
 * CUipcEventHandle a cudaIpcEventHandle_t, byte for byte.
 */
#include <string.h>

#include <cudaProfiler.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "driver.h"

_Static_assert(sizeof(CUipcMemHandle) == sizeof(cudaIpcMemHandle_t),
	       "memory handles");
_Static_assert(sizeof(CUipcEventHandle) == sizeof(cudaIpcEventHandle_t),
	       "event handles");

CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev,
			       CUdevice peerDev)
{
	XC_DRV_CALL(cudaDeviceCanAccessPeer(canAccessPeer, dev, peerDev));
}

CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib,
				 CUdevice srcDevice, CUdevice dstDevice)
{
	XC_DRV_CALL(cudaDeviceGetP2PAttribute(value,
					      (enum cudaDeviceP2PAttr)attrib,
					      srcDevice, dstDevice));
}

/* The current context's device gains access to @peer's, as natively. */
CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
	int peer, err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	peer = xc_ctx_device(peerContext);
	if (peer < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	return XC_DRV_RT(cudaDeviceEnablePeerAccess(peer, Flags));
}

CUresult cuCtxDisablePeerAccess(CUcontext peerContext)
{
	int peer, err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	peer = xc_ctx_device(peerContext);
	if (peer < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	return XC_DRV_RT(cudaDeviceDisablePeerAccess(peer));
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	XC_DRV_CALL(cudaIpcGetMemHandle((cudaIpcMemHandle_t *)pHandle,
					(void *)(uintptr_t)dptr));
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
			       unsigned int Flags);
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
			       unsigned int Flags)
{
	cudaIpcMemHandle_t h;
	void *p = NULL;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!pdptr)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&h, &handle, sizeof(h));
	err = XC_DRV_RT(cudaIpcOpenMemHandle(&p, h, Flags));
	if (!err)
		*pdptr = (CUdeviceptr)(uintptr_t)p;
	return (CUresult)err;
}

/* The first version's prototype is the same. */
CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
			    unsigned int Flags)
	__attribute__((alias("cuIpcOpenMemHandle_v2")));

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	XC_DRV_CALL(cudaIpcCloseMemHandle((void *)(uintptr_t)dptr));
}

CUresult cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
	XC_DRV_CALL(cudaIpcGetEventHandle((cudaIpcEventHandle_t *)pHandle,
					  event));
}

CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
	cudaIpcEventHandle_t h;

	memcpy(&h, &handle, sizeof(h));
	XC_DRV_CALL(cudaIpcOpenEventHandle(phEvent, h));
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	XC_DRV_CALL(cudaThreadExchangeStreamCaptureMode(
		(enum cudaStreamCaptureMode *)mode));
}

CUresult cuProfilerStart(void)
{
	XC_DRV_CALL(cudaProfilerStart());
}

CUresult cuProfilerStop(void)
{
	XC_DRV_CALL(cudaProfilerStop());
}
