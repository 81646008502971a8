/* SPDX-License-Identifier: MIT */
/*
 * The request deadline (xcudad --request-deadline): a request that runs
 * longer ends its session.  The worker exits, and with it go its CUDA
 * context and GPU memory, a kernel that never ends included, which would
 * otherwise hold the GPU for everyone while its guest lives.  A thread of
 * the worker's looks; the worker's thread says when a request starts
 * and ends (two stores).
 */
#ifndef XCUDAD_WATCHDOG_H
#define XCUDAD_WATCHDOG_H

#include <stdint.h>

/* The exit status of a worker the deadline ended. */
#define XD_WATCHDOG_EXIT	4

/* Starts the watch (@deadline_s 0: none): 0, or a negative errno. */
int xd_watchdog_start(unsigned int deadline_s);
/* Request @op starts, or (op 0) the last one ended. */
void xd_watchdog_note(uint16_t op);

#endif /* XCUDAD_WATCHDOG_H */
