// SPDX-License-Identifier: MIT
/* The wire format: slot sizes, ring geometry, the table and extents. */
#include <stddef.h>
#include <string.h>

#include "xcuda/proto.h"
#include "xcuda/hash.h"
#include "check.h"

int main(void)
{
	static const struct { int num; size_t args, res; } ops[] = {
#define XCUDA_CALL(name, num, flags, a, r, data) \
	{ num, sizeof(struct xcuda_##a), sizeof(struct xcuda_##r) },
#include "xcuda/calls.def"
#undef XCUDA_CALL
	};
	size_t i, j;
	int ok;

	CHECK(sizeof(struct xcuda_req_hdr) == 32, "request-header-32-bytes");
	CHECK(sizeof(struct xcuda_request) == 256, "request-slot-256-bytes");
	CHECK(sizeof(struct xcuda_response) == 64, "response-slot-64-bytes");
	CHECK(sizeof(union xcuda_sring_entry) == 256, "ring-entry-256-bytes");
	CHECK(XCUDA_RING_SIZE(0) == 8, "ring-order-0-has-8-slots");
	CHECK(XCUDA_RING_SIZE(4) == 128, "ring-order-4-has-128-slots");
	CHECK(sizeof(struct xcuda_launch_args) == XCUDA_REQ_INLINE,
	      "launch-args-fill-the-slot");

	ok = 1;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
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
	CHECK(xcuda_fnv1a64(0, "", 0) == 0xcbf29ce484222325ull,
	      "fnv1a64-empty");
	CHECK(xcuda_fnv1a64(0, "a", 1) == 0xaf63dc4c8601ec8cull,
	      "fnv1a64-a");
	CHECK(xcuda_fnv1a64(1, "a", 1) != xcuda_fnv1a64(0, "a", 1),
	      "fnv1a64-seed-changes-it");
	return check_summary();
}
