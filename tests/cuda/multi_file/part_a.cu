/* SPDX-License-Identifier: MIT */
#include "../common/xct.h"
#include "parts.h"

/* part_b.cu has a kernel and a constant of the same names. */
static __constant__ int k_tag = 3;
__device__ int a_calls;

namespace {
__global__ void scale(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * k_tag + i;
	if (i == 0)
		atomicAdd(&a_calls, 1);
}
} // namespace

void part_a_run(int *d, int n)
{
	scale<<<(n + 127) / 128, 128>>>(d, n);
	CKLAUNCH();
}

int part_a_tag(void)
{
	int v = 0;
	CK(cudaMemcpyFromSymbol(&v, k_tag, sizeof(v)));
	return v;
}

int part_a_calls(void)
{
	int v = 0;
	CK(cudaMemcpyFromSymbol(&v, a_calls, sizeof(v)));
	return v;
}
