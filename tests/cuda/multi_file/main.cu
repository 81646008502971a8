/* SPDX-License-Identifier: MIT */
/*
 * One program built from four .cu files compiled separately (whole-program
 * mode): four fatbinaries registered by one binary, with kernels and
 * constants of the same names in two of them.
 */
#include "../common/xct.h"
#include "parts.h"

__global__ void init(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = i % 100;
}

int main(void)
{
	CK(cudaSetDevice(0));
	const int n = 10000;
	int *d, h[n];
	CK(cudaMalloc(&d, sizeof(h)));
	init<<<(n + 255) / 256, 256>>>(d, n);
	CKLAUNCH();
	part_a_run(d, n); /* p = p*3 + i */
	part_b_run(d, n); /* p = p*5 - i */
	part_a_run(d, n); /* p = p*3 + i */
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++) {
		int v = i % 100;
		v = v * 3 + i;
		v = v * 5 - i;
		v = v * 3 + i;
		bad += h[i] != v;
	}
	printf("tags: a=%d b=%d calls: a=%d b=%d\n", part_a_tag(), part_b_tag(),
	       part_a_calls(), part_b_calls());
	printf("int chain: bad=%d fnv=%016llx\n", bad,
	       (unsigned long long)xct_fnv(h, sizeof(h)));
	REQUIRE(bad == 0, "kernels of the same name in two files");
	REQUIRE(part_a_tag() == 3 && part_b_tag() == 5, "constants");
	REQUIRE(part_a_calls() == 2 && part_b_calls() == 1, "counters");

	double *dd, hd[1000];
	for (int i = 0; i < 1000; i++)
		hd[i] = i * 0.5;
	CK(cudaMalloc(&dd, sizeof(hd)));
	CK(cudaMemcpy(dd, hd, sizeof(hd), cudaMemcpyHostToDevice));
	part_c_run(dd, 1000);
	CK(cudaMemcpy(hd, dd, sizeof(hd), cudaMemcpyDeviceToHost));
	bad = 0;
	for (int i = 0; i < 1000; i++)
		bad += hd[i] != (i * 0.5) * (i * 0.5);
	printf("part_c square: bad=%d last=%g\n", bad, hd[999]);
	REQUIRE(bad == 0, "part_c");
	/* the checksum kernel of xct.h is a static kernel in every file */
	printf("device sum=%016llx\n",
	       (unsigned long long)xct_device_sum(d, sizeof(h)));
	CK(cudaFree(d));
	CK(cudaFree(dd));
	return xct_finish("multi_file");
}
