/* SPDX-License-Identifier: MIT */
#include "rdc.h"

__device__ int rdc_total;
__constant__ int rdc_bias = 100;

__device__ int poly(int x)
{
	return 3 * x * x - 2 * x + rdc_bias;
}

__device__ int clamp_add(int a, int b)
{
	int s = a + b;
	return s > 1000000 ? 1000000 : s;
}
