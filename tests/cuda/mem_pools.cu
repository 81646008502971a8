/* SPDX-License-Identifier: MIT */
/*
 * The stream-ordered allocator and memory pools: cudaMallocAsync and
 * cudaFreeAsync on streams, the device's default and current pools, pool
 * attributes, a pool of the program's own with access descriptors,
 * cudaMallocFromPoolAsync, trimming, and the errors CUDA reports at the
 * call.  Handles and addresses are compared, never printed.
 */
#include "common/xct.h"

__global__ void fill(int *p, int n, int v)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] = v + i;
}

static int check(const int *d, int n, int v, cudaStream_t s)
{
	int *h = (int *)malloc(n * sizeof(int)), bad = 0;

	CK(cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDefault, s));
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < n; i++)
		bad += h[i] != v + i;
	free(h);
	return bad;
}

static void show_attrs(cudaMemPool_t pool, const char *what)
{
	unsigned long long threshold = 7, used = 7, reserved = 7;
	int opportunistic = 7;

	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
				   &threshold));
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent,
				   &used));
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent,
				   &reserved));
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic,
				   &opportunistic));
	printf("%s: threshold %llu, used > 0: %s, reserved >= used: %s, "
	       "opportunistic %d\n", what, (unsigned long long)threshold,
	       xct_yes(used > 0), xct_yes(reserved >= used), opportunistic);
}

int main(void)
{
	const int n = 1 << 20;
	cudaMemPool_t def = NULL, def2 = NULL, cur = NULL, mine = NULL;
	cudaStream_t s;
	int *a = NULL, *b = NULL;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	/* The device's own pools. */
	CK(cudaDeviceGetDefaultMemPool(&def, 0));
	CK(cudaDeviceGetDefaultMemPool(&def2, 0));
	CK(cudaDeviceGetMemPool(&cur, 0));
	printf("default pool twice: same %s; current is default: %s\n",
	       xct_yes(def == def2), xct_yes(cur == def));

	/* Allocate, use and free in stream order. */
	CK(cudaMallocAsync((void **)&a, n * sizeof(int), s));
	fill<<<64, 256, 0, s>>>(a, n, 5);
	CKLAUNCH();
	printf("cudaMallocAsync data: bad=%d\n", check(a, n, 5, s));
	cudaPointerAttributes pa;
	CK(cudaPointerGetAttributes(&pa, a));
	printf("pointer type %d, device %d\n", (int)pa.type, pa.device);
	show_attrs(def, "default pool in use");
	CK(cudaFreeAsync(a, s));
	CK(cudaStreamSynchronize(s));

	unsigned long long thr = 1 << 20;
	int opp = 0;
	CK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr));
	CK(cudaMemPoolSetAttribute(def, cudaMemPoolReuseAllowOpportunistic,
				   &opp));
	show_attrs(def, "default pool after set");
	thr = 0;
	opp = 1;
	CK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr));
	CK(cudaMemPoolSetAttribute(def, cudaMemPoolReuseAllowOpportunistic,
				   &opp));

	/* A pool of our own. */
	cudaMemPoolProps props;
	memset(&props, 0, sizeof(props));
	props.allocType = cudaMemAllocationTypePinned;
	props.handleTypes = cudaMemHandleTypeNone;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	CK(cudaMemPoolCreate(&mine, &props));
	printf("own pool differs from default: %s\n", xct_yes(mine != def));
	cudaMemAccessDesc desc;
	memset(&desc, 0, sizeof(desc));
	desc.location = props.location;
	desc.flags = cudaMemAccessFlagsProtReadWrite;
	CK(cudaMemPoolSetAccess(mine, &desc, 1));
	cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
	CK(cudaMemPoolGetAccess(&flags, mine, &props.location));
	printf("own pool access from device 0: %d\n", (int)flags);
	CK(cudaMallocFromPoolAsync((void **)&b, n * sizeof(int), mine, s));
	fill<<<64, 256, 0, s>>>(b, n, 9);
	CKLAUNCH();
	printf("cudaMallocFromPoolAsync data: bad=%d\n", check(b, n, 9, s));
	show_attrs(mine, "own pool in use");
	CK(cudaFreeAsync(b, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaMemPoolTrimTo(mine, 0));

	/* The device's current pool, set and restored. */
	CK(cudaDeviceSetMemPool(0, mine));
	CK(cudaDeviceGetMemPool(&cur, 0));
	printf("current after set is own: %s\n", xct_yes(cur == mine));
	CK(cudaMallocAsync((void **)&a, 4096, s));
	CK(cudaFreeAsync(a, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaDeviceSetMemPool(0, def));
	CK(cudaDeviceGetMemPool(&cur, 0));
	printf("current after restore is default: %s\n", xct_yes(cur == def));
	CK(cudaMemPoolDestroy(mine));

	/* What CUDA refuses at the call. */
	EXPECT_ERR(cudaErrorInvalidValue, cudaMallocAsync(NULL, 64, s));
	EXPECT_ERR(cudaErrorInvalidValue, cudaMemPoolCreate(&mine, NULL));
	props.location.id = 99;
	printf("cudaMemPoolCreate(device 99) -> %s\n",
	       cudaGetErrorName(cudaMemPoolCreate(&mine, &props)));
	cudaGetLastError();
	printf("cudaMemPoolGetAttribute(attr 99) -> %s\n",
	       cudaGetErrorName(cudaMemPoolGetAttribute(def,
				(cudaMemPoolAttr)99, &thr)));
	cudaGetLastError();
	printf("cudaDeviceGetDefaultMemPool(device 99) -> %s\n",
	       cudaGetErrorName(cudaDeviceGetDefaultMemPool(&def2, 99)));
	cudaGetLastError();

	CK(cudaStreamDestroy(s));
	return xct_finish("mem_pools");
}
