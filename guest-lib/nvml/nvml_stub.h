/* SPDX-License-Identifier: MIT */
/*
 * What the generated stubs of libnvidia-ml.so.1 (tools/gen-lib-stubs.sh)
 * expand to: a function without a prototype of nvml.h, answering
 * NVML_ERROR_NOT_SUPPORTED.
 */
#ifndef XCUDA_NVML_STUB_H
#define XCUDA_NVML_STUB_H

#include "stub.h"

#define XC_STUB(name) XC_STUB_OF(name, 3, "NVML_ERROR_NOT_SUPPORTED")

#endif /* XCUDA_NVML_STUB_H */
