/* SPDX-License-Identifier: MIT */
#include "../common/xct.h"
#include "parts.h"

/* part_a.cu has a kernel and a constant of the same names. */
static __constant__ int k_tag = 5;
__device__ int b_calls;

namespace {
__global__ void scale(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * k_tag - i;
	if (i == 0)
		atomicAdd(&b_calls, 1);
}
} // namespace

void part_b_run(int *d, int n)
{
	scale<<<(n + 63) / 64, 64>>>(d, n);
	CKLAUNCH();
}

int part_b_tag(void)
{
	int v = 0;
	CK(cudaMemcpyFromSymbol(&v, k_tag, sizeof(v)));
	return v;
}

int part_b_calls(void)
{
	int v = 0;
	CK(cudaMemcpyFromSymbol(&v, b_calls, sizeof(v)));
	return v;
}
