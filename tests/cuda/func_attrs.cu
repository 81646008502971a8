/* SPDX-License-Identifier: MIT */
/*
 * Kernel attributes and occupancy: cudaFuncGetAttributes,
 * cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) for a
 * kernel with 100 KiB of dynamic shared memory (refused before, working
 * after), cudaFuncAttributePreferredSharedMemoryCarveout,
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor(WithFlags) and
 * cudaOccupancyMaxPotentialBlockSize.
 */
#include "common/xct.h"

#define BIG_SMEM (100 * 1024)

__global__ void static_smem(int *out)
{
	__shared__ int buf[1024];
	buf[threadIdx.x] = threadIdx.x * 2;
	__syncthreads();
	out[threadIdx.x] = buf[(threadIdx.x + 1) % blockDim.x];
}

/* reverses n ints through dynamic shared memory */
__global__ void dyn_smem(const int *in, int *out, int n)
{
	extern __shared__ int s[];
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		s[i] = in[i];
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		out[i] = s[n - 1 - i];
}

__global__ void __launch_bounds__(128) bounded(float *p)
{
	p[threadIdx.x] = sqrtf((float)threadIdx.x);
}

static void show(const char *name, const void *f)
{
	cudaFuncAttributes a;
	CK(cudaFuncGetAttributes(&a, f));
	printf("%s: maxThreadsPerBlock=%d sharedSizeBytes=%zu "
	       "constSizeBytes=%zu localSizeBytes=%zu numRegs>0=%s "
	       "binaryVersion=%d ptxVersion=%d maxDynamicSharedSizeBytes=%d\n",
	       name, a.maxThreadsPerBlock, a.sharedSizeBytes, a.constSizeBytes,
	       a.localSizeBytes,
	       a.numRegs > 0 ? "yes" : "no", a.binaryVersion, a.ptxVersion,
	       a.maxDynamicSharedSizeBytes);
}

int main(void)
{
	CK(cudaSetDevice(0));
	show("static_smem", (const void *)static_smem);
	show("dyn_smem", (const void *)dyn_smem);
	show("bounded", (const void *)bounded);

	int optin = 0;
	CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
				  0));
	printf("opt-in shared memory >= 100 KiB: %s\n",
	       optin >= BIG_SMEM ? "yes" : "no");

	const int n = BIG_SMEM / 4;
	int *in = (int *)malloc(BIG_SMEM), *out = (int *)malloc(BIG_SMEM);
	int *din, *dout;
	REQUIRE(in && out, "host malloc");
	for (int i = 0; i < n; i++)
		in[i] = i * 13 - 7;
	CK(cudaMalloc(&din, BIG_SMEM));
	CK(cudaMalloc(&dout, BIG_SMEM));
	CK(cudaMemcpy(din, in, BIG_SMEM, cudaMemcpyHostToDevice));

	/* more than 48 KiB needs the opt-in first */
	dyn_smem<<<1, 256, BIG_SMEM>>>(din, dout, n);
	EXPECT(cudaErrorInvalidValue, cudaGetLastError());
	EXPECT(cudaSuccess, cudaGetLastError());
	if (optin >= BIG_SMEM) {
		CK(cudaFuncSetAttribute(dyn_smem,
					cudaFuncAttributeMaxDynamicSharedMemorySize,
					BIG_SMEM));
		show("dyn_smem after set", (const void *)dyn_smem);
		dyn_smem<<<1, 256, BIG_SMEM>>>(din, dout, n);
		EXPECT(cudaSuccess, cudaGetLastError());
		CK(cudaMemcpy(out, dout, BIG_SMEM, cudaMemcpyDeviceToHost));
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += out[i] != in[n - 1 - i];
		printf("100 KiB dynamic shared memory: bad=%d\n", bad);
		REQUIRE(bad == 0, "dyn_smem result");
	}
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaFuncSetAttribute(dyn_smem,
					cudaFuncAttributeMaxDynamicSharedMemorySize,
					optin + 1));
	CK(cudaFuncSetAttribute(dyn_smem,
				cudaFuncAttributePreferredSharedMemoryCarveout,
				50));

	int blocks = -1;
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, static_smem,
							 256, 0));
	printf("occupancy static_smem 256 threads: %d\n", blocks);
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, dyn_smem, 256,
							 BIG_SMEM));
	printf("occupancy dyn_smem 256 threads 100 KiB: %d\n", blocks);
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, bounded, 128,
							 0));
	printf("occupancy bounded 128 threads: %d\n", blocks);
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
		&blocks, bounded, 64, 0, cudaOccupancyDisableCachingOverride));
	printf("occupancy bounded 64 threads (flags): %d\n", blocks);
	int grid = 0, block = 0;
	CK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, static_smem, 0, 0));
	printf("max potential block size static_smem: grid>0=%s block=%d\n",
	       grid > 0 ? "yes" : "no", block);

	int hs[1024], *ds;
	CK(cudaMalloc(&ds, sizeof(hs)));
	static_smem<<<1, 1024>>>(ds);
	CKLAUNCH();
	CK(cudaMemcpy(hs, ds, sizeof(hs), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < 1024; i++)
		bad += hs[i] != ((i + 1) % 1024) * 2;
	printf("static_smem: bad=%d\n", bad);
	REQUIRE(bad == 0, "static_smem");
	/* a launch over __launch_bounds__ is refused */
	float *dp;
	CK(cudaMalloc(&dp, 1024 * sizeof(float)));
	bounded<<<1, 256>>>(dp);
	EXPECT(cudaErrorInvalidValue, cudaGetLastError());
	bounded<<<1, 128>>>(dp);
	EXPECT(cudaSuccess, cudaGetLastError());
	CK(cudaDeviceSynchronize());

	CK(cudaFree(dp));
	CK(cudaFree(ds));
	CK(cudaFree(din));
	CK(cudaFree(dout));
	free(in);
	free(out);
	return xct_finish("func_attrs");
}
