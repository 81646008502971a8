// SPDX-License-Identifier: MIT
/*
 * The status of a round trip, as cuRAND's: the worker answers the real
 * library's, the session layer CUDA's.
 */
#include "curand_guest.h"

int xc_curand_enter(int need_cuda)
{
	(void)need_cuda;
	return 0;
}

curandStatus_t xc_curand_result(int err)
{
	switch (err) {
	case CURAND_STATUS_SUCCESS:
	case CURAND_STATUS_NOT_INITIALIZED:
	case CURAND_STATUS_ALLOCATION_FAILED:
	case CURAND_STATUS_TYPE_ERROR:
	case CURAND_STATUS_OUT_OF_RANGE:
	case CURAND_STATUS_LENGTH_NOT_MULTIPLE:
	case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED:
	case CURAND_STATUS_LAUNCH_FAILURE:
	case CURAND_STATUS_PREEXISTING_FAILURE:
	case CURAND_STATUS_INITIALIZATION_FAILED:
	case CURAND_STATUS_ARCH_MISMATCH:
	case CURAND_STATUS_INTERNAL_ERROR:
		return (curandStatus_t)err;
	case cudaErrorInsufficientDriver:
	case cudaErrorNoDevice:
		/*
		 * No GPU behind the session: cuRAND cannot set one up.  This
		 * is also CURAND_STATUS_VERSION_MISMATCH's number, which the
		 * worker's library, built with its own header, never answers.
		 */
		return CURAND_STATUS_INITIALIZATION_FAILED;
	default:
		/* A worker gone or a session broken mid-call. */
		return CURAND_STATUS_INTERNAL_ERROR;
	}
}
