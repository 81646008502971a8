// SPDX-License-Identifier: MIT
/* The one message of a driver stub (driver_stub.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_stub.h"

void xc_drv_stub_note(atomic_flag *seen, const char *name)
{
	const char *q;

	if (atomic_flag_test_and_set_explicit(seen, memory_order_relaxed))
		return;
	q = getenv("XCUDA_QUIET");
	if (q && *q && strcmp(q, "0"))
		return;
	fprintf(stderr, "xcuda: %s is not supported yet "
		"(CUDA_ERROR_NOT_SUPPORTED)\n", name);
}
