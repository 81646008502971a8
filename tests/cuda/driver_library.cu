/* SPDX-License-Identifier: MIT */
/*
 * The driver's libraries and kernels (cuLibrary*, cuKernel*), and
 * modules loaded with JIT options: a library loaded from a fatbinary
 * file and from memory, its kernels counted, enumerated, named and
 * looked up, their parameters and attributes; a CUkernel launched as it
 * is, as its function in the context, and by the runtime; a global
 * variable; cuModuleLoadDataEx of PTX with tuning options and both logs,
 * and of PTX that does not compile, whose error log is printed.  Errors:
 * a kernel that is not there, an image that is none.  The kernels are
 * driver_kernels.cu, built beside this program as .fatbin and .ptx.
 */
#include "common/xct.h"
#include "common/xct_drv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 2048
#define LOG 8192

static char info[LOG], error[LOG];

/* Runs scale(p, s, N) through @f and checks the result. */
static void run_scale(CUfunction f, CUdeviceptr p, float s, float *want,
		      const char *how)
{
	static float h[N];
	int n = N, bad = 0;
	void *args[] = { &p, &s, &n };

	CKD(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	CKD(cuCtxSynchronize());
	CKD(cuMemcpyDtoH(h, p, sizeof(h)));
	for (int i = 0; i < N; i++) {
		want[i] *= s;
		bad += h[i] != want[i];
	}
	printf("scale %s: %s\n", how, bad ? "wrong" : "right");
	if (bad)
		xct_drv_failures++;
}

static void kernels(CUlibrary lib)
{
	static const CUfunction_attribute attrs[] = {
		CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
		CU_FUNC_ATTRIBUTE_NUM_REGS,
		CU_FUNC_ATTRIBUTE_BINARY_VERSION,
		CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
	};
	static float want[N];
	CUkernel ks[8], k;
	CUfunction f;
	CUlibrary owner;
	CUdeviceptr p;
	unsigned int n;
	const char *name;
	size_t off, size;
	int v;

	CKD(cuLibraryGetKernelCount(&n, lib));
	printf("kernels: %u\n", n);
	CKD(cuLibraryEnumerateKernels(ks, n < 8 ? n : 8, lib));
	for (unsigned int i = 0; i < n && i < 8; i++) {
		CKD(cuKernelGetName(&name, ks[i]));
		printf("  %s\n", name);
	}
	CKD(cuLibraryGetKernel(&k, lib, "scale"));
	CKD(cuKernelGetLibrary(&owner, k));
	xct_drv_expect(owner == lib, "the kernel's library is the library");
	for (size_t i = 0; cuKernelGetParamInfo(k, i, &off, &size) ==
	     CUDA_SUCCESS; i++)
		printf("scale parameter %zu: offset %zu size %zu\n", i, off,
		       size);
	SHOWD(cuKernelSetAttribute(
		CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 << 10, k,
		0));
	SHOWD(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, 0));
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		CKD(cuKernelGetAttribute(&v, attrs[i], k, 0));
		printf("scale attribute %d: %d\n", (int)attrs[i], v);
	}

	CKD(cuMemAlloc(&p, N * sizeof(float)));
	for (int i = 0; i < N; i++)
		want[i] = (float)(i % 31);
	CKD(cuMemcpyHtoD(p, want, N * sizeof(float)));
	run_scale((CUfunction)k, p, 2.0f, want, "as a CUkernel");
	CKD(cuKernelGetFunction(&f, k));
	run_scale(f, p, 0.5f, want, "as its function");
	{
		/* The runtime launches the same kernel. */
		float s = 4.0f;
		int nn = N;
		void *args[] = { &p, &s, &nn };
		static float h[N];
		int bad = 0;

		CK(cudaLaunchKernel((const void *)k, dim3(N / 256), dim3(256),
				    args, 0, 0));
		CK(cudaDeviceSynchronize());
		CKD(cuMemcpyDtoH(h, p, sizeof(h)));
		for (int i = 0; i < N; i++)
			bad += h[i] != want[i] * 4.0f;
		xct_drv_expect(!bad, "the runtime launches the CUkernel");
	}
	CKD(cuMemFree(p));
	SHOWD(cuLibraryGetKernel(&k, lib, "no_such_kernel"));
	SHOWD(cuKernelGetFunction(NULL, ks[0]));
}

static void globals(CUlibrary lib)
{
	CUdeviceptr d;
	size_t bytes;
	int v = 0;

	CKD(cuLibraryGetGlobal(&d, &bytes, lib, "counter"));
	printf("counter: %zu bytes\n", bytes);
	CKD(cuMemsetD32(d, 41, 1));
	CKD(cuMemcpyDtoH(&v, d, sizeof(v)));
	printf("counter reads %d\n", v);
	SHOWD(cuLibraryGetGlobal(&d, &bytes, lib, "no_such_variable"));
}

/* PTX with options and logs, and PTX that does not compile. */
static void load_ex(const char *ptx)
{
	CUjit_option opt[6] = {
		CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
		CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
		CU_JIT_LOG_VERBOSE, CU_JIT_OPTIMIZATION_LEVEL,
	};
	void *val[6] = {
		info, (void *)(uintptr_t)LOG, error, (void *)(uintptr_t)LOG,
		(void *)(uintptr_t)1, (void *)(uintptr_t)2,
	};
	static const char bad[] = ".version 8.0\n.target sm_90\nnot ptx;\n";
	CUmodule m;
	CUfunction f;

	CKD(cuModuleLoadDataEx(&m, ptx, 6, opt, val));
	xct_drv_expect((size_t)(uintptr_t)val[1] > strlen(info) &&
		       (size_t)(uintptr_t)val[1] <= LOG,
		       "the information log's size option says what it holds");
	/* The compiler's timings aside. */
	printf("info log:\n");
	for (char *l = strtok(info, "\n"); l; l = strtok(NULL, "\n"))
		if (!strstr(l, "Compile time"))
			printf("%s\n", l);
	printf("error log (size option %zu): %s\n",
	       (size_t)(uintptr_t)val[3], error);
	CKD(cuModuleGetFunction(&f, m, "vadd"));
	{
		CUfunctionLoadingState ls;
		unsigned int count;
		size_t smem;

		CKD(cuModuleGetFunctionCount(&count, m));
		printf("module functions: %u\n", count);
		CKD(cuFuncIsLoaded(&ls, f));
		printf("vadd loaded: %d\n", (int)ls);
		CKD(cuFuncLoad(f));
		CKD(cuFuncIsLoaded(&ls, f));
		printf("vadd loaded after cuFuncLoad: %d\n", (int)ls);
		CKD(cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, 2, 256));
		printf("dynamic shared memory for 2 blocks of 256: %zu\n",
		       smem);
	}
	CKD(cuModuleUnload(m));
	val[1] = (void *)(uintptr_t)LOG;
	val[3] = (void *)(uintptr_t)LOG;
	SHOWD(cuModuleLoadDataEx(&m, bad, 6, opt, val));
	printf("error log (size option %zu):\n%s\n",
	       (size_t)(uintptr_t)val[3], error);
}

int main(int argc, char **argv)
{
	char fatbin[4096], ptxpath[4096];
	CUdevice dev;
	CUcontext ctx;
	CUlibrary lib, lib2;
	char *image, *ptx;
	size_t len;

	(void)argc;
	snprintf(fatbin, sizeof(fatbin), "%s.fatbin", argv[0]);
	snprintf(ptxpath, sizeof(ptxpath), "%s.ptx", argv[0]);
	/* Without a GPU this is where it ends. */
	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));

	CKD(cuLibraryLoadFromFile(&lib, fatbin, NULL, NULL, 0, NULL, NULL, 0));
	kernels(lib);
	globals(lib);
	CKD(cuLibraryUnload(lib));

	image = xct_slurp(fatbin, &len);
	ptx = xct_slurp(ptxpath, NULL);
	if (!image || !ptx) {
		printf("FAILED: cannot read %s or %s\n", fatbin, ptxpath);
		return 1;
	}
	CKD(cuLibraryLoadData(&lib2, image, NULL, NULL, 0, NULL, NULL, 0));
	kernels(lib2);
	CKD(cuLibraryUnload(lib2));
	SHOWD(cuLibraryLoadData(&lib2, "not an image", NULL, NULL, 0, NULL,
				NULL, 0));
	load_ex(ptx);
	free(image);
	free(ptx);

	CKD(cuDevicePrimaryCtxRelease(dev));
	printf("%s: %d failures\n", xct_drv_failures ? "FAILED" : "PASSED",
	       xct_drv_failures);
	return xct_drv_failures ? 1 : 0;
}
