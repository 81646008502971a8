/* SPDX-License-Identifier: MIT */
/*
 * Host functions: cudaLaunchHostFunc and cudaStreamAddCallback run in
 * stream order (after the kernels and copies before them, before those
 * after them), on a thread that is not the caller's; a stream waits while
 * its function runs and other streams go on; a callback gets its stream,
 * the status and its data; functions on many streams, on the legacy and
 * the per-thread default streams; a host function captured into a graph
 * runs at each launch; what CUDA refuses.  Results and error names only.
 */
#include <pthread.h>
#include <unistd.h>

#include "common/xct.h"

__global__ void fill(int *p, int n, int k)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] = i * k;
}

__global__ void add(int *p, int n, int v)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] += v;
}

static const int N = 4096;
static pthread_t main_thread;
static int seq;			/* order in which host functions ran */
static int on_caller;		/* one ran on the main thread */

static void note_thread(void)
{
	if (pthread_equal(pthread_self(), main_thread))
		__atomic_store_n(&on_caller, 1, __ATOMIC_SEQ_CST);
}

/* ---- order relative to kernels and copies ---- */

struct sum_job {
	const int *host;	/* pinned, copied back before us */
	long long sum;
	int order;
};

static void CUDART_CB sum_fn(void *data)
{
	struct sum_job *j = (struct sum_job *)data;

	note_thread();
	j->sum = 0;
	for (int i = 0; i < N; i++)
		j->sum += j->host[i];
	j->order = __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST);
}

static void test_order(void)
{
	struct sum_job jobs[3];
	cudaStream_t s;
	int *d, *h[3];

	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&d, N * sizeof(int)));
	for (int k = 0; k < 3; k++) {
		CK(cudaMallocHost(&h[k], N * sizeof(int)));
		memset(h[k], 0, N * sizeof(int));
		jobs[k].host = h[k];
		jobs[k].sum = -1;
		jobs[k].order = 0;
	}
	/* The same device buffer each time: each function sees its own k. */
	for (int k = 0; k < 3; k++) {
		fill<<<16, 256, 0, s>>>(d, N, k + 1);
		CKLAUNCH();
		CK(cudaMemcpyAsync(h[k], d, N * sizeof(int),
				   cudaMemcpyDeviceToHost, s));
		CK(cudaLaunchHostFunc(s, sum_fn, &jobs[k]));
	}
	CK(cudaStreamSynchronize(s));
	for (int k = 0; k < 3; k++)
		printf("order: k=%d sum %lld, ran #%d\n", k + 1, jobs[k].sum,
		       jobs[k].order);
	for (int k = 0; k < 3; k++)
		CK(cudaFreeHost(h[k]));
	CK(cudaFree(d));
	CK(cudaStreamDestroy(s));
}

/* ---- the stream waits for its host function ---- */

static int slept;	/* set by the sleeper when it returns */

static void CUDART_CB sleeper(void *data)
{
	int *pinned = (int *)data;

	note_thread();
	usleep(50 * 1000);
	/* Copied to the device by the copy enqueued after us. */
	*pinned = 4321;
	__atomic_store_n(&slept, 1, __ATOMIC_SEQ_CST);
}

static void test_blocking(void)
{
	cudaStream_t s;
	int *pinned, *back, *d;

	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&d, sizeof(int)));
	CK(cudaMallocHost(&pinned, sizeof(int)));
	CK(cudaMallocHost(&back, sizeof(int)));
	*pinned = 1;
	*back = 0;
	CK(cudaLaunchHostFunc(s, sleeper, pinned));
	CK(cudaMemcpyAsync(d, pinned, sizeof(int), cudaMemcpyHostToDevice, s));
	add<<<1, 1, 0, s>>>(d, 1, 1);
	CKLAUNCH();
	CK(cudaMemcpyAsync(back, d, sizeof(int), cudaMemcpyDeviceToHost, s));
	EXPECT(cudaErrorNotReady, cudaStreamQuery(s));
	printf("blocking: returned before the sleeper: %s\n",
	       xct_yes(!__atomic_load_n(&slept, __ATOMIC_SEQ_CST)));
	CK(cudaStreamSynchronize(s));
	printf("blocking: after sync: slept %s, device saw %d\n",
	       xct_yes(__atomic_load_n(&slept, __ATOMIC_SEQ_CST)), *back);
	EXPECT(cudaSuccess, cudaStreamQuery(s));
	CK(cudaFreeHost(pinned));
	CK(cudaFreeHost(back));
	CK(cudaFree(d));
	CK(cudaStreamDestroy(s));
}

/* ---- other streams go on while one waits ---- */

static void CUDART_CB long_sleeper(void *data)
{
	(void)data;
	note_thread();
	usleep(400 * 1000);
}

static void test_other_streams(void)
{
	cudaStream_t a, b;
	int *d, v = 0;

	CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	CK(cudaMalloc(&d, sizeof(int)));
	CK(cudaMemsetAsync(d, 0, sizeof(int), b));
	CK(cudaLaunchHostFunc(a, long_sleeper, NULL));
	add<<<1, 1, 0, b>>>(d, 1, 7);
	CKLAUNCH();
	CK(cudaStreamSynchronize(b));
	CK(cudaMemcpy(&v, d, sizeof(int), cudaMemcpyDeviceToHost));
	printf("other streams: b done with %d while a waits\n", v);
	EXPECT(cudaErrorNotReady, cudaStreamQuery(a));
	CK(cudaStreamSynchronize(a));
	EXPECT(cudaSuccess, cudaStreamQuery(a));
	CK(cudaFree(d));
	CK(cudaStreamDestroy(a));
	CK(cudaStreamDestroy(b));
}

/* ---- cudaStreamAddCallback's arguments ---- */

struct cb_seen {
	cudaStream_t want;
	int calls;
	int same_stream;
	cudaError_t status;
};

static void CUDART_CB stream_cb(cudaStream_t stream, cudaError_t status,
				void *data)
{
	struct cb_seen *c = (struct cb_seen *)data;

	note_thread();
	c->calls++;
	c->same_stream = stream == c->want;
	c->status = status;
}

static void test_add_callback(void)
{
	struct cb_seen c = { NULL, 0, 0, cudaErrorUnknown };
	cudaStream_t s;
	int *d;

	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&d, N * sizeof(int)));
	c.want = s;
	fill<<<16, 256, 0, s>>>(d, N, 3);
	CKLAUNCH();
	CK(cudaStreamAddCallback(s, stream_cb, &c, 0));
	CK(cudaStreamSynchronize(s));
	printf("callback: calls %d, its stream %s, status %s\n", c.calls,
	       xct_yes(c.same_stream), cudaGetErrorName(c.status));
	/* Flags are reserved: CUDA's own answer. */
	SHOW(cudaStreamAddCallback(s, stream_cb, &c, 1));
	CK(cudaStreamSynchronize(s));
	printf("callback: calls %d after the refused one\n", c.calls);
	CK(cudaFree(d));
	CK(cudaStreamDestroy(s));
}

/* ---- many streams ---- */

static int counts[4];

static void CUDART_CB count_fn(void *data)
{
	int i = (int)(uintptr_t)data;

	note_thread();
	__atomic_add_fetch(&counts[i], i + 1, __ATOMIC_SEQ_CST);
}

static void test_many_streams(void)
{
	cudaStream_t s[4];
	int *d;

	CK(cudaMalloc(&d, 4 * N * sizeof(int)));
	for (int i = 0; i < 4; i++)
		CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
	for (int r = 0; r < 10; r++) {
		for (int i = 0; i < 4; i++) {
			add<<<4, 128, 0, s[i]>>>(d + i * N, N, 1);
			CKLAUNCH();
			CK(cudaLaunchHostFunc(s[i], count_fn,
					      (void *)(uintptr_t)i));
		}
	}
	CK(cudaDeviceSynchronize());
	printf("many streams: counts %d %d %d %d\n", counts[0], counts[1],
	       counts[2], counts[3]);
	for (int i = 0; i < 4; i++)
		CK(cudaStreamDestroy(s[i]));
	CK(cudaFree(d));
}

/* ---- the default streams ---- */

static void test_default_streams(void)
{
	struct cb_seen c = { NULL, 0, 0, cudaErrorUnknown };

	memset(counts, 0, sizeof(counts));
	CK(cudaLaunchHostFunc(0, count_fn, (void *)(uintptr_t)0));
	CK(cudaLaunchHostFunc(cudaStreamLegacy, count_fn,
			      (void *)(uintptr_t)1));
	CK(cudaLaunchHostFunc(cudaStreamPerThread, count_fn,
			      (void *)(uintptr_t)2));
	CK(cudaStreamAddCallback(0, stream_cb, &c, 0));
	CK(cudaStreamAddCallback(cudaStreamPerThread, stream_cb, &c, 0));
	CK(cudaStreamSynchronize(0));
	CK(cudaStreamSynchronize(cudaStreamPerThread));
	printf("default streams: counts %d %d %d, callbacks %d, status %s\n",
	       counts[0], counts[1], counts[2], c.calls,
	       cudaGetErrorName(c.status));
}

/* ---- a graph captured with a host function ---- */

struct graph_job {
	const int *host;
	int runs;
	long long total;
};

static void CUDART_CB graph_fn(void *data)
{
	struct graph_job *j = (struct graph_job *)data;

	note_thread();
	j->runs++;
	for (int i = 0; i < N; i++)
		j->total += j->host[i];
}

static void test_graph(void)
{
	struct graph_job j = { NULL, 0, 0 };
	cudaGraph_t g = NULL;
	cudaGraphExec_t ge = NULL;
	cudaStream_t s;
	int *d, *h;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&d, N * sizeof(int)));
	CK(cudaMallocHost(&h, N * sizeof(int)));
	j.host = h;
	CK(cudaMemset(d, 0, N * sizeof(int)));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	add<<<16, 256, 0, s>>>(d, N, 2);
	CKLAUNCH();
	CK(cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s));
	CK(cudaLaunchHostFunc(s, graph_fn, &j));
	CK(cudaStreamEndCapture(s, &g));
	printf("graph: runs during capture %d\n", j.runs);
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int i = 0; i < 3; i++)
		CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("graph: launched 3 times, host function ran %d times, "
	       "total %lld\n", j.runs, j.total);
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));

	/* cudaStreamAddCallback while capturing: CUDA's answer. */
	struct cb_seen c = { s, 0, 0, cudaErrorUnknown };
	g = NULL;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	SHOW(cudaStreamAddCallback(s, stream_cb, &c, 0));
	cudaError_t e = cudaStreamEndCapture(s, &g);
	printf("graph: capture with a callback ended: %s, graph %s\n",
	       cudaGetErrorName(e), xct_yes(g != NULL));
	cudaGetLastError();
	if (g) {
		CK(cudaGraphInstantiate(&ge, g, 0));
		CK(cudaGraphLaunch(ge, s));
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		CK(cudaGraphExecDestroy(ge));
		CK(cudaGraphDestroy(g));
	}
	CK(cudaStreamSynchronize(s));
	printf("graph: callback calls %d\n", c.calls);
	CK(cudaFreeHost(h));
	CK(cudaFree(d));
	CK(cudaStreamDestroy(s));
}

int main(void)
{
	main_thread = pthread_self();
	CK(cudaSetDevice(0));
	test_order();
	test_blocking();
	test_other_streams();
	test_add_callback();
	test_many_streams();
	test_default_streams();
	test_graph();
	printf("a host function ran on the calling thread: %s\n",
	       xct_yes(__atomic_load_n(&on_caller, __ATOMIC_SEQ_CST)));
	return xct_finish("host_callbacks");
}
