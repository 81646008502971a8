// SPDX-License-Identifier: MIT
/*
 * The driver API's streams and events are the runtime's: a CUstream is a
 * cudaStream_t and a CUevent a cudaEvent_t, natively as here, and their
 * flags have the same values.  Each call is the runtime's, answered as a
 * CUresult without touching the runtime's last error.
 */
#include <stdlib.h>

#include "driver.h"

/* A _ptsz call's stream: the per-thread default one for NULL. */
#define XC_PT(st)	((st) ? (st) : cudaStreamPerThread)

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	XC_DRV_CALL(cudaStreamCreateWithFlags(phStream, Flags));
}

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
				    int priority)
{
	XC_DRV_CALL(cudaStreamCreateWithPriority(phStream, flags, priority));
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
	XC_DRV_CALL(cudaStreamDestroy(hStream));
}

CUresult cuStreamSynchronize(CUstream hStream)
{
	XC_DRV_CALL(cudaStreamSynchronize(hStream));
}

CUresult cuStreamQuery(CUstream hStream)
{
	XC_DRV_CALL(cudaStreamQuery(hStream));
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
			   unsigned int Flags)
{
	XC_DRV_CALL(cudaStreamWaitEvent(hStream, hEvent, Flags));
}

CUresult cuStreamGetPriority(CUstream hStream, int *priority)
{
	XC_DRV_CALL(cudaStreamGetPriority(hStream, priority));
}

CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	XC_DRV_CALL(cudaStreamGetFlags(hStream, flags));
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	XC_DRV_CALL(cudaEventCreateWithFlags(phEvent, Flags));
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
	XC_DRV_CALL(cudaEventDestroy(hEvent));
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	XC_DRV_CALL(cudaEventRecord(hEvent, hStream));
}

CUresult cuEventSynchronize(CUevent hEvent)
{
	XC_DRV_CALL(cudaEventSynchronize(hEvent));
}

CUresult cuEventQuery(CUevent hEvent)
{
	XC_DRV_CALL(cudaEventQuery(hEvent));
}

CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart,
			       CUevent hEnd)
{
	XC_DRV_CALL(cudaEventElapsedTime(pMilliseconds, hStart, hEnd));
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart,
			    CUevent hEnd);
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart,
			    CUevent hEnd)
{
	XC_DRV_CALL(cudaEventElapsedTime(pMilliseconds, hStart, hEnd));
}

CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
				unsigned int flags)
{
	XC_DRV_CALL(cudaEventRecordWithFlags(hEvent, hStream, flags));
}

CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
	XC_DRV_CALL(cudaStreamGetId(hStream, streamId));
}

CUresult cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
	XC_DRV_CALL(cudaStreamGetDevice(hStream, device));
}

/* A stream's context: its device's primary one, as the worker has it. */
CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
	int dev, err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	err = XC_DRV_RT(cudaStreamGetDevice(hStream, &dev));
	if (err)
		return (CUresult)err;
	*pctx = xc_ctx_primary(dev);
	return *pctx ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	XC_DRV_CALL(cudaStreamBeginCapture(hStream,
					   (enum cudaStreamCaptureMode)mode));
}

/* The first version captured in the global mode. */
CUresult cuStreamBeginCapture(CUstream hStream)
{
	XC_DRV_CALL(cudaStreamBeginCapture(hStream,
					   cudaStreamCaptureModeGlobal));
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	XC_DRV_CALL(cudaStreamEndCapture(hStream, (cudaGraph_t *)phGraph));
}

CUresult cuStreamIsCapturing(CUstream hStream,
			     CUstreamCaptureStatus *captureStatus)
{
	XC_DRV_CALL(cudaStreamIsCapturing(
		hStream, (enum cudaStreamCaptureStatus *)captureStatus));
}

CUresult cuStreamGetCaptureInfo_v3(CUstream hStream,
				   CUstreamCaptureStatus *captureStatus_out,
				   cuuint64_t *id_out, CUgraph *graph_out,
				   const CUgraphNode **dependencies_out,
				   const CUgraphEdgeData **edgeData_out,
				   size_t *numDependencies_out)
{
	XC_DRV_CALL(cudaStreamGetCaptureInfo(
		hStream, (enum cudaStreamCaptureStatus *)captureStatus_out,
		(unsigned long long *)id_out, (cudaGraph_t *)graph_out,
		(const cudaGraphNode_t **)dependencies_out,
		(const cudaGraphEdgeData **)edgeData_out,
		numDependencies_out));
}

/* Without the edges' data: the runtime refuses where there is some. */
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream,
				   CUstreamCaptureStatus *captureStatus_out,
				   cuuint64_t *id_out, CUgraph *graph_out,
				   const CUgraphNode **dependencies_out,
				   size_t *numDependencies_out)
{
	return cuStreamGetCaptureInfo_v3(hStream, captureStatus_out, id_out,
					 graph_out, dependencies_out, NULL,
					 numDependencies_out);
}

CUresult cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr,
			      CUstreamAttrValue *value_out)
{
	XC_DRV_CALL(cudaStreamGetAttribute(hStream, (cudaStreamAttrID)attr,
					   (cudaStreamAttrValue *)value_out));
}

CUresult cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr,
			      const CUstreamAttrValue *value)
{
	XC_DRV_CALL(cudaStreamSetAttribute(
		hStream, (cudaStreamAttrID)attr,
		(const cudaStreamAttrValue *)value));
}

CUresult cuStreamCopyAttributes(CUstream dst, CUstream src)
{
	XC_DRV_CALL(cudaStreamCopyAttributes(dst, src));
}

CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	XC_DRV_CALL(cudaLaunchHostFunc(hStream, fn, userData));
}

/* A driver callback, called from the runtime's with its status. */
struct xc_drv_cb {
	CUstreamCallback fn;
	void *data;
};

static void xc_drv_cb_run(cudaStream_t st, cudaError_t status, void *p)
{
	struct xc_drv_cb cb = *(struct xc_drv_cb *)p;

	free(p);
	cb.fn(st, (CUresult)status, cb.data);
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
			     void *userData, unsigned int flags)
{
	struct xc_drv_cb *cb;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!callback)
		return CUDA_ERROR_INVALID_VALUE;
	cb = malloc(sizeof(*cb));
	if (!cb)
		return CUDA_ERROR_OUT_OF_MEMORY;
	cb->fn = callback;
	cb->data = userData;
	err = XC_DRV_RT(cudaStreamAddCallback(hStream, xc_drv_cb_run, cb,
					      flags));
	if (err)
		free(cb);
	return (CUresult)err;
}

/* The per-thread default stream's forms: NULL is that stream. */
CUresult cuStreamQuery_ptsz(CUstream hStream);
CUresult cuStreamQuery_ptsz(CUstream hStream)
{
	return cuStreamQuery(XC_PT(hStream));
}

CUresult cuStreamSynchronize_ptsz(CUstream hStream);
CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
	return cuStreamSynchronize(XC_PT(hStream));
}

CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent,
				unsigned int Flags);
CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent,
				unsigned int Flags)
{
	return cuStreamWaitEvent(XC_PT(hStream), hEvent, Flags);
}

CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags);
CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
	return cuStreamGetFlags(XC_PT(hStream), flags);
}

CUresult cuStreamGetPriority_ptsz(CUstream hStream, int *priority);
CUresult cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
	return cuStreamGetPriority(XC_PT(hStream), priority);
}

CUresult cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId);
CUresult cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{
	return cuStreamGetId(XC_PT(hStream), streamId);
}

CUresult cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device);
CUresult cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
	return cuStreamGetDevice(XC_PT(hStream), device);
}

CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx);
CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
	return cuStreamGetCtx(XC_PT(hStream), pctx);
}

CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	return cuEventRecord(hEvent, XC_PT(hStream));
}

CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
				     unsigned int flags);
CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
				     unsigned int flags)
{
	return cuEventRecordWithFlags(hEvent, XC_PT(hStream), flags);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream,
				      CUstreamCaptureMode mode);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream,
				      CUstreamCaptureMode mode)
{
	return cuStreamBeginCapture_v2(XC_PT(hStream), mode);
}

CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	return cuStreamEndCapture(XC_PT(hStream), phGraph);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream,
				  CUstreamCaptureStatus *captureStatus);
CUresult cuStreamIsCapturing_ptsz(CUstream hStream,
				  CUstreamCaptureStatus *captureStatus)
{
	return cuStreamIsCapturing(XC_PT(hStream), captureStatus);
}

CUresult cuStreamGetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
				   CUstreamAttrValue *value_out);
CUresult cuStreamGetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
				   CUstreamAttrValue *value_out)
{
	return cuStreamGetAttribute(XC_PT(hStream), attr, value_out);
}

CUresult cuStreamSetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
				   const CUstreamAttrValue *value);
CUresult cuStreamSetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
				   const CUstreamAttrValue *value)
{
	return cuStreamSetAttribute(XC_PT(hStream), attr, value);
}

CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData);
CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
	return cuLaunchHostFunc(XC_PT(hStream), fn, userData);
}

CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
				  void *userData, unsigned int flags);
CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
				  void *userData, unsigned int flags)
{
	return cuStreamAddCallback(XC_PT(hStream), callback, userData, flags);
}

/* The first versions: the same calls, which the _v2 replaced in name. */
CUresult cuStreamDestroy(CUstream hStream)
{
	return cuStreamDestroy_v2(hStream);
}

CUresult cuEventDestroy(CUevent hEvent)
{
	return cuEventDestroy_v2(hEvent);
}

CUresult cuStreamGetCaptureInfo(CUstream hStream,
				CUstreamCaptureStatus *captureStatus_out,
				cuuint64_t *id_out)
{
	return cuStreamGetCaptureInfo_v3(hStream, captureStatus_out, id_out,
					 NULL, NULL, NULL, NULL);
}

CUresult cuStreamWaitValue32(CUstream stream, CUdeviceptr addr,
			     cuuint32_t value, unsigned int flags)
{
	return cuStreamWaitValue32_v2(stream, addr, value, flags);
}

CUresult cuStreamWaitValue64(CUstream stream, CUdeviceptr addr,
			     cuuint64_t value, unsigned int flags)
{
	return cuStreamWaitValue64_v2(stream, addr, value, flags);
}

CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr,
			      cuuint32_t value, unsigned int flags)
{
	return cuStreamWriteValue32_v2(stream, addr, value, flags);
}

CUresult cuStreamWriteValue64(CUstream stream, CUdeviceptr addr,
			      cuuint64_t value, unsigned int flags)
{
	return cuStreamWriteValue64_v2(stream, addr, value, flags);
}

CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
				     const CUgraphNode *dependencies,
				     const CUgraphEdgeData *dependencyData,
				     size_t numDependencies,
				     CUstreamCaptureMode mode)
{
	XC_DRV_CALL(cudaStreamBeginCaptureToGraph(
		hStream, (cudaGraph_t)hGraph,
		(const cudaGraphNode_t *)dependencies,
		(const cudaGraphEdgeData *)dependencyData, numDependencies,
		(enum cudaStreamCaptureMode)mode));
}

CUresult cuStreamUpdateCaptureDependencies_v2(
	CUstream hStream, CUgraphNode *dependencies,
	const CUgraphEdgeData *dependencyData, size_t numDependencies,
	unsigned int flags)
{
	XC_DRV_CALL(cudaStreamUpdateCaptureDependencies(
		hStream, (cudaGraphNode_t *)dependencies,
		(const cudaGraphEdgeData *)dependencyData, numDependencies,
		flags));
}

CUresult cuStreamUpdateCaptureDependencies(CUstream hStream,
					   CUgraphNode *dependencies,
					   size_t numDependencies,
					   unsigned int flags)
{
	return cuStreamUpdateCaptureDependencies_v2(hStream, dependencies,
						    NULL, numDependencies,
						    flags);
}

CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
	return cuStreamBeginCapture(XC_PT(hStream));
}

CUresult cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src);
CUresult cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src)
{
	return cuStreamCopyAttributes(XC_PT(dst), XC_PT(src));
}

CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream,
				     CUstreamCaptureStatus *captureStatus_out,
				     cuuint64_t *id_out)
{
	return cuStreamGetCaptureInfo(XC_PT(hStream), captureStatus_out,
				      id_out);
}

CUresult cuStreamGetCaptureInfo_v2_ptsz(
	CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
	cuuint64_t *id_out, CUgraph *graph_out,
	const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
	return cuStreamGetCaptureInfo_v2(XC_PT(hStream), captureStatus_out,
					 id_out, graph_out, dependencies_out,
					 numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v3_ptsz(
	CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
	cuuint64_t *id_out, CUgraph *graph_out,
	const CUgraphNode **dependencies_out,
	const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out);
CUresult cuStreamGetCaptureInfo_v3_ptsz(
	CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
	cuuint64_t *id_out, CUgraph *graph_out,
	const CUgraphNode **dependencies_out,
	const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	return cuStreamGetCaptureInfo_v3(XC_PT(hStream), captureStatus_out,
					 id_out, graph_out, dependencies_out,
					 edgeData_out, numDependencies_out);
}

CUresult cuStreamBeginCaptureToGraph_ptsz(
	CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
	const CUgraphEdgeData *dependencyData, size_t numDependencies,
	CUstreamCaptureMode mode);
CUresult cuStreamBeginCaptureToGraph_ptsz(
	CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
	const CUgraphEdgeData *dependencyData, size_t numDependencies,
	CUstreamCaptureMode mode)
{
	return cuStreamBeginCaptureToGraph(XC_PT(hStream), hGraph,
					   dependencies, dependencyData,
					   numDependencies, mode);
}

CUresult cuStreamUpdateCaptureDependencies_ptsz(CUstream hStream,
						CUgraphNode *dependencies,
						size_t numDependencies,
						unsigned int flags)
{
	return cuStreamUpdateCaptureDependencies(XC_PT(hStream), dependencies,
						 numDependencies, flags);
}

CUresult cuStreamUpdateCaptureDependencies_v2_ptsz(
	CUstream hStream, CUgraphNode *dependencies,
	const CUgraphEdgeData *dependencyData, size_t numDependencies,
	unsigned int flags);
CUresult cuStreamUpdateCaptureDependencies_v2_ptsz(
	CUstream hStream, CUgraphNode *dependencies,
	const CUgraphEdgeData *dependencyData, size_t numDependencies,
	unsigned int flags)
{
	return cuStreamUpdateCaptureDependencies_v2(XC_PT(hStream),
						    dependencies,
						    dependencyData,
						    numDependencies, flags);
}

CUresult cuStreamWaitValue32_ptsz(CUstream stream, CUdeviceptr addr,
				  cuuint32_t value, unsigned int flags)
{
	return cuStreamWaitValue32_v2_ptsz(stream, addr, value, flags);
}

CUresult cuStreamWaitValue64_ptsz(CUstream stream, CUdeviceptr addr,
				  cuuint64_t value, unsigned int flags)
{
	return cuStreamWaitValue64_v2_ptsz(stream, addr, value, flags);
}

CUresult cuStreamWriteValue32_ptsz(CUstream stream, CUdeviceptr addr,
				   cuuint32_t value, unsigned int flags)
{
	return cuStreamWriteValue32_v2_ptsz(stream, addr, value, flags);
}

CUresult cuStreamWriteValue64_ptsz(CUstream stream, CUdeviceptr addr,
				   cuuint64_t value, unsigned int flags)
{
	return cuStreamWriteValue64_v2_ptsz(stream, addr, value, flags);
}
