/* SPDX-License-Identifier: MIT */
/*
 * Streams and events: cudaStreamCreate(WithFlags), cudaEventCreate(WithFlags),
 * cudaEventRecord, cudaStreamQuery/cudaEventQuery while a long kernel runs
 * (cudaErrorNotReady) and after it (cudaSuccess), cudaStreamWaitEvent across
 * streams, cudaEventSynchronize, cudaEventElapsedTime (only whether it is
 * > 0 is printed), cudaMemcpyAsync, cudaStreamSynchronize.
 */
#include "common/xct.h"

__device__ static unsigned long long now_ns(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Spin for ns nanoseconds, then write the values. */
__global__ void slow_producer(int *buf, int n, unsigned long long ns)
{
	if (threadIdx.x == 0) {
		unsigned long long t0 = now_ns();
		while (now_ns() - t0 < ns)
			;
	}
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		buf[i] = i * 3 + 1;
}

__global__ void consumer(const int *in, int *out, int n)
{
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		out[i] = in[i] * 2;
}

int main(void)
{
	CK(cudaSetDevice(0));
	const int n = 4096;
	int *da, *db, *h;
	CK(cudaMalloc(&da, n * sizeof(int)));
	CK(cudaMalloc(&db, n * sizeof(int)));
	CK(cudaMallocHost(&h, n * sizeof(int)));
	CK(cudaMemset(da, 0, n * sizeof(int)));
	CK(cudaMemset(db, 0, n * sizeof(int)));

	cudaStream_t s1, s2;
	cudaEvent_t start, stop, notiming;
	CK(cudaStreamCreate(&s1));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaEventCreate(&start));
	CK(cudaEventCreateWithFlags(&stop, cudaEventDefault));
	CK(cudaEventCreateWithFlags(&notiming, cudaEventDisableTiming));

	/* An event never recorded is complete. */
	EXPECT(cudaSuccess, cudaEventQuery(notiming));
	EXPECT(cudaSuccess, cudaStreamQuery(s1));

	CK(cudaEventRecord(start, s1));
	slow_producer<<<1, 256, 0, s1>>>(da, n, 300ull * 1000 * 1000);
	CKLAUNCH();
	CK(cudaEventRecord(stop, s1));
	/* The kernel spins for 300 ms: neither is done yet. */
	EXPECT(cudaErrorNotReady, cudaStreamQuery(s1));
	EXPECT(cudaErrorNotReady, cudaEventQuery(stop));

	/* s2 must wait for s1's kernel before it reads da. */
	CK(cudaStreamWaitEvent(s2, stop, 0));
	consumer<<<1, 256, 0, s2>>>(da, db, n);
	CKLAUNCH();
	CK(cudaEventRecord(notiming, s2));
	CK(cudaMemcpyAsync(h, db, n * sizeof(int), cudaMemcpyDeviceToHost, s2));
	CK(cudaStreamSynchronize(s2));
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != (i * 3 + 1) * 2;
	printf("consumer after cudaStreamWaitEvent: bad=%d\n", bad);
	REQUIRE(bad == 0, "cudaStreamWaitEvent was not honoured");

	CK(cudaEventSynchronize(stop));
	EXPECT(cudaSuccess, cudaEventQuery(stop));
	EXPECT(cudaSuccess, cudaEventQuery(notiming));
	EXPECT(cudaSuccess, cudaStreamQuery(s1));
	EXPECT(cudaSuccess, cudaStreamQuery(s2));
	float ms = -1.0f;
	CK(cudaEventElapsedTime(&ms, start, stop));
	printf("elapsed > 0: %s\n", ms > 0.0f ? "yes" : "no");
	REQUIRE(ms > 0.0f, "elapsed time");
	EXPECT_ERR(cudaErrorInvalidResourceHandle,
		   cudaEventElapsedTime(&ms, start, notiming));

	/* async copies in both directions, in two streams at once */
	int *h2;
	CK(cudaMallocHost(&h2, n * sizeof(int)));
	for (int i = 0; i < n; i++) {
		h[i] = i ^ 0x5555;
		h2[i] = -i;
	}
	CK(cudaMemcpyAsync(da, h, n * sizeof(int), cudaMemcpyHostToDevice, s1));
	CK(cudaMemcpyAsync(db, h2, n * sizeof(int), cudaMemcpyHostToDevice, s2));
	CK(cudaEventRecord(start, s2));
	CK(cudaStreamWaitEvent(s1, start, 0));
	consumer<<<2, 128, 0, s1>>>(db, da, n); /* da = 2 * db */
	CKLAUNCH();
	CK(cudaMemcpyAsync(h, da, n * sizeof(int), cudaMemcpyDeviceToHost, s1));
	CK(cudaStreamSynchronize(s1));
	bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != -2 * i;
	printf("two streams: bad=%d fnv=%016llx\n", bad,
	       (unsigned long long)xct_fnv(h, n * sizeof(int)));
	REQUIRE(bad == 0, "two streams");

	/* the legacy default stream orders against a blocking stream */
	slow_producer<<<1, 64, 0, s1>>>(da, n, 50ull * 1000 * 1000);
	CKLAUNCH();
	CK(cudaMemcpy(h, da, n * sizeof(int), cudaMemcpyDeviceToHost));
	bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != i * 3 + 1;
	printf("legacy stream ordering: bad=%d\n", bad);
	REQUIRE(bad == 0, "legacy default stream ordering");

	CK(cudaDeviceSynchronize());
	CK(cudaEventDestroy(start));
	CK(cudaEventDestroy(stop));
	CK(cudaEventDestroy(notiming));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	CK(cudaFreeHost(h));
	CK(cudaFreeHost(h2));
	CK(cudaFree(da));
	CK(cudaFree(db));
	return xct_finish("streams_events");
}
