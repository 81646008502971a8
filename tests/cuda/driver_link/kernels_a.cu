/* SPDX-License-Identifier: MIT */
/*
 * driver_link's first input, PTX with relocatable device code: a kernel
 * that calls a function of the second input (kernels_b.cu), and one that
 * launches a kernel from the device, which needs the device runtime
 * (libcudadevrt.a) at link time.
 */
extern __device__ float twice(float v);

extern "C" __global__ void axpy_ext(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * twice(x[i]) + y[i];
}

extern "C" __global__ void child(int *out, int base)
{
	out[base + threadIdx.x] = base + (int)threadIdx.x * 3;
}

extern "C" __global__ void parent(int *out)
{
	child<<<1, 32>>>(out, (int)threadIdx.x * 32);
}
