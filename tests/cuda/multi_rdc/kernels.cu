/* SPDX-License-Identifier: MIT */
#include "../common/xct.h"
#include "rdc.h"

__global__ void accumulate(const int *in, int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		out[i] = clamp_add(poly(in[i]), i);
		atomicAdd(&rdc_total, 1);
	}
}

void launch_accumulate(const int *in, int *out, int n)
{
	accumulate<<<(n + 127) / 128, 128>>>(in, out, n);
	CKLAUNCH();
}
