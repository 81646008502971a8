/* SPDX-License-Identifier: MIT */
/*
 * cuFFT as PyTorch and CuPy call it, on one GPU: plans made at once and
 * in two steps, of one, two and three dimensions and batched with strides
 * and embeddings; complex, real-to-complex and back, single and double
 * precision; plans of any type (cufftXtMakePlanMany) in half precision,
 * run with cufftXtExec; work areas of the program's, streams, sizes,
 * estimates, plan properties; and cuFFT's own errors.  Results are
 * checksums of the transforms of exact inputs.
 */
#include <cuda_fp16.h>
#include <cufftXt.h>

#include "common/xct.h"

static int failures;

static const char *res_name(cufftResult r)
{
	static const char *const names[] = {
		"CUFFT_SUCCESS", "CUFFT_INVALID_PLAN", "CUFFT_ALLOC_FAILED",
		"CUFFT_INVALID_TYPE", "CUFFT_INVALID_VALUE",
		"CUFFT_INTERNAL_ERROR", "CUFFT_EXEC_FAILED",
		"CUFFT_SETUP_FAILED", "CUFFT_INVALID_SIZE",
		"CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST",
		"CUFFT_INVALID_DEVICE", "CUFFT_PARSE_ERROR",
		"CUFFT_NO_WORKSPACE", "CUFFT_NOT_IMPLEMENTED",
		"CUFFT_LICENSE_ERROR", "CUFFT_NOT_SUPPORTED",
	};

	return (unsigned int)r < sizeof(names) / sizeof(names[0]) ?
	       names[r] : "(unknown result)";
}

#define CKF(...) ckf((__VA_ARGS__), #__VA_ARGS__)
#define SHOWF(...) showf((__VA_ARGS__), #__VA_ARGS__)

static void ckf(cufftResult r, const char *what)
{
	if (r != CUFFT_SUCCESS) {
		printf("FAILED: %s -> %s\n", what, res_name(r));
		exit(1);
	}
}

static cufftResult showf(cufftResult r, const char *what)
{
	printf("%s -> %s\n", what, res_name(r));
	return r;
}

/* A checksum of @n floats that rounding in the last bits does not move. */
static double sumf(const float *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)v[i] * (double)(i % 7 + 1);
	return s;
}

static void fill(float *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (float)((i * 7) % 13) - 6.0f;
}

/* Copies @n floats back, checksums them to 3 decimals. */
static void show_dev(const char *what, const void *d, size_t n)
{
	float *h = (float *)malloc(n * sizeof(float));

	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
	printf("%-28s %.3f\n", what, sumf(h, n));
	free(h);
}

/* The same for @n doubles. */
static void show_dev_d(const char *what, const void *d, size_t n)
{
	double *h = (double *)malloc(n * sizeof(double)), s = 0;

	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, d, n * sizeof(double), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n; i++)
		s += h[i] * (double)(i % 7 + 1);
	printf("%-28s %.6f\n", what, s);
	free(h);
}

static void transforms(cudaStream_t st)
{
	const int N = 256, B = 4;
	static float h[2 * 256 * 4];
	cufftHandle p;
	float *a, *b;
	double *da, *db;
	size_t ws;

	fill(h, sizeof(h) / sizeof(h[0]));
	CK(cudaMalloc(&a, sizeof(h)));
	CK(cudaMalloc(&b, sizeof(h) * 2));
	CK(cudaMemcpy(a, h, sizeof(h), cudaMemcpyHostToDevice));

	CKF(cufftPlan1d(&p, N, CUFFT_C2C, B));
	CKF(cufftSetStream(p, st));
	CKF(cufftExecC2C(p, (cufftComplex *)a, (cufftComplex *)b,
			 CUFFT_FORWARD));
	show_dev("C2C 1D batched forward", b, 2 * N * B);
	CKF(cufftExecC2C(p, (cufftComplex *)b, (cufftComplex *)b,
			 CUFFT_INVERSE));
	show_dev("C2C in place inverse", b, 2 * N * B);
	CKF(cufftDestroy(p));

	CKF(cufftPlan2d(&p, 16, 32, CUFFT_R2C));
	CKF(cufftExecR2C(p, a, (cufftComplex *)b));
	show_dev("R2C 2D", b, 2 * 16 * 17);
	CKF(cufftDestroy(p));
	CKF(cufftPlan2d(&p, 16, 32, CUFFT_C2R));
	CKF(cufftExecC2R(p, (cufftComplex *)b, a));
	show_dev("C2R 2D round trip", a, 16 * 32);
	CKF(cufftDestroy(p));
	CK(cudaMemcpy(a, h, sizeof(h), cudaMemcpyHostToDevice));

	CKF(cufftPlan3d(&p, 8, 8, 8, CUFFT_C2C));
	CKF(cufftExecC2C(p, (cufftComplex *)a, (cufftComplex *)b,
			 CUFFT_FORWARD));
	show_dev("C2C 3D", b, 2 * 512);
	CKF(cufftDestroy(p));

	/* Two steps: a work area of the program's, a strided batch. */
	{
		int n[1] = { 64 }, emb[1] = { 64 };
		void *work;

		CKF(cufftCreate(&p));
		CKF(cufftSetAutoAllocation(p, 0));
		CKF(cufftMakePlanMany(p, 1, n, emb, 2, 128, emb, 1, 64,
				      CUFFT_C2C, 4, &ws));
		printf("strided plan's work size known: %s\n",
		       ws > 0 ? "yes" : "no");
		CK(cudaMalloc(&work, ws ? ws : 1));
		CKF(cufftSetWorkArea(p, work));
		CKF(cufftExecC2C(p, (cufftComplex *)a, (cufftComplex *)b,
				 CUFFT_FORWARD));
		show_dev("C2C strided batch", b, 2 * 64 * 4);
		CKF(cufftGetSize(p, &ws));
		CKF(cufftDestroy(p));
		CK(cudaFree(work));
	}

	/* Double precision. */
	CK(cudaMalloc(&da, 2 * 128 * sizeof(double)));
	CK(cudaMalloc(&db, 2 * 128 * sizeof(double)));
	{
		double hd[256];

		for (int i = 0; i < 256; i++)
			hd[i] = (double)((i * 5) % 11) - 5.0;
		CK(cudaMemcpy(da, hd, sizeof(hd), cudaMemcpyHostToDevice));
	}
	CKF(cufftPlan1d(&p, 128, CUFFT_Z2Z, 1));
	CKF(cufftExecZ2Z(p, (cufftDoubleComplex *)da,
			 (cufftDoubleComplex *)db, CUFFT_FORWARD));
	show_dev_d("Z2Z 1D", db, 2 * 128);
	CKF(cufftDestroy(p));
	CKF(cufftPlan1d(&p, 128, CUFFT_D2Z, 1));
	CKF(cufftExecD2Z(p, da, (cufftDoubleComplex *)db));
	CKF(cufftDestroy(p));
	CKF(cufftPlan1d(&p, 128, CUFFT_Z2D, 1));
	CKF(cufftExecZ2D(p, (cufftDoubleComplex *)db, da));
	show_dev_d("D2Z then Z2D", da, 128);
	CKF(cufftDestroy(p));

	/* Any type: half precision, as PyTorch plans it. */
	{
		long long n[1] = { 64 };
		__half hh[2 * 64];
		void *ha, *hb;

		for (int i = 0; i < 2 * 64; i++)
			hh[i] = __float2half((float)((i * 3) % 7) - 3.0f);
		CK(cudaMalloc(&ha, sizeof(hh)));
		CK(cudaMalloc(&hb, sizeof(hh)));
		CK(cudaMemcpy(ha, hh, sizeof(hh), cudaMemcpyHostToDevice));
		CKF(cufftCreate(&p));
		CKF(cufftXtMakePlanMany(p, 1, n, NULL, 1, 64, CUDA_C_16F, NULL,
					1, 64, CUDA_C_16F, 1, &ws,
					CUDA_C_16F));
		CKF(cufftXtExec(p, ha, hb, CUFFT_FORWARD));
		CK(cudaDeviceSynchronize());
		CK(cudaMemcpy(hh, hb, sizeof(hh), cudaMemcpyDeviceToHost));
		{
			double s = 0;

			for (int i = 0; i < 2 * 64; i++)
				s += __half2float(hh[i]) * (i % 5 + 1);
			printf("%-28s %.2f\n", "half C2C (cufftXtExec)", s);
		}
		CKF(cufftXtGetSizeMany(p, 1, n, NULL, 1, 64, CUDA_C_16F, NULL,
				       1, 64, CUDA_C_16F, 1, &ws, CUDA_C_16F));
		CKF(cufftDestroy(p));
		CK(cudaFree(ha));
		CK(cudaFree(hb));
	}
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(da));
	CK(cudaFree(db));
}

static void queries(void)
{
	cufftHandle p;
	long long v = -1;
	size_t ws;
	int n[2] = { 32, 32 };

	CKF(cufftEstimate1d(1024, CUFFT_C2C, 1, &ws));
	printf("estimate 1D known: %s\n", ws > 0 ? "yes" : "no");
	CKF(cufftEstimateMany(2, n, NULL, 1, 0, NULL, 1, 0, CUFFT_R2C, 2,
			      &ws));
	CKF(cufftCreate(&p));
	CKF(cufftGetSize2d(p, 64, 64, CUFFT_C2C, &ws));
	SHOWF(cufftGetPlanPropertyInt64(
		p, NVFFT_PLAN_PROPERTY_INT64_MAX_NUM_HOST_THREADS, &v));
	SHOWF(cufftSetPlanPropertyInt64(
		p, NVFFT_PLAN_PROPERTY_INT64_MAX_NUM_HOST_THREADS, 2));
	SHOWF(cufftResetPlanProperty(
		p, NVFFT_PLAN_PROPERTY_INT64_MAX_NUM_HOST_THREADS));
	CKF(cufftMakePlan1d(p, 100, CUFFT_C2C, 1, &ws));
	CKF(cufftDestroy(p));
}

static void errors(void)
{
	cufftHandle p;
	size_t ws;

	SHOWF(cufftPlan1d(&p, 0, CUFFT_C2C, 1));
	SHOWF(cufftPlan1d(&p, 64, (cufftType)0x77, 1));
	SHOWF(cufftExecC2C(12345, NULL, NULL, CUFFT_FORWARD));
	SHOWF(cufftDestroy(12345));
	CKF(cufftCreate(&p));
	SHOWF(cufftMakePlan1d(p, -5, CUFFT_C2C, 1, &ws));
	CKF(cufftDestroy(p));
}

int main(void)
{
	cudaStream_t st;
	void *probe;
	int v, major;

	/* Without a GPU (CI's, the Xen rig's Dom0) this is where it ends. */
	CK(cudaMalloc(&probe, 16));
	CK(cudaFree(probe));
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CKF(cufftGetVersion(&v));
	CKF(cufftGetProperty(MAJOR_VERSION, &major));
	printf("cuFFT %d (major %d)\n", v, major);
	transforms(st);
	queries();
	errors();
	CK(cudaStreamDestroy(st));
	printf("%s: %d failures\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
