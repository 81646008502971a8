/* SPDX-License-Identifier: MIT */
/*
 * The driver API (libcuda.so.1) as a program uses it: init and devices,
 * the primary context, modules loaded from a fatbinary file and from PTX
 * text, functions and globals, launches with kernelParams and with a
 * packed buffer (a structure by value), copies, memsets, streams and
 * events, error names and texts, cuGetProcAddress, and the runtime
 * alongside (its memory, streams and cudaGetDriverEntryPoint).  Errors:
 * calls before cuInit, without a context, an unknown device, function
 * and error code.  The kernels are driver_kernels.cu, built beside this
 * program as .fatbin and .ptx.
 */
#include "common/xct_drv.h"
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shared memory a block of @threads asks for (an occupancy callback). */
static size_t smem_per_block(int threads)
{
	return (size_t)threads * 48;
}

struct drv_args {
	int a;
	double b;
	char c;
};

#define N 4096

int main(int argc, char **argv)
{
	static float ha[N], hb[N], hc[N];
	char name[256], path[4096];
	CUdevice dev;
	CUcontext ctx, cur;
	CUmodule mod, ptxmod;
	CUfunction vadd, scale, take, none;
	CUdeviceptr da, db, dc, dout, glob;
	CUstream st;
	CUevent e0, e1;
	size_t bytes, fr, tot;
	int count, major, minor, v, i, ok;
	const char *s;
	char *ptx;
	(void)argc;

	printf("cuDriverGetVersion before cuInit works: %s\n",
	       cuDriverGetVersion(&v) == CUDA_SUCCESS && v >= 13000 ? "yes"
								     : "no");
	SHOWD(cuDeviceGetCount(&count));
	SHOWD(cuInit(0));
	CKD(cuDeviceGetCount(&count));
	xct_drv_expect(count >= 1, "a device");
	CKD(cuDeviceGet(&dev, 0));
	SHOWD(cuDeviceGet(&dev, 999));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDeviceGetName(name, sizeof(name), dev));
	printf("name: %s\n", name);
	CKD(cuDeviceTotalMem(&bytes, dev));
	xct_drv_expect(bytes > (1ull << 30), "more than 1 GiB");
	CKD(cuDeviceGetAttribute(&major,
				 CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
				 dev));
	CKD(cuDeviceGetAttribute(&minor,
				 CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
				 dev));
	printf("compute capability %d.%d\n", major, minor);
	CUuuid uuid;
	CKD(cuDeviceGetUuid(&uuid, dev));
	ok = 0;
	for (i = 0; i < 16; i++)
		ok |= uuid.bytes[i];
	xct_drv_expect(ok, "uuid not zero");

	SHOWD(cuMemAlloc(&da, 16));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));
	CKD(cuCtxGetCurrent(&cur));
	xct_drv_expect(cur == ctx, "the primary context is current");
	CUdevice cd;
	CKD(cuCtxGetDevice(&cd));
	xct_drv_expect(cd == dev, "its device");
	unsigned int flags;
	int active;
	CKD(cuDevicePrimaryCtxGetState(dev, &flags, &active));
	printf("primary context active: %s\n", active ? "yes" : "no");

	/* A module from a file, one from PTX text. */
	snprintf(path, sizeof(path), "%s.fatbin", argv[0]);
	SHOWD(cuModuleLoad(&mod, "/nonexistent/module.fatbin"));
	CKD(cuModuleLoad(&mod, path));
	CKD(cuModuleGetFunction(&vadd, mod, "vadd"));
	CKD(cuModuleGetFunction(&take, mod, "take_struct"));
	SHOWD(cuModuleGetFunction(&none, mod, "no_such_kernel"));
	CKD(cuModuleGetGlobal(&glob, &bytes, mod, "counter"));
	printf("global counter: %zu bytes\n", bytes);
	snprintf(path, sizeof(path), "%s.ptx", argv[0]);
	ptx = xct_slurp(path, NULL);
	xct_drv_expect(ptx != NULL, "PTX read");
	CKD(cuModuleLoadData(&ptxmod, ptx));
	CKD(cuModuleGetFunction(&scale, ptxmod, "scale"));

	for (i = 0; i < N; i++) {
		ha[i] = (float)i;
		hb[i] = (float)(2 * i + 1);
	}
	CKD(cuMemAlloc(&da, sizeof(ha)));
	CKD(cuMemAlloc(&db, sizeof(hb)));
	CKD(cuMemAlloc(&dc, sizeof(hc)));
	CKD(cuMemcpyHtoD(da, ha, sizeof(ha)));
	CKD(cuMemcpyHtoD(db, hb, sizeof(hb)));
	int n = N;
	void *params[] = { &da, &db, &dc, &n };
	CKD(cuLaunchKernel(vadd, N / 256, 1, 1, 256, 1, 1, 0, NULL, params,
			   NULL));
	CKD(cuCtxSynchronize());
	CKD(cuMemcpyDtoH(hc, dc, sizeof(hc)));
	ok = 1;
	for (i = 0; i < N; i++)
		ok &= hc[i] == (float)(3 * i + 1);
	xct_drv_expect(ok, "vadd through kernelParams");

	/* scale from the PTX module, then a device-to-device copy. */
	float two = 2.0f;
	void *sparams[] = { &dc, &two, &n };
	CKD(cuLaunchKernel(scale, N / 256, 1, 1, 256, 1, 1, 0, NULL, sparams,
			   NULL));
	CKD(cuMemcpyDtoD(da, dc, sizeof(hc)));
	CKD(cuMemcpyDtoH(ha, da, sizeof(ha)));
	ok = 1;
	for (i = 0; i < N; i++)
		ok &= ha[i] == (float)(6 * i + 2);
	xct_drv_expect(ok, "scale from PTX, then device to device");

	/* A structure by value and a char, packed in a buffer (extra). */
	struct {
		struct drv_args s;
		char tag;
		int *out;
	} __attribute__((aligned(8))) packed;
	int hout[4];
	CKD(cuMemAlloc(&dout, sizeof(hout)));
	memset(&packed, 0, sizeof(packed));
	packed.s.a = 7;
	packed.s.b = 42.5;
	packed.s.c = 'x';
	packed.tag = 'T';
	packed.out = (int *)(uintptr_t)dout;
	size_t psize = sizeof(packed);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &packed,
			  CU_LAUNCH_PARAM_BUFFER_SIZE, &psize,
			  CU_LAUNCH_PARAM_END };
	CKD(cuLaunchKernel(take, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
	/* The same through kernelParams. */
	struct drv_args s2 = { 9, 1.5, 'y' };
	char tag2 = 'U';
	void *tparams[] = { &s2, &tag2, &dout };
	CKD(cuLaunchKernel(take, 1, 1, 1, 1, 1, 1, 0, NULL, tparams, NULL));
	CKD(cuMemcpyDtoH(hout, dout, sizeof(hout)));
	printf("take_struct: %d %d %c %c\n", hout[0], hout[1], hout[2],
	       hout[3]);
	int hcount = 0;
	CKD(cuMemcpyDtoH(&hcount, glob, sizeof(hcount)));
	printf("counter after two launches: %d\n", hcount);

	/* Memsets, memory info. */
	CKD(cuMemsetD32(dc, 0x01020304, N));
	CKD(cuMemsetD8(dc, 0x7f, 3));
	unsigned int words[2];
	CKD(cuMemcpyDtoH(words, dc, sizeof(words)));
	printf("memset: %08x %08x\n", words[0], words[1]);
	CKD(cuMemGetInfo(&fr, &tot));
	xct_drv_expect(fr <= tot && tot > 0, "free <= total");

	/* A stream and events; async copies from pinned memory. */
	float *pinned;
	CKD(cuMemAllocHost((void **)&pinned, sizeof(ha)));
	for (i = 0; i < N; i++)
		pinned[i] = 1.0f;
	CKD(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	CKD(cuEventCreate(&e0, CU_EVENT_DEFAULT));
	CKD(cuEventCreate(&e1, CU_EVENT_DEFAULT));
	CKD(cuEventRecord(e0, st));
	CKD(cuMemcpyHtoDAsync(da, pinned, sizeof(ha), st));
	void *sp2[] = { &da, &two, &n };
	CKD(cuLaunchKernel(scale, N / 256, 1, 1, 256, 1, 1, 0, st, sp2, NULL));
	CKD(cuMemcpyDtoHAsync(pinned, da, sizeof(ha), st));
	CKD(cuEventRecord(e1, st));
	CKD(cuEventSynchronize(e1));
	float ms = -1;
	CKD(cuEventElapsedTime(&ms, e0, e1));
	xct_drv_expect(ms >= 0, "elapsed time");
	CKD(cuStreamSynchronize(st));
	SHOWD(cuStreamQuery(st));
	ok = 1;
	for (i = 0; i < N; i++)
		ok &= pinned[i] == 2.0f;
	xct_drv_expect(ok, "stream work in order");

	/* Pointer attributes: device memory, pinned host memory, neither. */
	unsigned int mt = 0;
	CUcontext pctx = NULL;
	CUdeviceptr rstart = 0;
	size_t rsize = 0;
	unsigned long long bid = 0;
	int ord = -1;
	CKD(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, da));
	printf("device memory type: %u\n", mt);
	CKD(cuPointerGetAttribute(&pctx, CU_POINTER_ATTRIBUTE_CONTEXT, da));
	xct_drv_expect(pctx == ctx, "its context");
	CKD(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				  da));
	printf("its device: %d\n", ord);
	CKD(cuPointerGetAttribute(&rstart, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
				  da + 100));
	CKD(cuPointerGetAttribute(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
				  da + 100));
	xct_drv_expect(rstart == da && rsize == sizeof(ha), "its range");
	CKD(cuPointerGetAttribute(&bid, CU_POINTER_ATTRIBUTE_BUFFER_ID, da));
	xct_drv_expect(bid != 0, "a buffer id");
	mt = 0;
	CKD(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				  (CUdeviceptr)(uintptr_t)pinned));
	printf("pinned memory type: %u\n", mt);
	void *hp = NULL;
	CKD(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER,
				  (CUdeviceptr)(uintptr_t)pinned));
	xct_drv_expect(hp == pinned, "its host pointer");
	SHOWD(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				    (CUdeviceptr)0x1000));
	CUpointer_attribute al[2] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL };
	ord = 77;
	mt = 77;
	void *dl[2] = { &mt, &ord };
	SHOWD(cuPointerGetAttributes(2, al, dl, (CUdeviceptr)0x1000));
	printf("unknown pointer's values: %u %d\n", mt, ord);

	/* The runtime alongside: its memory and the driver's stream. */
	float *rt = NULL;
	if (cudaMalloc((void **)&rt, sizeof(ha)) != cudaSuccess)
		printf("cudaMalloc failed\n");
	CKD(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)rt, hb, sizeof(hb)));
	if (cudaMemcpyAsync(ha, rt, sizeof(ha), cudaMemcpyDeviceToHost,
			    (cudaStream_t)st) != cudaSuccess ||
	    cudaStreamSynchronize((cudaStream_t)st) != cudaSuccess)
		printf("runtime on the driver's stream failed\n");
	xct_drv_expect(!memcmp(ha, hb, sizeof(ha)), "runtime memory, driver copies");
	cudaFree(rt);
	void *fn = NULL;
	cudaDriverEntryPointQueryResult q;
	printf("cudaGetDriverEntryPointByVersion: %s\n",
	       cudaGetErrorName(cudaGetDriverEntryPointByVersion(
		       "cuMemAlloc", &fn, 13000, cudaEnableDefault, &q)));
	xct_drv_expect(fn && q == cudaDriverEntryPointSuccess, "runtime finds it");
	cudaError_t re = cudaGetDriverEntryPointByVersion(
		"cuNoSuchFunction", &fn, 13000, cudaEnableDefault, &q);
	printf("unknown symbol: %s, status %d, function: %s\n",
	       cudaGetErrorName(re), (int)q, fn ? "yes" : "no");
	re = cudaGetDriverEntryPointByVersion("cuStreamGetCaptureInfo", &fn,
					      9000, cudaEnableDefault, &q);
	printf("too old a version: %s, status %d, function: %s\n",
	       cudaGetErrorName(re), (int)q, fn ? "yes" : "no");

	/* cuGetProcAddress, and a call through what it answered. */
	CUdriverProcAddressQueryResult pq;
	void *pfn = NULL;
	CKD(cuGetProcAddress("cuMemAlloc", &pfn, 13000,
			     CU_GET_PROC_ADDRESS_DEFAULT, &pq));
	CUdeviceptr via = 0;
	CKD(((CUresult (*)(CUdeviceptr *, size_t))pfn)(&via, 256));
	CKD(cuMemFree(via));
	SHOWD(cuGetProcAddress("cuNoSuchFunction", &pfn, 13000,
			       CU_GET_PROC_ADDRESS_DEFAULT, &pq));
	printf("status %d, function: %s\n", (int)pq, pfn ? "yes" : "no");
	SHOWD(cuGetProcAddress("cuStreamGetCaptureInfo", &pfn, 9000,
			       CU_GET_PROC_ADDRESS_DEFAULT, &pq));
	printf("status %d, function: %s\n", (int)pq, pfn ? "yes" : "no");
	SHOWD(cuGetProcAddress("cuNoSuchFunction", &pfn, 13000,
			       CU_GET_PROC_ADDRESS_DEFAULT, NULL));
	/* No context, until the runtime's next call binds its own. */
	CKD(cuCtxSetCurrent(NULL));
	SHOWD(cuMemAlloc(&via, 16));
	CKD(cuCtxSetCurrent(ctx));

	/* Error names and texts. */
	CKD(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s));
	printf("%s\n", s);
	CKD(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
	printf("%s\n", s);
	SHOWD(cuGetErrorName((CUresult)9999, &s));
	SHOWD(cuGetErrorString((CUresult)9999, &s));

	/* Stream memory operations, 2D and 16-bit memsets. */
	CKD(cuStreamWriteValue32(st, dout, 77, CU_STREAM_WRITE_VALUE_DEFAULT));
	CKD(cuStreamWaitValue32(st, dout, 77, CU_STREAM_WAIT_VALUE_EQ));
	CKD(cuStreamWriteValue64(st, dout + 8, 0x1122334455667788ull,
				 CU_STREAM_WRITE_VALUE_DEFAULT));
	CKD(cuStreamWaitValue64(st, dout + 8, 0x1122334455667788ull,
				CU_STREAM_WAIT_VALUE_GEQ));
	CKD(cuStreamSynchronize(st));
	CKD(cuMemcpyDtoH(hout, dout, sizeof(hout)));
	printf("stream values: %d %x %x\n", hout[0], (unsigned)hout[2],
	       (unsigned)hout[3]);
	CKD(cuMemsetD2D32(dc, 64, 0xdeadbeefu, 4, 3));
	CKD(cuMemsetD2D8(dc + 16, 64, 0x11, 8, 3));
	CKD(cuMemsetD16Async(dc + 192, 0x2233, 4, st));
	CKD(cuStreamSynchronize(st));
	unsigned int grid2d[52];
	CKD(cuMemcpyDtoH(grid2d, dc, sizeof(grid2d)));
	printf("2D memsets: %08x %08x %08x %08x %08x\n", grid2d[0],
	       grid2d[4], grid2d[16], grid2d[20], grid2d[48]);

	/* Cooperative launch; a function's parameters; modes and limits. */
	void *cparams[] = { &da, &db, &dc, &n };
	CKD(cuLaunchCooperativeKernel(vadd, 4, 1, 1, 256, 1, 1, 0, st,
				      cparams));
	CKD(cuStreamSynchronize(st));
	SHOWD(cuLaunchCooperativeKernel(vadd, 4, 1, 1, 256, 1, 1, 0, st,
					NULL));
	for (i = 0; i < 3; i++) {
		size_t off = 0, sz = 0;

		CKD(cuFuncGetParamInfo(take, (size_t)i, &off, &sz));
		printf("take_struct parameter %d: offset %zu size %zu\n", i,
		       off, sz);
	}
	SHOWD(cuFuncGetParamInfo(take, 3, NULL, NULL));
	/* cuLaunchKernelEx with a priority and clusters of two blocks. */
	CUlaunchAttribute la[2];
	CUlaunchConfig lc;
	memset(la, 0, sizeof(la));
	memset(&lc, 0, sizeof(lc));
	la[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	la[0].value.priority = 0;
	la[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	la[1].value.clusterDim.x = 2;
	la[1].value.clusterDim.y = 1;
	la[1].value.clusterDim.z = 1;
	lc.gridDimX = N / 256;
	lc.gridDimY = lc.gridDimZ = 1;
	lc.blockDimX = 256;
	lc.blockDimY = lc.blockDimZ = 1;
	lc.hStream = st;
	lc.attrs = la;
	lc.numAttrs = 2;
	CKD(cuMemsetD32(dc, 0, N));
	void *xparams[] = { &da, &db, &dc, &n };
	CKD(cuLaunchKernelEx(&lc, vadd, xparams, NULL));
	CKD(cuStreamSynchronize(st));
	CKD(cuMemcpyDtoH(hc, dc, sizeof(hc)));
	CKD(cuMemcpyDtoH(ha, da, sizeof(ha)));
	CKD(cuMemcpyDtoH(hb, db, sizeof(hb)));
	ok = 1;
	for (i = 0; i < N; i++)
		ok &= hc[i] == ha[i] + hb[i];
	xct_drv_expect(ok, "cuLaunchKernelEx with clusters and a priority");
	lc.gridDimX = 3;
	SHOWD(cuLaunchKernelEx(&lc, vadd, xparams, NULL));
	int mg = 0, bs = 0;
	CKD(cuOccupancyMaxPotentialBlockSize(&mg, &bs, vadd, NULL, 0, 0));
	printf("potential block size: %d, grid %d\n", bs, mg);
	CKD(cuOccupancyMaxPotentialBlockSize(&mg, &bs, vadd, smem_per_block,
					     0, 512));
	printf("with a callback and a limit: %d, grid %d\n", bs, mg);
	CUmoduleLoadingMode lm;
	CKD(cuModuleGetLoadingMode(&lm));
	printf("loading mode: %d\n", (int)lm);
	unsigned int cflags = 0;
	CKD(cuCtxGetFlags(&cflags));
	printf("context flags: %u\n", cflags);
	size_t lim = 0;
	CKD(cuCtxGetLimit(&lim, CU_LIMIT_PRINTF_FIFO_SIZE));
	printf("printf fifo: %zu\n", lim);
	int lo, hi;
	CKD(cuCtxGetStreamPriorityRange(&lo, &hi));
	printf("priorities: %d %d\n", lo, hi);
	char bus[32];
	CUdevice again;
	CKD(cuDeviceGetPCIBusId(bus, sizeof(bus), dev));
	CKD(cuDeviceGetByPCIBusId(&again, bus));
	xct_drv_expect(again == dev, "PCI bus id round trip");
	CUdeviceptr pitched;
	size_t pitch = 0;
	SHOWD(cuMemAllocPitch(&pitched, &pitch, 100, 10, 3));
	CKD(cuMemAllocPitch(&pitched, &pitch, 100, 10, 4));
	printf("pitch: %zu\n", pitch);
	CKD(cuMemFree(pitched));

	/* Tensor maps, built by the driver on the host. */
	CUtensorMap tm;
	cuuint64_t gdim[6] = { 256, 16, 1, 1, 1, 1 };
	cuuint64_t gstr[5] = { 1024, 1024, 1024, 1024, 1024 };
	cuuint32_t box[6] = { 32, 8, 1, 1, 1, 1 };
	cuuint32_t es[6] = { 1, 1, 1, 1, 1, 1 };
	memset(&tm, 0, sizeof(tm));
	SHOWD(cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
				     (void *)(uintptr_t)da, gdim, gstr, box,
				     es, CU_TENSOR_MAP_INTERLEAVE_NONE,
				     CU_TENSOR_MAP_SWIZZLE_NONE,
				     CU_TENSOR_MAP_L2_PROMOTION_NONE,
				     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	ok = 0;
	for (i = 0; i < 16; i++)
		ok |= tm.opaque[i] != 0;
	xct_drv_expect(ok, "a tensor map built");
	SHOWD(cuTensorMapReplaceAddress(&tm, (void *)(uintptr_t)db));
	SHOWD(cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 6,
				     (void *)(uintptr_t)da, gdim, gstr, box,
				     es, CU_TENSOR_MAP_INTERLEAVE_NONE,
				     CU_TENSOR_MAP_SWIZZLE_NONE,
				     CU_TENSOR_MAP_L2_PROMOTION_NONE,
				     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	SHOWD(cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
				     (void *)(uintptr_t)(da + 4), gdim, gstr,
				     box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
				     CU_TENSOR_MAP_SWIZZLE_NONE,
				     CU_TENSOR_MAP_L2_PROMOTION_NONE,
				     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));

	CKD(cuEventDestroy(e0));
	CKD(cuEventDestroy(e1));
	CKD(cuStreamDestroy(st));
	CKD(cuMemFreeHost(pinned));
	CKD(cuMemFree(da));
	CKD(cuMemFree(db));
	CKD(cuMemFree(dc));
	CKD(cuMemFree(dout));
	CKD(cuModuleUnload(ptxmod));
	CKD(cuModuleUnload(mod));
	CKD(cuDevicePrimaryCtxRelease(dev));
	printf("driver_api: %s\n", xct_drv_failures ? "FAILED" : "PASSED");
	return xct_drv_failures ? 1 : 0;
}
