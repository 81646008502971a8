/* SPDX-License-Identifier: MIT */
/* cudaMemcpyDefault: the runtime infers the direction from the pointers
 * (H2D, D2H, D2D, H2H; pageable and pinned; sync and async). */
#include "common/xct.h"

int main(void)
{
	CK(cudaSetDevice(0));
	const size_t n = (3u << 20) + 5;
	unsigned char *pg = (unsigned char *)malloc(n);
	unsigned char *pg2 = (unsigned char *)malloc(n);
	unsigned char *pin, *pin2, *d1, *d2;
	REQUIRE(pg && pg2, "host malloc");
	CK(cudaMallocHost(&pin, n));
	CK(cudaMallocHost(&pin2, n));
	CK(cudaMalloc(&d1, n));
	CK(cudaMalloc(&d2, n));
	xct_fill(pg, n, 10);
	uint64_t want = xct_sum(pg, n);
	printf("source sum=%016llx\n", (unsigned long long)want);

	/* pageable -> device -> device -> pinned -> pinned -> pageable */
	CK(cudaMemcpy(d1, pg, n, cudaMemcpyDefault));
	printf("H2D pageable: %s\n", xct_device_sum(d1, n) == want ? "ok" : "BAD");
	CK(cudaMemcpy(d2, d1, n, cudaMemcpyDefault));
	printf("D2D: %s\n", xct_device_sum(d2, n) == want ? "ok" : "BAD");
	CK(cudaMemcpy(pin, d2, n, cudaMemcpyDefault));
	printf("D2H pinned: %s\n", xct_sum(pin, n) == want ? "ok" : "BAD");
	CK(cudaMemcpy(pin2, pin, n, cudaMemcpyDefault));
	printf("H2H pinned: %s\n", xct_sum(pin2, n) == want ? "ok" : "BAD");
	CK(cudaMemcpy(pg2, pin2, n, cudaMemcpyDefault));
	printf("H2H pinned->pageable: %s\n",
	       memcmp(pg2, pg, n) == 0 ? "ok" : "BAD");
	REQUIRE(memcmp(pg2, pg, n) == 0, "sync chain");

	/* the other way round, async, with offsets */
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	xct_fill(pin, n, 11);
	want = xct_sum(pin + 1, n - 1);
	CK(cudaMemsetAsync(d1, 0, n, s));
	CK(cudaMemsetAsync(d2, 0, n, s));
	CK(cudaMemcpyAsync(d2 + 1, pin + 1, n - 1, cudaMemcpyDefault, s));
	CK(cudaMemcpyAsync(d1, d2 + 1, n - 1, cudaMemcpyDefault, s));
	memset(pg2, 0, n);
	CK(cudaMemcpyAsync(pg2, d1, n - 1, cudaMemcpyDefault, s));
	CK(cudaStreamSynchronize(s));
	printf("async chain: %s\n", xct_sum(pg2, n - 1) == want ? "ok" : "BAD");
	REQUIRE(xct_sum(pg2, n - 1) == want, "async chain");
	/* pageable -> pageable */
	memset(pg, 0, n);
	CK(cudaMemcpy(pg, pg2, n, cudaMemcpyDefault));
	printf("H2H pageable: %s\n", memcmp(pg, pg2, n) == 0 ? "ok" : "BAD");
	REQUIRE(memcmp(pg, pg2, n) == 0, "pageable h2h");
	/* small ones */
	int v = 0x1234567, back = 0;
	CK(cudaMemcpy(d1 + 3, &v, sizeof(v), cudaMemcpyDefault));
	CK(cudaMemcpy(&back, d1 + 3, sizeof(back), cudaMemcpyDefault));
	printf("stack int round trip: %x\n", back);
	REQUIRE(back == v, "small copy");

	CK(cudaStreamDestroy(s));
	CK(cudaFreeHost(pin));
	CK(cudaFreeHost(pin2));
	CK(cudaFree(d1));
	CK(cudaFree(d2));
	free(pg);
	free(pg2);
	return xct_finish("memcpy_default");
}
