/* SPDX-License-Identifier: MIT */
/*
 * The worker's end of an xcuda ring shared with a guest process, whatever
 * shares it: the back half of xcuda/proto.h's ring and common/
 * ring_wait.h's end (doorbells, spin then sleep).  Both transports use
 * it: `local` in a memfd it sends the guest, `xen` in one that xcuda-back
 * grants to the guest.
 *
 * The guest is not trusted: req_prod is read once per look and checked
 * before any slot is, and requests are copied out before anyone reads
 * them.
 */
#ifndef XCUDA_DAEMON_RING_BACK_H
#define XCUDA_DAEMON_RING_BACK_H

#include <stddef.h>

#include "xcuda/proto.h"
#include "common/ring_wait.h"

/* Waiting for the next request: the guest's next call is usually quick. */
#define XD_RING_SPIN_US		20

struct xd_ring {
	xcuda_back_ring_t back;
	RING_IDX req_prod;	/* guest's req_prod, last read and checked */
	/* bell: requests are waiting; peer_bell: responses are */
	struct xr_end end;
};

/*
 * Initialises the shared ring at @sring, @ring_bytes long (before the
 * guest can see it: it never sees the ring unset), points @r->end's
 * indexes at it and sets its spin (XCUDA_SPIN_US, default
 * XD_RING_SPIN_US).  The caller sets the end's descriptors.
 */
void xd_ring_init(struct xd_ring *r, xcuda_sring_t *sring, size_t ring_bytes);

/*
 * Copies the next request into @out (once), waiting up to @timeout_ms
 * (-1: forever; spins first).  Returns 1 with a request, 0 on timeout,
 * -EPIPE once the guest has gone, -EPROTO once it broke the ring, or
 * another negative errno.
 */
int xd_ring_next(struct xd_ring *r, struct xcuda_request *out,
		 int timeout_ms);

/*
 * Spins until the guest has produced a request or the clock passes
 * @until_ns (0: one look), without asking to be rung (a bell owed to the
 * guest is rung first, as a wait would): 1 if one is there, else 0.
 */
int xd_ring_spin(struct xd_ring *r, uint64_t until_ns);

/*
 * Answers the oldest request taken and not yet answered, publishing at
 * once; rings the guest if it sleeps, unless @more (the bell then waits
 * for the end of the batch, or our next wait).  Returns 0, -EINVAL if
 * every request taken is answered, -EPROTO once the guest broke the
 * ring, or another negative errno.
 */
int xd_ring_reply(struct xd_ring *r, const struct xcuda_response *rsp,
		  int more);

/*
 * This end's counters as one line in @buf: requests taken and responses
 * pushed (each copied once), bells rung (a write() each) and sleeps (a
 * poll() each).
 */
void xd_ring_counters(const struct xd_ring *r, char *buf, size_t len);

#endif /* XCUDA_DAEMON_RING_BACK_H */
