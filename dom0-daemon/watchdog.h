/* SPDX-License-Identifier: MIT */
/*
 * The worker's watch over a request that does not end.  A kernel that
 * never ends would otherwise hold the worker, its GPU context and memory
 * for as long as the worker lives, and a worker blocked in CUDA never
 * reads its channel again:
 *  - once a request has run for a second, the watch asks the channel
 *    whether the guest is still there (peer_gone); a guest that went
 *    (killed, its relay or link gone) ends the worker;
 *  - with xcudad --request-deadline, a request that runs longer ends the
 *    worker whatever the guest does.
 * The worker ends by _exit(): its CUDA context and GPU memory go with
 * it.  A thread of the worker's looks; the worker's thread says when a
 * request starts and ends (two stores, no clock).
 */
#ifndef XCUDAD_WATCHDOG_H
#define XCUDAD_WATCHDOG_H

#include <stdint.h>

struct xd_chan;

/* The exit status of a worker the deadline ended. */
#define XD_WATCHDOG_EXIT	4
/* The exit status of a worker whose guest went during a request. */
#define XD_WATCHDOG_GONE	5

/*
 * Starts the watch over @c's requests (@deadline_s 0: none; @c NULL or
 * without peer_gone: no look at the guest): 0, or a negative errno.
 */
int xd_watchdog_start(struct xd_chan *c, unsigned int deadline_s);
/* Request @op starts, or (op 0) the last one ended. */
void xd_watchdog_note(uint16_t op);
/*
 * The channel is about to close: the watch asks it no more (it returns
 * once a look in progress is over).  The deadline still holds.
 */
void xd_watchdog_stop(void);

#endif /* XCUDAD_WATCHDOG_H */
