// SPDX-License-Identifier: MIT
/*
 * The driver's error log (LOGS_CURRENT, LOGS_DUMP) and the callbacks of
 * log messages and device async notifications.  A callback is a host
 * function context (hostfn.c) with a payload buffer in the arena: CUDA
 * gets our own function and the context's id as userData, never a
 * pointer of the guest's, and the message or notification travels
 * through the buffer the guest gave at registration.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "hostfn.h"
#include "ops.h"

/* Bytes of log one dump gives CUDA (which keeps at most 25600). */
#define XD_LOGS_DUMP_MAX	65536u
/* Callbacks one session may have registered at once. */
#define XD_LOGS_MAX_REGS	1024u

enum { XD_REG_LOG = 1, XD_REG_ASYNC = 2 };

struct xd_logs_reg {
	struct xd_session *s;
	uint64_t token;
	int kind;
	int device;		/* ASYNC: where it was registered */
	void *ud;		/* the host function context */
	union {
		cudaLogsCallbackHandle log;
		cudaAsyncCallbackHandle_t async;
	} h;
	struct xd_logs_reg *next;
};

/* Request threads only: each session's registrations. */
static pthread_mutex_t xd_logs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xd_logs_reg *xd_logs_regs;

int xd_op_logs_current(struct xd_session *s,
		       const struct xcuda_logs_current_args *a,
		       struct xcuda_logs_current_res *r, struct xd_call *call)
{
	cudaLogIterator it = 0;
	cudaError_t err;

	(void)s;
	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	err = cudaLogsCurrent(&it, a->flags);
	if (!err)
		r->iter = it;
	return err;
}

#define XD_DUMP_ITER	(1u << 0)
#define XD_DUMP_BUF	(1u << 1)
#define XD_DUMP_SIZE	(1u << 2)

int xd_op_logs_dump(struct xd_session *s, const struct xcuda_logs_dump_args *a,
		    struct xcuda_logs_dump_res *r, struct xd_call *call)
{
	cudaLogIterator it = a->iter;
	size_t size = a->size;
	char *buf = NULL;

	(void)s;
	if (a->rsvd || (a->what & ~(XD_DUMP_ITER | XD_DUMP_BUF | XD_DUMP_SIZE)))
		return cudaErrorInvalidValue;
	if (a->what & XD_DUMP_BUF) {
		if (!call->data || !call->data_len)
			return cudaErrorInvalidValue;
		/* CUDA sees no more than the extent holds and our bound. */
		if (size > call->data_len)
			size = call->data_len;
		if (size > XD_LOGS_DUMP_MAX)
			size = XD_LOGS_DUMP_MAX;
		/*
		 * Our own memory, and all of our bound whatever the size:
		 * CUDA 13.0 writes the log even when told the buffer holds
		 * nothing, so a buffer of the size alone could overflow.
		 */
		buf = calloc(1, XD_LOGS_DUMP_MAX + 1);
		if (!buf)
			return cudaErrorMemoryAllocation;
	}
	{
		size_t given = size;

		r->status = cudaLogsDumpToMemory(
				a->what & XD_DUMP_ITER ? &it : NULL, buf,
				a->what & XD_DUMP_SIZE ? &size : NULL,
				a->flags);
		/* A size CUDA left alone is the program's own. */
		r->size = size == given ? a->size : size;
	}
	r->iter = it;
	if (buf) {
		/* Whatever CUDA says it wrote, no more than we gave it. */
		if (!r->status && size && size < call->data_len &&
		    size < XD_LOGS_DUMP_MAX)
			memcpy(call->data, buf, size);
		free(buf);
	}
	return 0;
}

/* ---- callbacks ---- */

static void CUDART_CB xd_logs_cb(void *data, cudaLogLevel level,
				 char *message, size_t length)
{
	if (!message)
		length = 0;
	xd_hostfn_fire_data(data, (int32_t)level, message, length);
}

static void xd_async_cb(cudaAsyncNotificationInfo_t *info, void *data,
			cudaAsyncCallbackHandle_t h)
{
	cudaAsyncNotificationInfo_t copy;

	(void)h;
	memset(&copy, 0, sizeof(copy));
	if (info)
		copy = *info;
	xd_hostfn_fire_data(data, 0, &copy, sizeof(copy));
}

/* The registration of @s with @token and @kind, unlinked; lock held. */
static struct xd_logs_reg *xd_logs_take(struct xd_session *s, uint64_t token,
					int kind)
{
	struct xd_logs_reg **p;

	for (p = &xd_logs_regs; *p; p = &(*p)->next) {
		struct xd_logs_reg *g = *p;

		if (g->s == s && g->token == token && g->kind == kind) {
			*p = g->next;
			return g;
		}
	}
	return NULL;
}

/* How many registrations @s has, and whether @token is among them. */
static unsigned int xd_logs_count(struct xd_session *s, uint64_t token,
				  int *dup)
{
	struct xd_logs_reg *g;
	unsigned int n = 0;

	*dup = 0;
	for (g = xd_logs_regs; g; g = g->next) {
		if (g->s != s)
			continue;
		n++;
		if (g->token == token)
			*dup = 1;
	}
	return n;
}

static int xd_logs_register(struct xd_session *s, int kind, uint64_t token,
			    uint64_t off, uint32_t len, int device)
{
	struct xd_logs_reg *g;
	int err, dup;

	if (!s->hostfn || !token)
		return cudaErrorInvalidValue;
	g = calloc(1, sizeof(*g));
	if (!g)
		return cudaErrorMemoryAllocation;
	pthread_mutex_lock(&xd_logs_lock);
	if (xd_logs_count(s, token, &dup) >= XD_LOGS_MAX_REGS) {
		err = cudaErrorMemoryAllocation;
		goto fail;
	}
	if (dup) {
		err = cudaErrorInvalidValue;
		goto fail;
	}
	err = xd_hostfn_ctx_new(s, token, XD_HOSTFN_GRAPH, &g->ud);
	if (err)
		goto fail;
	err = xd_hostfn_ctx_payload(s, g->ud, off, len);
	if (!err && kind == XD_REG_LOG)
		err = cudaLogsRegisterCallback(xd_logs_cb, g->ud, &g->h.log);
	else if (!err)
		err = cudaDeviceRegisterAsyncNotification(device, xd_async_cb,
							  g->ud, &g->h.async);
	if (err) {
		xd_hostfn_ctx_drop_wait(g->ud);
		goto fail;
	}
	g->s = s;
	g->token = token;
	g->kind = kind;
	g->device = device;
	g->next = xd_logs_regs;
	xd_logs_regs = g;
	pthread_mutex_unlock(&xd_logs_lock);
	return 0;
fail:
	pthread_mutex_unlock(&xd_logs_lock);
	free(g);
	return err;
}

int xd_op_logs_register_callback(
		struct xd_session *s,
		const struct xcuda_logs_register_callback_args *a,
		struct xd_call *call)
{
	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	return xd_logs_register(s, XD_REG_LOG, a->token, a->off, a->len, 0);
}

int xd_op_device_register_async_notification(
		struct xd_session *s,
		const struct xcuda_device_register_async_notification_args *a,
		struct xd_call *call)
{
	(void)call;
	return xd_logs_register(s, XD_REG_ASYNC, a->token, a->off, a->len,
				a->device);
}

/* CUDA's unregistration of @g, then its context. */
static int xd_logs_unregister(struct xd_logs_reg *g, int device)
{
	int err;

	if (g->kind == XD_REG_LOG)
		err = cudaLogsUnregisterCallback(g->h.log);
	else
		err = cudaDeviceUnregisterAsyncNotification(device,
							    g->h.async);
	if (!err)
		xd_hostfn_ctx_drop_wait(g->ud);
	return err;
}

static int xd_logs_unregister_token(struct xd_session *s, int kind,
				    uint64_t token, int device)
{
	struct xd_logs_reg *g;
	int err;

	pthread_mutex_lock(&xd_logs_lock);
	g = xd_logs_take(s, token, kind);
	if (!g) {
		pthread_mutex_unlock(&xd_logs_lock);
		return cudaErrorInvalidValue;
	}
	err = xd_logs_unregister(g, device);
	if (err) {
		g->next = xd_logs_regs;
		xd_logs_regs = g;
	} else {
		free(g);
	}
	pthread_mutex_unlock(&xd_logs_lock);
	return err;
}

int xd_op_logs_unregister_callback(
		struct xd_session *s,
		const struct xcuda_logs_unregister_callback_args *a,
		struct xd_call *call)
{
	(void)call;
	return xd_logs_unregister_token(s, XD_REG_LOG, a->token, 0);
}

int xd_op_device_unregister_async_notification(
		struct xd_session *s,
		const struct xcuda_device_unregister_async_notification_args *a,
		struct xd_call *call)
{
	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	return xd_logs_unregister_token(s, XD_REG_ASYNC, a->token, a->device);
}

/* After the host functions' teardown: trampolines return at once. */
static void xd_logs_fini(struct xd_session *s)
{
	struct xd_logs_reg **p = &xd_logs_regs;

	pthread_mutex_lock(&xd_logs_lock);
	while (*p) {
		struct xd_logs_reg *g = *p;

		if (g->s != s) {
			p = &g->next;
			continue;
		}
		*p = g->next;
		if (xd_logs_unregister(g, g->device))
			xd_hostfn_ctx_drop_wait(g->ud);
		free(g);
	}
	pthread_mutex_unlock(&xd_logs_lock);
}

XD_SESSION_HOOKS(logs, 2, NULL, xd_logs_fini);
