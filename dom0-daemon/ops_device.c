// SPDX-License-Identifier: MIT
/*
 * Device commands, each one CUDA runtime call in the worker.  The worker
 * has already switched to the caller's device (hdr.device).
 *
 * GET_DEVICE_COUNT       cudaGetDeviceCount -> {value}
 * SET_DEVICE             cudaSetDevice(args.device); on success it is the
 *                        worker's current device
 * GET_DEVICE_PROPERTIES  cudaGetDeviceProperties(args.device): the CUDA 13
 *                        struct cudaDeviceProp is written at the start of
 *                        the extent, which must hold it (else
 *                        cudaErrorInvalidValue)
 * DEVICE_GET_ATTRIBUTE   cudaDeviceGetAttribute(args.attr, args.device)
 * DEVICE_SYNCHRONIZE     cudaDeviceSynchronize
 * DEVICE_RESET           cudaDeviceReset; the reset destroyed the streams
 *                        and events of this device, so their handles are
 *                        dropped; modules (cudaLibrary) and their kernels
 *                        survive, pinned extents stay recorded
 * SET_DEVICE_FLAGS       cudaSetDeviceFlags(args.value)
 * GET_DEVICE_FLAGS       cudaGetDeviceFlags -> {value}
 * DEVICE_GET_LIMIT       cudaDeviceGetLimit(args.limit) -> {value}
 * DEVICE_SET_LIMIT       cudaDeviceSetLimit(args.limit, args.value)
 * MEM_GET_INFO           cudaMemGetInfo -> {free, total}
 */
#include <cuda_runtime_api.h>

#include "ops.h"

static void xd_put_int(struct xd_call *call, int v)
{
	struct xcuda_int_res r = { .value = v };

	memcpy(call->res, &r, sizeof(r));
}

int xd_op_get_device_count(struct xd_session *s, struct xd_call *call)
{
	int n = 0;
	cudaError_t err;

	(void)s;
	err = cudaGetDeviceCount(&n);
	if (!err)
		xd_put_int(call, n);
	return err;
}

int xd_op_set_device(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_dev_args a;
	cudaError_t err;

	XD_ARGS(call, a);
	err = cudaSetDevice(a.device);
	if (!err)
		s->device = a.device;
	return err;
}

int xd_op_get_device_properties(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_dev_args a;
	struct cudaDeviceProp p;
	cudaError_t err;

	(void)s;
	XD_ARGS(call, a);
	if (call->data_len < sizeof(p))
		return cudaErrorInvalidValue;
	memset(&p, 0, sizeof(p));
	err = cudaGetDeviceProperties(&p, a.device);
	if (!err)
		memcpy(call->data, &p, sizeof(p));
	return err;
}

int xd_op_device_get_attribute(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_attr_args a;
	cudaError_t err;
	int v = 0;

	(void)s;
	XD_ARGS(call, a);
	err = cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)a.attr,
				     a.device);
	if (!err)
		xd_put_int(call, v);
	return err;
}

int xd_op_device_synchronize(struct xd_session *s, struct xd_call *call)
{
	(void)s;
	(void)call;
	return cudaDeviceSynchronize();
}

int xd_op_device_reset(struct xd_session *s, struct xd_call *call)
{
	cudaError_t err;

	(void)call;
	err = cudaDeviceReset();
	if (!err)
		xd_streams_forget_device(s, s->device);
	return err;
}

int xd_op_set_device_flags(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_u32_args a;

	(void)s;
	XD_ARGS(call, a);
	return cudaSetDeviceFlags(a.value);
}

int xd_op_get_device_flags(struct xd_session *s, struct xd_call *call)
{
	unsigned int flags = 0;
	cudaError_t err;

	(void)s;
	err = cudaGetDeviceFlags(&flags);
	if (!err)
		xd_put_int(call, (int)flags);
	return err;
}

int xd_op_device_get_limit(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_limit_args a;
	struct xcuda_u64_res r;
	size_t v = 0;
	cudaError_t err;

	(void)s;
	XD_ARGS(call, a);
	err = cudaDeviceGetLimit(&v, (enum cudaLimit)a.limit);
	if (!err) {
		r.value = v;
		memcpy(call->res, &r, sizeof(r));
	}
	return err;
}

int xd_op_device_set_limit(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_limit_args a;

	(void)s;
	XD_ARGS(call, a);
	return cudaDeviceSetLimit((enum cudaLimit)a.limit, (size_t)a.value);
}

int xd_op_mem_get_info(struct xd_session *s, struct xd_call *call)
{
	struct xcuda_meminfo_res r;
	size_t fr = 0, total = 0;
	cudaError_t err;

	(void)s;
	err = cudaMemGetInfo(&fr, &total);
	if (!err) {
		r.free = fr;
		r.total = total;
		memcpy(call->res, &r, sizeof(r));
	}
	return err;
}
