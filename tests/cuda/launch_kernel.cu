/* SPDX-License-Identifier: MIT */
/*
 * cudaLaunchKernel called directly (no <<<>>>): the C entry point with an
 * argument array, 2D/3D grids, dynamic shared memory, a stream, a struct
 * argument, the C++ template overload, and an invalid configuration
 * reported by the call itself.
 */
#include "common/xct.h"

struct Coef {
	int mul;
	double add;
	char tag;
};

__global__ void fill3d(int *p, int nx, int ny, int base)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	int z = blockIdx.z * blockDim.z + threadIdx.z;
	if (x < nx && y < ny)
		p[(z * ny + y) * nx + x] = base + x + 100 * y + 10000 * z;
}

__global__ void with_struct(Coef c, const int *in, double *out, int n)
{
	extern __shared__ int tmp[];
	int i = threadIdx.x;
	if (i < n)
		tmp[i] = in[i];
	__syncthreads();
	if (i < n)
		out[i] = tmp[n - 1 - i] * c.mul + c.add + c.tag;
}

static void not_a_kernel(void) {}

int main(void)
{
	CK(cudaSetDevice(0));
	const int nx = 40, ny = 30, nz = 4, tot = nx * ny * nz;
	int *d, h[tot];
	CK(cudaMalloc(&d, sizeof(h)));
	int base = 7, inx = nx, iny = ny;
	void *args[] = {&d, &inx, &iny, &base};
	CK(cudaLaunchKernel((const void *)fill3d, dim3(5, 8, nz), dim3(8, 4, 1),
			    args, 0, 0));
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int z = 0; z < nz; z++)
		for (int y = 0; y < ny; y++)
			for (int x = 0; x < nx; x++)
				bad += h[(z * ny + y) * nx + x] !=
				       7 + x + 100 * y + 10000 * z;
	printf("fill3d: bad=%d fnv=%016llx\n", bad,
	       (unsigned long long)xct_fnv(h, sizeof(h)));
	REQUIRE(bad == 0, "fill3d");

	/* struct argument, dynamic shared memory, a stream */
	const int n = 256;
	int in[n], *din;
	double out[n], *dout;
	for (int i = 0; i < n; i++)
		in[i] = i * i - 300;
	CK(cudaMalloc(&din, sizeof(in)));
	CK(cudaMalloc(&dout, sizeof(out)));
	CK(cudaMemcpy(din, in, sizeof(in), cudaMemcpyHostToDevice));
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	Coef c = {3, 0.25, 'x'};
	int nn = n;
	void *args2[] = {&c, &din, &dout, &nn};
	CK(cudaLaunchKernel((const void *)with_struct, dim3(1), dim3(n), args2,
			    n * sizeof(int), s));
	CK(cudaMemcpyAsync(out, dout, sizeof(out), cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	bad = 0;
	for (int i = 0; i < n; i++)
		bad += out[i] != in[n - 1 - i] * 3 + 0.25 + 'x';
	printf("with_struct: bad=%d out[0]=%.17g\n", bad, out[0]);
	REQUIRE(bad == 0, "with_struct");

	/* the C++ template overload of cudaLaunchKernel */
	base = -5;
	CK(cudaLaunchKernel(fill3d, dim3(5, 8, 1), dim3(8, 4, 1), args, 0, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(h, d, sizeof(int) * nx * ny, cudaMemcpyDeviceToHost));
	printf("template overload: h[0]=%d h[last]=%d\n", h[0],
	       h[nx * ny - 1]);
	REQUIRE(h[0] == -5 && h[nx * ny - 1] == -5 + 39 + 2900, "overload");

	/* errors come back from the call itself */
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaLaunchKernel((const void *)fill3d, dim3(1), dim3(2048),
				    args, 0, 0));
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaLaunchKernel((const void *)fill3d, dim3(0), dim3(32),
				    args, 0, 0));
	/* a host function that is not a kernel */
	EXPECT_ERR(cudaErrorInvalidResourceHandle,
		   cudaLaunchKernel((const void *)not_a_kernel, dim3(1),
				    dim3(1), args, 0, 0));
	CK(cudaDeviceSynchronize());
	CK(cudaStreamDestroy(s));
	CK(cudaFree(d));
	CK(cudaFree(din));
	CK(cudaFree(dout));
	return xct_finish("launch_kernel");
}
