/* SPDX-License-Identifier: MIT */
/*
 * ARRAY_COPY's calls as the guest library and the worker both read them.
 */
#ifndef XCUDA_COMMON_ARRAY_COPY_H
#define XCUDA_COMMON_ARRAY_COPY_H

#include <stdint.h>

/*
 * Which sides of the call @fn are arrays by its kind: bit 0 the source,
 * bit 1 the destination; 0 for cudaMemcpy3D(Peer), whose parameters say.
 */
int xcuda_ac_arrays(uint32_t fn);

#endif /* XCUDA_COMMON_ARRAY_COPY_H */
