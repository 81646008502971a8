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
