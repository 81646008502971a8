// SPDX-License-Identifier: MIT
/*
 * What libcublas.so.13 and libcublasLt.so.13 share (each links its own
 * copy): the status of a round trip, scalar sizes, status texts.
 */
#include <string.h>

#include "blas.h"

int xc_blas_enter(int need_cuda)
{
	(void)need_cuda;
	return 0;
}

cublasStatus_t xc_blas_result(int err)
{
	switch (err) {
	case CUBLAS_STATUS_SUCCESS:
	case CUBLAS_STATUS_NOT_INITIALIZED:
	case CUBLAS_STATUS_ALLOC_FAILED:
	case CUBLAS_STATUS_INVALID_VALUE:
	case CUBLAS_STATUS_ARCH_MISMATCH:
	case CUBLAS_STATUS_MAPPING_ERROR:
	case CUBLAS_STATUS_EXECUTION_FAILED:
	case CUBLAS_STATUS_INTERNAL_ERROR:
	case CUBLAS_STATUS_NOT_SUPPORTED:
	case CUBLAS_STATUS_LICENSE_ERROR:
		return (cublasStatus_t)err;
	case cudaErrorInsufficientDriver:
	case cudaErrorNoDevice:
		/* No GPU behind the session: cuBLAS cannot initialise. */
		return CUBLAS_STATUS_NOT_INITIALIZED;
	default:
		/* A worker gone or a session broken mid-call. */
		return CUBLAS_STATUS_INTERNAL_ERROR;
	}
}

size_t xc_blas_type_size(int t)
{
	switch (t) {
	case CUDA_R_8I: case CUDA_R_8U:
		return 1;
	case CUDA_R_16F: case CUDA_R_16BF: case CUDA_C_8I: case CUDA_C_8U:
		return 2;
	case CUDA_R_32F: case CUDA_R_32I: case CUDA_R_32U:
	case CUDA_C_16F: case CUDA_C_16BF:
		return 4;
	case CUDA_R_64F: case CUDA_C_32F: case CUDA_C_32I: case CUDA_C_32U:
		return 8;
	case CUDA_C_64F:
		return 16;
	default:
		return 0;
	}
}

static int xc_blas_complex(int t)
{
	switch (t) {
	case CUDA_C_8I: case CUDA_C_8U: case CUDA_C_16F: case CUDA_C_16BF:
	case CUDA_C_32F: case CUDA_C_32I: case CUDA_C_32U: case CUDA_C_64F:
		return 1;
	default:
		return 0;
	}
}

size_t xc_blas_scalar_size(int type, int ctype)
{
	size_t real;

	/* A compute type gives the real type, the matrix its complexity. */
	switch (type) {
	case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC:
		real = 2;
		break;
	case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC:
	case CUBLAS_COMPUTE_32F_FAST_16F: case CUBLAS_COMPUTE_32F_FAST_16BF:
	case CUBLAS_COMPUTE_32F_FAST_TF32:
	case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
	case CUBLAS_COMPUTE_32I: case CUBLAS_COMPUTE_32I_PEDANTIC:
		real = 4;
		break;
	case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC:
	case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
		real = 8;
		break;
	default:
		/* A data type: its own size. */
		return xc_blas_type_size(type);
	}
	return ctype >= 0 && xc_blas_complex(ctype) ? 2 * real : real;
}

static const struct {
	cublasStatus_t status;
	const char *name;
	const char *text;
} xc_blas_texts[] = {
	{ CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success" },
	{ CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED",
	  "the library was not initialized" },
	{ CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED",
	  "the resource allocation failed" },
	{ CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
	  "an unsupported value or parameter was passed to "
	  "the function" },
	{ CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
	  "the function requires an architectural feature "
	  "absent from the device" },
	{ CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR",
	  "an access to GPU memory space failed" },
	{ CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED",
	  "the function failed to launch on the GPU" },
	{ CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR",
	  "an internal operation failed" },
	{ CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
	  "the requested functionality is not supported" },
	{ CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR",
	  "the license check failed" },
};

const char *xc_blas_text(cublasStatus_t status, int name)
{
	size_t i;

	for (i = 0; i < sizeof(xc_blas_texts) / sizeof(xc_blas_texts[0]); i++)
		if (xc_blas_texts[i].status == status)
			return name ? xc_blas_texts[i].name :
				      xc_blas_texts[i].text;
	return "unrecognized status";
}

