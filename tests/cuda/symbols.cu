/* SPDX-License-Identifier: MIT */
/*
 * Module variables: __constant__ memory through cudaMemcpyToSymbol and
 * cudaMemcpyFromSymbol (whole, with offsets, async), a statically
 * initialised __constant__ and __device__, and __device__ globals through
 * cudaGetSymbolAddress + cudaMemcpy and cudaGetSymbolSize.
 */
#include "common/xct.h"

__constant__ float c_coef[16];
__constant__ int c_init[4] = {11, 22, 33, 44};
__device__ double d_arr[64];
__device__ int d_counter;
__device__ long long d_init = 0x1122334455667788LL;

__global__ void use_const(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] * c_coef[i % 16] + (float)c_init[i % 4];
}

__global__ void double_arr(int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		d_arr[i] *= 2.0;
	atomicAdd(&d_counter, 1);
}

int main(void)
{
	CK(cudaSetDevice(0));

	/* static initialisers */
	int init[4];
	long long linit = 0;
	CK(cudaMemcpyFromSymbol(init, c_init, sizeof(init)));
	CK(cudaMemcpyFromSymbol(&linit, d_init, sizeof(linit)));
	printf("c_init = %d %d %d %d, d_init = %llx\n", init[0], init[1],
	       init[2], init[3], (unsigned long long)linit);
	REQUIRE(init[0] == 11 && init[3] == 44 &&
			linit == 0x1122334455667788LL,
		"static initialisers");

	/* __constant__: whole, then a part at an offset */
	float coef[16], back[16];
	for (int i = 0; i < 16; i++)
		coef[i] = 0.5f * (float)(i + 1);
	CK(cudaMemcpyToSymbol(c_coef, coef, sizeof(coef)));
	float part[4] = {-1.0f, -2.0f, -3.0f, -4.0f};
	CK(cudaMemcpyToSymbol(c_coef, part, sizeof(part), 8 * sizeof(float),
			      cudaMemcpyHostToDevice));
	memcpy(coef + 8, part, sizeof(part));
	CK(cudaMemcpyFromSymbol(back, c_coef, sizeof(back)));
	printf("c_coef:");
	for (int i = 0; i < 16; i++)
		printf(" %g", back[i]);
	printf("\n");
	REQUIRE(memcmp(back, coef, sizeof(coef)) == 0, "c_coef read back");
	float tail[3];
	CK(cudaMemcpyFromSymbol(tail, c_coef, sizeof(tail), 13 * sizeof(float),
				cudaMemcpyDeviceToHost));
	printf("c_coef[13..15] = %g %g %g\n", tail[0], tail[1], tail[2]);
	REQUIRE(tail[0] == coef[13] && tail[2] == coef[15], "offset read");

	/* a kernel reads the constants */
	const int n = 1000;
	float x[n], y[n];
	for (int i = 0; i < n; i++)
		x[i] = (float)(i - 500);
	float *dx, *dy;
	CK(cudaMalloc(&dx, sizeof(x)));
	CK(cudaMalloc(&dy, sizeof(y)));
	CK(cudaMemcpy(dx, x, sizeof(x), cudaMemcpyHostToDevice));
	use_const<<<(n + 255) / 256, 256>>>(dx, dy, n);
	CKLAUNCH();
	CK(cudaMemcpy(y, dy, sizeof(y), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += y[i] != x[i] * coef[i % 16] + (float)init[i % 4];
	printf("use_const bad=%d fnv=%016llx\n", bad,
	       (unsigned long long)xct_fnv(y, sizeof(y)));
	REQUIRE(bad == 0, "use_const");

	/* __device__ globals through their addresses */
	double *parr;
	int *pcnt;
	size_t sz = 0;
	CK(cudaGetSymbolAddress((void **)&parr, d_arr));
	CK(cudaGetSymbolAddress((void **)&pcnt, d_counter));
	CK(cudaGetSymbolSize(&sz, d_arr));
	printf("sizeof d_arr = %zu\n", sz);
	REQUIRE(sz == 64 * sizeof(double), "symbol size");
	CK(cudaGetSymbolSize(&sz, c_coef));
	printf("sizeof c_coef = %zu\n", sz);
	double arr[64];
	for (int i = 0; i < 64; i++)
		arr[i] = i * 1.25 - 3;
	CK(cudaMemcpy(parr, arr, sizeof(arr), cudaMemcpyHostToDevice));
	CK(cudaMemset(pcnt, 0, sizeof(int)));
	double_arr<<<1, 64>>>(64);
	CKLAUNCH();
	double_arr<<<1, 32>>>(32);
	CKLAUNCH();
	double arr2[64];
	int cnt = 0, cnt2 = 0;
	CK(cudaMemcpy(arr2, parr, sizeof(arr2), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&cnt, pcnt, sizeof(cnt), cudaMemcpyDeviceToHost));
	CK(cudaMemcpyFromSymbol(&cnt2, d_counter, sizeof(cnt2)));
	bad = 0;
	for (int i = 0; i < 64; i++)
		bad += arr2[i] != arr[i] * (i < 32 ? 4 : 2);
	printf("d_arr bad=%d d_arr[63]=%g d_counter=%d/%d\n", bad, arr2[63],
	       cnt, cnt2);
	REQUIRE(bad == 0 && cnt == 96 && cnt2 == 96, "device globals");

	/* async symbol copies on a stream */
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	int seven = 7, got = 0;
	CK(cudaMemcpyToSymbolAsync(d_counter, &seven, sizeof(int), 0,
				   cudaMemcpyHostToDevice, s));
	CK(cudaMemcpyFromSymbolAsync(&got, d_counter, sizeof(int), 0,
				     cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	printf("async d_counter=%d\n", got);
	REQUIRE(got == 7, "async symbol copy");
	/* device-to-device between a symbol and a buffer */
	CK(cudaMemcpyToSymbol(d_arr, dx, 8 * sizeof(double), 0,
			      cudaMemcpyDeviceToDevice));
	double fromdx[8];
	CK(cudaMemcpyFromSymbol(fromdx, d_arr, sizeof(fromdx)));
	printf("d2d symbol fnv=%016llx match=%d\n",
	       (unsigned long long)xct_fnv(fromdx, sizeof(fromdx)),
	       memcmp(fromdx, x, sizeof(fromdx)) == 0);
	REQUIRE(memcmp(fromdx, x, sizeof(fromdx)) == 0, "d2d symbol copy");

	CK(cudaStreamDestroy(s));
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	return xct_finish("symbols");
}
