// SPDX-License-Identifier: MIT
/*
 * NVML in the worker (spec/nvml.calls): the real libnvidia-ml.so.1,
 * loaded at run time so that xcudad starts without it, and the map from
 * the session's GPUs to its devices.
 *
 * A guest names a GPU by its CUDA index in the worker, and sees only the
 * GPUs the worker's CUDA sees: an NVML device of another GPU of the host
 * has no index, and a query that finds one answers NVML_ERROR_NOT_FOUND,
 * as for a GPU that is not there.  The worker's NVML handles never leave
 * Dom0.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "log.h"
#include "ops.h"

/* The most GPUs a session's NVML names (the guest's table's size too). */
#define XD_NVML_MAX	XCUDA_MAX_DEVICES

struct xd_nvml {
	unsigned int count;
	nvmlDevice_t dev[XD_NVML_MAX];
};

static void *xd_nvml_lib;
static pthread_once_t xd_nvml_once = PTHREAD_ONCE_INIT;

static void xd_nvml_open(void)
{
	xd_nvml_lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!xd_nvml_lib)
		xd_log(XD_LOG_INFO, "no NVML: %s", dlerror());
}

void *xd_nvml_sym(const char *name)
{
	pthread_once(&xd_nvml_once, xd_nvml_open);
	return xd_nvml_lib ? dlsym(xd_nvml_lib, name) : NULL;
}

#define XD_NVML(fn) XD_SYM(xd_nvml_sym, fn)

int xd_nvml_dev_of(struct xd_session *s, uint32_t index, nvmlDevice_t *dev)
{
	if (!s->nvml)
		return NVML_ERROR_UNINITIALIZED;
	if (index >= s->nvml->count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*dev = s->nvml->dev[index];
	return 0;
}

int xd_nvml_dev_index(struct xd_session *s, nvmlDevice_t dev,
		      uint32_t *index)
{
	unsigned int i;

	if (!s->nvml)
		return NVML_ERROR_UNINITIALIZED;
	for (i = 0; i < s->nvml->count; i++) {
		if (s->nvml->dev[i] == dev) {
			*index = i;
			return 0;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

/* Each CUDA device's NVML device, by its PCI address. */
static int xd_nvml_map(struct xd_nvml *m)
{
	__typeof__(&nvmlDeviceGetHandleByPciBusId_v2) by_bus =
		XD_NVML(nvmlDeviceGetHandleByPciBusId_v2);
	char bus[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	int n = 0, i, err;

	if (!by_bus)
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	/* No CUDA device is no GPU for the guest, not an error. */
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 0)
		n = 0;
	if (n > XD_NVML_MAX) {
		xd_log(XD_LOG_INFO, "NVML: %d GPUs, the guest sees %d", n,
		       XD_NVML_MAX);
		n = XD_NVML_MAX;
	}
	for (i = 0; i < n; i++) {
		if (cudaDeviceGetPCIBusId(bus, sizeof(bus), i) != cudaSuccess)
			return NVML_ERROR_UNKNOWN;
		err = by_bus(bus, &m->dev[i]);
		if (err)
			return err;
	}
	m->count = (unsigned int)n;
	return 0;
}

int xd_op_nvml_init(struct xd_session *s, const struct xcuda_nvml_init_args *a,
		    struct xcuda_nvml_init_res *r, struct xd_call *call)
{
	__typeof__(&nvmlInitWithFlags) init = XD_NVML(nvmlInitWithFlags);
	__typeof__(&nvmlShutdown) shutdown = XD_NVML(nvmlShutdown);
	struct xd_nvml *m;
	int err;

	(void)call;
	if (a->rsvd || a->flags & ~(NVML_INIT_FLAG_NO_GPUS |
				    NVML_INIT_FLAG_NO_ATTACH))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!s->nvml) {
		if (!init || !shutdown)
			return NVML_ERROR_LIBRARY_NOT_FOUND;
		m = calloc(1, sizeof(*m));
		if (!m)
			return NVML_ERROR_MEMORY;
		err = init(a->flags);
		if (!err) {
			err = xd_nvml_map(m);
			if (err)
				shutdown();
		}
		if (err) {
			free(m);
			return err;
		}
		s->nvml = m;
	}
	r->count = s->nvml->count;
	return 0;
}

int xd_op_nvml_error_string(struct xd_session *s,
			    const struct xcuda_nvml_error_string_args *a,
			    struct xcuda_nvml_error_string_res *r,
			    struct xd_call *call)
{
	__typeof__(&nvmlErrorString) str = XD_NVML(nvmlErrorString);
	const char *text;

	(void)call;
	if (a->rsvd || !a->text.len)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!str)
		return NVML_ERROR_LIBRARY_NOT_FOUND;
	text = str((nvmlReturn_t)a->error);
	if (!text)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (xd_arena_put_text(s, &a->text, text, &r->len))
		return NVML_ERROR_MEMORY;
	return 0;
}

/* The session's hold on the worker's NVML goes with it. */
static void xd_nvml_fini(struct xd_session *s)
{
	__typeof__(&nvmlShutdown) shutdown = XD_NVML(nvmlShutdown);

	if (!s->nvml)
		return;
	if (shutdown)
		shutdown();
	free(s->nvml);
	s->nvml = NULL;
}

XD_SESSION_HOOKS(nvml, 50, NULL, xd_nvml_fini);
