/* SPDX-License-Identifier: MIT */
/*
 * The guest's end of an xcuda ring shared with a worker, whatever maps it:
 * the front half of xcuda/proto.h's ring and common/ring_wait.h's end
 * (doorbells, spin then sleep).  Both transports use it: `local` on a
 * memfd the worker sent, `xen` on the pages Dom0 granted.
 *
 * The worker is not trusted: its indexes are read once, checked against
 * what we have asked for, and slots are copied out before use.
 */
#ifndef XCUDA_GUEST_RING_FRONT_H
#define XCUDA_GUEST_RING_FRONT_H

#include <stddef.h>
#include <stdint.h>

#include "xcuda/proto.h"
#include "common/ring_wait.h"

/* Waiting for an answer: most come within a millisecond. */
#define XC_RING_SPIN_US		1000

struct xc_ring {
	xcuda_front_ring_t front;
	/* bell: responses are waiting; peer_bell: requests are */
	struct xr_end end;
};

/*
 * Takes the ring the worker initialised (SHARED_RING_INIT) at @sring,
 * @ring_bytes long, and points @r->end's indexes at it; the caller sets
 * the end's descriptors and spin.  Returns 0, or -EPROTO if the ring
 * does not look fresh (a request or response already there).
 */
int xc_ring_attach(struct xc_ring *r, xcuda_sring_t *sring,
		   size_t ring_bytes);

/* How many requests the ring holds. */
static inline unsigned int xc_ring_slots(const struct xc_ring *r)
{
	return RING_SIZE(&r->front);
}

/*
 * Copies @n requests into the ring (each once), publishes them together
 * and rings the worker if it sleeps.  Returns 0, -ENOBUFS if they do
 * not fit, -EPIPE once the worker has gone, -EPROTO once it broke the
 * ring, or another negative errno.
 */
int xc_ring_submit(struct xc_ring *r, const struct xcuda_request *reqs,
		   unsigned int n);

/*
 * Copies up to @max responses out (each once), waiting up to @timeout_ms
 * (-1: forever) for the first: spins first, at least @expect_ns when the
 * caller knows the answer takes that long, then sleeps.  Returns how
 * many, 0 on timeout, or a negative errno (-EPIPE: the worker has gone).
 */
int xc_ring_receive(struct xc_ring *r, struct xcuda_response *out,
		    unsigned int max, int timeout_ms, uint64_t expect_ns);

#endif /* XCUDA_GUEST_RING_FRONT_H */
