/* SPDX-License-Identifier: MIT */
/*
 * Texture and surface objects: a texture on a 2D array with linear
 * filtering and normalized coordinates, on linear memory
 * (cudaResourceTypeLinear), on pitched memory (cudaResourceTypePitch2D)
 * and on a mipmapped array, each read by a kernel; the descriptors read
 * back (resource, texture, view); a surface object written by a kernel
 * with surf2Dwrite, read back by a copy and by surf2Dread.  Sampled
 * values are printed to 4 decimals: the filtering is the device's own.
 */
#include "common/xct.h"

__global__ void sample2d(cudaTextureObject_t t, float *out, int n, int w,
			 int h)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	/* Between texels: the filter weighs four of them. */
	float u = ((i * 7) % (w * 4) + 0.3f) / (4.0f * w);
	float v = ((i * 3) % (h * 4) + 0.6f) / (4.0f * h);
	out[i] = tex2D<float>(t, u, v);
}

__global__ void fetch1d(cudaTextureObject_t t, int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = tex1Dfetch<int>(t, n - 1 - i) * 3;
}

__global__ void pitch2d(cudaTextureObject_t t, float *out, int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y;
	if (x < w && y < h)
		out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f) + 1.0f;
}

__global__ void lod(cudaTextureObject_t t, float *out)
{
	int l = threadIdx.x;
	out[l] = tex2DLod<float>(t, 0.3f, 0.7f, (float)l);
}

__global__ void surf_write(cudaSurfaceObject_t s, int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y;
	if (x < w && y < h)
		surf2Dwrite((unsigned int)(x * 1000 + y), s,
			    x * (int)sizeof(unsigned int), y);
}

__global__ void surf_sum(cudaSurfaceObject_t s, int w, int h,
			 unsigned long long *sum)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y;
	if (x < w && y < h) {
		unsigned int v;
		surf2Dread(&v, s, x * (int)sizeof(unsigned int), y);
		atomicAdd(sum, (unsigned long long)v * (x + 1));
	}
}

static void show_tex_desc(const char *what, cudaTextureObject_t t)
{
	cudaTextureDesc d;
	memset(&d, 0x7f, sizeof(d));
	CK(cudaGetTextureObjectTextureDesc(&d, t));
	printf("%s texture desc: address %d,%d filter %d read %d normalized "
	       "%d\n", what, (int)d.addressMode[0], (int)d.addressMode[1],
	       (int)d.filterMode, (int)d.readMode, d.normalizedCoords);
}

int main(void)
{
	CK(cudaSetDevice(0));

	/* ---- 2D array, linear filtering, normalized coordinates ---- */
	const int W = 16, H = 12, N = 256;
	float img[H][W];
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			img[y][x] = (float)(x * x) + 10.0f * y;
	cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
	cudaArray_t arr;
	CK(cudaMallocArray(&arr, &fd, W, H));
	CK(cudaMemcpy2DToArray(arr, 0, 0, img, W * 4, W * 4, H,
			       cudaMemcpyHostToDevice));
	cudaResourceDesc rd;
	memset(&rd, 0, sizeof(rd));
	rd.resType = cudaResourceTypeArray;
	rd.res.array.array = arr;
	cudaTextureDesc td;
	memset(&td, 0, sizeof(td));
	td.addressMode[0] = cudaAddressModeClamp;
	td.addressMode[1] = cudaAddressModeWrap;
	td.filterMode = cudaFilterModeLinear;
	td.readMode = cudaReadModeElementType;
	td.normalizedCoords = 1;
	cudaTextureObject_t tex;
	CK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
	float *dout, hout[N];
	CK(cudaMalloc(&dout, N * sizeof(float)));
	sample2d<<<(N + 63) / 64, 64>>>(tex, dout, N, W, H);
	CKLAUNCH();
	CK(cudaMemcpy(hout, dout, sizeof(hout), cudaMemcpyDeviceToHost));
	double acc = 0;
	for (int i = 0; i < N; i++)
		acc += hout[i] * (i % 5 + 1);
	printf("2D linear normalized: [0] %.4f [1] %.4f [77] %.4f [255] "
	       "%.4f weighted %.4f\n", hout[0], hout[1], hout[77], hout[255],
	       acc);

	cudaResourceDesc back;
	memset(&back, 0x55, sizeof(back));
	CK(cudaGetTextureObjectResourceDesc(&back, tex));
	printf("array texture resource: type %d, same array %s\n",
	       (int)back.resType, xct_yes(back.res.array.array == arr));
	show_tex_desc("array", tex);
	cudaResourceViewDesc vd;
	memset(&vd, 0, sizeof(vd));
	cudaError_t ve = cudaGetTextureObjectResourceViewDesc(&vd, tex);
	cudaGetLastError();
	/* CUDA fills the descriptor with what it likes: the status only. */
	printf("view desc of a texture made without one: %s\n",
	       cudaGetErrorName(ve));

	/* ---- linear memory ---- */
	const int L = 1000;
	int hl[L], *dl, *dlo;
	for (int i = 0; i < L; i++)
		hl[i] = i * i - 7;
	CK(cudaMalloc(&dl, sizeof(hl)));
	CK(cudaMalloc(&dlo, sizeof(hl)));
	CK(cudaMemcpy(dl, hl, sizeof(hl), cudaMemcpyHostToDevice));
	memset(&rd, 0, sizeof(rd));
	rd.resType = cudaResourceTypeLinear;
	rd.res.linear.devPtr = dl;
	rd.res.linear.desc = cudaCreateChannelDesc<int>();
	rd.res.linear.sizeInBytes = sizeof(hl);
	memset(&td, 0, sizeof(td));
	td.readMode = cudaReadModeElementType;
	cudaTextureObject_t lt;
	CK(cudaCreateTextureObject(&lt, &rd, &td, NULL));
	fetch1d<<<(L + 127) / 128, 128>>>(lt, dlo, L);
	CKLAUNCH();
	int hlo[L];
	CK(cudaMemcpy(hlo, dlo, sizeof(hlo), cudaMemcpyDeviceToHost));
	bool ok = true;
	for (int i = 0; i < L; i++)
		ok &= hlo[i] == hl[L - 1 - i] * 3;
	printf("linear tex1Dfetch: match=%d sum=%016llx\n", ok,
	       (unsigned long long)xct_sum(hlo, sizeof(hlo)));
	CK(cudaGetTextureObjectResourceDesc(&back, lt));
	printf("linear resource: type %d same pointer %s size %zu desc %d,%d "
	       "kind %d\n", (int)back.resType,
	       xct_yes(back.res.linear.devPtr == dl),
	       back.res.linear.sizeInBytes, back.res.linear.desc.x,
	       back.res.linear.desc.y, (int)back.res.linear.desc.f);
	show_tex_desc("linear", lt);

	/* ---- pitch2D ---- */
	const int PW = 50, PH = 20;
	float *pm, *po;
	size_t pitch;
	CK(cudaMallocPitch(&pm, &pitch, PW * sizeof(float), PH));
	float ph[PH][PW];
	for (int y = 0; y < PH; y++)
		for (int x = 0; x < PW; x++)
			ph[y][x] = x * 0.25f - y;
	CK(cudaMemcpy2D(pm, pitch, ph, sizeof(ph[0]), sizeof(ph[0]), PH,
			cudaMemcpyHostToDevice));
	memset(&rd, 0, sizeof(rd));
	rd.resType = cudaResourceTypePitch2D;
	rd.res.pitch2D.devPtr = pm;
	rd.res.pitch2D.desc = fd;
	rd.res.pitch2D.width = PW;
	rd.res.pitch2D.height = PH;
	rd.res.pitch2D.pitchInBytes = pitch;
	memset(&td, 0, sizeof(td));
	td.filterMode = cudaFilterModePoint;
	td.readMode = cudaReadModeElementType;
	cudaTextureObject_t pt;
	CK(cudaCreateTextureObject(&pt, &rd, &td, NULL));
	CK(cudaMalloc(&po, sizeof(ph)));
	pitch2d<<<dim3((PW + 31) / 32, PH), 32>>>(pt, po, PW, PH);
	CKLAUNCH();
	float pr[PH][PW];
	CK(cudaMemcpy(pr, po, sizeof(pr), cudaMemcpyDeviceToHost));
	ok = true;
	for (int y = 0; y < PH; y++)
		for (int x = 0; x < PW; x++)
			ok &= pr[y][x] == ph[y][x] + 1.0f;
	printf("pitch2D point reads: match=%d\n", ok);
	CK(cudaGetTextureObjectResourceDesc(&back, pt));
	printf("pitch2D resource: type %d same pointer %s %zu x %zu pitch "
	       "ok %s\n", (int)back.resType,
	       xct_yes(back.res.pitch2D.devPtr == pm), back.res.pitch2D.width,
	       back.res.pitch2D.height,
	       xct_yes(back.res.pitch2D.pitchInBytes == pitch));

	/* ---- mipmapped array ---- */
	cudaMipmappedArray_t mm;
	CK(cudaMallocMipmappedArray(&mm, &fd, make_cudaExtent(8, 8, 0), 3));
	for (unsigned int l = 0; l < 3; l++) {
		cudaArray_t lv;
		int s = 8 >> l;
		float v[64];
		for (int i = 0; i < s * s; i++)
			v[i] = 100.0f * l + i;
		CK(cudaGetMipmappedArrayLevel(&lv, mm, l));
		CK(cudaMemcpy2DToArray(lv, 0, 0, v, s * 4, s * 4, s,
				       cudaMemcpyHostToDevice));
	}
	memset(&rd, 0, sizeof(rd));
	rd.resType = cudaResourceTypeMipmappedArray;
	rd.res.mipmap.mipmap = mm;
	memset(&td, 0, sizeof(td));
	td.filterMode = cudaFilterModePoint;
	td.mipmapFilterMode = cudaFilterModePoint;
	td.normalizedCoords = 1;
	td.maxMipmapLevelClamp = 2;
	cudaTextureObject_t mt;
	CK(cudaCreateTextureObject(&mt, &rd, &td, NULL));
	float lo[3];
	lod<<<1, 3>>>(mt, dout);
	CKLAUNCH();
	CK(cudaMemcpy(lo, dout, sizeof(lo), cudaMemcpyDeviceToHost));
	printf("mipmap lod reads: %.4f %.4f %.4f\n", lo[0], lo[1], lo[2]);
	CK(cudaGetTextureObjectResourceDesc(&back, mt));
	printf("mipmap resource: type %d same mipmap %s\n",
	       (int)back.resType, xct_yes(back.res.mipmap.mipmap == mm));

	/* ---- surface ---- */
	const int SW = 40, SH = 24;
	cudaChannelFormatDesc ud = cudaCreateChannelDesc<unsigned int>();
	cudaArray_t sa;
	CK(cudaMallocArray(&sa, &ud, SW, SH, cudaArraySurfaceLoadStore));
	memset(&rd, 0, sizeof(rd));
	rd.resType = cudaResourceTypeArray;
	rd.res.array.array = sa;
	cudaSurfaceObject_t surf;
	CK(cudaCreateSurfaceObject(&surf, &rd));
	surf_write<<<dim3((SW + 15) / 16, SH), 16>>>(surf, SW, SH);
	CKLAUNCH();
	unsigned int sh[SH][SW];
	CK(cudaMemcpy2DFromArray(sh, SW * 4, sa, 0, 0, SW * 4, SH,
				 cudaMemcpyDeviceToHost));
	ok = true;
	for (int y = 0; y < SH; y++)
		for (int x = 0; x < SW; x++)
			ok &= sh[y][x] == (unsigned int)(x * 1000 + y);
	unsigned long long *dsum, hsum = 0, want = 0;
	CK(cudaMalloc(&dsum, sizeof(*dsum)));
	CK(cudaMemset(dsum, 0, sizeof(*dsum)));
	surf_sum<<<dim3((SW + 15) / 16, SH), 16>>>(surf, SW, SH, dsum);
	CKLAUNCH();
	CK(cudaMemcpy(&hsum, dsum, sizeof(hsum), cudaMemcpyDeviceToHost));
	for (int y = 0; y < SH; y++)
		for (int x = 0; x < SW; x++)
			want += (unsigned long long)(x * 1000 + y) * (x + 1);
	printf("surface write/read: match=%d sum %llu (want %llu)\n", ok,
	       hsum, want);
	CK(cudaGetSurfaceObjectResourceDesc(&back, surf));
	printf("surface resource: type %d same array %s\n", (int)back.resType,
	       xct_yes(back.res.array.array == sa));

	/* ---- errors ---- */
	cudaTextureObject_t bad;
	memset(&rd, 0, sizeof(rd));
	rd.resType = cudaResourceTypeArray;
	rd.res.array.array = arr;
	SHOW(cudaCreateTextureObject(&bad, &rd, NULL, NULL));
	SHOW(cudaCreateTextureObject(NULL, &rd, &td, NULL));
	cudaSurfaceObject_t bs;
	SHOW(cudaCreateSurfaceObject(&bs, NULL));

	CK(cudaDestroyTextureObject(tex));
	CK(cudaDestroyTextureObject(lt));
	CK(cudaDestroyTextureObject(pt));
	CK(cudaDestroyTextureObject(mt));
	CK(cudaDestroySurfaceObject(surf));
	CK(cudaFreeArray(arr));
	CK(cudaFreeArray(sa));
	CK(cudaFreeMipmappedArray(mm));
	CK(cudaFree(dout));
	CK(cudaFree(dl));
	CK(cudaFree(dlo));
	CK(cudaFree(pm));
	CK(cudaFree(po));
	CK(cudaFree(dsum));
	return xct_finish("textures");
}
