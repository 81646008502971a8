/* SPDX-License-Identifier: MIT */
/*
 * The extent of a module image, as CUDA reads it: a fatbinary's header
 * and payload, a cubin's ELF headers, tables and sections, or PTX text
 * up to its NUL.  The guest library measures what a program hands it;
 * the worker checks that what a guest sent holds all of it, so that the
 * driver never reads past the copy it is given.
 */
#ifndef XCUDA_COMMON_IMAGE_H
#define XCUDA_COMMON_IMAGE_H

#include <stdint.h>

#define XCUDA_FATBIN_MAGIC	0xba55ed50u	/* a fatbinary */
#define XCUDA_FATBINC_MAGIC	0x466243b1u	/* nvcc's wrapper of one */
#define XCUDA_ELF_MAGIC		0x464c457fu	/* "\x7fELF": a cubin */

/*
 * The bytes of the image at @image, reading no further than @avail; 0
 * when it is malformed, nvcc's wrapper (not an image), bigger than
 * XCUDA_MAX_MODULE, or would need more than @avail bytes.  PTX text
 * counts its NUL.
 */
uint64_t xcuda_image_size(const void *image, uint64_t avail);

#endif /* XCUDA_COMMON_IMAGE_H */
