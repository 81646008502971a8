// SPDX-License-Identifier: MIT
/*
 * cudaLaunchHostFunc and cudaStreamAddCallback: the function is
 * registered here under a token (hostfn.c) and the worker enqueues a
 * trampoline of its own naming the token.  Each is one round trip, so
 * that the enqueue's own errors come back at the call as natively, and
 * so that the guest learns whether the stream was being captured (the
 * function then belongs to a graph and fires at each of its launches).
 */
#include <string.h>

#include "hostfn.h"

/* Hidden by the headers without --default-stream per-thread. */
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn,
				    void *userData);
cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
				       cudaStreamCallback_t callback,
				       void *userData, unsigned int flags);

/* Lock held: xc_call_locked(), but the call's own status in *@own. */
static cudaError_t xc_hf_call(struct xc_session *s, struct xcuda_request *req,
			      uint32_t *graph, cudaError_t *own)
{
	struct xcuda_response rsp;
	cudaError_t err;
	uint64_t id;

	*own = cudaErrorUnknown;
	err = xc_send_locked(s, req, UINT64_MAX, &id);
	if (!err)
		err = xc_wait_locked(s, id, &rsp);
	if (err)
		return err;
	err = *own = (cudaError_t)rsp.status;
	/* graph is the first word of both results. */
	if (!err && rsp.len >= sizeof(*graph))
		memcpy(graph, rsp.out, sizeof(*graph));
	if (!err)
		err = xc_take_latched(s);
	else if (err == s->latched)
		s->latched = cudaSuccess;
	return err;
}

static cudaError_t xc_hf_enqueue(const struct xc_hostfn *f, int per_thread,
				 unsigned int flags)
{
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err, own;
	uint32_t h, graph = 0;
	uint64_t token;

	err = xc_ready(&s);
	if (err)
		return xc_ret(err);
	/* The worker would enqueue its trampoline: NULL is refused here. */
	if (f->kind == XC_HOSTFN_HOST ? !f->fn.host : !f->fn.stream)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_stream_handle(f->stream, per_thread, &h))
		return xc_ret(cudaErrorInvalidResourceHandle);
	err = xc_hostfn_start(s);
	if (err)
		return xc_ret(err);
	err = xc_hostfn_register(f, 0, &token);
	if (err)
		return xc_ret(err);
	if (f->kind == XC_HOSTFN_HOST) {
		struct xcuda_host_func_launch_args a = { token, h, 0 };

		xc_req_host_func_launch(&req, &a);
	} else {
		struct xcuda_stream_add_callback_args a = { token, h, flags };

		xc_req_stream_add_callback(&req, &a);
	}
	pthread_mutex_lock(&s->lock);
	err = xc_hf_call(s, &req, &graph, &own);
	pthread_mutex_unlock(&s->lock);
	/*
	 * Only a refused enqueue can never fire; an enqueue that succeeded
	 * may already have run (and left the table) by now.
	 */
	if (own)
		xc_hostfn_forget(token);
	else if (graph)
		xc_hostfn_keep(token);
	return xc_ret(err);
}

static cudaError_t xc_launch_host_func(cudaStream_t stream, cudaHostFn_t fn,
				       void *userData, int per_thread)
{
	struct xc_hostfn f = { .kind = XC_HOSTFN_HOST, .fn.host = fn,
			       .data = userData, .stream = stream };

	return xc_hf_enqueue(&f, per_thread, 0);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn,
			       void *userData)
{
	return xc_launch_host_func(stream, fn, userData, 0);
}

cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn,
				    void *userData)
{
	return xc_launch_host_func(stream, fn, userData, 1);
}

static cudaError_t xc_stream_add_callback(cudaStream_t stream,
					  cudaStreamCallback_t callback,
					  void *userData, unsigned int flags,
					  int per_thread)
{
	struct xc_hostfn f = { .kind = XC_HOSTFN_STREAM,
			       .fn.stream = callback, .data = userData,
			       .stream = stream };

	return xc_hf_enqueue(&f, per_thread, flags);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream,
				  cudaStreamCallback_t callback,
				  void *userData, unsigned int flags)
{
	return xc_stream_add_callback(stream, callback, userData, flags, 0);
}

cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
				       cudaStreamCallback_t callback,
				       void *userData, unsigned int flags)
{
	return xc_stream_add_callback(stream, callback, userData, flags, 1);
}
