/* SPDX-License-Identifier: MIT */
/* A kernel in a shared library the program loads with dlopen. */
#include <cuda_runtime.h>
#include "kern.h"

__device__ int plugin_value = 1234;

static __global__ void fill(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = plugin_value - i;
	if (i == 0)
		plugin_value += 1;
}

extern "C" int sl_plugin_run(int *d, int n, int *value_before)
{
	cudaError_t e = cudaMemcpyFromSymbol(value_before, plugin_value,
					     sizeof(int));
	if (e != cudaSuccess)
		return (int)e;
	fill<<<(n + 63) / 64, 64>>>(d, n);
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return (int)e;
	return (int)cudaDeviceSynchronize();
}
