/* SPDX-License-Identifier: MIT */
/*
 * The explicit graph API: a diamond (memset -> two kernels -> copy into
 * pinned memory) built node by node, its nodes, edges, types and
 * dependencies counted, instantiated and launched, kernel parameters
 * changed in the executable graph, an update from a clone with new
 * parameters and one from a graph of another shape, a child graph, event
 * record and wait nodes across two graphs, memory allocation and free
 * nodes, nodes disabled and enabled, a conditional WHILE loop, nodes of
 * the generic form with their parameters set in the graph and in the
 * executable graph, the dot print, and what CUDA refuses; host nodes in a
 * diamond with their parameters read and set, in the graph and in the
 * executable graph; user objects whose destructors run once their graphs
 * are gone; copy nodes that name pageable memory, launched several times
 * with the memory changing in between, and large ones in graphs kept
 * together and in graphs made and destroyed many times over; copy nodes
 * to and from a __device__ array at an offset, from pinned and from
 * pageable memory, their parameters changed in the graph and in the
 * executable graph; kernel node attributes (priority, an access policy
 * window) set, read back and copied to another node; copy nodes into
 * and out of a CUDA array, from pinned, device and pageable memory.  Counts, types, results and error names
 * only.
 */
#include <unistd.h>

#include "common/xct.h"

__global__ void fill(int *p, int n, int k)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] = i * k;
}

__global__ void addk(int *p, int n, int k)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] += k;
}

__global__ void twice_of(const int *src, int *dst)
{
	dst[0] = 2 * src[0];
}

__device__ int sym[64];

/* sym[i] += k for i in [16, 48): the part the symbol copies touch. */
__global__ void sym_add(int k)
{
	int i = 16 + blockIdx.x * blockDim.x + threadIdx.x;

	if (i < 48)
		sym[i] += k;
}

/* The WHILE body: count, and go on while the count is below 5. */
__global__ void loop_body(cudaGraphConditionalHandle h, int *counter)
{
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		int c = ++counter[0];

		cudaGraphSetConditional(h, c < 5 ? 1 : 0);
	}
}

static const int N = 4096;

static int check_diamond(const int *h, int k1, int k2)
{
	int bad = 0;

	for (int i = 0; i < N; i++) {
		bad += h[i] != i * k1;
		bad += h[N + i] != k2;
	}
	return bad;
}

static cudaKernelNodeParams kparams(void *func, void **args)
{
	cudaKernelNodeParams p = {};

	p.func = func;
	p.gridDim = dim3(16);
	p.blockDim = dim3(128);
	p.sharedMemBytes = 0;
	p.kernelParams = args;
	p.extra = NULL;
	return p;
}

static size_t count_nodes(cudaGraph_t g)
{
	size_t n = 0;

	CK(cudaGraphGetNodes(g, NULL, &n));
	return n;
}

/* ---- host nodes ---- */

struct hsum {
	const int *p;
	int n;
	long long sum;
	int calls;
};

static void CUDART_CB sum_host(void *d)
{
	struct hsum *h = (struct hsum *)d;
	long long t = 0;

	for (int i = 0; i < h->n; i++)
		t += h->p[i];
	h->sum = t;
	h->calls++;
}

static void CUDART_CB count_host(void *d)
{
	++*(int *)d;
}

static void host_nodes(cudaStream_t s, int *dev, int *pin)
{
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t nset, nk, ncp, nmark, nsum, two[2];
	const int n = 1024;
	int k = 5, marks = 0;
	struct hsum h1 = { pin, n, 0, 0 }, h2 = h1, h3 = h1;

	/* memset -> {kernel -> copy, mark} -> sum */
	CK(cudaGraphCreate(&g, 0));
	cudaMemsetParams mp;
	memset(&mp, 0, sizeof(mp));
	mp.dst = dev;
	mp.value = 0;
	mp.elementSize = 4;
	mp.width = n;
	mp.height = 1;
	CK(cudaGraphAddMemsetNode(&nset, g, NULL, 0, &mp));
	int nn = n;
	void *args[] = { &dev, &nn, &k };
	cudaKernelNodeParams kp = kparams((void *)addk, args);
	CK(cudaGraphAddKernelNode(&nk, g, &nset, 1, &kp));
	CK(cudaGraphAddMemcpyNode1D(&ncp, g, &nk, 1, pin, dev,
				    n * sizeof(int), cudaMemcpyDeviceToHost));
	cudaHostNodeParams hm = { count_host, &marks };
	CK(cudaGraphAddHostNode(&nmark, g, &nset, 1, &hm));
	cudaHostNodeParams hs = { sum_host, &h1 };
	two[0] = ncp;
	two[1] = nmark;
	CK(cudaGraphAddHostNode(&nsum, g, two, 2, &hs));
	cudaGraphNodeType t;
	CK(cudaGraphNodeGetType(nsum, &t));
	printf("host diamond: %zu nodes, sum node type %d\n", count_nodes(g),
	       (int)t);

	cudaHostNodeParams got = {};
	CK(cudaGraphHostNodeGetParams(nsum, &got));
	printf("host params: fn %s, data %s\n",
	       xct_yes(got.fn == sum_host), xct_yes(got.userData == &h1));

	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int i = 0; i < 3; i++) {
		k = 5 + i;
		void *a2[] = { &dev, &nn, &k };
		cudaKernelNodeParams kp2 = kparams((void *)addk, a2);
		CK(cudaGraphExecKernelNodeSetParams(ge, nk, &kp2));
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		printf("host launch %d: sum %lld, calls %d, marks %d\n", i,
		       h1.sum, h1.calls, marks);
	}

	/* In the graph: the executable graph keeps what it was given. */
	cudaHostNodeParams set2 = { sum_host, &h2 };
	CK(cudaGraphHostNodeSetParams(nsum, &set2));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("graph's node set: h1 calls %d, h2 calls %d\n", h1.calls,
	       h2.calls);
	CK(cudaGraphHostNodeGetParams(nsum, &got));
	printf("graph's node now h2: %s\n", xct_yes(got.userData == &h2));

	/* In the executable graph. */
	cudaHostNodeParams set3 = { sum_host, &h3 };
	CK(cudaGraphExecHostNodeSetParams(ge, nsum, &set3));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("exec's node set: h1 calls %d, h3 calls %d, h3 sum %lld\n",
	       h1.calls, h3.calls, h3.sum);
	CK(cudaGraphHostNodeGetParams(nsum, &got));
	printf("the graph's node stays h2: %s\n",
	       xct_yes(got.userData == &h2));

	/* The generic form. */
	cudaGraphNodeParams np = {};
	np.type = cudaGraphNodeTypeHost;
	np.host.fn = count_host;
	np.host.userData = &marks;
	cudaGraphNode_t ngen;
	CK(cudaGraphAddNode(&ngen, g, &nsum, NULL, 1, &np));
	cudaGraphExec_t ge2;
	CK(cudaGraphInstantiate(&ge2, g, 0));
	marks = 0;
	CK(cudaGraphLaunch(ge2, s));
	CK(cudaGraphLaunch(ge2, s));
	CK(cudaStreamSynchronize(s));
	printf("generic host node: %zu nodes, marks %d, h2 calls %d\n",
	       count_nodes(g), marks, h2.calls);

	/* A clone's host node is the same function. */
	cudaGraph_t cl;
	cudaGraphNode_t cn;
	CK(cudaGraphClone(&cl, g));
	CK(cudaGraphNodeFindInClone(&cn, nsum, cl));
	CK(cudaGraphHostNodeGetParams(cn, &got));
	printf("clone's host node: fn %s, data h2 %s\n",
	       xct_yes(got.fn == sum_host), xct_yes(got.userData == &h2));

	/* What CUDA refuses. */
	cudaHostNodeParams none = { NULL, &marks };
	cudaGraphNode_t bad;
	SHOW(cudaGraphAddHostNode(&bad, g, NULL, 0, &none));
	SHOW(cudaGraphHostNodeGetParams(nk, &got));
	printf("nodes after the refusals: %zu\n", count_nodes(g));

	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphExecDestroy(ge2));
	CK(cudaGraphDestroy(cl));
	CK(cudaGraphDestroy(g));
}

/* ---- user objects ---- */

static int uo_flag[3];

static void CUDART_CB uo_destroy(void *p)
{
	__atomic_store_n((int *)p, 1, __ATOMIC_RELEASE);
}

/* Destructors run asynchronously: wait for one up to a second. */
static const char *uo_ran(int i)
{
	for (int t = 0; t < 1000; t++) {
		if (__atomic_load_n(&uo_flag[i], __ATOMIC_ACQUIRE))
			return "yes";
		usleep(1000);
	}
	return "no";
}

static void user_objects(cudaStream_t s)
{
	cudaUserObject_t uo, uo2;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t ne;

	CK(cudaUserObjectCreate(&uo, &uo_flag[0], uo_destroy, 1,
				cudaUserObjectNoDestructorSync));
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddEmptyNode(&ne, g, NULL, 0));
	CK(cudaGraphRetainUserObject(g, uo, 1, cudaGraphUserObjectMove));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("user object after a launch: destroyed %d\n",
	       __atomic_load_n(&uo_flag[0], __ATOMIC_ACQUIRE));
	CK(cudaGraphDestroy(g));
	CK(cudaDeviceSynchronize());
	printf("after the graph went, the exec holds it: destroyed %d\n",
	       __atomic_load_n(&uo_flag[0], __ATOMIC_ACQUIRE));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaDeviceSynchronize());
	printf("after the exec went: destructor ran %s\n", uo_ran(0));

	/* References of the program's own. */
	CK(cudaUserObjectCreate(&uo2, &uo_flag[1], uo_destroy, 2,
				cudaUserObjectNoDestructorSync));
	CK(cudaUserObjectRetain(uo2, 3));
	CK(cudaUserObjectRelease(uo2, 4));
	CK(cudaDeviceSynchronize());
	printf("one reference left: destroyed %d\n",
	       __atomic_load_n(&uo_flag[1], __ATOMIC_ACQUIRE));
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphRetainUserObject(g, uo2, 1, 0));
	CK(cudaGraphReleaseUserObject(g, uo2, 1));
	CK(cudaDeviceSynchronize());
	printf("the graph's reference released: destroyed %d\n",
	       __atomic_load_n(&uo_flag[1], __ATOMIC_ACQUIRE));
	CK(cudaGraphRetainUserObject(g, uo2, 1, 0));
	CK(cudaUserObjectRelease(uo2, 1));
	CK(cudaDeviceSynchronize());
	printf("the graph holds the last: destroyed %d\n",
	       __atomic_load_n(&uo_flag[1], __ATOMIC_ACQUIRE));
	CK(cudaGraphDestroy(g));
	CK(cudaDeviceSynchronize());
	printf("the graph went: destructor ran %s\n", uo_ran(1));

	/* What CUDA refuses. */
	cudaUserObject_t bad;
	SHOW(cudaUserObjectCreate(&bad, &uo_flag[2], NULL, 1,
				  cudaUserObjectNoDestructorSync));
}

/* ---- copy nodes that name pageable memory ---- */

static void pageable_nodes(cudaStream_t s, int *dev)
{
	const int n = 2048;
	int *in = (int *)malloc(n * sizeof(int));
	int *out = (int *)malloc(n * sizeof(int));
	int *out3 = (int *)calloc(4 * 64, sizeof(int));
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t nin, nk, nout, n3;
	int k = 1, nn = n;

	/* pageable -> dev, +k, dev -> pageable (1D), then a 2D piece. */
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddMemcpyNode1D(&nin, g, NULL, 0, dev, in,
				    n * sizeof(int), cudaMemcpyHostToDevice));
	void *args[] = { &dev, &nn, &k };
	cudaKernelNodeParams kp = kparams((void *)addk, args);
	CK(cudaGraphAddKernelNode(&nk, g, &nin, 1, &kp));
	CK(cudaGraphAddMemcpyNode1D(&nout, g, &nk, 1, out, dev,
				    n * sizeof(int), cudaMemcpyDeviceToHost));
	/* Rows 1 and 2, columns 8 to 15, of a 4 x 64 host matrix. */
	cudaMemcpy3DParms p3;
	memset(&p3, 0, sizeof(p3));
	p3.srcPtr = make_cudaPitchedPtr(dev, 16 * sizeof(int), 16, 2);
	p3.dstPtr = make_cudaPitchedPtr(out3, 64 * sizeof(int), 64, 4);
	p3.dstPos = make_cudaPos(8 * sizeof(int), 1, 0);
	p3.extent = make_cudaExtent(8 * sizeof(int), 2, 1);
	p3.kind = cudaMemcpyDeviceToHost;
	CK(cudaGraphAddMemcpyNode(&n3, g, &nk, 1, &p3));
	size_t cnt = 0;
	CK(cudaGraphGetNodes(g, NULL, &cnt));
	printf("pageable graph: %zu nodes\n", cnt);
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int l = 0; l < 3; l++) {
		for (int i = 0; i < n; i++)
			in[i] = i * (l + 1);
		memset(out3, 0xff, 4 * 64 * sizeof(int));
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		int bad = 0, bad3 = 0;
		for (int i = 0; i < n; i++)
			bad += out[i] != i * (l + 1) + 1;
		for (int r = 0; r < 4; r++)
			for (int c = 0; c < 64; c++) {
				int inside = (r == 1 || r == 2) && c >= 8 &&
					     c < 16;
				int want = inside ?
					((r - 1) * 16 + (c - 8)) * (l + 1) + 1 :
					-1;
				bad3 += out3[r * 64 + c] != want;
			}
		printf("pageable launch %d: bad %d, 2D piece bad %d\n", l, bad,
		       bad3);
	}
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaDeviceSynchronize());
	free(in);
	free(out);
	free(out3);
}

/*
 * A graph of 48 MiB pageable copies: @in -> @dev, +@k, @dev -> @out, as
 * an executable graph (the graph itself goes).
 */
static cudaGraphExec_t big_graph(int *in, int *out, int *dev, int n, int k)
{
	static int nn, kk[16];
	static int *d;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t nin, nk, nout;
	size_t bytes = (size_t)n * sizeof(int);

	nn = n;
	d = dev;
	kk[k] = k;
	void *args[] = { &d, &nn, &kk[k] };
	cudaKernelNodeParams kp = kparams((void *)addk, args);
	kp.gridDim = dim3(1024);
	kp.blockDim = dim3(256);
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddMemcpyNode1D(&nin, g, NULL, 0, dev, in, bytes,
				    cudaMemcpyHostToDevice));
	CK(cudaGraphAddKernelNode(&nk, g, &nin, 1, &kp));
	CK(cudaGraphAddMemcpyNode1D(&nout, g, &nk, 1, out, dev, bytes,
				    cudaMemcpyDeviceToHost));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphDestroy(g));
	return ge;
}

/* Launches @ge on @in = i and counts the elements of @out not i + @k. */
static int big_run(cudaGraphExec_t ge, cudaStream_t s, int *in, int *out,
		   int n, int k)
{
	int bad = 0;

	for (int i = 0; i < n; i++)
		in[i] = i;
	memset(out, 0, (size_t)n * sizeof(int));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < n; i++)
		bad += out[i] != i + k;
	return bad;
}

/*
 * Large pageable copies: three executable graphs alive at once (288 MiB
 * of copies, as a program that keeps its graphs), then graphs made,
 * launched and destroyed in turn, many times what lives at once.
 */
static void pageable_big(cudaStream_t s)
{
	const int n = 12 << 20;
	int *in = (int *)malloc((size_t)n * sizeof(int));
	int *out = (int *)malloc((size_t)n * sizeof(int));
	cudaGraphExec_t ge[3];
	int *dev;

	REQUIRE(in && out, "out of host memory");
	CK(cudaMalloc(&dev, (size_t)n * sizeof(int)));
	for (int r = 0; r < 3; r++)
		ge[r] = big_graph(in, out, dev, n, r + 1);
	for (int r = 0; r < 3; r++)
		printf("kept big graph %d: bad %d\n", r,
		       big_run(ge[r], s, in, out, n, r + 1));
	for (int r = 0; r < 3; r++)
		CK(cudaGraphExecDestroy(ge[r]));
	for (int r = 0; r < 10; r++) {
		cudaGraphExec_t e = big_graph(in, out, dev, n, 4 + r);

		printf("churned big graph %d: bad %d\n", r,
		       big_run(e, s, in, out, n, 4 + r));
		CK(cudaGraphExecDestroy(e));
	}
	CK(cudaFree(dev));
	free(in);
	free(out);
}

/* ---- copies to and from a symbol ---- */

/*
 * @in -> sym[16..48), +k, sym[16..48) -> @out: launched twice with @in
 * changing in between.  Returns how many values were wrong.
 */
static int sym_graph(cudaStream_t s, int *in, int *out, const char *what,
		     int check_type)
{
	const size_t off = 16 * sizeof(int), cnt = 32 * sizeof(int);
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t nto, nk, nfrom;
	int k = 5, bad = 0;

	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddMemcpyNodeToSymbol(&nto, g, NULL, 0, sym, in, cnt,
					  off, cudaMemcpyHostToDevice));
	void *args[] = { &k };
	cudaKernelNodeParams kp = {};
	kp.func = (void *)sym_add;
	kp.gridDim = dim3(1);
	kp.blockDim = dim3(32);
	kp.kernelParams = args;
	CK(cudaGraphAddKernelNode(&nk, g, &nto, 1, &kp));
	CK(cudaGraphAddMemcpyNodeFromSymbol(&nfrom, g, &nk, 1, out, sym, cnt,
					    off, cudaMemcpyDeviceToHost));
	if (check_type) {
		cudaGraphNodeType t1, t2;

		CK(cudaGraphNodeGetType(nto, &t1));
		CK(cudaGraphNodeGetType(nfrom, &t2));
		printf("symbol nodes (%s): types %s %s\n", what,
		       t1 == cudaGraphNodeTypeMemcpy ? "memcpy" : "other",
		       t2 == cudaGraphNodeTypeMemcpy ? "memcpy" : "other");
	}
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int l = 0; l < 2; l++) {
		int b = 0;

		for (int i = 0; i < 32; i++)
			in[i] = 100 * (l + 1) + i;
		memset(out, 0, cnt);
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		for (int i = 0; i < 32; i++)
			b += out[i] != 100 * (l + 1) + i + k;
		printf("symbol graph (%s) launch %d: bad %d, out[31] %d\n",
		       what, l, b, out[31]);
		bad += b;
	}
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	return bad;
}

static void symbol_nodes(cudaStream_t s)
{
	int zero[64] = { 0 }, all[64];
	int *pin, *pout, *hin, *hout;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t n, nb;

	CK(cudaMemcpyToSymbol(sym, zero, sizeof(zero)));
	CK(cudaMallocHost(&pin, 32 * sizeof(int)));
	CK(cudaMallocHost(&pout, 32 * sizeof(int)));
	sym_graph(s, pin, pout, "pinned", 1);
	hin = (int *)malloc(32 * sizeof(int));
	hout = (int *)malloc(32 * sizeof(int));
	CK(cudaMemcpyToSymbol(sym, zero, sizeof(zero)));
	sym_graph(s, hin, hout, "pageable", 0);
	CK(cudaMemcpyFromSymbol(all, sym, sizeof(all)));
	int outside = 0;
	for (int i = 0; i < 64; i++)
		outside += (i < 16 || i >= 48) && all[i] != 0;
	printf("symbol outside the copies untouched: %s, sym[47] %d\n",
	       xct_yes(outside == 0), all[47]);

	/* Parameters changed: in the graph, then in the executable graph. */
	CK(cudaGraphCreate(&g, 0));
	for (int i = 0; i < 32; i++)
		pin[i] = 7000 + i;
	CK(cudaGraphAddMemcpyNodeToSymbol(&n, g, NULL, 0, sym, pin,
					  8 * sizeof(int), 0,
					  cudaMemcpyHostToDevice));
	CK(cudaGraphMemcpyNodeSetParamsToSymbol(n, sym, pin + 8,
						8 * sizeof(int),
						56 * sizeof(int),
						cudaMemcpyHostToDevice));
	CK(cudaGraphAddMemcpyNodeFromSymbol(&nb, g, &n, 1, pout, sym,
					    8 * sizeof(int), 0,
					    cudaMemcpyDeviceToHost));
	CK(cudaGraphMemcpyNodeSetParamsFromSymbol(nb, pout, sym,
						  8 * sizeof(int),
						  56 * sizeof(int),
						  cudaMemcpyDefault));
	CK(cudaGraphInstantiate(&ge, g, 0));
	memset(pout, 0, 32 * sizeof(int));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("symbol set params: pout[0] %d pout[7] %d\n", pout[0],
	       pout[7]);
	CK(cudaGraphExecMemcpyNodeSetParamsToSymbol(ge, n, sym, pin + 16,
						    8 * sizeof(int),
						    48 * sizeof(int),
						    cudaMemcpyHostToDevice));
	CK(cudaGraphExecMemcpyNodeSetParamsFromSymbol(ge, nb, pout + 8, sym,
						      8 * sizeof(int),
						      48 * sizeof(int),
						      cudaMemcpyDeviceToHost));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("symbol exec set params: pout[8] %d pout[15] %d, pout[0] %d\n",
	       pout[8], pout[15], pout[0]);

	/* What CUDA refuses. */
	cudaGraphNode_t bad;
	SHOW(cudaGraphAddMemcpyNodeToSymbol(&bad, g, NULL, 0, sym, pin,
					    8 * sizeof(int), 60 * sizeof(int),
					    cudaMemcpyHostToDevice));
	SHOW(cudaGraphAddMemcpyNodeFromSymbol(&bad, g, NULL, 0, pout, sym,
					      65 * sizeof(int), 0,
					      cudaMemcpyDeviceToHost));
	SHOW(cudaGraphAddMemcpyNodeToSymbol(&bad, g, NULL, 0, zero, pin,
					    4, 0, cudaMemcpyHostToDevice));
	cudaGetLastError();
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaFreeHost(pin));
	CK(cudaFreeHost(pout));
	free(hin);
	free(hout);
}

/* ---- kernel node attributes ---- */

static void node_attributes(cudaStream_t s, int *dev)
{
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t n1, n2, nm;
	int lo, hi, nn = 1024, k = 2;
	cudaKernelNodeAttrValue v, got;

	CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CK(cudaGraphCreate(&g, 0));
	void *args[] = { &dev, &nn, &k };
	cudaKernelNodeParams kp = kparams((void *)fill, args);
	CK(cudaGraphAddKernelNode(&n1, g, NULL, 0, &kp));
	kp = kparams((void *)addk, args);
	CK(cudaGraphAddKernelNode(&n2, g, &n1, 1, &kp));

	memset(&v, 0, sizeof(v));
	v.priority = hi;
	CK(cudaGraphKernelNodeSetAttribute(n1, cudaLaunchAttributePriority,
					   &v));
	memset(&got, 0, sizeof(got));
	CK(cudaGraphKernelNodeGetAttribute(n1, cudaLaunchAttributePriority,
					   &got));
	printf("node priority: the greatest %s\n",
	       xct_yes(got.priority == hi));

	memset(&v, 0, sizeof(v));
	v.accessPolicyWindow.base_ptr = dev;
	v.accessPolicyWindow.num_bytes = 4096;
	v.accessPolicyWindow.hitRatio = 0.5f;
	v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
	v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
	CK(cudaGraphKernelNodeSetAttribute(
		n1, cudaLaunchAttributeAccessPolicyWindow, &v));
	memset(&got, 0, sizeof(got));
	CK(cudaGraphKernelNodeGetAttribute(
		n1, cudaLaunchAttributeAccessPolicyWindow, &got));
	printf("node window: base %s, %zu bytes, hit ratio %.2f, props %d %d\n",
	       xct_yes(got.accessPolicyWindow.base_ptr == dev),
	       got.accessPolicyWindow.num_bytes,
	       got.accessPolicyWindow.hitRatio,
	       (int)got.accessPolicyWindow.hitProp,
	       (int)got.accessPolicyWindow.missProp);

	/* Copied to the second node. */
	CK(cudaGraphKernelNodeCopyAttributes(n2, n1));
	memset(&got, 0, sizeof(got));
	CK(cudaGraphKernelNodeGetAttribute(n2, cudaLaunchAttributePriority,
					   &got));
	printf("copied priority: the greatest %s\n",
	       xct_yes(got.priority == hi));
	memset(&got, 0, sizeof(got));
	CK(cudaGraphKernelNodeGetAttribute(
		n2, cudaLaunchAttributeAccessPolicyWindow, &got));
	printf("copied window: base %s, %zu bytes, hit ratio %.2f\n",
	       xct_yes(got.accessPolicyWindow.base_ptr == dev),
	       got.accessPolicyWindow.num_bytes,
	       got.accessPolicyWindow.hitRatio);

	/* Still runs as it should. */
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	int h[1024], bad = 0;
	CK(cudaMemcpy(h, dev, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < 1024; i++)
		bad += h[i] != i * k + k;
	printf("attributed graph: bad %d\n", bad);

	/* What CUDA refuses: an id it does not know, a memset node. */
	cudaMemsetParams mp;
	memset(&mp, 0, sizeof(mp));
	mp.dst = dev;
	mp.elementSize = 4;
	mp.width = 16;
	mp.height = 1;
	CK(cudaGraphAddMemsetNode(&nm, g, NULL, 0, &mp));
	SHOW(cudaGraphKernelNodeGetAttribute(n1, (cudaLaunchAttributeID)999,
					     &got));
	SHOW(cudaGraphKernelNodeSetAttribute(n1, (cudaLaunchAttributeID)999,
					     &v));
	SHOW(cudaGraphKernelNodeGetAttribute(nm, cudaLaunchAttributePriority,
					     &got));
	SHOW(cudaGraphKernelNodeCopyAttributes(nm, n1));
	cudaGetLastError();
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
}

/* ---- copy nodes with a CUDA array ---- */

static void array_nodes(cudaStream_t s, int *dev)
{
	cudaChannelFormatDesc d = cudaCreateChannelDesc<int>();
	cudaArray_t arr;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t nin, nout;
	int *pin, src[4 * 64];

	for (int i = 0; i < 4 * 64; i++)
		src[i] = 3 * i + 1;
	CK(cudaMemcpy(dev, src, sizeof(src), cudaMemcpyHostToDevice));
	CK(cudaMallocHost(&pin, 2 * 64 * sizeof(int)));
	CK(cudaMallocArray(&arr, &d, 64, 4));
	CK(cudaGraphCreate(&g, 0));
	/* Device memory (4 rows of 64) into the array. */
	cudaMemcpy3DParms p;
	memset(&p, 0, sizeof(p));
	p.srcPtr = make_cudaPitchedPtr(dev, 64 * sizeof(int), 64, 4);
	p.dstArray = arr;
	p.extent = make_cudaExtent(64, 4, 1);
	p.kind = cudaMemcpyDeviceToDevice;
	CK(cudaGraphAddMemcpyNode(&nin, g, NULL, 0, &p));
	/* Rows 1 and 2 of the array into pinned memory. */
	memset(&p, 0, sizeof(p));
	p.srcArray = arr;
	p.srcPos = make_cudaPos(0, 1, 0);
	p.dstPtr = make_cudaPitchedPtr(pin, 64 * sizeof(int), 64, 2);
	p.extent = make_cudaExtent(64, 2, 1);
	p.kind = cudaMemcpyDeviceToHost;
	CK(cudaGraphAddMemcpyNode(&nout, g, &nin, 1, &p));
	cudaMemcpy3DParms q;
	memset(&q, 0, sizeof(q));
	CK(cudaGraphMemcpyNodeGetParams(nout, &q));
	printf("array node params: src array %s, dst %s, pos y %zu, "
	       "extent %zu x %zu\n", xct_yes(q.srcArray == arr),
	       q.dstPtr.ptr == pin ? "pinned" : "other", q.srcPos.y,
	       q.extent.width, q.extent.height);
	memset(&q, 0, sizeof(q));
	CK(cudaGraphMemcpyNodeGetParams(nin, &q));
	printf("array node params: dst array %s, src %s\n",
	       xct_yes(q.dstArray == arr),
	       q.srcPtr.ptr == dev ? "device" : "other");
	CK(cudaGraphInstantiate(&ge, g, 0));
	memset(pin, 0, 2 * 64 * sizeof(int));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	int bad = 0;
	for (int i = 0; i < 2 * 64; i++)
		bad += pin[i] != src[64 + i];
	printf("array graph: bad %d, pin[127] %d\n", bad, pin[127]);
	/* Rows 2 and 3 instead, in the executable graph. */
	p.srcPos = make_cudaPos(0, 2, 0);
	CK(cudaGraphExecMemcpyNodeSetParams(ge, nout, &p));
	memset(pin, 0, 2 * 64 * sizeof(int));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	bad = 0;
	for (int i = 0; i < 2 * 64; i++)
		bad += pin[i] != src[128 + i];
	printf("array graph, rows 2 and 3: bad %d, pin[0] %d\n", bad, pin[0]);
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));

	/* Pageable memory into the array and back, launched twice. */
	int *hin = (int *)malloc(4 * 64 * sizeof(int));
	int *hout = (int *)malloc(2 * 32 * sizeof(int));
	CK(cudaGraphCreate(&g, 0));
	memset(&p, 0, sizeof(p));
	p.srcPtr = make_cudaPitchedPtr(hin, 64 * sizeof(int), 64, 4);
	p.dstArray = arr;
	p.extent = make_cudaExtent(64, 4, 1);
	p.kind = cudaMemcpyHostToDevice;
	CK(cudaGraphAddMemcpyNode(&nin, g, NULL, 0, &p));
	/* Columns 8 to 39 of rows 1 and 2 into a 2 x 32 block. */
	memset(&p, 0, sizeof(p));
	p.srcArray = arr;
	p.srcPos = make_cudaPos(8, 1, 0);
	p.dstPtr = make_cudaPitchedPtr(hout, 32 * sizeof(int), 32, 2);
	p.extent = make_cudaExtent(32, 2, 1);
	p.kind = cudaMemcpyDeviceToHost;
	CK(cudaGraphAddMemcpyNode(&nout, g, &nin, 1, &p));
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int l = 0; l < 2; l++) {
		for (int i = 0; i < 4 * 64; i++)
			hin[i] = 1000 * (l + 1) + i;
		memset(hout, 0, 2 * 32 * sizeof(int));
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		bad = 0;
		for (int r = 0; r < 2; r++)
			for (int c = 0; c < 32; c++)
				bad += hout[r * 32 + c] !=
				       hin[(r + 1) * 64 + 8 + c];
		printf("pageable array graph launch %d: bad %d, hout[63] %d\n",
		       l, bad, hout[63]);
	}
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	free(hin);
	free(hout);
	CK(cudaFreeArray(arr));
	CK(cudaFreeHost(pin));
}

int main(void)
{
	int *buf, *host, *half2;
	cudaStream_t s, s2;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t nset, nk1, nk2, ncpy, deps[2];

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaMalloc(&buf, 2 * N * sizeof(int)));
	CK(cudaMallocHost(&host, 2 * N * sizeof(int)));
	half2 = buf + N;

	/* ---- the diamond ---- */
	CK(cudaGraphCreate(&g, 0));
	cudaMemsetParams mp;
	memset(&mp, 0, sizeof(mp));
	mp.dst = buf;
	mp.value = 0;
	mp.elementSize = 4;
	mp.width = 2 * N;
	mp.height = 1;
	CK(cudaGraphAddMemsetNode(&nset, g, NULL, 0, &mp));
	int n = N, k1 = 3, k2 = 7;
	void *a1[] = { &buf, &n, &k1 };
	void *a2[] = { &half2, &n, &k2 };
	cudaKernelNodeParams kp1 = kparams((void *)fill, a1);
	cudaKernelNodeParams kp2 = kparams((void *)addk, a2);
	CK(cudaGraphAddKernelNode(&nk1, g, &nset, 1, &kp1));
	CK(cudaGraphAddKernelNode(&nk2, g, &nset, 1, &kp2));
	deps[0] = nk1;
	deps[1] = nk2;
	CK(cudaGraphAddMemcpyNode1D(&ncpy, g, deps, 2, host, buf,
				    2 * N * sizeof(int),
				    cudaMemcpyDeviceToHost));

	/* Its shape. */
	size_t cnt = 0;
	CK(cudaGraphGetNodes(g, NULL, &cnt));
	printf("nodes: %zu\n", cnt);
	cudaGraphNode_t nodes[8];
	cnt = 8;
	CK(cudaGraphGetNodes(g, nodes, &cnt));
	printf("nodes with room for 8: %zu, [4] %s\n", cnt,
	       nodes[4] == NULL ? "NULL" : "set");
	for (size_t i = 0; i < cnt; i++) {
		cudaGraphNodeType t;

		CK(cudaGraphNodeGetType(nodes[i], &t));
		printf("  node %zu: type %d%s\n", i, (int)t,
		       nodes[i] == nk1 ? " (fill)" :
		       nodes[i] == nk2 ? " (addk)" : "");
	}
	cnt = 2;
	cudaError_t e2 = cudaGraphGetNodes(g, nodes, &cnt);
	cudaGetLastError();
	printf("nodes with room for 2: %s, %zu\n", cudaGetErrorName(e2), cnt);
	cnt = 0;
	CK(cudaGraphGetRootNodes(g, NULL, &cnt));
	printf("roots: %zu\n", cnt);
	cnt = 4;
	CK(cudaGraphGetRootNodes(g, nodes, &cnt));
	printf("root is the memset: %s\n", xct_yes(nodes[0] == nset));
	cnt = 0;
	CK(cudaGraphGetEdges(g, NULL, NULL, NULL, &cnt));
	printf("edges: %zu\n", cnt);
	cudaGraphNode_t from[8], to[8];
	cudaGraphEdgeData ed[8];
	cnt = 8;
	CK(cudaGraphGetEdges(g, from, to, ed, &cnt));
	int into_copy = 0, from_set = 0, ports = 0;
	for (size_t i = 0; i < cnt; i++) {
		into_copy += to[i] == ncpy;
		from_set += from[i] == nset;
		ports += ed[i].from_port + ed[i].to_port + ed[i].type;
	}
	printf("edges listed %zu: %d into the copy, %d from the memset, "
	       "ports %d\n", cnt, into_copy, from_set, ports);
	cnt = 0;
	CK(cudaGraphNodeGetDependencies(ncpy, NULL, NULL, &cnt));
	printf("copy depends on %zu\n", cnt);
	cnt = 4;
	CK(cudaGraphNodeGetDependencies(ncpy, nodes, NULL, &cnt));
	printf("  they are the kernels: %s\n",
	       xct_yes(cnt == 2 && ((nodes[0] == nk1 && nodes[1] == nk2) ||
				    (nodes[0] == nk2 && nodes[1] == nk1))));
	cnt = 0;
	CK(cudaGraphNodeGetDependentNodes(nset, NULL, NULL, &cnt));
	printf("memset has %zu dependents\n", cnt);
	cnt = 4;
	CK(cudaGraphNodeGetDependentNodes(nk1, nodes, ed, &cnt));
	printf("fill's dependent is the copy: %s\n",
	       xct_yes(cnt == 1 && nodes[0] == ncpy));

	/* Parameters back. */
	cudaKernelNodeParams got;
	CK(cudaGraphKernelNodeGetParams(nk1, &got));
	printf("fill params: func %s, grid %u block %u, k %d, n %d\n",
	       xct_yes(got.func == (void *)fill), got.gridDim.x,
	       got.blockDim.x, *(int *)got.kernelParams[2],
	       *(int *)got.kernelParams[1]);
	cudaMemsetParams gm;
	CK(cudaGraphMemsetNodeGetParams(nset, &gm));
	printf("memset params: dst %s, value %u, elem %u, width %zu\n",
	       xct_yes(gm.dst == buf), gm.value, gm.elementSize, gm.width);
	cudaMemcpy3DParms gc;
	CK(cudaGraphMemcpyNodeGetParams(ncpy, &gc));
	printf("copy params: dst %s, src %s, width %zu, kind %d\n",
	       xct_yes(gc.dstPtr.ptr == host), xct_yes(gc.srcPtr.ptr == buf),
	       gc.extent.width, (int)gc.kind);

	/* Instantiate and launch several times. */
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int r = 0; r < 3; r++) {
		memset(host, 0xff, 2 * N * sizeof(int));
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		printf("launch %d: bad %d\n", r, check_diamond(host, 3, 7));
	}

	/* New kernel parameters in the executable graph only. */
	int k1b = 5;
	void *a1b[] = { &buf, &n, &k1b };
	cudaKernelNodeParams kp1b = kparams((void *)fill, a1b);
	CK(cudaGraphExecKernelNodeSetParams(ge, nk1, &kp1b));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("exec params k1=5: bad %d\n", check_diamond(host, 5, 7));
	CK(cudaGraphKernelNodeGetParams(nk1, &got));
	printf("the graph's own k stays %d\n", *(int *)got.kernelParams[2]);

	/* Disabled and enabled again. */
	unsigned int en = 9;
	CK(cudaGraphNodeSetEnabled(ge, nk2, 0));
	CK(cudaGraphNodeGetEnabled(ge, nk2, &en));
	printf("addk enabled: %u\n", en);
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("addk disabled: bad %d (vs k2=0)\n",
	       check_diamond(host, 5, 0));
	CK(cudaGraphNodeSetEnabled(ge, nk2, 1));
	CK(cudaGraphNodeGetEnabled(ge, nk2, &en));
	printf("addk enabled: %u\n", en);

	/* A clone with new parameters updates the executable graph. */
	cudaGraph_t g2;
	cudaGraphNode_t c1, c2;
	CK(cudaGraphClone(&g2, g));
	CK(cudaGraphNodeFindInClone(&c1, nk1, g2));
	CK(cudaGraphNodeFindInClone(&c2, nk2, g2));
	printf("clone: %zu nodes, found fill %s, distinct %s\n",
	       count_nodes(g2), xct_yes(c1 != NULL), xct_yes(c1 != nk1));
	cudaGraphNodeType ct;
	CK(cudaGraphNodeGetType(c2, &ct));
	printf("clone's addk type %d\n", (int)ct);
	int k1c = 11, k2c = 13;
	void *a1c[] = { &buf, &n, &k1c };
	void *a2c[] = { &half2, &n, &k2c };
	cudaKernelNodeParams kp1c = kparams((void *)fill, a1c);
	cudaKernelNodeParams kp2c = kparams((void *)addk, a2c);
	CK(cudaGraphKernelNodeSetParams(c1, &kp1c));
	CK(cudaGraphKernelNodeSetParams(c2, &kp2c));
	cudaGraphExecUpdateResultInfo info;
	memset(&info, 0, sizeof(info));
	EXPECT(cudaSuccess, cudaGraphExecUpdate(ge, g2, &info));
	printf("update result %d, error node %s\n", (int)info.result,
	       xct_yes(info.errorNode != NULL));
	CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("updated: bad %d\n", check_diamond(host, 11, 13));

	/* An update from a graph of another shape fails, and says why. */
	cudaGraph_t g3;
	cudaGraphNode_t e3;
	CK(cudaGraphCreate(&g3, 0));
	CK(cudaGraphAddEmptyNode(&e3, g3, NULL, 0));
	memset(&info, 0, sizeof(info));
	SHOW(cudaGraphExecUpdate(ge, g3, &info));
	printf("update result %d\n", (int)info.result);

	/* Instantiated with parameters. */
	cudaGraphExec_t ge2;
	cudaGraphInstantiateParams ip;
	memset(&ip, 0, sizeof(ip));
	ip.flags = cudaGraphInstantiateFlagUpload;
	ip.uploadStream = s;
	CK(cudaGraphInstantiateWithParams(&ge2, g2, &ip));
	printf("instantiate with params: result %d, error node %s\n",
	       (int)ip.result_out, xct_yes(ip.errNode_out != NULL));
	CK(cudaGraphLaunch(ge2, s));
	CK(cudaStreamSynchronize(s));
	printf("clone's exec: bad %d\n", check_diamond(host, 11, 13));

	/* ---- a child graph ---- */
	cudaGraph_t child, parent, inner;
	cudaGraphNode_t ck, cn;
	cudaGraphExec_t pe;
	int k5 = 5;
	void *a5[] = { &buf, &n, &k5 };
	cudaKernelNodeParams kp5 = kparams((void *)addk, a5);
	CK(cudaGraphCreate(&child, 0));
	CK(cudaGraphAddKernelNode(&ck, child, NULL, 0, &kp5));
	CK(cudaGraphCreate(&parent, 0));
	CK(cudaGraphAddChildGraphNode(&cn, parent, NULL, 0, child));
	CK(cudaGraphChildGraphNodeGetGraph(cn, &inner));
	CK(cudaGraphNodeGetType(cn, &ct));
	printf("child node type %d, its graph has %zu nodes, is a copy %s\n",
	       (int)ct, count_nodes(inner), xct_yes(inner != child));
	CK(cudaMemset(buf, 0, N * sizeof(int)));
	CK(cudaGraphInstantiate(&pe, parent, 0));
	CK(cudaGraphLaunch(pe, s));
	CK(cudaGraphLaunch(pe, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(host, buf, N * sizeof(int), cudaMemcpyDeviceToHost));
	printf("child graph twice: host[0]=%d host[%d]=%d\n", host[0], N - 1,
	       host[N - 1]);

	/* ---- event record and wait across two graphs ---- */
	cudaEvent_t ev, ev2, evq;
	cudaGraph_t gA, gB;
	cudaGraphNode_t na, nrec, nwait, nb;
	cudaGraphExec_t eA, eB;
	int *cell;
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&ev2, cudaEventDisableTiming));
	CK(cudaMalloc(&cell, 2 * sizeof(int)));
	CK(cudaMemset(cell, 0, 2 * sizeof(int)));
	int one = 1, k21 = 21;
	void *aa[] = { &cell, &one, &k21 };
	cudaKernelNodeParams kpa = kparams((void *)addk, aa);
	kpa.gridDim = dim3(1);
	kpa.blockDim = dim3(1);
	CK(cudaGraphCreate(&gA, 0));
	CK(cudaGraphAddKernelNode(&na, gA, NULL, 0, &kpa));
	CK(cudaGraphAddEventRecordNode(&nrec, gA, &na, 1, ev2));
	CK(cudaGraphEventRecordNodeSetEvent(nrec, ev));
	CK(cudaGraphEventRecordNodeGetEvent(nrec, &evq));
	printf("record node's event is ev: %s\n", xct_yes(evq == ev));
	int *cell1 = cell + 1;
	void *ab[] = { &cell, &cell1 };
	cudaKernelNodeParams kpb = kparams((void *)twice_of, ab);
	kpb.gridDim = dim3(1);
	kpb.blockDim = dim3(1);
	CK(cudaGraphCreate(&gB, 0));
	CK(cudaGraphAddEventWaitNode(&nwait, gB, NULL, 0, ev));
	CK(cudaGraphAddKernelNode(&nb, gB, &nwait, 1, &kpb));
	CK(cudaGraphEventWaitNodeGetEvent(nwait, &evq));
	printf("wait node's event is ev: %s\n", xct_yes(evq == ev));
	CK(cudaGraphNodeGetType(nwait, &ct));
	printf("wait node type %d\n", (int)ct);
	CK(cudaGraphInstantiate(&eA, gA, 0));
	CK(cudaGraphInstantiate(&eB, gB, 0));
	CK(cudaGraphLaunch(eA, s));
	CK(cudaGraphLaunch(eB, s2));
	CK(cudaStreamSynchronize(s2));
	CK(cudaStreamSynchronize(s));
	int cells[2];
	CK(cudaMemcpy(cells, cell, sizeof(cells), cudaMemcpyDeviceToHost));
	printf("across graphs: %d %d\n", cells[0], cells[1]);
	CK(cudaGraphExecEventRecordNodeSetEvent(eA, nrec, ev2));
	CK(cudaGraphExecEventWaitNodeSetEvent(eB, nwait, ev2));
	CK(cudaGraphLaunch(eA, s));
	CK(cudaGraphLaunch(eB, s2));
	CK(cudaStreamSynchronize(s2));
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(cells, cell, sizeof(cells), cudaMemcpyDeviceToHost));
	printf("with ev2: %d %d\n", cells[0], cells[1]);

	/* ---- memory allocation and free nodes ---- */
	cudaGraph_t gmem;
	cudaGraphNode_t nalloc, nms, nadd, ncp, nfree;
	cudaGraphExec_t em;
	cudaMemAllocNodeParams ap;
	memset(&ap, 0, sizeof(ap));
	ap.poolProps.allocType = cudaMemAllocationTypePinned;
	ap.poolProps.location.type = cudaMemLocationTypeDevice;
	ap.poolProps.location.id = 0;
	ap.bytesize = N * sizeof(int);
	CK(cudaGraphCreate(&gmem, 0));
	CK(cudaGraphAddMemAllocNode(&nalloc, gmem, NULL, 0, &ap));
	printf("alloc node: dptr %s\n", xct_yes(ap.dptr != NULL));
	int *mem = (int *)ap.dptr;
	memset(&mp, 0, sizeof(mp));
	mp.dst = mem;
	mp.value = 2;
	mp.elementSize = 4;
	mp.width = N;
	mp.height = 1;
	CK(cudaGraphAddMemsetNode(&nms, gmem, &nalloc, 1, &mp));
	int k40 = 40;
	void *am[] = { &mem, &n, &k40 };
	cudaKernelNodeParams kpm = kparams((void *)addk, am);
	CK(cudaGraphAddKernelNode(&nadd, gmem, &nms, 1, &kpm));
	cudaMemcpy3DParms cp;
	memset(&cp, 0, sizeof(cp));
	cp.srcPtr = make_cudaPitchedPtr(mem, N * sizeof(int), N, 1);
	cp.dstPtr = make_cudaPitchedPtr(host, N * sizeof(int), N, 1);
	cp.extent = make_cudaExtent(N * sizeof(int), 1, 1);
	cp.kind = cudaMemcpyDeviceToHost;
	CK(cudaGraphAddMemcpyNode(&ncp, gmem, &nadd, 1, &cp));
	CK(cudaGraphAddMemFreeNode(&nfree, gmem, &ncp, 1, mem));
	cudaMemAllocNodeParams apq;
	CK(cudaGraphMemAllocNodeGetParams(nalloc, &apq));
	printf("alloc params: bytes %zu, same dptr %s, location %d/%d\n",
	       apq.bytesize, xct_yes(apq.dptr == mem),
	       (int)apq.poolProps.location.type, apq.poolProps.location.id);
	void *fq = NULL;
	CK(cudaGraphMemFreeNodeGetParams(nfree, &fq));
	printf("free params: same dptr %s\n", xct_yes(fq == mem));
	CK(cudaGraphInstantiate(&em, gmem, 0));
	for (int r = 0; r < 2; r++) {
		memset(host, 0, N * sizeof(int));
		CK(cudaGraphLaunch(em, s));
		CK(cudaStreamSynchronize(s));
		int bad = 0;
		for (int i = 0; i < N; i++)
			bad += host[i] != 42;
		printf("alloc graph launch %d: bad %d\n", r, bad);
	}

	/* ---- a conditional WHILE loop ---- */
	cudaGraph_t gw, body;
	cudaGraphNode_t nc, nbody;
	cudaGraphExec_t ew;
	cudaGraphConditionalHandle h;
	int *counter;
	CK(cudaMalloc(&counter, sizeof(int)));
	CK(cudaMemset(counter, 0, sizeof(int)));
	CK(cudaGraphCreate(&gw, 0));
	CK(cudaGraphConditionalHandleCreate(&h, gw, 1,
					    cudaGraphCondAssignDefault));
	cudaGraphNodeParams cnp = {};
	cnp.type = cudaGraphNodeTypeConditional;
	cnp.conditional.handle = h;
	cnp.conditional.type = cudaGraphCondTypeWhile;
	cnp.conditional.size = 1;
	CK(cudaGraphAddNode(&nc, gw, NULL, NULL, 0, &cnp));
	body = cnp.conditional.phGraph_out[0];
	printf("conditional: body %s, empty %s\n", xct_yes(body != NULL),
	       xct_yes(count_nodes(body) == 0));
	void *ac[] = { &h, &counter };
	cudaKernelNodeParams kpc = kparams((void *)loop_body, ac);
	kpc.gridDim = dim3(1);
	kpc.blockDim = dim3(32);
	CK(cudaGraphAddKernelNode(&nbody, body, NULL, 0, &kpc));
	CK(cudaGraphNodeGetType(nc, &ct));
	printf("conditional node type %d, body nodes %zu\n", (int)ct,
	       count_nodes(body));
	CK(cudaGraphInstantiate(&ew, gw, 0));
	for (int r = 0; r < 2; r++) {
		int c = -1;

		CK(cudaGraphLaunch(ew, s));
		CK(cudaStreamSynchronize(s));
		CK(cudaMemcpy(&c, counter, sizeof(c),
			      cudaMemcpyDeviceToHost));
		printf("while loop launch %d: counter %d\n", r, c);
	}

	/* ---- nodes of the generic form, and their parameters set ---- */
	cudaGraph_t gg;
	cudaGraphNode_t gn0, gn1, gn2;
	cudaGraphExec_t eg;
	int *v, *host2;
	CK(cudaMalloc(&v, N * sizeof(int)));
	CK(cudaMallocHost(&host2, N * sizeof(int)));
	CK(cudaGraphCreate(&gg, 0));
	cudaGraphNodeParams mps = {};
	mps.type = cudaGraphNodeTypeMemset;
	mps.memset.dst = v;
	mps.memset.value = 1;
	mps.memset.elementSize = 4;
	mps.memset.width = N;
	mps.memset.height = 1;
	CK(cudaGraphAddNode(&gn0, gg, NULL, NULL, 0, &mps));
	int k10 = 10;
	void *av[] = { &v, &n, &k10 };
	cudaGraphNodeParams kps = {};
	kps.type = cudaGraphNodeTypeKernel;
	kps.kernel.func = (void *)addk;
	kps.kernel.gridDim = dim3(16);
	kps.kernel.blockDim = dim3(128);
	kps.kernel.kernelParams = av;
	cudaGraphEdgeData e0;
	memset(&e0, 0, sizeof(e0));
	CK(cudaGraphAddNode(&gn1, gg, &gn0, &e0, 1, &kps));
	cudaGraphNodeParams cps = {};
	cps.type = cudaGraphNodeTypeMemcpy;
	cps.memcpy.copyParams.srcPtr = make_cudaPitchedPtr(v, N * sizeof(int),
							    N, 1);
	cps.memcpy.copyParams.dstPtr = make_cudaPitchedPtr(host,
							    N * sizeof(int),
							    N, 1);
	cps.memcpy.copyParams.extent = make_cudaExtent(N * sizeof(int), 1, 1);
	cps.memcpy.copyParams.kind = cudaMemcpyDeviceToHost;
	CK(cudaGraphAddNode(&gn2, gg, &gn1, NULL, 1, &cps));
	cnt = 0;
	CK(cudaGraphGetEdges(gg, NULL, NULL, NULL, &cnt));
	printf("generic graph: %zu nodes, %zu edges\n", count_nodes(gg), cnt);
	CK(cudaGraphInstantiate(&eg, gg, 0));
	CK(cudaGraphLaunch(eg, s));
	CK(cudaStreamSynchronize(s));
	printf("generic: host[0]=%d host[%d]=%d\n", host[0], N - 1,
	       host[N - 1]);
	int k20 = 20;
	void *av20[] = { &v, &n, &k20 };
	kps.kernel.kernelParams = av20;
	CK(cudaGraphExecNodeSetParams(eg, gn1, &kps));
	CK(cudaGraphLaunch(eg, s));
	CK(cudaStreamSynchronize(s));
	printf("exec node params k=20: host[5]=%d\n", host[5]);
	cudaMemsetParams ms2;
	memset(&ms2, 0, sizeof(ms2));
	ms2.dst = v;
	ms2.value = 2;
	ms2.elementSize = 4;
	ms2.width = N;
	ms2.height = 1;
	CK(cudaGraphExecMemsetNodeSetParams(eg, gn0, &ms2));
	CK(cudaGraphExecMemcpyNodeSetParams1D(eg, gn2, host2, v,
					      N * sizeof(int),
					      cudaMemcpyDeviceToHost));
	memset(host2, 0, N * sizeof(int));
	CK(cudaGraphLaunch(eg, s));
	CK(cudaStreamSynchronize(s));
	printf("exec memset 2, copy into another buffer: host2[9]=%d\n",
	       host2[9]);
	int k30 = 30;
	void *av30[] = { &v, &n, &k30 };
	kps.kernel.kernelParams = av30;
	CK(cudaGraphNodeSetParams(gn1, &kps));
	CK(cudaGraphMemsetNodeSetParams(gn0, &ms2));
	CK(cudaGraphMemcpyNodeSetParams1D(gn2, host2, v, N * sizeof(int),
					  cudaMemcpyDeviceToHost));
	CK(cudaGraphKernelNodeGetParams(gn1, &got));
	printf("graph's generic kernel now k=%d\n",
	       *(int *)got.kernelParams[2]);
	memset(&info, 0, sizeof(info));
	EXPECT(cudaSuccess, cudaGraphExecUpdate(eg, gg, &info));
	memset(host2, 0, N * sizeof(int));
	CK(cudaGraphLaunch(eg, s));
	CK(cudaStreamSynchronize(s));
	printf("updated from its graph: host2[9]=%d\n", host2[9]);
	CK(cudaGraphMemcpyNodeGetParams(gn2, &gc));
	printf("copy node now into host2: %s\n",
	       xct_yes(gc.dstPtr.ptr == host2));
	CK(cudaGraphExecDestroy(eg));
	CK(cudaGraphDestroy(gg));
	CK(cudaFree(v));
	CK(cudaFreeHost(host2));

	/* ---- the dot print ---- */
	char path[64];
	snprintf(path, sizeof(path), "/tmp/xct_graph_api_%d.dot",
		 (int)getpid());
	CK(cudaGraphDebugDotPrint(g, path, cudaGraphDebugDotFlagsVerbose));
	FILE *f = fopen(path, "r");
	char head[8] = { 0 };
	size_t rd = f ? fread(head, 1, 7, f) : 0;
	if (f)
		fclose(f);
	unlink(path);
	printf("dot: non-empty %s, starts with digraph %s\n",
	       xct_yes(rd > 0), xct_yes(!strncmp(head, "digraph", 7)));

	/* ---- what CUDA refuses ---- */
	cudaGraphNode_t bad;
	SHOW(cudaGraphAddEmptyNode(&bad, g, &na, 1));
	SHOW(cudaGraphAddDependencies(g, &nk1, &nk1, NULL, 1));
	SHOW(cudaGraphAddDependencies(g, &nset, &nk1, NULL, 1));
	SHOW(cudaGraphRemoveDependencies(g, &nk2, &ncpy, NULL, 1));
	cnt = 0;
	CK(cudaGraphGetEdges(g, NULL, NULL, NULL, &cnt));
	printf("edges after removing one: %zu\n", cnt);
	SHOW(cudaGraphRemoveDependencies(g, &nk2, &ncpy, NULL, 1));
	SHOW(cudaGraphKernelNodeGetParams(nset, &got));
	SHOW(cudaGraphMemsetNodeGetParams(nk1, &gm));
	SHOW(cudaGraphChildGraphNodeGetGraph(nk1, &inner));

	/* A destroyed node leaves its graph. */
	cudaGraphNode_t extra;
	CK(cudaGraphAddEmptyNode(&extra, g, &ncpy, 1));
	printf("nodes with an extra: %zu\n", count_nodes(g));
	CK(cudaGraphDestroyNode(extra));
	cnt = 8;
	CK(cudaGraphGetNodes(g, nodes, &cnt));
	int still = 0;
	for (size_t i = 0; i < cnt; i++)
		still += nodes[i] == extra;
	printf("after destroying it: %zu nodes, listed %d\n", cnt, still);

	host_nodes(s, buf, host);
	user_objects(s);
	pageable_nodes(s, buf);
	pageable_big(s);
	symbol_nodes(s);
	node_attributes(s, buf);
	array_nodes(s, buf);

	/* Teardown. */
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphExecDestroy(ge2));
	CK(cudaGraphExecDestroy(pe));
	CK(cudaGraphExecDestroy(eA));
	CK(cudaGraphExecDestroy(eB));
	CK(cudaGraphExecDestroy(em));
	CK(cudaGraphExecDestroy(ew));
	CK(cudaGraphDestroy(g));
	CK(cudaGraphDestroy(g2));
	CK(cudaGraphDestroy(g3));
	CK(cudaGraphDestroy(child));
	CK(cudaGraphDestroy(parent));
	CK(cudaGraphDestroy(gA));
	CK(cudaGraphDestroy(gB));
	CK(cudaGraphDestroy(gmem));
	CK(cudaGraphDestroy(gw));
	CK(cudaEventDestroy(ev));
	CK(cudaEventDestroy(ev2));
	CK(cudaFree(counter));
	CK(cudaFree(cell));
	CK(cudaFree(buf));
	CK(cudaFreeHost(host));
	CK(cudaStreamDestroy(s));
	CK(cudaStreamDestroy(s2));
	CK(cudaDeviceSynchronize());
	return xct_finish("graph_api");
}
