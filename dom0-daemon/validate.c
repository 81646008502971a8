// SPDX-License-Identifier: MIT
/*
 * The command table, built from calls.def, and the header checks that
 * every request passes before its handler runs.
 */
#include <cuda_runtime_api.h>

#include "validate.h"

/* Fixed layouts must fit the slots they travel in. */
#define XCUDA_CALL(name, num, flags, args, res, data)			\
	_Static_assert(sizeof(struct xcuda_##args) <= XCUDA_REQ_INLINE,	\
		       #name ": arguments do not fit a request");	\
	_Static_assert(sizeof(struct xcuda_##res) <= XCUDA_RSP_INLINE,	\
		       #name ": result does not fit a response");	\
	_Static_assert(!((flags) & XCUDA_CF_VARARGS) ||			\
		       XCUDA_OP_##name == XCUDA_OP_LAUNCH,		\
		       #name ": only LAUNCH has variable arguments");
#include "xcuda/calls.def"
#undef XCUDA_CALL

/* The shortest LAUNCH: everything up to the inline argument bytes. */
#define XD_LAUNCH_MIN	offsetof(struct xcuda_launch_args, args)

const struct xd_call_desc xd_calls[XCUDA_OP_MAX] = {
#define XCUDA_CALL(nm, num, fl, ar, rs, dt)				\
	[XCUDA_OP_##nm] = {						\
		.name = #nm,						\
		.flags = (fl),						\
		.args_size = sizeof(struct xcuda_##ar),			\
		.min_len = ((fl) & XCUDA_CF_VARARGS) ? XD_LAUNCH_MIN :	\
			   sizeof(struct xcuda_##ar),			\
		.res_size = sizeof(struct xcuda_##rs),			\
		.data = (dt),						\
	},
#include "xcuda/calls.def"
#undef XCUDA_CALL
};

const struct xd_call_desc *xd_call_lookup(uint16_t op)
{
	if (op >= XCUDA_OP_MAX || !xd_calls[op].name)
		return NULL;
	return &xd_calls[op];
}

const char *xd_op_name(uint16_t op)
{
	const struct xd_call_desc *d = xd_call_lookup(op);

	return d ? d->name : "?";
}

uint32_t xd_result_size(uint16_t op)
{
	const struct xd_call_desc *d = xd_call_lookup(op);

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
	const struct xd_call_desc *d = xd_call_lookup(h->op);

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
