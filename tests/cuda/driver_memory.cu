/* SPDX-License-Identifier: MIT */
/*
 * The driver API's copies of regions, its stream-ordered allocation and
 * pools, managed memory's hints, and the rest of its streams: 2D copies
 * between host, device and an array (offsets and pitches, synchronous,
 * asynchronous and on the per-thread default stream), a 3D copy into a
 * 3D array and back, 1D array copies, a peer copy; cuMemAllocAsync, a
 * pool of the program's with its attributes and access, the default
 * pool; prefetches, advice and range attributes of managed memory;
 * stream capture into a graph the runtime launches, callbacks and host
 * functions in stream order, stream attributes, ids, devices and
 * contexts; peer access and interprocess handles on one GPU, capture
 * modes and the profiler's switches.  Errors: a memory type of none, a
 * width wider than its pitch, a capture ended on a stream that is not
 * capturing, a device that is its own peer.
 */
#include "common/xct.h"
#include "common/xct_drv.h"
#include <cudaProfiler.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Per-thread forms, which programs built per thread get by macros. */
extern "C" CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *c);
extern "C" CUresult CUDAAPI cuStreamQuery_ptsz(CUstream st);
extern "C" CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream st);

#define W 64	/* bytes in a row */
#define H 16

static int order[4], norder;

static void CUDA_CB on_callback(CUstream st, CUresult status, void *p)
{
	(void)st;
	order[norder++] = (int)(uintptr_t)p + (status ? 100 : 0);
}

static void CUDA_CB on_host(void *p)
{
	order[norder++] = (int)(uintptr_t)p;
}

static unsigned int sum(const unsigned char *p, size_t n)
{
	unsigned int s = 0;

	for (size_t i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

static void copies2d(CUstream st)
{
	static unsigned char h[H][W], back[H][W];
	CUDA_MEMCPY2D c;
	CUdeviceptr d;
	size_t pitch;
	cudaArray_t arr;
	struct cudaChannelFormatDesc ch = cudaCreateChannelDesc<uchar1>();

	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			h[y][x] = (unsigned char)(x * 7 + y * 13);
	CKD(cuMemAllocPitch(&d, &pitch, W, H, 4));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = h;
	c.srcPitch = W;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = d;
	c.dstPitch = pitch;
	c.WidthInBytes = W;
	c.Height = H;
	CKD(cuMemcpy2D(&c));
	/* Back a window of it: offsets on both sides, asynchronously. */
	memset(back, 0, sizeof(back));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d;
	c.srcPitch = pitch;
	c.srcXInBytes = 8;
	c.srcY = 2;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = back;
	c.dstPitch = W;
	c.dstXInBytes = 4;
	c.dstY = 1;
	c.WidthInBytes = 40;
	c.Height = 10;
	CKD(cuMemcpy2DAsync(&c, st));
	CKD(cuStreamSynchronize(st));
	printf("2D window: %08x\n", sum(&back[0][0], sizeof(back)));

	/* Through an array of the runtime's, as CUarray. */
	CK(cudaMallocArray(&arr, &ch, W, H));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d;
	c.srcPitch = pitch;
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	c.dstArray = (CUarray)arr;
	c.WidthInBytes = W;
	c.Height = H;
	CKD(cuMemcpy2D(&c));
	memset(back, 0, sizeof(back));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = (CUarray)arr;
	c.srcXInBytes = 16;
	c.srcY = 3;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = back;
	c.dstPitch = W;
	c.WidthInBytes = 32;
	c.Height = 8;
	CKD(cuMemcpy2D(&c));
	printf("2D from an array: %08x\n", sum(&back[0][0], sizeof(back)));
	{
		unsigned char row[W];

		CKD(cuMemcpyAtoH((void *)row, (CUarray)arr, 5, 20));
		printf("1D from an array: %08x\n", sum(row, 20));
		CKD(cuMemcpyHtoA((CUarray)arr, 0, h, 30));
		CKD(cuMemcpyAtoH((void *)row, (CUarray)arr, 0, 30));
		printf("1D round trip: %s\n",
		       memcmp(row, h, 30) ? "differs" : "same");
	}
	/* On the per-thread default stream. */
	memset(back, 0, sizeof(back));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d;
	c.srcPitch = pitch;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = back;
	c.dstPitch = W;
	c.WidthInBytes = W;
	c.Height = H;
	CKD(cuMemcpy2D_v2_ptds(&c));
	printf("2D per thread: %s\n",
	       memcmp(back, h, sizeof(h)) ? "differs" : "same");

	c.dstMemoryType = (CUmemorytype)9;
	SHOWD(cuMemcpy2D(&c));
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.WidthInBytes = W + 1;
	SHOWD(cuMemcpy2D(&c));
	CK(cudaFreeArray(arr));
	CKD(cuMemFree(d));
}

static void copies3d(void)
{
	const size_t w = 16, h = 8, depth = 4;	/* floats, rows, slices */
	static float in[4][8][16], out[4][8][16];
	struct cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
	cudaArray_t arr;
	CUDA_MEMCPY3D c;

	for (size_t z = 0; z < depth; z++)
		for (size_t y = 0; y < h; y++)
			for (size_t x = 0; x < w; x++)
				in[z][y][x] = (float)(x + 100 * y + 1000 * z);
	CK(cudaMalloc3DArray(&arr, &ch, make_cudaExtent(w, h, depth)));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = in;
	c.srcPitch = w * sizeof(float);
	c.srcHeight = h;
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	c.dstArray = (CUarray)arr;
	c.WidthInBytes = w * sizeof(float);
	c.Height = h;
	c.Depth = depth;
	CKD(cuMemcpy3D(&c));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = (CUarray)arr;
	c.srcXInBytes = 4 * sizeof(float);
	c.srcY = 2;
	c.srcZ = 1;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = out;
	c.dstPitch = w * sizeof(float);
	c.dstHeight = h;
	c.WidthInBytes = 8 * sizeof(float);
	c.Height = 4;
	c.Depth = 2;
	CKD(cuMemcpy3D(&c));
	printf("3D window: %.0f %.0f %.0f\n", out[0][0][0], out[1][3][7],
	       out[0][1][2]);
	CK(cudaFreeArray(arr));
}

static void pools(CUdevice dev, CUstream st)
{
	CUmemoryPool pool, def;
	CUmemPoolProps props;
	CUmemAccessDesc acc;
	CUmemAccess_flags flags;
	CUmemLocation loc;
	CUdeviceptr a, b;
	cuuint64_t thr = 1 << 20, got = 0;
	unsigned int v;

	CKD(cuMemAllocAsync(&a, 1 << 20, st));
	CKD(cuMemsetD32Async(a, 0x1234, (1 << 20) / 4, st));
	CKD(cuMemcpyDtoHAsync(&v, a + 4096, 4, st));
	CKD(cuMemFreeAsync(a, st));
	CKD(cuStreamSynchronize(st));
	printf("stream-ordered allocation: %x\n", v);

	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = dev;
	CKD(cuMemPoolCreate(&pool, &props));
	CKD(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
				  &thr));
	CKD(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
				  &got));
	printf("pool threshold: %llu\n", (unsigned long long)got);
	acc.location = props.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CKD(cuMemPoolSetAccess(pool, &acc, 1));
	loc = props.location;
	CKD(cuMemPoolGetAccess(&flags, pool, &loc));
	printf("pool access: %d\n", (int)flags);
	CKD(cuMemAllocFromPoolAsync(&b, 4096, pool, st));
	CKD(cuMemsetD8Async(b, 7, 4096, st));
	CKD(cuMemFreeAsync(b, st));
	CKD(cuStreamSynchronize(st));
	CKD(cuMemPoolTrimTo(pool, 0));
	CKD(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
				  &got));
	printf("pool reserved after trim: %llu\n", (unsigned long long)got);
	CKD(cuMemPoolDestroy(pool));
	CKD(cuDeviceGetDefaultMemPool(&def, dev));
	CKD(cuDeviceGetMemPool(&pool, dev));
	xct_drv_expect(def == pool, "the device's pool is its default");
	SHOWD(cuMemAllocFromPoolAsync(&b, 4096, NULL, st));
}

static void managed(CUdevice dev, CUstream st)
{
	CUdeviceptr m;
	CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, dev };
	int last = -7;

	CKD(cuMemAllocManaged(&m, 1 << 16, CU_MEM_ATTACH_GLOBAL));
	CKD(cuMemAdvise(m, 1 << 16, CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
			loc));
	CKD(cuMemPrefetchAsync(m, 1 << 16, loc, 0, st));
	CKD(cuStreamSynchronize(st));
	CKD(cuMemRangeGetAttribute(
		&last, sizeof(last),
		CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, 1 << 16));
	printf("last prefetch location: %d\n", last);
	CKD(cuMemFree(m));
}

static void capture(CUstream st)
{
	CUstreamCaptureStatus cs;
	cuuint64_t id;
	CUgraph g;
	cudaGraphExec_t ge;
	CUdeviceptr d;
	unsigned int v = 0;

	CKD(cuMemAlloc(&d, 4096));
	CKD(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	CKD(cuStreamIsCapturing(st, &cs));
	printf("capturing: %d\n", (int)cs);
	CKD(cuStreamGetCaptureInfo(st, &cs, &id, NULL, NULL, NULL, NULL));
	CKD(cuMemsetD32Async(d, 0xabc, 1024, st));
	CKD(cuStreamEndCapture(st, &g));
	CK(cudaGraphInstantiate(&ge, (cudaGraph_t)g, 0));
	CK(cudaGraphLaunch(ge, st));
	CKD(cuStreamSynchronize(st));
	CKD(cuMemcpyDtoH(&v, d + 1020, 4));
	printf("captured memset: %x\n", v);
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy((cudaGraph_t)g));
	SHOWD(cuStreamEndCapture(st, &g));
	CKD(cuMemFree(d));
}

static void streams(CUcontext ctx, CUstream st)
{
	CUstreamAttrValue v;
	unsigned long long id = 0, rid = 0;
	CUcontext sc;
	CUdevice sd;
	CUevent e;

	norder = 0;
	CKD(cuStreamAddCallback(st, on_callback, (void *)1, 0));
	CKD(cuLaunchHostFunc(st, on_host, (void *)2));
	CKD(cuStreamAddCallback(st, on_callback, (void *)3, 0));
	CKD(cuStreamSynchronize(st));
	printf("stream order: %d %d %d (%d)\n", order[0], order[1], order[2],
	       norder);
	CKD(cuStreamGetId(st, &id));
	CK(cudaStreamGetId(st, &rid));
	xct_drv_expect(id == rid, "the stream's id is the runtime's");
	CKD(cuStreamGetDevice(st, &sd));
	printf("stream device: %d\n", (int)sd);
	CKD(cuStreamGetCtx(st, &sc));
	xct_drv_expect(sc == ctx, "the stream's context is the primary one");
	memset(&v, 0, sizeof(v));
	v.syncPolicy = CU_SYNC_POLICY_SPIN;
	CKD(cuStreamSetAttribute(st, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY,
				 &v));
	memset(&v, 0, sizeof(v));
	CKD(cuStreamGetAttribute(st, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY,
				 &v));
	printf("stream sync policy: %d\n", (int)v.syncPolicy);
	CKD(cuEventCreate(&e, CU_EVENT_DEFAULT));
	CKD(cuEventRecordWithFlags(e, st, CU_EVENT_RECORD_DEFAULT));
	CKD(cuEventSynchronize(e));
	CKD(cuEventDestroy(e));
	SHOWD(cuStreamQuery_ptsz(NULL));
	SHOWD(cuStreamSynchronize_ptsz(NULL));
}

/* Peers (one GPU: none), interprocess handles, capture modes. */
static void peers(CUcontext ctx, CUdevice dev)
{
	CUipcMemHandle mh;
	CUipcEventHandle eh;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUdeviceptr d, o;
	CUevent e;
	int v = -1;

	CKD(cuDeviceCanAccessPeer(&v, dev, dev));
	printf("a device is its own peer: %d\n", v);
	SHOWD(cuDeviceGetP2PAttribute(
		&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, dev, dev));
	SHOWD(cuCtxEnablePeerAccess(ctx, 0));
	SHOWD(cuCtxDisablePeerAccess(ctx));
	CKD(cuMemAlloc(&d, 1 << 21));
	CKD(cuIpcGetMemHandle(&mh, d));
	SHOWD(cuIpcOpenMemHandle(&o, mh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
	CKD(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
	CKD(cuIpcGetEventHandle(&eh, e));
	CKD(cuEventDestroy(e));
	CKD(cuMemFree(d));
	CKD(cuThreadExchangeStreamCaptureMode(&mode));
	printf("capture mode was: %d\n", (int)mode);
	CKD(cuThreadExchangeStreamCaptureMode(&mode));
	CKD(cuProfilerStart());
	CKD(cuProfilerStop());
}

/* The first versions of calls a _v2 replaced, found by their names. */
static void first_versions(void)
{
	CUresult (*ev_destroy)(CUevent) = (CUresult (*)(CUevent))
		dlsym(RTLD_DEFAULT, "cuEventDestroy");
	CUresult (*st_destroy)(CUstream) = (CUresult (*)(CUstream))
		dlsym(RTLD_DEFAULT, "cuStreamDestroy");
	CUresult (*info)(CUstream, CUstreamCaptureStatus *, cuuint64_t *) =
		(CUresult (*)(CUstream, CUstreamCaptureStatus *, cuuint64_t *))
		dlsym(RTLD_DEFAULT, "cuStreamGetCaptureInfo");
	CUstreamCaptureStatus cs;
	cuuint64_t id;
	CUstream st;
	CUevent e;

	if (!ev_destroy || !st_destroy || !info) {
		printf("FAILED: a first version is missing\n");
		xct_drv_failures++;
		return;
	}
	CKD(cuEventCreate(&e, 0));
	SHOWD(ev_destroy(e));
	CKD(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	SHOWD(info(st, &cs, &id));
	printf("capture status: %d\n", (int)cs);
	SHOWD(st_destroy(st));
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUstream st;

	/* Without a GPU this is where it ends. */
	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));
	CKD(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));

	copies2d(st);
	copies3d();
	{
		CUdeviceptr a, b;
		unsigned int v = 0;

		CKD(cuMemAlloc(&a, 1024));
		CKD(cuMemAlloc(&b, 1024));
		CKD(cuMemsetD32(a, 77, 256));
		CKD(cuMemcpyPeer(b, ctx, a, ctx, 1024));
		CKD(cuMemcpyDtoH(&v, b + 512, 4));
		printf("peer copy: %u\n", v);
		CKD(cuMemFree(a));
		CKD(cuMemFree(b));
	}
	pools(dev, st);
	managed(dev, st);
	capture(st);
	streams(ctx, st);
	peers(ctx, dev);
	first_versions();

	CKD(cuStreamDestroy(st));
	CKD(cuDevicePrimaryCtxRelease(dev));
	printf("%s: %d failures\n", xct_drv_failures ? "FAILED" : "PASSED",
	       xct_drv_failures);
	return xct_drv_failures ? 1 : 0;
}
