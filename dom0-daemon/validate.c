// SPDX-License-Identifier: MIT
/*
 * The header checks that every request passes before its handler runs,
 * against the command table generated from the call description.
 */
#include <cuda_runtime_api.h>

#include "validate.h"

const char *xd_op_name(uint16_t op)
{
	const struct xcuda_call_info *d = xcuda_call(op);

	return d ? d->name : "?";
}

uint32_t xd_result_size(uint16_t op)
{
	const struct xcuda_call_info *d = xcuda_call(op);

	return d ? d->res_size : 0;
}

static int xd_extent_valid(const struct xcuda_req_hdr *h, uint8_t data,
			   uint64_t arena_size)
{
	int empty = !h->data_off && !h->data_len;

	switch (data) {
	case XCUDA_DATA_NONE:
		return empty;
	case XCUDA_DATA_IN:
	case XCUDA_DATA_OUT:
	case XCUDA_DATA_INOUT:
		return h->data_len &&
		       xcuda_extent_ok(h->data_off, h->data_len, arena_size);
	case XCUDA_DATA_OPT_IN:
		/* An empty extent must not point anywhere either. */
		return empty ||
		       (h->data_len &&
			xcuda_extent_ok(h->data_off, h->data_len, arena_size));
	}
	return 0;
}

int xd_validate(const struct xcuda_request *req, uint32_t session,
		uint64_t arena_size, int opened)
{
	const struct xcuda_req_hdr *h = &req->hdr;
	const struct xcuda_call_info *d = xcuda_call(h->op);

	if (!d)
		return cudaErrorNotSupported;
	if (!opened && h->op != XCUDA_OP_OPEN)
		return cudaErrorInitializationError;
	if (h->session != session || h->rsvd)
		return cudaErrorInvalidValue;
	if (h->flags & ~XCUDA_RF_POSTED)
		return cudaErrorInvalidValue;
	if ((h->flags & XCUDA_RF_POSTED) && !(d->flags & XCUDA_CF_POSTABLE))
		return cudaErrorInvalidValue;
	if (h->len < d->min_len || h->len > d->args_size)
		return cudaErrorInvalidValue;
	if (!xd_extent_valid(h, d->data, arena_size))
		return cudaErrorInvalidValue;
	return 0;
}
