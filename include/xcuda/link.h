/* SPDX-License-Identifier: MIT */
/*
 * The driver's JIT linker (cuLink*) on the wire: the options a guest
 * forwards to cuLinkCreate, and the logs that come back with each step
 * (docs/protocol.md, "The driver's linker").  The program's log buffers
 * stay in the guest; the worker links with buffers of its own, of the
 * sizes the program gave, at most XCUDA_LINK_LOG_MAX each.
 */
#ifndef XCUDA_LINK_H
#define XCUDA_LINK_H

#include <stdint.h>

#include <cuda.h>

#define XCUDA_LINK_MAX_OPTS	32		/* options of one link */
#define XCUDA_LINK_LOG_MAX	(64u << 10)	/* bytes of one log */

/* One cuLinkCreate option: a CUjit_option and its integer value. */
struct xcuda_link_opt {
	uint32_t option;
	uint32_t rsvd;		/* zero */
	uint64_t value;		/* a log buffer's: zero */
};

/*
 * Whether @option's value is an integer that travels as it is: both ends
 * check.  The logs are handled apart; options whose values are the
 * program's pointers (symbol tables) or are written back (the wall time,
 * the threads per block the compiler chose) are not forwarded.
 */
static inline int xcuda_link_opt_int(uint32_t option)
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

#endif /* XCUDA_LINK_H */
