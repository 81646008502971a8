// SPDX-License-Identifier: MIT
/*
 * cuBLAS calls answered in the guest: status texts, versions, and the
 * host-to-device helpers (cublasSetMatrix and its kin), which are
 * copies the runtime's cudaMemcpy2D makes over the session.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "blas.h"

const char *cublasGetStatusName(cublasStatus_t status)
{
	return xc_blas_text(status, 1);
}

const char *cublasGetStatusString(cublasStatus_t status)
{
	return xc_blas_text(status, 0);
}

/* The runtime this library runs on: xcuda's libcudart.so.13. */
size_t cublasGetCudartVersion(void)
{
	return CUDART_VERSION;
}

void cublasXerbla(const char *srName, int info)
{
	fprintf(stderr, " ** On entry to %s parameter number %d had an "
		"illegal value\n", srName ? srName : "?", info);
}

/*
 * A strided copy between host and device through the runtime: @rows
 * elements of @elem bytes in each of @cols columns.  The program's last
 * runtime error stays as it was, as it would natively (cuBLAS's copies
 * are its own runtime's).
 */
static cublasStatus_t xc_blas_copy(void *dst, int64_t ldd, const void *src,
				   int64_t lds, int64_t rows, int64_t cols,
				   int64_t elem, enum cudaMemcpyKind kind,
				   cudaStream_t stream, int async)
{
	cudaError_t saved, err;

	/* A leading dimension short of the rows is the copy's to refuse. */
	if (rows < 0 || cols < 0 || elem <= 0 || ldd <= 0 || lds <= 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!rows || !cols)
		return CUBLAS_STATUS_SUCCESS;
	if (ldd > INT64_MAX / elem || lds > INT64_MAX / elem ||
	    rows > INT64_MAX / elem)
		return CUBLAS_STATUS_INVALID_VALUE;
	saved = xc_last_error(0);
	err = async ? cudaMemcpy2DAsync(dst, ldd * elem, src, lds * elem,
					rows * elem, cols, kind, stream) :
		      cudaMemcpy2D(dst, ldd * elem, src, lds * elem,
				   rows * elem, cols, kind);
	xc_set_last_error(saved);
	return err ? CUBLAS_STATUS_MAPPING_ERROR : CUBLAS_STATUS_SUCCESS;
}

/*
 * A vector is a matrix of one row per element: @n columns of one element
 * whose leading dimension is the increment.
 */
#define XC_VEC(dst, incd, src, incs, n, elem, kind, stream, async)	\
	((incd) <= 0 || (incs) <= 0 ? CUBLAS_STATUS_INVALID_VALUE :	\
	 xc_blas_copy(dst, incd, src, incs, (n) > 0 ? 1 : 0, n, elem,	\
		      kind, stream, async))

cublasStatus_t cublasSetVector(int n, int elemSize, const void *x, int incx,
			       void *devicePtr, int incy)
{
	return XC_VEC(devicePtr, incy, x, incx, n, elemSize,
		      cudaMemcpyHostToDevice, 0, 0);
}

cublasStatus_t cublasSetVector_64(int64_t n, int64_t elemSize,
				  const void *x, int64_t incx,
				  void *devicePtr, int64_t incy)
{
	return XC_VEC(devicePtr, incy, x, incx, n, elemSize,
		      cudaMemcpyHostToDevice, 0, 0);
}

cublasStatus_t cublasGetVector(int n, int elemSize, const void *x, int incx,
			       void *y, int incy)
{
	return XC_VEC(y, incy, x, incx, n, elemSize, cudaMemcpyDeviceToHost,
		      0, 0);
}

cublasStatus_t cublasGetVector_64(int64_t n, int64_t elemSize,
				  const void *x, int64_t incx, void *y,
				  int64_t incy)
{
	return XC_VEC(y, incy, x, incx, n, elemSize, cudaMemcpyDeviceToHost,
		      0, 0);
}

cublasStatus_t cublasSetVectorAsync(int n, int elemSize, const void *hostPtr,
				    int incx, void *devicePtr, int incy,
				    cudaStream_t stream)
{
	return XC_VEC(devicePtr, incy, hostPtr, incx, n, elemSize,
		      cudaMemcpyHostToDevice, stream, 1);
}

cublasStatus_t cublasSetVectorAsync_64(int64_t n, int64_t elemSize,
				       const void *hostPtr, int64_t incx,
				       void *devicePtr, int64_t incy,
				       cudaStream_t stream)
{
	return XC_VEC(devicePtr, incy, hostPtr, incx, n, elemSize,
		      cudaMemcpyHostToDevice, stream, 1);
}

cublasStatus_t cublasGetVectorAsync(int n, int elemSize,
				    const void *devicePtr, int incx,
				    void *hostPtr, int incy,
				    cudaStream_t stream)
{
	return XC_VEC(hostPtr, incy, devicePtr, incx, n, elemSize,
		      cudaMemcpyDeviceToHost, stream, 1);
}

cublasStatus_t cublasGetVectorAsync_64(int64_t n, int64_t elemSize,
				       const void *devicePtr, int64_t incx,
				       void *hostPtr, int64_t incy,
				       cudaStream_t stream)
{
	return XC_VEC(hostPtr, incy, devicePtr, incx, n, elemSize,
		      cudaMemcpyDeviceToHost, stream, 1);
}

cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize,
			       const void *A, int lda, void *B, int ldb)
{
	return xc_blas_copy(B, ldb, A, lda, rows, cols, elemSize,
			    cudaMemcpyHostToDevice, 0, 0);
}

cublasStatus_t cublasSetMatrix_64(int64_t rows, int64_t cols,
				  int64_t elemSize, const void *A,
				  int64_t lda, void *B, int64_t ldb)
{
	return xc_blas_copy(B, ldb, A, lda, rows, cols, elemSize,
			    cudaMemcpyHostToDevice, 0, 0);
}

cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize,
			       const void *A, int lda, void *B, int ldb)
{
	return xc_blas_copy(B, ldb, A, lda, rows, cols, elemSize,
			    cudaMemcpyDeviceToHost, 0, 0);
}

cublasStatus_t cublasGetMatrix_64(int64_t rows, int64_t cols,
				  int64_t elemSize, const void *A,
				  int64_t lda, void *B, int64_t ldb)
{
	return xc_blas_copy(B, ldb, A, lda, rows, cols, elemSize,
			    cudaMemcpyDeviceToHost, 0, 0);
}

cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elemSize,
				    const void *A, int lda, void *B, int ldb,
				    cudaStream_t stream)
{
	return xc_blas_copy(B, ldb, A, lda, rows, cols, elemSize,
			    cudaMemcpyHostToDevice, stream, 1);
}

cublasStatus_t cublasSetMatrixAsync_64(int64_t rows, int64_t cols,
				       int64_t elemSize, const void *A,
				       int64_t lda, void *B, int64_t ldb,
				       cudaStream_t stream)
{
	return xc_blas_copy(B, ldb, A, lda, rows, cols, elemSize,
			    cudaMemcpyHostToDevice, stream, 1);
}

cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elemSize,
				    const void *A, int lda, void *B, int ldb,
				    cudaStream_t stream)
{
	return xc_blas_copy(B, ldb, A, lda, rows, cols, elemSize,
			    cudaMemcpyDeviceToHost, stream, 1);
}

cublasStatus_t cublasGetMatrixAsync_64(int64_t rows, int64_t cols,
				       int64_t elemSize, const void *A,
				       int64_t lda, void *B, int64_t ldb,
				       cudaStream_t stream)
{
	return xc_blas_copy(B, ldb, A, lda, rows, cols, elemSize,
			    cudaMemcpyDeviceToHost, stream, 1);
}
