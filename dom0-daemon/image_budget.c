// SPDX-License-Identifier: MIT
/*
 * The module images a worker keeps (image_budget.h).  The worker's
 * thread loads and unloads modules; the count needs no lock.
 */
#include "image_budget.h"

static uint64_t xd_image_bytes;

int xd_image_charge(uint64_t bytes)
{
	if (bytes > XD_MAX_IMAGE_BYTES - xd_image_bytes)
		return -1;
	xd_image_bytes += bytes;
	return 0;
}

void xd_image_uncharge(uint64_t bytes)
{
	xd_image_bytes -= bytes < xd_image_bytes ? bytes : xd_image_bytes;
}

uint64_t xd_image_charged(void)
{
	return xd_image_bytes;
}
