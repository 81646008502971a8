// SPDX-License-Identifier: MIT
/*
 * cuBLASLt calls the guest writes by hand: the matmul descriptor, whose
 * pointer mode and scale type the guest keeps to marshal alpha and
 * beta, and cublasLtMatmul itself.
 */
#include <stdint.h>
#include <string.h>

#include "blas.h"

static uintptr_t xc_lt_key(const void *h)
{
	return (uintptr_t)h;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
					cublasComputeType_t computeType,
					cudaDataType_t scaleType)
{
	struct xcuda_blaslt_matmul_desc_create_args a = { 0 };
	struct xcuda_blaslt_matmul_desc_create_res r = { 0 };
	struct xcuda_blaslt_matmul_desc_destroy_args d;
	struct xc_blas_obj o;
	int err;

	if (!matmulDesc)
		return CUBLAS_STATUS_INVALID_VALUE;
	a.computeType = computeType;
	a.scaleType = scaleType;
	err = xc_call_blaslt_matmul_desc_create(&a, &r);
	if (err)
		return xc_blas_result(err);
	if (r.matmulDesc < XCUDA_HANDLE_FIRST)
		return CUBLAS_STATUS_INTERNAL_ERROR;
	xc_blas_obj_drop(r.matmulDesc, XC_BLAS_MATMUL_DESC);
	xc_blas_obj_get(r.matmulDesc, XC_BLAS_MATMUL_DESC, &o);
	o.scale_type = scaleType;
	if (xc_blas_obj_put(&o)) {
		d.matmulDesc = r.matmulDesc;
		xc_call_blaslt_matmul_desc_destroy(&d);
		return CUBLAS_STATUS_ALLOC_FAILED;
	}
	*matmulDesc = (cublasLtMatmulDesc_t)(uintptr_t)r.matmulDesc;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
	struct xcuda_blaslt_matmul_desc_destroy_args a;
	int err;

	if (!matmulDesc || xc_handle_in(matmulDesc, &a.matmulDesc))
		return CUBLAS_STATUS_INVALID_VALUE;
	err = xc_call_blaslt_matmul_desc_destroy(&a);
	if (!err)
		xc_blas_obj_drop(xc_lt_key(matmulDesc), XC_BLAS_MATMUL_DESC);
	return xc_blas_result(err);
}

cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
			       cublasLtMatmulDescAttributes_t attr,
			       const void *buf, size_t sizeInBytes)
{
	struct xcuda_blaslt_matmul_desc_set_attribute_args a = { 0 };
	struct xc_xfer x;
	struct xc_blas_obj o;
	int32_t v;
	int err;

	if (!matmulDesc || xc_handle_in(matmulDesc, &a.matmulDesc))
		return CUBLAS_STATUS_INVALID_VALUE;
	a.attr = attr;
	a.sizeInBytes = sizeInBytes;
	x.ptr = (void *)buf;
	x.len = xc_bufsize(buf, sizeInBytes > INT64_MAX ? -1 :
					    (long long)sizeInBytes,
			   256);
	x.dir = XC_XFER_IN;
	x.ext = &a.buf;
	err = xc_drv_forward_xfer(XCUDA_OP_BLASLT_MATMUL_DESC_SET_ATTRIBUTE,
				  &a, sizeof(a), NULL, 0, &x, 1);
	if (err)
		return xc_blas_result(err);
	/* What says where alpha and beta are, and how large. */
	if ((attr == CUBLASLT_MATMUL_DESC_POINTER_MODE ||
	     attr == CUBLASLT_MATMUL_DESC_SCALE_TYPE) &&
	    sizeInBytes == sizeof(v)) {
		memcpy(&v, buf, sizeof(v));
		xc_blas_obj_get(xc_lt_key(matmulDesc), XC_BLAS_MATMUL_DESC, &o);
		if (attr == CUBLASLT_MATMUL_DESC_POINTER_MODE)
			o.lt_mode = v;
		else
			o.scale_type = v;
		if (xc_blas_obj_put(&o))
			return CUBLAS_STATUS_ALLOC_FAILED;
	}
	return CUBLAS_STATUS_SUCCESS;
}

/* Alpha is on the host in these modes, beta in these and one more. */
static int xc_lt_alpha_host(int32_t mode)
{
	return mode == CUBLASLT_POINTER_MODE_HOST;
}

static int xc_lt_beta_host(int32_t mode)
{
	return mode == CUBLASLT_POINTER_MODE_HOST ||
	       mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST;
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
	struct xc_blas_obj o;
	size_t size;

	memset(&a, 0, sizeof(a));
	if (!lightHandle || xc_handle_in(lightHandle, &a.handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!computeDesc || !Adesc || !Bdesc || !Cdesc || !Ddesc ||
	    xc_handle_in(computeDesc, &a.desc) ||
	    xc_handle_in(Adesc, &a.adesc) || xc_handle_in(Bdesc, &a.bdesc) ||
	    xc_handle_in(Cdesc, &a.cdesc) || xc_handle_in(Ddesc, &a.ddesc))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (xc_stream_handle(stream, 0, &a.stream))
		return CUBLAS_STATUS_INVALID_VALUE;
	xc_blas_obj_get(xc_lt_key(computeDesc), XC_BLAS_MATMUL_DESC, &o);
	size = xc_blas_type_size(o.scale_type);
	if (!size && (xc_lt_alpha_host(o.lt_mode) ||
		      xc_lt_beta_host(o.lt_mode)))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	if (xc_lt_scalar(a.alpha, alpha, xc_lt_alpha_host(o.lt_mode), size) ||
	    xc_lt_scalar(a.beta, beta, xc_lt_beta_host(o.lt_mode), size))
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
	return xc_blas_result(xc_call_blaslt_matmul(&a));
}
