// SPDX-License-Identifier: MIT
/*
 * Error names, messages and the per-thread last error, answered locally
 * with the real runtime's exact text (error_table.inc is generated from
 * it by tools/gen-error-table.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

struct xc_error_desc {
	int code;
	const char *name;
	const char *string;
};

static const struct xc_error_desc xc_errors[] = {
#define XC_ERROR(c, n, s) { c, n, s },
#include "error_table.inc"
#undef XC_ERROR
};

static const struct xc_error_desc *xc_error_find(int err)
{
	size_t lo = 0, hi = sizeof(xc_errors) / sizeof(xc_errors[0]);

	/* The table is sorted by code. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (xc_errors[mid].code == err)
			return &xc_errors[mid];
		if (xc_errors[mid].code < err)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *xc_error_name(int err)
{
	const struct xc_error_desc *d = xc_error_find(err);

	return d ? d->name : XC_ERROR_UNKNOWN;
}

const char *xc_error_string(int err)
{
	const struct xc_error_desc *d = xc_error_find(err);

	return d ? d->string : XC_ERROR_UNKNOWN;
}

/*
 * xcuda-back answers what it cannot hand to a worker (a session it no
 * longer has, a malformed request, no memory) with a negative errno,
 * where a worker answers a cudaError_t.  @err is such an errno, negative
 * as on the wire (a positive one is taken as its negation).
 */
cudaError_t xc_errno_to_cuda(int err)
{
	if (err <= -4096)
		return cudaErrorUnknown;
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return cudaSuccess;
	case EINVAL:
	case ERANGE:
	case EOVERFLOW:
	case E2BIG:
	case EMSGSIZE:
	case EFAULT:
		return cudaErrorInvalidValue;
	case ENOMEM:
	case ENOSPC:
	case EDQUOT:
	case ENOBUFS:
		return cudaErrorMemoryAllocation;
	case ESHUTDOWN:
	case ENOENT:
	case ENODEV:
	case ENXIO:
	case EPIPE:
	case ECONNRESET:
	case ENOTCONN:
	case EHOSTDOWN:
	case EBUSY:
	case EAGAIN:
		return cudaErrorDevicesUnavailable;
	case ETIMEDOUT:
		return cudaErrorTimeout;
	case EPERM:
	case EACCES:
		return cudaErrorNotPermitted;
	case ENOSYS:
	case EOPNOTSUPP:
		return cudaErrorNotSupported;
	default:
		return cudaErrorUnknown;
	}
}

static __thread cudaError_t xc_last;

cudaError_t xc_ret(cudaError_t err)
{
	/* "Not ready" is an answer, not an error: CUDA does not record it. */
	if (err != cudaSuccess && err != cudaErrorNotReady)
		xc_last = err;
	return err;
}

void xc_set_last_error(cudaError_t err)
{
	xc_last = err;
}

cudaError_t xc_last_error(int reset)
{
	cudaError_t err = xc_last;

	if (reset)
		xc_last = cudaSuccess;
	return err;
}

static int xc_quiet(void)
{
	const char *q = getenv("XCUDA_QUIET");

	return q && *q && strcmp(q, "0");
}

void xc_log(const char *fmt, ...)
{
	va_list ap;

	if (xc_quiet())
		return;
	va_start(ap, fmt);
	fputs("xcuda: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void xc_warn_once(int *key, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(key, 1, __ATOMIC_RELAXED) || xc_quiet())
		return;
	va_start(ap, fmt);
	fputs("xcuda: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int xc_error_sticky(cudaError_t err)
{
	switch (err) {
	case cudaErrorIllegalAddress:
	case cudaErrorLaunchTimeout:
	case cudaErrorAssert:
	case cudaErrorHardwareStackError:
	case cudaErrorIllegalInstruction:
	case cudaErrorMisalignedAddress:
	case cudaErrorInvalidAddressSpace:
	case cudaErrorInvalidPc:
	case cudaErrorLaunchFailure:
		return 1;
	default:
		return 0;
	}
}
