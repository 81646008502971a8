/* SPDX-License-Identifier: MIT */
/*
 * The launch paths beyond <<<>>>: cooperative launches (grid.sync()
 * summing across blocks, and a grid too large to be co-resident),
 * cudaLaunchKernelEx with launch attributes (cluster dimensions, compiled
 * in and at run time, with cluster.sync() and distributed shared memory;
 * cooperative; priority; programmatic stream serialization; launch
 * completion and programmatic events; memory sync domains; an access
 * policy window; shared memory carveout; unknown ids), the cluster
 * occupancy queries, every cudaFuncSetAttribute attribute with the
 * cudaFuncGetAttributes fields after it, and the kernel queries
 * (cudaFuncGetName, cudaFuncGetParamInfo, cudaGetKernel,
 * cudaGetFuncBySymbol), and what every call that takes a kernel answers
 * for a pointer that is none.  Cluster features need sm_90: on an older
 * device those parts print that they are skipped.
 */
#include <cooperative_groups.h>

#include "common/xct.h"

namespace cg = cooperative_groups;

#define COOP_BLOCKS 8
#define COOP_THREADS 128

/* Sums in[] across the whole grid: per-block partials, grid.sync(), then
 * block 0 adds them up. */
__global__ void coop_sum(const int *in, int n, int *partial, int *out)
{
	cg::grid_group grid = cg::this_grid();
	__shared__ int s[COOP_THREADS];
	int acc = 0;

	for (int i = grid.thread_rank(); i < n; i += grid.size())
		acc += in[i];
	s[threadIdx.x] = acc;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k /= 2) {
		if (threadIdx.x < k)
			s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = s[0];
	grid.sync();
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		int t = 0;
		for (unsigned int b = 0; b < gridDim.x; b++)
			t += partial[b];
		*out = t;
	}
}

/*
 * Each block puts its rank's value in shared memory; after cluster.sync()
 * it reads the next rank's through distributed shared memory.  out[block]
 * = 1000 * cluster size + the neighbour's block index.
 */
__device__ void cluster_body(int *out)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	__shared__ int v;
	cg::cluster_group cl = cg::this_cluster();
	unsigned int r = cl.block_rank();
	unsigned int size = cl.num_blocks();

	if (threadIdx.x == 0)
		v = blockIdx.x;
	cl.sync();
	if (threadIdx.x == 0) {
		int *peer = cl.map_shared_rank(&v, (r + 1) % size);
		out[blockIdx.x] = 1000 * size + *peer;
	}
	cl.sync();
#else
	if (threadIdx.x == 0)
		out[blockIdx.x] = -1;
#endif
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define XCT_CLUSTER2
#else
#define XCT_CLUSTER2 __cluster_dims__(2, 1, 1)
#endif

__global__ void XCT_CLUSTER2 fixed_cluster(int *out)
{
	cluster_body(out);
}

__global__ void runtime_cluster(int *out)
{
	cluster_body(out);
}

__global__ void required_cluster(int *out)
{
	cluster_body(out);
}

__global__ void fill(int *p, int n, int v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v + i;
}

/* Waits for the previous kernel where programmatic launches allow it. */
__global__ void dependent_add(const int *in, int *out, int n)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	cudaGridDependencySynchronize();
#endif
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i] * 2 + 1;
}

__global__ void dyn_copy(const int *in, int *out, int n)
{
	extern __shared__ int s[];
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		s[i] = in[i];
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		out[i] = s[n - 1 - i] + 1;
}

__global__ void params3(int a, double b, const char *c)
{
	(void)a; (void)b; (void)c;
}

static void show_attrs(const char *name, const void *f)
{
	cudaFuncAttributes a;

	memset(&a, 0x5a, sizeof(a));
	CK(cudaFuncGetAttributes(&a, f));
	printf("%s: shared=%zu const=%zu local=%zu maxThreads=%d regs>0=%s "
	       "ptx=%d binary=%d cacheModeCA=%d maxDynShared=%d "
	       "carveout=%d clusterDimMustBeSet=%d cluster=%dx%dx%d "
	       "schedPolicy=%d nonPortable=%d\n",
	       name, a.sharedSizeBytes, a.constSizeBytes, a.localSizeBytes,
	       a.maxThreadsPerBlock, xct_yes(a.numRegs > 0), a.ptxVersion,
	       a.binaryVersion, a.cacheModeCA, a.maxDynamicSharedSizeBytes,
	       a.preferredShmemCarveout, a.clusterDimMustBeSet,
	       a.requiredClusterWidth, a.requiredClusterHeight,
	       a.requiredClusterDepth, a.clusterSchedulingPolicyPreference,
	       a.nonPortableClusterSizeAllowed);
	fflush(stdout);
}

static void print_cluster_out(const char *what, const int *d, int n)
{
	int h[64];

	CK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
	printf("%s:", what);
	for (int i = 0; i < n; i++)
		printf(" %d", h[i]);
	printf("\n");
	fflush(stdout);
}

static cudaLaunchConfig_t config(dim3 grid, dim3 block, size_t smem,
				 cudaStream_t st, cudaLaunchAttribute *at,
				 unsigned int n)
{
	cudaLaunchConfig_t c = {};

	c.gridDim = grid;
	c.blockDim = block;
	c.dynamicSmemBytes = smem;
	c.stream = st;
	c.attrs = at;
	c.numAttrs = n;
	return c;
}

static void cooperative(int sms)
{
	const int n = 10000;
	int *h = (int *)malloc(n * sizeof(int)), *din, *dpart, *dout, out;
	int coop = 0, per_sm = 0;
	long long want = 0;

	CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
	printf("cooperative launch supported: %s\n", xct_yes(coop));
	for (int i = 0; i < n; i++) {
		h[i] = (i * 7) % 101 - 50;
		want += h[i];
	}
	CK(cudaMalloc(&din, n * sizeof(int)));
	CK(cudaMalloc(&dpart, 4096 * sizeof(int)));
	CK(cudaMalloc(&dout, sizeof(int)));
	CK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));

	int nn = n;
	void *args[] = { &din, &nn, &dpart, &dout };
	CK(cudaMemset(dout, 0, sizeof(int)));
	EXPECT(cudaSuccess,
	       cudaLaunchCooperativeKernel((const void *)coop_sum,
					   dim3(COOP_BLOCKS),
					   dim3(COOP_THREADS), args, 0, 0));
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(&out, dout, sizeof(int), cudaMemcpyDeviceToHost));
	printf("cooperative sum: %d (expected %lld)\n", out, want);
	REQUIRE(out == want, "cooperative sum");

	/* The template of cuda_runtime.h, on a stream of its own. */
	cudaStream_t st;
	CK(cudaStreamCreate(&st));
	CK(cudaMemset(dout, 0, sizeof(int)));
	EXPECT(cudaSuccess,
	       cudaLaunchCooperativeKernel(coop_sum, dim3(COOP_BLOCKS * 2),
					   dim3(COOP_THREADS), args, 0, st));
	CK(cudaStreamSynchronize(st));
	CK(cudaMemcpy(&out, dout, sizeof(int), cudaMemcpyDeviceToHost));
	printf("cooperative sum (16 blocks, stream): %d\n", out);

	/* The same through cudaLaunchKernelEx's cooperative attribute. */
	cudaLaunchAttribute at[1];
	at[0].id = cudaLaunchAttributeCooperative;
	at[0].val.cooperative = 1;
	cudaLaunchConfig_t c = config(dim3(COOP_BLOCKS), dim3(COOP_THREADS), 0,
				      0, at, 1);
	CK(cudaMemset(dout, 0, sizeof(int)));
	EXPECT(cudaSuccess,
	       cudaLaunchKernelEx(&c, coop_sum, (const int *)din, nn, dpart,
				  dout));
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(&out, dout, sizeof(int), cudaMemcpyDeviceToHost));
	printf("cooperative sum (cudaLaunchKernelEx): %d\n", out);

	/* One block more than can be resident at once. */
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coop_sum,
							 COOP_THREADS, 0));
	printf("coop_sum blocks per SM at %d threads: %d\n", COOP_THREADS,
	       per_sm);
	int too_many = per_sm * sms + 1;
	EXPECT_ERR(cudaErrorCooperativeLaunchTooLarge,
		   cudaLaunchCooperativeKernel((const void *)coop_sum,
					       dim3(too_many),
					       dim3(COOP_THREADS), args, 0, 0));
	c.gridDim = dim3(too_many);
	EXPECT_ERR(cudaErrorCooperativeLaunchTooLarge,
		   cudaLaunchKernelEx(&c, coop_sum, (const int *)din, nn,
				      dpart, dout));
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaLaunchCooperativeKernel((const void *)coop_sum, dim3(0),
					       dim3(COOP_THREADS), args, 0, 0));
	SHOW(cudaLaunchCooperativeKernel((const void *)coop_sum, dim3(1),
					 dim3(2048), args, 0, 0));
	CK(cudaDeviceSynchronize());
	CK(cudaStreamDestroy(st));
	CK(cudaFree(din));
	CK(cudaFree(dpart));
	CK(cudaFree(dout));
	free(h);
}

static void clusters(int major)
{
	int *d;
	cudaLaunchAttribute at[2];
	cudaLaunchConfig_t c;

	if (major < 9) {
		printf("clusters: skipped (compute capability %d)\n", major);
		return;
	}
	CK(cudaMalloc(&d, 64 * sizeof(int)));

	/* Compiled-in cluster dimensions, by <<<>>> and cudaLaunchKernelEx. */
	CK(cudaMemset(d, 0xff, 64 * sizeof(int)));
	fixed_cluster<<<8, 32>>>(d);
	CKLAUNCH();
	print_cluster_out("fixed cluster <<<>>>", d, 8);
	c = config(dim3(8), dim3(32), 0, 0, NULL, 0);
	CK(cudaMemset(d, 0xff, 64 * sizeof(int)));
	EXPECT(cudaSuccess, cudaLaunchKernelEx(&c, fixed_cluster, d));
	print_cluster_out("fixed cluster Ex", d, 8);

	/* Run-time cluster dimensions: 4 blocks, then 8. */
	at[0].id = cudaLaunchAttributeClusterDimension;
	at[0].val.clusterDim.x = 4;
	at[0].val.clusterDim.y = 1;
	at[0].val.clusterDim.z = 1;
	c = config(dim3(16), dim3(64), 0, 0, at, 1);
	CK(cudaMemset(d, 0xff, 64 * sizeof(int)));
	EXPECT(cudaSuccess, cudaLaunchKernelEx(&c, runtime_cluster, d));
	print_cluster_out("runtime cluster 4", d, 16);
	at[0].val.clusterDim.x = 8;
	at[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
	at[1].val.clusterSchedulingPolicyPreference =
		cudaClusterSchedulingPolicySpread;
	c = config(dim3(16), dim3(64), 0, 0, at, 2);
	CK(cudaMemset(d, 0xff, 64 * sizeof(int)));
	EXPECT(cudaSuccess, cudaLaunchKernelEx(&c, runtime_cluster, d));
	print_cluster_out("runtime cluster 8 spread", d, 16);

	/* Refused shapes: a cluster that does not divide the grid, one too
	 * large to be portable, a zero dimension, and one that contradicts
	 * the compiled-in dimensions. */
	at[0].val.clusterDim.x = 4;
	c = config(dim3(6), dim3(64), 0, 0, at, 1);
	SHOW(cudaLaunchKernelEx(&c, runtime_cluster, d));
	at[0].val.clusterDim.x = 32;
	c = config(dim3(32), dim3(64), 0, 0, at, 1);
	SHOW(cudaLaunchKernelEx(&c, runtime_cluster, d));
	at[0].val.clusterDim.x = 0;
	c = config(dim3(8), dim3(64), 0, 0, at, 1);
	SHOW(cudaLaunchKernelEx(&c, runtime_cluster, d));
	at[0].val.clusterDim.x = 4;
	c = config(dim3(8), dim3(32), 0, 0, at, 1);
	SHOW(cudaLaunchKernelEx(&c, fixed_cluster, d));
	CK(cudaDeviceSynchronize());

	/* A preferred substitute cluster of twice the regular one. */
	at[0].val.clusterDim.x = 2;
	at[1].id = cudaLaunchAttributePreferredClusterDimension;
	at[1].val.preferredClusterDim.x = 4;
	at[1].val.preferredClusterDim.y = 1;
	at[1].val.preferredClusterDim.z = 1;
	c = config(dim3(16), dim3(64), 0, 0, at, 2);
	SHOW(cudaLaunchKernelEx(&c, runtime_cluster, d));
	CK(cudaDeviceSynchronize());

	/* Occupancy of clusters. */
	int v = -1;
	at[0].val.clusterDim.x = 2;
	c = config(dim3(64), dim3(128), 0, 0, NULL, 0);
	EXPECT(cudaSuccess, cudaOccupancyMaxPotentialClusterSize(
		       &v, runtime_cluster, &c));
	printf("max potential cluster size runtime_cluster 128 threads: %d\n",
	       v);
	EXPECT(cudaSuccess, cudaOccupancyMaxPotentialClusterSize(
		       &v, (const void *)fixed_cluster, &c));
	printf("max potential cluster size fixed_cluster: %d\n", v);
	c = config(dim3(64), dim3(128), 0, 0, at, 1);
	EXPECT(cudaSuccess, cudaOccupancyMaxActiveClusters(
		       &v, runtime_cluster, &c));
	printf("max active clusters of 2, 128 threads: %d\n", v);
	at[0].val.clusterDim.x = 8;
	c = config(dim3(64), dim3(1024), 0, 0, at, 1);
	EXPECT(cudaSuccess, cudaOccupancyMaxActiveClusters(
		       &v, runtime_cluster, &c));
	printf("max active clusters of 8, 1024 threads: %d\n", v);
	c = config(dim3(64), dim3(128), 0, 0, NULL, 0);
	EXPECT(cudaSuccess, cudaOccupancyMaxActiveClusters(
		       &v, (const void *)fixed_cluster, &c));
	printf("max active clusters fixed_cluster: %d\n", v);
	SHOW(cudaOccupancyMaxActiveClusters(NULL, runtime_cluster, &c));
	SHOW(cudaOccupancyMaxActiveClusters(&v, (const void *)fill, &c));

	/* Cluster attributes of a kernel. */
	show_attrs("required_cluster before", (const void *)required_cluster);
	EXPECT(cudaSuccess,
	       cudaFuncSetAttribute(required_cluster,
				    cudaFuncAttributeRequiredClusterWidth, 2));
	EXPECT(cudaSuccess,
	       cudaFuncSetAttribute(required_cluster,
				    cudaFuncAttributeRequiredClusterHeight, 1));
	EXPECT(cudaSuccess,
	       cudaFuncSetAttribute(required_cluster,
				    cudaFuncAttributeRequiredClusterDepth, 1));
	EXPECT(cudaSuccess,
	       cudaFuncSetAttribute(required_cluster,
				    cudaFuncAttributeNonPortableClusterSizeAllowed,
				    1));
	EXPECT(cudaSuccess,
	       cudaFuncSetAttribute(required_cluster,
				    cudaFuncAttributeClusterSchedulingPolicyPreference,
				    cudaClusterSchedulingPolicyLoadBalancing));
	SHOW(cudaFuncSetAttribute(required_cluster,
				  cudaFuncAttributeClusterDimMustBeSet, 1));
	show_attrs("required_cluster after", (const void *)required_cluster);
	CK(cudaMemset(d, 0xff, 64 * sizeof(int)));
	required_cluster<<<8, 32>>>(d);
	CKLAUNCH();
	print_cluster_out("required cluster 2 <<<>>>", d, 8);
	c = config(dim3(64), dim3(128), 0, 0, NULL, 0);
	EXPECT(cudaSuccess, cudaOccupancyMaxPotentialClusterSize(
		       &v, required_cluster, &c));
	printf("max potential cluster size, non-portable allowed: %d\n", v);
	SHOW(cudaFuncSetAttribute(fixed_cluster,
				  cudaFuncAttributeRequiredClusterWidth, 4));
	show_attrs("fixed_cluster", (const void *)fixed_cluster);
	CK(cudaFree(d));
}

static void attributes(void)
{
	const int n = 4096;
	int *a, *b, h[n];
	cudaStream_t st;
	cudaEvent_t ev, timed;
	cudaLaunchAttribute at[8];
	cudaLaunchConfig_t c;
	int lo = 0, hi = 0;

	CK(cudaMalloc(&a, n * sizeof(int)));
	CK(cudaMalloc(&b, n * sizeof(int)));
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CK(cudaEventCreate(&timed));
	CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));

	/* Priority, and programmatic stream serialization. */
	at[0].id = cudaLaunchAttributePriority;
	at[0].val.priority = hi;
	c = config(dim3(n / 256), dim3(256), 0, st, at, 1);
	EXPECT(cudaSuccess, cudaLaunchKernelEx(&c, fill, a, n, 5));
	at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at[0].val.programmaticStreamSerializationAllowed = 1;
	EXPECT(cudaSuccess, cudaLaunchKernelEx(&c, dependent_add,
					       (const int *)a, b, n));
	CK(cudaStreamSynchronize(st));
	CK(cudaMemcpy(h, b, sizeof(h), cudaMemcpyDeviceToHost));
	printf("priority + programmatic serialization: sum=%llu\n",
	       (unsigned long long)xct_sum(h, sizeof(h)));

	/* Launch completion and programmatic events. */
	at[0].id = cudaLaunchAttributeLaunchCompletionEvent;
	at[0].val.launchCompletionEvent.event = ev;
	at[0].val.launchCompletionEvent.flags = 0;
	c = config(dim3(n / 256), dim3(256), 0, st, at, 1);
	EXPECT(cudaSuccess, cudaLaunchKernelEx(&c, fill, a, n, 7));
	EXPECT(cudaSuccess, cudaStreamWaitEvent(0, ev, 0));
	at[0].id = cudaLaunchAttributeProgrammaticEvent;
	at[0].val.programmaticEvent.event = ev;
	at[0].val.programmaticEvent.flags = 0;
	at[0].val.programmaticEvent.triggerAtBlockStart = 0;
	EXPECT(cudaSuccess, cudaLaunchKernelEx(&c, dependent_add,
					       (const int *)a, b, n));
	EXPECT(cudaSuccess, cudaEventSynchronize(ev));
	CK(cudaStreamSynchronize(st));
	CK(cudaMemcpy(h, b, sizeof(h), cudaMemcpyDeviceToHost));
	printf("events: sum=%llu\n", (unsigned long long)xct_sum(h, sizeof(h)));
	/* A timing event is refused; so is a NULL one. */
	at[0].val.programmaticEvent.event = timed;
	SHOW(cudaLaunchKernelEx(&c, fill, a, n, 7));
	at[0].id = cudaLaunchAttributeLaunchCompletionEvent;
	at[0].val.launchCompletionEvent.event = NULL;
	SHOW(cudaLaunchKernelEx(&c, fill, a, n, 7));
	CK(cudaStreamSynchronize(st));

	/* Memory sync domains, an access policy window, the carveout, and
	 * an entry to ignore, all in one launch. */
	at[0].id = cudaLaunchAttributeMemSyncDomain;
	at[0].val.memSyncDomain = cudaLaunchMemSyncDomainRemote;
	at[1].id = cudaLaunchAttributeMemSyncDomainMap;
	at[1].val.memSyncDomainMap.default_ = 0;
	at[1].val.memSyncDomainMap.remote = 1;
	at[2].id = cudaLaunchAttributeAccessPolicyWindow;
	at[2].val.accessPolicyWindow.base_ptr = a;
	at[2].val.accessPolicyWindow.num_bytes = n * sizeof(int);
	at[2].val.accessPolicyWindow.hitRatio = 0.5f;
	at[2].val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
	at[2].val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
	at[3].id = cudaLaunchAttributePreferredSharedMemoryCarveout;
	at[3].val.sharedMemCarveout = 50;
	at[4].id = cudaLaunchAttributeIgnore;
	memset(&at[4].val, 0xee, sizeof(at[4].val));
	c = config(dim3(n / 256), dim3(256), 0, st, at, 5);
	EXPECT(cudaSuccess, cudaLaunchKernelEx(&c, fill, a, n, 11));
	CK(cudaStreamSynchronize(st));
	CK(cudaMemcpy(h, a, sizeof(h), cudaMemcpyDeviceToHost));
	printf("domains, window, carveout: sum=%llu\n",
	       (unsigned long long)xct_sum(h, sizeof(h)));

	/* What CUDA answers for the rest. */
	at[0].id = cudaLaunchAttributeNvlinkUtilCentricScheduling;
	at[0].val.nvlinkUtilCentricScheduling = 1;
	c = config(dim3(n / 256), dim3(256), 0, st, at, 1);
	SHOW(cudaLaunchKernelEx(&c, fill, a, n, 1));
	at[0].id = cudaLaunchAttributeSynchronizationPolicy;
	at[0].val.syncPolicy = cudaSyncPolicySpin;
	SHOW(cudaLaunchKernelEx(&c, fill, a, n, 1));
	at[0].id = cudaLaunchAttributeDeviceUpdatableKernelNode;
	at[0].val.deviceUpdatableKernelNode.deviceUpdatable = 1;
	at[0].val.deviceUpdatableKernelNode.devNode = NULL;
	SHOW(cudaLaunchKernelEx(&c, fill, a, n, 1));
	at[0].id = (cudaLaunchAttributeID)15;
	SHOW(cudaLaunchKernelEx(&c, fill, a, n, 1));
	at[0].id = (cudaLaunchAttributeID)0x7fffffff;
	memset(&at[0].val, 0xff, sizeof(at[0].val));
	SHOW(cudaLaunchKernelEx(&c, fill, a, n, 1));
	at[0].id = cudaLaunchAttributePreferredSharedMemoryCarveout;
	at[0].val.sharedMemCarveout = 101;
	SHOW(cudaLaunchKernelEx(&c, fill, a, n, 1));
	at[0].id = cudaLaunchAttributeMemSyncDomain;
	at[0].val.memSyncDomain = (cudaLaunchMemSyncDomain)7;
	SHOW(cudaLaunchKernelEx(&c, fill, a, n, 1));
	CK(cudaStreamSynchronize(st));

	/* Configurations refused before any attribute is looked at. */
	c = config(dim3(0), dim3(256), 0, st, NULL, 0);
	EXPECT_ERR(cudaErrorInvalidValue, cudaLaunchKernelEx(&c, fill, a, n, 1));
	c = config(dim3(1), dim3(2048), 0, st, NULL, 0);
	EXPECT_ERR(cudaErrorInvalidValue, cudaLaunchKernelEx(&c, fill, a, n, 1));
	int nn = n, v = 3;
	void *args[] = { &a, &nn, &v };
	c = config(dim3(n / 256), dim3(256), 0, st, NULL, 0);
	EXPECT(cudaSuccess, cudaLaunchKernelExC(&c, (const void *)fill, args));
	CK(cudaStreamSynchronize(st));
	CK(cudaMemcpy(h, a, sizeof(h), cudaMemcpyDeviceToHost));
	printf("cudaLaunchKernelExC: h[100]=%d\n", h[100]);

	CK(cudaEventDestroy(ev));
	CK(cudaEventDestroy(timed));
	CK(cudaStreamDestroy(st));
	CK(cudaFree(a));
	CK(cudaFree(b));
}

static size_t smem_per_block(int b)
{
	return (size_t)b * 8;
}

static void func_attributes(void)
{
	const int n = 16 * 1024;	/* 64 KiB of ints */
	int *din, *dout, optin = 0;

	CK(cudaDeviceGetAttribute(&optin,
				  cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
	printf("opt-in shared memory >= 64 KiB: %s\n",
	       xct_yes(optin >= (int)(n * sizeof(int))));
	show_attrs("dyn_copy", (const void *)dyn_copy);
	CK(cudaMalloc(&din, n * sizeof(int)));
	CK(cudaMalloc(&dout, n * sizeof(int)));
	CK(cudaMemset(din, 0, n * sizeof(int)));

	cudaLaunchConfig_t c = config(dim3(1), dim3(256), n * sizeof(int), 0,
				      NULL, 0);
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaLaunchKernelEx(&c, dyn_copy, (const int *)din, dout,
				      n));
	EXPECT(cudaSuccess,
	       cudaFuncSetAttribute(dyn_copy,
				    cudaFuncAttributeMaxDynamicSharedMemorySize,
				    n * sizeof(int)));
	EXPECT(cudaSuccess,
	       cudaLaunchKernelEx(&c, dyn_copy, (const int *)din, dout, n));
	dyn_copy<<<1, 256, n * sizeof(int)>>>(din, dout, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaFuncSetAttribute(dyn_copy,
					cudaFuncAttributeMaxDynamicSharedMemorySize,
					optin + 1));
	SHOW(cudaFuncSetAttribute(dyn_copy,
				  cudaFuncAttributeMaxDynamicSharedMemorySize,
				  -1));
	EXPECT(cudaSuccess,
	       cudaFuncSetAttribute(dyn_copy,
				    cudaFuncAttributePreferredSharedMemoryCarveout,
				    25));
	SHOW(cudaFuncSetAttribute(dyn_copy,
				  cudaFuncAttributePreferredSharedMemoryCarveout,
				  101));
	SHOW(cudaFuncSetAttribute(dyn_copy,
				  cudaFuncAttributePreferredSharedMemoryCarveout,
				  -1));
	SHOW(cudaFuncSetAttribute(dyn_copy, cudaFuncAttributeMax, 1));
	SHOW(cudaFuncSetAttribute(dyn_copy, (cudaFuncAttribute)1000, 1));
	SHOW(cudaFuncSetAttribute((const void *)&optin,
				  cudaFuncAttributeMaxDynamicSharedMemorySize,
				  1024));
	show_attrs("dyn_copy after", (const void *)dyn_copy);
	/* Lowering the limit again refuses the large launch at the call. */
	EXPECT(cudaSuccess,
	       cudaFuncSetAttribute(dyn_copy,
				    cudaFuncAttributeMaxDynamicSharedMemorySize,
				    1024));
	EXPECT_ERR(cudaErrorInvalidValue,
		   cudaLaunchKernelEx(&c, dyn_copy, (const int *)din, dout,
				      n));
	dyn_copy<<<1, 256, n * sizeof(int)>>>(din, dout, n);
	EXPECT(cudaErrorInvalidValue, cudaGetLastError());
	CK(cudaFuncSetCacheConfig(dyn_copy, cudaFuncCachePreferShared));

	/* The occupancy templates of cuda_runtime.h. */
	int grid = 0, block = 0;
	CK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, coop_sum, 0, 0));
	printf("max potential block size coop_sum: grid>0=%s block=%d\n",
	       xct_yes(grid > 0), block);
	CK(cudaOccupancyMaxPotentialBlockSizeVariableSMem(
		&grid, &block, dyn_copy, smem_per_block, 0));
	printf("max potential block size dyn_copy (8 B/thread): grid>0=%s "
	       "block=%d\n", xct_yes(grid > 0), block);
	CK(cudaOccupancyMaxPotentialBlockSizeWithFlags(
		&grid, &block, fill, 0, 256, cudaOccupancyDefault));
	printf("max potential block size fill (limit 256): block=%d\n",
	       block);
	CK(cudaFree(din));
	CK(cudaFree(dout));
}

static void kernel_queries(void)
{
	const char *name = NULL;
	size_t off = 0, size = 0;
	cudaKernel_t k = NULL;
	cudaFunction_t fn = NULL;

	EXPECT(cudaSuccess, cudaFuncGetName(&name, params3));
	printf("name: %s\n", name ? name : "(null)");
	EXPECT(cudaSuccess, cudaFuncGetName(&name, (const void *)fill));
	printf("name: %s\n", name ? name : "(null)");
	SHOW(cudaFuncGetName(NULL, (const void *)fill));
	SHOW(cudaFuncGetName(&name, (const void *)&off));
	for (size_t i = 0; i < 4; i++) {
		cudaError_t e = cudaFuncGetParamInfo((const void *)params3, i,
						     &off, &size);
		printf("param %zu: %s", i, cudaGetErrorName(e));
		if (e == cudaSuccess)
			printf(" offset=%zu size=%zu", off, size);
		printf("\n");
	}
	cudaGetLastError();
	EXPECT(cudaSuccess, cudaGetKernel(&k, fill));
	EXPECT(cudaSuccess, cudaGetFuncBySymbol(&fn, (const void *)fill));
	printf("kernel and function handles: %s %s\n", xct_yes(k != NULL),
	       xct_yes(fn != NULL));

	/* A launch through the cudaKernel_t. */
	int *d, h[256], nn = 256, v = 40;
	void *args[] = { &d, &nn, &v };
	CK(cudaMalloc(&d, sizeof(h)));
	CK(cudaLaunchKernel((const void *)k, dim3(1), dim3(256), args, 0, 0));
	cudaLaunchConfig_t c = config(dim3(1), dim3(256), 0, 0, NULL, 0);
	v = 41;
	EXPECT(cudaSuccess, cudaLaunchKernelExC(&c, (const void *)k, args));
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	printf("launch by cudaKernel_t: h[0]=%d h[255]=%d\n", h[0], h[255]);
	SHOW(cudaGetKernel(&k, (const void *)&off));
	CK(cudaFree(d));
}

/*
 * Pointers that name no kernel: CUDA 13 takes any of them for a
 * cudaKernel_t, which the driver refuses, wherever a kernel handle is
 * accepted; cudaGetKernel takes only an entry function's address.
 */
static int not_a_kernel_var;
static void host_only(void) {}

static void unknown_functions(int major)
{
	const void *unk = (const void *)&not_a_kernel_var;
	const void *host = (const void *)host_only;
	cudaFuncAttributes fa;
	const char *name = NULL;
	size_t off = 0, size = 0;
	int n = 0, v = 0, nn = 1, *d = NULL;
	void *args[] = { &d, &nn, &v };

	SHOW(cudaFuncGetAttributes(&fa, unk));
	SHOW(cudaFuncGetAttributes(&fa, host));
	SHOW(cudaFuncSetAttribute(
		host, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
	SHOW(cudaFuncSetCacheConfig(unk, cudaFuncCachePreferL1));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	SHOW(cudaFuncSetSharedMemConfig(unk, cudaSharedMemBankSizeFourByte));
#pragma GCC diagnostic pop
	SHOW(cudaFuncGetName(&name, host));
	SHOW(cudaFuncGetParamInfo(unk, 0, &off, &size));
	SHOW(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, unk, 128, 0));
	SHOW(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
		&n, host, 128, 0, cudaOccupancyDisableCachingOverride));
	SHOW(cudaOccupancyAvailableDynamicSMemPerBlock(&size, unk, 1, 128));
	SHOW(cudaKernelSetAttributeForDevice(
		(cudaKernel_t)unk, cudaFuncAttributeMaxDynamicSharedMemorySize,
		1024, 0));
	SHOW(cudaLaunchKernel(unk, dim3(1), dim3(1), args, 0, 0));
	SHOW(cudaLaunchCooperativeKernel(unk, dim3(1), dim3(1), args, 0, 0));
	cudaLaunchConfig_t c = config(dim3(2), dim3(128), 0, 0, NULL, 0);
	SHOW(cudaLaunchKernelExC(&c, unk, args));
	if (major >= 9) {
		SHOW(cudaOccupancyMaxPotentialClusterSize(&v, unk, &c));
		SHOW(cudaOccupancyMaxActiveClusters(&v, host, &c));
	}
	/* Nothing launched: the context is as it was. */
	CK(cudaDeviceSynchronize());
}

int main(void)
{
	cudaDeviceProp p;
	int major = 0;

	CK(cudaSetDevice(0));
	CK(cudaGetDeviceProperties(&p, 0));
	major = p.major;
	printf("compute capability >= 9: %s\n", xct_yes(major >= 9));
	cooperative(p.multiProcessorCount);
	clusters(major);
	attributes();
	func_attributes();
	kernel_queries();
	unknown_functions(major);
	CK(cudaDeviceSynchronize());
	return xct_finish("launch_ex");
}
