// SPDX-License-Identifier: MIT
/*
 * The driver's error log and the callbacks of log messages and device
 * async notifications.  The log is the worker's driver's (the guest has
 * none).  cudaLogsDumpToFile never names a path to the worker: we dump
 * into memory and write the file here.  Callbacks are host functions
 * (hostfn.c) kept for as long as they are registered, each with a
 * payload buffer of ours in the arena where the worker puts the message
 * or notification; the handle the program holds is our token.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostfn.h"

/* The dump's bound, as the worker's (CUDA keeps at most 25600 bytes). */
#define XC_LOGS_DUMP_MAX	65536u
/* A registration's payload buffer: a log message, a notification. */
#define XC_LOGS_MSG_BYTES	4096u
#define XC_ASYNC_BYTES		64u

#define XC_DUMP_ITER	(1u << 0)
#define XC_DUMP_BUF	(1u << 1)
#define XC_DUMP_SIZE	(1u << 2)

cudaError_t cudaLogsCurrent(cudaLogIterator *iterator_out, unsigned int flags)
{
	struct xcuda_logs_current_args a = { flags, 0 };
	struct xcuda_logs_current_res r = { 0, 0 };
	struct xc_session *s;
	cudaError_t err;

	err = xc_ready(&s);
	if (err)
		return xc_ret(err);
	if (!iterator_out)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_call_logs_current(&a, &r);
	if (!err)
		*iterator_out = r.iter;
	return xc_ret(err);
}

/*
 * One LOGS_DUMP: @buf of @*size bytes (either may be NULL, as the
 * program gave them); CUDA's answer.  *@wrote: bytes now in @buf, its
 * NUL not counted.
 */
static cudaError_t xc_logs_dump(cudaLogIterator *iterator, char *buf,
				size_t *size, unsigned int flags,
				uint64_t *wrote)
{
	struct xcuda_logs_dump_args a;
	struct xcuda_logs_dump_res r;
	struct xcuda_response rsp;
	struct xcuda_request req;
	struct xc_session *s;
	uint64_t off = UINT64_MAX, cap = 0, got, id;
	cudaError_t err;

	*wrote = 0;
	err = xc_ready(&s);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.flags = flags;
	if (iterator) {
		a.what |= XC_DUMP_ITER;
		a.iter = *iterator;
	}
	if (size) {
		a.what |= XC_DUMP_SIZE;
		a.size = *size;
	}
	if (buf) {
		a.what |= XC_DUMP_BUF;
		cap = size ? *size : 0;
		if (cap > XC_LOGS_DUMP_MAX)
			cap = XC_LOGS_DUMP_MAX;
	}
	xc_req_logs_dump(&req, &a);
	pthread_mutex_lock(&s->lock);
	if (buf) {
		off = xc_staging_get(s, cap ? cap : 1, cap ? cap : 1, &got);
		if (off == UINT64_MAX) {
			pthread_mutex_unlock(&s->lock);
			return cudaErrorMemoryAllocation;
		}
		req.hdr.data_off = (uint32_t)off;
		req.hdr.data_len = (uint32_t)(cap ? cap : 1);
	}
	err = xc_send_locked(s, &req, UINT64_MAX, &id);
	if (!err)
		err = xc_wait_locked(s, id, &rsp);
	if (!err)
		err = (cudaError_t)rsp.status;
	if (!err && rsp.len >= sizeof(r))
		memcpy(&r, rsp.out, sizeof(r));
	else if (!err)
		err = cudaErrorUnknown;
	if (!err) {
		err = (cudaError_t)r.status;
		if (!err && buf && cap) {
			/* No more than the buffer holds, with its NUL. */
			uint64_t n = r.size > cap - 1 ? cap - 1 : r.size;

			memcpy(buf, xc_arena_ptr(s, off), (size_t)n);
			buf[n] = '\0';
			*wrote = n;
		}
		/* CUDA's count, which may exceed the buffer: never copied. */
		if (size)
			*size = (size_t)r.size;
		if (iterator)
			*iterator = r.iter;
	}
	if (off != UINT64_MAX)
		xc_arena_release(s->staging, off);
	pthread_mutex_unlock(&s->lock);
	return err;
}

cudaError_t cudaLogsDumpToMemory(cudaLogIterator *iterator, char *buffer,
				 size_t *size, unsigned int flags)
{
	uint64_t wrote;

	return xc_ret(xc_logs_dump(iterator, buffer, size, flags, &wrote));
}

cudaError_t cudaLogsDumpToFile(cudaLogIterator *iterator,
			       const char *pathToFile, unsigned int flags)
{
	size_t size = XC_LOGS_DUMP_MAX;
	cudaLogIterator it = iterator ? *iterator : 0;
	cudaError_t err;
	uint64_t wrote;
	char *buf;
	int fd;

	/* CUDA takes any flags here, as cudaLogsDumpToMemory does. */
	if (!pathToFile)
		return xc_ret(cudaErrorInvalidValue);
	buf = malloc(XC_LOGS_DUMP_MAX);
	if (!buf)
		return xc_ret(cudaErrorMemoryAllocation);
	err = xc_logs_dump(iterator ? &it : NULL, buf, &size, flags, &wrote);
	if (err) {
		free(buf);
		return xc_ret(err);
	}
	fd = open(pathToFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(buf);
		return xc_ret(cudaErrorInvalidValue);
	}
	{
		const char *p = buf;
		size_t left = (size_t)wrote;

		while (left) {
			ssize_t n = write(fd, p, left);

			if (n <= 0) {
				err = cudaErrorUnknown;
				break;
			}
			p += n;
			left -= (size_t)n;
		}
	}
	if (close(fd) && !err)
		err = cudaErrorUnknown;
	free(buf);
	/* The iterator moves only when the logs reached the file. */
	if (!err && iterator)
		*iterator = it;
	return xc_ret(err);
}

/* ---- callbacks ---- */

/*
 * Registers @f (kind LOG or ASYNC) with a payload buffer of @len bytes
 * and asks the worker; the program's handle is the token.
 */
static cudaError_t xc_logs_register(struct xc_hostfn *f, uint32_t len,
				    uint64_t *token)
{
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err;
	uint64_t off;

	err = xc_ready(&s);
	if (err)
		return err;
	err = xc_hostfn_start(s);
	if (err)
		return err;
	pthread_mutex_lock(&s->lock);
	off = xc_arena_alloc(s->heap, len, 64);
	pthread_mutex_unlock(&s->lock);
	if (off == UINT64_MAX)
		return cudaErrorMemoryAllocation;
	f->payload = xc_arena_ptr(s, off);
	f->payload_off = off;
	f->payload_len = len;
	memset(f->payload, 0, len);
	err = xc_hostfn_register(f, XC_HOSTFN_KEEP, token);
	if (err)
		goto fail;
	if (f->kind == XC_HOSTFN_LOG) {
		struct xcuda_logs_register_callback_args a = {
			*token, off, len, 0
		};

		xc_req_logs_register_callback(&req, &a);
	} else {
		struct xcuda_device_register_async_notification_args a = {
			*token, off, len, f->device
		};

		xc_req_device_register_async_notification(&req, &a);
	}
	err = xc_call(s, &req, NULL, 0);
	if (!err)
		return cudaSuccess;
	xc_hostfn_forget(*token);
fail:
	pthread_mutex_lock(&s->lock);
	xc_arena_release(s->heap, off);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* After the worker's unregistration: the buffer is ours again. */
static void xc_logs_forget(uint64_t token, const struct xc_hostfn *f)
{
	struct xc_session *s;

	xc_hostfn_forget(token);
	if (xc_ready(&s))
		return;
	pthread_mutex_lock(&s->lock);
	xc_arena_release(s->heap, f->payload_off);
	pthread_mutex_unlock(&s->lock);
}

cudaError_t cudaLogsRegisterCallback(cudaLogsCallback_t callbackFunc,
				     void *userData,
				     cudaLogsCallbackHandle *callback_out)
{
	struct xc_hostfn f = { .kind = XC_HOSTFN_LOG, .fn.log = callbackFunc,
			       .data = userData };
	uint64_t token;
	cudaError_t err;

	/* The worker registers its own function: NULL is refused here. */
	if (!callbackFunc)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_logs_register(&f, XC_LOGS_MSG_BYTES, &token);
	if (!err && callback_out)
		*callback_out = (cudaLogsCallbackHandle)(uintptr_t)token;
	return xc_ret(err);
}

/*
 * Unregisters @token, a registration of @kind, with the worker (a
 * notification's with its @device), then forgets it.
 */
static cudaError_t xc_logs_unregister(uint64_t token, int kind, int device)
{
	struct xc_session *s;
	struct xc_hostfn f;
	cudaError_t err;

	err = xc_ready(&s);
	if (err)
		return err;
	if (kind == XC_HOSTFN_ASYNC && xc_hostfn_on_runner())
		return cudaErrorNotPermitted;
	if (xc_hostfn_get(token, &f) || f.kind != kind)
		return cudaErrorInvalidValue;
	if (kind == XC_HOSTFN_LOG) {
		struct xcuda_logs_unregister_callback_args a = { token };

		err = xc_call_logs_unregister_callback(&a);
	} else {
		struct xcuda_device_unregister_async_notification_args a = {
			token, device, 0
		};

		err = xc_call_device_unregister_async_notification(&a);
	}
	if (!err)
		xc_logs_forget(token, &f);
	return err;
}

cudaError_t cudaLogsUnregisterCallback(cudaLogsCallbackHandle callback)
{
	return xc_ret(xc_logs_unregister((uint64_t)(uintptr_t)callback,
					 XC_HOSTFN_LOG, 0));
}

cudaError_t cudaDeviceRegisterAsyncNotification(
		int device, cudaAsyncCallback callbackFunc, void *userData,
		cudaAsyncCallbackHandle_t *callback)
{
	struct xc_hostfn f = { .kind = XC_HOSTFN_ASYNC,
			       .fn.async = callbackFunc, .data = userData,
			       .device = device };
	uint64_t token;
	cudaError_t err;

	if (!callbackFunc || !callback)
		return xc_ret(cudaErrorInvalidValue);
	if (xc_hostfn_on_runner())
		return xc_ret(cudaErrorNotPermitted);
	err = xc_logs_register(&f, XC_ASYNC_BYTES, &token);
	if (!err)
		*callback = (cudaAsyncCallbackHandle_t)(uintptr_t)token;
	return xc_ret(err);
}

cudaError_t cudaDeviceUnregisterAsyncNotification(
		int device, cudaAsyncCallbackHandle_t callback)
{
	return xc_ret(xc_logs_unregister((uint64_t)(uintptr_t)callback,
					 XC_HOSTFN_ASYNC, device));
}
