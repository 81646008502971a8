// SPDX-License-Identifier: MIT
/*
 * Graph copies to and from pinned host memory, and nothing else of the
 * host's in the graphs (no host nodes, no pageable memory), so that every
 * part runs alike natively, through xcuda and through its upstream link,
 * where the graph's host bytes travel at each launch: copies captured
 * from a stream (1D, 2D with pitches, 3D with positions, to and from an
 * array), memcpy nodes added one by one, their parameters set in the
 * executable graph, a copy node disabled and enabled, an update from
 * another graph, a child graph and its replacement, an executable graph
 * launched into a capture, and many launches before one synchronisation.
 * Each check rewrites the host sources, clears the destinations and puts
 * a sentinel in the gaps a copy must not touch.
 */
#include "common/xct.h"

#define N	4096
#define W	96	/* 2D/3D: bytes a row */
#define H	5	/* rows */
#define D	3	/* slices */
#define SP	128	/* host pitch of the sources */
#define DP	160	/* host pitch of the destinations */

__global__ void addk(int *p, int n, int v)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] += v;
}

__global__ void addb(unsigned char *p, size_t pitch, int w, int rows, int v)
{
	for (int r = blockIdx.x; r < rows; r += gridDim.x)
		for (int x = threadIdx.x; x < w; x += blockDim.x)
			p[r * pitch + x] = (unsigned char)(p[r * pitch + x] + v);
}

static void fill_ints(int *p, int seed)
{
	for (int i = 0; i < N; i++)
		p[i] = i * 3 + seed;
}

/* Ints that should be src + add: how many are not. */
static int bad_ints(const int *p, int seed, int add)
{
	int bad = 0;

	for (int i = 0; i < N; i++)
		bad += p[i] != i * 3 + seed + add;
	return bad;
}

/* Ints of @p no longer the 0x5a bytes they were filled with. */
static int changed_ints(const int *p)
{
	int n = 0;

	for (int i = 0; i < N; i++)
		n += p[i] != 0x5a5a5a5a;
	return n;
}

/* Rows of W bytes at pitch @pitch: the pattern of @seed. */
static void put_rows(unsigned char *p, size_t pitch, int rows, int seed)
{
	for (int r = 0; r < rows; r++)
		for (int x = 0; x < W; x++)
			p[r * pitch + x] = (unsigned char)(r * 7 + x + seed);
}

/* The same, the gaps 0xee. */
static void fill_rows(unsigned char *p, size_t pitch, int rows, int seed)
{
	memset(p, 0xee, pitch * rows);
	put_rows(p, pitch, rows, seed);
}

static void clear_rows(unsigned char *p, size_t pitch, int rows)
{
	memset(p, 0xee, pitch * rows);
	for (int r = 0; r < rows; r++)
		memset(p + r * pitch, 0, W);
}

/* Rows that should be the pattern + add, gaps still 0xee. */
static int bad_rows(const unsigned char *p, size_t pitch, int rows, int seed,
		    int add)
{
	int bad = 0;

	for (int r = 0; r < rows; r++)
		for (size_t x = 0; x < pitch; x++)
			bad += p[r * pitch + x] !=
			       (x < W ? (unsigned char)(r * 7 + x + seed + add) :
				0xee);
	return bad;
}

int main(void)
{
	int *hin, *hout, *hin2, *hout2, *a;
	unsigned char *h2in, *h2out, *h3in, *h3out, *hain, *haout, *d2, *d3;
	size_t d2p;
	cudaArray_t arr;
	cudaStream_t s, s2;
	cudaGraph_t g, g2, child, child2, outer;
	cudaGraphExec_t ge, ge2, gc, go;
	cudaGraphNode_t nin, nk, nout, ncn;
	const int rows3 = H * D;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaMallocHost(&hin, N * sizeof(int)));
	CK(cudaMallocHost(&hout, N * sizeof(int)));
	CK(cudaMallocHost(&hin2, N * sizeof(int)));
	CK(cudaMallocHost(&hout2, N * sizeof(int)));
	CK(cudaMallocHost(&h2in, SP * H));
	CK(cudaMallocHost(&h2out, DP * H));
	/* 3D: one slice of room more than copied, at a position. */
	CK(cudaMallocHost(&h3in, SP * (H + 1) * (D + 1)));
	CK(cudaMallocHost(&h3out, DP * (H + 1) * (D + 1)));
	CK(cudaMallocHost(&hain, SP * H));
	CK(cudaMallocHost(&haout, DP * H));
	CK(cudaMalloc(&a, N * sizeof(int)));
	CK(cudaMallocPitch(&d2, &d2p, W, H));
	CK(cudaMalloc(&d3, W * rows3));
	cudaChannelFormatDesc cd = cudaCreateChannelDesc<unsigned char>();
	CK(cudaMallocArray(&arr, &cd, W, H));

	/* ---- captured: 1D, 2D, 3D and array copies ---- */
	cudaMemcpy3DParms in3 = {}, out3 = {};
	in3.srcPtr = make_cudaPitchedPtr(h3in, SP, W, H + 1);
	in3.srcPos = make_cudaPos(8, 1, 1);
	in3.dstPtr = make_cudaPitchedPtr(d3, W, W, H);
	in3.extent = make_cudaExtent(W, H, D);
	in3.kind = cudaMemcpyHostToDevice;
	out3.srcPtr = make_cudaPitchedPtr(d3, W, W, H);
	out3.dstPtr = make_cudaPitchedPtr(h3out, DP, W, H + 1);
	out3.dstPos = make_cudaPos(16, 1, 1);
	out3.extent = make_cudaExtent(W, H, D);
	out3.kind = cudaMemcpyDeviceToHost;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMemcpyAsync(a, hin, N * sizeof(int), cudaMemcpyHostToDevice, s));
	addk<<<8, 256, 0, s>>>(a, N, 5);
	CKLAUNCH();
	CK(cudaMemcpyAsync(hout, a, N * sizeof(int), cudaMemcpyDeviceToHost,
			   s));
	CK(cudaMemcpy2DAsync(d2, d2p, h2in, SP, W, H, cudaMemcpyHostToDevice,
			     s));
	addb<<<H, 128, 0, s>>>(d2, d2p, W, H, 1);
	CKLAUNCH();
	CK(cudaMemcpy2DAsync(h2out, DP, d2, d2p, W, H, cudaMemcpyDeviceToHost,
			     s));
	CK(cudaMemcpy3DAsync(&in3, s));
	addb<<<rows3, 128, 0, s>>>(d3, W, W, rows3, 2);
	CKLAUNCH();
	CK(cudaMemcpy3DAsync(&out3, s));
	CK(cudaMemcpy2DToArrayAsync(arr, 0, 0, hain, SP, W, H,
				    cudaMemcpyHostToDevice, s));
	CK(cudaMemcpy2DFromArrayAsync(haout, DP, arr, 0, 0, W, H,
				      cudaMemcpyDeviceToHost, s));
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int round = 0; round < 3; round++) {
		fill_ints(hin, round);
		memset(hout, 0, N * sizeof(int));
		fill_rows(h2in, SP, H, round);
		clear_rows(h2out, DP, H);
		memset(h3in, 0xee, SP * (H + 1) * (D + 1));
		memset(h3out, 0xee, DP * (H + 1) * (D + 1));
		for (int z = 0; z < D; z++)
			put_rows(h3in + ((z + 1) * (H + 1) + 1) * SP + 8, SP,
				 H, round + z);
		fill_rows(hain, SP, H, round + 9);
		clear_rows(haout, DP, H);
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		int bad3 = 0, gap3 = 0;
		for (int z = 0; z < D; z++)
			for (int r = 0; r < H; r++)
				for (int x = 0; x < W; x++)
					bad3 += h3out[((z + 1) * (H + 1) + 1 +
						       r) * DP + 16 + x] !=
						(unsigned char)(r * 7 + x +
								round + z + 2);
		/* Bytes of the 3D destination the copy must not touch. */
		for (int z = 0; z < D + 1; z++)
			for (int r = 0; r < H + 1; r++)
				for (int x = 0; x < DP; x++) {
					int in = z >= 1 && r >= 1 &&
						 x >= 16 && x < 16 + W;
					gap3 += !in &&
						h3out[(z * (H + 1) + r) * DP +
						      x] != 0xee;
				}
		printf("captured round %d: 1D bad %d, 2D bad %d, 3D bad %d "
		       "(outside %d), array bad %d\n", round,
		       bad_ints(hout, round, 5), bad_rows(h2out, DP, H, round,
							  1),
		       bad3, gap3, bad_rows(haout, DP, H, round + 9, 0));
	}

	/* Many launches, one synchronisation. */
	fill_ints(hin, 100);
	for (int k = 0; k < 50; k++)
		CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	printf("50 launches: 1D bad %d\n", bad_ints(hout, 100, 5));

	/* ---- explicit nodes, set in the executable graph ---- */
	CK(cudaGraphCreate(&g2, 0));
	CK(cudaGraphAddMemcpyNode1D(&nin, g2, NULL, 0, a, hin,
				    N * sizeof(int), cudaMemcpyHostToDevice));
	cudaKernelNodeParams kp = {};
	int addv = 7, n = N;
	void *kargs[] = { &a, &n, &addv };
	kp.func = (void *)addk;
	kp.gridDim = dim3(8);
	kp.blockDim = dim3(256);
	kp.kernelParams = kargs;
	CK(cudaGraphAddKernelNode(&nk, g2, &nin, 1, &kp));
	cudaMemcpy3DParms op = {};
	op.srcPtr = make_cudaPitchedPtr(a, N * sizeof(int), N * sizeof(int), 1);
	op.dstPtr = make_cudaPitchedPtr(hout, N * sizeof(int),
					N * sizeof(int), 1);
	op.extent = make_cudaExtent(N * sizeof(int) / 2, 1, 1);
	op.dstPos = make_cudaPos(N * sizeof(int) / 4, 0, 0);
	op.kind = cudaMemcpyDeviceToHost;
	CK(cudaGraphAddMemcpyNode(&nout, g2, &nk, 1, &op));
	CK(cudaGraphInstantiate(&ge2, g2, 0));
	fill_ints(hin, 11);
	memset(hout, 0, N * sizeof(int));
	CK(cudaGraphLaunch(ge2, s));
	CK(cudaStreamSynchronize(s));
	int badq = 0;
	for (int i = 0; i < N; i++)
		badq += hout[i] != (i >= N / 4 && i < 3 * N / 4 ?
				    (i - N / 4) * 3 + 11 + 7 : 0);
	printf("explicit nodes: bad %d\n", badq);
	/* Another source, another destination. */
	fill_ints(hin2, 12);
	CK(cudaGraphExecMemcpyNodeSetParams1D(ge2, nin, a, hin2,
					      N * sizeof(int),
					      cudaMemcpyHostToDevice));
	op.dstPtr = make_cudaPitchedPtr(hout2, N * sizeof(int),
					N * sizeof(int), 1);
	op.dstPos = make_cudaPos(0, 0, 0);
	op.extent = make_cudaExtent(N * sizeof(int), 1, 1);
	CK(cudaGraphExecMemcpyNodeSetParams(ge2, nout, &op));
	memset(hout, 0x5a, N * sizeof(int));
	memset(hout2, 0, N * sizeof(int));
	CK(cudaGraphLaunch(ge2, s));
	CK(cudaStreamSynchronize(s));
	printf("exec setters: bad %d, old destination changed %d\n",
	       bad_ints(hout2, 12, 7), changed_ints(hout));
	/* Disabled, the copy leaves the program's bytes alone. */
	CK(cudaGraphNodeSetEnabled(ge2, nout, 0));
	fill_ints(hout2, 55);
	CK(cudaGraphLaunch(ge2, s));
	CK(cudaStreamSynchronize(s));
	printf("copy node disabled: destination kept bad %d\n",
	       bad_ints(hout2, 55, 0));
	CK(cudaGraphNodeSetEnabled(ge2, nout, 1));
	fill_ints(hin2, 13);
	CK(cudaGraphLaunch(ge2, s));
	CK(cudaStreamSynchronize(s));
	printf("enabled again: bad %d\n", bad_ints(hout2, 13, 7));

	/* An update from a graph of the same shape, other host memory. */
	cudaGraph_t g3;
	cudaGraphNode_t m1, m2, m3;
	CK(cudaGraphCreate(&g3, 0));
	CK(cudaGraphAddMemcpyNode1D(&m1, g3, NULL, 0, a, hin,
				    N * sizeof(int), cudaMemcpyHostToDevice));
	addv = 9;
	CK(cudaGraphAddKernelNode(&m2, g3, &m1, 1, &kp));
	op.dstPtr = make_cudaPitchedPtr(hout, N * sizeof(int),
					N * sizeof(int), 1);
	CK(cudaGraphAddMemcpyNode(&m3, g3, &m2, 1, &op));
	cudaGraphExecUpdateResultInfo info;
	EXPECT(cudaSuccess, cudaGraphExecUpdate(ge2, g3, &info));
	fill_ints(hin, 14);
	memset(hout, 0, N * sizeof(int));
	memset(hout2, 0x5a, N * sizeof(int));
	CK(cudaGraphLaunch(ge2, s));
	CK(cudaStreamSynchronize(s));
	printf("updated: bad %d, old destination changed %d\n",
	       bad_ints(hout, 14, 9), changed_ints(hout2));
	CK(cudaGraphDestroy(g3));

	/* ---- a child graph, then another in its place ---- */
	cudaGraphNode_t c1, c2;
	CK(cudaGraphCreate(&child, 0));
	CK(cudaGraphAddMemcpyNode1D(&c1, child, NULL, 0, a, hin,
				    N * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaGraphAddMemcpyNode1D(&c2, child, &c1, 1, hout, a,
				    N * sizeof(int), cudaMemcpyDeviceToHost));
	CK(cudaGraphCreate(&child2, 0));
	CK(cudaGraphAddMemcpyNode1D(&c1, child2, NULL, 0, a, hin2,
				    N * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaGraphAddMemcpyNode1D(&c2, child2, &c1, 1, hout2, a,
				    N * sizeof(int), cudaMemcpyDeviceToHost));
	cudaGraph_t parent;
	CK(cudaGraphCreate(&parent, 0));
	CK(cudaGraphAddChildGraphNode(&ncn, parent, NULL, 0, child));
	CK(cudaGraphInstantiate(&gc, parent, 0));
	fill_ints(hin, 21);
	memset(hout, 0, N * sizeof(int));
	CK(cudaGraphLaunch(gc, s));
	CK(cudaStreamSynchronize(s));
	printf("child graph: bad %d\n", bad_ints(hout, 21, 0));
	CK(cudaGraphExecChildGraphNodeSetParams(gc, ncn, child2));
	fill_ints(hin2, 22);
	memset(hout, 0x5a, N * sizeof(int));
	memset(hout2, 0, N * sizeof(int));
	CK(cudaGraphLaunch(gc, s));
	CK(cudaStreamSynchronize(s));
	printf("child graph replaced: bad %d, old destination changed %d\n",
	       bad_ints(hout2, 22, 0), changed_ints(hout));

	/*
	 * ---- an executable graph launched into a capture ----
	 * Nothing runs then; what the captured graph copies, CUDA says: the
	 * sums of both destinations are printed, whichever it is.
	 */
	fill_ints(hin, 24);
	fill_ints(hin2, 25);
	memset(hout, 0, N * sizeof(int));
	memset(hout2, 0, N * sizeof(int));
	CK(cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal));
	cudaError_t le = cudaGraphLaunch(gc, s2);
	outer = NULL;
	cudaError_t ee = cudaStreamEndCapture(s2, &outer);
	printf("a graph launch captured: %s, capture ended: %s\n",
	       cudaGetErrorName(le), cudaGetErrorName(ee));
	cudaGetLastError();
	printf("  nothing ran: destinations %016llx %016llx\n",
	       (unsigned long long)xct_fnv(hout, N * sizeof(int)),
	       (unsigned long long)xct_fnv(hout2, N * sizeof(int)));
	if (le == cudaSuccess && ee == cudaSuccess && outer) {
		CK(cudaGraphInstantiate(&go, outer, 0));
		CK(cudaGraphLaunch(go, s2));
		CK(cudaStreamSynchronize(s2));
		printf("  then run: destinations %016llx %016llx\n",
		       (unsigned long long)xct_fnv(hout, N * sizeof(int)),
		       (unsigned long long)xct_fnv(hout2, N * sizeof(int)));
		CK(cudaGraphExecDestroy(go));
	}
	if (outer)
		CK(cudaGraphDestroy(outer));

	CK(cudaGraphExecDestroy(gc));
	CK(cudaGraphExecDestroy(ge2));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(parent));
	CK(cudaGraphDestroy(child));
	CK(cudaGraphDestroy(child2));
	CK(cudaGraphDestroy(g2));
	CK(cudaGraphDestroy(g));
	CK(cudaFreeArray(arr));
	CK(cudaFree(d3));
	CK(cudaFree(d2));
	CK(cudaFree(a));
	CK(cudaFreeHost(haout));
	CK(cudaFreeHost(hain));
	CK(cudaFreeHost(h3out));
	CK(cudaFreeHost(h3in));
	CK(cudaFreeHost(h2out));
	CK(cudaFreeHost(h2in));
	CK(cudaFreeHost(hout2));
	CK(cudaFreeHost(hin2));
	CK(cudaFreeHost(hout));
	CK(cudaFreeHost(hin));
	CK(cudaStreamDestroy(s2));
	CK(cudaStreamDestroy(s));
	return xct_finish("graph_host_copies");
}
