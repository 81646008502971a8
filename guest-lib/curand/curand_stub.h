/* SPDX-License-Identifier: MIT */
/*
 * What the generated stubs of libcurand.so.10 (tools/gen-lib-stubs.sh)
 * expand to: a function without a prototype of curand.h, answering
 * CURAND_STATUS_ARCH_MISMATCH, cuRAND's "does not support the requested
 * feature" (it has no "not supported" of its own).
 */
#ifndef XCUDA_CURAND_STUB_H
#define XCUDA_CURAND_STUB_H

#include "stub.h"

#define XC_STUB(name) \
	XC_STUB_OF(name, 204, "CURAND_STATUS_ARCH_MISMATCH")

#endif /* XCUDA_CURAND_STUB_H */
