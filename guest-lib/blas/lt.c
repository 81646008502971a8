// SPDX-License-Identifier: MIT
/*
 * cuBLASLt's descriptors in the guest.  Matmul descriptors, matrix
 * layouts and preferences are the attributes a program sets: the guest
 * keeps them and sends them with the calls that use them (a matmul, the
 * heuristic), where the worker makes the library's objects.  A framework
 * that describes every matmul anew (PyTorch makes and destroys eight
 * objects per matmul) then pays one round trip, not twenty.
 *
 * The library checks an attribute when the worker sets it: a bad one is
 * refused by the call that uses it, not by cublasLt*SetAttribute
 * (docs/blas.md).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "xcuda/blaslt.h"

#define XC_LT_MAGIC	0x78634c74u	/* "xcLt" */

struct xc_lt_obj {
	uint32_t magic;
	struct xcuda_lt_obj w;
	struct xcuda_lt_attr attrs[XCUDA_LT_MAX_ATTRS];
};

/* The program's handle of an object, or NULL if it is none of @kind. */
static struct xc_lt_obj *xc_lt_get(const void *h, uint32_t kind)
{
	struct xc_lt_obj *o = (struct xc_lt_obj *)h;

	if (!o || o->magic != XC_LT_MAGIC || o->w.kind != kind)
		return NULL;
	return o;
}

static cublasStatus_t xc_lt_new(void **out, uint32_t kind)
{
	struct xc_lt_obj *o;

	if (!out)
		return CUBLAS_STATUS_INVALID_VALUE;
	o = calloc(1, sizeof(*o));
	if (!o)
		return CUBLAS_STATUS_ALLOC_FAILED;
	o->magic = XC_LT_MAGIC;
	o->w.kind = kind;
	*out = o;
	return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t xc_lt_free(void *h, uint32_t kind)
{
	struct xc_lt_obj *o = xc_lt_get(h, kind);

	if (!o)
		return CUBLAS_STATUS_INVALID_VALUE;
	o->magic = 0;
	free(o);
	return CUBLAS_STATUS_SUCCESS;
}

static struct xcuda_lt_attr *xc_lt_find(struct xc_lt_obj *o, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < o->w.nattrs; i++)
		if (o->attrs[i].id == id)
			return &o->attrs[i];
	return NULL;
}

static cublasStatus_t xc_lt_set(void *h, uint32_t kind, uint32_t id,
				const void *buf, size_t size)
{
	struct xc_lt_obj *o = xc_lt_get(h, kind);
	struct xcuda_lt_attr *a;

	if (!o || !buf || !size || size > XCUDA_LT_ATTR_BYTES)
		return CUBLAS_STATUS_INVALID_VALUE;
	a = xc_lt_find(o, id);
	if (!a) {
		if (o->w.nattrs == XCUDA_LT_MAX_ATTRS)
			return CUBLAS_STATUS_INVALID_VALUE;
		a = &o->attrs[o->w.nattrs++];
		a->id = id;
	}
	memset(a->val, 0, sizeof(a->val));
	memcpy(a->val, buf, size);
	a->len = size;
	return CUBLAS_STATUS_SUCCESS;
}

/* The bytes an object takes on the wire. */
static size_t xc_lt_size(const struct xc_lt_obj *o)
{
	return sizeof(o->w) + o->w.nattrs * sizeof(o->attrs[0]);
}

/* Appends @o's wire form at @p; returns the bytes written. */
static size_t xc_lt_put(uint8_t *p, const struct xc_lt_obj *o)
{
	memcpy(p, &o->w, sizeof(o->w));
	memcpy(p + sizeof(o->w), o->attrs, o->w.nattrs * sizeof(o->attrs[0]));
	return xc_lt_size(o);
}

/* @n objects' wire form in a buffer of the caller's to free, or NULL. */
static uint8_t *xc_lt_pack(struct xc_lt_obj *const *objs, int n,
			   size_t *len)
{
	size_t size = 0, off = 0;
	uint8_t *p;
	int i;

	for (i = 0; i < n; i++)
		size += xc_lt_size(objs[i]);
	p = malloc(size);
	if (!p)
		return NULL;
	for (i = 0; i < n; i++)
		off += xc_lt_put(p + off, objs[i]);
	*len = size;
	return p;
}

/*
 * Where the scalars of a matmul are, and their size: the descriptor's
 * pointer mode and scale type as the program set them, the library's
 * defaults (host; the compute type's scale type) else.
 */
static void xc_lt_scalars(struct xc_lt_obj *d, int *alpha_host,
			  int *beta_host, size_t *size)
{
	struct xcuda_lt_attr *a;
	int32_t mode = CUBLASLT_POINTER_MODE_HOST, scale = d->w.type_b;

	a = xc_lt_find(d, CUBLASLT_MATMUL_DESC_POINTER_MODE);
	if (a && a->len == sizeof(mode))
		memcpy(&mode, a->val, sizeof(mode));
	a = xc_lt_find(d, CUBLASLT_MATMUL_DESC_SCALE_TYPE);
	if (a && a->len == sizeof(scale))
		memcpy(&scale, a->val, sizeof(scale));
	*alpha_host = mode == CUBLASLT_POINTER_MODE_HOST;
	*beta_host = mode == CUBLASLT_POINTER_MODE_HOST ||
		     mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST;
	*size = xc_blas_type_size(scale);
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
					cublasComputeType_t computeType,
					cudaDataType_t scaleType)
{
	cublasStatus_t st = xc_lt_new((void **)matmulDesc,
				      XCUDA_LT_MATMUL_DESC);

	if (!st) {
		((struct xc_lt_obj *)*matmulDesc)->w.type_a = computeType;
		((struct xc_lt_obj *)*matmulDesc)->w.type_b = scaleType;
	}
	return st;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
	return xc_lt_free(matmulDesc, XCUDA_LT_MATMUL_DESC);
}

cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
			       cublasLtMatmulDescAttributes_t attr,
			       const void *buf, size_t sizeInBytes)
{
	return xc_lt_set(matmulDesc, XCUDA_LT_MATMUL_DESC, attr, buf,
			 sizeInBytes);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout,
					  cudaDataType type, uint64_t rows,
					  uint64_t cols, int64_t ld)
{
	cublasStatus_t st = xc_lt_new((void **)matLayout, XCUDA_LT_LAYOUT);
	struct xc_lt_obj *o;

	if (st)
		return st;
	o = (struct xc_lt_obj *)*matLayout;
	o->w.type_a = type;
	o->w.rows = rows;
	o->w.cols = cols;
	o->w.ld = ld;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
	return xc_lt_free(matLayout, XCUDA_LT_LAYOUT);
}

cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
				 cublasLtMatrixLayoutAttribute_t attr,
				 const void *buf, size_t sizeInBytes)
{
	return xc_lt_set(matLayout, XCUDA_LT_LAYOUT, attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
	return xc_lt_new((void **)pref, XCUDA_LT_PREF);
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
	return xc_lt_free(pref, XCUDA_LT_PREF);
}

cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
				     cublasLtMatmulPreferenceAttributes_t attr,
				     const void *buf, size_t sizeInBytes)
{
	return xc_lt_set(pref, XCUDA_LT_PREF, attr, buf, sizeInBytes);
}

/*
 * An attribute the program set is answered here; one it did not, by the
 * library's default, from an object the worker makes as this one is.
 */
static cublasStatus_t xc_lt_get_attr(void *h, uint32_t kind, uint32_t id,
				     void *buf, size_t size,
				     size_t *written)
{
	struct xcuda_blaslt_get_attribute_args a;
	struct xcuda_blaslt_get_attribute_res r = { 0 };
	struct xc_lt_obj *o = xc_lt_get(h, kind);
	struct xcuda_lt_attr *at;
	struct xc_xfer x[2];
	uint8_t *blob;
	size_t len;
	int err;

	if (!o || (!size && !written) || (size && !buf))
		return CUBLAS_STATUS_INVALID_VALUE;
	at = xc_lt_find(o, id);
	if (at) {
		if (written)
			*written = at->len;
		if (!size)
			return CUBLAS_STATUS_SUCCESS;
		if (size != at->len)
			return CUBLAS_STATUS_INVALID_VALUE;
		memcpy(buf, at->val, at->len);
		return CUBLAS_STATUS_SUCCESS;
	}
	blob = xc_lt_pack(&o, 1, &len);
	if (!blob)
		return CUBLAS_STATUS_ALLOC_FAILED;
	memset(&a, 0, sizeof(a));
	a.attr = id;
	a.size = size;
	x[0] = (struct xc_xfer){ blob, len, XC_XFER_IN, &a.objs };
	x[1] = (struct xc_xfer){ buf, xc_bufsize(buf, size > INT64_MAX ? -1 :
						   (long long)size, 4096),
				 XC_XFER_INOUT | XC_XFER_KEEP, &a.buf };
	err = xc_drv_forward_xfer(XCUDA_OP_BLASLT_GET_ATTRIBUTE, &a, sizeof(a),
				  &r, sizeof(r), x, 2);
	free(blob);
	if (!err && written)
		*written = r.written;
	return xc_blas_result(err);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc,
					      cublasLtMatmulDescAttributes_t attr,
					      void *buf, size_t sizeInBytes,
					      size_t *sizeWritten)
{
	return xc_lt_get_attr(matmulDesc, XCUDA_LT_MATMUL_DESC, attr, buf,
			      sizeInBytes, sizeWritten);
}

cublasStatus_t
cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
				 cublasLtMatrixLayoutAttribute_t attr,
				 void *buf, size_t sizeInBytes,
				 size_t *sizeWritten)
{
	return xc_lt_get_attr(matLayout, XCUDA_LT_LAYOUT, attr, buf,
			      sizeInBytes, sizeWritten);
}

cublasStatus_t
cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
				     cublasLtMatmulPreferenceAttributes_t attr,
				     void *buf, size_t sizeInBytes,
				     size_t *sizeWritten)
{
	return xc_lt_get_attr(pref, XCUDA_LT_PREF, attr, buf, sizeInBytes,
			      sizeWritten);
}

static int xc_lt_scalar(uint64_t out[2], const void *p, int host,
			size_t size)
{
	if (!p)
		return -1;
	if (host)
		memcpy(out, p, size);
	else
		out[0] = (uintptr_t)p;
	return 0;
}

/* The descriptor and four layouts of a matmul, or NULL for any. */
static int xc_lt_matmul_objs(struct xc_lt_obj *objs[5], const void *desc,
			     const void *a, const void *b, const void *c,
			     const void *d)
{
	const void *h[5] = { desc, a, b, c, d };
	int i;

	objs[0] = xc_lt_get(desc, XCUDA_LT_MATMUL_DESC);
	for (i = 1; i < 5; i++)
		objs[i] = xc_lt_get(h[i], XCUDA_LT_LAYOUT);
	for (i = 0; i < 5; i++)
		if (!objs[i])
			return -1;
	return 0;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle,
			      cublasLtMatmulDesc_t computeDesc,
			      const void *alpha, const void *A,
			      cublasLtMatrixLayout_t Adesc, const void *B,
			      cublasLtMatrixLayout_t Bdesc, const void *beta,
			      const void *C, cublasLtMatrixLayout_t Cdesc,
			      void *D, cublasLtMatrixLayout_t Ddesc,
			      const cublasLtMatmulAlgo_t *algo,
			      void *workspace, size_t workspaceSizeInBytes,
			      cudaStream_t stream)
{
	struct xcuda_blaslt_matmul_args a;
	struct xc_lt_obj *objs[5];
	int alpha_host, beta_host;
	struct xc_xfer x;
	uint8_t *blob;
	size_t size, len;
	int err;

	memset(&a, 0, sizeof(a));
	if (!lightHandle || xc_handle_in(lightHandle, &a.handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (xc_lt_matmul_objs(objs, computeDesc, Adesc, Bdesc, Cdesc, Ddesc))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (xc_stream_handle(stream, 0, &a.stream))
		return CUBLAS_STATUS_INVALID_VALUE;
	xc_lt_scalars(objs[0], &alpha_host, &beta_host, &size);
	if (!size && (alpha_host || beta_host))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	if (xc_lt_scalar(a.alpha, alpha, alpha_host, size) ||
	    xc_lt_scalar(a.beta, beta, beta_host, size))
		return CUBLAS_STATUS_INVALID_VALUE;
	a.a = (uintptr_t)A;
	a.b = (uintptr_t)B;
	a.c = (uintptr_t)C;
	a.d = (uintptr_t)D;
	a.workspace = (uintptr_t)workspace;
	a.workspace_size = workspaceSizeInBytes;
	if (algo) {
		_Static_assert(sizeof(*algo) == sizeof(a.algo), "algo");
		memcpy(a.algo, algo, sizeof(a.algo));
		a.has_algo = 1;
	}
	blob = xc_lt_pack(objs, 5, &len);
	if (!blob)
		return CUBLAS_STATUS_ALLOC_FAILED;
	x = (struct xc_xfer){ blob, len, XC_XFER_IN, &a.objs };
	err = xc_drv_forward_xfer(XCUDA_OP_BLASLT_MATMUL, &a, sizeof(a), NULL,
				  0, &x, 1);
	free(blob);
	return xc_blas_result(err);
}

/*
 * The heuristic's answers, by what was asked: the handle, the device,
 * how many, and the objects, whose device addresses count by their low
 * bits only (their alignment is all the library looks at).
 */
#define XC_LT_CACHE	64
#define XC_LT_CACHED_RESULTS	16

struct xc_lt_answer {
	uint8_t *key;
	size_t key_len;
	int count;
	cublasLtMatmulHeuristicResult_t res[XC_LT_CACHED_RESULTS];
};

static pthread_mutex_t xc_lt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_lt_answer xc_lt_cache[XC_LT_CACHE];
static unsigned int xc_lt_next;

static int xc_lt_is_pointer(uint32_t id)
{
	switch (id) {
	case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
	case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
	case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
	case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
	case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
	case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
	case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
	case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER:
	case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER:
	case CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER:
		return 1;
	default:
		return 0;
	}
}

/* The cache's key: @blob with the descriptor's addresses masked. */
static uint8_t *xc_lt_key(const uint8_t *blob, size_t len, uint32_t handle,
			  int requested, size_t *key_len)
{
	size_t head = 3 * sizeof(int32_t), off;
	struct xcuda_lt_obj w;
	uint8_t *k = malloc(head + len);
	int32_t id[3] = { (int32_t)handle, requested, xc_cur_device() };
	uint64_t addr;
	uint32_t i;

	if (!k)
		return NULL;
	memcpy(k, id, head);
	memcpy(k + head, blob, len);
	/* The descriptor comes first. */
	memcpy(&w, blob, sizeof(w));
	off = head + sizeof(w);
	for (i = 0; i < w.nattrs; i++, off += sizeof(struct xcuda_lt_attr)) {
		struct xcuda_lt_attr *a = (struct xcuda_lt_attr *)(k + off);

		if (xc_lt_is_pointer(a->id) && a->len == sizeof(addr)) {
			memcpy(&addr, a->val, sizeof(addr));
			addr &= 0xff;
			memcpy(a->val, &addr, sizeof(addr));
		}
	}
	*key_len = head + len;
	return k;
}

static int xc_lt_cached(const uint8_t *key, size_t len,
			cublasLtMatmulHeuristicResult_t *res, int requested)
{
	int i, n = -1;

	pthread_mutex_lock(&xc_lt_lock);
	for (i = 0; i < XC_LT_CACHE; i++) {
		struct xc_lt_answer *c = &xc_lt_cache[i];

		if (c->key && c->key_len == len && !memcmp(c->key, key, len)) {
			n = c->count < requested ? c->count : requested;
			memcpy(res, c->res, n * sizeof(*res));
			break;
		}
	}
	pthread_mutex_unlock(&xc_lt_lock);
	return n;
}

static void xc_lt_remember(uint8_t *key, size_t len,
			   const cublasLtMatmulHeuristicResult_t *res,
			   int count)
{
	struct xc_lt_answer *c;

	pthread_mutex_lock(&xc_lt_lock);
	c = &xc_lt_cache[xc_lt_next++ % XC_LT_CACHE];
	free(c->key);
	c->key = key;
	c->key_len = len;
	c->count = count;
	memcpy(c->res, res, count * sizeof(*res));
	pthread_mutex_unlock(&xc_lt_lock);
}

cublasStatus_t
cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle,
			       cublasLtMatmulDesc_t operationDesc,
			       cublasLtMatrixLayout_t Adesc,
			       cublasLtMatrixLayout_t Bdesc,
			       cublasLtMatrixLayout_t Cdesc,
			       cublasLtMatrixLayout_t Ddesc,
			       cublasLtMatmulPreference_t preference,
			       int requestedAlgoCount,
			       cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
			       int *returnAlgoCount)
{
	struct xcuda_blaslt_heuristic_args a;
	struct xcuda_blaslt_heuristic_res r = { 0, 0 };
	struct xc_lt_obj *objs[6];
	struct xc_xfer x[2];
	uint8_t *blob, *key;
	size_t len, key_len = 0;
	int err, n;

	memset(&a, 0, sizeof(a));
	if (!lightHandle || xc_handle_in(lightHandle, &a.handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (xc_lt_matmul_objs(objs, operationDesc, Adesc, Bdesc, Cdesc,
			      Ddesc))
		return CUBLAS_STATUS_INVALID_VALUE;
	objs[5] = xc_lt_get(preference, XCUDA_LT_PREF);
	if (!objs[5] || requestedAlgoCount <= 0 || requestedAlgoCount > 128 ||
	    !heuristicResultsArray || !returnAlgoCount)
		return CUBLAS_STATUS_INVALID_VALUE;
	blob = xc_lt_pack(objs, 6, &len);
	if (!blob)
		return CUBLAS_STATUS_ALLOC_FAILED;
	key = xc_lt_key(blob, len, a.handle, requestedAlgoCount, &key_len);
	if (key) {
		n = xc_lt_cached(key, key_len, heuristicResultsArray,
				 requestedAlgoCount);
		if (n >= 0) {
			free(key);
			free(blob);
			*returnAlgoCount = n;
			return CUBLAS_STATUS_SUCCESS;
		}
	}
	a.requested = requestedAlgoCount;
	x[0] = (struct xc_xfer){ blob, len, XC_XFER_IN, &a.objs };
	x[1] = (struct xc_xfer){ heuristicResultsArray,
				 requestedAlgoCount *
				 sizeof(heuristicResultsArray[0]),
				 XC_XFER_OUT, &a.results };
	err = xc_drv_forward_xfer(XCUDA_OP_BLASLT_HEURISTIC, &a, sizeof(a), &r,
				  sizeof(r), x, 2);
	free(blob);
	if (!err && (r.count < 0 || r.count > requestedAlgoCount))
		err = CUBLAS_STATUS_INTERNAL_ERROR;
	if (err) {
		free(key);
		return xc_blas_result(err);
	}
	*returnAlgoCount = r.count;
	if (key && r.count <= XC_LT_CACHED_RESULTS)
		xc_lt_remember(key, key_len, heuristicResultsArray, r.count);
	else
		free(key);
	return CUBLAS_STATUS_SUCCESS;
}
