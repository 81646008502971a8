/* SPDX-License-Identifier: MIT */
/*
 * What the generated stubs of libcuda.so.1 (tools/gen-lib-stubs.sh)
 * expand to: a function without a prototype of cuda.h's, answering
 * CUDA_ERROR_NOT_SUPPORTED.  Kept apart from cuda.h, whose macros rename
 * the functions the stubs stand for.
 */
#ifndef XCUDA_DRIVER_STUB_H
#define XCUDA_DRIVER_STUB_H

#include "stub.h"

#define XC_STUB(name) \
	XC_STUB_OF(name, 801, "CUDA_ERROR_NOT_SUPPORTED")

#endif /* XCUDA_DRIVER_STUB_H */
