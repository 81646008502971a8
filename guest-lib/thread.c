// SPDX-License-Identifier: MIT
/*
 * Per-thread state that CUDA keeps per host thread: the current device and
 * the launch configurations pushed by <<<>>> before a kernel stub runs.
 */
#include "guest.h"

#define XC_CFG_DEPTH 16

static __thread int xc_device;
static __thread struct xc_launch_cfg xc_cfg[XC_CFG_DEPTH];
static __thread unsigned int xc_cfg_top;

int xc_cur_device(void)
{
	return xc_device;
}

void xc_set_cur_device(int dev)
{
	xc_device = dev;
}

int xc_cfg_push(const struct xc_launch_cfg *cfg)
{
	if (xc_cfg_top >= XC_CFG_DEPTH)
		return -1;
	xc_cfg[xc_cfg_top++] = *cfg;
	return 0;
}

int xc_cfg_pop(struct xc_launch_cfg *cfg)
{
	if (!xc_cfg_top)
		return -1;
	*cfg = xc_cfg[--xc_cfg_top];
	return 0;
}

/*
 * Wire handles ride in the pointer value: 0 is the legacy default stream,
 * 1 and 2 are cudaStreamLegacy and cudaStreamPerThread, and the worker's
 * tables hand out the rest.  Anything that does not fit is not ours.
 */
int xc_stream_handle(cudaStream_t s, int per_thread, uint32_t *h)
{
	uintptr_t v = (uintptr_t)s;

	if (v > UINT32_MAX || (v > XCUDA_STREAM_PER_THREAD &&
			       v < XCUDA_HANDLE_FIRST))
		return -1;
	*h = (!v && per_thread) ? XCUDA_STREAM_PER_THREAD : (uint32_t)v;
	return 0;
}

int xc_event_handle(cudaEvent_t e, uint32_t *h)
{
	uintptr_t v = (uintptr_t)e;

	if (v < XCUDA_HANDLE_FIRST || v > UINT32_MAX)
		return -1;
	*h = (uint32_t)v;
	return 0;
}
