/* SPDX-License-Identifier: MIT */
/*
 * The driver's JIT options on the wire, for its linker (DRV_LINK_*) and
 * for modules loaded with options (DRV_MODULE_LOAD_EX): the options a
 * guest forwards, and the logs that come back (docs/protocol.md, "JIT
 * options and logs").  The program's log buffers stay in the guest; the
 * worker compiles with buffers of its own, of the sizes the program gave,
 * at most XCUDA_JIT_LOG_MAX each.
 */
#ifndef XCUDA_JIT_H
#define XCUDA_JIT_H

#include <stdint.h>

#include <cuda.h>

#define XCUDA_JIT_MAX_OPTS	32		/* options of one call */
#define XCUDA_JIT_LOG_MAX	(64u << 10)	/* bytes of one log */

/* One option: a CUjit_option and its integer value. */
struct xcuda_jit_opt {
	uint32_t option;
	uint32_t rsvd;		/* zero */
	uint64_t value;		/* a log buffer's: zero */
};

/*
 * The head of a logs extent; the information log follows, in as many
 * bytes as its size option gave, then the error log.
 */
struct xcuda_jit_logs {
	uint64_t fill[2];	/* what the driver wrote in the size options */
	uint32_t len[2];	/* bytes of each log, without a NUL */
};

_Static_assert(sizeof(struct xcuda_jit_opt) == 16, "xcuda_jit_opt");
_Static_assert(sizeof(struct xcuda_jit_logs) == 24, "xcuda_jit_logs");

/*
 * Whether @option's value is an integer that travels as it is: both ends
 * check.  The logs are handled apart; options whose values are the
 * program's pointers (symbol tables) or are written back (the wall time,
 * the threads per block the compiler chose) are not forwarded.
 */
static inline int xcuda_jit_opt_int(uint32_t option)
{
	switch (option) {
	case CU_JIT_MAX_REGISTERS:
	case CU_JIT_OPTIMIZATION_LEVEL:
	case CU_JIT_TARGET_FROM_CUCONTEXT:
	case CU_JIT_TARGET:
	case CU_JIT_FALLBACK_STRATEGY:
	case CU_JIT_GENERATE_DEBUG_INFO:
	case CU_JIT_LOG_VERBOSE:
	case CU_JIT_GENERATE_LINE_INFO:
	case CU_JIT_CACHE_MODE:
	case CU_JIT_NEW_SM3X_OPT:
	case CU_JIT_FAST_COMPILE:
	case CU_JIT_LTO:
	case CU_JIT_FTZ:
	case CU_JIT_PREC_DIV:
	case CU_JIT_PREC_SQRT:
	case CU_JIT_FMA:
	case CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES:
	case CU_JIT_POSITION_INDEPENDENT_CODE:
	case CU_JIT_MIN_CTA_PER_SM:
	case CU_JIT_MAX_THREADS_PER_BLOCK:
	case CU_JIT_OVERRIDE_DIRECTIVE_VALUES:
	case CU_JIT_SPLIT_COMPILE:
		return 1;
	default:
		return 0;
	}
}

#endif /* XCUDA_JIT_H */
