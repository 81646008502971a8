/* SPDX-License-Identifier: MIT */
/*
 * Host functions the program gives CUDA run here, in the program's
 * process (hostfn.c; docs/protocol.md, "Host functions").  The program's
 * function and data never leave the guest: they are registered in a
 * table of ours under a token, the worker is told only the token, and a
 * thread of the library runs the function when the worker's record names
 * a token the table holds.  Whatever enqueues a host function (streams,
 * graph host nodes, user object destructors) builds on this.
 */
#ifndef XCUDA_GUEST_HOSTFN_H
#define XCUDA_GUEST_HOSTFN_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "guest.h"
#include "xcuda/hostfn.h"

enum xc_hostfn_kind {
	XC_HOSTFN_HOST = 1,	/* fn.host(data) */
	XC_HOSTFN_STREAM = 2,	/* fn.stream(stream, status, data) */
	XC_HOSTFN_LOG = 3,	/* fn.log(data, level, message, length) */
	XC_HOSTFN_ASYNC = 4,	/* fn.async(&info, data, handle) */
};

struct xc_hostfn {
	int kind;		/* XC_HOSTFN_* */
	union {
		cudaHostFn_t host;
		cudaStreamCallback_t stream;
		cudaLogsCallback_t log;
		cudaAsyncCallback async;
	} fn;
	void *data;
	cudaStream_t stream;	/* as the program named it (STREAM) */
	/*
	 * LOG, ASYNC: the registration's payload buffer in the arena, which
	 * the worker writes before each record (its length in the record).
	 */
	void *payload;
	uint64_t payload_off;
	uint32_t payload_len;
	int device;		/* ASYNC: as the program registered it */
};

/* Registration flags. */
#define XC_HOSTFN_KEEP	(1u << 0)	/* fires any number of times */

/*
 * Sets up the slot area with the worker (HOSTFN_SETUP) and starts the
 * thread that runs host functions, once per session.  Not with the
 * session lock held.
 */
cudaError_t xc_hostfn_start(struct xc_session *s);

/*
 * Registers @f under a new token (never 0).  Register before the worker
 * can fire it.  Without XC_HOSTFN_KEEP the entry is gone once it ran.
 * cudaErrorMemoryAllocation when there is no memory.
 */
cudaError_t xc_hostfn_register(const struct xc_hostfn *f, unsigned int flags,
			       uint64_t *token);
/* The worker put it in a graph: it fires at every launch now. */
void xc_hostfn_keep(uint64_t token);
/* The enqueue failed, or its graph is gone. */
void xc_hostfn_forget(uint64_t token);
/* A copy of @token's entry, left in the table: 0, or -1 if unknown. */
int xc_hostfn_get(uint64_t token, struct xc_hostfn *f);
/* True on the thread that runs host functions (CUDA calls are refused). */
int xc_hostfn_on_runner(void);

/*
 * One look at @area: runs the function of each record the worker
 * published whose token is registered, and completes every record
 * (waking the worker with a futex when @futex).  Returns how many
 * records there were.  The runner thread's step, exposed for tests.
 */
int xc_hostfn_scan(struct xcuda_hostfn_area *area, int futex);
/*
 * Starts the runner thread on @area, as xc_hostfn_start() does after
 * HOSTFN_SETUP; once per process (tests drive it with an area of their
 * own).  @futex: the worker can wake us (XC_TRANSPORT_SHARED_FUTEX).
 */
cudaError_t xc_hostfn_serve(struct xcuda_hostfn_area *area, int futex);
/* Entries registered (pending one-shot ones and kept ones), for tests. */
unsigned int xc_hostfn_count(void);

#endif /* XCUDA_GUEST_HOSTFN_H */
