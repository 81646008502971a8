/* SPDX-License-Identifier: MIT */
/*
 * Kernel argument passing: a struct by value, a kernel of 17 arguments of
 * mixed types (char, short, int, long long, float, double, pointers, a
 * struct with padding, bool), an over-aligned struct, a 2 KiB struct and a
 * kernel with no arguments.  Each kernel writes its arguments back and the
 * host checks them.
 */
#include "common/xct.h"

struct Padded {		/* padding after c, s and tail */
	char c;
	double d;
	short s;
	int i;
	char tail;
};

struct Params {
	int n;
	float scale;
	double offset;
	char tag;
	long long big;
};

struct __align__(16) Vec4 {
	float x, y, z, w;
};

struct Big {
	int v[512];
};

struct Out {
	char a;
	short b;
	int c;
	long long d;
	float e;
	double f;
	unsigned long long g;
	Padded h;
	unsigned char i;
	double j;
	float k;
	char l;
	unsigned short m;
	long long n;
	unsigned long long o;
	int o0;
	bool p;
};

__global__ void many(char a, short b, int c, long long d, float e, double f,
		     int *g, Padded h, unsigned char i, double j, float k,
		     char l, unsigned short m, long long n, const int *o,
		     bool p, Out *out)
{
	out->a = a;
	out->b = b;
	out->c = c;
	out->d = d;
	out->e = e;
	out->f = f;
	out->g = (unsigned long long)g;
	out->h.c = h.c;
	out->h.d = h.d;
	out->h.s = h.s;
	out->h.i = h.i;
	out->h.tail = h.tail;
	out->i = i;
	out->j = j;
	out->k = k;
	out->l = l;
	out->m = m;
	out->n = n;
	out->o = (unsigned long long)o;
	out->o0 = o[0];
	out->p = p;
	g[0] = c + 1;
}

__global__ void by_value(Params p, Params *out, double *res)
{
	*out = p;
	*res = p.n * (double)p.scale + p.offset + p.tag + (double)p.big;
}

__global__ void mixed(char a, double b, char c, Vec4 v, char d, long long e,
		      double *out)
{
	out[0] = a;
	out[1] = b;
	out[2] = c;
	out[3] = v.x;
	out[4] = v.y;
	out[5] = v.z;
	out[6] = v.w;
	out[7] = d;
	out[8] = (double)e;
}

__global__ void big_struct(Big b, int k, long long *sum, int *copy)
{
	long long s = 0;
	for (int x = 0; x < 512; x++) {
		s += (long long)b.v[x] * (x + 1);
		copy[x] = b.v[x] + k;
	}
	*sum = s;
}

__device__ int no_args_hits;

__global__ void no_args(void)
{
	atomicAdd(&no_args_hits, 1);
}

int main(void)
{
	CK(cudaSetDevice(0));

	/* 17 arguments */
	Out *dout, out;
	int *dg, *dob, g0 = 0, o0 = 424242;
	CK(cudaMalloc(&dout, sizeof(Out)));
	CK(cudaMalloc(&dg, sizeof(int)));
	CK(cudaMalloc(&dob, sizeof(int)));
	CK(cudaMemset(dout, 0, sizeof(Out)));
	CK(cudaMemcpy(dob, &o0, sizeof(int), cudaMemcpyHostToDevice));
	Padded h;
	memset(&h, 0x5a, sizeof(h));	/* padding bytes are garbage */
	h.c = 'h';
	h.d = -2.5e300;
	h.s = -1234;
	h.i = 0x7eadbeef;
	h.tail = 't';
	many<<<1, 1>>>('A', (short)-32000, -2000000000, -9000000000000000001LL,
		       3.25f, 1.0 / 3.0, dg, h, (unsigned char)250, -0.0,
		       -1.5e-30f, 'z', (unsigned short)65000,
		       0x123456789abcdefLL, dob, true, dout);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(&out, dout, sizeof(Out), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&g0, dg, sizeof(int), cudaMemcpyDeviceToHost));
	printf("many: a=%c b=%d c=%d d=%lld e=%.9g f=%.17g\n", out.a, out.b,
	       out.c, out.d, out.e, out.f);
	printf("many: h={%c %.17g %d %d %c} i=%u j=%.17g k=%.9g l=%c m=%u "
	       "n=%llx o0=%d p=%d\n",
	       out.h.c, out.h.d, out.h.s, out.h.i, out.h.tail, out.i, out.j,
	       out.k, out.l, out.m, (unsigned long long)out.n, out.o0,
	       (int)out.p);
	printf("many: g matches=%d o matches=%d g[0]=%d\n",
	       out.g == (unsigned long long)dg, out.o == (unsigned long long)dob,
	       g0);
	REQUIRE(out.a == 'A' && out.b == -32000 && out.c == -2000000000 &&
			out.d == -9000000000000000001LL && out.e == 3.25f &&
			out.f == 1.0 / 3.0,
		"scalar arguments");
	REQUIRE(out.h.c == 'h' && out.h.d == -2.5e300 && out.h.s == -1234 &&
			out.h.i == 0x7eadbeef && out.h.tail == 't',
		"padded struct");
	REQUIRE(out.i == 250 && out.j == 0.0 && out.k == -1.5e-30f &&
			out.l == 'z' && out.m == 65000 &&
			out.n == 0x123456789abcdefLL && out.o0 == 424242 &&
			out.p,
		"later arguments");
	REQUIRE(out.g == (unsigned long long)dg &&
			out.o == (unsigned long long)dob && g0 == -1999999999,
		"pointer arguments");

	/* a struct by value */
	Params p = {1000, 0.125f, -7.75, 'Q', 1LL << 40}, pb;
	Params *dp;
	double *dres, res;
	CK(cudaMalloc(&dp, sizeof(Params)));
	CK(cudaMalloc(&dres, sizeof(double)));
	by_value<<<1, 1>>>(p, dp, dres);
	CKLAUNCH();
	CK(cudaMemcpy(&pb, dp, sizeof(pb), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&res, dres, sizeof(res), cudaMemcpyDeviceToHost));
	printf("by_value: n=%d scale=%.9g offset=%.17g tag=%c big=%lld "
	       "res=%.17g\n",
	       pb.n, pb.scale, pb.offset, pb.tag, pb.big, res);
	REQUIRE(pb.n == p.n && pb.scale == p.scale && pb.offset == p.offset &&
			pb.tag == p.tag && pb.big == p.big &&
			res == 1000 * 0.125 - 7.75 + 'Q' + (double)(1LL << 40),
		"struct by value");

	/* alignment: char, double, char, 16-byte struct, char, long long */
	double *dm, m[9];
	CK(cudaMalloc(&dm, sizeof(m)));
	Vec4 v = {1.5f, -2.5f, 3.5f, -4.5f};
	mixed<<<1, 1>>>(1, 2.0e-300, 3, v, 4, -5LL, dm);
	CKLAUNCH();
	CK(cudaMemcpy(m, dm, sizeof(m), cudaMemcpyDeviceToHost));
	printf("mixed:");
	for (int x = 0; x < 9; x++)
		printf(" %.17g", m[x]);
	printf("\n");
	REQUIRE(m[0] == 1 && m[1] == 2.0e-300 && m[2] == 3 && m[3] == 1.5 &&
			m[4] == -2.5 && m[5] == 3.5 && m[6] == -4.5 &&
			m[7] == 4 && m[8] == -5,
		"aligned arguments");

	/* 2 KiB of arguments */
	Big b;
	for (int x = 0; x < 512; x++)
		b.v[x] = x * x - 1000;
	long long *dsum, sum, want = 0;
	int *dcopy, copy[512], bad = 0;
	CK(cudaMalloc(&dsum, sizeof(sum)));
	CK(cudaMalloc(&dcopy, sizeof(copy)));
	big_struct<<<1, 1>>>(b, 7, dsum, dcopy);
	CKLAUNCH();
	CK(cudaMemcpy(&sum, dsum, sizeof(sum), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(copy, dcopy, sizeof(copy), cudaMemcpyDeviceToHost));
	for (int x = 0; x < 512; x++) {
		want += (long long)b.v[x] * (x + 1);
		bad += copy[x] != b.v[x] + 7;
	}
	printf("big_struct: sum=%lld want=%lld bad=%d\n", sum, want, bad);
	REQUIRE(sum == want && bad == 0, "2 KiB struct");

	/* no arguments */
	no_args<<<3, 5>>>();
	CKLAUNCH();
	int hits = 0;
	CK(cudaMemcpyFromSymbol(&hits, no_args_hits, sizeof(hits)));
	printf("no_args: hits=%d\n", hits);
	REQUIRE(hits == 15, "no_args ran %d times", hits);

	CK(cudaFree(dout));
	CK(cudaFree(dg));
	CK(cudaFree(dob));
	CK(cudaFree(dp));
	CK(cudaFree(dres));
	CK(cudaFree(dm));
	CK(cudaFree(dsum));
	CK(cudaFree(dcopy));
	return xct_finish("kernel_args");
}
