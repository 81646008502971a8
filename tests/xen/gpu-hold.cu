// SPDX-License-Identifier: MIT
/*
 * For the GPU rig's never-ending scenario.
 *
 *   gpu-hold free       prints the device's free memory, in MiB
 *   gpu-hold hold MIB   takes MIB of it, starts a kernel that never ends,
 *                       says "holding" and waits for the kernel
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

/* Reads a word of the memory it holds, which nobody ever sets. */
__global__ void spin(volatile unsigned int *stop)
{
	while (!*stop)
		;
}

static int fail(const char *what, cudaError_t e)
{
	fprintf(stderr, "gpu-hold: %s: %s\n", what, cudaGetErrorString(e));
	return 1;
}

int main(int argc, char **argv)
{
	size_t free_b = 0, total = 0, mib;
	unsigned int *p = NULL;
	cudaError_t e;

	if (argc == 2 && !strcmp(argv[1], "free")) {
		e = cudaMemGetInfo(&free_b, &total);
		if (e)
			return fail("cudaMemGetInfo", e);
		printf("%zu\n", free_b >> 20);
		return 0;
	}
	if (argc != 3 || strcmp(argv[1], "hold")) {
		fprintf(stderr, "usage: gpu-hold free | gpu-hold hold MIB\n");
		return 2;
	}
	mib = strtoul(argv[2], NULL, 10);
	e = cudaMalloc((void **)&p, mib << 20);
	if (!e)
		e = cudaMemset(p, 0, mib << 20);
	if (e)
		return fail("cudaMalloc", e);
	spin<<<1, 1>>>(p);
	e = cudaGetLastError();
	if (e)
		return fail("launch", e);
	printf("holding %zu MiB\n", mib);
	fflush(stdout);
	e = cudaDeviceSynchronize();
	fprintf(stderr, "gpu-hold: the kernel ended: %s\n",
		cudaGetErrorString(e));
	return 1;
}
