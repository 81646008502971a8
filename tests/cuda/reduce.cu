/* SPDX-License-Identifier: MIT */
/*
 * A reduction: dynamic shared memory given at launch, warp shuffles, and
 * 64-bit atomics, over 16 Mi integers; checked against the CPU sum.
 */
#include "common/xct.h"

__global__ void reduce(const int *in, size_t n, long long *out)
{
	extern __shared__ long long warp_sums[];
	long long s = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		s += in[i];
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	if (lane == 0)
		warp_sums[warp] = s;
	__syncthreads();
	if (warp == 0) {
		s = lane < blockDim.x / 32 ? warp_sums[lane] : 0;
		for (int o = 16; o > 0; o >>= 1)
			s += __shfl_down_sync(0xffffffffu, s, o);
		if (lane == 0)
			atomicAdd((unsigned long long *)out,
				  (unsigned long long)s);
	}
}

__global__ void minmax(const int *in, size_t n, int *mm)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		atomicMin(&mm[0], in[i]);
		atomicMax(&mm[1], in[i]);
	}
}

int main(void)
{
	CK(cudaSetDevice(0));
	const size_t n = 16u << 20;
	int *h = (int *)malloc(n * sizeof(int));
	REQUIRE(h, "host malloc");
	long long want = 0;
	int lo = 0x7fffffff, hi = -0x7fffffff - 1;
	for (size_t i = 0; i < n; i++) {
		h[i] = (int)(xct_mix32((uint32_t)i) % 2000001) - 1000000;
		want += h[i];
		lo = h[i] < lo ? h[i] : lo;
		hi = h[i] > hi ? h[i] : hi;
	}
	int *d, *dmm, mm[2] = {0x7fffffff, -0x7fffffff - 1};
	long long *dsum, sum = 0;
	CK(cudaMalloc(&d, n * sizeof(int)));
	CK(cudaMalloc(&dsum, sizeof(long long)));
	CK(cudaMalloc(&dmm, sizeof(mm)));
	CK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dmm, mm, sizeof(mm), cudaMemcpyHostToDevice));
	const int threads[] = {32, 256, 1024};
	for (int t : threads) {
		CK(cudaMemset(dsum, 0, sizeof(long long)));
		reduce<<<132, t, (t / 32) * sizeof(long long)>>>(d, n, dsum);
		CKLAUNCH();
		CK(cudaMemcpy(&sum, dsum, sizeof(sum), cudaMemcpyDeviceToHost));
		printf("reduce threads=%d: sum=%lld want=%lld\n", t, sum, want);
		REQUIRE(sum == want, "sum with %d threads", t);
	}
	minmax<<<264, 256>>>(d, n, dmm);
	CKLAUNCH();
	CK(cudaMemcpy(mm, dmm, sizeof(mm), cudaMemcpyDeviceToHost));
	printf("min=%d max=%d (want %d %d)\n", mm[0], mm[1], lo, hi);
	REQUIRE(mm[0] == lo && mm[1] == hi, "min/max");
	CK(cudaFree(d));
	CK(cudaFree(dsum));
	CK(cudaFree(dmm));
	free(h);
	return xct_finish("reduce");
}
