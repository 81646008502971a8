// SPDX-License-Identifier: MIT
/*
 * Creating streams and events: the worker answers a handle, which the
 * guest hands out as the cudaStream_t or cudaEvent_t itself.  Every other
 * stream and event call is generated from spec/cudart.calls.
 */
#include "guest.h"

static cudaError_t xc_stream_create(cudaStream_t *pStream, unsigned int flags,
				    int priority)
{
	struct xcuda_stream_create_args a = { flags, priority };
	struct xcuda_stream_create_res r;
	cudaError_t err;

	if (!pStream)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_call_stream_create(&a, &r);
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

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	struct xcuda_event_create_args a = { flags, 0 };
	struct xcuda_event_create_res r;
	cudaError_t err;

	if (!event)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_call_event_create(&a, &r);
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
