// SPDX-License-Identifier: MIT
/*
 * cuRAND in the worker (spec/curand.calls): the real libcurand.so.10,
 * loaded at run time from where cuBLAS is (XCUDA_MATH_LIBS), so that
 * xcudad starts without it.  Every call but the tables' is generated;
 * what is here is the lookup, the tables, and what a session leaves
 * behind.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "ops.h"

static void *xd_curand_lib;
static pthread_once_t xd_curand_once = PTHREAD_ONCE_INIT;

static void xd_curand_open(void)
{
	xd_curand_lib = xd_math_open("libcurand.so.10");
}

void *xd_curand_sym(const char *name)
{
	pthread_once(&xd_curand_once, xd_curand_open);
	return xd_curand_lib ? dlsym(xd_curand_lib, name) : NULL;
}

void xd_curand_destroy(curandGenerator_t g)
{
	__typeof__(&curandDestroyGenerator) fn = XD_SYM(xd_curand_sym,
							curandDestroyGenerator);

	if (fn)
		fn(g);
}

void xd_curand_dist_destroy(curandDiscreteDistribution_t d)
{
	__typeof__(&curandDestroyDistribution) fn =
		XD_SYM(xd_curand_sym, curandDestroyDistribution);

	if (fn)
		fn(d);
}

/* Dimensions of each table of the library (curand.h: "20,000"). */
#define XD_CURAND_DIMS	20000ull

/* Where the library keeps table @table of @set, and its size. */
static int xd_curand_table(uint32_t table, uint32_t set, const void **p,
			   uint64_t *size)
{
	__typeof__(&curandGetDirectionVectors32) dv32 =
		XD_SYM(xd_curand_sym, curandGetDirectionVectors32);
	__typeof__(&curandGetDirectionVectors64) dv64 =
		XD_SYM(xd_curand_sym, curandGetDirectionVectors64);
	__typeof__(&curandGetScrambleConstants32) sc32 =
		XD_SYM(xd_curand_sym, curandGetScrambleConstants32);
	__typeof__(&curandGetScrambleConstants64) sc64 =
		XD_SYM(xd_curand_sym, curandGetScrambleConstants64);

	if (table > 3 || (table >= 2 && set))
		return CURAND_STATUS_OUT_OF_RANGE;
	if (!dv32 || !dv64 || !sc32 || !sc64)
		return CURAND_STATUS_INITIALIZATION_FAILED;
	switch (table) {
	case 0:
		*size = XD_CURAND_DIMS * sizeof(curandDirectionVectors32_t);
		return dv32((curandDirectionVectors32_t **)p,
			    (curandDirectionVectorSet_t)set);
	case 1:
		*size = XD_CURAND_DIMS * sizeof(curandDirectionVectors64_t);
		return dv64((curandDirectionVectors64_t **)p,
			    (curandDirectionVectorSet_t)set);
	case 2:
		*size = XD_CURAND_DIMS * sizeof(unsigned int);
		return sc32((unsigned int **)p);
	default:
		*size = XD_CURAND_DIMS * sizeof(unsigned long long);
		return sc64((unsigned long long **)p);
	}
}

int xd_op_curand_get_table(struct xd_session *s,
			   const struct xcuda_curand_get_table_args *a,
			   struct xcuda_curand_get_table_res *r,
			   struct xd_call *call)
{
	const void *p = NULL;
	uint64_t size = 0;
	int err;

	(void)call;
	err = xd_curand_table(a->table, a->set, &p, &size);
	if (err)
		return err;
	if (!p)
		return CURAND_STATUS_INTERNAL_ERROR;
	if (a->offset > size || a->buf.len > size - a->offset)
		return CURAND_STATUS_OUT_OF_RANGE;
	if (a->buf.len)
		xd_arena_put(s, &a->buf, (const uint8_t *)p + a->offset);
	r->size = size;
	return 0;
}
