/* SPDX-License-Identifier: MIT */
/*
 * xcuda's libcuda.so.1: the CUDA driver API of a guest.  It rides on the
 * session of xcuda's libcudart.so.13, which it links, so that a process
 * has one session and one worker, and objects pass between the two APIs
 * as natively: a CUstream is a cudaStream_t, device memory from either
 * allocator is known to both.
 *
 * Contexts: the worker holds one context per device, the primary one,
 * which the runtime uses too.  A context the program creates with
 * cuCtxCreate is that primary context under another name (its memory
 * and modules are the primary context's); docs/driver.md says what that
 * changes.
 */
#ifndef XCUDA_DRIVER_H
#define XCUDA_DRIVER_H

#include <cuda.h>

#include "guest.h"
#include "xcuda/jit.h"

/*
 * Every driver call starts here: CUDA_ERROR_NOT_INITIALIZED before
 * cuInit, and with @need_ctx CUDA_ERROR_INVALID_CONTEXT when the calling
 * thread has no current context; else 0, with the runtime's current
 * device that of the context (the request header names it).
 */
int xc_drv_enter(int need_ctx);
/*
 * What a round trip's status is as a CUresult: the worker answers the
 * driver's own codes; the guest library's few runtime codes (a session
 * that cannot be reached, a full arena) are mapped.
 */
CUresult xc_drv_result(int err);
/*
 * A runtime call made for the driver API: its cudaError_t as a CUresult,
 * with the runtime's last error left as it was (driver calls never set
 * it).  Use: XC_DRV_RT(cudaFoo(...)).
 */
cudaError_t xc_drv_rt_begin(void);
CUresult xc_drv_rt_end(cudaError_t saved, cudaError_t err);
#define XC_DRV_RT(call) \
	({ cudaError_t saved_ = xc_drv_rt_begin(); \
	   xc_drv_rt_end(saved_, (call)); })

/* The device of a live context @c, or -1. */
int xc_ctx_device(CUcontext c);
/* Device @dev's primary context, NULL for no device of the session's. */
CUcontext xc_ctx_primary(int dev);
/* A driver call made by the runtime's @call, in a context. */
#define XC_DRV_CALL(call)						\
	do {								\
		int err_ = xc_drv_enter(1);				\
									\
		if (err_)						\
			return (CUresult)err_;				\
		return XC_DRV_RT(call);					\
	} while (0)
/* The devices the worker's driver reported at cuInit. */
int xc_drv_device_count(void);
/*
 * JIT options (jit.c, include/xcuda/jit.h): the records that travel, and
 * the program's log buffers with their size options.
 */
struct xc_jit {
	unsigned int n;
	struct xcuda_jit_opt opt[XCUDA_JIT_MAX_OPTS];
	char *log[2];		/* information, error: the program's, or NULL */
	uint32_t cap[2];	/* the worker's logs' sizes */
	void **fill[2];		/* the program's size options, or NULL */
	int want;		/* the program asked for a log */
};

/* @j from the program's options: CUDA_ERROR_NOT_SUPPORTED for a pointer. */
CUresult xc_jit_opts(struct xc_jit *j, unsigned int n, CUjit_option *options,
		     void **values);
/* The size of a logs extent for @j: 0 when the program asked for none. */
uint64_t xc_jit_logs_size(const struct xc_jit *j);
/* The worker's logs extent @buf into the program's buffers. */
void xc_jit_logs_put(const struct xc_jit *j, const uint8_t *buf);

/*
 * The guest's file @path, read whole (at most XCUDA_MAX_MODULE bytes)
 * into a buffer with a NUL after it: @*data (free() it) and @*len.
 */
CUresult xc_read_file(const char *path, uint8_t **data, size_t *len);

#endif /* XCUDA_DRIVER_H */
