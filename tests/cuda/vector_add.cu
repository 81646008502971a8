/* SPDX-License-Identifier: MIT */
/* Vector add: cudaMalloc, cudaMemcpy H2D/D2H, a <<<>>> launch, cudaFree. */
#include "common/xct.h"

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

static void run(int n, int threads)
{
	size_t bytes = (size_t)n * sizeof(float);
	float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes);
	float *c = (float *)malloc(bytes);
	REQUIRE(a && b && c, "host malloc");
	for (int i = 0; i < n; i++) {
		a[i] = (float)(i % 1000) * 0.5f;
		b[i] = (float)((i * 7) % 333) - 100.0f;
		c[i] = -1.0f;
	}
	float *da, *db, *dc;
	CK(cudaMalloc(&da, bytes));
	CK(cudaMalloc(&db, bytes));
	CK(cudaMalloc(&dc, bytes));
	CK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
	int blocks = (n + threads - 1) / threads;
	vadd<<<blocks, threads>>>(da, db, dc, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++)
		if (c[i] != a[i] + b[i])
			bad++;
	printf("n=%d threads=%d blocks=%d mismatches=%d fnv=%016llx\n", n,
	       threads, blocks, bad, (unsigned long long)xct_fnv(c, bytes));
	REQUIRE(bad == 0, "%d wrong elements", bad);
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(dc));
	free(a);
	free(b);
	free(c);
}

int main(void)
{
	CK(cudaSetDevice(0));
	run(1, 32);
	run(1000, 128);
	run(1 << 20, 256);
	run(1000003, 1024);
	return xct_finish("vector_add");
}
