// SPDX-License-Identifier: MIT
/*
 * The driver's JIT linker in the worker (spec/cuda-driver.calls,
 * DRV_LINK_*): a link state of the real driver's, with its options and
 * logs (jit_opts.c), which the driver writes until the link is
 * destroyed, and private copies of its inputs, whose own headers must
 * lie within what was sent.
 */
#include <stdlib.h>
#include <string.h>

#include "common/image.h"
#include "jit_opts.h"
#include "ops.h"

struct xd_link {
	CUlinkState state;
	struct xd_jit jit;
	uint8_t **inputs;	/* the copies the driver was given */
	size_t ninputs;
	uint64_t bytes;		/* their total */
	void *cubin;		/* the driver's, once complete */
	size_t size;
};

/* A session's link goes; its table holds our record, not the driver's. */
void xd_drv_link_destroy(CUlinkState state)
{
	__typeof__(&cuLinkDestroy) destroy = XD_DRV(cuLinkDestroy);
	struct xd_link *l = (struct xd_link *)state;
	size_t i;

	if (destroy && l->state)
		destroy(l->state);
	for (i = 0; i < l->ninputs; i++)
		free(l->inputs[i]);
	free(l->inputs);
	xd_jit_free(&l->jit);
	free(l);
}

int xd_op_drv_link_create(struct xd_session *s,
			  const struct xcuda_drv_link_create_args *a,
			  struct xcuda_drv_link_create_res *r,
			  struct xd_call *call)
{
	__typeof__(&cuLinkCreate_v2) create = XD_DRV(cuLinkCreate_v2);
	struct xd_link *l;
	int err;

	(void)call;
	if (a->rsvd)
		return CUDA_ERROR_INVALID_VALUE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	err = xd_jit_get(s, &l->jit, a->nopts, &a->opts);
	if (!err && !create)
		err = CUDA_ERROR_NOT_INITIALIZED;
	if (!err)
		err = create(l->jit.n, l->jit.opt, l->jit.val, &l->state);
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
			struct xd_call *call)
{
	struct xd_link *l = xd_object_get(&s->objects[XD_H_CULINK], a->link);

	(void)call;
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a->rsvd)
		return CUDA_ERROR_INVALID_VALUE;
	return xd_jit_put_logs(s, &l->jit, &a->logs);
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
