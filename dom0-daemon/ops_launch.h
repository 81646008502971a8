/* SPDX-License-Identifier: MIT */
/*
 * Launch attributes in the worker (ops_launch.c): the wire records of a
 * request, copied once, and the cudaLaunchAttribute array made of them.
 */
#ifndef XCUDAD_OPS_LAUNCH_H
#define XCUDAD_OPS_LAUNCH_H

#include <cuda_runtime_api.h>

#include "xcuda/launch.h"
#include "worker.h"

struct xd_attrs {
	struct xcuda_launch_attr wire[XCUDA_LAUNCH_MAX_ATTRS];
	cudaLaunchAttribute cuda[XCUDA_LAUNCH_MAX_ATTRS];
	uint32_t n;
};

/*
 * Copies @n records from @src (guest memory, read once) and translates
 * them into @at->cuda: events must be the session's (else
 * cudaErrorInvalidResourceHandle), more than XCUDA_LAUNCH_MAX_ATTRS is
 * cudaErrorInvalidValue; other values, unknown ids included, go as they
 * came.  0 or a cudaError_t.
 */
int xd_launch_attrs(struct xd_session *s, const uint8_t *src, uint32_t n,
		    struct xd_attrs *at);
/*
 * Writes the node handles CUDA answered for device-updatable kernel
 * nodes back into the request's records, after a launch succeeded.
 */
void xd_attrs_answer(struct xd_call *call, const struct xd_attrs *at);

#endif /* XCUDAD_OPS_LAUNCH_H */
