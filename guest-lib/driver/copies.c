// SPDX-License-Identifier: MIT
/*
 * The driver's copies of 2D and 3D regions, of arrays and between
 * devices, made with the runtime's calls: a CUarray is a cudaArray_t and
 * a context stands for its device.  The driver describes each side by a
 * memory type (host, device, unified, array) and counts in bytes; the
 * runtime takes a kind, and counts an array's columns in elements.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "driver.h"

/* One side of a copy: where it starts, or its array and offsets. */
struct xc_side {
	void *p;		/* the first byte (host, device, unified) */
	cudaArray_t array;	/* or the array */
	size_t x, y, z;		/* the array's offsets: x in bytes */
	size_t pitch, height;
	int host, unified;
};

static CUresult xc_side(CUmemorytype type, const void *host, CUdeviceptr dev,
			CUarray array, size_t x, size_t y, size_t z,
			size_t pitch, size_t height, struct xc_side *s)
{
	s->array = NULL;
	s->host = 0;
	s->unified = type == CU_MEMORYTYPE_UNIFIED;
	s->pitch = pitch;
	s->height = height;
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		s->host = 1;
		s->p = (char *)host + (z * height + y) * pitch + x;
		return CUDA_SUCCESS;
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:
		s->p = (char *)(uintptr_t)dev + (z * height + y) * pitch + x;
		return CUDA_SUCCESS;
	case CU_MEMORYTYPE_ARRAY:
		if (!array)
			return CUDA_ERROR_INVALID_VALUE;
		s->array = (cudaArray_t)array;
		s->x = x;
		s->y = y;
		s->z = z;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* The runtime's kind between two sides that are not both arrays. */
static enum cudaMemcpyKind xc_kind(const struct xc_side *d,
				   const struct xc_side *s)
{
	int dh = !d->array && d->host, sh = !s->array && s->host;

	if (d->unified || s->unified)
		return cudaMemcpyDefault;
	if (sh)
		return dh ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice;
	return dh ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
}

static cudaError_t xc_copy2d(const struct xc_side *d, const struct xc_side *s,
			     size_t w, size_t h, cudaStream_t st, int async)
{
	enum cudaMemcpyKind k = xc_kind(d, s);

	if (d->array && s->array)
		return async ? cudaErrorNotSupported :
		       cudaMemcpy2DArrayToArray(d->array, d->x, d->y,
						s->array, s->x, s->y, w, h,
						cudaMemcpyDeviceToDevice);
	if (d->array)
		return async ? cudaMemcpy2DToArrayAsync(d->array, d->x, d->y,
							s->p, s->pitch, w, h,
							k, st) :
		       cudaMemcpy2DToArray(d->array, d->x, d->y, s->p,
					   s->pitch, w, h, k);
	if (s->array)
		return async ? cudaMemcpy2DFromArrayAsync(d->p, d->pitch,
							  s->array, s->x,
							  s->y, w, h, k, st) :
		       cudaMemcpy2DFromArray(d->p, d->pitch, s->array, s->x,
					     s->y, w, h, k);
	return async ? cudaMemcpy2DAsync(d->p, d->pitch, s->p, s->pitch, w, h,
					 k, st) :
	       cudaMemcpy2D(d->p, d->pitch, s->p, s->pitch, w, h, k);
}

/*
 * The per-thread default stream's forms (_ptds, _ptsz): a synchronous
 * copy is one on that stream, waited for.
 */
enum { XC_SYNC, XC_ASYNC, XC_SYNC_PT, XC_ASYNC_PT };

static cudaStream_t xc_stream(CUstream st, int mode)
{
	return !st && mode >= XC_SYNC_PT ? cudaStreamPerThread : st;
}

static cudaError_t xc_done(cudaError_t err, int mode)
{
	if (!err && mode == XC_SYNC_PT)
		err = cudaStreamSynchronize(cudaStreamPerThread);
	return err;
}

static CUresult xc_drv_copy2d(const CUDA_MEMCPY2D *c, CUstream st, int mode)
{
	struct xc_side d, s;
	CUresult err = (CUresult)xc_drv_enter(1);

	if (err)
		return err;
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_side(c->srcMemoryType, c->srcHost, c->srcDevice,
		      c->srcArray, c->srcXInBytes, c->srcY, 0, c->srcPitch, 0,
		      &s);
	if (!err)
		err = xc_side(c->dstMemoryType, c->dstHost, c->dstDevice,
			      c->dstArray, c->dstXInBytes, c->dstY, 0,
			      c->dstPitch, 0, &d);
	if (err)
		return err;
	/* The runtime copies between arrays only synchronously. */
	if (d.array && s.array && mode == XC_SYNC_PT)
		mode = XC_SYNC;
	return XC_DRV_RT(xc_done(xc_copy2d(&d, &s, c->WidthInBytes, c->Height,
					   xc_stream(st, mode),
					   mode != XC_SYNC), mode));
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
	return xc_drv_copy2d(pCopy, NULL, XC_SYNC);
}

CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
	return xc_drv_copy2d(pCopy, NULL, XC_SYNC);
}

CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	return xc_drv_copy2d(pCopy, hStream, XC_ASYNC);
}

CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy);
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
	return xc_drv_copy2d(pCopy, NULL, XC_SYNC_PT);
}

CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy);
CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
	return xc_drv_copy2d(pCopy, NULL, XC_SYNC_PT);
}

CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy,
				 CUstream hStream);
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy,
				 CUstream hStream)
{
	return xc_drv_copy2d(pCopy, hStream, XC_ASYNC_PT);
}

/* An array's element size, for the runtime's counts in elements. */
static cudaError_t xc_elem_size(cudaArray_t a, size_t *size)
{
	struct cudaChannelFormatDesc d;
	struct cudaExtent e;
	unsigned int flags;
	cudaError_t err = cudaArrayGetInfo(&d, &e, &flags, a);

	if (err)
		return err;
	*size = (size_t)(d.x + d.y + d.z + d.w) / 8;
	return *size ? cudaSuccess : cudaErrorInvalidValue;
}

/* The runtime's description of one side of a 3D copy. */
static cudaError_t xc_side3d(const struct xc_side *s, size_t width,
			     cudaArray_t *array, struct cudaPitchedPtr *ptr,
			     struct cudaPos *pos, size_t *unit)
{
	*unit = 1;
	*pos = (struct cudaPos){ 0, 0, 0 };
	if (!s->array) {
		*array = NULL;
		*ptr = (struct cudaPitchedPtr){
			.ptr = s->p, .pitch = s->pitch, .xsize = width,
			.ysize = s->height ? s->height : 1,
		};
		return cudaSuccess;
	}
	*array = s->array;
	*ptr = (struct cudaPitchedPtr){ NULL, 0, 0, 0 };
	if (xc_elem_size(s->array, unit) || s->x % *unit)
		return cudaErrorInvalidValue;
	*pos = (struct cudaPos){ s->x / *unit, s->y, s->z };
	return cudaSuccess;
}

static CUresult xc_drv_copy3d(const CUDA_MEMCPY3D *c, CUstream st, int mode)
{
	struct cudaMemcpy3DParms p;
	struct xc_side d, s;
	size_t du, su, unit;
	cudaError_t rt;
	CUresult err = (CUresult)xc_drv_enter(1);

	if (err)
		return err;
	if (!c || c->reserved0 || c->reserved1 || c->srcLOD || c->dstLOD)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_side(c->srcMemoryType, c->srcHost, c->srcDevice,
		      c->srcArray, c->srcXInBytes, c->srcY, c->srcZ,
		      c->srcPitch, c->srcHeight, &s);
	if (!err)
		err = xc_side(c->dstMemoryType, c->dstHost, c->dstDevice,
			      c->dstArray, c->dstXInBytes, c->dstY, c->dstZ,
			      c->dstPitch, c->dstHeight, &d);
	if (err)
		return err;
	memset(&p, 0, sizeof(p));
	rt = xc_side3d(&s, c->WidthInBytes, &p.srcArray, &p.srcPtr, &p.srcPos,
		       &su);
	if (!rt)
		rt = xc_side3d(&d, c->WidthInBytes, &p.dstArray, &p.dstPtr,
			       &p.dstPos, &du);
	if (rt)
		return XC_DRV_RT(rt);
	/* With an array the width is in its elements, else in bytes. */
	unit = su > du ? su : du;
	if (c->WidthInBytes % unit)
		return CUDA_ERROR_INVALID_VALUE;
	p.extent = (struct cudaExtent){ c->WidthInBytes / unit, c->Height,
					c->Depth };
	p.kind = d.array && s.array ? cudaMemcpyDeviceToDevice :
		 xc_kind(&d, &s);
	return XC_DRV_RT(xc_done(mode == XC_SYNC ? cudaMemcpy3D(&p) :
				 cudaMemcpy3DAsync(&p, xc_stream(st, mode)),
				 mode));
}

CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
	return xc_drv_copy3d(pCopy, NULL, XC_SYNC);
}

CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
	return xc_drv_copy3d(pCopy, hStream, XC_ASYNC);
}

CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy);
CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy)
{
	return xc_drv_copy3d(pCopy, NULL, XC_SYNC_PT);
}

CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy,
				 CUstream hStream);
CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy,
				 CUstream hStream)
{
	return xc_drv_copy3d(pCopy, hStream, XC_ASYNC_PT);
}

/* A 1D copy to or from an array: one row of @n bytes. */
static CUresult xc_array1d(CUmemorytype dt, void *dh, CUdeviceptr dd,
			   CUarray da, size_t doff, CUmemorytype st,
			   const void *sh, CUdeviceptr sd, CUarray sa,
			   size_t soff, size_t n, CUstream stream, int mode)
{
	CUDA_MEMCPY2D c;

	memset(&c, 0, sizeof(c));
	c.dstMemoryType = dt;
	c.dstHost = dh;
	c.dstDevice = dd;
	c.dstArray = da;
	c.dstXInBytes = doff;
	c.dstPitch = n;
	c.srcMemoryType = st;
	c.srcHost = sh;
	c.srcDevice = sd;
	c.srcArray = sa;
	c.srcXInBytes = soff;
	c.srcPitch = n;
	c.WidthInBytes = n;
	c.Height = 1;
	return xc_drv_copy2d(&c, stream, mode);
}

CUresult cuMemcpyAtoH_v2(void *dstHost, CUarray srcArray, size_t srcOffset,
			 size_t ByteCount)
{
	return xc_array1d(CU_MEMORYTYPE_HOST, dstHost, 0, NULL, 0,
			  CU_MEMORYTYPE_ARRAY, NULL, 0, srcArray, srcOffset,
			  ByteCount, NULL, XC_SYNC);
}

CUresult cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset,
			 const void *srcHost, size_t ByteCount)
{
	return xc_array1d(CU_MEMORYTYPE_ARRAY, NULL, 0, dstArray, dstOffset,
			  CU_MEMORYTYPE_HOST, srcHost, 0, NULL, 0, ByteCount,
			  NULL, XC_SYNC);
}

CUresult cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray,
			 size_t srcOffset, size_t ByteCount)
{
	return xc_array1d(CU_MEMORYTYPE_DEVICE, NULL, dstDevice, NULL, 0,
			  CU_MEMORYTYPE_ARRAY, NULL, 0, srcArray, srcOffset,
			  ByteCount, NULL, XC_SYNC);
}

CUresult cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset,
			 CUdeviceptr srcDevice, size_t ByteCount)
{
	return xc_array1d(CU_MEMORYTYPE_ARRAY, NULL, 0, dstArray, dstOffset,
			  CU_MEMORYTYPE_DEVICE, NULL, srcDevice, NULL, 0,
			  ByteCount, NULL, XC_SYNC);
}

CUresult cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray,
			 size_t srcOffset, size_t ByteCount)
{
	return xc_array1d(CU_MEMORYTYPE_ARRAY, NULL, 0, dstArray, dstOffset,
			  CU_MEMORYTYPE_ARRAY, NULL, 0, srcArray, srcOffset,
			  ByteCount, NULL, XC_SYNC);
}

CUresult cuMemcpyAtoHAsync_v2(void *dstHost, CUarray srcArray,
			      size_t srcOffset, size_t ByteCount,
			      CUstream hStream)
{
	return xc_array1d(CU_MEMORYTYPE_HOST, dstHost, 0, NULL, 0,
			  CU_MEMORYTYPE_ARRAY, NULL, 0, srcArray, srcOffset,
			  ByteCount, hStream, XC_ASYNC);
}

CUresult cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset,
			      const void *srcHost, size_t ByteCount,
			      CUstream hStream)
{
	return xc_array1d(CU_MEMORYTYPE_ARRAY, NULL, 0, dstArray, dstOffset,
			  CU_MEMORYTYPE_HOST, srcHost, 0, NULL, 0, ByteCount,
			  hStream, XC_ASYNC);
}

/* Between two contexts' memory: between their devices. */
static CUresult xc_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
			CUcontext sctx, size_t n, CUstream st, int mode)
{
	void *d = (void *)(uintptr_t)dst;
	const void *s = (const void *)(uintptr_t)src;
	int dd, sd;
	CUresult err = (CUresult)xc_drv_enter(1);

	if (err)
		return err;
	dd = xc_ctx_device(dctx);
	sd = xc_ctx_device(sctx);
	if (dd < 0 || sd < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (mode == XC_SYNC)
		return XC_DRV_RT(cudaMemcpyPeer(d, dd, s, sd, n));
	return XC_DRV_RT(xc_done(cudaMemcpyPeerAsync(d, dd, s, sd, n,
						     xc_stream(st, mode)),
				 mode));
}

CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext,
		      CUdeviceptr srcDevice, CUcontext srcContext,
		      size_t ByteCount)
{
	return xc_peer(dstDevice, dstContext, srcDevice, srcContext,
		       ByteCount, NULL, XC_SYNC);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
			   CUdeviceptr srcDevice, CUcontext srcContext,
			   size_t ByteCount, CUstream hStream)
{
	return xc_peer(dstDevice, dstContext, srcDevice, srcContext,
		       ByteCount, hStream, XC_ASYNC);
}

CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext,
			   CUdeviceptr srcDevice, CUcontext srcContext,
			   size_t ByteCount);
CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext,
			   CUdeviceptr srcDevice, CUcontext srcContext,
			   size_t ByteCount)
{
	return xc_peer(dstDevice, dstContext, srcDevice, srcContext,
		       ByteCount, NULL, XC_SYNC_PT);
}

CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
				CUdeviceptr srcDevice, CUcontext srcContext,
				size_t ByteCount, CUstream hStream);
CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
				CUdeviceptr srcDevice, CUcontext srcContext,
				size_t ByteCount, CUstream hStream)
{
	return xc_peer(dstDevice, dstContext, srcDevice, srcContext,
		       ByteCount, hStream, XC_ASYNC_PT);
}
