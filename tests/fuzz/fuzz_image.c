// SPDX-License-Identifier: MIT
/*
 * Module images: xcuda_image_size() (common/image.c), which the worker
 * runs on every fatbinary, cubin or PTX text a guest uploads
 * (MODULE_DATA, the driver's cuModuleLoadData*, cuLinkAddData) before it
 * hands the image to CUDA: CUDA reads as far as the image's own headers
 * say, so they must lie within the worker's copy.
 *
 * Input: the image.  The worker's copy is the image and one NUL after it,
 * measured with that NUL counted as available; the guest library
 * measures a program's image with no NUL after it.  Both are run.
 *
 * What a measure must be: 0 (refused) or at most the bytes available,
 * and the same image measures the same in both.
 */
#include "common/image.h"
#include "xcuda/proto.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size + 1), *exact;
	uint64_t n, m;

	if (!copy)
		return 0;
	/* As the worker: the image, then a NUL that is not part of it. */
	memcpy(copy, data, size);
	copy[size] = 0;
	n = xcuda_image_size(copy, (uint64_t)size + 1);
	FZ_CHECK(n <= (uint64_t)size + 1);
	FZ_CHECK(n <= XCUDA_MAX_MODULE + 1);
	free(copy);

	/* As the guest library: exactly the bytes, nothing after. */
	if (!size)
		return 0;
	exact = malloc(size);
	if (!exact)
		return 0;
	memcpy(exact, data, size);
	m = xcuda_image_size(exact, size);
	FZ_CHECK(m <= size);
	/* An image complete without the NUL measures the same with it. */
	FZ_CHECK(!m || m == n);
	free(exact);
	return 0;
}
