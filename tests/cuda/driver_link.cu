/* SPDX-License-Identifier: MIT */
/*
 * The driver's JIT linker (cuLink*) as CuPy and cuda-samples use it: PTX
 * with relocatable device code and a cubin linked into one module, with
 * the device runtime (libcudadevrt.a) for a kernel that launches a
 * kernel; the linked cubin loaded and run; the information and error
 * logs; and the linker's errors: PTX that does not compile, a cubin cut
 * short, a file that is not there, a device launch without the device
 * runtime, a link with nothing in it.  The inputs are driver_link/
 * kernels_a.cu and kernels_b.cu, built beside this program as .ptx and
 * .cubin.
 */
#include "common/xct_drv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 1000
#define LOG 8192

static char info[LOG], error[LOG];

/* A link with both logs; the options array lives as long as the link. */
struct link {
	CUlinkState st;
	CUjit_option opt[5];
	void *val[5];
};

static CUresult link_create(struct link *l, int verbose)
{
	l->opt[0] = CU_JIT_INFO_LOG_BUFFER;
	l->val[0] = info;
	l->opt[1] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES;
	l->val[1] = (void *)(uintptr_t)LOG;
	l->opt[2] = CU_JIT_ERROR_LOG_BUFFER;
	l->val[2] = error;
	l->opt[3] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
	l->val[3] = (void *)(uintptr_t)LOG;
	l->opt[4] = CU_JIT_LOG_VERBOSE;
	l->val[4] = (void *)(uintptr_t)verbose;
	memset(info, 0, sizeof(info));
	memset(error, 0, sizeof(error));
	return cuLinkCreate(5, l->opt, l->val, &l->st);
}

/* The error log, and what the driver wrote in its size option. */
static void show_error_log(const struct link *l)
{
	printf("error log (size option %zu):\n%s\n",
	       (size_t)(uintptr_t)l->val[3], error);
}

static void run_linked(const void *cubin)
{
	static float hx[N], hy[N];
	CUmodule mod;
	CUfunction axpy, parent;
	CUdeviceptr x, y, out;
	int n = N, bad = 0, hout[64];
	float a = 3.0f;
	void *args[] = { &y, &x, &a, &n };
	void *pargs[] = { &out };

	CKD(cuModuleLoadData(&mod, cubin));
	CKD(cuModuleGetFunction(&axpy, mod, "axpy_ext"));
	CKD(cuModuleGetFunction(&parent, mod, "parent"));
	for (int i = 0; i < N; i++) {
		hx[i] = (float)(i % 17);
		hy[i] = (float)i;
	}
	CKD(cuMemAlloc(&x, sizeof(hx)));
	CKD(cuMemAlloc(&y, sizeof(hy)));
	CKD(cuMemAlloc(&out, sizeof(hout)));
	CKD(cuMemcpyHtoD(x, hx, sizeof(hx)));
	CKD(cuMemcpyHtoD(y, hy, sizeof(hy)));
	CKD(cuLaunchKernel(axpy, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL,
			   args, NULL));
	CKD(cuLaunchKernel(parent, 1, 1, 1, 2, 1, 1, 0, NULL, pargs, NULL));
	CKD(cuCtxSynchronize());
	CKD(cuMemcpyDtoH(hy, y, sizeof(hy)));
	CKD(cuMemcpyDtoH(hout, out, sizeof(hout)));
	for (int i = 0; i < N; i++)
		bad += hy[i] != 3.0f * (2.0f * (float)(i % 17) + 0.5f) +
			       (float)i;
	xct_drv_expect(!bad, "the linked kernel calls the cubin's function");
	bad = 0;
	for (int i = 0; i < 64; i++)
		bad += hout[i] != (i / 32) * 32 + (i % 32) * 3;
	xct_drv_expect(!bad, "the linked kernel launches a kernel");
	CKD(cuMemFree(x));
	CKD(cuMemFree(y));
	CKD(cuMemFree(out));
	CKD(cuModuleUnload(mod));
}

int main(int argc, char **argv)
{
	char ptx[4096], cubin_path[4096];
	struct link l;
	CUdevice dev;
	CUcontext ctx;
	void *cubin;
	size_t size, blen;
	char *b;

	(void)argc;
	/*
	 * The files beside the program, by names relative to its directory:
	 * the driver's logs name them, and must not say where it is installed.
	 */
	b = strrchr(argv[0], '/');
	if (b) {
		*b = '\0';
		if (chdir(argv[0])) {
			perror(argv[0]);
			return 1;
		}
	}
	snprintf(ptx, sizeof(ptx), "%s_a.ptx", b ? b + 1 : argv[0]);
	snprintf(cubin_path, sizeof(cubin_path), "%s_b.cubin",
		 b ? b + 1 : argv[0]);
	/* Without a GPU this is where it ends. */
	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));

	/* PTX, a cubin and the device runtime, linked and run. */
	CKD(link_create(&l, 1));
	CKD(cuLinkAddFile(l.st, CU_JIT_INPUT_PTX, ptx, 0, NULL, NULL));
	CKD(cuLinkAddFile(l.st, CU_JIT_INPUT_CUBIN, cubin_path, 0, NULL,
			  NULL));
	CKD(cuLinkAddFile(l.st, CU_JIT_INPUT_LIBRARY, XCT_CUDADEVRT, 0, NULL,
			  NULL));
	CKD(cuLinkComplete(l.st, &cubin, &size));
	xct_drv_expect(size > 1024, "a cubin came out");
	xct_drv_expect(!memcmp(cubin, "\177ELF", 4), "it is an ELF image");
	xct_drv_expect(info[0] != 0, "the verbose linker wrote its log");
	xct_drv_expect((size_t)(uintptr_t)l.val[1] <= LOG,
		       "the information log's size is within its buffer");
	show_error_log(&l);
	run_linked(cubin);
	CKD(cuLinkDestroy(l.st));

	/* The same inputs from memory, the cubin as data. */
	b = xct_slurp(cubin_path, &blen);
	if (!b) {
		printf("FAILED: cannot read %s\n", cubin_path);
		return 1;
	}
	CKD(link_create(&l, 0));
	CKD(cuLinkAddFile(l.st, CU_JIT_INPUT_PTX, ptx, 0, NULL, NULL));
	CKD(cuLinkAddData(l.st, CU_JIT_INPUT_CUBIN, b, blen, "b.cubin", 0,
			  NULL, NULL));
	CKD(cuLinkAddFile(l.st, CU_JIT_INPUT_LIBRARY, XCT_CUDADEVRT, 0, NULL,
			  NULL));
	CKD(cuLinkComplete(l.st, &cubin, &size));
	run_linked(cubin);
	CKD(cuLinkDestroy(l.st));

	/* The linker's errors, and its error log. */
	CKD(link_create(&l, 0));
	SHOWD(cuLinkAddData(l.st, CU_JIT_INPUT_PTX,
			    (void *)".version 8.0\n.target sm_90\nnot ptx;\n",
			    38, "broken.ptx", 0, NULL, NULL));
	show_error_log(&l);
	SHOWD(cuLinkAddFile(l.st, CU_JIT_INPUT_PTX, "/nonexistent/a.ptx", 0,
			    NULL, NULL));
	CKD(cuLinkDestroy(l.st));

	CKD(link_create(&l, 0));
	SHOWD(cuLinkComplete(l.st, &cubin, &size));
	show_error_log(&l);
	CKD(cuLinkDestroy(l.st));

	/* A device launch, and no device runtime to link it with. */
	CKD(link_create(&l, 0));
	CKD(cuLinkAddFile(l.st, CU_JIT_INPUT_PTX, ptx, 0, NULL, NULL));
	CKD(cuLinkAddData(l.st, CU_JIT_INPUT_CUBIN, b, blen, "b.cubin", 0,
			  NULL, NULL));
	SHOWD(cuLinkComplete(l.st, &cubin, &size));
	show_error_log(&l);
	CKD(cuLinkDestroy(l.st));
	free(b);

	CKD(cuDevicePrimaryCtxRelease(dev));
	printf("%s: %d failures\n", xct_drv_failures ? "FAILED" : "PASSED",
	       xct_drv_failures);
	return xct_drv_failures ? 1 : 0;
}
