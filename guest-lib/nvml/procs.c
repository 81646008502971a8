// SPDX-License-Identifier: MIT
/*
 * The processes on a GPU: Dom0's, or other guests', are not the guest's
 * to see, and its own are the worker, whose pid means nothing in the
 * guest.  Every list is empty, as on a GPU no process of this
 * system uses.
 */
#include "nvml_guest.h"

static nvmlReturn_t xc_no_procs(nvmlDevice_t device, unsigned int *count)
{
	uint32_t i;
	int err = xc_nvml_enter(0);

	if (err)
		return (nvmlReturn_t)err;
	if (!count || xc_nvml_dev_index(device, &i))
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = 0;
	return NVML_SUCCESS;
}

#define XC_NO_PROCS(name, type)						\
	nvmlReturn_t name(nvmlDevice_t device, unsigned int *infoCount,	\
			  type * infos)					\
	{								\
		(void)infos;						\
		return xc_no_procs(device, infoCount);			\
	}

XC_NO_PROCS(nvmlDeviceGetComputeRunningProcesses, nvmlProcessInfo_v1_t)
XC_NO_PROCS(nvmlDeviceGetComputeRunningProcesses_v2, nvmlProcessInfo_v2_t)
XC_NO_PROCS(nvmlDeviceGetComputeRunningProcesses_v3, nvmlProcessInfo_t)
XC_NO_PROCS(nvmlDeviceGetGraphicsRunningProcesses, nvmlProcessInfo_v1_t)
XC_NO_PROCS(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlProcessInfo_v2_t)
XC_NO_PROCS(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlProcessInfo_t)
XC_NO_PROCS(nvmlDeviceGetMPSComputeRunningProcesses, nvmlProcessInfo_v1_t)
XC_NO_PROCS(nvmlDeviceGetMPSComputeRunningProcesses_v2, nvmlProcessInfo_v2_t)
XC_NO_PROCS(nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlProcessInfo_t)
