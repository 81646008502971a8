// SPDX-License-Identifier: MIT
/*
 * The guest library's local parts: the arena allocator, the range table
 * and the error table, which must answer exactly as the real runtime.
 */
#include <string.h>

#include "guest-lib/guest.h"
#include "check.h"

static void test_arena(void)
{
	struct xc_arena *a = xc_arena_new(4096, 1 << 20);
	uint64_t x, y, z, start;
	int ok;

	x = xc_arena_alloc(a, 100, 64);
	y = xc_arena_alloc(a, 5000, 4096);
	z = xc_arena_alloc(a, 1, 64);
	CHECK(x == 4096, "arena-first-block-at-base");
	CHECK(y % 4096 == 0 && y >= x + 100, "arena-aligned-block");
	CHECK(z != UINT64_MAX && (z >= y + 5000 || z + 64 <= y),
	      "arena-blocks-do-not-overlap");
	CHECK(xc_arena_find(a, y + 10, &start) >= 5000 && start == y,
	      "arena-find-inside-block");
	CHECK(xc_arena_alloc(a, 2 << 20, 64) == UINT64_MAX,
	      "arena-too-big-fails");
	CHECK(xc_arena_release(a, y + 1) == 0, "arena-release-not-a-start");
	CHECK(xc_arena_release(a, y) >= 5000, "arena-release");
	CHECK(xc_arena_release(a, y) == 0, "arena-double-release-refused");
	xc_arena_release(a, x);
	xc_arena_release(a, z);
	/* Everything merged back: the whole extent fits again. */
	CHECK(xc_arena_alloc(a, 1 << 20, 64) == 4096, "arena-coalesces");
	xc_arena_free_all(a);

	a = xc_arena_new(0, 64 * 100);
	ok = 1;
	for (int i = 0; i < 100; i++)
		if (xc_arena_alloc(a, 64, 64) != (uint64_t)i * 64)
			ok = 0;
	CHECK(ok && xc_arena_alloc(a, 1, 1) == UINT64_MAX,
	      "arena-fills-exactly");
	CHECK(xc_arena_alloc(a, 0, 64) == UINT64_MAX &&
	      xc_arena_alloc(a, 64, 3) == UINT64_MAX, "arena-bad-arguments");
	xc_arena_free_all(a);
}

static void test_ranges(void)
{
	struct xc_range r = { 0 }, out;

	r.start = 0x10000;
	r.size = 0x1000;
	r.kind = XC_R_DEVICE;
	xc_range_add(&r);
	r.start = 0x30000;
	r.kind = XC_R_HOST_REGISTERED;
	xc_range_add(&r);
	CHECK(!xc_range_find(0x10fff, &out) && out.kind == XC_R_DEVICE,
	      "range-find-last-byte");
	CHECK(xc_range_find(0x11000, &out), "range-find-past-end");
	CHECK(xc_range_find(0xffff, &out), "range-find-before");
	CHECK(xc_range_del(0x30000, XC_R_DEVICE, NULL),
	      "range-del-wrong-kind-refused");
	CHECK(!xc_range_del(0x30000, XC_R_HOST_REGISTERED, NULL),
	      "range-del");
	CHECK(xc_range_find(0x30000, &out), "range-gone-after-del");
	xc_range_drop_kind(XC_R_DEVICE);
	CHECK(xc_range_find(0x10000, &out), "range-drop-kind");
}

static void test_dev_extents(void)
{
	struct xc_range r = { 0 };

	r.start = 0x7000000;
	r.size = 0x1000;
	r.kind = XC_R_DEVICE;
	xc_range_add(&r);
	CHECK(xc_range_dev_extent(0x7000000, 0x1000), "extent-whole-block");
	CHECK(xc_range_dev_extent(0x7000ff0, 16), "extent-tail");
	CHECK(!xc_range_dev_extent(0x7000ff0, 17), "extent-runs-off-the-end");
	CHECK(!xc_range_dev_extent(0x7000000, 0), "extent-empty-is-not-known");
	CHECK(!xc_range_dev_extent(0x6ffffff, 2), "extent-starts-before");
	CHECK(!xc_range_dev_extent(0x7000010, UINT64_MAX),
	      "extent-huge-length");
	xc_range_del(0x7000000, XC_R_DEVICE, NULL);
	CHECK(!xc_range_dev_extent(0x7000000, 1), "extent-freed-block");
	r.kind = XC_R_HOST_PINNED;
	xc_range_add(&r);
	CHECK(!xc_range_dev_extent(0x7000000, 1), "extent-host-is-not-device");
	xc_range_del(0x7000000, XC_R_HOST_PINNED, NULL);

	CHECK(xc_extent_2d(256, 100, 3) == 612, "extent2d-span");
	CHECK(xc_extent_2d(256, 100, 0) == 0 && xc_extent_2d(256, 0, 5) == 0,
	      "extent2d-empty");
	CHECK(xc_extent_2d(100, 101, 2) == 0, "extent2d-width-over-pitch");
	CHECK(xc_extent_2d(UINT64_MAX / 2, 8, 4) == 0, "extent2d-overflow");
}

static void test_errors(void)
{
	int i, differ = 0, first = 0;

	/* The real runtime answers these without a GPU. */
	for (i = -5; i < 12000; i++)
		if (strcmp(xc_error_name(i), cudaGetErrorName(i)) ||
		    strcmp(xc_error_string(i), cudaGetErrorString(i))) {
			if (!differ++)
				first = i;
		}
	CHECK_MSG(!differ, "error-names-and-strings-match-the-runtime",
		  "%d codes differ, the first %d: %s (%s) vs %s (%s)", differ,
		  first, xc_error_name(first), xc_error_string(first),
		  cudaGetErrorName(first), cudaGetErrorString(first));
	xc_last_error(1);
	xc_ret(cudaErrorInvalidValue);
	xc_ret(cudaSuccess);
	CHECK(xc_last_error(0) == cudaErrorInvalidValue,
	      "peek-keeps-the-error");
	CHECK(xc_last_error(1) == cudaErrorInvalidValue &&
	      xc_last_error(1) == cudaSuccess, "get-resets-the-error");
}

/* The sizes of images handed to cudaLibraryLoadData. */
static void test_image_size(void)
{
	static uint64_t img[512];
	uint8_t *b = (uint8_t *)img;
	uint32_t magic;
	uint16_t hs = 16, shentsize = 64, shnum = 3;
	uint64_t fat = 1000, shoff = 1024, off = 2000, size = 500;
	uint32_t type = 1;

	memset(img, 0, sizeof(img));
	magic = 0xba55ed50u;
	memcpy(b, &magic, 4);
	memcpy(b + 6, &hs, 2);
	memcpy(b + 8, &fat, 8);
	CHECK(xc_image_size(img) == 1016, "image-fatbin-header-size");
	fat = 1ull << 40;
	memcpy(b + 8, &fat, 8);
	CHECK(xc_image_size(img) == 0, "image-fatbin-too-big");

	/* A 64-bit ELF: three section headers, one section at 2000. */
	memset(img, 0, sizeof(img));
	memcpy(b, "\177ELF\2", 5);
	memcpy(b + 40, &shoff, 8);
	memcpy(b + 58, &shentsize, 2);
	memcpy(b + 60, &shnum, 2);
	memcpy(b + shoff + 64 + 4, &type, 4);
	memcpy(b + shoff + 64 + 24, &off, 8);
	memcpy(b + shoff + 64 + 32, &size, 8);
	CHECK(xc_image_size(img) == 2500, "image-elf-section-end");
	size = 1ull << 40;
	memcpy(b + shoff + 64 + 32, &size, 8);
	CHECK(xc_image_size(img) == 0, "image-elf-section-too-big");

	CHECK(xc_image_size(".version 8.0\n") == 14, "image-ptx-to-nul");
	magic = 0x466243b1u;
	memset(img, 0, sizeof(img));
	memcpy(b, &magic, 4);
	CHECK(xc_image_size(img) == 0, "image-wrapper-not-an-image");
	CHECK(xc_image_unwrap(".") != NULL, "image-unwrap-plain");
}

int main(void)
{
	test_image_size();
	test_arena();
	test_ranges();
	test_dev_extents();
	test_errors();
	return check_summary();
}
