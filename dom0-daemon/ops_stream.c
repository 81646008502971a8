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

int xd_op_stream_create(struct xd_session *s,
			const struct xcuda_stream_create_args *a,
			struct xcuda_stream_create_res *r, struct xd_call *call)
{
	struct xd_hent *e;
	cudaStream_t st;
	cudaError_t err;
	uint32_t h;

	(void)call;
	err = cudaStreamCreateWithPriority(&st, a->flags, a->priority);
	if (err)
		return err;
	e = xd_htab_add(&s->streams, st, &h);
	if (!e) {
		cudaStreamDestroy(st);
		return cudaErrorMemoryAllocation;
	}
	e->device = s->device;
	r->handle = h;
	return 0;
}

int xd_op_stream_destroy(struct xd_session *s,
			 const struct xcuda_stream_destroy_args *a,
			 struct xd_call *call)
{
	uint32_t h = a->stream;
	struct xd_hent *e = xd_htab_get(&s->streams, h);
	cudaStream_t st;

	(void)call;
	if (!e)
		return cudaErrorInvalidResourceHandle;
	st = (cudaStream_t)e->ptr;
	xd_htab_del(&s->streams, h);
	return cudaStreamDestroy(st);
}

int xd_event_adopt(struct xd_session *s, cudaEvent_t ev, uint32_t *h)
{
	struct xd_hent *e = xd_htab_add(&s->events, ev, h);

	if (!e) {
		cudaEventDestroy(ev);
		return cudaErrorMemoryAllocation;
	}
	e->device = s->device;
	return 0;
}

int xd_op_event_create(struct xd_session *s,
		       const struct xcuda_event_create_args *a,
		       struct xcuda_event_create_res *r, struct xd_call *call)
{
	cudaEvent_t ev;
	cudaError_t err;

	(void)call;
	err = cudaEventCreateWithFlags(&ev, a->flags);
	if (err)
		return err;
	return xd_event_adopt(s, ev, &r->handle);
}

int xd_op_event_destroy(struct xd_session *s,
			const struct xcuda_event_destroy_args *a,
			struct xd_call *call)
{
	uint32_t h = a->event;
	cudaEvent_t ev;

	(void)call;
	ev = xd_object_get(&s->events, h);
	if (!ev)
		return cudaErrorInvalidResourceHandle;
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

static void xd_streams_fini(struct xd_session *s)
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

XD_SESSION_HOOKS(streams, 10, NULL, xd_streams_fini);

/*
 * The stream attributes CUDA applies to streams.  The value is a union
 * some of whose members are handles or host pointers of the guest's
 * (events, for instance): only these, which hold plain numbers and device
 * addresses, reach CUDA.
 */
int xd_check_stream_attr(struct xd_session *s,
			 const struct xcuda_stream_set_attribute_args *a)
{
	(void)s;
	switch (a->attr) {
	case cudaLaunchAttributeAccessPolicyWindow:
	case cudaLaunchAttributeSynchronizationPolicy:
	case cudaLaunchAttributePriority:
	case cudaLaunchAttributeMemSyncDomainMap:
	case cudaLaunchAttributeMemSyncDomain:
		return 0;
	}
	return cudaErrorInvalidValue;
}
