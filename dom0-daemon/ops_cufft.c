// SPDX-License-Identifier: MIT
/*
 * cuFFT in the worker (spec/cufft.calls): the real libcufft.so.12, loaded
 * at run time from where cuBLAS is (XCUDA_MATH_LIBS), so that xcudad
 * starts without it.  Every call is generated; what is here is the
 * lookup and what a session leaves behind.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "ops.h"

static void *xd_cufft_lib;
static pthread_once_t xd_cufft_once = PTHREAD_ONCE_INIT;

static void xd_cufft_open(void)
{
	xd_cufft_lib = xd_math_open("libcufft.so.12");
}

void *xd_cufft_sym(const char *name)
{
	pthread_once(&xd_cufft_once, xd_cufft_open);
	return xd_cufft_lib ? dlsym(xd_cufft_lib, name) : NULL;
}

void xd_cufft_destroy(cufftHandle plan)
{
	__typeof__(&cufftDestroy) fn = XD_SYM(xd_cufft_sym, cufftDestroy);

	if (fn)
		fn(plan);
}
