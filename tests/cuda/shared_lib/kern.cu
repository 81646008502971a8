/* SPDX-License-Identifier: MIT */
/* A kernel in a shared library the program is linked against. */
#include "../common/xct.h"
#include "kern.h"

__device__ int lib_counter;

/* main.cu has a static kernel of the same name. */
static __global__ void fill(int *p, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = i * k + 1;
	if (i == 0)
		atomicAdd(&lib_counter, 1);
}

extern "C" int sl_lib_run(int *d, int n, int k)
{
	fill<<<(n + 127) / 128, 128>>>(d, n, k);
	return (int)cudaGetLastError();
}

extern "C" int sl_lib_counter(void)
{
	int v = -1;
	cudaError_t e = cudaMemcpyFromSymbol(&v, lib_counter, sizeof(v));
	return e == cudaSuccess ? v : -1000 - (int)e;
}
