// SPDX-License-Identifier: MIT
/*
 * NVML's life in the guest: nvmlInit and nvmlShutdown, counted here (the
 * worker opens its NVML once per session and keeps it), and the table of
 * the session's GPUs that the guest's nvmlDevice_t point into.
 */
#include <pthread.h>

#include "nvml_guest.h"

/* nvml.h leaves the structure to the library: ours is an index. */
struct nvmlDevice_st {
	uint32_t index;
};

static struct nvmlDevice_st xc_nvml_devs[XCUDA_MAX_DEVICES];
static pthread_mutex_t xc_nvml_lock = PTHREAD_MUTEX_INITIALIZER;
/* Inits not yet shut down; the GPUs the first init found. */
static unsigned int xc_nvml_refs, xc_nvml_count;

int xc_nvml_enter(int need_cuda)
{
	(void)need_cuda;
	return __atomic_load_n(&xc_nvml_refs, __ATOMIC_ACQUIRE) ?
		0 : NVML_ERROR_UNINITIALIZED;
}

nvmlReturn_t xc_nvml_result(int err)
{
	if ((err >= NVML_SUCCESS && err <= NVML_ERROR_RESET_TYPE_NOT_SUPPORTED) ||
	    err == NVML_ERROR_UNKNOWN)
		return (nvmlReturn_t)err;
	switch (err) {
	case cudaErrorNoDevice:
	case cudaErrorInsufficientDriver:
	case cudaErrorDevicesUnavailable:
		/* No xcudad to reach: as a host without its driver. */
		return NVML_ERROR_DRIVER_NOT_LOADED;
	case cudaErrorNotPermitted:
		return NVML_ERROR_NO_PERMISSION;
	default:
		return NVML_ERROR_UNKNOWN;
	}
}

int xc_nvml_dev_index(nvmlDevice_t dev, uint32_t *index)
{
	uintptr_t p = (uintptr_t)dev, base = (uintptr_t)xc_nvml_devs;
	unsigned int n = __atomic_load_n(&xc_nvml_count, __ATOMIC_ACQUIRE);

	/* Compared as integers: the program's pointer may be anything. */
	if (p < base || p >= base + n * sizeof(xc_nvml_devs[0]) ||
	    (p - base) % sizeof(xc_nvml_devs[0]))
		return -1;
	*index = dev->index;
	return 0;
}

int xc_nvml_dev_of(uint32_t index, nvmlDevice_t *dev)
{
	if (index >= __atomic_load_n(&xc_nvml_count, __ATOMIC_ACQUIRE))
		return -1;
	*dev = &xc_nvml_devs[index];
	return 0;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	struct xcuda_nvml_init_args a = { .flags = flags };
	struct xcuda_nvml_init_res r = { 0, 0 };
	unsigned int i;
	int err = 0;

	pthread_mutex_lock(&xc_nvml_lock);
	if (xc_nvml_refs) {
		if (xc_nvml_refs == UINT32_MAX)
			err = NVML_ERROR_UNKNOWN;
		else
			xc_nvml_refs++;
		goto out;
	}
	err = xc_drv_forward(XCUDA_OP_NVML_INIT, &a, sizeof(a), &r, sizeof(r));
	if (!err && r.count > XCUDA_MAX_DEVICES)
		err = NVML_ERROR_UNKNOWN;	/* not a worker's answer */
	if (err)
		goto out;
	for (i = 0; i < r.count; i++)
		xc_nvml_devs[i].index = i;
	__atomic_store_n(&xc_nvml_count, r.count, __ATOMIC_RELEASE);
	__atomic_store_n(&xc_nvml_refs, 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&xc_nvml_lock);
	return xc_nvml_result(err);
}

nvmlReturn_t nvmlInit_v2(void)
{
	return nvmlInitWithFlags(0);
}

nvmlReturn_t nvmlInit(void)
{
	return nvmlInitWithFlags(0);
}

nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t err = NVML_SUCCESS;

	pthread_mutex_lock(&xc_nvml_lock);
	if (!xc_nvml_refs)
		err = NVML_ERROR_UNINITIALIZED;
	else
		__atomic_store_n(&xc_nvml_refs, xc_nvml_refs - 1,
				 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&xc_nvml_lock);
	return err;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	int err = xc_nvml_enter(0);

	if (err)
		return (nvmlReturn_t)err;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = __atomic_load_n(&xc_nvml_count, __ATOMIC_ACQUIRE);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
	return nvmlDeviceGetCount_v2(deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
					   nvmlDevice_t *device)
{
	int err = xc_nvml_enter(0);

	if (err)
		return (nvmlReturn_t)err;
	if (!device || xc_nvml_dev_of(index, device))
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
					nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	uint32_t i;
	int err = xc_nvml_enter(0);

	if (err)
		return (nvmlReturn_t)err;
	if (!index || xc_nvml_dev_index(device, &i))
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = i;
	return NVML_SUCCESS;
}
