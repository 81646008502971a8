/* SPDX-License-Identifier: MIT */
/*
 * The daemon and worker ends of the `xen` transport (see xcuda/xen.h):
 * xcudad takes session events from /dev/xcuda-back's control file; each
 * worker serves one session through a file of its own, attached to it.
 */
#ifndef XCUDA_DAEMON_TRANSPORT_XEN_H
#define XCUDA_DAEMON_TRANSPORT_XEN_H

#include <stdint.h>

#include "xcuda/xen.h"
#include "transport.h"

#define XD_XEN_DEVICE	"/dev/xcuda-back"

/*
 * Opens @path (NULL: XD_XEN_DEVICE) as the control file, non-blocking.
 * Returns the descriptor, or a negative errno (-ENOENT: xcuda-back.ko is
 * not loaded; -EBUSY: another daemon has it).
 */
int xd_xen_control_open(const char *path);

/* The next event: 1 with *ev, 0 when none is queued, or a negative errno. */
int xd_xen_next_event(int ctl, struct xcuda_back_event *ev);

/* Turns a session away; the guest process sees @err (a positive errno). */
int xd_xen_refuse(int ctl, uint64_t token, int err);

/* A new file of @path bound to the session of @token, or a negative errno. */
int xd_xen_attach(const char *path, uint64_t token);

/*
 * In the worker: creates the session's shared memory (a memfd of
 * XCUDA_XEN_DATA_PAGES(ring_order) pages and the event's arena: header
 * page, data ring, arena), initialises the ring, and hands it with two
 * eventfds to the backend, which grants it to the guest and bridges the
 * eventfds to the session's event channel; then makes @c serve the
 * session's ring (ring_back.c), with the attached @fd's hang-up as the
 * end.  Returns 0 (@c owns @fd), or a negative errno with @fd still the
 * caller's.
 */
int xd_xen_accept(int fd, struct xd_chan *c,
		  const struct xcuda_back_event *ev);

#endif /* XCUDA_DAEMON_TRANSPORT_XEN_H */
