// SPDX-License-Identifier: MIT
/*
 * The driver's JIT linker in the worker (spec/cuda-driver.calls,
 * DRV_LINK_*): a link state of the real driver's, with log buffers and
 * option arrays of the worker's own, which the driver writes until the
 * link is destroyed, and private copies of its inputs.  What a guest
 * sends is checked before the driver reads it: options known to be
 * integers, logs of bounded size, inputs whose own headers lie within
 * the copy.
 */
#include <stdlib.h>
#include <string.h>

#include "common/image.h"
#include "xcuda/link.h"
#include "ops.h"

enum { XD_LOG_INFO, XD_LOG_ERROR, XD_NLOGS };

struct xd_link {
	CUlinkState state;
	unsigned int nopts;
	CUjit_option opt[XCUDA_LINK_MAX_OPTS];
	void *val[XCUDA_LINK_MAX_OPTS];
	char *log[XD_NLOGS];
	uint32_t cap[XD_NLOGS];
	int fill[XD_NLOGS];	/* each log's size option, or -1 */
	uint8_t **inputs;	/* the copies the driver was given */
	size_t ninputs;
	uint64_t bytes;		/* their total */
	void *cubin;		/* the driver's, once complete */
	size_t size;
};

static void xd_link_free(struct xd_link *l)
{
	size_t i;

	for (i = 0; i < l->ninputs; i++)
		free(l->inputs[i]);
	free(l->inputs);
	free(l->log[XD_LOG_INFO]);
	free(l->log[XD_LOG_ERROR]);
	free(l);
}

/* A session's link goes; its table holds our record, not the driver's. */
void xd_drv_link_destroy(CUlinkState state)
{
	__typeof__(&cuLinkDestroy) destroy = XD_DRV(cuLinkDestroy);
	struct xd_link *l = (struct xd_link *)state;

	if (destroy && l->state)
		destroy(l->state);
	xd_link_free(l);
}

/* The options the guest sent, into @l's arrays. */
static int xd_link_opts(struct xd_link *l, const struct xcuda_link_opt *o,
			unsigned int n)
{
	int buf[XD_NLOGS] = { -1, -1 };
	unsigned int i, k;

	l->fill[XD_LOG_INFO] = l->fill[XD_LOG_ERROR] = -1;
	for (i = 0; i < n; i++) {
		if (o[i].rsvd)
			return CUDA_ERROR_INVALID_VALUE;
		l->opt[i] = (CUjit_option)o[i].option;
		switch (o[i].option) {
		case CU_JIT_INFO_LOG_BUFFER:
		case CU_JIT_ERROR_LOG_BUFFER:
			if (o[i].value)
				return CUDA_ERROR_INVALID_VALUE;
			buf[o[i].option == CU_JIT_ERROR_LOG_BUFFER] = (int)i;
			break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			if (o[i].value > XCUDA_LINK_LOG_MAX)
				return CUDA_ERROR_INVALID_VALUE;
			k = o[i].option == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
			l->cap[k] = (uint32_t)o[i].value;
			l->fill[k] = (int)i;
			l->val[i] = (void *)(uintptr_t)o[i].value;
			break;
		default:
			if (!xcuda_link_opt_int(o[i].option))
				return CUDA_ERROR_INVALID_VALUE;
			l->val[i] = (void *)(uintptr_t)o[i].value;
		}
	}
	/* The driver writes a log up to its size option: none, nothing. */
	for (k = 0; k < XD_NLOGS; k++) {
		if (buf[k] < 0)
			continue;
		l->log[k] = calloc(1, l->cap[k] + 1);
		if (!l->log[k])
			return CUDA_ERROR_OUT_OF_MEMORY;
		l->val[buf[k]] = l->log[k];
	}
	l->nopts = n;
	return 0;
}

int xd_op_drv_link_create(struct xd_session *s,
			  const struct xcuda_drv_link_create_args *a,
			  struct xcuda_drv_link_create_res *r,
			  struct xd_call *call)
{
	__typeof__(&cuLinkCreate_v2) create = XD_DRV(cuLinkCreate_v2);
	struct xcuda_link_opt *o = NULL;
	struct xd_link *l;
	int err;

	(void)call;
	if (a->rsvd || a->nopts > XCUDA_LINK_MAX_OPTS ||
	    a->opts.len != a->nopts * sizeof(*o))
		return CUDA_ERROR_INVALID_VALUE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (a->nopts) {
		o = (struct xcuda_link_opt *)xd_arena_copy(s, &a->opts,
							   a->opts.len);
		if (!o) {
			free(l);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	err = xd_link_opts(l, o, a->nopts);
	free(o);
	if (!err && !create)
		err = CUDA_ERROR_NOT_INITIALIZED;
	if (!err)
		err = create(l->nopts, l->opt, l->val, &l->state);
	if (!err && xd_object_add(&s->objects[XD_H_CULINK], l, s->device, 0,
				  &r->link))
		err = CUDA_ERROR_OUT_OF_MEMORY;
	if (err)
		xd_drv_link_destroy((CUlinkState)l);
	return err;
}

/* An input's own headers lie within its @len bytes (and the NUL after). */
static int xd_link_input_ok(uint32_t type, const uint8_t *p, uint64_t len)
{
	static const char ar[] = "!<arch>\n";

	switch (type) {
	case CU_JIT_INPUT_PTX:
	case CU_JIT_INPUT_NVVM:
		return 1;
	case CU_JIT_INPUT_CUBIN:
	case CU_JIT_INPUT_FATBINARY:
	case CU_JIT_INPUT_OBJECT:
		return xcuda_image_size(p, len + 1) != 0;
	case CU_JIT_INPUT_LIBRARY:
		return len >= sizeof(ar) - 1 && !memcmp(p, ar, sizeof(ar) - 1);
	default:
		return 0;
	}
}

int xd_op_drv_link_add_data(struct xd_session *s,
			    const struct xcuda_drv_link_add_data_args *a,
			    struct xd_call *call)
{
	__typeof__(&cuLinkAddData_v2) add = XD_DRV(cuLinkAddData_v2);
	struct xd_link *l = xd_object_get(&s->objects[XD_H_CULINK], a->link);
	uint8_t *data, **grown;
	char *name;
	int err;

	(void)call;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!a->data.len || a->data.len > XCUDA_MAX_MODULE - l->bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (!add)
		return CUDA_ERROR_NOT_INITIALIZED;
	name = (char *)xd_arena_copy(s, &a->name, XCUDA_NAME_MAX);
	if (!name || !memchr(name, 0, a->name.len)) {
		free(name);
		return CUDA_ERROR_INVALID_VALUE;
	}
	grown = realloc(l->inputs, (l->ninputs + 1) * sizeof(*grown));
	data = malloc((size_t)a->data.len + 1);
	if (grown)
		l->inputs = grown;
	if (!grown || !data) {
		free(data);
		free(name);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy(data, s->chan->arena + a->data.off, a->data.len);
	data[a->data.len] = 0;
	if (!xd_link_input_ok(a->type, data, a->data.len)) {
		free(data);
		free(name);
		return a->type > CU_JIT_INPUT_NVVM ? CUDA_ERROR_INVALID_VALUE :
						     CUDA_ERROR_INVALID_IMAGE;
	}
	/* Kept: the driver may read an input until the link is done. */
	l->inputs[l->ninputs++] = data;
	l->bytes += a->data.len;
	err = add(l->state, (CUjitInputType)a->type, data, a->data.len, name,
		  0, NULL, NULL);
	free(name);
	return err;
}

int xd_op_drv_link_complete(struct xd_session *s,
			    const struct xcuda_drv_link_complete_args *a,
			    struct xcuda_drv_link_complete_res *r,
			    struct xd_call *call)
{
	__typeof__(&cuLinkComplete) complete = XD_DRV(cuLinkComplete);
	struct xd_link *l = xd_object_get(&s->objects[XD_H_CULINK], a->link);
	void *cubin = NULL;
	size_t size = 0;
	int err;

	(void)call;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->rsvd)
		return CUDA_ERROR_INVALID_VALUE;
	if (!complete)
		return CUDA_ERROR_NOT_INITIALIZED;
	err = complete(l->state, &cubin, &size);
	if (err)
		return err;
	l->cubin = cubin;
	l->size = size;
	r->size = size;
	return 0;
}

int xd_op_drv_link_cubin(struct xd_session *s,
			 const struct xcuda_drv_link_cubin_args *a,
			 struct xd_call *call)
{
	struct xd_link *l = xd_object_get(&s->objects[XD_H_CULINK], a->link);

	(void)call;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->rsvd || !l->cubin || a->offset > l->size ||
	    a->buf.len > l->size - a->offset)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->buf.len)
		xd_arena_put(s, &a->buf, (const uint8_t *)l->cubin + a->offset);
	return 0;
}

int xd_op_drv_link_logs(struct xd_session *s,
			const struct xcuda_drv_link_logs_args *a,
			struct xcuda_drv_link_logs_res *r, struct xd_call *call)
{
	struct xd_link *l = xd_object_get(&s->objects[XD_H_CULINK], a->link);
	uint32_t len[XD_NLOGS] = { 0, 0 }, k, off = 0;
	uint8_t *buf;

	(void)call;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->rsvd || a->logs.len != (uint64_t)l->cap[0] + l->cap[1])
		return CUDA_ERROR_INVALID_VALUE;
	buf = calloc(1, (size_t)a->logs.len + 1);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (k = 0; k < XD_NLOGS; k++) {
		if (l->log[k]) {
			len[k] = (uint32_t)strnlen(l->log[k], l->cap[k]);
			memcpy(buf + off, l->log[k], len[k]);
		}
		off += l->cap[k];
	}
	if (a->logs.len)
		xd_arena_put(s, &a->logs, buf);
	free(buf);
	r->info_len = len[XD_LOG_INFO];
	r->error_len = len[XD_LOG_ERROR];
	/* What the driver wrote back into the size options. */
	if (l->fill[XD_LOG_INFO] >= 0)
		r->info_fill = (uintptr_t)l->val[l->fill[XD_LOG_INFO]];
	if (l->fill[XD_LOG_ERROR] >= 0)
		r->error_fill = (uintptr_t)l->val[l->fill[XD_LOG_ERROR]];
	return 0;
}

int xd_op_drv_link_destroy(struct xd_session *s,
			   const struct xcuda_drv_link_destroy_args *a,
			   struct xd_call *call)
{
	struct xd_link *l = xd_object_get(&s->objects[XD_H_CULINK], a->link);

	(void)call;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->rsvd)
		return CUDA_ERROR_INVALID_VALUE;
	xd_htab_del(&s->objects[XD_H_CULINK], a->link);
	xd_drv_link_destroy((CUlinkState)l);
	return 0;
}
