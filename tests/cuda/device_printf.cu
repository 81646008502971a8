/* SPDX-License-Identifier: MIT */
/*
 * Kernel printf reaches the program's stdout at the points where CUDA
 * prints it (cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize, a blocking cudaMemcpy, cudaDeviceReset), in order
 * with the host's own output.  The host never flushes stdout in between:
 * natively both go through the same stdout buffer, and so must they
 * through xcuda.  Formats, many lines, many threads in a fixed order (one
 * at a time within a block, blocks one after the other), and a flood of
 * 200000 bytes, 40000 printf calls, which overflows CUDA's default 1 MiB
 * printf FIFO: the FIFO is raised first so that all of it is printed.
 */
#include "common/xct.h"

#define FLOOD 40000

__device__ char greeting[] = "hello from a __device__ array";

__global__ void formats(int i, unsigned int u, long long ll, float f,
			double d)
{
	printf("ints: %d %i %u %x %X %o %lld %llu\n", i, -i, u, u, u, u, ll,
	       (unsigned long long)ll * 3);
	printf("floats: %f %.3f %e %g %10.4f|%-8.2f|\n", f, d, d, f, d, f);
	printf("chars: %c%c%c %s %10s|%-6s| %% %s\n", 'x', 'y', 'z', "device",
	       "right", "left", greeting);
}

/* The threads of a block print one at a time, in order. */
__global__ void ordered_block(int tag)
{
	for (int t = 0; t < blockDim.x; t++) {
		if (threadIdx.x == t)
			printf("tag %d block %d thread %2d: %d\n", tag,
			       blockIdx.x, threadIdx.x, t * t);
		__syncthreads();
	}
}

/* Blocks take turns by a ticket; each prints as ordered_block does. */
__global__ void ordered_grid(unsigned int *ticket, int tag)
{
	if (threadIdx.x == 0)
		while (atomicAdd(ticket, 0) != blockIdx.x)
			;
	__syncthreads();
	for (int t = 0; t < blockDim.x; t++) {
		if (threadIdx.x == t)
			printf("tag %d block %d thread %d\n", tag, blockIdx.x,
			       threadIdx.x);
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		__threadfence();
		atomicAdd(ticket, 1);
	}
}

__global__ void square(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		p[i] = i * i;
		if (i == n - 1)
			printf("square: last of %d is %d\n", n, p[i]);
	}
}

/* 5 bytes a line, one thread: its order is the program's. */
__global__ void flood(int n)
{
	for (int i = 0; i < n; i++)
		printf("%04x\n", i);
}

int main(void)
{
	size_t fifo = 0;

	CK(cudaSetDevice(0));
	/* Before the first kernel with printf, or CUDA refuses it. */
	CK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 32u << 20));
	CK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
	printf("printf FIFO of at least 32 MiB: %s\n",
	       xct_yes(fifo >= (32u << 20)));

	printf("host: before formats\n");
	formats<<<1, 1>>>(42, 0xbeefu, -1234567890123ll, 1.5f, 3.14159);
	CKLAUNCH();
	printf("host: launched, not synchronised\n");
	CK(cudaDeviceSynchronize());
	printf("host: after cudaDeviceSynchronize\n");
	CK(cudaDeviceSynchronize());
	printf("host: a second synchronisation prints nothing\n");

	cudaStream_t st;
	CK(cudaStreamCreate(&st));
	ordered_block<<<1, 64, 0, st>>>(1);
	CKLAUNCH();
	printf("host: before cudaStreamSynchronize\n");
	CK(cudaStreamSynchronize(st));
	printf("host: after cudaStreamSynchronize\n");

	unsigned int *ticket;
	cudaEvent_t ev;
	CK(cudaMalloc(&ticket, sizeof(*ticket)));
	CK(cudaMemset(ticket, 0, sizeof(*ticket)));
	CK(cudaEventCreate(&ev));
	ordered_grid<<<8, 4, 0, st>>>(ticket, 2);
	CKLAUNCH();
	CK(cudaEventRecord(ev, st));
	printf("host: before cudaEventSynchronize\n");
	CK(cudaEventSynchronize(ev));
	printf("host: after cudaEventSynchronize\n");

	/* One launch per block, each waited for. */
	for (int b = 0; b < 4; b++) {
		ordered_block<<<1, 2>>>(3 + b);
		CKLAUNCH();
		CK(cudaDeviceSynchronize());
		printf("host: block launch %d done\n", b);
	}

	int *d, h[256];
	CK(cudaMalloc(&d, sizeof(h)));
	square<<<2, 128>>>(d, 256);
	CKLAUNCH();
	printf("host: before cudaMemcpy\n");
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	printf("host: after cudaMemcpy: h[255] = %d\n", h[255]);

	flood<<<1, 1>>>(FLOOD);
	CKLAUNCH();
	printf("host: before the flood\n");
	CK(cudaDeviceSynchronize());
	printf("host: after the flood\n");

	/* Finished but not synchronised: the reset prints it. */
	formats<<<1, 1>>>(7, 7u, 7ll, 0.25f, -2.5);
	CKLAUNCH();
	cudaError_t q;
	while ((q = cudaStreamQuery(0)) == cudaErrorNotReady)
		;
	CK(q);
	printf("host: before cudaDeviceReset\n");
	CK(cudaDeviceReset());
	printf("host: after cudaDeviceReset\n");

	return xct_finish("device_printf");
}
