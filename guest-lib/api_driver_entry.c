// SPDX-License-Identifier: MIT
/*
 * cudaGetDriverEntryPoint*: the driver API functions of xcuda's own
 * libcuda.so.1 (guest-lib/driver), through its cuGetProcAddress, as the
 * runtime answers the driver's.  The library is found as the runtime
 * finds the driver: libcuda.so.1, next to this library or on the
 * program's search path.
 */
#include <dlfcn.h>
#include <pthread.h>

#include <cuda.h>

#include "guest.h"

typedef CUresult (*xc_getproc_t)(const char *, void **, int, cuuint64_t,
				 CUdriverProcAddressQueryResult *);

static xc_getproc_t xc_getproc;
static pthread_once_t xc_getproc_once = PTHREAD_ONCE_INIT;

static void xc_getproc_find(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);

	if (lib)
		xc_getproc = (xc_getproc_t)dlsym(lib, "cuGetProcAddress_v2");
}

static cudaError_t xc_entry_point(const char *symbol, void **funcPtr,
				  unsigned int version,
				  unsigned long long flags,
				  enum cudaDriverEntryPointQueryResult *status,
				  int per_thread)
{
	CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	CUresult r;

	if (!symbol || !funcPtr ||
	    (flags & ~(unsigned long long)(cudaEnableLegacyStream |
					   cudaEnablePerThreadDefaultStream)))
		return xc_ret(cudaErrorInvalidValue);
	/* The per-thread variants ask for the per-thread stream's calls. */
	if (per_thread && flags == cudaEnableDefault)
		flags = cudaEnablePerThreadDefaultStream;
	pthread_once(&xc_getproc_once, xc_getproc_find);
	*funcPtr = NULL;
	r = xc_getproc ? xc_getproc(symbol, funcPtr, (int)version, flags, &q) :
			 CUDA_ERROR_NOT_FOUND;
	if (status)
		*status = q == CU_GET_PROC_ADDRESS_SUCCESS ?
				  cudaDriverEntryPointSuccess :
			  q == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ?
				  cudaDriverEntryPointVersionNotSufficent :
				  cudaDriverEntryPointSymbolNotFound;
	if (r == CUDA_SUCCESS && *funcPtr)
		return cudaSuccess;
	*funcPtr = NULL;
	/* Asked with a status, an unknown symbol is an answer. */
	return status ? cudaSuccess : xc_ret(cudaErrorSymbolNotFound);
}

cudaError_t cudaGetDriverEntryPointByVersion(
	const char *symbol, void **funcPtr, unsigned int cudaVersion,
	unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return xc_entry_point(symbol, funcPtr, cudaVersion, flags,
			      driverStatus, 0);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
	const char *symbol, void **funcPtr, unsigned int cudaVersion,
	unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
	const char *symbol, void **funcPtr, unsigned int cudaVersion,
	unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return xc_entry_point(symbol, funcPtr, cudaVersion, flags,
			      driverStatus, 1);
}

/* The runtime's own version: the functions as of CUDA 13.0. */
cudaError_t cudaGetDriverEntryPoint(
	const char *symbol, void **funcPtr, unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return xc_entry_point(symbol, funcPtr, CUDART_VERSION, flags,
			      driverStatus, 0);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(
	const char *symbol, void **funcPtr, unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaGetDriverEntryPoint_ptsz(
	const char *symbol, void **funcPtr, unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return xc_entry_point(symbol, funcPtr, CUDART_VERSION, flags,
			      driverStatus, 1);
}
