// SPDX-License-Identifier: MIT
/*
 * The kernels library.cu loads at run time, built three ways (a
 * fatbinary, a cubin, PTX) and embedded by the Makefile.
 */
extern "C" __device__ int counter;
__device__ int counter = 5;

extern "C" __managed__ int mcount;
__managed__ int mcount = 9;

extern "C" __global__ void bump_managed(void)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		mcount += 1;
}

extern "C" __global__ void add_one(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] += 1;
}

extern "C" __global__ void bump(int by)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		counter += by;
}

extern "C" __global__ void big_smem(int *out)
{
	extern __shared__ int s[];

	s[threadIdx.x] = threadIdx.x;
	__syncthreads();
	if (threadIdx.x == 0)
		*out = s[blockDim.x - 1];
}
