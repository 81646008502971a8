/* SPDX-License-Identifier: MIT */
/*
 * Error semantics that do not destroy the context: invalid launch
 * configurations (cudaGetLastError returns the error once,
 * cudaPeekAtLastError does not reset it), failed calls setting the last
 * error, cudaGetErrorName/cudaGetErrorString, cudaFree of a bogus pointer
 * and a double free, cudaSetDevice(999), an impossible cudaMalloc, bad
 * arguments, and a good launch afterwards.  The sticky error is in
 * sticky_error.cu.
 */
#include "common/xct.h"

__global__ void inc(int *p)
{
	p[blockIdx.x * blockDim.x + threadIdx.x] += 1;
}

int main(void)
{
	static const cudaError_t codes[] = {
		cudaSuccess,
		cudaErrorInvalidValue,
		cudaErrorMemoryAllocation,
		cudaErrorInvalidConfiguration,
		cudaErrorInvalidDevice,
		cudaErrorInsufficientDriver,
		cudaErrorNoDevice,
		cudaErrorIllegalAddress,
		cudaErrorLaunchFailure,
		cudaErrorNotReady,
		cudaErrorInvalidResourceHandle,
		cudaErrorUnknown,
		(cudaError_t)12345,
	};
	/* name and string need no device */
	for (cudaError_t c : codes)
		printf("%d: %s: %s\n", (int)c, cudaGetErrorName(c),
		       cudaGetErrorString(c));

	CK(cudaSetDevice(0));
	int *d;
	CK(cudaMalloc(&d, 1024 * sizeof(int)));
	CK(cudaMemset(d, 0, 1024 * sizeof(int)));

	/*
	 * Invalid launch configurations.  CUDA 13 reports all of these as
	 * cudaErrorInvalidValue (older runtimes said
	 * cudaErrorInvalidConfiguration); the comparison with the native run
	 * is what counts.
	 */
	inc<<<1, 2048>>>(d); /* 2048 threads per block */
	EXPECT(cudaErrorInvalidValue, cudaPeekAtLastError());
	EXPECT(cudaErrorInvalidValue, cudaPeekAtLastError());
	EXPECT(cudaErrorInvalidValue, cudaGetLastError());
	EXPECT(cudaSuccess, cudaGetLastError());
	EXPECT(cudaSuccess, cudaPeekAtLastError());
	inc<<<dim3(1), dim3(1, 1, 128)>>>(d); /* block z too large */
	EXPECT(cudaErrorInvalidValue, cudaGetLastError());
	inc<<<dim3(1, 70000), 1>>>(d); /* grid y too large */
	EXPECT(cudaErrorInvalidValue, cudaGetLastError());
	inc<<<0, 32>>>(d); /* no blocks */
	EXPECT(cudaErrorInvalidValue, cudaGetLastError());
	inc<<<1, 32, 1 << 30>>>(d); /* too much dynamic shared memory */
	EXPECT(cudaErrorInvalidValue, cudaGetLastError());
	/* the last error is the latest one */
	inc<<<1, 2048>>>(d);
	EXPECT_ERR(cudaErrorInvalidDevice, cudaSetDevice(999));
	/* none of them reached the device */
	EXPECT(cudaSuccess, cudaDeviceSynchronize());

	/* bogus pointers and devices */
	EXPECT_ERR(cudaErrorInvalidValue, cudaFree((void *)0x1234));
	EXPECT(cudaSuccess, cudaFree(nullptr));
	void *once;
	CK(cudaMalloc(&once, 64));
	EXPECT(cudaSuccess, cudaFree(once));
	EXPECT_ERR(cudaErrorInvalidValue, cudaFree(once)); /* twice */
	EXPECT_ERR(cudaErrorInvalidDevice, cudaSetDevice(999));
	EXPECT_ERR(cudaErrorInvalidDevice, cudaSetDevice(-1));
	int dev = -1;
	CK(cudaGetDevice(&dev));
	printf("device after failed cudaSetDevice: %d\n", dev);

	/* an impossible allocation; the error is not sticky */
	void *huge = nullptr;
	EXPECT_ERR(cudaErrorMemoryAllocation, cudaMalloc(&huge, (size_t)1 << 60));
	printf("pointer after failed cudaMalloc is NULL: %s\n",
	       huge == nullptr ? "yes" : "no");

	/* invalid arguments */
	EXPECT_ERR(cudaErrorInvalidMemcpyDirection,
		   cudaMemcpy(d, d, 4, (cudaMemcpyKind)77));
	EXPECT_ERR(cudaErrorInvalidValue, cudaMemset(d, 0, (size_t)1 << 40));

	inc<<<32, 32>>>(d);
	EXPECT(cudaSuccess, cudaGetLastError());
	EXPECT(cudaSuccess, cudaDeviceSynchronize());
	int h[1024];
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < 1024; i++)
		bad += h[i] != 1;
	printf("good launch after errors: bad=%d\n", bad);
	REQUIRE(bad == 0, "launch after errors");
	CK(cudaFree(d));
	return xct_finish("errors");
}
