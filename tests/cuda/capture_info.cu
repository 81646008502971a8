/* SPDX-License-Identifier: MIT */
/*
 * Queries of a stream capture: cudaStreamGetCaptureInfo while kernels
 * are captured on one stream and forked onto another (status, id,
 * dependency counts, the graph under capture counted and then ended),
 * cudaStreamUpdateCaptureDependencies, cudaStreamBeginCaptureToGraph
 * into a graph that has a node already, cudaThreadExchangeStreamCaptureMode
 * there and back, a relaxed capture around a cudaMalloc, copies from and
 * to pageable memory captured (the graph launched several times with the
 * memory changing in between), and the end of a capture without pGraph.
 * Counts, results and error names only.
 */
#include "common/xct.h"

__global__ void addk(int *p, int n, int k)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] += k;
}

static const int N = 1024;

static size_t count_nodes(cudaGraph_t g)
{
	size_t n = 0;

	CK(cudaGraphGetNodes(g, NULL, &n));
	return n;
}

static void info(cudaStream_t s, const char *what, unsigned long long *id,
		 cudaGraph_t *graph, const cudaGraphNode_t **deps)
{
	cudaStreamCaptureStatus st;
	const cudaGraphEdgeData *ed = NULL;
	const cudaGraphNode_t *d = NULL;
	size_t n = 99;

	CK(cudaStreamGetCaptureInfo(s, &st, id, graph, &d, &ed, &n));
	if (st != cudaStreamCaptureStatusActive) {
		printf("%s: status %d\n", what, (int)st);
		return;
	}
	int ports = 0;
	for (size_t i = 0; ed && i < n; i++)
		ports += ed[i].from_port + ed[i].to_port + ed[i].type;
	printf("%s: status %d, id %s, graph %s, %zu dependencies%s, "
	       "ports %d\n", what, (int)st, xct_yes(id && *id != 0),
	       xct_yes(graph && *graph != NULL), n,
	       n ? (d ? " (listed)" : " (NOT listed)") : "", ports);
	if (deps)
		*deps = d;
}

static int check(const int *d, int want)
{
	int h[N], bad = 0;

	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		bad += h[i] != want;
	return bad;
}

int main(void)
{
	cudaStream_t s, s2;
	cudaEvent_t fork, join;
	int *a, *b, *c;
	unsigned long long id = 0, id2 = 0;
	cudaGraph_t cg = NULL, cg2 = NULL, g = NULL;
	cudaGraphExec_t ge;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
	CK(cudaMalloc(&a, N * sizeof(int)));
	CK(cudaMalloc(&b, N * sizeof(int)));
	CK(cudaMemset(a, 0, N * sizeof(int)));
	CK(cudaMemset(b, 0, N * sizeof(int)));
	CK(cudaMalloc(&c, N * sizeof(int)));
	CK(cudaMemset(c, 0, N * sizeof(int)));
	/* Known to the runtime before any capture. */
	addk<<<4, 256, 0, s>>>(a, N, 0);
	CKLAUNCH();
	CK(cudaStreamSynchronize(s));

	info(s, "before capture", &id, NULL, NULL);

	/* ---- a capture with a fork and a join ---- */
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	info(s, "begun", &id, &cg, NULL);
	printf("graph under capture has %zu nodes\n", count_nodes(cg));
	addk<<<4, 256, 0, s>>>(a, N, 1);
	CKLAUNCH();
	info(s, "one kernel", &id, &cg, NULL);
	addk<<<4, 256, 0, s>>>(a, N, 2);
	CKLAUNCH();
	info(s, "two kernels", &id, &cg, NULL);
	CK(cudaEventRecord(fork, s));
	CK(cudaStreamWaitEvent(s2, fork, 0));
	info(s2, "forked stream", &id2, &cg2, NULL);
	printf("same capture: id %s, graph %s\n", xct_yes(id == id2),
	       xct_yes(cg == cg2));
	addk<<<4, 256, 0, s2>>>(b, N, 10);
	CKLAUNCH();
	addk<<<4, 256, 0, s>>>(a, N, 4);
	CKLAUNCH();
	CK(cudaEventRecord(join, s2));
	CK(cudaStreamWaitEvent(s, join, 0));
	const cudaGraphNode_t *deps = NULL;
	info(s, "joined", &id, &cg, &deps);
	printf("graph under capture has %zu nodes\n", count_nodes(cg));

	/* Only the first dependency from here on. */
	cudaGraphNode_t two[2] = { deps ? deps[0] : NULL,
				   deps ? deps[1] : NULL };
	cudaGraphNode_t keep = two[0];
	cudaGraphNodeType t;
	CK(cudaGraphNodeGetType(keep, &t));
	printf("first dependency's type %d\n", (int)t);
	CK(cudaStreamUpdateCaptureDependencies(
		s, &keep, NULL, 1, cudaStreamSetCaptureDependencies));
	info(s, "set to one", &id, &cg, &deps);
	printf("it is the one kept: %s\n", xct_yes(deps && deps[0] == keep));
	addk<<<4, 256, 0, s>>>(c, N, 100);
	CKLAUNCH();
	CK(cudaStreamEndCapture(s, &g));
	printf("ended: the graph under capture %s, %zu nodes\n",
	       xct_yes(g == cg), count_nodes(g));
	info(s, "after the end", &id, NULL, NULL);
	/* The dependencies are nodes of the graph, kernels of ours. */
	int ksum = 0, kernels = 0;
	for (int i = 0; i < 2; i++) {
		cudaKernelNodeParams kp;

		CK(cudaGraphKernelNodeGetParams(two[i], &kp));
		kernels += kp.func == (void *)addk;
		ksum += *(int *)kp.kernelParams[2];
	}
	printf("dependencies: %d addk kernels, k sum %d\n", kernels, ksum);
	size_t roots = 0;
	CK(cudaGraphGetRootNodes(g, NULL, &roots));
	printf("roots %zu\n", roots);
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("captured graph: a bad %d, b bad %d, c bad %d\n",
	       check(a, 7), check(b, 10), check(c, 100));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));

	/* ---- capturing into a graph that has a node ---- */
	cudaGraph_t mine, got = NULL;
	cudaGraphNode_t m;
	cudaMemsetParams mp;
	memset(&mp, 0, sizeof(mp));
	mp.dst = a;
	mp.value = 0;
	mp.elementSize = 4;
	mp.width = N;
	mp.height = 1;
	CK(cudaGraphCreate(&mine, 0));
	CK(cudaGraphAddMemsetNode(&m, mine, NULL, 0, &mp));
	CK(cudaStreamBeginCaptureToGraph(s, mine, &m, NULL, 1,
					 cudaStreamCaptureModeGlobal));
	cudaGraph_t under = NULL;
	info(s, "capturing into a graph", &id, &under, NULL);
	printf("it is mine: %s\n", xct_yes(under == mine));
	addk<<<4, 256, 0, s>>>(a, N, 9);
	CKLAUNCH();
	CK(cudaStreamEndCapture(s, &got));
	printf("ended into mine: %s, %zu nodes\n", xct_yes(got == mine),
	       count_nodes(mine));
	size_t nd = 0;
	cudaGraphNode_t ns[4];
	nd = 4;
	CK(cudaGraphGetRootNodes(mine, ns, &nd));
	printf("root is the memset: %s\n", xct_yes(nd == 1 && ns[0] == m));
	CK(cudaGraphInstantiate(&ge, mine, 0));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("memset then kernel: a bad %d\n", check(a, 9));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(mine));

	/* ---- the thread's capture mode ---- */
	cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
	CK(cudaThreadExchangeStreamCaptureMode(&mode));
	printf("mode was %d\n", (int)mode);
	CK(cudaThreadExchangeStreamCaptureMode(&mode));
	printf("mode was %d\n", (int)mode);

	/* ---- a relaxed capture may allocate ---- */
	int *extra = NULL;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
	EXPECT(cudaSuccess, cudaMalloc(&extra, 64));
	addk<<<4, 256, 0, s>>>(b, N, 1);
	CKLAUNCH();
	info(s, "relaxed", &id, NULL, NULL);
	CK(cudaStreamEndCapture(s, &g));
	printf("relaxed graph: %zu nodes\n", count_nodes(g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("relaxed: b bad %d\n", check(b, 11));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaFree(extra));

	/* ---- queries CUDA refuses ---- */
	SHOW(cudaStreamGetCaptureInfo(s, NULL, NULL, NULL, NULL, NULL, NULL));
	SHOW(cudaStreamUpdateCaptureDependencies(
		s, NULL, NULL, 0, cudaStreamSetCaptureDependencies));

	/* ---- copies of pageable memory captured ---- */
	int *hin = (int *)malloc(N * sizeof(int));
	int *hout = (int *)malloc(N * sizeof(int));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMemcpyAsync(a, hin, N * sizeof(int), cudaMemcpyHostToDevice,
			   s));
	addk<<<4, 256, 0, s>>>(a, N, 2);
	CKLAUNCH();
	CK(cudaMemcpyAsync(hout, a, N * sizeof(int), cudaMemcpyDeviceToHost,
			   s));
	CK(cudaStreamEndCapture(s, &g));
	printf("pageable capture: %zu nodes\n", count_nodes(g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int l = 0; l < 3; l++) {
		for (int i = 0; i < N; i++)
			hin[i] = i * (l + 3);
		memset(hout, 0, N * sizeof(int));
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		int bad = 0;
		for (int i = 0; i < N; i++)
			bad += hout[i] != i * (l + 3) + 2;
		printf("pageable launch %d: bad %d\n", l, bad);
	}
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	free(hin);
	free(hout);

	/* ---- the end of a capture without pGraph ---- */
	cudaGraph_t own;
	CK(cudaGraphCreate(&own, 0));
	CK(cudaStreamBeginCaptureToGraph(s, own, NULL, NULL, 0,
					 cudaStreamCaptureModeGlobal));
	addk<<<4, 256, 0, s>>>(c, N, 5);
	CKLAUNCH();
	CK(cudaStreamEndCapture(s, NULL));
	printf("captured into mine, no pGraph: %zu nodes\n",
	       count_nodes(own));
	CK(cudaGraphDestroy(own));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	addk<<<4, 256, 0, s>>>(c, N, 5);
	CKLAUNCH();
	SHOW(cudaStreamEndCapture(s, NULL));
	cudaStreamCaptureStatus cst = cudaStreamCaptureStatusNone;
	cudaError_t ce = cudaStreamIsCapturing(s, &cst);
	printf("after it: %s, status %d\n", cudaGetErrorName(ce), (int)cst);
	if (cst != cudaStreamCaptureStatusNone) {
		cudaGraph_t left = NULL;

		ce = cudaStreamEndCapture(s, &left);
		printf("ended: %s, graph %s\n", cudaGetErrorName(ce),
		       xct_yes(left != NULL));
		if (left)
			CK(cudaGraphDestroy(left));
	}
	cudaGetLastError();

	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	CK(cudaEventDestroy(fork));
	CK(cudaEventDestroy(join));
	CK(cudaStreamDestroy(s));
	CK(cudaStreamDestroy(s2));
	return xct_finish("capture_info");
}
