// SPDX-License-Identifier: MIT
/*
 * Hopper's tensor maps (DRV_TENSOR_MAP_ENCODE): 128-byte descriptors
 * the driver builds on the host from a global address and the tensor's
 * shape.  The worker's driver builds them; here each array is copied as
 * far as the driver reads it for the rank, and no further.
 */
#include <string.h>

#include "driver.h"

enum { XC_TM_TILED, XC_TM_IM2COL, XC_TM_IM2COL_WIDE, XC_TM_REPLACE };

struct xc_tm_arrays {
	const cuuint64_t *dims, *strides;
	const cuuint32_t *box, *estrides;
	const int *lower, *upper;
};

static CUresult xc_tm_call(struct xcuda_drv_tensor_map_encode_args *a,
			   const struct xc_tm_arrays *v, CUtensorMap *map)
{
	struct xc_xfer x = { map, sizeof(*map), XC_XFER_INOUT, &a->map };
	uint32_t r = a->rank;
	int err = xc_drv_enter(1);

	if (err)
		return (CUresult)err;
	if (!map || r > 5)
		return CUDA_ERROR_INVALID_VALUE;
	/* The driver reads rank dims, rank - 1 strides, rank - 2 corners. */
	if (v->dims) {
		a->present |= 1u << 0;
		memcpy(a->dims, v->dims, r * sizeof(*v->dims));
	}
	if (v->strides) {
		a->present |= 1u << 1;
		memcpy(a->strides, v->strides, (r ? r - 1 : 0) * 8);
	}
	if (v->box) {
		a->present |= 1u << 2;
		memcpy(a->box, v->box, r * sizeof(*v->box));
	}
	if (v->estrides) {
		a->present |= 1u << 3;
		memcpy(a->estrides, v->estrides, r * sizeof(*v->estrides));
	}
	if (v->lower) {
		a->present |= 1u << 4;
		memcpy(a->lower, v->lower, (r > 2 ? r - 2 : 0) * sizeof(int));
	}
	if (v->upper) {
		a->present |= 1u << 5;
		memcpy(a->upper, v->upper, (r > 2 ? r - 2 : 0) * sizeof(int));
	}
	return xc_drv_result(xc_drv_forward_xfer(XCUDA_OP_DRV_TENSOR_MAP_ENCODE,
						 a, sizeof(*a), NULL, 0, &x,
						 1));
}

static void xc_tm_common(struct xcuda_drv_tensor_map_encode_args *a,
			 uint32_t how, CUtensorMapDataType dtype,
			 cuuint32_t rank, void *address,
			 CUtensorMapInterleave interleave,
			 CUtensorMapSwizzle swizzle,
			 CUtensorMapL2promotion l2,
			 CUtensorMapFloatOOBfill oob)
{
	memset(a, 0, sizeof(*a));
	a->how = how;
	a->dtype = dtype;
	a->rank = rank;
	a->address = (uintptr_t)address;
	a->interleave = interleave;
	a->swizzle = swizzle;
	a->l2 = l2;
	a->oob = oob;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap,
				CUtensorMapDataType tensorDataType,
				cuuint32_t tensorRank, void *globalAddress,
				const cuuint64_t *globalDim,
				const cuuint64_t *globalStrides,
				const cuuint32_t *boxDim,
				const cuuint32_t *elementStrides,
				CUtensorMapInterleave interleave,
				CUtensorMapSwizzle swizzle,
				CUtensorMapL2promotion l2Promotion,
				CUtensorMapFloatOOBfill oobFill)
{
	struct xcuda_drv_tensor_map_encode_args a;
	struct xc_tm_arrays v = { globalDim, globalStrides, boxDim,
				  elementStrides, NULL, NULL };

	xc_tm_common(&a, XC_TM_TILED, tensorDataType, tensorRank,
		     globalAddress, interleave, swizzle, l2Promotion, oobFill);
	return xc_tm_call(&a, &v, tensorMap);
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap *tensorMap,
				 CUtensorMapDataType tensorDataType,
				 cuuint32_t tensorRank, void *globalAddress,
				 const cuuint64_t *globalDim,
				 const cuuint64_t *globalStrides,
				 const int *pixelBoxLowerCorner,
				 const int *pixelBoxUpperCorner,
				 cuuint32_t channelsPerPixel,
				 cuuint32_t pixelsPerColumn,
				 const cuuint32_t *elementStrides,
				 CUtensorMapInterleave interleave,
				 CUtensorMapSwizzle swizzle,
				 CUtensorMapL2promotion l2Promotion,
				 CUtensorMapFloatOOBfill oobFill)
{
	struct xcuda_drv_tensor_map_encode_args a;
	struct xc_tm_arrays v = { globalDim, globalStrides, NULL,
				  elementStrides, pixelBoxLowerCorner,
				  pixelBoxUpperCorner };

	xc_tm_common(&a, XC_TM_IM2COL, tensorDataType, tensorRank,
		     globalAddress, interleave, swizzle, l2Promotion, oobFill);
	a.channels = channelsPerPixel;
	a.pixels = pixelsPerColumn;
	return xc_tm_call(&a, &v, tensorMap);
}

CUresult cuTensorMapEncodeIm2colWide(CUtensorMap *tensorMap,
				     CUtensorMapDataType tensorDataType,
				     cuuint32_t tensorRank, void *globalAddress,
				     const cuuint64_t *globalDim,
				     const cuuint64_t *globalStrides,
				     int pixelBoxLowerCornerWidth,
				     int pixelBoxUpperCornerWidth,
				     cuuint32_t channelsPerPixel,
				     cuuint32_t pixelsPerColumn,
				     const cuuint32_t *elementStrides,
				     CUtensorMapInterleave interleave,
				     CUtensorMapIm2ColWideMode mode,
				     CUtensorMapSwizzle swizzle,
				     CUtensorMapL2promotion l2Promotion,
				     CUtensorMapFloatOOBfill oobFill)
{
	struct xcuda_drv_tensor_map_encode_args a;
	struct xc_tm_arrays v = { globalDim, globalStrides, NULL,
				  elementStrides, NULL, NULL };

	xc_tm_common(&a, XC_TM_IM2COL_WIDE, tensorDataType, tensorRank,
		     globalAddress, interleave, swizzle, l2Promotion, oobFill);
	a.lower_w = pixelBoxLowerCornerWidth;
	a.upper_w = pixelBoxUpperCornerWidth;
	a.channels = channelsPerPixel;
	a.pixels = pixelsPerColumn;
	a.mode = mode;
	return xc_tm_call(&a, &v, tensorMap);
}

CUresult cuTensorMapReplaceAddress(CUtensorMap *tensorMap,
				   void *globalAddress)
{
	struct xcuda_drv_tensor_map_encode_args a;
	struct xc_tm_arrays v = { NULL, NULL, NULL, NULL, NULL, NULL };

	xc_tm_common(&a, XC_TM_REPLACE, 0, 0, globalAddress, 0, 0, 0, 0);
	return xc_tm_call(&a, &v, tensorMap);
}
