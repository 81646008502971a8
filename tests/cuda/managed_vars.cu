/* SPDX-License-Identifier: MIT */
/*
 * __managed__ variables: scalars and arrays initialised statically, read
 * and written by host code and by kernels in turn, one in a struct, and
 * cudaGetSymbolAddress / cudaMemcpyFromSymbol on one.
 */
#include "common/xct.h"

struct pair {
	int a;
	double b;
};

__managed__ int counter = 5;
__managed__ float table[256] = { 1.0f, 2.0f, 3.0f };
__managed__ pair cfg = { 7, 0.5 };
__managed__ unsigned char big[3 << 20];
__device__ int plain = 11;

__global__ void step(int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < 256)
		table[i] = table[i] * 2.0f + (float)k + (float)cfg.a;
	if (i == 0) {
		counter += k;
		cfg.b += 1.0;
		plain += counter;
	}
}

__global__ void touch_big(size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		big[i] = (unsigned char)(big[i] + i % 13);
}

int main(void)
{
	int count = 0;

	CK(cudaGetDeviceCount(&count));
	CK(cudaSetDevice(0));
	/* The static initialisers, seen by the host. */
	printf("initial: counter %d table %g %g %g %g cfg %d %g\n", counter,
	       table[0], table[1], table[2], table[3], cfg.a, cfg.b);
	counter = 100;
	table[3] = 4.0f;
	cfg.a = 1;
	for (int k = 1; k <= 5; k++) {
		step<<<1, 256>>>(k);
		CKLAUNCH();
		CK(cudaDeviceSynchronize());
		printf("step %d: counter %d table[0..3] %g %g %g %g "
		       "table[255] %g cfg.b %g\n", k, counter, table[0],
		       table[1], table[2], table[3], table[255], cfg.b);
		table[255] = (float)k;
		counter -= 1;
	}
	int p = 0;
	CK(cudaMemcpyFromSymbol(&p, plain, sizeof(p)));
	printf("plain: %d\n", p);

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7);
	touch_big<<<64, 256>>>(sizeof(big));
	CK(cudaDeviceSynchronize());
	printf("big: %016llx\n",
	       (unsigned long long)xct_fnv(big, sizeof(big)));
	big[12345] = 0;
	touch_big<<<64, 256>>>(sizeof(big));
	CK(cudaDeviceSynchronize());
	printf("big again: %016llx\n",
	       (unsigned long long)xct_fnv(big, sizeof(big)));

	cudaPointerAttributes a;
	CK(cudaPointerGetAttributes(&a, &counter));
	printf("counter attributes: type %d\n", (int)a.type);
	return xct_finish("managed_vars");
}
