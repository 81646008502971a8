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

int xd_op_set_device(struct xd_session *s,
		     const struct xcuda_set_device_args *a,
		     struct xd_call *call)
{
	cudaError_t err;

	(void)call;
	err = cudaSetDevice(a->device);
	if (!err)
		s->device = a->device;
	return err;
}

int xd_op_get_device_properties(struct xd_session *s,
				const struct xcuda_get_device_properties_args *a,
				struct xd_call *call)
{
	struct cudaDeviceProp p;
	cudaError_t err;

	(void)s;
	if (call->data_len < sizeof(p))
		return cudaErrorInvalidValue;
	memset(&p, 0, sizeof(p));
	err = cudaGetDeviceProperties(&p, a->device);
	if (!err)
		memcpy(call->data, &p, sizeof(p));
	return err;
}

int xd_op_device_reset(struct xd_session *s, struct xd_call *call)
{
	cudaError_t err;

	(void)call;
	err = cudaDeviceReset();
	if (!err) {
		xd_streams_forget_device(s, s->device);
		xd_objects_forget_device(s, s->device);
	}
	return err;
}


/*
 * CUDA deprecated the shared memory bank configuration (it has no effect
 * since Volta) but still exports the calls, and programs still make them.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
int xd_op_device_get_shared_mem_config(
		struct xd_session *s,
		struct xcuda_device_get_shared_mem_config_res *r,
		struct xd_call *call)
{
	enum cudaSharedMemConfig c = cudaSharedMemBankSizeDefault;
	cudaError_t err;

	(void)s;
	(void)call;
	err = cudaDeviceGetSharedMemConfig(&c);
	if (!err)
		r->pConfig = c;
	return err;
}

int xd_op_device_set_shared_mem_config(
		struct xd_session *s,
		const struct xcuda_device_set_shared_mem_config_args *a,
		struct xd_call *call)
{
	(void)s;
	(void)call;
	return cudaDeviceSetSharedMemConfig(
		(enum cudaSharedMemConfig)a->config);
}
#pragma GCC diagnostic pop
