/* SPDX-License-Identifier: MIT */
/*
 * Device-wide configuration: cudaDeviceGetCacheConfig,
 * cudaDeviceSetCacheConfig (each preference set, read back, restored) and
 * cudaFuncSetCacheConfig on a kernel (C and C++ forms); cudaProfilerStart
 * and cudaProfilerStop; cudaDeviceGetLimit/cudaDeviceSetLimit for the stack
 * size, the printf FIFO and the malloc heap (set, read back as CUDA rounds
 * it, restored), the other limits, and invalid ones;
 * cudaDeviceGetPCIBusId (whole, and into buffers too small) and
 * cudaDeviceGetByPCIBusId (round trip, lower/upper case, short forms,
 * bogus ids).  The bus id itself is never printed, only its length, its
 * shape and the round trips.  NULL outputs and invalid values are printed
 * with the error names CUDA returns.
 */
#include <ctype.h>
#include <cuda_profiler_api.h>
#include "common/xct.h"

__global__ void touch(int *p, int v)
{
	p[blockIdx.x * blockDim.x + threadIdx.x] = v * 7 + threadIdx.x;
}

/* not a kernel: cudaFuncSetCacheConfig must refuse it */
static void host_only(void)
{
}

static const char *cache_name(cudaFuncCache c)
{
	switch (c) {
	case cudaFuncCachePreferNone:
		return "PreferNone";
	case cudaFuncCachePreferShared:
		return "PreferShared";
	case cudaFuncCachePreferL1:
		return "PreferL1";
	case cudaFuncCachePreferEqual:
		return "PreferEqual";
	}
	return "?";
}

static void run_touch(int *d, int v)
{
	int h[256];
	touch<<<2, 128>>>(d, v);
	CKLAUNCH();
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < 256; i++)
		bad += h[i] != v * 7 + i % 128;
	printf("  kernel after it: bad=%d\n", bad);
	REQUIRE(bad == 0, "touch");
}

static void cache_config(int *d)
{
	cudaFuncCache orig, c;
	CK(cudaDeviceGetCacheConfig(&orig));
	printf("device cache config: %s\n", cache_name(orig));
	static const cudaFuncCache prefs[] = {
		cudaFuncCachePreferShared, cudaFuncCachePreferL1,
		cudaFuncCachePreferEqual, cudaFuncCachePreferNone};
	for (cudaFuncCache p : prefs) {
		CK(cudaDeviceSetCacheConfig(p));
		c = (cudaFuncCache)77;
		CK(cudaDeviceGetCacheConfig(&c));
		printf("device cache config set %s, read back %s\n",
		       cache_name(p), cache_name(c));
	}
	CK(cudaDeviceSetCacheConfig(cudaFuncCachePreferL1));
	SHOW(cudaDeviceSetCacheConfig((cudaFuncCache)4));
	SHOW(cudaDeviceSetCacheConfig((cudaFuncCache)-1));
	c = (cudaFuncCache)77;
	CK(cudaDeviceGetCacheConfig(&c));
	printf("  read back after invalid ones: %s\n", cache_name(c));
	run_touch(d, 1);
	CK(cudaDeviceSetCacheConfig(orig));
	c = (cudaFuncCache)77;
	CK(cudaDeviceGetCacheConfig(&c));
	printf("device cache config restored: %s\n", xct_yes(c == orig));
	SHOW(cudaDeviceGetCacheConfig(NULL));

	/* per kernel: there is no getter, so the launch is the check */
	SHOW(cudaFuncSetCacheConfig(touch, cudaFuncCachePreferShared));
	run_touch(d, 2);
	SHOW(cudaFuncSetCacheConfig((const void *)touch,
				    cudaFuncCachePreferL1));
	run_touch(d, 3);
	SHOW(cudaFuncSetCacheConfig((const void *)touch,
				    cudaFuncCachePreferEqual));
	SHOW(cudaFuncSetCacheConfig((const void *)touch,
				    cudaFuncCachePreferNone));
	SHOW(cudaFuncSetCacheConfig((const void *)touch, (cudaFuncCache)4));
	SHOW(cudaFuncSetCacheConfig((const void *)host_only,
				    cudaFuncCachePreferL1));
	SHOW(cudaFuncSetCacheConfig((const void *)NULL,
				    cudaFuncCachePreferL1));
	run_touch(d, 4);
}

static void profiler(void)
{
	SHOW(cudaProfilerStart());
	SHOW(cudaProfilerStart()); /* already started: no effect */
	SHOW(cudaProfilerStop());
	SHOW(cudaProfilerStop()); /* already stopped: no effect */
	SHOW(cudaProfilerStart());
	SHOW(cudaProfilerStop());
}

static void one_limit(const char *name, cudaLimit lim, const size_t *vals,
		      int nvals)
{
	size_t orig = 0, v;
	CK(cudaDeviceGetLimit(&orig, lim));
	printf("%s: default %zu\n", name, orig);
	for (int i = 0; i < nvals; i++) {
		printf("%s: set %zu:\n", name, vals[i]);
		SHOW(cudaDeviceSetLimit(lim, vals[i]));
		v = 0x7777;
		CK(cudaDeviceGetLimit(&v, lim));
		printf("  read back %zu\n", v);
	}
	CK(cudaDeviceSetLimit(lim, orig));
	v = 0x7777;
	CK(cudaDeviceGetLimit(&v, lim));
	printf("%s: restored: %s\n", name, xct_yes(v == orig));
}

static void limits(void)
{
	static const size_t stack[] = {4096, 1000, 1};
	static const size_t fifo[] = {2u << 20, 1000001, 4096};
	static const size_t heap[] = {32u << 20, 1000001, 1u << 20};
	one_limit("cudaLimitStackSize", cudaLimitStackSize, stack, 3);
	one_limit("cudaLimitPrintfFifoSize", cudaLimitPrintfFifoSize, fifo, 3);
	one_limit("cudaLimitMallocHeapSize", cudaLimitMallocHeapSize, heap, 3);

	/* the others are only read (and the sync depth, set) */
	static const struct {
		cudaLimit lim;
		const char *name;
	} others[] = {
		{cudaLimitDevRuntimeSyncDepth, "cudaLimitDevRuntimeSyncDepth"},
		{cudaLimitDevRuntimePendingLaunchCount,
		 "cudaLimitDevRuntimePendingLaunchCount"},
		{cudaLimitMaxL2FetchGranularity,
		 "cudaLimitMaxL2FetchGranularity"},
		{cudaLimitPersistingL2CacheSize,
		 "cudaLimitPersistingL2CacheSize"},
		{(cudaLimit)0x7f, "limit 0x7f"},
		{(cudaLimit)-1, "limit -1"},
	};
	for (auto &o : others) {
		size_t v = 0x7777;
		printf("%s:\n", o.name);
		if (SHOW(cudaDeviceGetLimit(&v, o.lim)) == cudaSuccess)
			printf("  value %zu\n", v);
	}
	SHOW(cudaDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 4));
	SHOW(cudaDeviceSetLimit((cudaLimit)0x7f, 4096));
	SHOW(cudaDeviceSetLimit((cudaLimit)-1, 4096));
	SHOW(cudaDeviceGetLimit(NULL, cudaLimitStackSize));
	SHOW(cudaDeviceGetLimit(NULL, (cudaLimit)0x7f));
}

#define PAD 0x7f /* no bus id character, nor NUL */

/* What a call with a buffer of len bytes wrote into a padded buffer. */
static void bus_id_small(const char *full, int len)
{
	char b[64];
	memset(b, PAD, sizeof(b));
	printf("cudaDeviceGetPCIBusId, len %d:\n", len);
	SHOW(cudaDeviceGetPCIBusId(b, len, 0));
	int written = 0, last = -1, nul = -1;
	for (int i = 0; i < (int)sizeof(b); i++) {
		if ((unsigned char)b[i] != PAD) {
			written++;
			last = i;
			if (b[i] == 0 && nul < 0)
				nul = i;
		}
	}
	bool prefix = nul >= 0 && strncmp(b, full, nul) == 0;
	printf("  bytes written %d, all within len: %s, NUL at %d, "
	       "a prefix of the id: %s\n",
	       written, xct_yes(last < len), nul, xct_yes(prefix));
}

static void lookup(const char *what, const char *id)
{
	int dev = 0x7777;
	printf("cudaDeviceGetByPCIBusId, %s:\n", what);
	if (SHOW(cudaDeviceGetByPCIBusId(&dev, id)) == cudaSuccess)
		printf("  device %d\n", dev);
}

static bool hexes(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static void pci_bus_id(void)
{
	char id[64];
	memset(id, PAD, sizeof(id));
	CK(cudaDeviceGetPCIBusId(id, (int)sizeof(id), 0));
	size_t len = strnlen(id, sizeof(id));
	REQUIRE(len < sizeof(id), "bus id not terminated");
	/* domain:bus:device.function, hexadecimal */
	const char *c1 = strchr(id, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	const char *dot = c2 ? strchr(c2 + 1, '.') : NULL;
	bool shaped = c1 && c2 && dot && hexes(id, (int)(c1 - id)) &&
		      c2 - c1 == 3 && hexes(c1 + 1, 2) && dot - c2 == 3 &&
		      hexes(c2 + 1, 2) && strlen(dot + 1) == 1 &&
		      hexes(dot + 1, 1);
	printf("bus id: length %zu, domain digits %d, "
	       "domain:bus:device.function: %s\n",
	       len, c1 ? (int)(c1 - id) : -1, xct_yes(shaped));
	REQUIRE(shaped, "bus id shape");

	int dev = 0x7777;
	CK(cudaDeviceGetByPCIBusId(&dev, id));
	printf("round trip gives device %d\n", dev);
	REQUIRE(dev == 0, "round trip");

	char alt[80];
	size_t i;
	for (i = 0; id[i]; i++)
		alt[i] = (char)tolower((unsigned char)id[i]);
	alt[i] = 0;
	lookup("lower case", alt);
	for (i = 0; id[i]; i++)
		alt[i] = (char)toupper((unsigned char)id[i]);
	alt[i] = 0;
	lookup("upper case", alt);
	lookup("bus:device.function (no domain)", c1 + 1);
	snprintf(alt, sizeof(alt), "%.*s", (int)(dot - id), id);
	lookup("domain:bus:device (no function)", alt);
	snprintf(alt, sizeof(alt), "%s\n", id);
	lookup("with a trailing newline", alt);
	lookup("bogus \"zz:zz.z\"", "zz:zz.z");
	lookup("well formed, absent \"ffff:ff:1f.7\"", "ffff:ff:1f.7");
	lookup("empty", "");
	lookup("NULL", NULL);
	SHOW(cudaDeviceGetByPCIBusId(NULL, id));

	bus_id_small(id, 4);
	bus_id_small(id, 1);
	bus_id_small(id, 0);
	bus_id_small(id, (int)len);
	bus_id_small(id, (int)len + 1);

	char other[64];
	memset(other, PAD, sizeof(other));
	SHOW(cudaDeviceGetPCIBusId(other, (int)sizeof(other), 999));
	SHOW(cudaDeviceGetPCIBusId(other, (int)sizeof(other), -1));
	SHOW(cudaDeviceGetPCIBusId(NULL, (int)sizeof(other), 0));
}

int main(void)
{
	CK(cudaSetDevice(0));
	int *d;
	CK(cudaMalloc(&d, 256 * sizeof(int)));
	limits();
	cache_config(d);
	profiler();
	pci_bus_id();
	run_touch(d, 5);
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	EXPECT(cudaSuccess, cudaGetLastError());
	return xct_finish("device_config");
}
