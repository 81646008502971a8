/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the xcuda CUDA test programs.
 *
 * Output rules: everything goes to stdout and must be identical whenever
 * the CUDA runtime behaves the same.  Print results, checksums and error
 * *names*; never pointers, timings or free-memory amounts.  A failed check
 * prints the call and the error name and exits with status 1.
 */
#ifndef XCT_H
#define XCT_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CK(call): the call must return cudaSuccess.  Variadic so that template
 * arguments with commas need no extra parentheses. */
#define CK(...) xct_check((__VA_ARGS__), #__VA_ARGS__)

/* CKLAUNCH(): right after a <<<>>> launch. */
#define CKLAUNCH() xct_check(cudaGetLastError(), "kernel launch")

/* EXPECT(expected, call): print "call -> errorName"; a mismatch is a failure
 * counted in xct_failures (the program reports it at the end). */
#define EXPECT(expected, ...) \
	xct_expect((expected), (__VA_ARGS__), #__VA_ARGS__)

/* EXPECT_ERR(expected, call): the call fails with `expected`, which it also
 * leaves as the thread's last error: cudaGetLastError returns it once. */
#define EXPECT_ERR(expected, ...)                                     \
	do {                                                          \
		xct_expect((expected), (__VA_ARGS__), #__VA_ARGS__);  \
		EXPECT((expected), cudaGetLastError());               \
		EXPECT(cudaSuccess, cudaGetLastError());              \
	} while (0)

/* SHOW(call): print "call -> errorName (last error: name)" and return the
 * call's result; it checks nothing, and leaves the last error cleared. */
#define SHOW(...) xct_show((__VA_ARGS__), #__VA_ARGS__)

static inline cudaError_t xct_show(cudaError_t e, const char *what)
{
	cudaError_t last = cudaGetLastError();

	printf("%s -> %s (last error: %s)\n", what, cudaGetErrorName(e),
	       cudaGetErrorName(last));
	fflush(stdout);
	return e;
}

static inline const char *xct_yes(bool b)
{
	return b ? "yes" : "no";
}

/* REQUIRE(cond, fmt, ...): a host-side check of a result. */
#define REQUIRE(cond, ...)                                            \
	do {                                                          \
		if (!(cond)) {                                        \
			printf("CHECK FAILED: %s: ", #cond);          \
			printf(__VA_ARGS__);                          \
			printf("\n");                                 \
			fflush(stdout);                               \
			exit(1);                                      \
		}                                                     \
	} while (0)

static int xct_failures __attribute__((unused));

static inline void xct_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		printf("FAILED %s: %s\n", what, cudaGetErrorName(e));
		fflush(stdout);
		exit(1);
	}
}

static inline void xct_expect(cudaError_t want, cudaError_t got,
			      const char *what)
{
	printf("%s -> %s\n", what, cudaGetErrorName(got));
	if (got != want) {
		printf("  MISMATCH: expected %s\n", cudaGetErrorName(want));
		xct_failures++;
	}
	fflush(stdout);
}

/* The program's last line: exit 0 only when no EXPECT mismatched. */
static inline int xct_finish(const char *name)
{
	if (xct_failures) {
		printf("%s: %d check(s) FAILED\n", name, xct_failures);
		fflush(stdout);
		return 1;
	}
	printf("%s: PASSED\n", name);
	fflush(stdout);
	return 0;
}

/* FNV-1a 64 over bytes: for printing checksums of small buffers. */
static inline uint64_t xct_fnv(const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* A 32-bit mixing function, usable on host and device. */
__host__ __device__ static inline uint32_t xct_mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* The byte at position i of the test pattern with this seed. */
__host__ __device__ static inline unsigned char xct_pattern_byte(uint64_t i,
								 uint32_t seed)
{
	uint32_t w = xct_mix32((uint32_t)(i >> 2) ^ xct_mix32(seed) ^
			       (uint32_t)(i >> 34));
	return (unsigned char)(w >> (8 * (i & 3)));
}

/* Fill n bytes with the pattern (word at a time where possible). */
static inline void xct_fill(void *p, size_t n, uint32_t seed)
{
	unsigned char *b = (unsigned char *)p;
	size_t words = n / 4;
	uint32_t s = xct_mix32(seed);
	for (size_t w = 0; w < words; w++) {
		uint32_t v = xct_mix32((uint32_t)w ^ s ^
				       (uint32_t)((uint64_t)w >> 32));
		memcpy(b + 4 * w, &v, 4);
	}
	for (size_t i = 4 * words; i < n; i++)
		b[i] = xct_pattern_byte(i, seed);
}

/*
 * Position-weighted checksum: sum over 32-bit little-endian words w_j (the
 * last one zero-padded) of w_j * (2j + 1), mod 2^64, plus the length.  It
 * is order-sensitive and cheap to compute in parallel on the device.
 */
__host__ __device__ static inline uint64_t xct_word_term(uint32_t w,
							 uint64_t j)
{
	return (uint64_t)w * (2 * j + 1);
}

static inline uint64_t xct_sum(const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t s = n;
	size_t words = n / 4;
	for (size_t j = 0; j < words; j++) {
		uint32_t w;
		memcpy(&w, b + 4 * j, 4);
		s += xct_word_term(w, j);
	}
	if (n % 4) {
		uint32_t w = 0;
		memcpy(&w, b + 4 * words, n % 4);
		s += xct_word_term(w, words);
	}
	return s;
}

/* The same checksum on the device: launch with any grid, *out zeroed. */
__global__ static void xct_sum_kernel(const unsigned char *b, size_t n,
				      unsigned long long *out)
{
	size_t words = (n + 3) / 4;
	uint64_t acc = 0;
	for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	     j < words; j += (size_t)gridDim.x * blockDim.x) {
		uint32_t w;
		if (4 * j + 4 <= n && ((uintptr_t)b & 3) == 0) {
			w = ((const uint32_t *)b)[j];
		} else {
			w = 0;
			for (size_t k = 0; k < 4 && 4 * j + k < n; k++)
				w |= (uint32_t)b[4 * j + k] << (8 * k);
		}
		acc += xct_word_term(w, j);
	}
	if (threadIdx.x == 0 && blockIdx.x == 0)
		acc += n;
	atomicAdd(out, (unsigned long long)acc);
}

/* Fill n device bytes with the pattern. */
__global__ static void xct_fill_kernel(unsigned char *b, size_t n,
				       uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		b[i] = xct_pattern_byte(i, seed);
}

/* Checksum of n device bytes, computed on the device (stream 0). */
static inline uint64_t xct_device_sum(const void *d, size_t n)
{
	unsigned long long *acc, h = 0;
	CK(cudaMalloc(&acc, sizeof(*acc)));
	CK(cudaMemset(acc, 0, sizeof(*acc)));
	xct_sum_kernel<<<264, 256>>>((const unsigned char *)d, n, acc);
	CKLAUNCH();
	CK(cudaMemcpy(&h, acc, sizeof(h), cudaMemcpyDeviceToHost));
	CK(cudaFree(acc));
	return h;
}

/* Fill n device bytes with the pattern (stream 0, synchronous). */
static inline void xct_device_fill(void *d, size_t n, uint32_t seed)
{
	xct_fill_kernel<<<264, 256>>>((unsigned char *)d, n, seed);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
}

#endif
