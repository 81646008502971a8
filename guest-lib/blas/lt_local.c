// SPDX-License-Identifier: MIT
/* cuBLASLt calls answered in the guest: status texts and versions. */
#include <cuda_runtime_api.h>

#include "blas.h"

const char *cublasLtGetStatusName(cublasStatus_t status)
{
	return xc_blas_text(status, 1);
}

const char *cublasLtGetStatusString(cublasStatus_t status)
{
	return xc_blas_text(status, 0);
}

size_t cublasLtGetCudartVersion(void)
{
	return CUDART_VERSION;
}

/* The guest's library implements its headers' version. */
size_t cublasLtGetVersion(void)
{
	return CUBLAS_VERSION;
}

cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int *value)
{
	if (!value)
		return CUBLAS_STATUS_INVALID_VALUE;
	switch (type) {
	case MAJOR_VERSION:
		*value = CUBLAS_VER_MAJOR;
		return CUBLAS_STATUS_SUCCESS;
	case MINOR_VERSION:
		*value = CUBLAS_VER_MINOR;
		return CUBLAS_STATUS_SUCCESS;
	case PATCH_LEVEL:
		*value = CUBLAS_VER_PATCH;
		return CUBLAS_STATUS_SUCCESS;
	default:
		return CUBLAS_STATUS_INVALID_VALUE;
	}
}
