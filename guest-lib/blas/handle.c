// SPDX-License-Identifier: MIT
/*
 * cuBLAS handles in the guest: creation and destruction, and what the
 * guest keeps of each: its pointer mode (where scalars are), its stream
 * (cublasGetStream answers it without a round trip), and its workspace
 * and math mode, which frameworks set again before every call and which
 * go to the worker only when they change.
 */
#include <stdint.h>
#include <string.h>

#include "blas.h"

static uintptr_t xc_blas_key(const void *h)
{
	return (uintptr_t)h;
}

int xc_blas_host_scalars(cublasHandle_t h)
{
	struct xc_blas_obj o;

	xc_blas_obj_get(xc_blas_key(h), XC_BLAS_HANDLE, &o);
	return o.mode == CUBLAS_POINTER_MODE_HOST;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
	struct xcuda_blas_create_res r;
	struct xcuda_blas_destroy_args d;
	struct xc_blas_obj o;
	int err;

	if (!handle)
		return CUBLAS_STATUS_INVALID_VALUE;
	memset(&r, 0, sizeof(r));
	err = xc_call_blas_create(&r);
	if (err)
		return xc_blas_result(err);
	if (r.handle < XCUDA_HANDLE_FIRST)
		return CUBLAS_STATUS_INTERNAL_ERROR;
	/* A handle number may be reused: its record starts anew. */
	xc_blas_obj_drop(r.handle, XC_BLAS_HANDLE);
	xc_blas_obj_get(r.handle, XC_BLAS_HANDLE, &o);
	if (xc_blas_obj_put(&o)) {
		d.handle = r.handle;
		xc_call_blas_destroy(&d);
		return CUBLAS_STATUS_ALLOC_FAILED;
	}
	*handle = (cublasHandle_t)(uintptr_t)r.handle;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
	struct xcuda_blas_destroy_args a;
	int err;

	if (!handle)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (xc_handle_in(handle, &a.handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	err = xc_call_blas_destroy(&a);
	if (!err)
		xc_blas_obj_drop(xc_blas_key(handle), XC_BLAS_HANDLE);
	return xc_blas_result(err);
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle,
				       cublasPointerMode_t mode)
{
	struct xcuda_blas_set_pointer_mode_args a;
	struct xc_blas_obj o;
	int err;

	if (!handle || xc_handle_in(handle, &a.handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	a.mode = mode;
	err = xc_call_blas_set_pointer_mode(&a);
	if (err)
		return xc_blas_result(err);
	xc_blas_obj_get(xc_blas_key(handle), XC_BLAS_HANDLE, &o);
	o.mode = mode;
	return xc_blas_obj_put(&o) ? CUBLAS_STATUS_ALLOC_FAILED :
				     CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle,
				  cudaStream_t streamId)
{
	struct xcuda_blas_set_stream_args a;
	unsigned int epoch = xc_stream_epoch();
	struct xc_blas_obj o;
	int err;

	if (!handle || xc_handle_in(handle, &a.handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (xc_stream_handle(streamId, 0, &a.streamId))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (xc_blas_obj_get(xc_blas_key(handle), XC_BLAS_HANDLE, &o))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	/*
	 * Frameworks set the stream before every call.  The same handle
	 * with no stream destroyed since is the same stream: nothing to
	 * send.
	 */
	if (o.stream_known && o.stream == streamId &&
	    o.stream_epoch == epoch)
		return CUBLAS_STATUS_SUCCESS;
	err = xc_call_blas_set_stream(&a);
	if (err)
		return xc_blas_result(err);
	xc_blas_obj_get(xc_blas_key(handle), XC_BLAS_HANDLE, &o);
	o.stream_known = 1;
	o.stream_epoch = epoch;
	o.stream = streamId;
	return xc_blas_obj_put(&o) ? CUBLAS_STATUS_ALLOC_FAILED :
				     CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle,
				  cudaStream_t *streamId)
{
	struct xc_blas_obj o;

	if (!handle)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!streamId)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (xc_blas_obj_get(xc_blas_key(handle), XC_BLAS_HANDLE, &o))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	*streamId = o.stream;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
				     size_t workspaceSizeInBytes)
{
	struct xcuda_blas_set_workspace_args a;
	struct xc_blas_obj o;
	int err;

	memset(&a, 0, sizeof(a));
	if (!handle || xc_handle_in(handle, &a.handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (xc_blas_obj_get(xc_blas_key(handle), XC_BLAS_HANDLE, &o))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	/* The worker's handle has it already: nothing changes. */
	if (o.ws_known && o.ws == workspace &&
	    o.ws_size == workspaceSizeInBytes)
		return CUBLAS_STATUS_SUCCESS;
	a.workspace = (uintptr_t)workspace;
	a.workspaceSizeInBytes = workspaceSizeInBytes;
	err = xc_call_blas_set_workspace(&a);
	if (err)
		return xc_blas_result(err);
	o.ws_known = 1;
	o.ws = workspace;
	o.ws_size = workspaceSizeInBytes;
	xc_blas_obj_put(&o);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
	struct xcuda_blas_set_math_mode_args a;
	struct xc_blas_obj o;
	int err;

	if (!handle || xc_handle_in(handle, &a.handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (xc_blas_obj_get(xc_blas_key(handle), XC_BLAS_HANDLE, &o))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (o.math_known && o.math == mode)
		return CUBLAS_STATUS_SUCCESS;
	a.mode = mode;
	err = xc_call_blas_set_math_mode(&a);
	if (err)
		return xc_blas_result(err);
	o.math_known = 1;
	o.math = mode;
	xc_blas_obj_put(&o);
	return CUBLAS_STATUS_SUCCESS;
}
