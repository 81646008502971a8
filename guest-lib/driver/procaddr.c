// SPDX-License-Identifier: MIT
/*
 * cuGetProcAddress: the function of this library that a name means at a
 * CUDA version, as the driver's does.  The versions come from
 * cudaTypedefs.h (tools/gen-driver-tables.sh); the function is found in
 * this library itself, a stub for the calls xcuda does not forward yet.
 */
#include <dlfcn.h>
#include <string.h>

#include "driver.h"

struct xc_cu_proc {
	const char *name;
	int version;
	const char *symbol;
	int per_thread;
};

static const struct xc_cu_proc xc_cu_procs[] = {
#include "cu_procs.inc"
};

#define XC_NPROC (sizeof(xc_cu_procs) / sizeof(xc_cu_procs[0]))

/* This library, as dlsym() finds its symbols. */
static void *xc_self(void)
{
	static void *self;
	Dl_info info;

	if (!self && dladdr((void *)xc_self, &info) && info.dli_fname)
		self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	return self;
}

/*
 * The symbol @name means at @version: the newest of its versions at or
 * below it, the per-thread one when asked for and there is one.  NULL,
 * with *@known set when @name has versions, none of them old enough.
 */
static const char *xc_proc_symbol(const char *name, int version, int pt,
				  int *known)
{
	const struct xc_cu_proc *best = NULL, *best_pt = NULL;
	unsigned int i;

	*known = 0;
	for (i = 0; i < XC_NPROC; i++) {
		const struct xc_cu_proc *p = &xc_cu_procs[i];

		if (strcmp(p->name, name))
			continue;
		*known = 1;
		if (p->version > version)
			continue;
		if (p->per_thread) {
			if (!best_pt || p->version > best_pt->version)
				best_pt = p;
		} else if (!best || p->version > best->version) {
			best = p;
		}
	}
	if (pt && best_pt && (!best || best_pt->version >= best->version))
		return best_pt->symbol;
	return best ? best->symbol : NULL;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
			     cuuint64_t flags,
			     CUdriverProcAddressQueryResult *symbolStatus)
{
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
	const char *sym;
	void *fn = NULL, *self = xc_self();
	int known, pt;

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
	sym = xc_proc_symbol(symbol, cudaVersion, pt, &known);
	if (sym && self)
		fn = dlsym(self, sym);
	else if (!known && self && !strncmp(symbol, "cu", 2))
		/* A name the headers give no versions: itself. */
		fn = dlsym(self, symbol);
	if (!fn)
		st = known && !sym ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
				     CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	*pfn = fn;
	if (symbolStatus)
		*symbolStatus = st;
	/* A missing symbol is an answer (NULL), as the driver's is. */
	return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
			  cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
