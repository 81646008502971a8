/* SPDX-License-Identifier: MIT */
/*
 * Two host threads use CUDA at the same time, each with its own stream and
 * buffers, and verify their own results; then the per-thread last-error
 * state: an error left pending in one thread is not seen by another.
 */
#include <atomic>
#include <thread>
#include "common/xct.h"

__global__ void step(int *p, int n, int mul, int add)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] = p[i] * mul + add;
}

struct Result {
	cudaError_t err;
	const char *what;
	int bad;
	uint64_t fnv;
};

static std::atomic<int> ready;

#define TCK(r, call)                                  \
	do {                                          \
		cudaError_t e_ = (call);              \
		if (e_ != cudaSuccess) {              \
			(r).err = e_;                 \
			(r).what = #call;             \
			return;                       \
		}                                     \
	} while (0)

static void worker(int id, Result *r)
{
	const int n = 1 << 18, iters = 50;
	r->err = cudaSuccess;
	r->bad = -1;
	/* start together, so that the two threads overlap */
	ready++;
	while (ready.load() < 2)
		std::this_thread::yield();
	TCK(*r, cudaSetDevice(0));
	cudaStream_t s;
	int *d, *h;
	TCK(*r, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	TCK(*r, cudaMalloc(&d, n * sizeof(int)));
	TCK(*r, cudaMallocHost(&h, n * sizeof(int)));
	for (int i = 0; i < n; i++)
		h[i] = i + id;
	int mul = id == 0 ? 3 : 5, add = id == 0 ? 1 : -1;
	for (int it = 0; it < iters; it++) {
		TCK(*r, cudaMemcpyAsync(d, h, n * sizeof(int),
					cudaMemcpyHostToDevice, s));
		step<<<64, 256, 0, s>>>(d, n, mul, add);
		TCK(*r, cudaGetLastError());
		step<<<64, 256, 0, s>>>(d, n, mul, add);
		TCK(*r, cudaGetLastError());
		TCK(*r, cudaMemcpyAsync(h, d, n * sizeof(int),
					cudaMemcpyDeviceToHost, s));
		TCK(*r, cudaStreamSynchronize(s));
		int bad = 0;
		for (int i = 0; i < n; i++) {
			int want = i + id + it;
			want = (want * mul + add) * mul + add;
			bad += h[i] != want;
		}
		if (bad) {
			r->bad = bad;
			return;
		}
		/* the next round starts from i + id + it + 1 */
		for (int i = 0; i < n; i++)
			h[i] = i + id + it + 1;
	}
	r->bad = 0;
	r->fnv = xct_fnv(h, n * sizeof(int));
	TCK(*r, cudaStreamDestroy(s));
	TCK(*r, cudaFree(d));
	TCK(*r, cudaFreeHost(h));
}

static cudaError_t other_thread_err, other_thread_peek;

static void bad_launcher(void)
{
	step<<<1, 4096>>>(nullptr, 0, 1, 1); /* too many threads */
	other_thread_peek = cudaPeekAtLastError();
}

static void error_checker(void)
{
	other_thread_err = cudaGetLastError();
}

int main(void)
{
	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	Result r[2] = {};
	std::thread t0(worker, 0, &r[0]), t1(worker, 1, &r[1]);
	t0.join();
	t1.join();
	for (int i = 0; i < 2; i++) {
		if (r[i].err != cudaSuccess) {
			printf("FAILED thread %d %s: %s\n", i, r[i].what,
			       cudaGetErrorName(r[i].err));
			return 1;
		}
		printf("thread %d: bad=%d fnv=%016llx\n", i, r[i].bad,
		       (unsigned long long)r[i].fnv);
		REQUIRE(r[i].bad == 0, "thread %d results", i);
	}

	/* last-error state is per thread */
	std::thread t2(bad_launcher);
	t2.join();
	printf("other thread's pending error: %s\n",
	       cudaGetErrorName(other_thread_peek));
	EXPECT(cudaSuccess, cudaGetLastError());
	std::thread t3(error_checker);
	t3.join();
	printf("a third thread's cudaGetLastError: %s\n",
	       cudaGetErrorName(other_thread_err));
	if (other_thread_peek != cudaErrorInvalidValue ||
	    other_thread_err != cudaSuccess)
		xct_failures++;
	return xct_finish("threads");
}
