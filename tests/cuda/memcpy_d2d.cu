/* SPDX-License-Identifier: MIT */
/* Device-to-device copies: whole buffers, unaligned offsets and lengths,
 * cudaMemcpyAsync on a stream, and a 64 MiB copy checked on the device. */
#include "common/xct.h"

int main(void)
{
	CK(cudaSetDevice(0));
	const size_t n = 1 << 20;
	unsigned char *h = (unsigned char *)malloc(n);
	unsigned char *out = (unsigned char *)malloc(n);
	unsigned char *expect = (unsigned char *)malloc(n);
	REQUIRE(h && out && expect, "host malloc");
	xct_fill(h, n, 1);
	unsigned char *a, *b;
	CK(cudaMalloc(&a, n));
	CK(cudaMalloc(&b, n));
	CK(cudaMemcpy(a, h, n, cudaMemcpyHostToDevice));

	CK(cudaMemset(b, 0, n));
	CK(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice));
	CK(cudaMemcpy(out, b, n, cudaMemcpyDeviceToHost));
	printf("whole: match=%d fnv=%016llx\n", memcmp(out, h, n) == 0,
	       (unsigned long long)xct_fnv(out, n));
	REQUIRE(memcmp(out, h, n) == 0, "whole d2d");

	/* unaligned pieces */
	CK(cudaMemset(b, 0xee, n));
	memset(expect, 0xee, n);
	struct {
		size_t dst, src, len;
	} pieces[] = {{1, 0, 1}, {7, 3, 3}, {4096, 1, 4095},
		      {100001, 99999, 65537}, {n - 13, 5, 13}};
	for (auto &p : pieces) {
		CK(cudaMemcpy(b + p.dst, a + p.src, p.len,
			      cudaMemcpyDeviceToDevice));
		memcpy(expect + p.dst, h + p.src, p.len);
	}
	CK(cudaMemcpy(out, b, n, cudaMemcpyDeviceToHost));
	printf("pieces: match=%d fnv=%016llx\n", memcmp(out, expect, n) == 0,
	       (unsigned long long)xct_fnv(out, n));
	REQUIRE(memcmp(out, expect, n) == 0, "unaligned d2d");

	/* async on a stream, chained: a -> b -> a (second half) */
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	CK(cudaMemsetAsync(b, 0, n, s));
	CK(cudaMemcpyAsync(b, a, n / 2, cudaMemcpyDeviceToDevice, s));
	CK(cudaMemcpyAsync(a + n / 2, b, n / 2, cudaMemcpyDeviceToDevice, s));
	CK(cudaMemcpyAsync(out, a, n, cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	memcpy(expect, h, n / 2);
	memcpy(expect + n / 2, h, n / 2);
	printf("async chain: match=%d fnv=%016llx\n",
	       memcmp(out, expect, n) == 0, (unsigned long long)xct_fnv(out, n));
	REQUIRE(memcmp(out, expect, n) == 0, "async d2d");

	/* 64 MiB, filled and summed on the device */
	const size_t BIG = 64u << 20;
	void *x, *y;
	CK(cudaMalloc(&x, BIG));
	CK(cudaMalloc(&y, BIG + 1));
	xct_device_fill(x, BIG, 64);
	CK(cudaMemcpy((char *)y + 1, x, BIG, cudaMemcpyDeviceToDevice));
	uint64_t sx = xct_device_sum(x, BIG);
	uint64_t sy = xct_device_sum((char *)y + 1, BIG);
	printf("64 MiB: src=%016llx dst+1=%016llx\n", (unsigned long long)sx,
	       (unsigned long long)sy);
	REQUIRE(sx == sy, "64 MiB d2d");

	CK(cudaStreamDestroy(s));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(x));
	CK(cudaFree(y));
	free(h);
	free(out);
	free(expect);
	return xct_finish("memcpy_d2d");
}
