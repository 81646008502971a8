// SPDX-License-Identifier: MIT
/*
 * cuBLAS and cuBLASLt in the worker (spec/cublas.calls,
 * spec/cublaslt.calls): the real libraries, loaded at run time so that
 * xcudad starts without them, and the commands the description cannot
 * generate.  XCUDA_MATH_LIBS names the directory to load them from (the
 * CUDA toolkit's lib64, or a pip wheel's nvidia/cu13/lib); without it
 * the loader's search path, then $CUDA_HOME/lib64, are tried.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ops.h"

static void *xd_blas_lib, *xd_blaslt_lib;
static pthread_once_t xd_blas_once = PTHREAD_ONCE_INIT;

static void *xd_math_open(const char *soname)
{
	const char *dirs[] = { getenv("XCUDA_MATH_LIBS"), NULL,
			       getenv("CUDA_HOME"), "/usr/local/cuda" };
	char path[PATH_MAX];
	void *h;
	size_t i;

	if (dirs[0] && !*dirs[0])
		dirs[0] = NULL;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (i == 1) {
			if (dirs[0])
				break;	/* the configured place, or none */
			h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
		} else if (!dirs[i] ||
			   snprintf(path, sizeof(path), "%s%s/%s", dirs[i],
				    i ? "/lib64" : "", soname) >=
			   (int)sizeof(path)) {
			continue;
		} else {
			h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		}
		if (h)
			return h;
	}
	xd_log(XD_LOG_INFO, "no %s: %s", soname, dlerror());
	return NULL;
}

static void xd_blas_open(void)
{
	/* cuBLAS needs cuBLASLt: load it first, from the same place. */
	xd_blaslt_lib = xd_math_open("libcublasLt.so.13");
	xd_blas_lib = xd_math_open("libcublas.so.13");
}

void *xd_blas_sym(const char *name)
{
	pthread_once(&xd_blas_once, xd_blas_open);
	return xd_blas_lib ? dlsym(xd_blas_lib, name) : NULL;
}

void *xd_blaslt_sym(const char *name)
{
	pthread_once(&xd_blas_once, xd_blas_open);
	return xd_blaslt_lib ? dlsym(xd_blaslt_lib, name) : NULL;
}

/* A function of the library by its symbol, typed as its header says. */
#define XD_BLAS(fn) ((__typeof__(&fn))xd_blas_sym(#fn))
#define XD_BLASLT(fn) ((__typeof__(&fn))xd_blaslt_sym(#fn))

int xd_blas_host_scalars(cublasHandle_t h)
{
	__typeof__(&cublasGetPointerMode_v2) fn = XD_BLAS(
		cublasGetPointerMode_v2);
	cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;

	/* Host is the safe answer: scalars then come from the copy. */
	if (!fn || fn(h, &mode))
		return 1;
	return mode == CUBLAS_POINTER_MODE_HOST;
}

void xd_blas_destroy(cublasHandle_t h)
{
	__typeof__(&cublasDestroy_v2) fn = XD_BLAS(cublasDestroy_v2);

	if (fn)
		fn(h);
}

void xd_blaslt_desc_destroy(cublasLtMatmulDesc_t d)
{
	__typeof__(&cublasLtMatmulDescDestroy) fn =
		XD_BLASLT(cublasLtMatmulDescDestroy);

	if (fn)
		fn(d);
}

void xd_blaslt_layout_destroy(cublasLtMatrixLayout_t l)
{
	__typeof__(&cublasLtMatrixLayoutDestroy) fn =
		XD_BLASLT(cublasLtMatrixLayoutDestroy);

	if (fn)
		fn(l);
}

void xd_blaslt_pref_destroy(cublasLtMatmulPreference_t p)
{
	__typeof__(&cublasLtMatmulPreferenceDestroy) fn =
		XD_BLASLT(cublasLtMatmulPreferenceDestroy);

	if (fn)
		fn(p);
}

void xd_blaslt_transform_destroy(cublasLtMatrixTransformDesc_t t)
{
	__typeof__(&cublasLtMatrixTransformDescDestroy) fn =
		XD_BLASLT(cublasLtMatrixTransformDescDestroy);

	if (fn)
		fn(t);
}

/*
 * A cuBLASLt handle is a cuBLAS handle: NVIDIA's cuBLASLt takes one for
 * its own, and programs (PyTorch) pass theirs so; one table holds both.
 */
int xd_op_blaslt_create(struct xd_session *s, struct xcuda_blaslt_create_res *r,
			struct xd_call *call)
{
	__typeof__(&cublasCreate_v2) fn = XD_BLAS(cublasCreate_v2);
	cublasHandle_t h;
	int err;

	(void)call;
	if (!fn)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	err = fn(&h);
	if (err)
		return err;
	if (xd_object_add(&s->objects[XD_H_CUBLAS], h, s->device, 0,
			  &r->lightHandle)) {
		xd_blas_destroy(h);
		return CUBLAS_STATUS_ALLOC_FAILED;
	}
	return 0;
}

int xd_op_blaslt_destroy(struct xd_session *s,
			 const struct xcuda_blaslt_destroy_args *a,
			 struct xd_call *call)
{
	__typeof__(&cublasDestroy_v2) fn = XD_BLAS(cublasDestroy_v2);
	cublasHandle_t h = xd_object_get(&s->objects[XD_H_CUBLAS],
					 a->lightHandle);
	int err;

	(void)call;
	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!fn)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	err = fn(h);
	if (!err)
		xd_htab_del(&s->objects[XD_H_CUBLAS], a->lightHandle);
	return err;
}

/* Where the descriptor's pointer mode puts alpha and beta. */
static int xd_lt_modes(cublasLtMatmulDesc_t d, int *alpha_host,
		       int *beta_host)
{
	__typeof__(&cublasLtMatmulDescGetAttribute) get =
		XD_BLASLT(cublasLtMatmulDescGetAttribute);
	int32_t mode = CUBLASLT_POINTER_MODE_HOST;
	size_t n = 0;

	if (!get)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (get(d, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof(mode),
		&n) || n != sizeof(mode))
		return CUBLAS_STATUS_INVALID_VALUE;
	*alpha_host = mode == CUBLASLT_POINTER_MODE_HOST;
	*beta_host = mode == CUBLASLT_POINTER_MODE_HOST ||
		     mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST;
	return 0;
}

int xd_op_blaslt_matmul(struct xd_session *s,
			const struct xcuda_blaslt_matmul_args *a,
			struct xd_call *call)
{
	__typeof__(&cublasLtMatmul) fn = XD_BLASLT(cublasLtMatmul);
	struct xd_htab *lay = &s->objects[XD_H_LTLAYOUT];
	_Alignas(16) uint8_t alpha[16], beta[16];
	_Alignas(16) cublasLtMatmulAlgo_t algo;
	cublasLtMatrixLayout_t ad, bd, cd, dd;
	cublasLtMatmulDesc_t desc;
	int alpha_host, beta_host;
	cudaStream_t stream;
	cublasHandle_t h;
	int err;

	(void)call;
	if (!fn)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h = xd_object_get(&s->objects[XD_H_CUBLAS], a->handle);
	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	desc = xd_object_get(&s->objects[XD_H_LTMATMUL], a->desc);
	ad = xd_object_get(lay, a->adesc);
	bd = xd_object_get(lay, a->bdesc);
	cd = xd_object_get(lay, a->cdesc);
	dd = xd_object_get(lay, a->ddesc);
	if (!desc || !ad || !bd || !cd || !dd ||
	    xd_stream_lookup(&s->streams, a->stream, &stream) ||
	    a->has_algo > 1)
		return CUBLAS_STATUS_INVALID_VALUE;
	/* The worker's descriptor says where the scalars are. */
	err = xd_lt_modes(desc, &alpha_host, &beta_host);
	if (err)
		return err;
	memcpy(alpha, a->alpha, sizeof(alpha));
	memcpy(beta, a->beta, sizeof(beta));
	_Static_assert(sizeof(algo) == sizeof(a->algo), "algo");
	memcpy(&algo, a->algo, sizeof(algo));
	return fn((cublasLtHandle_t)h, desc,
		  alpha_host ? (void *)alpha : (void *)(uintptr_t)a->alpha[0],
		  (void *)(uintptr_t)a->a, ad, (void *)(uintptr_t)a->b, bd,
		  beta_host ? (void *)beta : (void *)(uintptr_t)a->beta[0],
		  (void *)(uintptr_t)a->c, cd, (void *)(uintptr_t)a->d, dd,
		  a->has_algo ? &algo : NULL, (void *)(uintptr_t)a->workspace,
		  a->workspace_size, stream);
}
