// SPDX-License-Identifier: MIT
/*
 * Stream and event commands.  Streams and events live in the session's
 * handle tables; wire stream 0 is the legacy default stream, 1 and 2 are
 * cudaStreamLegacy and cudaStreamPerThread, and only table handles may be
 * destroyed.  An unknown or freed handle answers
 * cudaErrorInvalidResourceHandle (400).
 *
 * STREAM_CREATE       cudaStreamCreateWithPriority(args.flags,
 *                     args.priority) -> {handle}; a full table answers
 *                     cudaErrorMemoryAllocation
 * STREAM_DESTROY      cudaStreamDestroy; the handle is gone either way
 * STREAM_SYNCHRONIZE  cudaStreamSynchronize
 * STREAM_QUERY        cudaStreamQuery; cudaErrorNotReady is a normal answer
 * STREAM_WAIT_EVENT   cudaStreamWaitEvent(stream, event, args.flags)
 * EVENT_CREATE        cudaEventCreateWithFlags(args.value) -> {handle}
 * EVENT_RECORD        cudaEventRecord(event, stream)
 * EVENT_SYNCHRONIZE   cudaEventSynchronize
 * EVENT_QUERY         cudaEventQuery (cudaErrorNotReady is normal)
 * EVENT_ELAPSED_TIME  cudaEventElapsedTime(start, end) -> {ms}
 * EVENT_DESTROY       cudaEventDestroy; the handle is gone either way
 *
 * DEVICE_RESET destroys the device's streams and events behind our back:
 * xd_streams_forget_device() drops their handles without touching them.
 */
#include <cuda_runtime_api.h>

#include "ops.h"

static int xd_event(struct xd_session *s, uint32_t h, cudaEvent_t *ev)
{
	struct xd_hent *e = xd_htab_get(&s->events, h);

	if (!e)
		return cudaErrorInvalidResourceHandle;
	*ev = (cudaEvent_t)e->ptr;
	return 0;
}

static uint32_t xd_handle_arg(struct xd_call *call)
{
	struct xcuda_handle_args a;

	XD_ARGS(call, a);
	return a.handle;
}

static void xd_put_handle(struct xd_call *call, uint32_t h)
{
	struct xcuda_handle_res r = { .handle = h };

	memcpy(call->res, &r, sizeof(r));
}

int xd_op_stream_create(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_stream_create_args a;
	struct xd_hent *e;
	cudaStream_t st;
	cudaError_t err;
	uint32_t h;

	XD_ARGS(call, a);
	err = cudaStreamCreateWithPriority(&st, a.flags, a.priority);
	if (err)
		return err;
	e = xd_htab_add(&s->streams, st, &h);
	if (!e) {
		cudaStreamDestroy(st);
		return cudaErrorMemoryAllocation;
	}
	e->device = s->device;
	xd_put_handle(call, h);
	return 0;
}

int xd_op_stream_destroy(struct xd_session *s, struct xd_call *call)
{
	uint32_t h = xd_handle_arg(call);
	struct xd_hent *e = xd_htab_get(&s->streams, h);
	cudaStream_t st;

	if (!e)
		return cudaErrorInvalidResourceHandle;
	st = (cudaStream_t)e->ptr;
	xd_htab_del(&s->streams, h);
	return cudaStreamDestroy(st);
}

int xd_op_stream_synchronize(struct xd_session *s, struct xd_call *call)
{
	cudaStream_t st;
	int err;

	err = xd_stream_lookup(&s->streams, xd_handle_arg(call),
			       &st);
	if (err)
		return err;
	return cudaStreamSynchronize(st);
}

int xd_op_stream_query(struct xd_session *s, struct xd_call *call)
{
	cudaStream_t st;
	int err;

	err = xd_stream_lookup(&s->streams, xd_handle_arg(call),
			       &st);
	if (err)
		return err;
	return cudaStreamQuery(st);
}

int xd_op_stream_wait_event(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_stream_wait_args a;
	cudaStream_t st;
	cudaEvent_t ev;
	int err;

	XD_ARGS(call, a);
	err = xd_stream_lookup(&s->streams, a.stream, &st);
	if (!err)
		err = xd_event(s, a.event, &ev);
	if (err)
		return err;
	return cudaStreamWaitEvent(st, ev, a.flags);
}

int xd_op_event_create(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_u32_args a;
	struct xd_hent *e;
	cudaEvent_t ev;
	cudaError_t err;
	uint32_t h;

	XD_ARGS(call, a);
	err = cudaEventCreateWithFlags(&ev, a.value);
	if (err)
		return err;
	e = xd_htab_add(&s->events, ev, &h);
	if (!e) {
		cudaEventDestroy(ev);
		return cudaErrorMemoryAllocation;
	}
	e->device = s->device;
	xd_put_handle(call, h);
	return 0;
}

int xd_op_event_record(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_event_record_args a;
	cudaStream_t st;
	cudaEvent_t ev;
	int err;

	XD_ARGS(call, a);
	err = xd_event(s, a.event, &ev);
	if (!err)
		err = xd_stream_lookup(&s->streams, a.stream, &st);
	if (err)
		return err;
	return cudaEventRecord(ev, st);
}

int xd_op_event_synchronize(struct xd_session *s, struct xd_call *call)
{
	cudaEvent_t ev;
	int err;

	err = xd_event(s, xd_handle_arg(call), &ev);
	if (err)
		return err;
	return cudaEventSynchronize(ev);
}

int xd_op_event_query(struct xd_session *s, struct xd_call *call)
{
	cudaEvent_t ev;
	int err;

	err = xd_event(s, xd_handle_arg(call), &ev);
	if (err)
		return err;
	return cudaEventQuery(ev);
}

int xd_op_event_elapsed_time(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_elapsed_args a;
	struct xcuda_float_res r = { 0 };
	cudaEvent_t start, end;
	float ms = 0;
	int err;

	XD_ARGS(call, a);
	err = xd_event(s, a.start, &start);
	if (!err)
		err = xd_event(s, a.end, &end);
	if (!err)
		err = cudaEventElapsedTime(&ms, start, end);
	if (!err) {
		r.value = ms;
		memcpy(call->res, &r, sizeof(r));
	}
	return err;
}

int xd_op_event_destroy(struct xd_session *s, struct xd_call *call)
{
	uint32_t h = xd_handle_arg(call);
	cudaEvent_t ev;
	int err;

	err = xd_event(s, h, &ev);
	if (err)
		return err;
	xd_htab_del(&s->events, h);
	return cudaEventDestroy(ev);
}

void xd_streams_forget_device(struct xd_session *s, int device)
{
	uint32_t h;

	for (h = 0; (h = xd_htab_next(&s->streams, h));)
		if (xd_htab_get(&s->streams, h)->device == device)
			xd_htab_del(&s->streams, h);
	for (h = 0; (h = xd_htab_next(&s->events, h));)
		if (xd_htab_get(&s->events, h)->device == device)
			xd_htab_del(&s->events, h);
}

void xd_streams_fini(struct xd_session *s)
{
	uint32_t h;

	for (h = 0; (h = xd_htab_next(&s->streams, h));)
		cudaStreamDestroy((cudaStream_t)xd_htab_get(&s->streams,
							    h)->ptr);
	for (h = 0; (h = xd_htab_next(&s->events, h));)
		cudaEventDestroy((cudaEvent_t)xd_htab_get(&s->events,
							  h)->ptr);
	xd_htab_free(&s->streams);
	xd_htab_free(&s->events);
}
