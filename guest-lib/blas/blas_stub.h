/* SPDX-License-Identifier: MIT */
/*
 * What the generated stubs of libcublas.so.13 and libcublasLt.so.13
 * (tools/gen-lib-stubs.sh) expand to: a function without a prototype of
 * cuBLAS's headers, answering CUBLAS_STATUS_NOT_SUPPORTED.
 */
#ifndef XCUDA_BLAS_STUB_H
#define XCUDA_BLAS_STUB_H

#include "stub.h"

#define XC_STUB(name) \
	XC_STUB_OF(name, 15, "CUBLAS_STATUS_NOT_SUPPORTED")

#endif /* XCUDA_BLAS_STUB_H */
