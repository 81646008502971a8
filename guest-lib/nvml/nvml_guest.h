/* SPDX-License-Identifier: MIT */
/*
 * xcuda's libnvidia-ml.so.1: NVML of a guest.  Each query goes over the
 * session of xcuda's libcudart.so.13, which it links, to the worker,
 * which asks the host's NVML (spec/nvml.calls).  The guest sees the GPUs
 * of its session, as CUDA numbers them, and only reads them.
 *
 * An nvmlDevice_t of the guest points into the library's own table of
 * the session's GPUs: the wire carries its index, never the worker's
 * handle.
 */
#ifndef XCUDA_NVML_GUEST_H
#define XCUDA_NVML_GUEST_H

#include <stdint.h>

#include <nvml.h>

#include "guest.h"

/* Before every call: 0, or NVML_ERROR_UNINITIALIZED before nvmlInit. */
int xc_nvml_enter(int need_cuda);
/*
 * A round trip's status as an nvmlReturn_t: the worker answers NVML's
 * own; a session that cannot be made, or a worker gone, is
 * NVML_ERROR_DRIVER_NOT_LOADED; anything else NVML_ERROR_UNKNOWN.
 */
nvmlReturn_t xc_nvml_result(int err);
/* @dev's index in the session's GPUs: 0, or -1 for no device of ours. */
int xc_nvml_dev_index(nvmlDevice_t dev, uint32_t *index);
/* The device of the session's GPU @index: 0, or -1 for none. */
int xc_nvml_dev_of(uint32_t index, nvmlDevice_t *dev);

#endif /* XCUDA_NVML_GUEST_H */
