/* SPDX-License-Identifier: MIT */
/*
 * Page-locked host memory: cudaHostAlloc (default, portable, write-combined),
 * cudaHostGetFlags, cudaHostRegister/cudaHostUnregister of malloc memory
 * (attributes before, during and after; double register and unregister of
 * unregistered memory), copies from and to all of them, and a kernel
 * writing mapped page-locked memory through its host address.
 */
#include "common/xct.h"

static const char *type_of(const void *p)
{
	cudaPointerAttributes a;
	cudaError_t e = cudaPointerGetAttributes(&a, p);
	if (e != cudaSuccess) {
		cudaGetLastError();
		return cudaGetErrorName(e);
	}
	switch (a.type) {
	case cudaMemoryTypeUnregistered:
		return "Unregistered";
	case cudaMemoryTypeHost:
		return "Host";
	case cudaMemoryTypeDevice:
		return "Device";
	default:
		return "other";
	}
}

static void roundtrip(const char *what, unsigned char *h, void *d, size_t n,
		      uint32_t seed)
{
	xct_fill(h, n, seed);
	uint64_t want = xct_sum(h, n);
	CK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
	uint64_t dev = xct_device_sum(d, n);
	memset(h, 0, n);
	CK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
	uint64_t back = xct_sum(h, n);
	printf("%-22s sum=%016llx h2d=%s d2h=%s\n", what,
	       (unsigned long long)want, dev == want ? "ok" : "BAD",
	       back == want ? "ok" : "BAD");
	REQUIRE(dev == want && back == want, "%s", what);
}

__global__ void write_bytes(unsigned char *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = (unsigned char)(i * 7 + 3);
}

int main(void)
{
	CK(cudaSetDevice(0));
	const size_t n = 8u << 20;
	void *d;
	CK(cudaMalloc(&d, n));

	static const struct {
		unsigned flags;
		const char *name;
	} kinds[] = {
		{cudaHostAllocDefault, "Default"},
		{cudaHostAllocPortable, "Portable"},
		{cudaHostAllocWriteCombined, "WriteCombined"},
	};
	uint32_t seed = 100;
	for (auto &k : kinds) {
		unsigned char *h;
		unsigned flags = 0xffff;
		CK(cudaHostAlloc(&h, n, k.flags));
		CK(cudaHostGetFlags(&flags, h));
		printf("cudaHostAlloc %s: flags=0x%x type=%s\n", k.name, flags,
		       type_of(h));
		char what[64];
		snprintf(what, sizeof(what), "cudaHostAlloc %s", k.name);
		roundtrip(what, h, d, n, seed++);
		CK(cudaFreeHost(h));
	}

	/* registering malloc memory */
	unsigned char *m = (unsigned char *)aligned_alloc(4096, n);
	REQUIRE(m, "aligned_alloc");
	memset(m, 0, n);
	printf("malloc before register: type=%s\n", type_of(m));
	CK(cudaHostRegister(m, n, cudaHostRegisterDefault));
	printf("malloc registered: type=%s inside=%s\n", type_of(m),
	       type_of(m + n / 2));
	unsigned flags = 0xffff;
	CK(cudaHostGetFlags(&flags, m));
	printf("registered flags=0x%x\n", flags);
	EXPECT_ERR(cudaErrorHostMemoryAlreadyRegistered,
		   cudaHostRegister(m, n, cudaHostRegisterDefault));
	roundtrip("registered", m, d, n, seed++);
	/* async copies from registered memory */
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	xct_fill(m, n, seed++);
	uint64_t want = xct_sum(m, n);
	CK(cudaMemcpyAsync(d, m, n, cudaMemcpyHostToDevice, s));
	CK(cudaStreamSynchronize(s));
	memset(m, 0, n);
	CK(cudaMemcpyAsync(m, d, n, cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	printf("registered async: %s\n", xct_sum(m, n) == want ? "ok" : "BAD");
	REQUIRE(xct_sum(m, n) == want, "registered async");
	CK(cudaHostUnregister(m));
	printf("malloc after unregister: type=%s\n", type_of(m));
	EXPECT_ERR(cudaErrorHostMemoryNotRegistered, cudaHostUnregister(m));
	/* the memory stays usable as pageable memory */
	roundtrip("unregistered", m, d, n, seed++);
	/* register a part in the middle */
	CK(cudaHostRegister(m + 8192, 65536, cudaHostRegisterPortable));
	printf("part registered: before=%s start=%s end=%s after=%s\n",
	       type_of(m), type_of(m + 8192), type_of(m + 8192 + 65535),
	       type_of(m + 8192 + 65536));
	roundtrip("part registered", m + 8192, d, 65536, seed++);
	CK(cudaHostUnregister(m + 8192));

	/* zero copy: a kernel writes page-locked memory through its host
	 * address, which unified addressing makes its device address too */
	unsigned char *z;
	void *dz = nullptr;
	CK(cudaHostAlloc(&z, 4096, cudaHostAllocMapped));
	memset(z, 0, 4096);
	CK(cudaHostGetDevicePointer(&dz, z, 0));
	printf("mapped: device pointer is the host pointer: %s\n",
	       dz == z ? "yes" : "no");
	write_bytes<<<16, 256>>>(z, 4096);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	int zbad = 0;
	for (int i = 0; i < 4096; i++)
		zbad += z[i] != (unsigned char)(i * 7 + 3);
	printf("kernel wrote host memory directly: bad=%d\n", zbad);
	REQUIRE(zbad == 0, "zero copy");
	CK(cudaFreeHost(z));

	CK(cudaStreamDestroy(s));
	free(m);
	CK(cudaFree(d));
	return xct_finish("host_alloc");
}
