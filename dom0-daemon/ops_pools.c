// SPDX-License-Identifier: MIT
/*
 * Memory pools: what the generated handlers of spec/cudart-pools.calls
 * need beyond the description.
 */
#include <cuda_runtime_api.h>

#include "ops.h"

/*
 * A pool whose allocations could be exported hands out file descriptors
 * or names that mean nothing across a VM boundary; the Windows security
 * attribute is a pointer into the guest.  Neither reaches CUDA.
 */
int xd_check_pool_props(struct xd_session *s,
			const struct xcuda_mem_pool_create_args *a)
{
	(void)s;
	if (a->poolProps.handleTypes != cudaMemHandleTypeNone ||
	    a->poolProps.win32SecurityAttributes)
		return cudaErrorInvalidValue;
	return 0;
}
