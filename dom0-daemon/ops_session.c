// SPDX-License-Identifier: MIT
/*
 * Session and diagnostic commands.
 *
 * OPEN   args {version, features, arena_size, arena_addr}.  A version
 *        below XCUDA_PROTO_MIN_VERSION is refused (those layouts are
 *        gone); the answer speaks min(XCUDA_PROTO_VERSION, asked) and the
 *        features asked & XCUDA_FEATURES_ALL, less SAME_VA unless the
 *        transport could map the arena at arena_addr here (first OPEN
 *        only, where nothing else is mapped).  arena_size must equal the
 *        arena the transport set up.  device_count and init_status come from
 *        cudaGetDeviceCount (count -1 when it fails), driver_version and
 *        runtime_version from cudaDriverGetVersion/cudaRuntimeGetVersion.
 *        The status is 0 even when CUDA cannot start: init_status says so
 *        and the guest reports it from every later call.  Answering OPEN
 *        again is allowed and re-reports the same facts.
 * CLOSE  answered, then the session ends and the worker exits.
 * ECHO   no CUDA: FNV-1a 64 (xcuda/hash.h, seeded with args.seed) of the
 *        whole extent, then, if args.fill, the extent is set to the low
 *        byte of args.pattern.  Result {checksum, bytes}.  A ping and a
 *        bulk integrity test.
 */
#include <cuda_runtime_api.h>

#include "xcuda/hash.h"
#include "log.h"
#include "ops.h"

/*
 * Whether one of the @n devices reaches pageable host memory (HMM, ATS),
 * and this worker may not serve it: said once, with the way out.
 */
static int xd_pageable_reach(int n)
{
	int d, v;

	if (xd_worker_allow_pageable)
		return 0;
	for (d = 0; d < n; d++) {
		v = 0;
		if (cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccess,
					   d) == cudaSuccess && v) {
			xd_log(XD_LOG_ERROR, "device %d reaches pageable host "
			       "memory (HMM or ATS): a guest's kernel could "
			       "read and write this worker's memory, so it "
			       "serves no CUDA (xcudad "
			       "--allow-pageable-memory-access to serve it "
			       "anyway)", d);
			return 1;
		}
	}
	(void)cudaGetLastError();
	return 0;
}

int xd_op_open(struct xd_session *s, const struct xcuda_open_args *a,
	       struct xcuda_open_res *r, struct xd_call *call)
{
	int n = 0, v = 0;
	cudaError_t err;

	(void)call;
	if (a->version < XCUDA_PROTO_MIN_VERSION) {
		xd_log(XD_LOG_WARN, "guest speaks protocol version %u, this "
		       "worker %u to %u: refused", a->version,
		       XCUDA_PROTO_MIN_VERSION, XCUDA_PROTO_VERSION);
		return cudaErrorInvalidValue;
	}
	if (a->arena_size != s->chan->arena_size)
		return cudaErrorInvalidValue;
	r->version = a->version < XCUDA_PROTO_VERSION ? a->version :
						      XCUDA_PROTO_VERSION;
	r->features = a->features & XCUDA_FEATURES_ALL;
	/*
	 * Once, before anything is pinned: pinned extents are registered
	 * with CUDA at their address in this process.
	 */
	if (r->features & XCUDA_FEAT_SAME_VA) {
		if (!s->opened && !s->npins && s->chan->ops &&
		    s->chan->ops->arena_at &&
		    !s->chan->ops->arena_at(s->chan, a->arena_addr))
			s->same_va = 1;
		if (!s->same_va)
			r->features &= ~XCUDA_FEAT_SAME_VA;
	}
	err = cudaGetDeviceCount(&n);
	if (!err && !s->refused && xd_pageable_reach(n))
		s->refused = cudaErrorNotPermitted;
	if (s->refused)
		err = s->refused;
	r->init_status = err;
	r->device_count = err ? -1 : n;
	if (cudaDriverGetVersion(&v) == cudaSuccess)
		r->driver_version = v;
	v = 0;
	if (cudaRuntimeGetVersion(&v) == cudaSuccess)
		r->runtime_version = v;
	/* The failed init is reported, not left as this thread's error. */
	cudaGetLastError();
	s->opened = 1;
	s->features = r->features;
	return 0;
}

int xd_op_close(struct xd_session *s, struct xd_call *call)
{
	(void)s;
	call->end = 1;
	return 0;
}

int xd_op_echo(struct xd_session *s, const struct xcuda_echo_args *a,
	       struct xcuda_echo_res *r, struct xd_call *call)
{

	(void)s;
	r->checksum = xcuda_fnv1a64(a->seed, call->data, call->data_len);
	r->bytes = call->data_len;
	if (a->fill)
		memset(call->data, (int)(a->pattern & 0xff), call->data_len);
	return 0;
}
