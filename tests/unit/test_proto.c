// SPDX-License-Identifier: MIT
/* The wire format: slot sizes, ring geometry, the table and extents. */
#include <stddef.h>
#include <string.h>

#include "xcuda/calls.h"
#include "xcuda/hash.h"
#include "check.h"

int main(void)
{
	struct { int num; size_t args, res; } ops[XCUDA_OP_MAX];
	size_t i, j, n = 0;
	int ok;

	for (i = 1; i < XCUDA_OP_MAX; i++)
		if (xcuda_calls[i].name)
			ops[n++] = (__typeof__(ops[0])){ (int)i,
						     xcuda_calls[i].args_size,
						     xcuda_calls[i].res_size };

	CHECK_EQ(sizeof(struct xcuda_req_hdr), 32, "request-header-32-bytes");
	CHECK_EQ(sizeof(struct xcuda_request), 256, "request-slot-256-bytes");
	CHECK_EQ(sizeof(struct xcuda_response), 64, "response-slot-64-bytes");
	CHECK_EQ(sizeof(union xcuda_sring_entry), 256,
		 "ring-entry-256-bytes");
	CHECK_EQ(XCUDA_RING_SIZE(0), 8, "ring-order-0-has-8-slots");
	CHECK_EQ(XCUDA_RING_SIZE(4), 128, "ring-order-4-has-128-slots");
	CHECK_EQ(sizeof(struct xcuda_launch_args), XCUDA_REQ_INLINE,
		 "launch-args-fill-the-slot");

	ok = 1;
	for (i = 0; i < n; i++) {
		if (ops[i].num <= 0 || ops[i].num >= XCUDA_OP_MAX ||
		    ops[i].args > XCUDA_REQ_INLINE ||
		    ops[i].res > XCUDA_RSP_INLINE)
			ok = 0;
		for (j = 0; j < i; j++)
			if (ops[i].num == ops[j].num)
				ok = 0;
	}
	CHECK(ok, "every-command-fits-and-has-a-unique-number");

	CHECK(xcuda_extent_ok(0, 0, 0), "extent-empty-at-0");
	CHECK(xcuda_extent_ok(0, 4096, 4096), "extent-whole-arena");
	CHECK(xcuda_extent_ok(4096, 0, 4096), "extent-empty-at-end");
	CHECK(!xcuda_extent_ok(4097, 0, 4096), "extent-past-end");
	CHECK(!xcuda_extent_ok(1, 4096, 4096), "extent-one-past");
	CHECK(!xcuda_extent_ok(UINT64_MAX, 2, 4096), "extent-wraps");
	CHECK(!xcuda_extent_ok(2, UINT64_MAX, 4096), "extent-huge-length");

	/* FNV-1a 64 reference values. */
	CHECK_EQ(xcuda_fnv1a64(0, "", 0), 0xcbf29ce484222325ull,
		 "fnv1a64-empty");
	CHECK_EQ(xcuda_fnv1a64(0, "a", 1), 0xaf63dc4c8601ec8cull,
		 "fnv1a64-a");
	CHECK(xcuda_fnv1a64(1, "a", 1) != xcuda_fnv1a64(0, "a", 1),
	      "fnv1a64-seed-changes-it");
	return check_summary();
}
