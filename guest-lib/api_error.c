// SPDX-License-Identifier: MIT
/* Errors and versions: answered locally, with CUDA's exact semantics. */
#include "guest.h"

cudaError_t cudaGetLastError(void)
{
	xc_poll_latched();
	return xc_last_error(1);
}

cudaError_t cudaPeekAtLastError(void)
{
	xc_poll_latched();
	return xc_last_error(0);
}

const char *cudaGetErrorName(cudaError_t error)
{
	return xc_error_name(error);
}

const char *cudaGetErrorString(cudaError_t error)
{
	return xc_error_string(error);
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	if (!runtimeVersion)
		return xc_ret(cudaErrorInvalidValue);
	*runtimeVersion = CUDART_VERSION;
	return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	struct xc_session *s;
	cudaError_t err;

	if (!driverVersion)
		return xc_ret(cudaErrorInvalidValue);
	/* As with no driver at all: version 0, and no error. */
	s = xc_session_get(&err);
	*driverVersion = s ? s->info.driver_version : 0;
	return cudaSuccess;
}
