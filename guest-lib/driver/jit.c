// SPDX-License-Identifier: MIT
/*
 * The driver's JIT options in the guest (include/xcuda/jit.h), for the
 * linker and for modules loaded with options: the options that travel by
 * value, and the program's log buffers, which stay here and are filled
 * from what the worker's driver wrote in its own.
 */
#include <string.h>

#include "driver.h"

CUresult xc_jit_opts(struct xc_jit *j, unsigned int n, CUjit_option *options,
		     void **values)
{
	unsigned int i, k;
	uintptr_t v;

	memset(j, 0, sizeof(*j));
	if (n && (!options || !values))
		return CUDA_ERROR_INVALID_VALUE;
	if (n > XCUDA_JIT_MAX_OPTS)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < n; i++) {
		v = (uintptr_t)values[i];
		j->opt[i].option = (uint32_t)options[i];
		switch (options[i]) {
		case CU_JIT_INFO_LOG_BUFFER:
		case CU_JIT_ERROR_LOG_BUFFER:
			k = options[i] == CU_JIT_ERROR_LOG_BUFFER;
			j->log[k] = (char *)values[i];
			j->want = 1;
			break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			k = options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
			j->opt[i].value = v < XCUDA_JIT_LOG_MAX ? v :
				XCUDA_JIT_LOG_MAX;
			j->cap[k] = (uint32_t)j->opt[i].value;
			j->fill[k] = &values[i];
			j->want = 1;
			break;
		default:
			if (!xcuda_jit_opt_int(options[i]))
				return CUDA_ERROR_NOT_SUPPORTED;
			j->opt[i].value = v;
		}
	}
	j->n = n;
	return CUDA_SUCCESS;
}

uint64_t xc_jit_logs_size(const struct xc_jit *j)
{
	if (!j->want)
		return 0;
	return sizeof(struct xcuda_jit_logs) + (uint64_t)j->cap[0] + j->cap[1];
}

void xc_jit_logs_put(const struct xc_jit *j, const uint8_t *buf)
{
	struct xcuda_jit_logs h;
	uint32_t k, len, off = sizeof(h);

	memcpy(&h, buf, sizeof(h));
	for (k = 0; k < 2; k++) {
		/* The worker's lengths are checked as any answer of its. */
		len = h.len[k];
		if (j->log[k] && j->cap[k]) {
			if (len >= j->cap[k])
				len = j->cap[k] - 1;
			memcpy(j->log[k], buf + off, len);
			j->log[k][len] = '\0';
		}
		if (j->fill[k])
			*j->fill[k] = (void *)(uintptr_t)(
				h.fill[k] < j->cap[k] ? h.fill[k] : j->cap[k]);
		off += j->cap[k];
	}
}
