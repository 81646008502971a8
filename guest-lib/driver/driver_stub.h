/* SPDX-License-Identifier: MIT */
/*
 * What the generated stubs of libcuda.so.1 (tools/gen-driver-stubs.sh)
 * expand to: a function without a prototype of cuda.h's, answering
 * CUDA_ERROR_NOT_SUPPORTED and saying so once.  Kept apart from cuda.h,
 * whose macros rename the functions the stubs stand for.
 */
#ifndef XCUDA_DRIVER_STUB_H
#define XCUDA_DRIVER_STUB_H

#include <stdatomic.h>

#define XC_DRV_NOT_SUPPORTED	801	/* CUDA_ERROR_NOT_SUPPORTED */

void xc_drv_stub_note(atomic_flag *seen, const char *name);

#define XC_DRV_STUB(name)						\
	int name(void);							\
	int name(void)							\
	{								\
		static atomic_flag seen_ = ATOMIC_FLAG_INIT;		\
									\
		xc_drv_stub_note(&seen_, #name);			\
		return XC_DRV_NOT_SUPPORTED;				\
	}

#endif /* XCUDA_DRIVER_STUB_H */
