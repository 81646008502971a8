// SPDX-License-Identifier: MIT
#include <string.h>

#include "res_desc.h"

void xcuda_res_to_wire(const struct cudaResourceDesc *r, xcuda_res_t *w)
{
	const struct cudaChannelFormatDesc *f = NULL;

	memset(w, 0, sizeof(*w));
	w->res_type = r->resType;
	w->res_flags = r->flags;
	switch (r->resType) {
	case cudaResourceTypeLinear:
		w->devptr = (uintptr_t)r->res.linear.devPtr;
		f = &r->res.linear.desc;
		w->size = r->res.linear.sizeInBytes;
		break;
	case cudaResourceTypePitch2D:
		w->devptr = (uintptr_t)r->res.pitch2D.devPtr;
		f = &r->res.pitch2D.desc;
		w->width = r->res.pitch2D.width;
		w->height = r->res.pitch2D.height;
		w->pitch = r->res.pitch2D.pitchInBytes;
		break;
	default:
		break;
	}
	if (f) {
		w->fmt[0] = f->x;
		w->fmt[1] = f->y;
		w->fmt[2] = f->z;
		w->fmt[3] = f->w;
		w->fmt[4] = f->f;
	}
}

void xcuda_res_from_wire(const xcuda_res_t *w, struct cudaResourceDesc *r)
{
	struct cudaChannelFormatDesc f = {
		w->fmt[0], w->fmt[1], w->fmt[2], w->fmt[3],
		(enum cudaChannelFormatKind)w->fmt[4]
	};

	memset(r, 0, sizeof(*r));
	r->resType = (enum cudaResourceType)w->res_type;
	r->flags = w->res_flags;
	switch (w->res_type) {
	case cudaResourceTypeLinear:
		r->res.linear.devPtr = (void *)(uintptr_t)w->devptr;
		r->res.linear.desc = f;
		r->res.linear.sizeInBytes = w->size;
		break;
	case cudaResourceTypePitch2D:
		r->res.pitch2D.devPtr = (void *)(uintptr_t)w->devptr;
		r->res.pitch2D.desc = f;
		r->res.pitch2D.width = w->width;
		r->res.pitch2D.height = w->height;
		r->res.pitch2D.pitchInBytes = w->pitch;
		break;
	}
}
