/* SPDX-License-Identifier: MIT */
/*
 * Relocatable device code: three .cu files compiled with -rdc=true and
 * device-linked into one binary; device functions and variables cross files.
 */
#include "../common/xct.h"
#include "rdc.h"

__global__ void direct(int *out)
{
	out[0] = poly(10);
	out[1] = clamp_add(999999, 5);
	out[2] = rdc_bias;
}

static int host_poly(int x, int bias) { return 3 * x * x - 2 * x + bias; }

int main(void)
{
	CK(cudaSetDevice(0));
	int *d, h[3];
	CK(cudaMalloc(&d, sizeof(h)));
	direct<<<1, 1>>>(d);
	CKLAUNCH();
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	printf("direct: poly(10)=%d clamp=%d bias=%d\n", h[0], h[1], h[2]);
	REQUIRE(h[0] == host_poly(10, 100) && h[1] == 1000000 && h[2] == 100,
		"direct");

	int bias = -7;
	CK(cudaMemcpyToSymbol(rdc_bias, &bias, sizeof(bias)));
	const int n = 5000;
	int in[n], out[n], *din, *dout;
	for (int i = 0; i < n; i++)
		in[i] = (i % 500) - 250;
	CK(cudaMalloc(&din, sizeof(in)));
	CK(cudaMalloc(&dout, sizeof(out)));
	CK(cudaMemcpy(din, in, sizeof(in), cudaMemcpyHostToDevice));
	launch_accumulate(din, dout, n);
	launch_accumulate(din, dout, n);
	CK(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
	int bad = 0, total = 0;
	for (int i = 0; i < n; i++) {
		int v = host_poly(in[i], -7) + i;
		bad += out[i] != (v > 1000000 ? 1000000 : v);
	}
	CK(cudaMemcpyFromSymbol(&total, rdc_total, sizeof(total)));
	printf("accumulate: bad=%d total=%d fnv=%016llx\n", bad, total,
	       (unsigned long long)xct_fnv(out, sizeof(out)));
	REQUIRE(bad == 0 && total == 2 * n, "accumulate");
	CK(cudaFree(d));
	CK(cudaFree(din));
	CK(cudaFree(dout));
	return xct_finish("multi_rdc");
}
