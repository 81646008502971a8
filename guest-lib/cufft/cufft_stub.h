/* SPDX-License-Identifier: MIT */
/*
 * What the generated stubs of libcufft.so.12 (tools/gen-lib-stubs.sh)
 * expand to: a function without a prototype of cufftXt.h, answering
 * CUFFT_NOT_SUPPORTED.
 */
#ifndef XCUDA_CUFFT_STUB_H
#define XCUDA_CUFFT_STUB_H

#include "stub.h"

#define XC_STUB(name) XC_STUB_OF(name, 16, "CUFFT_NOT_SUPPORTED")

#endif /* XCUDA_CUFFT_STUB_H */
