/* SPDX-License-Identifier: MIT */
/*
 * xcuda's libcublas.so.13 and libcublasLt.so.13: cuBLAS and cuBLASLt of
 * a guest.  Each call goes over the session of xcuda's libcudart.so.13,
 * which they link, to the worker, which makes it with NVIDIA's library
 * on the GPU: so streams, events and device memory are the program's
 * own, as natively.
 *
 * Scalars (alpha, beta, a dot product's result) are in host or device
 * memory as the handle's pointer mode (cuBLASLt: the descriptor's) says.
 * The guest keeps each handle's mode (and cuBLASLt's descriptors whole,
 * lt.c), to send a host scalar's value and a device scalar's address;
 * the worker asks its own handle which one it got before it reads it
 * (spec/README.md).
 */
#ifndef XCUDA_BLAS_H
#define XCUDA_BLAS_H

#include <cublas_api.h>
#include <cublasLt.h>

#include "guest.h"

/* Before every call: 0 (the session is made on the first call). */
int xc_blas_enter(int need_cuda);
/*
 * A round trip's status as a cublasStatus_t: the worker answers
 * cuBLAS's own; a session that cannot be reached, or a worker gone, is
 * CUBLAS_STATUS_NOT_INITIALIZED or CUBLAS_STATUS_INTERNAL_ERROR.
 */
cublasStatus_t xc_blas_result(int err);
/* 1 when @h's scalars are in host memory (CUBLAS_POINTER_MODE_HOST). */
int xc_blas_host_scalars(cublasHandle_t h);
/*
 * The size of a scalar whose type the parameters give (a compute type
 * or data type, then a matrix's data type or -1); 0 for one cuBLAS does
 * not know.
 */
size_t xc_blas_scalar_size(int type, int ctype);
/* The size of one element of cudaDataType @t, 0 if unknown. */
size_t xc_blas_type_size(int t);
/* cuBLAS's name (@name) or text for @status. */
const char *xc_blas_text(cublasStatus_t status, int name);

/* What the guest keeps of a handle, by its handle. */
enum xc_blas_kind {
	XC_BLAS_HANDLE,		/* cublasHandle_t or cublasLtHandle_t */
};

struct xc_blas_obj {
	uintptr_t key;
	enum xc_blas_kind kind;
	/* the pointer mode and the stream the program set */
	cublasPointerMode_t mode;
	cudaStream_t stream;
	/* the worker's handle has that stream since this stream epoch */
	int stream_known;
	unsigned int stream_epoch;
	/* the workspace and math mode the worker's handle has, once set */
	int ws_known, math_known;
	void *ws;
	size_t ws_size;
	cublasMath_t math;
	struct xc_blas_obj *next;
};

/*
 * The record of @key: 0 and a copy in @out, or -1 and @out as a new
 * record would start (host pointer mode, no stream).  Records change
 * only whole, under the lock, through xc_blas_obj_put().
 */
int xc_blas_obj_get(uintptr_t key, enum xc_blas_kind kind,
		    struct xc_blas_obj *out);
/* Keeps @o as its key's record: 0, or -1 without memory. */
int xc_blas_obj_put(const struct xc_blas_obj *o);
void xc_blas_obj_drop(uintptr_t key, enum xc_blas_kind kind);

#endif /* XCUDA_BLAS_H */
