/* SPDX-License-Identifier: MIT */
/*
 * cudaDeviceSynchronize and cudaDeviceReset: work before a reset, a module
 * variable is back at its initial value after it (the module is loaded
 * again), memory can be allocated and kernels run again, and a second reset
 * in a row is fine.
 */
#include "common/xct.h"

__device__ int g_value = 5;

__global__ void bump(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] += g_value;
	if (i == 0)
		g_value *= 3;
}

static int round_trip(const char *when)
{
	const int n = 1000;
	int h[n], *d, g = 0;
	for (int i = 0; i < n; i++)
		h[i] = i;
	CK(cudaMalloc(&d, sizeof(h)));
	CK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
	CK(cudaMemcpyFromSymbol(&g, g_value, sizeof(g)));
	printf("%s: g_value=%d\n", when, g);
	bump<<<4, 256>>>(d, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	bump<<<4, 256>>>(d, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != i + g + 3 * g;
	CK(cudaMemcpyFromSymbol(&g, g_value, sizeof(g)));
	printf("%s: bad=%d g_value after=%d\n", when, bad, g);
	REQUIRE(bad == 0, "%s", when);
	CK(cudaFree(d));
	return g;
}

int main(void)
{
	CK(cudaSetDevice(0));
	round_trip("first");
	void *leak;
	CK(cudaMalloc(&leak, 1 << 20)); /* reclaimed by the reset */
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	CK(cudaMemsetAsync(leak, 1, 1 << 20, s));
	CK(cudaDeviceSynchronize());
	CK(cudaDeviceReset());
	round_trip("after reset");
	CK(cudaDeviceReset());
	CK(cudaDeviceReset());
	round_trip("after two resets");
	CK(cudaDeviceSynchronize());
	CK(cudaDeviceReset());
	return xct_finish("device_reset");
}
