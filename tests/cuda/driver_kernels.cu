/* SPDX-License-Identifier: MIT */
/*
 * Kernels that driver_api loads as a module: built with -fatbin and -ptx
 * beside it, never linked into it.
 */
struct drv_args {
	int a;
	double b;
	char c;
};

__device__ int counter;

extern "C" __global__ void vadd(const float *a, const float *b, float *c,
				int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

extern "C" __global__ void scale(float *p, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] *= s;
}

extern "C" __global__ void take_struct(struct drv_args s, char tag, int *out)
{
	out[0] = s.a;
	out[1] = (int)s.b;
	out[2] = s.c;
	out[3] = tag;
	atomicAdd(&counter, 1);
}
