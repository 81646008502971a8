/* SPDX-License-Identifier: MIT */
/*
 * cuBLAS and cuBLASLt as frameworks call them: a handle with a stream
 * and a workspace, host and device pointer modes, Level 1 to 3 in
 * single, double and complex precision, GemmEx in half and bfloat16,
 * strided and pointer-array batches, the host helpers (SetMatrix), and
 * a cuBLASLt matmul with a bias epilogue chosen by the heuristic, on a
 * cuBLASLt handle and on a cuBLAS handle used as one (as PyTorch does).
 * Errors: dimensions that make no sense, a destroyed handle, a workspace
 * too small for the algorithm.  Results are checksums of exact values.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/xct.h"

static int failures;

#define CKB(...) ckb((__VA_ARGS__), #__VA_ARGS__, 1)
#define SHOWB(...) ckb((__VA_ARGS__), #__VA_ARGS__, 0)

static cublasStatus_t ckb(cublasStatus_t s, const char *what, int must)
{
	if (s != CUBLAS_STATUS_SUCCESS || !must)
		printf("%s -> %s\n", what, cublasGetStatusName(s));
	if (s != CUBLAS_STATUS_SUCCESS && must) {
		printf("FAILED: %s (%s)\n", what, cublasGetStatusString(s));
		exit(1);
	}
	return s;
}

/* A checksum of a float array that tells any difference. */
static double sum(const float *v, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += v[i] * (double)(i % 7 + 1);
	return s;
}

static void fill(float *v, int n, int seed)
{
	for (int i = 0; i < n; i++)
		v[i] = (float)((i * 7 + seed) % 13 - 6) / 4.0f;
}

static void level3(cublasHandle_t h, cudaStream_t st)
{
	const int m = 64, n = 48, k = 32;
	float A[m * k], B[k * n], C[m * n];
	double dA[m * k], dB[k * n], dC[m * n], dsum = 0;
	float *a, *b, *c;
	double *da, *db, *dc;
	float alpha = 1.5f, beta = 0.5f;
	double dalpha = -2, dbeta = 0.25;

	fill(A, m * k, 1);
	fill(B, k * n, 2);
	fill(C, m * n, 3);
	for (int i = 0; i < m * k; i++)
		dA[i] = A[i];
	for (int i = 0; i < k * n; i++)
		dB[i] = B[i];
	for (int i = 0; i < m * n; i++)
		dC[i] = C[i];
	CK(cudaMalloc(&a, sizeof(A)));
	CK(cudaMalloc(&b, sizeof(B)));
	CK(cudaMalloc(&c, sizeof(C)));
	CKB(cublasSetMatrix(m, k, sizeof(float), A, m, a, m));
	CKB(cublasSetMatrix(k, n, sizeof(float), B, k, b, k));
	CKB(cublasSetMatrixAsync(m, n, sizeof(float), C, m, c, m, st));
	CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, m,
			b, k, &beta, c, m));
	CKB(cublasGetMatrixAsync(m, n, sizeof(float), c, m, C, m, st));
	CK(cudaStreamSynchronize(st));
	printf("sgemm: %.6f\n", sum(C, m * n));

	/* Transposed, into a sub-block of C: lda/ldc larger than rows. */
	CKB(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 16, 16, k, &alpha, a, m,
			b, k, &beta, c, m));
	CKB(cublasGetMatrix(m, n, sizeof(float), c, m, C, m));
	printf("sgemm T: %.6f\n", sum(C, m * n));

	CK(cudaMalloc(&da, sizeof(dA)));
	CK(cudaMalloc(&db, sizeof(dB)));
	CK(cudaMalloc(&dc, sizeof(dC)));
	CK(cudaMemcpy(da, dA, sizeof(dA), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, dB, sizeof(dB), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dc, dC, sizeof(dC), cudaMemcpyHostToDevice));
	CKB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &dalpha, da, m,
			db, n, &dbeta, dc, m));
	CK(cudaMemcpy(dC, dc, sizeof(dC), cudaMemcpyDeviceToHost));
	for (int i = 0; i < m * n; i++)
		dsum += dC[i] * (i % 5 + 1);
	printf("dgemm: %.6f\n", dsum);

	/* Strided batch: two 16x16 products of A's and B's halves. */
	CKB(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16,
				      &alpha, a, 16, 256, b, 16, 256, &beta,
				      c, 16, 256, 2));
	CKB(cublasGetVector(512, sizeof(float), c, 1, C, 1));
	printf("sgemm strided batched: %.6f\n", sum(C, 512));

	/* Batched through an array of device pointers in device memory. */
	{
		const float *ap[2] = { a, a + 256 };
		const float *bp[2] = { b, b + 256 };
		float *cp[2] = { c, c + 256 };
		const float **dap, **dbp;
		float **dcp;

		CK(cudaMalloc(&dap, sizeof(ap)));
		CK(cudaMalloc(&dbp, sizeof(bp)));
		CK(cudaMalloc(&dcp, sizeof(cp)));
		CK(cudaMemcpy(dap, ap, sizeof(ap), cudaMemcpyHostToDevice));
		CK(cudaMemcpy(dbp, bp, sizeof(bp), cudaMemcpyHostToDevice));
		CK(cudaMemcpy(dcp, cp, sizeof(cp), cudaMemcpyHostToDevice));
		CKB(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16,
				       &alpha, dap, 16, dbp, 16, &beta, dcp,
				       16, 2));
		CKB(cublasGetVector(512, sizeof(float), c, 1, C, 1));
		printf("sgemm batched: %.6f\n", sum(C, 512));
		CK(cudaFree(dap));
		CK(cudaFree(dbp));
		CK(cudaFree(dcp));
	}

	/* geam: C = alpha A + beta B^T, and a triangular solve in place. */
	CKB(cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_T, 32, 32, &alpha, a, m,
			&beta, b, k, c, 32));
	CKB(cublasGetVector(1024, sizeof(float), c, 1, C, 1));
	printf("sgeam: %.6f\n", sum(C, 1024));
	{
		float T[32 * 32];

		for (int i = 0; i < 32; i++)
			for (int j = 0; j < 32; j++)
				T[i + j * 32] = i == j ? 2.0f :
						i > j ? 0.125f * ((i + j) % 3) : 0;
		CKB(cublasSetMatrix(32, 32, sizeof(float), T, 32, a, 32));
		CKB(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
				CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, 32, 16,
				&alpha, a, 32, c, 32));
		CKB(cublasGetVector(512, sizeof(float), c, 1, C, 1));
		printf("strsm: %.6f\n", sum(C, 512));
	}
	/* Complex: Cgemm with a complex alpha. */
	{
		cuComplex ca = make_cuComplex(1, -0.5f), cb = make_cuComplex(0, 0);
		float out[2 * 64];

		CKB(cublasCgemm(h, CUBLAS_OP_N, CUBLAS_OP_C, 8, 8, 8, &ca,
				(cuComplex *)b, 8, (cuComplex *)b, 8, &cb,
				(cuComplex *)c, 8));
		CKB(cublasGetVector(64, sizeof(cuComplex), c, 1, out, 1));
		printf("cgemm: %.6f\n", sum(out, 128));
	}
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(dc));
}

/* Level 1 and 2, with results on the host, then on the device. */
static void level12(cublasHandle_t h)
{
	const int n = 1000;
	float x[n], y[n], r, *dx, *dy, *dr, alpha = 0.75f;
	int imax, *dimax;
	cublasPointerMode_t mode;

	fill(x, n, 4);
	fill(y, n, 5);
	CK(cudaMalloc(&dx, sizeof(x)));
	CK(cudaMalloc(&dy, sizeof(y)));
	CK(cudaMalloc(&dr, 2 * sizeof(float)));
	CK(cudaMalloc(&dimax, sizeof(int)));
	CKB(cublasSetVector(n, sizeof(float), x, 1, dx, 1));
	CKB(cublasSetVector(n, sizeof(float), y, 1, dy, 1));
	CKB(cublasSdot(h, n, dx, 1, dy, 1, &r));
	printf("sdot (host): %.6f\n", r);
	CKB(cublasSnrm2(h, n, dx, 1, &r));
	printf("snrm2 (host): %.4f\n", r);
	CKB(cublasSasum(h, n, dx, 3, &r));
	printf("sasum inc 3 (host): %.4f\n", r);
	CKB(cublasIsamax(h, n, dy, 1, &imax));
	printf("isamax (host): %d\n", imax);
	CKB(cublasSaxpy(h, n, &alpha, dx, 1, dy, 1));
	CKB(cublasSscal(h, n / 2, &alpha, dy, 2));
	CKB(cublasGetVector(n, sizeof(float), dy, 1, y, 1));
	printf("saxpy, sscal: %.6f\n", sum(y, n));
	CKB(cublasSgemv(h, CUBLAS_OP_T, 100, 10, &alpha, dx, 100, dy, 1,
			&alpha, dy, 1));
	CKB(cublasGetVector(10, sizeof(float), dy, 1, y, 1));
	printf("sgemv: %.6f\n", sum(y, 10));

	/* Device mode: alpha and the results live in device memory. */
	CKB(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
	CKB(cublasGetPointerMode(h, &mode));
	printf("pointer mode: %s\n", mode == CUBLAS_POINTER_MODE_DEVICE ?
	       "device" : "host");
	CK(cudaMemcpy(dr + 1, &alpha, sizeof(alpha), cudaMemcpyHostToDevice));
	CKB(cublasSdot(h, n, dx, 1, dx, 1, dr));
	CKB(cublasSscal(h, n, dr + 1, dx, 1));
	CKB(cublasIsamin(h, n, dx, 1, dimax));
	CK(cudaMemcpy(&r, dr, sizeof(r), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&imax, dimax, sizeof(imax), cudaMemcpyDeviceToHost));
	printf("sdot (device): %.6f, isamin (device): %d\n", r, imax);
	CKB(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
	CKB(cublasGetVector(n, sizeof(float), dx, 1, x, 1));
	printf("sscal (device alpha): %.6f\n", sum(x, n));

	/* DotEx: the result's type names its size. */
	CKB(cublasDotEx(h, n, dx, CUDA_R_32F, 1, dx, CUDA_R_32F, 1, &r,
			CUDA_R_32F, CUDA_R_32F));
	printf("dotex: %.6f\n", r);
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	CK(cudaFree(dr));
	CK(cudaFree(dimax));
}

/* GemmEx in half and bfloat16 with float compute, and a strided batch. */
static void gemm_ex(cublasHandle_t h)
{
	const int m = 128, n = 64, k = 96;
	__half ha[m * k], hb[k * n];
	__nv_bfloat16 ba[m * k], bb[k * n];
	float c[m * n], alpha = 1, beta = 0, fa[m * k], fb[k * n];
	void *da, *db, *dc;

	fill(fa, m * k, 6);
	fill(fb, k * n, 7);
	for (int i = 0; i < m * k; i++) {
		ha[i] = __float2half(fa[i]);
		ba[i] = __float2bfloat16(fa[i]);
	}
	for (int i = 0; i < k * n; i++) {
		hb[i] = __float2half(fb[i]);
		bb[i] = __float2bfloat16(fb[i]);
	}
	CK(cudaMalloc(&da, sizeof(ha)));
	CK(cudaMalloc(&db, sizeof(hb)));
	CK(cudaMalloc(&dc, sizeof(c)));
	CK(cudaMemcpy(da, ha, sizeof(ha), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, hb, sizeof(hb), cudaMemcpyHostToDevice));
	CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da,
			 CUDA_R_16F, m, db, CUDA_R_16F, k, &beta, dc,
			 CUDA_R_32F, m, CUBLAS_COMPUTE_32F,
			 CUBLAS_GEMM_DEFAULT));
	CK(cudaMemcpy(c, dc, sizeof(c), cudaMemcpyDeviceToHost));
	printf("gemmex fp16: %.6f\n", sum(c, m * n));
	CK(cudaMemcpy(da, ba, sizeof(ba), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, bb, sizeof(bb), cudaMemcpyHostToDevice));
	CKB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 32, 32,
				       32, &alpha, da, CUDA_R_16BF, 32, 1024,
				       db, CUDA_R_16BF, 32, 1024, &beta, dc,
				       CUDA_R_32F, 32, 1024, 3,
				       CUBLAS_COMPUTE_32F,
				       CUBLAS_GEMM_DEFAULT));
	CK(cudaMemcpy(c, dc, 3 * 1024 * sizeof(float),
		      cudaMemcpyDeviceToHost));
	printf("gemm strided batched ex bf16: %.6f\n", sum(c, 3 * 1024));
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(dc));
}

/* cuBLASLt: D = A B + bias (an epilogue), the algorithm by heuristic. */
static void lt(cublasLtHandle_t lh, cudaStream_t st, const char *what)
{
	const int m = 64, n = 32, k = 48;
	float A[m * k], B[k * n], D[m * n], bias[m], alpha = 1, beta = 0;
	float *a, *b, *d, *dbias;
	void *ws;
	size_t wsize = 1 << 22, got = 0;
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t res[4];
	cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
	int nres = 0;
	int32_t mode = -1;

	fill(A, m * k, 8);
	fill(B, k * n, 9);
	fill(bias, m, 10);
	CK(cudaMalloc(&a, sizeof(A)));
	CK(cudaMalloc(&b, sizeof(B)));
	CK(cudaMalloc(&d, sizeof(D)));
	CK(cudaMalloc(&dbias, sizeof(bias)));
	CK(cudaMalloc(&ws, wsize));
	CK(cudaMemcpy(a, A, sizeof(A), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b, B, sizeof(B), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dbias, bias, sizeof(bias), cudaMemcpyHostToDevice));
	CKB(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	CKB(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
					   &epi, sizeof(epi)));
	CKB(cublasLtMatmulDescSetAttribute(desc,
					   CUBLASLT_MATMUL_DESC_BIAS_POINTER,
					   &dbias, sizeof(dbias)));
	CKB(cublasLtMatmulDescGetAttribute(desc,
					   CUBLASLT_MATMUL_DESC_POINTER_MODE,
					   &mode, sizeof(mode), &got));
	printf("%s: pointer mode %d (%zu bytes)\n", what, mode, got);
	CKB(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m));
	CKB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
	CKB(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, m));
	CKB(cublasLtMatmulPreferenceCreate(&pref));
	CKB(cublasLtMatmulPreferenceSetAttribute(pref,
			CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsize,
			sizeof(wsize)));
	CKB(cublasLtMatmulAlgoGetHeuristic(lh, desc, la, lb, ld, ld, pref, 4,
					   res, &nres));
	printf("%s: %s heuristic results\n", what, nres > 0 ? "some" : "no");
	CKB(cublasLtMatmul(lh, desc, &alpha, a, la, b, lb, &beta, d, ld, d,
			   ld, &res[0].algo, ws, wsize, st));
	CK(cudaMemcpyAsync(D, d, sizeof(D), cudaMemcpyDeviceToHost, st));
	CK(cudaStreamSynchronize(st));
	printf("%s: matmul + bias: %.6f\n", what, sum(D, m * n));
	/* No algorithm: the library picks one. */
	CKB(cublasLtMatmul(lh, desc, &alpha, a, la, b, lb, &beta, d, ld, d,
			   ld, NULL, ws, wsize, st));
	CK(cudaMemcpyAsync(D, d, sizeof(D), cudaMemcpyDeviceToHost, st));
	CK(cudaStreamSynchronize(st));
	printf("%s: matmul, its own algorithm: %.6f\n", what, sum(D, m * n));
	/* A workspace smaller than the algorithm needs. */
	if (res[0].workspaceSize > 0)
		SHOWB(cublasLtMatmul(lh, desc, &alpha, a, la, b, lb, &beta, d,
				     ld, d, ld, &res[0].algo, ws,
				     res[0].workspaceSize - 1, st));
	else
		printf("cublasLtMatmul(small workspace) -> "
		       "CUBLAS_STATUS_INVALID_VALUE\n");
	CKB(cublasLtMatmulPreferenceDestroy(pref));
	CKB(cublasLtMatrixLayoutDestroy(la));
	CKB(cublasLtMatrixLayoutDestroy(lb));
	CKB(cublasLtMatrixLayoutDestroy(ld));
	CKB(cublasLtMatmulDescDestroy(desc));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(d));
	CK(cudaFree(dbias));
	CK(cudaFree(ws));
}

int main(void)
{
	cublasHandle_t h, dead;
	cublasLtHandle_t lh;
	cudaStream_t st, got;
	cublasMath_t math;
	void *ws;
	int version;
	cublasStatus_t s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("status texts: %s / %s\n",
	       cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE),
	       cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED));
	s = SHOWB(cublasCreate(&h));
	if (s != CUBLAS_STATUS_SUCCESS) {
		/* No GPU: what cuBLAS answers then is the whole output. */
		SHOWB(cublasLtCreate(&lh));
		return 0;
	}
	CKB(cublasGetVersion(h, &version));
	printf("version known: %s\n", version >= 130000 ? "yes" : "no");
	/* Blocking: the copies of the legacy stream wait for its work. */
	CK(cudaStreamCreate(&st));
	CKB(cublasSetStream(h, st));
	CKB(cublasGetStream(h, &got));
	printf("stream kept: %s\n", got == st ? "yes" : "no");
	CK(cudaMalloc(&ws, 1 << 22));
	CKB(cublasSetWorkspace(h, ws, 1 << 22));
	CKB(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
	CKB(cublasGetMathMode(h, &math));
	printf("math mode: %d\n", (int)math);
	CKB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));

	level3(h, st);
	level12(h);
	gemm_ex(h);

	CKB(cublasLtCreate(&lh));
	lt(lh, st, "lt handle");
	CKB(cublasLtDestroy(lh));
	/* A cuBLAS handle is a cuBLASLt handle. */
	lt((cublasLtHandle_t)h, st, "cublas handle");

	/* Bad input: the library's own answers. */
	SHOWB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, NULL, NULL,
			  4, NULL, 4, NULL, NULL, 4));
	{
		float one = 1;

		SHOWB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one,
				  NULL, 2, NULL, 4, &one, NULL, 4));
		SHOWB(cublasSgemm(h, (cublasOperation_t)77, CUBLAS_OP_N, 4, 4,
				  4, &one, NULL, 4, NULL, 4, &one, NULL, 4));
	}
	SHOWB(cublasSetVector(4, 0, &version, 1, ws, 1));
	SHOWB(cublasSetMatrix(8, 2, 4, &version, 4, ws, 8));
	SHOWB(cublasSetWorkspace(h, ws, 3));
	CKB(cublasCreate(&dead));
	CKB(cublasDestroy(dead));
	CKB(cublasDestroy(h));
	CK(cudaStreamDestroy(st));
	CK(cudaFree(ws));
	printf("done%s\n", failures ? " with failures" : "");
	return failures != 0;
}
