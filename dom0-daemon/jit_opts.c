// SPDX-License-Identifier: MIT
/*
 * The driver's JIT options in the worker: only options whose values are
 * integers, and log buffers of the worker's own of at most
 * XCUDA_JIT_LOG_MAX bytes, ever reach the driver.
 */
#include <stdlib.h>
#include <string.h>

#include "jit_opts.h"
#include "ops.h"

static int xd_jit_opts(struct xd_jit *j, const struct xcuda_jit_opt *o,
		       unsigned int n)
{
	int buf[2] = { -1, -1 };
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		if (o[i].rsvd)
			return CUDA_ERROR_INVALID_VALUE;
		j->opt[i] = (CUjit_option)o[i].option;
		switch (o[i].option) {
		case CU_JIT_INFO_LOG_BUFFER:
		case CU_JIT_ERROR_LOG_BUFFER:
			if (o[i].value)
				return CUDA_ERROR_INVALID_VALUE;
			buf[o[i].option == CU_JIT_ERROR_LOG_BUFFER] = (int)i;
			break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			if (o[i].value > XCUDA_JIT_LOG_MAX)
				return CUDA_ERROR_INVALID_VALUE;
			k = o[i].option == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
			j->cap[k] = (uint32_t)o[i].value;
			j->fill[k] = (int)i;
			j->val[i] = (void *)(uintptr_t)o[i].value;
			break;
		default:
			if (!xcuda_jit_opt_int(o[i].option))
				return CUDA_ERROR_INVALID_VALUE;
			j->val[i] = (void *)(uintptr_t)o[i].value;
		}
	}
	/* The driver writes a log up to its size option: none, nothing. */
	for (k = 0; k < 2; k++) {
		if (buf[k] < 0)
			continue;
		j->log[k] = calloc(1, j->cap[k] + 1);
		if (!j->log[k])
			return CUDA_ERROR_OUT_OF_MEMORY;
		j->val[buf[k]] = j->log[k];
	}
	j->n = n;
	return 0;
}

int xd_jit_get(struct xd_session *s, struct xd_jit *j, uint32_t nopts,
	       const struct xcuda_extent *e)
{
	struct xcuda_jit_opt *o;
	int err;

	memset(j, 0, sizeof(*j));
	j->fill[0] = j->fill[1] = -1;
	if (nopts > XCUDA_JIT_MAX_OPTS || e->len != nopts * sizeof(*o))
		return CUDA_ERROR_INVALID_VALUE;
	if (!nopts)
		return 0;
	o = (struct xcuda_jit_opt *)xd_arena_copy(s, e, e->len);
	if (!o)
		return CUDA_ERROR_OUT_OF_MEMORY;
	err = xd_jit_opts(j, o, nopts);
	free(o);
	return err;
}

void xd_jit_free(struct xd_jit *j)
{
	free(j->log[0]);
	free(j->log[1]);
	j->log[0] = j->log[1] = NULL;
}

int xd_jit_put_logs(struct xd_session *s, const struct xd_jit *j,
		    const struct xcuda_extent *e)
{
	struct xcuda_jit_logs h;
	uint64_t size = sizeof(h) + (uint64_t)j->cap[0] + j->cap[1];
	uint32_t k, off = sizeof(h);
	uint8_t *buf;

	if (e->len != size)
		return CUDA_ERROR_INVALID_VALUE;
	buf = calloc(1, size);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(&h, 0, sizeof(h));
	for (k = 0; k < 2; k++) {
		if (j->log[k]) {
			h.len[k] = (uint32_t)strnlen(j->log[k], j->cap[k]);
			memcpy(buf + off, j->log[k], h.len[k]);
		}
		/* What the driver wrote back into the size option. */
		if (j->fill[k] >= 0)
			h.fill[k] = (uintptr_t)j->val[j->fill[k]];
		off += j->cap[k];
	}
	memcpy(buf, &h, sizeof(h));
	xd_arena_put(s, e, buf);
	free(buf);
	return 0;
}
