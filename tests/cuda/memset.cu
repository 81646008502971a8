/* SPDX-License-Identifier: MIT */
/* cudaMemset and cudaMemsetAsync: whole buffers, odd offsets and lengths,
 * values wider than a byte, zero length, on the default and a user stream. */
#include "common/xct.h"

#define N (1 << 20)

static unsigned char *dbuf, *expect, *host;

static void check(const char *what)
{
	CK(cudaMemcpy(host, dbuf, N, cudaMemcpyDeviceToHost));
	size_t bad = 0;
	for (size_t i = 0; i < N; i++)
		bad += host[i] != expect[i];
	printf("%-28s bad=%zu fnv=%016llx\n", what, bad,
	       (unsigned long long)xct_fnv(host, N));
	REQUIRE(bad == 0, "%s", what);
}

static void set_both(size_t off, int v, size_t len)
{
	CK(cudaMemset(dbuf + off, v, len));
	memset(expect + off, v & 0xff, len);
}

int main(void)
{
	CK(cudaSetDevice(0));
	expect = (unsigned char *)malloc(N);
	host = (unsigned char *)malloc(N);
	REQUIRE(expect && host, "host malloc");
	CK(cudaMalloc(&dbuf, N));

	set_both(0, 0, N);
	check("zero all");
	set_both(0, 0xab, N);
	check("0xab all");
	set_both(1, 0x11, 1);
	set_both(3, 0x22, 5);
	set_both(4093, 0x33, 4099);
	set_both(N - 7, 0x44, 7);
	check("odd offsets and lengths");
	set_both(100, 0x1234, 1000); /* only the low byte counts */
	check("value 0x1234");
	set_both(200, -1, 17);
	check("value -1");
	CK(cudaMemset(dbuf + 5, 0x77, 0)); /* zero length: nothing */
	check("zero length");

	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	CK(cudaMemsetAsync(dbuf, 0x5c, N / 2, s));
	memset(expect, 0x5c, N / 2);
	CK(cudaMemsetAsync(dbuf + N / 2 + 1, 0xc5, N / 2 - 1, s));
	memset(expect + N / 2 + 1, 0xc5, N / 2 - 1);
	CK(cudaMemsetAsync(dbuf + 12345, 0x00, 3, 0));
	memset(expect + 12345, 0, 3);
	CK(cudaStreamSynchronize(s));
	CK(cudaDeviceSynchronize());
	check("async");

	/* 64 MiB at once, checked on the device */
	void *big;
	const size_t BIG = 64u << 20;
	CK(cudaMalloc(&big, BIG));
	CK(cudaMemsetAsync(big, 0x3c, BIG, s));
	CK(cudaStreamSynchronize(s));
	unsigned char *hbig = (unsigned char *)malloc(BIG);
	REQUIRE(hbig, "host malloc");
	memset(hbig, 0x3c, BIG);
	uint64_t want = xct_sum(hbig, BIG), got = xct_device_sum(big, BIG);
	printf("64 MiB memset sum=%016llx device=%016llx\n",
	       (unsigned long long)want, (unsigned long long)got);
	REQUIRE(want == got, "64 MiB memset");

	free(hbig);
	CK(cudaFree(big));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(dbuf));
	free(expect);
	free(host);
	return xct_finish("memset");
}
