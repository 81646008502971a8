// SPDX-License-Identifier: MIT
/*
 * nvmlErrorString: the worker's NVML's text of a code, asked once and
 * kept for the process's life, as NVML's own strings live; the code's
 * name before a session can tell it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nvml_guest.h"

#define XC_TEXT_MAX	256
#define XC_TEXTS	64	/* codes whose text is kept */

static struct {
	int code;
	char *text;
} xc_texts[XC_TEXTS];
static unsigned int xc_ntexts;
static pthread_mutex_t xc_text_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *xc_nvml_name(nvmlReturn_t r)
{
	switch (r) {
#define XC_NAME(c) case c: return #c
	XC_NAME(NVML_SUCCESS);
	XC_NAME(NVML_ERROR_UNINITIALIZED);
	XC_NAME(NVML_ERROR_INVALID_ARGUMENT);
	XC_NAME(NVML_ERROR_NOT_SUPPORTED);
	XC_NAME(NVML_ERROR_NO_PERMISSION);
	XC_NAME(NVML_ERROR_ALREADY_INITIALIZED);
	XC_NAME(NVML_ERROR_NOT_FOUND);
	XC_NAME(NVML_ERROR_INSUFFICIENT_SIZE);
	XC_NAME(NVML_ERROR_INSUFFICIENT_POWER);
	XC_NAME(NVML_ERROR_DRIVER_NOT_LOADED);
	XC_NAME(NVML_ERROR_TIMEOUT);
	XC_NAME(NVML_ERROR_IRQ_ISSUE);
	XC_NAME(NVML_ERROR_LIBRARY_NOT_FOUND);
	XC_NAME(NVML_ERROR_FUNCTION_NOT_FOUND);
	XC_NAME(NVML_ERROR_CORRUPTED_INFOROM);
	XC_NAME(NVML_ERROR_GPU_IS_LOST);
	XC_NAME(NVML_ERROR_RESET_REQUIRED);
	XC_NAME(NVML_ERROR_OPERATING_SYSTEM);
	XC_NAME(NVML_ERROR_LIB_RM_VERSION_MISMATCH);
	XC_NAME(NVML_ERROR_IN_USE);
	XC_NAME(NVML_ERROR_MEMORY);
	XC_NAME(NVML_ERROR_NO_DATA);
	XC_NAME(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED);
	XC_NAME(NVML_ERROR_INSUFFICIENT_RESOURCES);
	XC_NAME(NVML_ERROR_FREQ_NOT_SUPPORTED);
	XC_NAME(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	XC_NAME(NVML_ERROR_DEPRECATED);
	XC_NAME(NVML_ERROR_NOT_READY);
	XC_NAME(NVML_ERROR_GPU_NOT_FOUND);
	XC_NAME(NVML_ERROR_INVALID_STATE);
	XC_NAME(NVML_ERROR_RESET_TYPE_NOT_SUPPORTED);
#undef XC_NAME
	default:
		return "NVML_ERROR_UNKNOWN";
	}
}

/* The worker's NVML's text of @code, malloc'd, or NULL. */
static char *xc_text_ask(nvmlReturn_t code)
{
	struct xcuda_nvml_error_string_args a;
	struct xcuda_nvml_error_string_res r = { 0, 0 };
	char buf[XC_TEXT_MAX];
	struct xc_xfer x = { buf, sizeof(buf), XC_XFER_OUT, &a.text };

	if (!xc_session_peek())
		return NULL;
	memset(&a, 0, sizeof(a));
	a.error = code;
	if (xc_drv_forward_xfer(XCUDA_OP_NVML_ERROR_STRING, &a, sizeof(a),
				&r, sizeof(r), &x, 1) ||
	    !r.len || r.len >= sizeof(buf))
		return NULL;
	buf[r.len] = '\0';
	return strdup(buf);
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	const char *text = NULL;
	unsigned int i;
	char *t;

	pthread_mutex_lock(&xc_text_lock);
	for (i = 0; i < xc_ntexts && !text; i++)
		if (xc_texts[i].code == (int)result)
			text = xc_texts[i].text;
	if (!text && xc_ntexts < XC_TEXTS) {
		t = xc_text_ask(result);
		/* Kept only when it is NVML's own word. */
		if (t) {
			xc_texts[xc_ntexts].code = (int)result;
			xc_texts[xc_ntexts++].text = t;
			text = t;
		}
	}
	pthread_mutex_unlock(&xc_text_lock);
	return text ? text : xc_nvml_name(result);
}
