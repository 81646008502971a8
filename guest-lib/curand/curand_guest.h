/* SPDX-License-Identifier: MIT */
/*
 * xcuda's libcurand.so.10: cuRAND's host API of a guest.  Each call goes
 * over the session of xcuda's libcudart.so.13, which it links, to the
 * worker, which makes it with NVIDIA's library on the GPU
 * (spec/curand.calls): generators fill the program's device memory on
 * the program's streams, as natively.
 */
#ifndef XCUDA_CURAND_GUEST_H
#define XCUDA_CURAND_GUEST_H

#include <curand.h>

#include "guest.h"

/* Before every call: 0 (the session is made on the first call). */
int xc_curand_enter(int need_cuda);
/*
 * A round trip's status as a curandStatus_t: the worker answers
 * cuRAND's own; no GPU behind the session is
 * CURAND_STATUS_INITIALIZATION_FAILED, as natively, and a worker gone
 * CURAND_STATUS_INTERNAL_ERROR.
 */
curandStatus_t xc_curand_result(int err);

#endif /* XCUDA_CURAND_GUEST_H */
