/* SPDX-License-Identifier: MIT */
/*
 * Calls that xcuda posts without waiting for an answer (launches, async
 * memset and copies, event record, stream wait): a long mixed batch
 * computes the right thing, and a bad argument is reported where CUDA
 * reports it, at the call or at the next synchronising call, with the
 * same last-error bookkeeping.  Every answer is printed; run-compare.sh
 * holds it against the native run.
 */
#include "common/xct.h"

#define SAY(...) \
	printf("%s -> %s\n", #__VA_ARGS__, cudaGetErrorName(__VA_ARGS__))

__global__ void inc(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i]++;
}

__global__ void twice(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] *= 2;
}

int main(void)
{
	const int n = 4096, launches = 2000;
	int *d, *e, *h;
	cudaStream_t s1, s2;
	cudaEvent_t ev;

	CK(cudaSetDevice(0));
	CK(cudaMalloc(&d, n * sizeof(int)));
	CK(cudaMalloc(&e, n * sizeof(int)));
	CK(cudaMallocHost(&h, n * sizeof(int)));
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));

	/* A batch across two streams joined by an event: (2000 + 0) * 2 */
	CK(cudaMemsetAsync(d, 0, n * sizeof(int), s1));
	for (int i = 0; i < launches; i++)
		inc<<<n / 256, 256, 0, s1>>>(d, n);
	CK(cudaEventRecord(ev, s1));
	CK(cudaStreamWaitEvent(s2, ev, 0));
	twice<<<n / 256, 256, 0, s2>>>(d, n);
	CK(cudaMemcpyAsync(e, d, n * sizeof(int), cudaMemcpyDeviceToDevice,
			   s2));
	CK(cudaMemcpyAsync(h, e, n * sizeof(int), cudaMemcpyDeviceToHost,
			   s2));
	CK(cudaStreamSynchronize(s2));
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != 2 * launches;
	printf("batch: h[0]=%d bad=%d\n", h[0], bad);
	REQUIRE(bad == 0, "posted batch result");

	/* Bad device pointers to the asynchronous calls */
	int *gone;
	CK(cudaMalloc(&gone, 4096));
	CK(cudaFree(gone));
	SAY(cudaMemsetAsync((void *)0x1000, 0, 64, s1));
	SAY(cudaGetLastError());
	SAY(cudaMemsetAsync(gone, 0, 64, s1));
	SAY(cudaGetLastError());
	SAY(cudaMemsetAsync(d + n - 4, 0, 64, s1)); /* runs off the end */
	SAY(cudaGetLastError());
	SAY(cudaMemcpyAsync(d, gone, 64, cudaMemcpyDeviceToDevice, s1));
	SAY(cudaGetLastError());
	SAY(cudaMemcpyAsync(gone, d, 64, cudaMemcpyDeviceToDevice, s1));
	SAY(cudaGetLastError());
	SAY(cudaMemset2DAsync(gone, 64, 0, 64, 4, s1));
	SAY(cudaGetLastError());
	SAY(cudaStreamSynchronize(s1));
	SAY(cudaGetLastError());

	/* A bad launch inside a batch: reported at the launch only */
	inc<<<1, 256, 0, s1>>>(d, n);
	inc<<<1, 4096, 0, s1>>>(d, n);
	SAY(cudaPeekAtLastError());
	inc<<<1, 256, 0, s1>>>(d, n);
	SAY(cudaStreamSynchronize(s1));
	SAY(cudaGetLastError());
	SAY(cudaGetLastError());
	CK(cudaMemcpy(h, d, sizeof(int), cudaMemcpyDeviceToHost));
	printf("after the bad launch: h[0]=%d\n", h[0]);

	/* The stream and the context still work */
	for (int i = 0; i < 10; i++)
		inc<<<n / 256, 256, 0, s1>>>(d, n);
	CK(cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost,
			   s1));
	CK(cudaStreamSynchronize(s1));
	printf("still working: h[0]=%d h[n-1]=%d\n", h[0], h[n - 1]);

	CK(cudaEventDestroy(ev));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	CK(cudaFreeHost(h));
	CK(cudaFree(e));
	CK(cudaFree(d));
	return xct_finish("posted_errors");
}
