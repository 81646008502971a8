/* SPDX-License-Identifier: MIT */
#ifndef RDC_H
#define RDC_H
/* Separate compilation (-rdc=true): device code calls across files and a
 * __device__ variable defined in one file is used in another. */
extern __device__ int rdc_total;
extern __constant__ int rdc_bias;
__device__ int poly(int x);
__device__ int clamp_add(int a, int b);
void launch_accumulate(const int *in, int *out, int n);
#endif
