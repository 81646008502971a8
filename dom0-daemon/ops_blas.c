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
#include "xcuda/blaslt.h"

static void *xd_blas_lib, *xd_blaslt_lib;
static pthread_once_t xd_blas_once = PTHREAD_ONCE_INIT;

void *xd_math_open(const char *soname)
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

/* A function of the library, typed as its header says. */
#define XD_BLAS(fn) XD_SYM(xd_blas_sym, fn)
#define XD_BLASLT(fn) XD_SYM(xd_blaslt_sym, fn)

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

/*
 * cuBLASLt's objects, made for one call from what the guest sent
 * (include/xcuda/blaslt.h): each object's header and attributes are
 * checked against what was sent, and the library checks each
 * attribute's id, size and value as it sets it.
 */
struct xd_lt_objs {
	void *obj[6];
	uint32_t kind[6];
	int n;
};

static void xd_lt_free(struct xd_lt_objs *o)
{
	__typeof__(&cublasLtMatmulDescDestroy) dd =
		XD_BLASLT(cublasLtMatmulDescDestroy);
	__typeof__(&cublasLtMatrixLayoutDestroy) ld =
		XD_BLASLT(cublasLtMatrixLayoutDestroy);
	__typeof__(&cublasLtMatmulPreferenceDestroy) pd =
		XD_BLASLT(cublasLtMatmulPreferenceDestroy);
	int i;

	for (i = 0; i < o->n; i++) {
		if (o->kind[i] == XCUDA_LT_MATMUL_DESC && dd)
			dd(o->obj[i]);
		else if (o->kind[i] == XCUDA_LT_LAYOUT && ld)
			ld(o->obj[i]);
		else if (o->kind[i] == XCUDA_LT_PREF && pd)
			pd(o->obj[i]);
	}
	o->n = 0;
}

/* One attribute of @kind set on @obj: the library's status. */
static int xd_lt_set(void *obj, uint32_t kind, const struct xcuda_lt_attr *a)
{
	__typeof__(&cublasLtMatmulDescSetAttribute) ds =
		XD_BLASLT(cublasLtMatmulDescSetAttribute);
	__typeof__(&cublasLtMatrixLayoutSetAttribute) ls =
		XD_BLASLT(cublasLtMatrixLayoutSetAttribute);
	__typeof__(&cublasLtMatmulPreferenceSetAttribute) ps =
		XD_BLASLT(cublasLtMatmulPreferenceSetAttribute);

	if (!ds || !ls || !ps)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	switch (kind) {
	case XCUDA_LT_MATMUL_DESC:
		/* The one attribute that is a host object of the library's. */
		if (a->id == CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR)
			return CUBLAS_STATUS_NOT_SUPPORTED;
		return ds(obj, a->id, a->val, a->len);
	case XCUDA_LT_LAYOUT:
		return ls(obj, a->id, a->val, a->len);
	default:
		return ps(obj, a->id, a->val, a->len);
	}
}

/* A new object of the library's as @w says. */
static int xd_lt_new(const struct xcuda_lt_obj *w, void **obj)
{
	__typeof__(&cublasLtMatmulDescCreate) dc =
		XD_BLASLT(cublasLtMatmulDescCreate);
	__typeof__(&cublasLtMatrixLayoutCreate) lc =
		XD_BLASLT(cublasLtMatrixLayoutCreate);
	__typeof__(&cublasLtMatmulPreferenceCreate) pc =
		XD_BLASLT(cublasLtMatmulPreferenceCreate);

	if (!dc || !lc || !pc)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	switch (w->kind) {
	case XCUDA_LT_MATMUL_DESC:
		return dc((cublasLtMatmulDesc_t *)obj, w->type_a, w->type_b);
	case XCUDA_LT_LAYOUT:
		return lc((cublasLtMatrixLayout_t *)obj, w->type_a, w->rows,
			  w->cols, w->ld);
	default:
		return pc((cublasLtMatmulPreference_t *)obj);
	}
}

int xd_lt_check(const uint8_t *blob, uint64_t len, const uint32_t *kinds,
		int n)
{
	struct xcuda_lt_obj w;
	struct xcuda_lt_attr a;
	uint64_t off = 0;
	uint32_t i;
	int k;

	for (k = 0; k < n; k++) {
		if (len - off < sizeof(w))
			return -1;
		memcpy(&w, blob + off, sizeof(w));
		off += sizeof(w);
		if (w.kind != kinds[k] || w.kind < XCUDA_LT_MATMUL_DESC ||
		    w.kind > XCUDA_LT_PREF || w.nattrs > XCUDA_LT_MAX_ATTRS ||
		    (len - off) / sizeof(a) < w.nattrs)
			return -1;
		for (i = 0; i < w.nattrs; i++, off += sizeof(a)) {
			memcpy(&a, blob + off, sizeof(a));
			if (!a.len || a.len > sizeof(a.val))
				return -1;
		}
	}
	return off == len ? 0 : -1;
}

/* The library's objects from a @blob that xd_lt_check() passed. */
static int xd_lt_make(const uint8_t *blob, int n, struct xd_lt_objs *o)
{
	struct xcuda_lt_obj w;
	struct xcuda_lt_attr a;
	uint64_t off = 0;
	uint32_t i;
	int err;

	for (o->n = 0; o->n < n; o->n++) {
		memcpy(&w, blob + off, sizeof(w));
		off += sizeof(w);
		err = xd_lt_new(&w, &o->obj[o->n]);
		if (err)
			goto fail;
		o->kind[o->n] = w.kind;
		for (i = 0; i < w.nattrs; i++, off += sizeof(a)) {
			memcpy(&a, blob + off, sizeof(a));
			err = xd_lt_set(o->obj[o->n], w.kind, &a);
			if (err) {
				o->n++;
				goto fail;
			}
		}
	}
	return 0;
fail:
	xd_lt_free(o);
	return err;
}

/*
 * The guest's objects of a call, from the arena (a private copy,
 * checked whole before the library sees any of it): 0 or cuBLAS's
 * status.  @kinds NULL: one object of a kind its header gives.
 */
static int xd_lt_from(struct xd_session *s, const struct xcuda_extent *e,
		      const uint32_t *kinds, int n, struct xd_lt_objs *o)
{
	size_t max = n * (sizeof(struct xcuda_lt_obj) +
			  XCUDA_LT_MAX_ATTRS * sizeof(struct xcuda_lt_attr));
	uint8_t *blob = xd_arena_copy(s, e, max);
	struct xcuda_lt_obj w;
	uint32_t any;
	int err;

	o->n = 0;
	if (blob && !kinds && e->len >= sizeof(w)) {
		/* One object of any kind: its header in the copy says which. */
		memcpy(&w, blob, sizeof(w));
		any = w.kind;
		kinds = &any;
	}
	if (!blob || !kinds || xd_lt_check(blob, e->len, kinds, n))
		err = CUBLAS_STATUS_INVALID_VALUE;
	else
		err = xd_lt_make(blob, n, o);
	free(blob);
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

static const uint32_t xd_lt_matmul_kinds[6] = {
	XCUDA_LT_MATMUL_DESC, XCUDA_LT_LAYOUT, XCUDA_LT_LAYOUT,
	XCUDA_LT_LAYOUT, XCUDA_LT_LAYOUT, XCUDA_LT_PREF,
};

int xd_op_blaslt_matmul(struct xd_session *s,
			const struct xcuda_blaslt_matmul_args *a,
			struct xd_call *call)
{
	__typeof__(&cublasLtMatmul) fn = XD_BLASLT(cublasLtMatmul);
	_Alignas(16) uint8_t alpha[16], beta[16];
	_Alignas(16) cublasLtMatmulAlgo_t algo;
	int alpha_host, beta_host;
	struct xd_lt_objs o;
	cudaStream_t stream;
	cublasHandle_t h;
	int err;

	(void)call;
	h = xd_object_get(&s->objects[XD_H_CUBLAS], a->handle);
	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (xd_stream_lookup(&s->streams, a->stream, &stream) ||
	    a->has_algo > 1 || a->rsvd)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!fn)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	err = xd_lt_from(s, &a->objs, xd_lt_matmul_kinds, 5, &o);
	if (err)
		return err;
	/* The worker's descriptor says where the scalars are. */
	err = xd_lt_modes(o.obj[0], &alpha_host, &beta_host);
	if (err)
		goto out;
	memcpy(alpha, a->alpha, sizeof(alpha));
	memcpy(beta, a->beta, sizeof(beta));
	_Static_assert(sizeof(algo) == sizeof(a->algo), "algo");
	memcpy(&algo, a->algo, sizeof(algo));
	err = fn((cublasLtHandle_t)h, o.obj[0],
		 alpha_host ? (void *)alpha : (void *)(uintptr_t)a->alpha[0],
		 (void *)(uintptr_t)a->a, o.obj[1], (void *)(uintptr_t)a->b,
		 o.obj[2],
		 beta_host ? (void *)beta : (void *)(uintptr_t)a->beta[0],
		 (void *)(uintptr_t)a->c, o.obj[3], (void *)(uintptr_t)a->d,
		 o.obj[4], a->has_algo ? &algo : NULL,
		 (void *)(uintptr_t)a->workspace, a->workspace_size, stream);
out:
	xd_lt_free(&o);
	return err;
}

int xd_op_blaslt_heuristic(struct xd_session *s,
			   const struct xcuda_blaslt_heuristic_args *a,
			   struct xcuda_blaslt_heuristic_res *r,
			   struct xd_call *call)
{
	__typeof__(&cublasLtMatmulAlgoGetHeuristic) fn =
		XD_BLASLT(cublasLtMatmulAlgoGetHeuristic);
	cublasLtMatmulHeuristicResult_t *res;
	struct xd_lt_objs o;
	cublasHandle_t h;
	int err, n = 0;

	(void)call;
	if (a->requested <= 0 || a->requested > 128 ||
	    a->results.len != a->requested * sizeof(*res))
		return CUBLAS_STATUS_INVALID_VALUE;
	h = xd_object_get(&s->objects[XD_H_CUBLAS], a->handle);
	if (!h || !fn)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	res = calloc(a->requested, sizeof(*res));
	if (!res)
		return CUBLAS_STATUS_ALLOC_FAILED;
	err = xd_lt_from(s, &a->objs, xd_lt_matmul_kinds, 6, &o);
	if (err)
		goto out;
	err = fn((cublasLtHandle_t)h, o.obj[0], o.obj[1], o.obj[2], o.obj[3],
		 o.obj[4], o.obj[5], a->requested, res, &n);
	xd_lt_free(&o);
	if (!err && (n < 0 || n > a->requested))
		err = CUBLAS_STATUS_INTERNAL_ERROR;
	if (!err) {
		r->count = n;
		xd_arena_put(s, &a->results, (const uint8_t *)res);
	}
out:
	free(res);
	return err;
}

int xd_op_blaslt_get_attribute(struct xd_session *s,
			       const struct xcuda_blaslt_get_attribute_args *a,
			       struct xcuda_blaslt_get_attribute_res *r,
			       struct xd_call *call)
{
	__typeof__(&cublasLtMatmulDescGetAttribute) dg =
		XD_BLASLT(cublasLtMatmulDescGetAttribute);
	__typeof__(&cublasLtMatrixLayoutGetAttribute) lg =
		XD_BLASLT(cublasLtMatrixLayoutGetAttribute);
	__typeof__(&cublasLtMatmulPreferenceGetAttribute) pg =
		XD_BLASLT(cublasLtMatmulPreferenceGetAttribute);
	uint8_t buf[XCUDA_LT_ATTR_BYTES];
	struct xd_lt_objs o;
	size_t written = 0;
	int err;

	(void)call;
	if (a->rsvd || a->size > sizeof(buf) || a->buf.len != a->size)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!dg || !lg || !pg)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	err = xd_lt_from(s, &a->objs, NULL, 1, &o);
	if (err)
		return err;
	if (o.kind[0] == XCUDA_LT_MATMUL_DESC)
		err = dg(o.obj[0], a->attr, buf, a->size, &written);
	else if (o.kind[0] == XCUDA_LT_LAYOUT)
		err = lg(o.obj[0], a->attr, buf, a->size, &written);
	else
		err = pg(o.obj[0], a->attr, buf, a->size, &written);
	xd_lt_free(&o);
	if (err)
		return err;
	r->written = written;
	if (a->size)
		xd_arena_put(s, &a->buf, buf);
	return 0;
}
