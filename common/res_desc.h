/* SPDX-License-Identifier: MIT */
/*
 * A texture or surface object's resource descriptor and its wire form
 * (CREATE_SURFACE_OBJECT's arguments), both ways, as the guest library
 * and the worker both convert it.  Array handles are each side's own
 * business: these leave them zero (NULL), for the caller to fill in.
 */
#ifndef XCUDA_COMMON_RES_DESC_H
#define XCUDA_COMMON_RES_DESC_H

#include <cuda_runtime_api.h>

#include "xcuda/calls.h"

/* The wire's descriptor. */
typedef struct xcuda_create_surface_object_args xcuda_res_t;

void xcuda_res_to_wire(const struct cudaResourceDesc *r, xcuda_res_t *w);
void xcuda_res_from_wire(const xcuda_res_t *w, struct cudaResourceDesc *r);

#endif /* XCUDA_COMMON_RES_DESC_H */
