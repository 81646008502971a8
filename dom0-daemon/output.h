/* SPDX-License-Identifier: MIT */
/*
 * Device output (output.c): what the worker's CUDA runtime writes to
 * stdout and stderr (kernel printf, device assert messages) is kept in
 * two memfds for the guest, which takes it with OUTPUT_TAKE when an
 * answer carries XCUDA_RSPF_OUTPUT.  The handler itself is declared,
 * typed, in xcuda/worker_handlers.h.
 */
#ifndef XCUDAD_OUTPUT_H
#define XCUDAD_OUTPUT_H

#include <stdint.h>

#include "worker.h"

/* What one stream may hold between two complete takes. */
#define XD_OUTPUT_CAP	(64u << 20)

/*
 * Points @out_fd and @err_fd (1 and 2 in a worker) at two fresh memfds
 * of at most @cap bytes each (a multiple of the page size), remembering
 * what they were.  Returns 0 or -errno (then nothing changed).
 */
int xd_output_capture(int out_fd, int err_fd, uint64_t cap);
/* Puts the descriptors back; output nobody took is dropped. */
void xd_output_release(void);

/*
 * After each handled request: flushes stdio and sets XCUDA_RSPF_OUTPUT in
 * @rsp when output waits.  Does nothing unless output is captured, nor
 * for a posted request.
 */
void xd_output_after(struct xd_session *s, struct xcuda_response *rsp);

/* Bytes waiting in both streams (tests and the log). */
uint64_t xd_output_waiting(void);
/* Times a stream filled up and lost output since capture began. */
unsigned long long xd_output_overflows(void);

#endif /* XCUDAD_OUTPUT_H */
