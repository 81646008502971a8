// SPDX-License-Identifier: MIT
/*
 * The status of a round trip, as cuFFT's: the worker answers the real
 * library's (0 to 16), the session layer CUDA's.
 */
#include "cufft_guest.h"

int xc_cufft_enter(int need_cuda)
{
	(void)need_cuda;
	return 0;
}

cufftResult xc_cufft_result(int err)
{
	if (err >= CUFFT_SUCCESS && err <= CUFFT_NOT_SUPPORTED)
		return (cufftResult)err;
	switch (err) {
	case cudaErrorInsufficientDriver:
	case cudaErrorNoDevice:
		/* No GPU behind the session: cuFFT cannot set a plan up. */
		return CUFFT_SETUP_FAILED;
	default:
		/* A worker gone or a session broken mid-call. */
		return CUFFT_INTERNAL_ERROR;
	}
}
