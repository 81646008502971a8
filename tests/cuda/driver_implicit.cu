/* SPDX-License-Identifier: MIT */
/*
 * The driver after the runtime, without cuInit, as frameworks call it:
 * the runtime initialised the driver and made its device's primary
 * context current, so the driver's calls work and see that context.
 * Before any runtime call they answer CUDA_ERROR_NOT_INITIALIZED.
 */
#include "common/xct_drv.h"
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
	CUcontext ctx = NULL, primary = NULL;
	CUdeviceptr p = 0;
	unsigned int flags;
	int active = 0, n = 0;
	CUresult r;

	r = cuDeviceGetCount(&n);
	printf("before the runtime: %s\n", xct_cu_name(r));
	if (cudaFree(0) != cudaSuccess) {
		printf("cudaFree(0) failed\n");
		return 1;
	}
	r = cuCtxGetCurrent(&ctx);
	printf("cuCtxGetCurrent: %s, a context: %s\n", xct_cu_name(r),
	       ctx ? "yes" : "no");
	r = cuDevicePrimaryCtxGetState(0, &flags, &active);
	printf("primary context state: %s, active: %s\n", xct_cu_name(r),
	       active ? "yes" : "no");
	r = cuDevicePrimaryCtxRetain(&primary, 0);
	printf("retain: %s, the current one: %s\n", xct_cu_name(r),
	       primary == ctx ? "yes" : "no");
	r = cuMemAlloc(&p, 1024);
	printf("cuMemAlloc: %s\n", xct_cu_name(r));
	if (!r)
		printf("cudaFree of it: %s\n",
		       cudaGetErrorName(cudaFree((void *)(uintptr_t)p)));
	cuDevicePrimaryCtxRelease(0);
	return 0;
}
