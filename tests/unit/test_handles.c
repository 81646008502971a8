// SPDX-License-Identifier: MIT
/* The per-session handle tables: numbering, limits and stale handles. */
#include <stdio.h>
#include <stdlib.h>

#include "xcuda/proto.h"
#include "dom0-daemon/handles.h"
#include "check.h"

static int dummy[XCUDA_MAX_HANDLES + 1];

int main(void)
{
	struct xd_htab t = { 0 };
	struct xd_hent *e;
	cudaStream_t st;
	uint32_t h, first = 0, last = 0, n, bad = 0, again;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK_MSG(!xd_htab_get(&t, 0) && !xd_htab_get(&t, XCUDA_HANDLE_FIRST) &&
		  !xd_htab_next(&t, 0), "empty table knows no handle",
		  "lookup in an empty table succeeded");

	e = xd_htab_add(&t, &dummy[0], &first);
	CHECK_MSG(e && first == XCUDA_HANDLE_FIRST &&
		  xd_htab_get(&t, first) == e && e->ptr == &dummy[0],
		  "first handle", "got %u", first);

	for (n = 1; n < XCUDA_MAX_HANDLES; n++) {
		e = xd_htab_add(&t, &dummy[n], &h);
		if (!e || h < XCUDA_HANDLE_FIRST ||
		    h >= XCUDA_HANDLE_FIRST + XCUDA_MAX_HANDLES ||
		    xd_htab_get(&t, h)->ptr != &dummy[n])
			bad++;
		last = h;
	}
	CHECK_MSG(!bad && t.live == XCUDA_MAX_HANDLES, "fill to the limit",
		  "%u bad adds, %u live", bad, t.live);
	CHECK_MSG(!xd_htab_add(&t, &dummy[n], &h), "add past the limit fails",
		  "handle %u handed out", h);

	xd_htab_del(&t, last);
	CHECK_MSG(!xd_htab_get(&t, last), "freed handle is unknown",
		  "lookup of %u succeeded", last);
	xd_htab_del(&t, last);
	CHECK_MSG(t.live == XCUDA_MAX_HANDLES - 1, "double free is harmless",
		  "%u live", t.live);
	e = xd_htab_add(&t, &dummy[0], &again);
	CHECK_MSG(e && again == last, "a slot frees up at the limit",
		  "got %u, want %u", e ? again : 0, last);

	for (n = 0, h = 0; (h = xd_htab_next(&t, h));)
		n++;
	CHECK_MSG(n == t.live, "iteration sees every live handle",
		  "%u of %u", n, t.live);

	xd_htab_free(&t);
	/* Reuse: a freed handle comes back only after the others. */
	xd_htab_add(&t, &dummy[0], &first);
	xd_htab_del(&t, first);
	xd_htab_add(&t, &dummy[1], &h);
	CHECK_MSG(h != first, "freed handle is not reused at once",
		  "%u reused", h);
	CHECK_MSG(!xd_htab_get(&t, 0) && !xd_htab_get(&t, 15) &&
		  !xd_htab_get(&t, 0xffffffffu) &&
		  !xd_htab_get(&t, XCUDA_HANDLE_FIRST + XCUDA_MAX_HANDLES),
		  "out of range handles are unknown", "a lookup succeeded");

	err = xd_stream_lookup(&t, 0, &st);
	CHECK_MSG(!err && st == NULL, "stream 0 is the legacy default",
		  "err %d", err);
	err = xd_stream_lookup(&t, XCUDA_STREAM_LEGACY, &st);
	CHECK_MSG(!err && st == cudaStreamLegacy,
		  "stream 1 is cudaStreamLegacy", "err %d", err);
	err = xd_stream_lookup(&t, XCUDA_STREAM_PER_THREAD, &st);
	CHECK_MSG(!err && st == cudaStreamPerThread,
		  "stream 2 is cudaStreamPerThread", "err %d", err);
	err = xd_stream_lookup(&t, 3, &st);
	CHECK_EQ(err, cudaErrorInvalidResourceHandle, "stream 3 is invalid");
	err = xd_stream_lookup(&t, first, &st);
	CHECK_EQ(err, cudaErrorInvalidResourceHandle,
		 "freed stream is invalid");
	err = xd_stream_lookup(&t, h, &st);
	CHECK_MSG(!err && st == (cudaStream_t)&dummy[1], "live stream resolves",
		  "err %d", err);
	xd_htab_free(&t);

	/* Objects: a borrowed one keeps its handle, an owned one does not. */
	{
		uint32_t b1, b2, o1, o2;
		void *p = NULL;

		err = xd_object_add(&t, &dummy[2], 0, 1, &b1) ||
		      xd_object_add(&t, &dummy[2], 0, 1, &b2) ||
		      xd_object_add(&t, &dummy[3], 0, 0, &o1) ||
		      xd_object_add(&t, &dummy[3], 0, 0, &o2);
		CHECK_MSG(!err && b1 == b2 && o1 != o2 && o1 != b1,
			  "borrowed objects keep one handle",
			  "err %d handles %u %u %u %u", err, b1, b2, o1, o2);
		CHECK_MSG(xd_htab_get(&t, b1)->borrowed &&
			  !xd_htab_get(&t, o1)->borrowed,
			  "ownership is recorded", "flags wrong");
		err = xd_object_add(&t, &dummy[3], 0, 1, &b2);
		CHECK_MSG(!err && b2 == o1 && !xd_htab_get(&t, o1)->borrowed,
			  "an own object answered again keeps its handle",
			  "err %d handle %u (own %u)", err, b2, o1);
		p = xd_object_get(&t, o2);
		CHECK_MSG(p == &dummy[3], "object resolves", "got %p", p);
		xd_htab_del(&t, o2);
		CHECK(!xd_object_get(&t, o2), "dropped object is unknown");
		CHECK(!xd_object_get(&t, 0), "object 0 is unknown");
		xd_htab_free(&t);
	}

	return check_summary();
}
