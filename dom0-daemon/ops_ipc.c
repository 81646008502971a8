// SPDX-License-Identifier: MIT
/*
 * CUDA IPC between processes of one guest (spec/cudart-ipc.calls).  Each
 * guest process has a worker of its own, and CUDA opens in one worker a
 * handle another worker exported; the daemon's IPC table (ipc_table.h)
 * keeps that within a guest domain: exports are recorded with the
 * exporting session's domain, and a handle opens only in a worker of the
 * domain it was recorded for.  A session's entries go when it ends, here
 * or, should the worker die, when xcudad reaps it.
 */
#include <errno.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "ipc_table.h"
#include "log.h"
#include "ops.h"

_Static_assert(sizeof(cudaIpcMemHandle_t) == XD_IPC_HANDLE, "mem handle");
_Static_assert(sizeof(cudaIpcEventHandle_t) == XD_IPC_HANDLE,
	       "event handle");

int xd_ipc_export(struct xd_session *s, int kind, const void *h)
{
	int err = xd_ipc_record(s->chan->domain, s->id, kind, h);
	const char *why = err == -EDQUOT ? "the domain's quota is used" :
			  err == -ENOSPC ? "the table is full" : "no table";

	if (err) {
		xd_log_ratelimited(XD_LOG_WARN, "IPC handle not recorded: %s",
				   why);
		return cudaErrorMemoryAllocation;
	}
	return 0;
}

int xd_ipc_may_open(struct xd_session *s, int kind, const void *h)
{
	int err;

	if (!s->chan->domain)
		return cudaErrorInvalidValue;
	err = xd_ipc_check(s->chan->domain, kind, h);
	if (err == -EPERM)
		xd_log_ratelimited(XD_LOG_WARN, "refused an IPC handle of "
				   "another domain");
	return err ? cudaErrorInvalidValue : 0;
}

int xd_op_ipc_get_mem_handle(struct xd_session *s,
			     const struct xcuda_ipc_get_mem_handle_args *a,
			     struct xd_call *call)
{
	cudaIpcMemHandle_t h;
	int err;

	(void)call;
	if (a->handle.len != sizeof(h))
		return cudaErrorInvalidValue;
	memset(&h, 0, sizeof(h));
	err = cudaIpcGetMemHandle(&h, (void *)(uintptr_t)a->devPtr);
	if (!err)
		err = xd_ipc_export(s, XD_IPC_MEM, &h);
	if (!err)
		xd_arena_put(s, &a->handle, (const uint8_t *)&h);
	return err;
}

/* The driver's cuMemGetAddressRange, looked up once, NULL if absent. */
static PFN_cuMemGetAddressRange_v3020 xd_drv_range(void)
{
	static PFN_cuMemGetAddressRange_v3020 fn;
	static int tried;
	enum cudaDriverEntryPointQueryResult q;
	void *p = NULL;

	if (!tried) {
		tried = 1;
		if (!cudaGetDriverEntryPointByVersion("cuMemGetAddressRange",
						      &p, 3020,
						      cudaEnableDefault, &q) &&
		    q == cudaDriverEntryPointSuccess && p)
			fn = (PFN_cuMemGetAddressRange_v3020)p;
		cudaGetLastError();
	}
	return fn;
}

uint64_t xd_alloc_size(const void *p)
{
	PFN_cuMemGetAddressRange_v3020 range = xd_drv_range();
	CUdeviceptr base = 0;
	size_t size = 0;

	if (range && range(&base, &size, (CUdeviceptr)(uintptr_t)p) ==
	    CUDA_SUCCESS && base == (CUdeviceptr)(uintptr_t)p)
		return size;
	return 0;
}

int xd_op_ipc_open_mem_handle(struct xd_session *s,
			      const struct xcuda_ipc_open_mem_handle_args *a,
			      struct xcuda_ipc_open_mem_handle_res *r,
			      struct xd_call *call)
{
	cudaIpcMemHandle_t h;
	void *p = NULL;
	int err;

	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	memcpy(&h, a->handle, sizeof(h));
	err = xd_ipc_may_open(s, XD_IPC_MEM, &h);
	if (err)
		return err;
	err = cudaIpcOpenMemHandle(&p, h, a->flags);
	if (err)
		return err;
	r->size = xd_alloc_size(p);
	r->ptr = (uintptr_t)p;
	return 0;
}

int xd_op_ipc_get_event_handle(struct xd_session *s,
			       const struct xcuda_ipc_get_event_handle_args *a,
			       struct xd_call *call)
{
	cudaIpcEventHandle_t h;
	cudaEvent_t ev;
	int err;

	(void)call;
	if (a->handle.len != sizeof(h))
		return cudaErrorInvalidValue;
	ev = xd_object_get(&s->events, a->event);
	if (!ev)
		return cudaErrorInvalidResourceHandle;
	memset(&h, 0, sizeof(h));
	err = cudaIpcGetEventHandle(&h, ev);
	if (!err)
		err = xd_ipc_export(s, XD_IPC_EVENT, &h);
	if (!err)
		xd_arena_put(s, &a->handle, (const uint8_t *)&h);
	return err;
}

int xd_op_ipc_open_event_handle(
	struct xd_session *s, const struct xcuda_ipc_open_event_handle_args *a,
	struct xcuda_ipc_open_event_handle_res *r, struct xd_call *call)
{
	cudaIpcEventHandle_t h;
	cudaEvent_t ev;
	int err;

	(void)call;
	memcpy(&h, a->handle, sizeof(h));
	err = xd_ipc_may_open(s, XD_IPC_EVENT, &h);
	if (err)
		return err;
	err = cudaIpcOpenEventHandle(&ev, h);
	if (err)
		return err;
	return xd_event_adopt(s, ev, &r->event);
}

/* What the session exported may be opened no more. */
static void xd_ipc_fini(struct xd_session *s)
{
	xd_ipc_forget_session(s->id);
}

XD_SESSION_HOOKS(ipc, 5, NULL, xd_ipc_fini);
