/* SPDX-License-Identifier: MIT */
/*
 * Tiled shared-memory matrix multiply (two tile sizes, sizes that are not
 * multiples of the tile), verified exactly against a CPU product: the
 * inputs are small integers, so every float sum is exact.
 */
#include "common/xct.h"

template <int TILE>
__global__ void matmul(const float *A, const float *B, float *C, int M, int K,
		       int N)
{
	__shared__ float As[TILE][TILE];
	__shared__ float Bs[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y;
	int col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;
	for (int t = 0; t < (K + TILE - 1) / TILE; t++) {
		int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
		As[threadIdx.y][threadIdx.x] =
			(row < M && ak < K) ? A[(size_t)row * K + ak] : 0.0f;
		Bs[threadIdx.y][threadIdx.x] =
			(bk < K && col < N) ? B[(size_t)bk * N + col] : 0.0f;
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	if (row < M && col < N)
		C[(size_t)row * N + col] = acc;
}

template <int TILE> static void run(int M, int K, int N)
{
	size_t sa = (size_t)M * K, sb = (size_t)K * N, sc = (size_t)M * N;
	float *A = (float *)malloc(sa * 4), *B = (float *)malloc(sb * 4);
	float *C = (float *)malloc(sc * 4), *R = (float *)malloc(sc * 4);
	REQUIRE(A && B && C && R, "host malloc");
	for (size_t i = 0; i < sa; i++)
		A[i] = (float)((int)((i * 7 + 3) % 17) - 8);
	for (size_t i = 0; i < sb; i++)
		B[i] = (float)((int)((i * 5 + 1) % 13) - 6);
	for (int r = 0; r < M; r++)
		for (int c = 0; c < N; c++) {
			float s = 0;
			for (int k = 0; k < K; k++)
				s += A[(size_t)r * K + k] * B[(size_t)k * N + c];
			R[(size_t)r * N + c] = s;
		}
	float *dA, *dB, *dC;
	CK(cudaMalloc(&dA, sa * 4));
	CK(cudaMalloc(&dB, sb * 4));
	CK(cudaMalloc(&dC, sc * 4));
	CK(cudaMemcpy(dA, A, sa * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dB, B, sb * 4, cudaMemcpyHostToDevice));
	CK(cudaMemset(dC, 0xff, sc * 4));
	dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
	matmul<TILE><<<grid, block>>>(dA, dB, dC, M, K, N);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(C, dC, sc * 4, cudaMemcpyDeviceToHost));
	size_t bad = 0;
	for (size_t i = 0; i < sc; i++)
		if (C[i] != R[i])
			bad++;
	printf("tile=%d M=%d K=%d N=%d mismatches=%zu fnv=%016llx c[0]=%g "
	       "c[last]=%g\n",
	       TILE, M, K, N, bad, (unsigned long long)xct_fnv(C, sc * 4),
	       C[0], C[sc - 1]);
	REQUIRE(bad == 0, "%zu wrong elements", bad);
	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dC));
	free(A);
	free(B);
	free(C);
	free(R);
}

int main(void)
{
	CK(cudaSetDevice(0));
	run<16>(64, 64, 64);
	run<16>(300, 517, 211);
	run<32>(256, 384, 320);
	run<32>(33, 1, 65);
	return xct_finish("matmul_tiled");
}
