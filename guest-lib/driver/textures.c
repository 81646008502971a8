// SPDX-License-Identifier: MIT
/*
 * The driver's arrays and texture and surface objects, made with the
 * runtime's calls: a CUarray is a cudaArray_t, a CUtexObject a
 * cudaTextureObject_t and a CUsurfObject a cudaSurfaceObject_t.  The
 * driver describes an element by a format and a channel count, the
 * runtime by a channel descriptor; the driver's texture flags are the
 * runtime's read mode and switches.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "driver.h"

/* The runtime's element of @n channels of @f; 0 or an error. */
static CUresult xc_fmt_in(CUarray_format f, unsigned int n,
			  struct cudaChannelFormatDesc *d)
{
	enum cudaChannelFormatKind kind;
	int bits;

	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
		kind = cudaChannelFormatKindUnsigned, bits = 8;
		break;
	case CU_AD_FORMAT_UNSIGNED_INT16:
		kind = cudaChannelFormatKindUnsigned, bits = 16;
		break;
	case CU_AD_FORMAT_UNSIGNED_INT32:
		kind = cudaChannelFormatKindUnsigned, bits = 32;
		break;
	case CU_AD_FORMAT_SIGNED_INT8:
		kind = cudaChannelFormatKindSigned, bits = 8;
		break;
	case CU_AD_FORMAT_SIGNED_INT16:
		kind = cudaChannelFormatKindSigned, bits = 16;
		break;
	case CU_AD_FORMAT_SIGNED_INT32:
		kind = cudaChannelFormatKindSigned, bits = 32;
		break;
	case CU_AD_FORMAT_HALF:
		kind = cudaChannelFormatKindFloat, bits = 16;
		break;
	case CU_AD_FORMAT_FLOAT:
		kind = cudaChannelFormatKindFloat, bits = 32;
		break;
	/* Normalised, block-compressed and video formats. */
	case CU_AD_FORMAT_NV12:
	case CU_AD_FORMAT_UNORM_INT8X1:
	case CU_AD_FORMAT_UNORM_INT8X2:
	case CU_AD_FORMAT_UNORM_INT8X4:
	case CU_AD_FORMAT_UNORM_INT16X1:
	case CU_AD_FORMAT_UNORM_INT16X2:
	case CU_AD_FORMAT_UNORM_INT16X4:
	case CU_AD_FORMAT_SNORM_INT8X1:
	case CU_AD_FORMAT_SNORM_INT8X2:
	case CU_AD_FORMAT_SNORM_INT8X4:
	case CU_AD_FORMAT_SNORM_INT16X1:
	case CU_AD_FORMAT_SNORM_INT16X2:
	case CU_AD_FORMAT_SNORM_INT16X4:
	case CU_AD_FORMAT_BC1_UNORM:
	case CU_AD_FORMAT_BC1_UNORM_SRGB:
	case CU_AD_FORMAT_BC2_UNORM:
	case CU_AD_FORMAT_BC2_UNORM_SRGB:
	case CU_AD_FORMAT_BC3_UNORM:
	case CU_AD_FORMAT_BC3_UNORM_SRGB:
	case CU_AD_FORMAT_BC4_UNORM:
	case CU_AD_FORMAT_BC4_SNORM:
	case CU_AD_FORMAT_BC5_UNORM:
	case CU_AD_FORMAT_BC5_SNORM:
	case CU_AD_FORMAT_BC6H_UF16:
	case CU_AD_FORMAT_BC6H_SF16:
	case CU_AD_FORMAT_BC7_UNORM:
	case CU_AD_FORMAT_BC7_UNORM_SRGB:
	case CU_AD_FORMAT_P010:
	case CU_AD_FORMAT_P016:
	case CU_AD_FORMAT_NV16:
	case CU_AD_FORMAT_P210:
	case CU_AD_FORMAT_P216:
	case CU_AD_FORMAT_YUY2:
	case CU_AD_FORMAT_Y210:
	case CU_AD_FORMAT_Y216:
	case CU_AD_FORMAT_AYUV:
	case CU_AD_FORMAT_Y410:
	case CU_AD_FORMAT_Y416:
	case CU_AD_FORMAT_Y444_PLANAR8:
	case CU_AD_FORMAT_Y444_PLANAR10:
	case CU_AD_FORMAT_YUV444_8bit_SemiPlanar:
	case CU_AD_FORMAT_YUV444_16bit_SemiPlanar:
	case CU_AD_FORMAT_UNORM_INT_101010_2:
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (n != 1 && n != 2 && n != 4)
		return CUDA_ERROR_INVALID_VALUE;
	*d = (struct cudaChannelFormatDesc){
		bits, n > 1 ? bits : 0, n > 2 ? bits : 0, n > 2 ? bits : 0,
		kind };
	return CUDA_SUCCESS;
}

/* The driver's format and channel count of the runtime's element @d. */
static CUresult xc_fmt_out(const struct cudaChannelFormatDesc *d,
			   CUarray_format *f, unsigned int *n)
{
	static const struct {
		enum cudaChannelFormatKind kind;
		int bits;
		CUarray_format f;
	} map[] = {
		{ cudaChannelFormatKindUnsigned, 8,
		  CU_AD_FORMAT_UNSIGNED_INT8 },
		{ cudaChannelFormatKindUnsigned, 16,
		  CU_AD_FORMAT_UNSIGNED_INT16 },
		{ cudaChannelFormatKindUnsigned, 32,
		  CU_AD_FORMAT_UNSIGNED_INT32 },
		{ cudaChannelFormatKindSigned, 8, CU_AD_FORMAT_SIGNED_INT8 },
		{ cudaChannelFormatKindSigned, 16, CU_AD_FORMAT_SIGNED_INT16 },
		{ cudaChannelFormatKindSigned, 32, CU_AD_FORMAT_SIGNED_INT32 },
		{ cudaChannelFormatKindFloat, 16, CU_AD_FORMAT_HALF },
		{ cudaChannelFormatKindFloat, 32, CU_AD_FORMAT_FLOAT },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (map[i].kind != d->f || map[i].bits != d->x)
			continue;
		*f = map[i].f;
		*n = 1 + (d->y != 0) + 2 * (d->z != 0);
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuArrayCreate_v2(CUarray *pHandle,
			  const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
	struct cudaChannelFormatDesc d;
	CUresult err = (CUresult)xc_drv_enter(1);

	if (err)
		return err;
	if (!pHandle || !pAllocateArray)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_fmt_in(pAllocateArray->Format, pAllocateArray->NumChannels,
			&d);
	if (err)
		return err;
	return XC_DRV_RT(cudaMallocArray((cudaArray_t *)pHandle, &d,
					 pAllocateArray->Width,
					 pAllocateArray->Height, 0));
}

/* The 3D flags (layered, surfaces, cube maps, gather) are the runtime's. */
CUresult cuArray3DCreate_v2(CUarray *pHandle,
			    const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
	const CUDA_ARRAY3D_DESCRIPTOR *a = pAllocateArray;
	struct cudaChannelFormatDesc d;
	CUresult err = (CUresult)xc_drv_enter(1);

	if (err)
		return err;
	if (!pHandle || !a)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_fmt_in(a->Format, a->NumChannels, &d);
	if (err)
		return err;
	return XC_DRV_RT(cudaMalloc3DArray(
		(cudaArray_t *)pHandle, &d,
		(struct cudaExtent){ a->Width, a->Height, a->Depth },
		a->Flags));
}

CUresult cuArrayDestroy(CUarray hArray)
{
	XC_DRV_CALL(cudaFreeArray((cudaArray_t)hArray));
}

static CUresult xc_array_info(CUarray a, CUarray_format *f, unsigned int *n,
			      struct cudaExtent *e, unsigned int *flags)
{
	struct cudaChannelFormatDesc d;
	CUresult err = (CUresult)xc_drv_enter(1);

	if (err)
		return err;
	err = XC_DRV_RT(cudaArrayGetInfo(&d, e, flags, (cudaArray_t)a));
	return err ? err : xc_fmt_out(&d, f, n);
}

CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor,
				 CUarray hArray)
{
	struct cudaExtent e;
	unsigned int flags;
	CUresult err;

	if (!pArrayDescriptor)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_array_info(hArray, &pArrayDescriptor->Format,
			    &pArrayDescriptor->NumChannels, &e, &flags);
	if (err)
		return err;
	pArrayDescriptor->Width = e.width;
	pArrayDescriptor->Height = e.height;
	return CUDA_SUCCESS;
}

CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor,
				   CUarray hArray)
{
	struct cudaExtent e;
	unsigned int flags;
	CUresult err;

	if (!pArrayDescriptor)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_array_info(hArray, &pArrayDescriptor->Format,
			    &pArrayDescriptor->NumChannels, &e, &flags);
	if (err)
		return err;
	pArrayDescriptor->Width = e.width;
	pArrayDescriptor->Height = e.height;
	pArrayDescriptor->Depth = e.depth;
	pArrayDescriptor->Flags = flags;
	return CUDA_SUCCESS;
}

/*
 * The runtime's resource, and whether reads promote its integers to
 * floats by default (8- and 16-bit integer elements, as the driver does).
 */
static CUresult xc_res_in(const CUDA_RESOURCE_DESC *r,
			  struct cudaResourceDesc *d, int *promotes)
{
	struct cudaChannelFormatDesc c;
	struct cudaExtent e;
	unsigned int flags;
	CUresult err = CUDA_SUCCESS;

	memset(d, 0, sizeof(*d));
	memset(&c, 0, sizeof(c));
	if (r->flags)
		return CUDA_ERROR_INVALID_VALUE;
	d->resType = (enum cudaResourceType)r->resType;
	switch (r->resType) {
	case CU_RESOURCE_TYPE_ARRAY:
		d->res.array.array = (cudaArray_t)r->res.array.hArray;
		err = XC_DRV_RT(cudaArrayGetInfo(&c, &e, &flags,
						 d->res.array.array));
		break;
	case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
		d->res.mipmap.mipmap =
			(cudaMipmappedArray_t)r->res.mipmap.hMipmappedArray;
		break;
	case CU_RESOURCE_TYPE_LINEAR:
		err = xc_fmt_in(r->res.linear.format, r->res.linear.numChannels,
				&c);
		d->res.linear.devPtr = (void *)(uintptr_t)r->res.linear.devPtr;
		d->res.linear.desc = c;
		d->res.linear.sizeInBytes = r->res.linear.sizeInBytes;
		break;
	case CU_RESOURCE_TYPE_PITCH2D:
		err = xc_fmt_in(r->res.pitch2D.format,
				r->res.pitch2D.numChannels, &c);
		d->res.pitch2D.devPtr =
			(void *)(uintptr_t)r->res.pitch2D.devPtr;
		d->res.pitch2D.desc = c;
		d->res.pitch2D.width = r->res.pitch2D.width;
		d->res.pitch2D.height = r->res.pitch2D.height;
		d->res.pitch2D.pitchInBytes = r->res.pitch2D.pitchInBytes;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	*promotes = c.f != cudaChannelFormatKindFloat && c.x && c.x <= 16;
	return err;
}

CUresult cuTexObjectCreate(CUtexObject *pTexObject,
			   const CUDA_RESOURCE_DESC *pResDesc,
			   const CUDA_TEXTURE_DESC *pTexDesc,
			   const CUDA_RESOURCE_VIEW_DESC *pResViewDesc)
{
	const CUDA_RESOURCE_VIEW_DESC *v = pResViewDesc;
	const CUDA_TEXTURE_DESC *t = pTexDesc;
	struct cudaResourceViewDesc rv;
	struct cudaResourceDesc rd;
	struct cudaTextureDesc td;
	int promotes, i;
	CUresult err = (CUresult)xc_drv_enter(1);

	if (err)
		return err;
	if (!pTexObject || !pResDesc || !t)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_res_in(pResDesc, &rd, &promotes);
	if (err)
		return err;
	memset(&td, 0, sizeof(td));
	for (i = 0; i < 3; i++)
		td.addressMode[i] =
			(enum cudaTextureAddressMode)t->addressMode[i];
	td.filterMode = (enum cudaTextureFilterMode)t->filterMode;
	td.readMode = promotes && !(t->flags & CU_TRSF_READ_AS_INTEGER) ?
		      cudaReadModeNormalizedFloat : cudaReadModeElementType;
	td.sRGB = !!(t->flags & CU_TRSF_SRGB);
	memcpy(td.borderColor, t->borderColor, sizeof(td.borderColor));
	td.normalizedCoords = !!(t->flags & CU_TRSF_NORMALIZED_COORDINATES);
	td.maxAnisotropy = t->maxAnisotropy;
	td.mipmapFilterMode = (enum cudaTextureFilterMode)t->mipmapFilterMode;
	td.mipmapLevelBias = t->mipmapLevelBias;
	td.minMipmapLevelClamp = t->minMipmapLevelClamp;
	td.maxMipmapLevelClamp = t->maxMipmapLevelClamp;
	td.disableTrilinearOptimization =
		!!(t->flags & CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION);
	td.seamlessCubemap = !!(t->flags & CU_TRSF_SEAMLESS_CUBEMAP);
	if (v) {
		memset(&rv, 0, sizeof(rv));
		rv.format = (enum cudaResourceViewFormat)v->format;
		rv.width = v->width;
		rv.height = v->height;
		rv.depth = v->depth;
		rv.firstMipmapLevel = v->firstMipmapLevel;
		rv.lastMipmapLevel = v->lastMipmapLevel;
		rv.firstLayer = v->firstLayer;
		rv.lastLayer = v->lastLayer;
	}
	return XC_DRV_RT(cudaCreateTextureObject(
		(cudaTextureObject_t *)pTexObject, &rd, &td, v ? &rv : NULL));
}

CUresult cuTexObjectDestroy(CUtexObject texObject)
{
	XC_DRV_CALL(cudaDestroyTextureObject(texObject));
}

CUresult cuSurfObjectCreate(CUsurfObject *pSurfObject,
			    const CUDA_RESOURCE_DESC *pResDesc)
{
	struct cudaResourceDesc rd;
	int promotes;
	CUresult err = (CUresult)xc_drv_enter(1);

	if (err)
		return err;
	if (!pSurfObject || !pResDesc)
		return CUDA_ERROR_INVALID_VALUE;
	err = xc_res_in(pResDesc, &rd, &promotes);
	if (err)
		return err;
	return XC_DRV_RT(cudaCreateSurfaceObject(
		(cudaSurfaceObject_t *)pSurfObject, &rd));
}

CUresult cuSurfObjectDestroy(CUsurfObject surfObject)
{
	XC_DRV_CALL(cudaDestroySurfaceObject(surfObject));
}
