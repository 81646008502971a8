/* SPDX-License-Identifier: MIT */
/*
 * Template kernels: one kernel template instantiated for several types and
 * non-type parameters, and a kernel template taking a functor by value.
 */
#include "common/xct.h"

template <typename T, int SCALE>
__global__ void axpb(T *y, const T *x, T b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = (T)SCALE * x[i] + b;
}

struct AddOp {
	int k;
	__host__ __device__ int operator()(int v) const { return v + k; }
};

struct MulXorOp {
	int m;
	unsigned x;
	__host__ __device__ int operator()(int v) const
	{
		return (int)((unsigned)(v * m) ^ x);
	}
};

template <typename Op>
__global__ void apply(Op op, const int *in, int *out, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		out[i] = op(in[i]);
}

template <typename T, int N>
__global__ void sum_fixed(const T *in, T *out)
{
	T s = 0;
#pragma unroll
	for (int i = 0; i < N; i++)
		s += in[i];
	*out = s;
}

template <typename T, int SCALE>
static void run_axpb(const char *tname, T b, int n)
{
	T *x = (T *)malloc(n * sizeof(T)), *y = (T *)malloc(n * sizeof(T));
	REQUIRE(x && y, "host malloc");
	for (int i = 0; i < n; i++)
		x[i] = (T)(i % 100) - (T)50;
	T *dx, *dy;
	CK(cudaMalloc(&dx, n * sizeof(T)));
	CK(cudaMalloc(&dy, n * sizeof(T)));
	CK(cudaMemcpy(dx, x, n * sizeof(T), cudaMemcpyHostToDevice));
	axpb<T, SCALE><<<(n + 127) / 128, 128>>>(dy, dx, b, n);
	CKLAUNCH();
	CK(cudaMemcpy(y, dy, n * sizeof(T), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++)
		if (y[i] != (T)((T)SCALE * x[i] + b))
			bad++;
	printf("axpb<%s,%d> n=%d bad=%d fnv=%016llx\n", tname, SCALE, n, bad,
	       (unsigned long long)xct_fnv(y, n * sizeof(T)));
	REQUIRE(bad == 0, "axpb<%s,%d>", tname, SCALE);
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	free(x);
	free(y);
}

template <typename Op> static void run_apply(const char *name, Op op)
{
	const int n = 10000;
	int in[n], out[n];
	for (int i = 0; i < n; i++)
		in[i] = i * 31 - 5000;
	int *din, *dout;
	CK(cudaMalloc(&din, sizeof(in)));
	CK(cudaMalloc(&dout, sizeof(out)));
	CK(cudaMemcpy(din, in, sizeof(in), cudaMemcpyHostToDevice));
	apply<Op><<<8, 64>>>(op, din, dout, n);
	CKLAUNCH();
	CK(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += out[i] != op(in[i]);
	printf("apply<%s> bad=%d fnv=%016llx\n", name, bad,
	       (unsigned long long)xct_fnv(out, sizeof(out)));
	REQUIRE(bad == 0, "apply<%s>", name);
	CK(cudaFree(din));
	CK(cudaFree(dout));
}

template <typename T, int N> static void run_sum(const char *tname)
{
	T in[N], s = 0, *din, *dout, got;
	for (int i = 0; i < N; i++) {
		in[i] = (T)(i + 1);
		s += in[i];
	}
	CK(cudaMalloc(&din, sizeof(in)));
	CK(cudaMalloc(&dout, sizeof(T)));
	CK(cudaMemcpy(din, in, sizeof(in), cudaMemcpyHostToDevice));
	sum_fixed<T, N><<<1, 1>>>(din, dout);
	CKLAUNCH();
	CK(cudaMemcpy(&got, dout, sizeof(T), cudaMemcpyDeviceToHost));
	printf("sum_fixed<%s,%d> = %.17g\n", tname, N, (double)got);
	REQUIRE(got == s, "sum_fixed<%s,%d>", tname, N);
	CK(cudaFree(din));
	CK(cudaFree(dout));
}

int main(void)
{
	CK(cudaSetDevice(0));
	run_axpb<int, 3>("int", 7, 5000);
	run_axpb<int, -2>("int", 1, 5001);
	run_axpb<float, 2>("float", 0.5f, 4096);
	run_axpb<double, 5>("double", -0.25, 3000);
	run_axpb<long long, 1000000>("long long", 1LL << 40, 2000);
	run_axpb<unsigned short, 3>("unsigned short", 9, 777);
	run_apply("AddOp", AddOp{17});
	run_apply("MulXorOp", MulXorOp{3, 0xa5a5a5a5u});
	run_sum<int, 10>("int");
	run_sum<float, 64>("float");
	run_sum<double, 100>("double");
	return xct_finish("templates");
}
