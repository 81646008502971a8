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

/*
 * The span of a pointer side, its last byte touched plus one: @slices
 * slices @slice bytes apart of @rows rows @pitch apart, each @wb bytes,
 * from @off bytes into the pointer.  *@span is 0 for an empty copy;
 * -1 when it would wrap, else 0.
 */
int xcuda_rows_span(uint64_t off, uint64_t wb, uint64_t pitch, uint64_t rows,
		    uint64_t slice, uint64_t slices, uint64_t *span);

#endif /* XCUDA_COMMON_ARRAY_COPY_H */
