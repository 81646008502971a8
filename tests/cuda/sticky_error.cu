/* SPDX-License-Identifier: MIT */
/*
 * A kernel writes far out of bounds: cudaDeviceSynchronize reports
 * cudaErrorIllegalAddress, the error is sticky (every later call returns it,
 * cudaGetLastError resets only the last error), and cudaDeviceReset.
 * Run last: it breaks the context (and, with some drivers, the device for
 * the rest of the process).
 */
#include "common/xct.h"

__global__ void oob(int *p, long long off)
{
	p[off] = 42;
}

__global__ void set(int *p, int v)
{
	p[threadIdx.x] = v;
}

int main(void)
{
	CK(cudaSetDevice(0));
	int *d;
	CK(cudaMalloc(&d, 256));
	set<<<1, 64>>>(d, 1);
	CK(cudaDeviceSynchronize());

	oob<<<1, 1>>>(d, 1ll << 40); /* 4 TiB past the buffer */
	EXPECT(cudaSuccess, cudaGetLastError());
	EXPECT(cudaErrorIllegalAddress, cudaDeviceSynchronize());
	/* cudaGetLastError returns it and resets the last error ... */
	EXPECT(cudaErrorIllegalAddress, cudaGetLastError());
	EXPECT(cudaSuccess, cudaPeekAtLastError());
	/* ... but the context stays broken: every call fails */
	EXPECT(cudaErrorIllegalAddress, cudaDeviceSynchronize());
	int h = 0;
	EXPECT(cudaErrorIllegalAddress,
	       cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
	void *p2 = nullptr;
	EXPECT(cudaErrorIllegalAddress, cudaMalloc(&p2, 256));
	set<<<1, 64>>>(d, 2);
	EXPECT(cudaErrorIllegalAddress, cudaGetLastError());
	EXPECT(cudaErrorIllegalAddress, cudaStreamSynchronize(0));
	EXPECT(cudaErrorIllegalAddress, cudaFree(d));

	/*
	 * cudaDeviceReset succeeds.  Whether the device can be used again
	 * in this process depends on the driver (with CUDA 13 / driver 580
	 * on an H100 every later call returns cudaErrorDevicesUnavailable),
	 * so what follows is printed, not checked.
	 */
	EXPECT(cudaSuccess, cudaDeviceReset());
	/* the failed calls since the last cudaGetLastError left the last
	 * error set, and the reset does not clear it */
	EXPECT(cudaErrorIllegalAddress, cudaGetLastError());
	EXPECT(cudaSuccess, cudaGetLastError());
	int *e = nullptr;
	cudaError_t r = cudaMalloc(&e, 256);
	printf("cudaMalloc after reset -> %s\n", cudaGetErrorName(r));
	if (r == cudaSuccess) {
		set<<<1, 64>>>(e, 3);
		int back[64], bad = 0;
		r = cudaMemcpy(back, e, sizeof(back), cudaMemcpyDeviceToHost);
		printf("launch and copy after reset -> %s\n",
		       cudaGetErrorName(r));
		for (int i = 0; r == cudaSuccess && i < 64; i++)
			bad += back[i] != 3;
		printf("after reset: bad=%d\n", bad);
		cudaFree(e);
	}
	return xct_finish("sticky_error");
}
