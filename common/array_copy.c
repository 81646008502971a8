// SPDX-License-Identifier: MIT
#include "xcuda/calls.h"

#include "array_copy.h"

int xcuda_ac_arrays(uint32_t fn)
{
	switch (fn) {
	case XCUDA_AC_2D_TO_ARRAY:
	case XCUDA_AC_TO_ARRAY:
		return 2;
	case XCUDA_AC_2D_FROM_ARRAY:
	case XCUDA_AC_FROM_ARRAY:
		return 1;
	case XCUDA_AC_2D_ARRAY_TO_ARRAY:
	case XCUDA_AC_ARRAY_TO_ARRAY:
		return 3;
	}
	return 0;
}

int xcuda_rows_span(uint64_t off, uint64_t wb, uint64_t pitch, uint64_t rows,
		    uint64_t slice, uint64_t slices, uint64_t *span)
{
	uint64_t last, t;

	*span = 0;
	if (!wb || !rows || !slices)
		return 0;
	if (__builtin_mul_overflow(slices - 1, slice, &last) ||
	    __builtin_mul_overflow(rows - 1, pitch, &t) ||
	    __builtin_add_overflow(last, t, &last) ||
	    __builtin_add_overflow(last, off, &last) ||
	    __builtin_add_overflow(last, wb, span))
		return -1;
	return 0;
}
