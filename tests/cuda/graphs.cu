/* SPDX-License-Identifier: MIT */
/*
 * Graphs made by stream capture: memsets, kernels, device and pinned-host
 * copies captured on a stream, instantiated, launched many times (the
 * pinned source is rewritten between launches, and the graph reads it
 * anew), cloned, uploaded; an empty graph; the capture status while
 * capturing; what invalidates a capture.  Results and error names only.
 */
#include "common/xct.h"

__global__ void add(int *p, int n, int v)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] += v;
}

__global__ void twice(const int *in, int *out, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		out[i] = 2 * in[i];
}

int main(void)
{
	const int n = 1 << 16;
	int *a, *b, *host, *res;
	cudaStream_t s;
	cudaGraph_t g = NULL, clone = NULL, empty = NULL;
	cudaGraphExec_t ge = NULL, ce = NULL;
	cudaStreamCaptureStatus st;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&a, n * sizeof(int)));
	CK(cudaMalloc(&b, n * sizeof(int)));
	CK(cudaMallocHost(&host, n * sizeof(int)));
	CK(cudaMallocHost(&res, n * sizeof(int)));

	/* Capture: host -> a, a += 3, b = 2a, b += 1, b -> res. */
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaStreamIsCapturing(s, &st));
	printf("capturing: status %d\n", (int)st);
	CK(cudaMemsetAsync(b, 0, n * sizeof(int), s));
	CK(cudaMemcpyAsync(a, host, n * sizeof(int), cudaMemcpyHostToDevice,
			   s));
	add<<<64, 256, 0, s>>>(a, n, 3);
	twice<<<64, 256, 0, s>>>(a, b, n);
	add<<<64, 256, 0, s>>>(b, n, 1);
	CK(cudaMemcpyAsync(res, b, n * sizeof(int), cudaMemcpyDeviceToHost,
			   s));
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaStreamIsCapturing(s, &st));
	printf("after capture: status %d, graph %s\n", (int)st,
	       xct_yes(g != NULL));

	CK(cudaGraphInstantiate(&ge, g, 0));
	unsigned long long fl = 77;
	CK(cudaGraphExecGetFlags(ge, &fl));
	printf("exec flags %llu\n", fl);
	CK(cudaGraphUpload(ge, s));
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < n; i++)
			host[i] = i + round;
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += res[i] != 2 * (i + round + 3) + 1;
		if (bad || round == 9)
			printf("round %d: bad=%d\n", round, bad);
	}

	/* A clone runs the same work. */
	CK(cudaGraphClone(&clone, g));
	CK(cudaGraphInstantiateWithFlags(&ce, clone, 0));
	for (int i = 0; i < n; i++)
		host[i] = -i;
	CK(cudaGraphLaunch(ce, s));
	CK(cudaStreamSynchronize(s));
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += res[i] != 2 * (-i + 3) + 1;
	printf("clone: bad=%d\n", bad);

	/* Many launches in a row, then one synchronisation. */
	for (int i = 0; i < n; i++)
		host[i] = 1;
	for (int k = 0; k < 200; k++)
		CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("200 launches: res[7] = %d\n", res[7]);

	/* An empty graph instantiates and launches. */
	CK(cudaGraphCreate(&empty, 0));
	cudaGraphExec_t ee;
	CK(cudaGraphInstantiate(&ee, empty, 0));
	CK(cudaGraphLaunch(ee, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(ee));
	CK(cudaGraphDestroy(empty));

	/* Synchronising a capturing stream invalidates the capture. */
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
	add<<<1, 32, 0, s>>>(a, 32, 1);
	printf("cudaStreamSynchronize(capturing) -> %s\n",
	       cudaGetErrorName(cudaStreamSynchronize(s)));
	cudaGetLastError();
	cudaGraph_t bad_graph = NULL;
	printf("cudaStreamEndCapture(invalidated) -> %s, graph %s\n",
	       cudaGetErrorName(cudaStreamEndCapture(s, &bad_graph)),
	       xct_yes(bad_graph != NULL));
	cudaGetLastError();
	printf("cudaStreamEndCapture(not capturing) -> %s\n",
	       cudaGetErrorName(cudaStreamEndCapture(s, &bad_graph)));
	cudaGetLastError();
	printf("cudaStreamBeginCapture(legacy stream) -> %s\n",
	       cudaGetErrorName(cudaStreamBeginCapture(
		       0, cudaStreamCaptureModeGlobal)));
	cudaGetLastError();
	printf("cudaGraphInstantiate(NULL graph) -> %s\n",
	       cudaGetErrorName(cudaGraphInstantiate(&ee, NULL, 0)));
	cudaGetLastError();

	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphExecDestroy(ce));
	CK(cudaGraphDestroy(g));
	CK(cudaGraphDestroy(clone));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFreeHost(host));
	CK(cudaFreeHost(res));
	CK(cudaStreamDestroy(s));
	return xct_finish("graphs");
}
