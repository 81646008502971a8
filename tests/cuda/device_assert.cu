/* SPDX-License-Identifier: MIT */
/*
 * A device-side assert fails: the synchronisation after it reports
 * cudaErrorAssert, and the context is broken for the rest of the process.
 * The assert's message goes to stderr (saved, not compared); kernel printf
 * before it to stdout, in order with the host's output.  Run near the
 * end: it destroys its context.
 */
#include <assert.h>

#include "common/xct.h"

__global__ void hello(int v)
{
	printf("device: before the assert, v = %d\n", v);
}

/* Exactly one thread fails: element 13 holds 13. */
__global__ void check(const int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		assert(p[i] != 13);
}

int main(void)
{
	int h[64], *d;

	CK(cudaSetDevice(0));
	for (int i = 0; i < 64; i++)
		h[i] = i;
	CK(cudaMalloc(&d, sizeof(h)));
	CK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
	printf("host: start\n");
	hello<<<1, 1>>>(7);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	printf("host: after the printf kernel\n");

	check<<<2, 32>>>(d, 64);
	EXPECT(cudaSuccess, cudaGetLastError());
	EXPECT(cudaErrorAssert, cudaDeviceSynchronize());
	printf("host: after the assert\n");
	/* What a broken context answers: printed, not checked. */
	SHOW(cudaGetLastError());
	SHOW(cudaDeviceSynchronize());
	SHOW(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	void *p2 = nullptr;
	SHOW(cudaMalloc(&p2, 256));
	SHOW(cudaFree(d));
	/* A launch into the broken context fails at once. */
	hello<<<1, 1>>>(8);
	SHOW(cudaGetLastError());
	SHOW(cudaDeviceSynchronize());
	return xct_finish("device_assert");
}
