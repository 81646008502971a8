/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the driver API test programs (driver_*.cu): as xct.h's,
 * for CUresult.  Output rules are xct.h's: names, never pointers.
 *
 *   SHOWD(call)     print "call -> CUDA_ERROR_NAME"; the result
 *   CKD(call)       must succeed, else "FAILED call: NAME", exit 1
 *   xct_drv_expect(ok, what)  print "what: yes|no"; a no is a failure
 *   xct_slurp(path, &len)     a file, whole
 */
#ifndef XCT_DRV_H
#define XCT_DRV_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static int xct_drv_failures;

static inline const char *xct_cu_name(CUresult r)
{
	const char *s = NULL;

	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s)
		return "(unknown)";
	return s;
}

static inline CUresult xct_show_cu(CUresult r, const char *what)
{
	printf("%s -> %s\n", what, xct_cu_name(r));
	return r;
}

static inline void xct_check_cu(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		printf("FAILED %s: %s\n", what, xct_cu_name(r));
		exit(1);
	}
}

static inline void xct_drv_expect(int ok, const char *what)
{
	printf("%s: %s\n", what, ok ? "yes" : "no");
	if (!ok)
		xct_drv_failures++;
}

/* A file, whole, NUL-terminated (*len its size); NULL if unreadable. */
static inline char *xct_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = (char *)calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

#define SHOWD(call) xct_show_cu((call), #call)
#define CKD(call) xct_check_cu((call), #call)

#endif /* XCT_DRV_H */
