// SPDX-License-Identifier: MIT
/*
 * CUDA IPC between processes of one guest (spec/cudart-ipc.calls): the
 * calls whose guest side keeps state.  Opened IPC memory is device
 * memory of this process, recorded in the range table so that copies and
 * pointer queries know it; CUDA counts opens of one handle and answers
 * the same address, so the range stays until the last close.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

struct xc_ipc_open {
	uint64_t ptr;
	unsigned int count;
	struct xc_ipc_open *next;
};

static pthread_mutex_t xc_ipc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_ipc_open *xc_ipc_opens;

/* One more open of @ptr; its range is recorded on the first. */
static void xc_ipc_opened(uint64_t ptr, uint64_t size)
{
	struct xc_ipc_open *o;
	struct xc_range rg;

	pthread_mutex_lock(&xc_ipc_lock);
	for (o = xc_ipc_opens; o && o->ptr != ptr; o = o->next)
		;
	if (o) {
		o->count++;
	} else {
		o = calloc(1, sizeof(*o));
		if (o) {
			o->ptr = ptr;
			o->count = 1;
			o->next = xc_ipc_opens;
			xc_ipc_opens = o;
		}
	}
	/*
	 * Recorded unless it is already (a device reset drops every range,
	 * and a forked child keeps its parent's list).  Without its size
	 * the memory cannot be told by address: copies to it then need an
	 * explicit kind.
	 */
	if (o && size && xc_range_find((uintptr_t)ptr, &rg)) {
		memset(&rg, 0, sizeof(rg));
		rg.start = ptr;
		rg.size = size;
		rg.kind = XC_R_DEVICE;
		rg.device = xc_cur_device();
		xc_range_add(&rg);
	}
	pthread_mutex_unlock(&xc_ipc_lock);
}

/* One open of @ptr fewer; the range goes with the last. */
static void xc_ipc_closed(uint64_t ptr)
{
	struct xc_ipc_open **pp, *o;

	pthread_mutex_lock(&xc_ipc_lock);
	for (pp = &xc_ipc_opens; (o = *pp) && o->ptr != ptr; pp = &o->next)
		;
	if (o && !--o->count) {
		*pp = o->next;
		free(o);
		xc_range_del((uintptr_t)ptr, XC_R_DEVICE, NULL);
	}
	pthread_mutex_unlock(&xc_ipc_lock);
}

cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle,
				 unsigned int flags)
{
	struct xcuda_ipc_open_mem_handle_args a = { 0 };
	struct xcuda_ipc_open_mem_handle_res r;
	cudaError_t err;

	_Static_assert(sizeof(handle) == sizeof(a.handle), "handle size");
	if (!devPtr)
		return xc_ret(cudaErrorInvalidValue);
	a.flags = flags;
	memcpy(a.handle, &handle, sizeof(a.handle));
	err = xc_call_ipc_open_mem_handle(&a, &r);
	if (err)
		return err;
	/* The worker's answer is checked as any: no address, no memory. */
	if (!r.ptr || r.ptr > UINTPTR_MAX || r.size > UINTPTR_MAX - r.ptr)
		return xc_ret(cudaErrorUnknown);
	xc_ipc_opened(r.ptr, r.size);
	*devPtr = (void *)(uintptr_t)r.ptr;
	return cudaSuccess;
}

cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
	struct xcuda_ipc_close_mem_handle_args a = { 0 };
	cudaError_t err;

	a.devPtr = (uintptr_t)devPtr;
	err = xc_call_ipc_close_mem_handle(&a);
	if (!err)
		xc_ipc_closed((uintptr_t)devPtr);
	return err;
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event,
				   cudaIpcEventHandle_t handle)
{
	struct xcuda_ipc_open_event_handle_args a;
	struct xcuda_ipc_open_event_handle_res r;
	cudaError_t err;

	_Static_assert(sizeof(handle) == sizeof(a.handle), "handle size");
	if (!event)
		return xc_ret(cudaErrorInvalidValue);
	memcpy(a.handle, &handle, sizeof(a.handle));
	err = xc_call_ipc_open_event_handle(&a, &r);
	if (err)
		return err;
	if (r.event < XCUDA_HANDLE_FIRST)
		return xc_ret(cudaErrorUnknown);
	*event = (cudaEvent_t)(uintptr_t)r.event;
	return cudaSuccess;
}
