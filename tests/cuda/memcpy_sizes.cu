/* SPDX-License-Identifier: MIT */
/*
 * Host<->device copies of 1 B, 3 B, 4 KiB, 1 MiB+7, 16 MiB, 64 MiB and
 * 256 MiB, from pageable (malloc) and pinned (cudaMallocHost) memory, plus
 * unaligned host and device addresses.  H2D is checked by a checksum
 * computed on the device, D2H by copying back a pattern the device wrote.
 */
#include "common/xct.h"

static const size_t sizes[] = {1,	  3,	     4096,      (1u << 20) + 7,
			       16u << 20, 64u << 20, 256u << 20};
#define MAXSZ ((256u << 20) + 16)

static void one(const char *kind, unsigned char *host, unsigned char *dev,
		size_t size, uint32_t seed)
{
	xct_fill(host, size, seed);
	uint64_t hs = xct_sum(host, size);
	CK(cudaMemset(dev, 0, size));
	CK(cudaMemcpy(dev, host, size, cudaMemcpyHostToDevice));
	uint64_t ds = xct_device_sum(dev, size);

	memset(host, 0, size);
	CK(cudaMemset(dev, 0, size));
	xct_device_fill(dev, size, seed);
	CK(cudaMemcpy(host, dev, size, cudaMemcpyDeviceToHost));
	uint64_t rs = xct_sum(host, size);

	printf("%-16s size=%-10zu sum=%016llx h2d=%s d2h=%s\n", kind, size,
	       (unsigned long long)hs, ds == hs ? "ok" : "BAD",
	       rs == hs ? "ok" : "BAD");
	REQUIRE(ds == hs && rs == hs, "%s copy of %zu bytes", kind, size);
}

int main(void)
{
	CK(cudaSetDevice(0));
	unsigned char *dev, *pinned;
	unsigned char *pageable = (unsigned char *)malloc(MAXSZ);
	REQUIRE(pageable, "host malloc");
	CK(cudaMalloc(&dev, MAXSZ));
	CK(cudaMallocHost(&pinned, MAXSZ));

	uint32_t seed = 1;
	for (size_t s : sizes)
		one("pageable", pageable, dev, s, seed++);
	for (size_t s : sizes)
		one("pinned", pinned, dev, s, seed++);
	/* unaligned host and device addresses */
	one("pageable+1/+3", pageable + 1, dev + 3, 3, seed++);
	one("pageable+1/+3", pageable + 1, dev + 3, (1u << 20) + 7, seed++);
	one("pinned+5/+1", pinned + 5, dev + 1, 4096, seed++);
	one("pinned+5/+1", pinned + 5, dev + 1, (16u << 20) + 1, seed++);

	CK(cudaFreeHost(pinned));
	CK(cudaFree(dev));
	free(pageable);
	return xct_finish("memcpy_sizes");
}
