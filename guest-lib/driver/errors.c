// SPDX-License-Identifier: MIT
/*
 * cuGetErrorName and cuGetErrorString.  Names are cuda.h's, in a table
 * made from it at build time.  Texts are the worker's driver's, asked
 * once per code and kept for the process's life, as the driver's own
 * strings live; without a session the runtime's text of the same code
 * stands in.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

struct xc_cu_error {
	int value;
	const char *name;
};

static const struct xc_cu_error xc_cu_errors[] = {
#include "cu_errors.inc"
};

#define XC_NERR (sizeof(xc_cu_errors) / sizeof(xc_cu_errors[0]))

static const char *xc_texts[XC_NERR];
static pthread_mutex_t xc_text_lock = PTHREAD_MUTEX_INITIALIZER;

static int xc_error_index(CUresult error)
{
	unsigned int i;

	for (i = 0; i < XC_NERR; i++)
		if (xc_cu_errors[i].value == (int)error)
			return (int)i;
	return -1;
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	int i = xc_error_index(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	if (i < 0) {
		*pStr = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pStr = xc_cu_errors[i].name;
	return CUDA_SUCCESS;
}

#define XC_TEXT_MAX	256

/* The worker's driver's text of @error, malloc'd, or NULL. */
static char *xc_text_ask(CUresult error)
{
	struct xcuda_drv_get_error_string_args a;
	struct xcuda_drv_get_error_string_res r = { 0, 0 };
	char buf[XC_TEXT_MAX];
	struct xc_xfer x = { buf, sizeof(buf), XC_XFER_OUT, &a.text };

	if (!xc_session_peek())
		return NULL;
	memset(&a, 0, sizeof(a));
	a.error = error;
	if (xc_drv_forward_xfer(XCUDA_OP_DRV_GET_ERROR_STRING, &a, sizeof(a),
				&r, sizeof(r), &x, 1) ||
	    !r.len || r.len >= sizeof(buf))
		return NULL;
	buf[r.len] = '\0';
	return strdup(buf);
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	int i = xc_error_index(error);
	char *t;

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	if (i < 0) {
		*pStr = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&xc_text_lock);
	if (!xc_texts[i]) {
		t = xc_text_ask(error);
		/* Kept only when it is the driver's own word. */
		if (t)
			xc_texts[i] = t;
	}
	*pStr = xc_texts[i] ? xc_texts[i] : xc_error_string((int)error);
	pthread_mutex_unlock(&xc_text_lock);
	return CUDA_SUCCESS;
}
