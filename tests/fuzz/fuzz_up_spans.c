// SPDX-License-Identifier: MIT
/*
 * The upstream link's spans: xd_up_spans() (dom0-daemon/up_spans.c), the
 * pure function of a request's bytes by which the relay and the GPU
 * server decide which arena bytes travel with a request and with its
 * answer.  The relay runs it on every request a guest sends and then
 * copies the spans out of the arena; the server copies them in.
 *
 * Input: arena size (u64), then the request as it lies in a ring slot
 * (never validated first: the relay lists spans before the worker on the
 * other host has looked at the request).
 *
 * What the spans must be: at most XD_UP_SPANS_MAX of them, each well
 * formed and wholly inside the arena, row by row, without wrapping.
 */
#include "dom0-daemon/up_spans.h"
#include "fuzz.h"

/* The span's last byte plus one, computed apart; 0 if it would wrap. */
static uint64_t span_end(const struct xd_up_span *sp)
{
	uint64_t reach, end;

	if (__builtin_mul_overflow(sp->rows - 1, sp->pitch, &reach) ||
	    __builtin_add_overflow(reach, sp->width, &reach) ||
	    __builtin_add_overflow(sp->off, reach, &end))
		return 0;
	return end;
}

static void check_spans(const struct xcuda_request *req, uint64_t arena_size,
			int which)
{
	struct xd_up_span sp[XD_UP_SPANS_MAX + 1];
	uint64_t end;
	unsigned int n, i;

	memset(sp, 0xa5, sizeof(sp));
	n = xd_up_spans(req, arena_size, which, sp);
	FZ_CHECK(n <= XD_UP_SPANS_MAX);
	for (i = 0; i < n; i++) {
		FZ_CHECK(xd_up_span_ok(&sp[i], arena_size));
		FZ_CHECK(sp[i].width && sp[i].rows);
		FZ_CHECK(sp[i].rows == 1 || sp[i].pitch >= sp[i].width);
		end = span_end(&sp[i]);
		FZ_CHECK(end && end <= arena_size);
		FZ_CHECK(xd_up_span_reach(&sp[i]) == end - sp[i].off);
		FZ_CHECK(xd_up_span_bytes(&sp[i]) <= arena_size);
	}
	/* Nothing past the count is written. */
	FZ_CHECK(sp[XD_UP_SPANS_MAX].off == 0xa5a5a5a5a5a5a5a5ull);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct xcuda_request req;
	uint64_t arena_size = fz_u64(&in);

	fz_take(&in, &req, sizeof(req));
	check_spans(&req, arena_size, XD_UP_IN);
	check_spans(&req, arena_size, XD_UP_OUT);
	return 0;
}
