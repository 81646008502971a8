// SPDX-License-Identifier: MIT
/*
 * xcuda's libcuda.so.1 on its own, without a GPU or a daemon: what it
 * answers in the guest.  cuGetProcAddress picks the symbol a name means
 * at a version (the newest at or below it, per-thread variants when
 * asked, a status for a name too new or unknown); error names come from
 * cuda.h; the driver version is known before cuInit; calls before cuInit
 * answer CUDA_ERROR_NOT_INITIALIZED; stubs answer
 * CUDA_ERROR_NOT_SUPPORTED.  The library is the build's (../lib beside
 * this program), loaded with dlopen as frameworks load it.
 */
#include <dlfcn.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"
#include "lib_alone.h"

static void *lib;

static void *sym(const char *name)
{
	return dlsym(lib, name);
}

typedef CUresult (*getproc_t)(const char *, void **, int, cuuint64_t,
			      CUdriverProcAddressQueryResult *);

static void test_procaddr(void)
{
	getproc_t gp = (getproc_t)sym("cuGetProcAddress_v2");
	CUdriverProcAddressQueryResult q;
	void *p;

	REQUIRE_MSG(gp, "cuGetProcAddress_v2", "not exported");
	CHECK_EQ(gp("cuMemAlloc", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q),
		 CUDA_SUCCESS, "cuMemAlloc at 13.0");
	CHECK(p && p == sym("cuMemAlloc_v2") &&
	      q == CU_GET_PROC_ADDRESS_SUCCESS,
	      "cuMemAlloc at 13.0 is cuMemAlloc_v2");
	gp("cuMemAlloc", &p, 2000, CU_GET_PROC_ADDRESS_DEFAULT, &q);
	CHECK(p && p == sym("cuMemAlloc"), "cuMemAlloc at 2.0 is cuMemAlloc");
	gp("cuMemcpyHtoD", &p, 13000,
	   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q);
	CHECK(p && p == sym("cuMemcpyHtoD_v2_ptds"),
	      "the per-thread variant when asked");
	gp("cuStreamGetCaptureInfo", &p, 11030, CU_GET_PROC_ADDRESS_DEFAULT,
	   &q);
	CHECK(p && p == sym("cuStreamGetCaptureInfo_v2"),
	      "the newest version at or below the one asked");
	CHECK_EQ(gp("cuStreamGetCaptureInfo", &p, 9000,
		    CU_GET_PROC_ADDRESS_DEFAULT, &q), CUDA_SUCCESS,
		 "too old a version: an answer, not an error");
	CHECK(!p && q == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
	      "too old a version: NULL, version not sufficient");
	gp("cuNoSuchFunction", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q);
	CHECK(!p && q == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
	      "an unknown name: NULL, not found");
	CHECK_EQ(gp(NULL, &p, 13000, 0, &q), CUDA_ERROR_INVALID_VALUE,
		 "no name");
}

static void test_errors(void)
{
	CUresult (*name)(CUresult, const char **) =
		(CUresult (*)(CUresult, const char **))sym("cuGetErrorName");
	CUresult (*text)(CUresult, const char **) =
		(CUresult (*)(CUresult, const char **))sym("cuGetErrorString");
	const char *s = "x";

	REQUIRE_MSG(name && text, "error calls", "not exported");
	CHECK(!name(CUDA_ERROR_INVALID_VALUE, &s) &&
	      !strcmp(s, "CUDA_ERROR_INVALID_VALUE"), "a name from cuda.h");
	CHECK(!name(CUDA_ERROR_NOT_SUPPORTED, &s) &&
	      !strcmp(s, "CUDA_ERROR_NOT_SUPPORTED"), "another");
	CHECK(name((CUresult)9999, &s) == CUDA_ERROR_INVALID_VALUE && !s,
	      "an unknown code: no name");
	CHECK(text((CUresult)9999, &s) == CUDA_ERROR_INVALID_VALUE && !s,
	      "an unknown code: no text");
	/* Without a session, the runtime's text of the same code. */
	CHECK(!text(CUDA_ERROR_INVALID_VALUE, &s) && s &&
	      !strcmp(s, "invalid argument"), "a text without a session");
}

static void test_before_init(void)
{
	CUresult (*ver)(int *) =
		(CUresult (*)(int *))sym("cuDriverGetVersion");
	CUresult (*count)(int *) =
		(CUresult (*)(int *))sym("cuDeviceGetCount");
	CUresult (*alloc)(CUdeviceptr *, size_t) =
		(CUresult (*)(CUdeviceptr *, size_t))sym("cuMemAlloc_v2");
	int (*stub)(void) = (int (*)(void))sym("cuGraphCreate");
	CUdeviceptr d;
	int v = 0, n = 5;

	CHECK(!ver(&v) && v >= 13000, "the version before cuInit");
	CHECK_EQ(count(&n), CUDA_ERROR_NOT_INITIALIZED,
		 "a device query before cuInit");
	CHECK_EQ(alloc(&d, 16), CUDA_ERROR_NOT_INITIALIZED,
		 "an allocation before cuInit");
	CHECK_EQ(stub(), CUDA_ERROR_NOT_SUPPORTED,
		 "a stub answers CUDA_ERROR_NOT_SUPPORTED");
}

int main(void)
{
	lib = lib_alone("libcuda.so.1");
	test_procaddr();
	test_errors();
	test_before_init();
	return check_summary();
}
