/* SPDX-License-Identifier: MIT */
/*
 * CUDA arrays: 1D, 2D, 3D and layered arrays of several channel formats,
 * cudaArrayGetInfo and cudaGetChannelDesc, round trips host -> array ->
 * host from pageable and pinned memory (one larger than 32 MiB, 2D and
 * 3D, and a 3D one whose slices are larger than a staging chunk), array
 * to array copies, 3D copies with source and destination positions,
 * cudaMalloc3D and cudaMemset3D(Async), mipmapped arrays and their
 * levels, the deprecated 1D array copies, cudaMemcpy3DPeer(Async) on one
 * device, and errors: zero extents, a bad kind, extents that overflow, a
 * freed array.
 */
#include "common/xct.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* A data check that fails the program at its end, so that what follows
 * still runs and prints. */
#define SOFT(cond, ...)						\
	do {							\
		if (!(cond)) {					\
			printf("CHECK FAILED: %s: ", #cond);	\
			printf(__VA_ARGS__);			\
			printf("\n");				\
			xct_failures++;				\
		}						\
	} while (0)

static void info(const char *what, cudaArray_t a)
{
	cudaChannelFormatDesc d;
	cudaExtent e;
	unsigned int flags = 99;

	memset(&d, 0, sizeof(d));
	memset(&e, 0, sizeof(e));
	CK(cudaArrayGetInfo(&d, &e, &flags, a));
	printf("%s: desc %d,%d,%d,%d kind %d extent %zu x %zu x %zu "
	       "flags %#x\n", what, d.x, d.y, d.z, d.w, (int)d.f, e.width, e.height, e.depth,
	       flags);
	cudaChannelFormatDesc g;
	CK(cudaGetChannelDesc(&g, a));
	SOFT(!memcmp(&g, &d, sizeof(d)), "cudaGetChannelDesc agrees");
}

/* A 2D round trip of w x h elements of @es bytes through @a. */
static void round_2d(const char *what, cudaArray_t a, size_t w, size_t h,
		     size_t es, unsigned char *src, unsigned char *dst,
		     size_t hpitch, cudaStream_t st, bool async)
{
	size_t wb = w * es;

	xct_fill(src, hpitch * h, (uint32_t)(w * 7 + h));
	memset(dst, 0, hpitch * h);
	if (async) {
		CK(cudaMemcpy2DToArrayAsync(a, 0, 0, src, hpitch, wb, h,
					    cudaMemcpyHostToDevice, st));
		CK(cudaMemcpy2DFromArrayAsync(dst, hpitch, a, 0, 0, wb, h,
					      cudaMemcpyDeviceToHost, st));
		CK(cudaStreamSynchronize(st));
	} else {
		CK(cudaMemcpy2DToArray(a, 0, 0, src, hpitch, wb, h,
				       cudaMemcpyHostToDevice));
		CK(cudaMemcpy2DFromArray(dst, hpitch, a, 0, 0, wb, h,
					 cudaMemcpyDeviceToHost));
	}
	bool ok = true;
	uint64_t sum = 0;
	for (size_t y = 0; y < h; y++) {
		ok &= !memcmp(src + y * hpitch, dst + y * hpitch, wb);
		sum += xct_sum(dst + y * hpitch, wb) * (y + 1);
	}
	printf("%s: %zu x %zu, %zu bytes: match=%d sum=%016llx\n", what, w,
	       h, wb * h, ok, (unsigned long long)sum);
	SOFT(ok, "%s", what);
}

/* A whole 3D array from and back to packed host memory. */
static void round_3d(const char *what, cudaArray_t a, cudaExtent e,
		     size_t es, unsigned char *src, unsigned char *dst)
{
	size_t n = e.width * es * e.height * e.depth;
	cudaMemcpy3DParms p;

	xct_fill(src, n, (uint32_t)n);
	memset(dst, 0, n);
	memset(&p, 0, sizeof(p));
	p.srcPtr = make_cudaPitchedPtr(src, e.width * es, e.width, e.height);
	p.dstArray = a;
	p.extent = e;
	p.kind = cudaMemcpyHostToDevice;
	CK(cudaMemcpy3D(&p));
	memset(&p, 0, sizeof(p));
	p.srcArray = a;
	p.dstPtr = make_cudaPitchedPtr(dst, e.width * es, e.width, e.height);
	p.extent = e;
	p.kind = cudaMemcpyDeviceToHost;
	CK(cudaMemcpy3D(&p));
	printf("%s: %zu x %zu x %zu, %zu bytes: match=%d sum=%016llx\n",
	       what, e.width, e.height, e.depth, n, !memcmp(src, dst, n),
	       (unsigned long long)xct_sum(dst, n));
	SOFT(!memcmp(src, dst, n), "%s", what);
}

int main(void)
{
	CK(cudaSetDevice(0));
	cudaStream_t st;
	CK(cudaStreamCreate(&st));

	/* ---- allocation and queries ---- */
	cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
	cudaChannelFormatDesc u4 = cudaCreateChannelDesc<uchar4>();
	cudaChannelFormatDesc f2 = cudaCreateChannelDesc<float2>();
	cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
	cudaChannelFormatDesc s1 =
		cudaCreateChannelDesc(16, 0, 0, 0, cudaChannelFormatKindSigned);
	printf("cudaCreateChannelDesc(16,0,0,0,signed): %d,%d,%d,%d kind %d\n",
	       s1.x, s1.y, s1.z, s1.w, (int)s1.f);
	cudaArray_t a1, a2, a3, al, a2f, big, slab, a16;
	CK(cudaMallocArray(&a1, &f1, 1000));
	info("1D float", a1);
	CK(cudaMallocArray(&a2, &u4, 300, 200));
	info("2D uchar4", a2);
	CK(cudaMallocArray(&a2f, &f2, 257, 129, cudaArraySurfaceLoadStore));
	info("2D float2 surface", a2f);
	CK(cudaMallocArray(&a16, &s1, 64, 64));
	info("2D short", a16);
	CK(cudaMalloc3DArray(&a3, &f1, make_cudaExtent(64, 32, 16)));
	info("3D float", a3);
	CK(cudaMalloc3DArray(&al, &u4, make_cudaExtent(128, 64, 4),
			     cudaArrayLayered));
	info("layered uchar4", al);
	cudaArrayMemoryRequirements req;
	SHOW(cudaArrayGetMemoryRequirements(&req, a2, 0));

	/* ---- 2D round trips ---- */
	size_t hp = 300 * 4 + 36;
	unsigned char *hs = (unsigned char *)malloc(hp * 200);
	unsigned char *hd = (unsigned char *)malloc(hp * 200);
	REQUIRE(hs && hd, "malloc");
	round_2d("2D pageable", a2, 300, 200, 4, hs, hd, hp, st, false);
	round_2d("2D pageable async", a2, 300, 200, 4, hs, hd, hp, st, true);
	unsigned char *ps, *pd;
	size_t hp2 = 257 * 8 + 8;
	CK(cudaMallocHost((void **)&ps, hp2 * 129));
	CK(cudaMallocHost((void **)&pd, hp2 * 129));
	round_2d("2D pinned", a2f, 257, 129, 8, ps, pd, hp2, st, false);
	round_2d("2D pinned async", a2f, 257, 129, 8, ps, pd, hp2, st, true);

	/* More than 32 MiB: the pageable copy is staged in many chunks. */
	const size_t BW = 2048, BH = 1100;
	CK(cudaMallocArray(&big, &f4, BW, BH));
	unsigned char *bs = (unsigned char *)malloc(BW * 16 * BH);
	unsigned char *bd = (unsigned char *)malloc(BW * 16 * BH);
	REQUIRE(bs && bd, "malloc big");
	round_2d("2D float4 pageable 34 MiB", big, BW, BH, 16, bs, bd,
		 BW * 16, st, false);
	round_2d("2D float4 pageable async 34 MiB", big, BW, BH, 16, bs, bd,
		 BW * 16, st, true);

	/* ---- array to array ---- */
	cudaArray_t b2;
	CK(cudaMallocArray(&b2, &u4, 300, 200));
	round_2d("2D pageable again", a2, 300, 200, 4, hs, hd, hp, st, false);
	CK(cudaMemcpy2DArrayToArray(b2, 0, 0, a2, 0, 0, 300 * 4, 200));
	memset(hd, 0, hp * 200);
	CK(cudaMemcpy2DFromArray(hd, hp, b2, 0, 0, 300 * 4, 200,
				 cudaMemcpyDeviceToHost));
	bool same = true;
	for (int y = 0; y < 200; y++)
		same &= !memcmp(hd + y * hp, hs + y * hp, 300 * 4);
	printf("A2A whole: match=%d\n", same);
	/* A window: 40 x 30 elements from (10, 20) to (100, 150). */
	CK(cudaMemcpy2DArrayToArray(b2, 100 * 4, 150, a2, 10 * 4, 20, 40 * 4,
				    30, cudaMemcpyDeviceToDevice));
	CK(cudaMemcpy2DFromArray(hd, hp, b2, 0, 0, 300 * 4, 200,
				 cudaMemcpyDeviceToHost));
	same = true;
	for (int y = 0; y < 200; y++)
		for (int x = 0; x < 300; x++) {
			int sx = x, sy = y;
			if (x >= 100 && x < 140 && y >= 150 && y < 180) {
				sx = x - 90;
				sy = y - 130;
			}
			same &= !memcmp(hd + y * hp + x * 4,
					hs + sy * hp + sx * 4, 4);
		}
	printf("A2A window: match=%d sum=%016llx\n", same,
	       (unsigned long long)xct_sum(hd, hp * 200));
	SOFT(same, "A2A window");

	/* The deprecated 1D forms, within a row and across rows. */
	unsigned char row[1000 * 4], back[1000 * 4];
	xct_fill(row, sizeof(row), 11);
	CK(cudaMemcpyToArray(a1, 0, 0, row, sizeof(row),
			     cudaMemcpyHostToDevice));
	memset(back, 0, sizeof(back));
	CK(cudaMemcpyFromArray(back, a1, 0, 0, sizeof(back),
			       cudaMemcpyDeviceToHost));
	printf("1D to/from array: match=%d\n", !memcmp(row, back, 4000));
	CK(cudaMemcpyToArrayAsync(a1, 40, 0, row, 400,
				  cudaMemcpyHostToDevice, st));
	CK(cudaMemcpyFromArrayAsync(back, a1, 40, 0, 400,
				    cudaMemcpyDeviceToHost, st));
	CK(cudaStreamSynchronize(st));
	printf("1D async at an offset: match=%d\n", !memcmp(row, back, 400));
	CK(cudaMemcpyArrayToArray(b2, 8, 3, a2, 16, 5, 64,
				  cudaMemcpyDeviceToDevice));
	SHOW(cudaMemcpyToArray(a2, 1100, 2, row, 600,
			       cudaMemcpyHostToDevice));
	CK(cudaDeviceSynchronize());

	/* ---- 3D ---- */
	cudaExtent e3 = make_cudaExtent(64, 32, 16);
	size_t n3 = 64 * 32 * 16 * 4;
	unsigned char *t3 = (unsigned char *)malloc(n3);
	unsigned char *u3 = (unsigned char *)malloc(n3);
	REQUIRE(t3 && u3, "malloc 3D");
	round_3d("layered uchar4", al, make_cudaExtent(128, 64, 4), 4, t3,
		 u3);
	/* Last: t3 keeps what the array holds, for the box below. */
	round_3d("3D float pageable", a3, e3, 4, t3, u3);
	/*
	 * A box from a host volume of 40 x 30 x 8 floats, at (3, 2, 1), to
	 * (5, 4, 2) in the array: 20 x 10 x 5 elements.  With an array on
	 * the other side CUDA counts the pointer's x position in the
	 * array's elements, like the width (not in bytes).
	 */
	{
		const size_t HX = 40, HY = 30, HZ = 8;
		float *hv = (float *)malloc(HX * HY * HZ * 4);
		REQUIRE(hv, "malloc");
		for (size_t i = 0; i < HX * HY * HZ; i++)
			hv[i] = (float)(i % 9973);
		cudaMemcpy3DParms p;
		memset(&p, 0, sizeof(p));
		p.srcPtr = make_cudaPitchedPtr(hv, HX * 4, HX, HY);
		p.srcPos = make_cudaPos(3, 2, 1);
		p.dstArray = a3;
		p.dstPos = make_cudaPos(5, 4, 2);
		p.extent = make_cudaExtent(20, 10, 5);
		p.kind = cudaMemcpyHostToDevice;
		CK(cudaMemcpy3D(&p));
		float *all = (float *)u3;
		memset(&p, 0, sizeof(p));
		p.srcArray = a3;
		p.dstPtr = make_cudaPitchedPtr(all, 64 * 4, 64, 32);
		p.extent = e3;
		p.kind = cudaMemcpyDeviceToHost;
		CK(cudaMemcpy3DAsync(&p, st));
		CK(cudaStreamSynchronize(st));
		const float *before = (const float *)t3;
		bool ok = true;
		for (size_t z = 0; z < 16; z++)
			for (size_t y = 0; y < 32; y++)
				for (size_t x = 0; x < 64; x++) {
					size_t i = (z * 32 + y) * 64 + x;
					float want = before[i];
					if (x >= 5 && x < 25 && y >= 4 &&
					    y < 14 && z >= 2 && z < 7)
						want = hv[((z - 1) * HY +
							   y - 2) * HX +
							  x - 2];
					ok &= !memcmp(&all[i], &want, 4);
				}
		printf("3D box at positions: match=%d sum=%016llx\n", ok,
		       (unsigned long long)xct_sum(all, n3));
		SOFT(ok, "3D box");
		/*
		 * The box back, from (5, 4, 2) of the array to (3, 2, 1) of a
		 * pinned volume of the same shape (x in array elements too).
		 */
		float *pv;
		CK(cudaMallocHost((void **)&pv, HX * HY * HZ * 4));
		memset(pv, 0, HX * HY * HZ * 4);
		memset(&p, 0, sizeof(p));
		p.srcArray = a3;
		p.srcPos = make_cudaPos(5, 4, 2);
		p.dstPtr = make_cudaPitchedPtr(pv, HX * 4, HX, HY);
		p.dstPos = make_cudaPos(3, 2, 1);
		p.extent = make_cudaExtent(20, 10, 5);
		p.kind = cudaMemcpyDeviceToHost;
		CK(cudaMemcpy3DAsync(&p, st));
		CK(cudaStreamSynchronize(st));
		ok = true;
		for (size_t z = 0; z < HZ; z++)
			for (size_t y = 0; y < HY; y++)
				for (size_t x = 0; x < HX; x++) {
					size_t i = (z * HY + y) * HX + x;
					bool in = x >= 3 && x < 23 && y >= 2 &&
						  y < 12 && z >= 1 && z < 6;
					float want = in ? hv[i] : 0.0f;
					ok &= !memcmp(&pv[i], &want, 4);
				}
		printf("3D box back to pinned at positions: match=%d "
		       "sum=%016llx\n", ok,
		       (unsigned long long)xct_sum(pv, HX * HY * HZ * 4));
		SOFT(ok, "3D box back");
		CK(cudaFreeHost(pv));
		free(hv);
	}
	/* Pinned 3D, asynchronous, into a layer range of the layered array. */
	{
		unsigned char *pin;
		size_t n = 128 * 4 * 64 * 2;
		CK(cudaMallocHost((void **)&pin, 2 * n));
		xct_fill(pin, n, 77);
		cudaMemcpy3DParms p;
		memset(&p, 0, sizeof(p));
		p.srcPtr = make_cudaPitchedPtr(pin, 128 * 4, 128, 64);
		p.dstArray = al;
		p.dstPos = make_cudaPos(0, 0, 2);
		p.extent = make_cudaExtent(128, 64, 2);
		p.kind = cudaMemcpyHostToDevice;
		CK(cudaMemcpy3DAsync(&p, st));
		memset(&p, 0, sizeof(p));
		p.srcArray = al;
		p.srcPos = make_cudaPos(0, 0, 2);
		p.dstPtr = make_cudaPitchedPtr(pin + n, 128 * 4, 128, 64);
		p.extent = make_cudaExtent(128, 64, 2);
		p.kind = cudaMemcpyDefault;
		CK(cudaMemcpy3DAsync(&p, st));
		CK(cudaStreamSynchronize(st));
		printf("3D pinned layers 2-3: match=%d\n",
		       !memcmp(pin, pin + n, n));
		CK(cudaFreeHost(pin));
	}
	/* More than 32 MiB of slices, and slices larger than a chunk. */
	{
		cudaArray_t v;
		cudaExtent e = make_cudaExtent(256, 256, 160);
		size_t n = 256 * 256 * 160 * 4;
		unsigned char *x = (unsigned char *)malloc(n);
		unsigned char *y = (unsigned char *)malloc(n);
		REQUIRE(x && y, "malloc 40 MiB");
		CK(cudaMalloc3DArray(&v, &f1, e));
		round_3d("3D float pageable 40 MiB", v, e, 4, x, y);
		CK(cudaFreeArray(v));
		e = make_cudaExtent(4096, 128, 3);
		CK(cudaMalloc3DArray(&slab, &f4, e));
		round_3d("3D float4 8 MiB slices", slab, e, 16, x, y);
		CK(cudaFreeArray(slab));
		free(x);
		free(y);
	}

	/* ---- cudaMalloc3D and cudaMemset3D ---- */
	{
		cudaPitchedPtr pp;
		cudaExtent e = make_cudaExtent(100, 20, 5);
		CK(cudaMalloc3D(&pp, e));
		printf("cudaMalloc3D: pitch >= 100: %s, xsize %zu ysize %zu\n",
		       xct_yes(pp.pitch >= 100), pp.xsize, pp.ysize);
		CK(cudaMemset3D(pp, 0x5a, e));
		cudaPitchedPtr inner = pp;
		inner.ptr = (char *)pp.ptr + pp.pitch * pp.ysize + pp.pitch +
			    10;
		CK(cudaMemset3DAsync(inner, 0x11, make_cudaExtent(30, 5, 2),
				     st));
		CK(cudaStreamSynchronize(st));
		unsigned char h[100 * 20 * 5];
		cudaMemcpy3DParms p;
		memset(&p, 0, sizeof(p));
		p.srcPtr = pp;
		p.dstPtr = make_cudaPitchedPtr(h, 100, 100, 20);
		p.extent = e;
		p.kind = cudaMemcpyDeviceToHost;
		CK(cudaMemcpy3D(&p));
		bool ok = true;
		for (int z = 0; z < 5; z++)
			for (int y = 0; y < 20; y++)
				for (int x = 0; x < 100; x++) {
					bool in = z >= 1 && z < 3 && y >= 1 &&
						  y < 6 && x >= 10 && x < 40;
					ok &= h[(z * 20 + y) * 100 + x] ==
					      (in ? 0x11 : 0x5a);
				}
		printf("memset3D + inner box: match=%d\n", ok);
		/* Pitched device memory to an array and back, with positions */
		memset(&p, 0, sizeof(p));
		p.srcPtr = pp;
		p.srcPos = make_cudaPos(8, 2, 1);
		p.dstArray = a3;
		p.dstPos = make_cudaPos(1, 1, 1);
		p.extent = make_cudaExtent(4, 3, 2);
		p.kind = cudaMemcpyDeviceToDevice;
		CK(cudaMemcpy3D(&p));
		float f[2][3][4];
		memset(&p, 0, sizeof(p));
		p.srcArray = a3;
		p.srcPos = make_cudaPos(1, 1, 1);
		p.dstPtr = make_cudaPitchedPtr(f, 16, 4, 3);
		p.extent = make_cudaExtent(4, 3, 2);
		p.kind = cudaMemcpyDeviceToHost;
		CK(cudaMemcpy3D(&p));
		printf("device pitched -> array -> host: sum=%016llx\n",
		       (unsigned long long)xct_sum(f, sizeof(f)));
		CK(cudaFree(pp.ptr));
	}

	/*
	 * ---- 3D peer copies, device 0 to device 0 ----
	 * The pointer sides next to an array start at x 0, so that only
	 * the array's positions (elements) place the box.
	 */
	{
		const size_t PW = 32, PH = 16, PD = 4, PN = PW * PH * PD;
		cudaExtent pe = make_cudaExtent(PW, PH, PD);
		cudaExtent pb = make_cudaExtent(PW * 4, PH, PD);
		float *ph = (float *)malloc(PN * 4);
		float *pr = (float *)malloc(PN * 4);
		REQUIRE(ph && pr, "malloc peer");
		for (size_t i = 0; i < PN; i++)
			ph[i] = (float)i * 0.25f;
		cudaArray_t pa, pa2;
		cudaPitchedPtr dp, dq;
		CK(cudaMalloc3DArray(&pa, &f1, pe));
		CK(cudaMalloc3DArray(&pa2, &f1, pe));
		CK(cudaMalloc3D(&dp, pb));
		CK(cudaMalloc3D(&dq, pb));
		CK(cudaMemset3D(dq, 0, pb));
		cudaMemcpy3DParms p;
		memset(&p, 0, sizeof(p));
		p.srcPtr = make_cudaPitchedPtr(ph, PW * 4, PW, PH);
		p.dstPtr = dp;
		p.extent = pb;
		p.kind = cudaMemcpyHostToDevice;
		CK(cudaMemcpy3D(&p));
		/* Pitched device memory to an array, whole. */
		cudaMemcpy3DPeerParms q;
		memset(&q, 0, sizeof(q));
		q.srcPtr = dp;
		q.dstArray = pa;
		q.extent = pe;
		CK(cudaMemcpy3DPeer(&q));
		/* A box of the array, from (4, 2, 1), to (0, 3, 1) of dq. */
		memset(&q, 0, sizeof(q));
		q.srcArray = pa;
		q.srcPos = make_cudaPos(4, 2, 1);
		q.dstPtr = dq;
		q.dstPos = make_cudaPos(0, 3, 1);
		q.extent = make_cudaExtent(8, 5, 2);
		CK(cudaMemcpy3DPeerAsync(&q, st));
		CK(cudaStreamSynchronize(st));
		memset(&p, 0, sizeof(p));
		p.srcPtr = dq;
		p.dstPtr = make_cudaPitchedPtr(pr, PW * 4, PW, PH);
		p.extent = pb;
		p.kind = cudaMemcpyDeviceToHost;
		CK(cudaMemcpy3D(&p));
		bool ok = true;
		for (size_t z = 0; z < PD; z++)
			for (size_t y = 0; y < PH; y++)
				for (size_t x = 0; x < PW; x++) {
					float want = 0;
					if (x < 8 && y >= 3 && y < 8 &&
					    z >= 1 && z < 3)
						want = ph[(z * PH + y - 1) *
							  PW + x + 4];
					ok &= pr[(z * PH + y) * PW + x] ==
					      want;
				}
		printf("3D peer array box -> pitched: match=%d sum=%016llx\n",
		       ok, (unsigned long long)xct_sum(pr, PN * 4));
		SOFT(ok, "3D peer box");
		/* Array to array, then back to the host. */
		memset(&q, 0, sizeof(q));
		q.srcArray = pa;
		q.dstArray = pa2;
		q.extent = pe;
		CK(cudaMemcpy3DPeer(&q));
		memset(pr, 0, PN * 4);
		memset(&p, 0, sizeof(p));
		p.srcArray = pa2;
		p.dstPtr = make_cudaPitchedPtr(pr, PW * 4, PW, PH);
		p.extent = pe;
		p.kind = cudaMemcpyDeviceToHost;
		CK(cudaMemcpy3D(&p));
		ok = !memcmp(ph, pr, PN * 4);
		printf("3D peer array -> array: match=%d\n", ok);
		SOFT(ok, "3D peer array to array");
		SHOW(cudaMemcpy3DPeer(NULL));
		q.srcDevice = 99;
		SHOW(cudaMemcpy3DPeer(&q));
		CK(cudaFreeArray(pa));
		CK(cudaFreeArray(pa2));
		CK(cudaFree(dp.ptr));
		CK(cudaFree(dq.ptr));
		free(ph);
		free(pr);
	}

	/* ---- mipmapped arrays ---- */
	{
		cudaMipmappedArray_t mm;
		CK(cudaMallocMipmappedArray(&mm, &f1,
					    make_cudaExtent(64, 64, 0), 4));
		for (unsigned int l = 0; l < 4; l++) {
			cudaArray_t lv;
			char name[32];
			CK(cudaGetMipmappedArrayLevel(&lv, mm, l));
			snprintf(name, sizeof(name), "mip level %u", l);
			info(name, lv);
		}
		cudaArray_t l2;
		CK(cudaGetMipmappedArrayLevel(&l2, mm, 2));
		float lvl[16 * 16], got[16 * 16];
		for (int i = 0; i < 256; i++)
			lvl[i] = i * 0.5f;
		CK(cudaMemcpy2DToArray(l2, 0, 0, lvl, 64, 64, 16,
				       cudaMemcpyHostToDevice));
		CK(cudaMemcpy2DFromArray(got, 64, l2, 0, 0, 64, 16,
					 cudaMemcpyDeviceToHost));
		printf("mip level 2 round trip: match=%d\n",
		       !memcmp(lvl, got, sizeof(lvl)));
		SHOW(cudaMipmappedArrayGetMemoryRequirements(&req, mm, 0));
		SHOW(cudaGetMipmappedArrayLevel(&l2, mm, 9));
		CK(cudaFreeMipmappedArray(mm));
	}

	/* ---- errors ---- */
	cudaArray_t z;
	SHOW(cudaMallocArray(&z, &f1, 0, 0));
	SHOW(cudaMalloc3DArray(&z, &f1, make_cudaExtent(0, 0, 0)));
	SHOW(cudaMallocArray(NULL, &f1, 4, 4));
	SHOW(cudaMallocArray(&z, NULL, 4, 4));
	SHOW(cudaMemcpy2DToArray(a2, 0, 0, hs, hp, 0, 10,
				 cudaMemcpyHostToDevice));
	SHOW(cudaMemcpy2DToArray(a2, 0, 0, hs, hp, 16, 0,
				 cudaMemcpyHostToDevice));
	SHOW(cudaMemcpy2DToArray(a2, 0, 0, hs, hp, 16, 4,
				 (cudaMemcpyKind)7));
	SHOW(cudaMemcpy2DToArray(a2, 0, 0, hs, 8, 16, 4,
				 cudaMemcpyHostToDevice));
	SHOW(cudaMemcpy2DToArray(a2, 0, 0, hs, 64, 64, SIZE_MAX / 2,
				 cudaMemcpyHostToDevice));
	SHOW(cudaMemcpy2DToArray(a2, 0, 0, ps, 64, 64, SIZE_MAX / 2,
				 cudaMemcpyHostToDevice));
	SHOW(cudaMemcpy2DFromArray(hd, 64, a2, 0, 0, 64, SIZE_MAX / 2,
				   cudaMemcpyDeviceToHost));
	SHOW(cudaMemcpy2DToArray(a2, 0, 190, hs, hp, 16, 20,
				 cudaMemcpyHostToDevice));
	SHOW(cudaMemcpy2DToArray(a2, SIZE_MAX - 8, 0, hs, hp, 16, 2,
				 cudaMemcpyHostToDevice));
	{
		cudaMemcpy3DParms p;
		memset(&p, 0, sizeof(p));
		p.srcPtr = make_cudaPitchedPtr(t3, 64 * 4, 64, 32);
		p.dstArray = a3;
		p.extent = make_cudaExtent(SIZE_MAX / 2, 32, 16);
		p.kind = cudaMemcpyHostToDevice;
		SHOW(cudaMemcpy3D(&p));
		p.extent = make_cudaExtent(64, 32, SIZE_MAX / 4);
		SHOW(cudaMemcpy3D(&p));
		/* One slice past the array's end. */
		p.extent = make_cudaExtent(64, 32, 16);
		p.dstPos = make_cudaPos(0, 0, 1);
		SHOW(cudaMemcpy3D(&p));
		p.dstPos = make_cudaPos(0, 0, 0);
		p.kind = (cudaMemcpyKind)9;
		SHOW(cudaMemcpy3D(&p));
		SHOW(cudaMemcpy3D(NULL));
	}
	SHOW(cudaFreeArray(NULL));
	CK(cudaFreeArray(b2));
	cudaChannelFormatDesc gone;
	printf("query of a freed array fails: %s\n",
	       xct_yes(cudaGetChannelDesc(&gone, b2) != cudaSuccess));
	cudaGetLastError();

	CK(cudaFreeArray(a1));
	CK(cudaFreeArray(a2));
	CK(cudaFreeArray(a2f));
	CK(cudaFreeArray(a16));
	CK(cudaFreeArray(a3));
	CK(cudaFreeArray(al));
	CK(cudaFreeArray(big));
	CK(cudaFreeHost(ps));
	CK(cudaFreeHost(pd));
	CK(cudaStreamDestroy(st));
	free(hs);
	free(hd);
	free(bs);
	free(bd);
	free(t3);
	free(u3);
	return xct_finish("arrays");
}
