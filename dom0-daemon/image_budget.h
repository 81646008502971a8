/* SPDX-License-Identifier: MIT */
/*
 * The module images a worker keeps: each loaded module's private copy
 * (CUDA may read it until the module is unloaded) and an upload under
 * way.  One session may hold at most XD_MAX_IMAGE_BYTES of them, so that
 * a guest cannot grow its worker without bound by loading module after
 * module (4096 handles of 256 MiB each would be a terabyte).  A worker
 * serves one session: the count is the process's.
 */
#ifndef XCUDAD_IMAGE_BUDGET_H
#define XCUDAD_IMAGE_BUDGET_H

#include <stdint.h>

/* Four of the largest images (XCUDA_MAX_MODULE) at once. */
#define XD_MAX_IMAGE_BYTES	(1ull << 30)

/* @bytes more kept: 0, or -1 (nothing counted) past the budget. */
int xd_image_charge(uint64_t bytes);
/* @bytes charged before are freed. */
void xd_image_uncharge(uint64_t bytes);
/* What is charged now. */
uint64_t xd_image_charged(void);

#endif /* XCUDAD_IMAGE_BUDGET_H */
