// SPDX-License-Identifier: MIT
/*
 * HOSTFN_SETUP, HOST_FUNC_LAUNCH and STREAM_ADD_CALLBACK: the guest's
 * host functions enqueued on our streams as our own trampolines
 * (hostfn.c), each naming the guest's token.
 */
#include <cuda_runtime_api.h>

#include "hostfn.h"
#include "ops.h"

int xd_op_hostfn_setup(struct xd_session *s,
		       const struct xcuda_hostfn_setup_args *a,
		       struct xd_call *call)
{
	(void)call;
	return xd_hostfn_setup(s, a->off, a->len);
}

/*
 * Enqueues a one-shot context; if the stream turns out to be captured,
 * the context becomes the graph node's and fires at every launch.  The
 * capture is asked after the enqueue: asking about the legacy stream
 * while another stream captures would be an unsafe call of our own.  A
 * one-shot trampoline may already have run (and freed its context) by
 * then, but only on a stream that is not captured.
 */
static int xd_hf_enqueue(struct xd_session *s, uint64_t token,
			 uint32_t stream, int callback, unsigned int flags,
			 uint32_t *graph)
{
	enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
	void *ud = NULL;
	cudaStream_t st;
	int err;

	if (!s->hostfn || !token)
		return cudaErrorInvalidValue;
	err = xd_stream_lookup(&s->streams, stream, &st);
	if (err)
		return err;
	err = xd_hostfn_ctx_new(s, token, XD_HOSTFN_ONESHOT, &ud);
	if (err)
		return err;
	if (callback)
		err = cudaStreamAddCallback(st, xd_hostfn_callback, ud, flags);
	else
		err = cudaLaunchHostFunc(st, xd_hostfn_trampoline, ud);
	if (err) {
		xd_hostfn_ctx_drop(ud);
		return err;
	}
	if (cudaStreamIsCapturing(st, &cs) == cudaSuccess &&
	    cs == cudaStreamCaptureStatusActive) {
		xd_hostfn_ctx_keep(ud);
		*graph = 1;
	}
	return 0;
}

int xd_op_host_func_launch(struct xd_session *s,
			   const struct xcuda_host_func_launch_args *a,
			   struct xcuda_host_func_launch_res *r,
			   struct xd_call *call)
{
	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	return xd_hf_enqueue(s, a->token, a->stream, 0, 0, &r->graph);
}

int xd_op_stream_add_callback(struct xd_session *s,
			      const struct xcuda_stream_add_callback_args *a,
			      struct xcuda_stream_add_callback_res *r,
			      struct xd_call *call)
{
	(void)call;
	return xd_hf_enqueue(s, a->token, a->stream, 1, a->flags, &r->graph);
}
