/* SPDX-License-Identifier: MIT */
/*
 * xcuda's libcufft.so.12: cuFFT of a guest, on one GPU.  Each call goes
 * over the session of xcuda's libcudart.so.13, which it links, to the
 * worker, which makes it with NVIDIA's library on the GPU
 * (spec/cufft.calls): plans are the library's own handles, and
 * transforms read and write the program's device memory on the plan's
 * stream, as natively.
 */
#ifndef XCUDA_CUFFT_GUEST_H
#define XCUDA_CUFFT_GUEST_H

#include <cufftXt.h>

#include "guest.h"

/* Before every call: 0 (the session is made on the first call). */
int xc_cufft_enter(int need_cuda);
/*
 * A round trip's status as a cufftResult: the worker answers cuFFT's
 * own; no GPU behind the session is CUFFT_SETUP_FAILED, and a worker
 * gone CUFFT_INTERNAL_ERROR.
 */
cufftResult xc_cufft_result(int err);

#endif /* XCUDA_CUFFT_GUEST_H */
