// SPDX-License-Identifier: MIT
/*
 * The one message of a stub, an export that answers "not supported":
 * the runtime's (tools/gen-stubs.sh), the driver's and the math
 * libraries' (tools/gen-lib-stubs.sh).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"

void xc_stub_note(atomic_flag *seen, const char *name, const char *what)
{
	const char *q;

	if (atomic_flag_test_and_set_explicit(seen, memory_order_relaxed))
		return;
	q = getenv("XCUDA_QUIET");
	if (q && *q && strcmp(q, "0"))
		return;
	fprintf(stderr, "xcuda: %s is not supported yet (%s)\n", name, what);
}
