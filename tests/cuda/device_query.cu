/* SPDX-License-Identifier: MIT */
/*
 * Device queries: cudaRuntimeGetVersion, cudaGetDeviceCount, cudaSetDevice,
 * cudaGetDevice, cudaSetDeviceFlags/cudaGetDeviceFlags, cudaGetDeviceProperties,
 * cudaDeviceGetAttribute (checked against the properties), cudaMemGetInfo
 * (only free <= total and total > 0 are printed), cudaDeviceGetLimit and
 * cudaDeviceSetLimit.
 */
#include "common/xct.h"

int main(void)
{
	int rt = 0;
	CK(cudaRuntimeGetVersion(&rt));
	printf("runtime version: %d\n", rt);

	/* flags first: they apply when the primary context is created */
	CK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
	int count = -1;
	CK(cudaGetDeviceCount(&count));
	printf("device count > 0: %s\n", count > 0 ? "yes" : "no");
	REQUIRE(count > 0, "device count");
	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	unsigned flags = 0;
	CK(cudaGetDeviceFlags(&flags));
	printf("device flags: 0x%x (blocking sync: %s)\n", flags,
	       (flags & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync
		       ? "yes"
		       : "no");
	int dev = -1;
	CK(cudaGetDevice(&dev));
	printf("current device: %d\n", dev);

	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, 0));
	printf("name: %s\n", p.name);
	printf("compute capability: %d.%d\n", p.major, p.minor);
	printf("totalGlobalMem: %zu (> 0: %s)\n", p.totalGlobalMem,
	       p.totalGlobalMem > 0 ? "yes" : "no");
	printf("multiProcessorCount: %d (> 0: %s)\n", p.multiProcessorCount,
	       p.multiProcessorCount > 0 ? "yes" : "no");
	printf("warpSize: %d\n", p.warpSize);
	printf("maxThreadsPerBlock: %d\n", p.maxThreadsPerBlock);
	printf("maxThreadsDim: %d %d %d\n", p.maxThreadsDim[0],
	       p.maxThreadsDim[1], p.maxThreadsDim[2]);
	printf("maxGridSize: %d %d %d\n", p.maxGridSize[0], p.maxGridSize[1],
	       p.maxGridSize[2]);
	printf("sharedMemPerBlock: %zu optin: %zu\n", p.sharedMemPerBlock,
	       p.sharedMemPerBlockOptin);
	printf("regsPerBlock: %d\n", p.regsPerBlock);
	printf("totalConstMem: %zu\n", p.totalConstMem);
	printf("l2CacheSize: %d\n", p.l2CacheSize);
	printf("unifiedAddressing: %d concurrentKernels: %d\n",
	       p.unifiedAddressing, p.concurrentKernels);
	REQUIRE(p.totalGlobalMem > 0 && p.multiProcessorCount > 0 &&
			p.warpSize == 32,
		"properties");

	struct {
		cudaDeviceAttr a;
		const char *name;
		long long prop;
	} attrs[] = {
		{cudaDevAttrComputeCapabilityMajor, "ComputeCapabilityMajor",
		 p.major},
		{cudaDevAttrComputeCapabilityMinor, "ComputeCapabilityMinor",
		 p.minor},
		{cudaDevAttrMultiProcessorCount, "MultiProcessorCount",
		 p.multiProcessorCount},
		{cudaDevAttrWarpSize, "WarpSize", p.warpSize},
		{cudaDevAttrMaxThreadsPerBlock, "MaxThreadsPerBlock",
		 p.maxThreadsPerBlock},
		{cudaDevAttrMaxBlockDimX, "MaxBlockDimX", p.maxThreadsDim[0]},
		{cudaDevAttrMaxGridDimY, "MaxGridDimY", p.maxGridSize[1]},
		{cudaDevAttrMaxSharedMemoryPerBlockOptin,
		 "MaxSharedMemoryPerBlockOptin", (long long)p.sharedMemPerBlockOptin},
		{cudaDevAttrL2CacheSize, "L2CacheSize", p.l2CacheSize},
		{cudaDevAttrUnifiedAddressing, "UnifiedAddressing",
		 p.unifiedAddressing},
		{cudaDevAttrConcurrentKernels, "ConcurrentKernels",
		 p.concurrentKernels},
	};
	for (auto &a : attrs) {
		int v = -1;
		CK(cudaDeviceGetAttribute(&v, a.a, 0));
		printf("attribute %s: %d (%s)\n", a.name, v,
		       v == a.prop ? "matches properties" : "MISMATCH");
		if (v != a.prop)
			xct_failures++;
	}
	int v = 0;
	EXPECT_ERR(cudaErrorInvalidDevice,
		   cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 999));
	EXPECT_ERR(cudaErrorInvalidDevice, cudaGetDeviceProperties(&p, 999));

	size_t fr = 0, total = 0;
	CK(cudaMemGetInfo(&fr, &total));
	printf("memory: free <= total: %s, total > 0: %s\n",
	       fr <= total ? "yes" : "no", total > 0 ? "yes" : "no");
	REQUIRE(fr <= total && total > 0, "cudaMemGetInfo");

	size_t stack = 0, stack2 = 0;
	CK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
	printf("stack size limit > 0: %s\n", stack > 0 ? "yes" : "no");
	CK(cudaDeviceSetLimit(cudaLimitStackSize, 8192));
	CK(cudaDeviceGetLimit(&stack2, cudaLimitStackSize));
	printf("stack size limit after set(8192): %zu\n", stack2);
	REQUIRE(stack2 >= 8192, "stack size limit");
	CK(cudaDeviceSetLimit(cudaLimitStackSize, stack));
	CK(cudaDeviceGetLimit(&stack2, cudaLimitStackSize));
	printf("stack size limit restored: %s\n", stack2 == stack ? "yes" : "no");
	size_t heap = 0;
	CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16u << 20));
	CK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
	printf("malloc heap limit after set(16 MiB): %zu\n", heap);
	size_t fifo = 0;
	CK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
	printf("printf fifo limit > 0: %s\n", fifo > 0 ? "yes" : "no");
	CK(cudaDeviceSynchronize());
	return xct_finish("device_query");
}
