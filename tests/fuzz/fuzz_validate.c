// SPDX-License-Identifier: MIT
/*
 * The request validator: xd_validate() (dom0-daemon/validate.c) over the
 * command table generated from spec/, then the generated dispatch's check
 * of each arena extent among a command's arguments (xd_extent_ok() in
 * worker.c), as xd_handle() runs them on the private copy of a ring slot.
 *
 * Input: arena size (u64), the session's id (u32), whether OPEN has
 * succeeded (u8), then the request as it lies in a ring slot.
 *
 * What an accepted request must be: a known command, of the session, in
 * its argument bounds and within the 224 bytes of a slot, with the data
 * extent its command's data use asks for, inside the arena; every
 * argument extent the dispatch accepts lies inside the arena too.
 */
#include <cuda_runtime_api.h>

#include "dom0-daemon/ops.h"
#include "dom0-daemon/validate.h"
#include "fuzz.h"

/* Whether [off, off + len) lies in an arena of @size, computed apart. */
static int inside(uint64_t off, uint64_t len, uint64_t size)
{
	uint64_t end;

	return !__builtin_add_overflow(off, len, &end) && end <= size;
}

static void check_accepted(struct xcuda_request *req, uint64_t arena_size)
{
	const struct xcuda_req_hdr *h = &req->hdr;
	const struct xcuda_call_info *d = xcuda_call(h->op);
	struct xd_chan chan = { .arena_size = arena_size };
	struct xd_session s = { .chan = &chan };
	struct xcuda_extent e;
	unsigned int i;

	FZ_CHECK(d && d->name);
	FZ_CHECK(h->len >= d->min_len && h->len <= d->args_size);
	FZ_CHECK(h->len <= sizeof(req->args));
	FZ_CHECK(d->res_size <= sizeof(((struct xcuda_response *)0)->out));
	FZ_CHECK(!(h->flags & ~XCUDA_RF_POSTED));
	switch (d->data) {
	case XCUDA_DATA_NONE:
		FZ_CHECK(!h->data_off && !h->data_len);
		break;
	case XCUDA_DATA_OPT_IN:
		if (!h->data_len) {
			FZ_CHECK(!h->data_off);
			break;
		}
		/* fall through */
	default:
		FZ_CHECK(h->data_len);
		FZ_CHECK(inside(h->data_off, h->data_len, arena_size));
	}
	FZ_CHECK(strcmp(xd_op_name(h->op), d->name) == 0);
	FZ_CHECK(xd_result_size(h->op) == d->res_size);

	/* The worker's view: zeros past the declared bytes (xd_handle). */
	memset(req->args + h->len, 0, sizeof(req->args) - h->len);
	for (i = 0; i < d->nr_ext; i++) {
		FZ_CHECK(d->ext[i].offset + sizeof(e) <= d->args_size);
		memcpy(&e, req->args + d->ext[i].offset, sizeof(e));
		if (!xd_extent_ok(&s, &e))
			continue;
		FZ_CHECK(e.len ? inside(e.off, e.len, arena_size) : !e.off);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct xcuda_request req;
	uint64_t arena_size = fz_u64(&in);
	uint32_t session = fz_u32(&in);
	int opened = fz_u8(&in) & 1, err;

	fz_take(&in, &req, sizeof(req));
	err = xd_validate(&req, session, arena_size, opened);
	if (!xcuda_call(req.hdr.op)) {
		FZ_CHECK(err == cudaErrorNotSupported);
		FZ_CHECK(!strcmp(xd_op_name(req.hdr.op), "?"));
		FZ_CHECK(!xd_result_size(req.hdr.op));
		return 0;
	}
	if (err) {
		FZ_CHECK(err == cudaErrorInvalidValue ||
			 err == cudaErrorInitializationError);
		return 0;
	}
	FZ_CHECK(req.hdr.session == session && !req.hdr.rsvd);
	FZ_CHECK(opened || req.hdr.op == XCUDA_OP_OPEN);
	check_accepted(&req, arena_size);
	return 0;
}
