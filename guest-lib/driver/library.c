// SPDX-License-Identifier: MIT
/*
 * The driver's libraries and kernels (cuLibrary*, cuKernel*).  A
 * CUlibrary is a cudaLibrary_t and a CUkernel a cudaKernel_t, as
 * natively, so most of these are the runtime's calls of the same name;
 * what only the driver has (a kernel's function in a context, its
 * attributes per device) is forwarded (DRV_KERNEL_*).
 */
#include <cuda_runtime_api.h>

#include "driver.h"

/*
 * Before a library load: the session, and the options it takes.  None
 * of the JIT's, which would tune a compilation the runtime's upload does
 * not make; of the library's, that the image may be kept (the guest
 * keeps a copy of its own anyway), not the host's function and data
 * tables.
 */
static CUresult xc_lib_options(unsigned int njit, CUlibraryOption *opts,
			       unsigned int nopts)
{
	unsigned int i;
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (njit)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (nopts && !opts)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < nopts; i++)
		if (opts[i] != CU_LIBRARY_BINARY_IS_PRESERVED)
			return CUDA_ERROR_NOT_SUPPORTED;
	return CUDA_SUCCESS;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
			   CUjit_option *jitOptions, void **jitOptionsValues,
			   unsigned int numJitOptions,
			   CUlibraryOption *libraryOptions,
			   void **libraryOptionValues,
			   unsigned int numLibraryOptions)
{
	CUresult err = xc_lib_options(numJitOptions, libraryOptions,
				      numLibraryOptions);

	(void)jitOptions;
	(void)jitOptionsValues;
	(void)libraryOptionValues;
	if (err)
		return err;
	return XC_DRV_RT(cudaLibraryLoadData((cudaLibrary_t *)library, code,
					     NULL, NULL, 0, NULL, NULL, 0));
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
			       CUjit_option *jitOptions,
			       void **jitOptionsValues,
			       unsigned int numJitOptions,
			       CUlibraryOption *libraryOptions,
			       void **libraryOptionValues,
			       unsigned int numLibraryOptions)
{
	CUresult err = xc_lib_options(numJitOptions, libraryOptions,
				      numLibraryOptions);

	(void)jitOptions;
	(void)jitOptionsValues;
	(void)libraryOptionValues;
	if (err)
		return err;
	return XC_DRV_RT(cudaLibraryLoadFromFile((cudaLibrary_t *)library,
						 fileName, NULL, NULL, 0,
						 NULL, NULL, 0));
}

CUresult cuLibraryUnload(CUlibrary library)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaLibraryUnload((cudaLibrary_t)library));
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
			    const char *name)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaLibraryGetKernel((cudaKernel_t *)pKernel,
					      (cudaLibrary_t)library, name));
}

CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaLibraryGetKernelCount(count,
						   (cudaLibrary_t)lib));
}

CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels,
				   CUlibrary lib)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	return XC_DRV_RT(cudaLibraryEnumerateKernels((cudaKernel_t *)kernels,
						     numKernels,
						     (cudaLibrary_t)lib));
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes,
			    CUlibrary library, const char *name)
{
	void *p = NULL;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	err = XC_DRV_RT(cudaLibraryGetGlobal(dptr ? &p : NULL, bytes,
					     (cudaLibrary_t)library, name));
	if (!err && dptr)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return (CUresult)err;
}

CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes,
			     CUlibrary library, const char *name)
{
	void *p = NULL;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	err = XC_DRV_RT(cudaLibraryGetManaged(dptr ? &p : NULL, bytes,
					      (cudaLibrary_t)library, name));
	if (!err && dptr)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return (CUresult)err;
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (!hfunc || !xc_func_by_kernel(hfunc))
		return name ? CUDA_ERROR_INVALID_HANDLE :
			      CUDA_ERROR_INVALID_VALUE;
	return XC_DRV_RT(cudaFuncGetName(name, hfunc));
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
			      size_t *paramOffset, size_t *paramSize)
{
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (!kernel || !xc_func_by_kernel(kernel))
		return CUDA_ERROR_INVALID_HANDLE;
	return XC_DRV_RT(cudaFuncGetParamInfo(kernel, paramIndex, paramOffset,
					      paramSize));
}

/* The library of a kernel of the program's libraries. */
CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
	struct xc_func *f;
	int err = xc_drv_enter(0);

	if (err)
		return (CUresult)err;
	if (!pLib)
		return CUDA_ERROR_INVALID_VALUE;
	f = kernel ? xc_func_by_kernel(kernel) : NULL;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	/* The program's fatbinaries are no library it was given. */
	if (!xc_lib_get(f->mod))
		return CUDA_ERROR_NOT_SUPPORTED;
	*pLib = (CUlibrary)f->mod;
	return CUDA_SUCCESS;
}
