/* SPDX-License-Identifier: MIT */
/*
 * Host functions of the guest, run from the worker's stream (hostfn.c):
 * CUDA runs our trampoline in stream order on one of its own threads; the
 * trampoline publishes a record in the guest's slot area (xcuda/hostfn.h)
 * and waits until the guest has run the program's function, so the
 * stream stays blocked as natively.
 *
 * A context names one guest function (its token) for CUDA: what CUDA gets
 * as userData is an id, never a pointer, so a trampoline that CUDA runs
 * after its session ended finds nothing and returns.  Whatever enqueues a
 * guest host function (a stream, a graph node) uses this interface.
 */
#ifndef XCUDAD_HOSTFN_H
#define XCUDAD_HOSTFN_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "worker.h"

/* Contexts a session may hold at once (pending or in graphs). */
#define XD_HOSTFN_MAX_CTX	65536
/* How often a waiting trampoline looks whether the guest is still there. */
#define XD_HOSTFN_LIVENESS_MS	50

/* A payload buffer's bounds (log messages, async notifications). */
#define XD_HOSTFN_PAYLOAD_MIN	64
#define XD_HOSTFN_PAYLOAD_MAX	65536

/* Context flags. */
#define XD_HOSTFN_ONESHOT	0	/* gone once it ran */
#define XD_HOSTFN_GRAPH		(1u << 0)	/* a graph node's */

/*
 * HOSTFN_SETUP: the slot area is [off, off + len) of the session's arena.
 * Returns 0 or a cudaError_t.
 */
int xd_hostfn_setup(struct xd_session *s, uint64_t off, uint64_t len);

struct timespec;
struct xcuda_hostfn_area;
/* futex(2) on a word of a slot area (not private: it may be shared). */
long xd_futex(uint32_t *word, int op, uint32_t val,
	      const struct timespec *ts);
/*
 * A record in slot @i of @area, in the order the area's rules ask: its
 * fields, then seq (a store-release), then the wake count, whose shared
 * futex's waiters are woken when @futex.  The worker's trampolines and
 * the relay (a record the server sent) both publish so.
 */
void xd_hostfn_post(struct xcuda_hostfn_area *area, unsigned int i,
		    uint64_t token, int32_t status, uint32_t flags,
		    uint64_t arg, uint32_t seq, int futex);

/*
 * A context for the guest's function @token: pass *@user_data to CUDA
 * with xd_hostfn_trampoline (cudaLaunchHostFunc, host nodes) or
 * xd_hostfn_callback (cudaStreamAddCallback).  A one-shot context is gone
 * once it ran; a graph's lives until xd_hostfn_ctx_drop() or the end of
 * the session.  Returns 0, cudaErrorInvalidValue (no setup, token 0) or
 * cudaErrorMemoryAllocation.
 */
int xd_hostfn_ctx_new(struct xd_session *s, uint64_t token,
		      unsigned int flags, void **user_data);
/* The enqueue turned out to be captured: the context fires again. */
void xd_hostfn_ctx_keep(void *user_data);
/* Forgets a context (a failed enqueue, a destroyed graph). */
void xd_hostfn_ctx_drop(void *user_data);
/*
 * Gives context @user_data of session @s a payload buffer, [off, off +
 * len) of the arena (xd_hostfn_fire_data() writes there).  0, or
 * cudaErrorInvalidValue for a bad extent or context.
 */
int xd_hostfn_ctx_payload(struct xd_session *s, void *user_data,
			  uint64_t off, uint32_t len);
/*
 * Forgets a context with a payload and waits until no trampoline writes
 * its buffer any more (the guest may then reuse it).
 */
void xd_hostfn_ctx_drop_wait(void *user_data);
/*
 * Fires the context as xd_hostfn_trampoline(), with @status and the first
 * bytes of @data (at most the buffer's) in the context's payload buffer.
 * Payload records are published one at a time.
 */
void xd_hostfn_fire_data(void *user_data, int32_t status, const void *data,
			 size_t len);
/*
 * The guest's token of @user_data, a live context of session @s, or 0
 * (a graph's host node answers its function by the guest's token).
 */
uint64_t xd_hostfn_ctx_token(struct xd_session *s, void *user_data);
/* Contexts of the session, for tests. */
unsigned int xd_hostfn_ctx_count(struct xd_session *s);

void CUDART_CB xd_hostfn_trampoline(void *user_data);
void CUDART_CB xd_hostfn_callback(cudaStream_t stream, cudaError_t status,
				  void *user_data);

/*
 * The end of a session: trampolines waiting return at once (their streams
 * proceed), later ones return without publishing, and this waits until
 * none runs.  Called by the session's fini hook; idempotent.
 */
void xd_hostfn_abort(struct xd_session *s);

#endif /* XCUDAD_HOSTFN_H */
