// SPDX-License-Identifier: MIT
/*
 * Streams and events.  Their handles are the worker's table indices; a
 * record or a wait is posted without waiting for its answer.
 */
#include "guest.h"
#include "ptsz.h"

static cudaError_t xc_stream_create(cudaStream_t *pStream, unsigned int flags,
				    int priority)
{
	struct xcuda_stream_create_args a = { flags, priority };
	struct xcuda_handle_res r;
	cudaError_t err;

	if (!pStream)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_forward(XCUDA_OP_STREAM_CREATE, &a, &r);
	if (err)
		return err;
	if (r.handle < XCUDA_HANDLE_FIRST)
		return xc_ret(cudaErrorUnknown);
	*pStream = (cudaStream_t)(uintptr_t)r.handle;
	return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	return xc_stream_create(pStream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream,
				      unsigned int flags)
{
	return xc_stream_create(pStream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream,
					 unsigned int flags, int priority)
{
	return xc_stream_create(pStream, flags, priority);
}

static cudaError_t xc_stream_op(uint16_t op, cudaStream_t stream,
				int per_thread)
{
	struct xcuda_handle_args a = { 0, 0 };

	if (xc_stream_handle(stream, per_thread, &a.handle))
		return xc_ret(cudaErrorInvalidResourceHandle);
	return xc_forward(op, &a, NULL);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	return xc_stream_op(XCUDA_OP_STREAM_DESTROY, stream, 0);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	return xc_stream_op(XCUDA_OP_STREAM_SYNCHRONIZE, stream, 0);
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	return xc_stream_op(XCUDA_OP_STREAM_SYNCHRONIZE, stream, 1);
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	return xc_stream_op(XCUDA_OP_STREAM_QUERY, stream, 0);
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	return xc_stream_op(XCUDA_OP_STREAM_QUERY, stream, 1);
}

static cudaError_t xc_stream_wait(cudaStream_t stream, cudaEvent_t event,
				  unsigned int flags, int per_thread)
{
	struct xcuda_stream_wait_args a = { 0 };

	if (xc_stream_handle(stream, per_thread, &a.stream) ||
	    xc_event_handle(event, &a.event))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.flags = flags;
	return xc_post(XCUDA_OP_STREAM_WAIT_EVENT, &a);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
				unsigned int flags)
{
	return xc_stream_wait(stream, event, flags, 0);
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
				     unsigned int flags)
{
	return xc_stream_wait(stream, event, flags, 1);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	struct xcuda_u32_args a = { flags, 0 };
	struct xcuda_handle_res r;
	cudaError_t err;

	if (!event)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_forward(XCUDA_OP_EVENT_CREATE, &a, &r);
	if (err)
		return err;
	if (r.handle < XCUDA_HANDLE_FIRST)
		return xc_ret(cudaErrorUnknown);
	*event = (cudaEvent_t)(uintptr_t)r.handle;
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	return cudaEventCreateWithFlags(event, cudaEventDefault);
}

static cudaError_t xc_event_record(cudaEvent_t event, cudaStream_t stream,
				   int per_thread)
{
	struct xcuda_event_record_args a = { 0, 0 };

	if (xc_event_handle(event, &a.event) ||
	    xc_stream_handle(stream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	return xc_post(XCUDA_OP_EVENT_RECORD, &a);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	return xc_event_record(event, stream, 0);
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	return xc_event_record(event, stream, 1);
}

static cudaError_t xc_event_op(uint16_t op, cudaEvent_t event)
{
	struct xcuda_handle_args a = { 0, 0 };

	if (xc_event_handle(event, &a.handle))
		return xc_ret(cudaErrorInvalidResourceHandle);
	return xc_forward(op, &a, NULL);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	return xc_event_op(XCUDA_OP_EVENT_SYNCHRONIZE, event);
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
	return xc_event_op(XCUDA_OP_EVENT_QUERY, event);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	return xc_event_op(XCUDA_OP_EVENT_DESTROY, event);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
				 cudaEvent_t end)
{
	struct xcuda_elapsed_args a = { 0, 0 };
	struct xcuda_float_res r;
	cudaError_t err;

	if (!ms)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_event_handle(start, &a.start) || xc_event_handle(end, &a.end))
		return xc_ret(cudaErrorInvalidResourceHandle);
	err = xc_forward(XCUDA_OP_EVENT_ELAPSED_TIME, &a, &r);
	if (!err)
		*ms = r.value;
	return err;
}
