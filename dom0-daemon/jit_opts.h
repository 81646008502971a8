/* SPDX-License-Identifier: MIT */
/*
 * The driver's JIT options in the worker (include/xcuda/jit.h): the
 * options a guest sent, checked, as the arrays the driver takes, with log
 * buffers of the worker's own, which the driver may write until the call
 * or link that took them is done.
 */
#ifndef XCUDAD_JIT_OPTS_H
#define XCUDAD_JIT_OPTS_H

#include <cuda.h>

#include "xcuda/jit.h"
#include "worker.h"

struct xd_jit {
	unsigned int n;
	CUjit_option opt[XCUDA_JIT_MAX_OPTS];
	void *val[XCUDA_JIT_MAX_OPTS];
	char *log[2];		/* information, error: or NULL */
	uint32_t cap[2];	/* their sizes as the options give them */
	int fill[2];		/* each log's size option, or -1 */
};

/*
 * @j from the @nopts option records at @e, copied once and checked: 0 or
 * a CUresult.  xd_jit_free() after, whatever the answer.
 */
int xd_jit_get(struct xd_session *s, struct xd_jit *j, uint32_t nopts,
	       const struct xcuda_extent *e);
void xd_jit_free(struct xd_jit *j);
/*
 * The logs into extent @e, a struct xcuda_jit_logs then each log in
 * its size: 0, or CUDA_ERROR_INVALID_VALUE for an extent of another
 * size.
 */
int xd_jit_put_logs(struct xd_session *s, const struct xd_jit *j,
		    const struct xcuda_extent *e);

#endif /* XCUDAD_JIT_OPTS_H */
