// SPDX-License-Identifier: MIT
/*
 * Memory pools: what the generated handlers of spec/cudart-pools.calls
 * need beyond the description, and pool export between processes of one
 * guest (docs/protocol.md, "Pool export").  A pool exported as a file
 * descriptor leaves CUDA's descriptor with xcudad's broker (fd_broker.h)
 * under a random token; fabric handles and pointer export data are
 * bytes, recorded in the IPC table as memory handles are.  Either way a
 * worker imports only what its own domain exported.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "fd_broker.h"
#include "ipc_table.h"
#include "log.h"
#include "ops.h"
#include "supervise.h"

_Static_assert(sizeof(struct cudaMemPoolPtrExportData) == XD_IPC_HANDLE,
	       "pointer export data");
_Static_assert(sizeof(cudaMemFabricHandle_t) == XD_IPC_HANDLE,
	       "fabric handle");
_Static_assert(XD_BROKER_TOKEN == XD_IPC_HANDLE, "token");

/* The handle types a pool of a guest may be exported as. */
#define XD_POOL_SHAREABLE \
	(cudaMemHandleTypePosixFileDescriptor | cudaMemHandleTypeFabric)

/*
 * Windows handles mean nothing here, and the Windows security attribute
 * is a pointer into the guest: neither reaches CUDA.
 */
int xd_check_pool_props(struct xd_session *s,
			const struct xcuda_mem_pool_create_args *a)
{
	(void)s;
	if ((a->poolProps.handleTypes & ~XD_POOL_SHAREABLE) ||
	    a->poolProps.win32SecurityAttributes)
		return cudaErrorInvalidValue;
	return 0;
}

/* CUDA's descriptor to the broker under a fresh token, in @token. */
static int xd_pool_put_fd(struct xd_session *s, int fd, uint8_t *token)
{
	int err;

	if (getrandom(token, XD_BROKER_TOKEN, 0) != XD_BROKER_TOKEN)
		return cudaErrorOperatingSystem;
	err = xd_broker_put(xd_super_chan(), s->chan->domain, token, fd);
	if (err) {
		xd_log_ratelimited(XD_LOG_WARN, "pool descriptor not kept: %s",
				   strerror(-err));
		return cudaErrorMemoryAllocation;
	}
	return 0;
}

int xd_op_mem_pool_export_shareable(
	struct xd_session *s,
	const struct xcuda_mem_pool_export_shareable_args *a,
	struct xd_call *call)
{
	uint8_t out[XD_IPC_HANDLE];
	cudaMemPool_t pool;
	int err, fd = -1;

	(void)call;
	if (a->rsvd || a->out.len != sizeof(out) || !s->chan->domain)
		return cudaErrorInvalidValue;
	pool = xd_object_get(&s->objects[XD_H_MEMPOOL], a->pool);
	if (!pool)
		return cudaErrorInvalidValue;
	memset(out, 0, sizeof(out));
	switch (a->type) {
	case cudaMemHandleTypePosixFileDescriptor:
		err = cudaMemPoolExportToShareableHandle(
			&fd, pool, cudaMemHandleTypePosixFileDescriptor,
			a->flags);
		if (err)
			return err;
		err = xd_pool_put_fd(s, fd, out);
		close(fd);
		break;
	case cudaMemHandleTypeFabric:
		err = cudaMemPoolExportToShareableHandle(
			out, pool, cudaMemHandleTypeFabric, a->flags);
		if (!err)
			err = xd_ipc_export(s, XD_IPC_POOL_FABRIC, out);
		break;
	default:
		return cudaErrorInvalidValue;
	}
	if (!err)
		xd_arena_put(s, &a->out, out);
	return err;
}

/* @pool in the session's table: the handle it has already, or a new one. */
static int xd_pool_adopt(struct xd_session *s, cudaMemPool_t pool,
			 uint32_t *h)
{
	struct xd_htab *t = &s->objects[XD_H_MEMPOOL];
	int err;

	*h = xd_object_handle(t, pool);
	if (*h)
		return 0;
	err = xd_object_add(t, pool, s->device, 0, h);
	if (err)
		cudaMemPoolDestroy(pool);
	return err;
}

int xd_op_mem_pool_import_shareable(
	struct xd_session *s,
	const struct xcuda_mem_pool_import_shareable_args *a,
	struct xcuda_mem_pool_import_shareable_res *r,
	struct xd_call *call)
{
	cudaMemFabricHandle_t fab;
	cudaMemPool_t pool = NULL;
	int err, fd;

	(void)call;
	if (!s->chan->domain)
		return cudaErrorInvalidValue;
	switch (a->type) {
	case cudaMemHandleTypePosixFileDescriptor:
		fd = xd_broker_get(xd_super_chan(), s->chan->domain,
				   a->handle);
		if (fd < 0) {
			if (fd != -ENOENT)
				xd_log_ratelimited(XD_LOG_WARN, "descriptor "
						   "broker: %s",
						   strerror(-fd));
			return cudaErrorInvalidValue;
		}
		err = cudaMemPoolImportFromShareableHandle(
			&pool, (void *)(uintptr_t)fd,
			cudaMemHandleTypePosixFileDescriptor, a->flags);
		close(fd);
		break;
	case cudaMemHandleTypeFabric:
		memcpy(&fab, a->handle, sizeof(fab));
		err = xd_ipc_may_open(s, XD_IPC_POOL_FABRIC, &fab);
		if (!err)
			err = cudaMemPoolImportFromShareableHandle(
				&pool, &fab, cudaMemHandleTypeFabric,
				a->flags);
		break;
	default:
		return cudaErrorInvalidValue;
	}
	if (err)
		return err;
	return xd_pool_adopt(s, pool, &r->pool);
}

int xd_op_mem_pool_export_pointer(
	struct xd_session *s,
	const struct xcuda_mem_pool_export_pointer_args *a,
	struct xd_call *call)
{
	struct cudaMemPoolPtrExportData d;
	int err;

	(void)call;
	if (a->out.len != sizeof(d))
		return cudaErrorInvalidValue;
	memset(&d, 0, sizeof(d));
	err = cudaMemPoolExportPointer(&d, (void *)(uintptr_t)a->ptr);
	if (!err)
		err = xd_ipc_export(s, XD_IPC_POOL_PTR, &d);
	if (!err)
		xd_arena_put(s, &a->out, (const uint8_t *)&d);
	return err;
}

int xd_op_mem_pool_import_pointer(
	struct xd_session *s,
	const struct xcuda_mem_pool_import_pointer_args *a,
	struct xcuda_mem_pool_import_pointer_res *r, struct xd_call *call)
{
	struct cudaMemPoolPtrExportData d;
	cudaMemPool_t pool;
	void *p = NULL;
	int err;

	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	memcpy(&d, a->data, sizeof(d));
	err = xd_ipc_may_open(s, XD_IPC_POOL_PTR, &d);
	if (err)
		return err;
	pool = xd_object_get(&s->objects[XD_H_MEMPOOL], a->pool);
	if (!pool)
		return cudaErrorInvalidValue;
	err = cudaMemPoolImportPointer(&p, pool, &d);
	if (err)
		return err;
	r->ptr = (uintptr_t)p;
	r->size = xd_alloc_size(p);
	return 0;
}
