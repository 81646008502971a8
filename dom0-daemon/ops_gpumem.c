// SPDX-License-Identifier: MIT
/*
 * The GPU memory quota in the worker (gpumem.h, docs/security.md
 * "Limits").  xd_handle() asks xd_gpumem_before() about every validated
 * request before any CUDA call, its device switch included: a request
 * that allocates GPU memory is charged with the bytes CUDA would take at
 * least (the size rounded up to a page, rows to 512 bytes, a mipmap
 * chain counted as twice its first level), and answered
 * cudaErrorMemoryAllocation (CUDA_ERROR_OUT_OF_MEMORY, the same value)
 * without reaching CUDA when the domain's quota would be passed.
 * xd_gpumem_after() gives the charge back when CUDA failed, else
 * remembers it under what the guest will free it by (the device pointer,
 * or the array, mipmap or allocation handle); a successful free gives
 * it back.  What the worker still holds when it ends goes with its slot.
 *
 * Counted: MALLOC, MALLOC_PITCH, MALLOC_3D, MALLOC_ASYNC,
 * MALLOC_FROM_POOL_ASYNC, MALLOC_MANAGED, MALLOC_ARRAY, MALLOC_3D_ARRAY,
 * MALLOC_MIPMAPPED_ARRAY, DRV_MEM_ALLOC, DRV_MEM_CREATE; given back by
 * FREE, FREE_ASYNC, DRV_MEM_FREE, FREE_ARRAY, FREE_MIPMAPPED_ARRAY,
 * DRV_MEM_RELEASE, and all of a device's by DEVICE_RESET.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpumem.h"
#include "log.h"
#include "ops.h"
#include "validate.h"

enum { XD_GM_PTR = 1, XD_GM_ARRAY, XD_GM_MIPMAP, XD_GM_VMM };

struct xd_gm_rec {
	struct xd_gm_rec *next;
	uint64_t key;
	uint64_t bytes;
	int kind;
	int device;
};

#define XD_GM_BUCKETS	1024

static struct xd_gm_rec *xd_gm_tab[XD_GM_BUCKETS];

static unsigned int xd_gm_bucket(int kind, uint64_t key)
{
	uint64_t h = (key ^ ((uint64_t)kind << 56)) * 0x9e3779b97f4a7c15ull;

	return (unsigned int)(h >> 54) % XD_GM_BUCKETS;
}

static struct xd_gm_rec **xd_gm_find(int kind, uint64_t key)
{
	struct xd_gm_rec **pp = &xd_gm_tab[xd_gm_bucket(kind, key)];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->kind == kind && (*pp)->key == key)
			return pp;
	return pp;
}

/* Gives back what @kind @key holds, if it was counted. */
static void xd_gm_release(int kind, uint64_t key)
{
	struct xd_gm_rec **pp = xd_gm_find(kind, key), *r = *pp;

	if (!r)
		return;
	*pp = r->next;
	xd_gpumem_uncharge(r->bytes);
	free(r);
}

static void xd_gm_remember(int kind, uint64_t key, uint64_t bytes,
			   int device)
{
	struct xd_gm_rec **pp = xd_gm_find(kind, key), *r = *pp;

	/* CUDA gave the same key twice: the old one was freed behind us. */
	if (r) {
		xd_gpumem_uncharge(r->bytes);
		r->bytes = bytes;
		r->device = device;
		return;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		/* Without a record it could never be given back. */
		xd_gpumem_uncharge(bytes);
		return;
	}
	r->kind = kind;
	r->key = key;
	r->bytes = bytes;
	r->device = device;
	*pp = r;
}

/* Everything device @device held: a reset freed it. */
static void xd_gm_release_device(int device)
{
	struct xd_gm_rec **pp, *r;
	unsigned int i;

	for (i = 0; i < XD_GM_BUCKETS; i++) {
		pp = &xd_gm_tab[i];
		while ((r = *pp)) {
			if (r->device == device) {
				*pp = r->next;
				xd_gpumem_uncharge(r->bytes);
				free(r);
			} else {
				pp = &r->next;
			}
		}
	}
}

static uint64_t xd_gm_pitched(uint64_t width, uint64_t height,
			      uint64_t depth)
{
	uint64_t row = xd_gpumem_round(width, XD_GPUMEM_PITCH);

	if (!width || !height || !depth)
		return 0;
	return xd_gpumem_mul(xd_gpumem_mul(row, height), depth);
}

/* An array's bytes: its elements' rows, pitched; 0 sizes count as 1. */
static uint64_t xd_gm_array(const struct cudaChannelFormatDesc *d,
			    uint64_t w, uint64_t h, uint64_t depth)
{
	uint64_t bits = (uint64_t)(uint32_t)d->x + (uint32_t)d->y +
			(uint32_t)d->z + (uint32_t)d->w;
	uint64_t elem = (bits + 7) / 8;

	/* Block-compressed and odd formats: at least 16 bytes an element. */
	if (!elem || elem > 16)
		elem = 16;
	return xd_gm_pitched(xd_gpumem_mul(w ? w : 1, elem), h ? h : 1,
			     depth ? depth : 1);
}

/* The bytes @req allocates; 0 for requests that allocate nothing. */
static uint64_t xd_gm_request_bytes(const struct xcuda_request *req)
{
	const void *a = req->args;
	uint64_t n;

	switch (req->hdr.op) {
	case XCUDA_OP_MALLOC:
		n = ((const struct xcuda_malloc_args *)a)->size;
		break;
	case XCUDA_OP_MALLOC_PITCH: {
		const struct xcuda_malloc_pitch_args *p = a;

		n = xd_gm_pitched(p->width, p->height, 1);
		break;
	}
	case XCUDA_OP_MALLOC_3D: {
		const struct xcuda_malloc_3d_args *p = a;

		n = xd_gm_pitched(p->extent.width, p->extent.height,
				  p->extent.depth);
		break;
	}
	case XCUDA_OP_MALLOC_ASYNC:
		n = ((const struct xcuda_malloc_async_args *)a)->size;
		break;
	case XCUDA_OP_MALLOC_FROM_POOL_ASYNC:
		n = ((const struct xcuda_malloc_from_pool_async_args *)a)->size;
		break;
	case XCUDA_OP_MALLOC_MANAGED:
		n = ((const struct xcuda_malloc_managed_args *)a)->size;
		break;
	case XCUDA_OP_MALLOC_ARRAY: {
		const struct xcuda_malloc_array_args *p = a;

		n = xd_gm_array(&p->desc, p->width, p->height, 1);
		break;
	}
	case XCUDA_OP_MALLOC_3D_ARRAY: {
		const struct xcuda_malloc_3d_array_args *p = a;

		n = xd_gm_array(&p->desc, p->extent.width, p->extent.height,
				p->extent.depth);
		break;
	}
	case XCUDA_OP_MALLOC_MIPMAPPED_ARRAY: {
		const struct xcuda_malloc_mipmapped_array_args *p = a;

		n = xd_gm_array(&p->desc, p->extent.width, p->extent.height,
				p->extent.depth);
		/* Every level after the first together: less than it. */
		if (p->numLevels != 1)
			n = xd_gpumem_mul(n, 2);
		break;
	}
	case XCUDA_OP_DRV_MEM_ALLOC:
		n = ((const struct xcuda_drv_mem_alloc_args *)a)->bytesize;
		break;
	case XCUDA_OP_DRV_MEM_CREATE:
		n = ((const struct xcuda_drv_mem_create_args *)a)->size;
		break;
	default:
		return 0;
	}
	return xd_gpumem_round(n, XD_GPUMEM_PAGE);
}

int xd_gpumem_before(struct xd_session *s, const struct xcuda_request *req,
		     uint64_t *charged)
{
	uint64_t n;

	(void)s;
	*charged = 0;
	if (!xd_gpumem_bound())
		return 0;
	n = xd_gm_request_bytes(req);
	if (!n)
		return 0;
	if (xd_gpumem_charge(n)) {
		xd_log_ratelimited(XD_LOG_WARN, "%s of %llu bytes: over the "
				   "domain's GPU memory quota",
				   xd_op_name(req->hdr.op),
				   (unsigned long long)n);
		return cudaErrorMemoryAllocation;
	}
	*charged = n;
	return 0;
}

void xd_gpumem_after(struct xd_session *s, const struct xcuda_request *req,
		     uint64_t charged, int err, const void *res)
{
	const void *a = req->args;
	int dev = s->device;
	uint64_t key;
	int kind = XD_GM_PTR;

	if (!xd_gpumem_bound())
		return;
	if (charged) {
		if (err) {
			xd_gpumem_uncharge(charged);
			return;
		}
		switch (req->hdr.op) {
		case XCUDA_OP_MALLOC_ARRAY:
		case XCUDA_OP_MALLOC_3D_ARRAY:
			kind = XD_GM_ARRAY;
			key = *(const uint32_t *)res;
			break;
		case XCUDA_OP_MALLOC_MIPMAPPED_ARRAY:
			kind = XD_GM_MIPMAP;
			key = *(const uint32_t *)res;
			break;
		case XCUDA_OP_DRV_MEM_CREATE:
			kind = XD_GM_VMM;
			key = ((const struct xcuda_drv_mem_create_res *)
			       res)->handle;
			break;
		case XCUDA_OP_MALLOC_3D:
			key = (uintptr_t)((const struct xcuda_malloc_3d_res *)
					  res)->pitchedDevPtr.ptr;
			break;
		default:
			/* Every other one answers its pointer first. */
			memcpy(&key, res, sizeof(key));
			break;
		}
		xd_gm_remember(kind, key, charged, dev);
		return;
	}
	if (err)
		return;
	switch (req->hdr.op) {
	case XCUDA_OP_FREE:
		xd_gm_release(XD_GM_PTR,
			      ((const struct xcuda_free_args *)a)->ptr);
		break;
	case XCUDA_OP_FREE_ASYNC:
		xd_gm_release(XD_GM_PTR,
			      ((const struct xcuda_free_async_args *)a)->devPtr);
		break;
	case XCUDA_OP_DRV_MEM_FREE:
		xd_gm_release(XD_GM_PTR,
			      ((const struct xcuda_drv_mem_free_args *)a)->dptr);
		break;
	case XCUDA_OP_FREE_ARRAY:
		xd_gm_release(XD_GM_ARRAY,
			      ((const struct xcuda_free_array_args *)a)->array);
		break;
	case XCUDA_OP_FREE_MIPMAPPED_ARRAY:
		xd_gm_release(XD_GM_MIPMAP,
			      ((const struct xcuda_free_mipmapped_array_args *)
			       a)->mipmappedArray);
		break;
	case XCUDA_OP_DRV_MEM_RELEASE:
		xd_gm_release(XD_GM_VMM,
			      ((const struct xcuda_drv_mem_release_args *)
			       a)->handle);
		break;
	case XCUDA_OP_DEVICE_RESET:
		xd_gm_release_device(dev);
		break;
	default:
		break;
	}
}

/* The session's end: CUDA frees what it held with the context. */
static void xd_gm_fini(struct xd_session *s)
{
	unsigned int i;
	struct xd_gm_rec *r;

	(void)s;
	for (i = 0; i < XD_GM_BUCKETS; i++) {
		while ((r = xd_gm_tab[i])) {
			xd_gm_tab[i] = r->next;
			xd_gpumem_uncharge(r->bytes);
			free(r);
		}
	}
}

XD_SESSION_HOOKS(gpumem, 90, NULL, xd_gm_fini);
