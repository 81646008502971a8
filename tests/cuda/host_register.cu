/* SPDX-License-Identifier: MIT */
/*
 * cudaHostRegister of malloc memory, which xcuda (`local`) moves onto
 * memory it shares with its worker: an unaligned start and size, the
 * contents kept through registration and unregistration, copies both
 * ways (synchronous, asynchronous on two streams, cudaMemcpyDefault, 2D),
 * a kernel writing through cudaHostGetDevicePointer, unregister and
 * register again with each flag (default, portable, mapped, read-only),
 * the errors (registering twice, unregistering an unknown pointer), and
 * a fork() child whose writes must not reach the parent.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "common/xct.h"

__global__ void write_pattern(unsigned char *p, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = xct_pattern_byte(i, seed);
}

/* The checksum the pattern of @seed has over @n bytes. */
static uint64_t pattern_sum(size_t n, uint32_t seed)
{
	unsigned char *t = (unsigned char *)malloc(n);
	REQUIRE(t, "malloc");
	xct_fill(t, n, seed);
	uint64_t s = xct_sum(t, n);
	free(t);
	return s;
}

/* H2D and D2H of the whole buffer, synchronous. */
static void roundtrip(const char *what, unsigned char *h, void *d, size_t n,
		      uint32_t seed, cudaMemcpyKind h2d, cudaMemcpyKind d2h)
{
	xct_fill(h, n, seed);
	uint64_t want = xct_sum(h, n);
	CK(cudaMemcpy(d, h, n, h2d));
	bool up = xct_device_sum(d, n) == want;
	xct_device_fill(d, n, seed + 1);
	CK(cudaMemcpy(h, d, n, d2h));
	bool down = xct_sum(h, n) == pattern_sum(n, seed + 1);
	printf("%-28s h2d=%s d2h=%s\n", what, up ? "ok" : "BAD",
	       down ? "ok" : "BAD");
	REQUIRE(up && down, "%s", what);
}

/* The same in two halves on two streams. */
static void roundtrip_async(const char *what, unsigned char *h, void *d,
			    size_t n, uint32_t seed, cudaStream_t *s)
{
	size_t half = n / 2 + 3;
	unsigned char *dd = (unsigned char *)d;

	xct_fill(h, n, seed);
	uint64_t want = xct_sum(h, n);
	CK(cudaMemcpyAsync(dd, h, half, cudaMemcpyHostToDevice, s[0]));
	CK(cudaMemcpyAsync(dd + half, h + half, n - half,
			   cudaMemcpyHostToDevice, s[1]));
	CK(cudaStreamSynchronize(s[0]));
	CK(cudaStreamSynchronize(s[1]));
	bool up = xct_device_sum(d, n) == want;
	xct_device_fill(d, n, seed + 1);
	memset(h, 0, n);
	CK(cudaMemcpyAsync(h, dd, half, cudaMemcpyDeviceToHost, s[1]));
	CK(cudaMemcpyAsync(h + half, dd + half, n - half,
			   cudaMemcpyDeviceToHost, s[0]));
	CK(cudaStreamSynchronize(s[0]));
	CK(cudaStreamSynchronize(s[1]));
	bool down = xct_sum(h, n) == pattern_sum(n, seed + 1);
	printf("%-28s h2d=%s d2h=%s\n", what, up ? "ok" : "BAD",
	       down ? "ok" : "BAD");
	REQUIRE(up && down, "%s", what);
}

/* Rows of @w bytes, @pitch apart on the host, packed on the device. */
static void roundtrip_2d(unsigned char *h, void *d, size_t pitch, size_t w,
			 size_t rows)
{
	unsigned char *packed = (unsigned char *)malloc(w * rows);
	REQUIRE(packed, "malloc");
	xct_fill(h, pitch * rows, 40);
	for (size_t r = 0; r < rows; r++)
		memcpy(packed + r * w, h + r * pitch, w);
	uint64_t want = xct_sum(packed, w * rows);
	CK(cudaMemcpy2D(d, w, h, pitch, w, rows, cudaMemcpyHostToDevice));
	bool up = xct_device_sum(d, w * rows) == want;
	memset(h, 0, pitch * rows);
	CK(cudaMemcpy2D(h, pitch, d, w, w, rows, cudaMemcpyDeviceToHost));
	for (size_t r = 0; r < rows; r++)
		memcpy(packed + r * w, h + r * pitch, w);
	bool down = xct_sum(packed, w * rows) == want;
	printf("%-28s h2d=%s d2h=%s\n", "registered 2D", up ? "ok" : "BAD",
	       down ? "ok" : "BAD");
	REQUIRE(up && down, "2D");
	free(packed);
}

/* Registers @h with @flags, copies both ways, prints its flags. */
static void with_flags(const char *name, unsigned flags, unsigned char *h,
		       void *d, size_t n, uint32_t seed)
{
	char what[64];
	unsigned got = 0xffff;

	CK(cudaHostRegister(h, n, flags));
	CK(cudaHostGetFlags(&got, h));
	printf("%s: flags=0x%x\n", name, got);
	snprintf(what, sizeof(what), "registered %s", name);
	roundtrip(what, h, d, n, seed, cudaMemcpyHostToDevice,
		  cudaMemcpyDeviceToHost);
	void *dp = nullptr;
	CK(cudaHostGetDevicePointer(&dp, h, 0));
	printf("%s: device pointer: %s\n", name, xct_yes(dp != nullptr));
	CK(cudaHostUnregister(h));
}

int main(void)
{
	CK(cudaSetDevice(0));
	/* 32 MiB and a bit, from 7 bytes into a malloc block. */
	const size_t n = (32u << 20) + 12345;
	unsigned char *raw = (unsigned char *)malloc(n + 64);
	REQUIRE(raw, "malloc");
	unsigned char *h = raw + 7;
	void *d;
	CK(cudaMalloc(&d, n));
	cudaStream_t s[2];
	CK(cudaStreamCreate(&s[0]));
	CK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));

	/* What was there before the registration is still there. */
	xct_fill(h, n, 1);
	uint64_t before = xct_sum(h, n);
	CK(cudaHostRegister(h, n, cudaHostRegisterDefault));
	printf("registered: contents kept: %s\n",
	       xct_yes(xct_sum(h, n) == before));
	EXPECT_ERR(cudaErrorHostMemoryAlreadyRegistered,
		   cudaHostRegister(h, n, cudaHostRegisterDefault));
	roundtrip("registered", h, d, n, 2, cudaMemcpyHostToDevice,
		  cudaMemcpyDeviceToHost);
	roundtrip("registered default kind", h, d, n, 4, cudaMemcpyDefault,
		  cudaMemcpyDefault);
	roundtrip_async("registered async", h, d, n, 6, s);
	roundtrip_2d(h + 100, d, 4096, 3000, 1000);
	/* A part in the middle: copies from inside a registration. */
	roundtrip("registered part", h + 777, d, 1 << 20, 8,
		  cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost);

	/* Zero copy through the device address of registered memory. */
	int canuse = 0;
	CK(cudaDeviceGetAttribute(&canuse,
				  cudaDevAttrCanUseHostPointerForRegisteredMem,
				  0));
	printf("can use host pointer for registered memory: %d\n", canuse);
	if (canuse) {
		void *dp = nullptr;
		CK(cudaHostGetDevicePointer(&dp, h, 0));
		write_pattern<<<264, 256>>>((unsigned char *)dp, n, 10);
		CKLAUNCH();
		CK(cudaDeviceSynchronize());
		bool ok = xct_sum(h, n) == pattern_sum(n, 10);
		printf("kernel wrote through the device pointer: %s\n",
		       ok ? "ok" : "BAD");
		REQUIRE(ok, "zero copy");
		/* Not compared: xcuda's worker may map it elsewhere. */
		fprintf(stderr, "device pointer %s the host pointer\n",
			dp == (void *)h ? "is" : "is not");
	}

	/* fork(): the child's writes stay the child's. */
	xct_fill(h, n, 12);
	uint64_t mine = xct_sum(h, n);
	fflush(stdout);
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		memset(h, 0x5a, n);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("after a child wrote its copy: parent's memory kept: %s\n",
	       xct_yes(xct_sum(h, n) == mine));

	uint64_t last = xct_sum(h, n);
	CK(cudaHostUnregister(h));
	printf("unregistered: contents kept: %s\n",
	       xct_yes(xct_sum(h, n) == last));
	EXPECT_ERR(cudaErrorHostMemoryNotRegistered, cudaHostUnregister(h));
	EXPECT_ERR(cudaErrorHostMemoryNotRegistered,
		   cudaHostUnregister(raw + 100000));
	/* Pageable again, and still usable. */
	roundtrip("unregistered", h, d, n, 14, cudaMemcpyHostToDevice,
		  cudaMemcpyDeviceToHost);

	/* Registered again, with each flag. */
	with_flags("default", cudaHostRegisterDefault, h, d, n, 16);
	with_flags("portable", cudaHostRegisterPortable, h, d, n, 18);
	with_flags("mapped", cudaHostRegisterMapped, h, d, n, 20);

	int ro = 0;
	CK(cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported,
				  0));
	printf("read-only registration supported: %d\n", ro);
	xct_fill(h, n, 22);
	uint64_t want = xct_sum(h, n);
	if (SHOW(cudaHostRegister(h, n, cudaHostRegisterReadOnly)) ==
	    cudaSuccess) {
		/* The GPU only reads it. */
		CK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
		printf("read-only h2d: %s\n",
		       xct_device_sum(d, n) == want ? "ok" : "BAD");
		CK(cudaHostUnregister(h));
	}
	printf("read-only: contents kept: %s\n",
	       xct_yes(xct_sum(h, n) == want));

	CK(cudaStreamDestroy(s[0]));
	CK(cudaStreamDestroy(s[1]));
	CK(cudaFree(d));
	free(raw);
	return xct_finish("host_register");
}
