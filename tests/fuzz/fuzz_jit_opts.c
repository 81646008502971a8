// SPDX-License-Identifier: MIT
/*
 * The driver's JIT options: xd_jit_get() (dom0-daemon/jit_opts.c), which
 * the worker runs on the option records a guest puts in its arena for
 * cuModuleLoadDataEx and cuLinkCreate, and xd_jit_put_logs(), which
 * writes the logs back.  The options are only checked and copied here:
 * CUDA is not called.
 *
 * Input: the option count (u32), the options' extent (off, len: u32
 * each), the logs' extent (u32 offset; its length is what the options
 * ask for), then the arena's first bytes.
 *
 * What must hold: options that pass are at most XCUDA_JIT_MAX_OPTS, each
 * an integer option or a log buffer of the worker's own, no larger than
 * XCUDA_JIT_LOG_MAX; the logs go only where their extent says.
 */
#include <cuda.h>

#include "dom0-daemon/jit_opts.h"
#include "dom0-daemon/ops.h"
#include "fuzz.h"

#define ARENA	(16u << 10)

static uint8_t arena[ARENA + 64];
static struct xd_chan chan = { .arena = arena, .arena_size = ARENA,
			       .session = 1 };
static struct xd_session sess = { .chan = &chan, .id = 1, .opened = 1 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint32_t nopts = fz_u32(&in);
	struct xcuda_extent e = { .off = fz_u32(&in), .len = fz_u32(&in) };
	struct xcuda_extent logs = { .off = fz_u32(&in) };
	struct xd_jit j;
	uint64_t need;
	unsigned int i, k;
	int err;

	fz_take(&in, arena, in.n < ARENA ? in.n : ARENA);
	/* A guard after the arena: nothing may write it. */
	memset(arena + ARENA, 0x5a, 64);
	/* The generated dispatch checked the extent against the arena. */
	if (!xd_extent_ok(&sess, &e))
		return 0;
	err = xd_jit_get(&sess, &j, nopts, &e);
	if (err) {
		FZ_CHECK(err == CUDA_ERROR_INVALID_VALUE ||
			 err == CUDA_ERROR_OUT_OF_MEMORY);
		xd_jit_free(&j);
		return 0;
	}
	FZ_CHECK(j.n == nopts && j.n <= XCUDA_JIT_MAX_OPTS);
	for (k = 0; k < 2; k++) {
		FZ_CHECK(j.cap[k] <= XCUDA_JIT_LOG_MAX);
		FZ_CHECK(j.fill[k] < (int)j.n);
	}
	for (i = 0; i < j.n; i++) {
		switch (j.opt[i]) {
		case CU_JIT_INFO_LOG_BUFFER:
		case CU_JIT_ERROR_LOG_BUFFER:
			k = j.opt[i] == CU_JIT_ERROR_LOG_BUFFER;
			/* The last such option is the buffer the driver fills. */
			FZ_CHECK(j.val[i] == j.log[k] || j.val[i] == NULL);
			break;
		default:
			FZ_CHECK(xcuda_jit_opt_int(j.opt[i]) ||
				 j.opt[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ||
				 j.opt[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
		}
	}
	/* As if the driver had written its logs whole. */
	for (k = 0; k < 2; k++)
		if (j.log[k])
			memset(j.log[k], 'a' + k, j.cap[k]);
	need = sizeof(struct xcuda_jit_logs) + (uint64_t)j.cap[0] + j.cap[1];
	logs.len = (uint32_t)need;
	if (xd_extent_ok(&sess, &logs))
		FZ_CHECK(!xd_jit_put_logs(&sess, &j, &logs));
	logs.len++;
	if (xd_extent_ok(&sess, &logs))
		FZ_CHECK(xd_jit_put_logs(&sess, &j, &logs) ==
			 CUDA_ERROR_INVALID_VALUE);
	for (i = 0; i < 64; i++)
		FZ_CHECK(arena[ARENA + i] == 0x5a);
	xd_jit_free(&j);
	return 0;
}
