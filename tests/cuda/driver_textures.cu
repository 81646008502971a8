/* SPDX-License-Identifier: MIT */
/*
 * The driver API's arrays and texture and surface objects: 2D and
 * layered 3D arrays of several formats and their descriptors, texture
 * objects over an array and over pitched memory with the driver's flags
 * (integers promoted to floats or read as they are, normalised
 * coordinates, clamping and wrapping), read by kernels the runtime
 * launches, and a surface object written by one.  Errors: a format of
 * none, three channels.
 */
#include "common/xct.h"
#include "common/xct_drv.h"
#include <stdio.h>
#include <string.h>

#define W 32
#define H 16

__global__ void fetch_f(cudaTextureObject_t t, float *out, float scale)
{
	int x = threadIdx.x, y = blockIdx.x;

	out[y * W + x] = tex2D<float>(t, (x + 0.5f) * scale - 3.0f,
				      (y + 0.5f) * scale);
}

__global__ void fetch_u4(cudaTextureObject_t promoted,
			 cudaTextureObject_t raw, float4 *pf, uchar4 *pu)
{
	int x = threadIdx.x, y = blockIdx.x;

	pf[y * W + x] = tex2D<float4>(promoted, x + 0.5f, y + 0.5f);
	pu[y * W + x] = tex2D<uchar4>(raw, x + 0.5f, y + 0.5f);
}

__global__ void write_surf(cudaSurfaceObject_t s)
{
	int x = threadIdx.x, y = blockIdx.x;

	surf2Dwrite((float)(x * 100 + y), s, x * (int)sizeof(float), y);
}

static double sumf(const float *p, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += p[i] * (i % 13 + 1);
	return s;
}

static void copy_in(CUarray a, const void *h, size_t row)
{
	CUDA_MEMCPY2D c;

	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = h;
	c.srcPitch = row;
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	c.dstArray = a;
	c.WidthInBytes = row;
	c.Height = H;
	CKD(cuMemcpy2D(&c));
}

int main(void)
{
	static float hf[H][W], out[H * W];
	static unsigned char hu[H][W][4];
	static float4 pf[H * W];
	static uchar4 pu[H * W];
	CUDA_ARRAY_DESCRIPTOR ad, got;
	CUDA_ARRAY3D_DESCRIPTOR a3, got3;
	CUDA_RESOURCE_DESC rd;
	CUDA_TEXTURE_DESC td;
	CUtexObject tf, tp, tr, tl;
	CUsurfObject so;
	CUarray af, au, al;
	CUdevice dev;
	CUcontext ctx;
	float *d;
	float4 *dpf;
	uchar4 *dpu;
	CUdeviceptr lin;
	size_t pitch;

	/* Without a GPU this is where it ends. */
	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			hf[y][x] = (float)(x * 3 + y * 7);
			for (int c = 0; c < 4; c++)
				hu[y][x][c] = (unsigned char)(x * 5 + y + c * 60);
		}

	memset(&ad, 0, sizeof(ad));
	ad.Width = W;
	ad.Height = H;
	ad.Format = CU_AD_FORMAT_FLOAT;
	ad.NumChannels = 1;
	CKD(cuArrayCreate(&af, &ad));
	CKD(cuArrayGetDescriptor(&got, af));
	printf("float array: %zux%zu format %#x channels %u\n", got.Width,
	       got.Height, (unsigned int)got.Format, got.NumChannels);
	ad.Format = CU_AD_FORMAT_UNSIGNED_INT8;
	ad.NumChannels = 4;
	CKD(cuArrayCreate(&au, &ad));
	CKD(cuArrayGetDescriptor(&got, au));
	printf("uchar4 array: format %#x channels %u\n",
	       (unsigned int)got.Format, got.NumChannels);
	memset(&a3, 0, sizeof(a3));
	a3.Width = W;
	a3.Height = H;
	a3.Depth = 3;
	a3.Format = CU_AD_FORMAT_HALF;
	a3.NumChannels = 2;
	a3.Flags = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST;
	CKD(cuArray3DCreate(&al, &a3));
	CKD(cuArray3DGetDescriptor(&got3, al));
	printf("layered array: %zux%zux%zu format %#x channels %u flags %u\n",
	       got3.Width, got3.Height, got3.Depth, (unsigned int)got3.Format,
	       got3.NumChannels, got3.Flags);
	copy_in(af, hf, W * sizeof(float));
	copy_in(au, hu, W * 4);

	CK(cudaMalloc(&d, sizeof(out)));
	memset(&rd, 0, sizeof(rd));
	rd.resType = CU_RESOURCE_TYPE_ARRAY;
	rd.res.array.hArray = af;
	memset(&td, 0, sizeof(td));
	td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
	td.filterMode = CU_TR_FILTER_MODE_POINT;
	CKD(cuTexObjectCreate(&tf, &rd, &td, NULL));
	fetch_f<<<H, W>>>(tf, d, 1.0f);
	CK(cudaMemcpy(out, d, sizeof(out), cudaMemcpyDeviceToHost));
	printf("float texture, clamped: %.1f\n", sumf(out, H * W));
	td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_WRAP;
	td.flags = CU_TRSF_NORMALIZED_COORDINATES;
	CKD(cuTexObjectCreate(&tl, &rd, &td, NULL));
	fetch_f<<<H, W>>>(tl, d, 1.0f / W);
	CK(cudaMemcpy(out, d, sizeof(out), cudaMemcpyDeviceToHost));
	printf("float texture, normalised and wrapped: %.1f\n",
	       sumf(out, H * W));

	rd.res.array.hArray = au;
	td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
	td.flags = 0;
	CKD(cuTexObjectCreate(&tp, &rd, &td, NULL));
	td.flags = CU_TRSF_READ_AS_INTEGER;
	CKD(cuTexObjectCreate(&tr, &rd, &td, NULL));
	CK(cudaMalloc(&dpf, sizeof(pf)));
	CK(cudaMalloc(&dpu, sizeof(pu)));
	fetch_u4<<<H, W>>>(tp, tr, dpf, dpu);
	CK(cudaMemcpy(pf, dpf, sizeof(pf), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(pu, dpu, sizeof(pu), cudaMemcpyDeviceToHost));
	printf("uchar4 promoted: %.4f %.4f; as integers: %u %u\n",
	       pf[37].x, pf[37].w, pu[37].x, pu[37].w);

	/* Pitched memory under a texture. */
	CKD(cuMemAllocPitch(&lin, &pitch, W * sizeof(float), H, 4));
	CK(cudaMemcpy2D((void *)(uintptr_t)lin, pitch, hf, W * sizeof(float),
			W * sizeof(float), H, cudaMemcpyHostToDevice));
	memset(&rd, 0, sizeof(rd));
	rd.resType = CU_RESOURCE_TYPE_PITCH2D;
	rd.res.pitch2D.devPtr = lin;
	rd.res.pitch2D.format = CU_AD_FORMAT_FLOAT;
	rd.res.pitch2D.numChannels = 1;
	rd.res.pitch2D.width = W;
	rd.res.pitch2D.height = H;
	rd.res.pitch2D.pitchInBytes = pitch;
	CKD(cuTexObjectDestroy(tl));
	CKD(cuTexObjectCreate(&tl, &rd, &td, NULL));
	fetch_f<<<H, W>>>(tl, d, 1.0f);
	CK(cudaMemcpy(out, d, sizeof(out), cudaMemcpyDeviceToHost));
	printf("pitched texture: %.1f\n", sumf(out, H * W));

	/* A surface over the float array, written, then read back. */
	memset(&rd, 0, sizeof(rd));
	rd.resType = CU_RESOURCE_TYPE_ARRAY;
	rd.res.array.hArray = af;
	SHOWD(cuSurfObjectCreate(&so, &rd));
	CKD(cuArrayDestroy(af));
	ad.Format = CU_AD_FORMAT_FLOAT;
	ad.NumChannels = 1;
	memset(&a3, 0, sizeof(a3));
	a3.Width = W;
	a3.Height = H;
	a3.Format = CU_AD_FORMAT_FLOAT;
	a3.NumChannels = 1;
	a3.Flags = CUDA_ARRAY3D_SURFACE_LDST;
	CKD(cuArray3DCreate(&af, &a3));
	rd.res.array.hArray = af;
	CKD(cuSurfObjectCreate(&so, &rd));
	write_surf<<<H, W>>>(so);
	CK(cudaDeviceSynchronize());
	{
		CUDA_MEMCPY2D c;

		memset(&c, 0, sizeof(c));
		c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
		c.srcArray = af;
		c.dstMemoryType = CU_MEMORYTYPE_HOST;
		c.dstHost = out;
		c.dstPitch = W * sizeof(float);
		c.WidthInBytes = W * sizeof(float);
		c.Height = H;
		CKD(cuMemcpy2D(&c));
	}
	printf("surface written: %.1f\n", sumf(out, H * W));
	CKD(cuSurfObjectDestroy(so));

	ad.Format = (CUarray_format)0x77;
	SHOWD(cuArrayCreate(&al, &ad));
	ad.Format = CU_AD_FORMAT_FLOAT;
	ad.NumChannels = 3;
	SHOWD(cuArrayCreate(&al, &ad));

	CKD(cuTexObjectDestroy(tf));
	CKD(cuTexObjectDestroy(tp));
	CKD(cuTexObjectDestroy(tr));
	CKD(cuTexObjectDestroy(tl));
	CKD(cuArrayDestroy(af));
	CKD(cuArrayDestroy(au));
	CKD(cuMemFree(lin));
	CK(cudaFree(d));
	CK(cudaFree(dpf));
	CK(cudaFree(dpu));
	CKD(cuDevicePrimaryCtxRelease(dev));
	printf("%s: %d failures\n", xct_drv_failures ? "FAILED" : "PASSED",
	       xct_drv_failures);
	return xct_drv_failures ? 1 : 0;
}
