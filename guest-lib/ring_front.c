// SPDX-License-Identifier: MIT
/*
 * The guest's end of an xcuda ring (ring_front.h).
 *
 * Waiting and doorbells are common/ring_wait.h's (Xen's hold-off scheme:
 * rsp_event before we sleep, req_event checked after we submit): no
 * wake-up is lost, and while a side spins the other does not ring.
 */
#include <errno.h>
#include <string.h>

#include "ring_front.h"

int xc_ring_attach(struct xc_ring *r, xcuda_sring_t *sring,
		   size_t ring_bytes)
{
	/* The worker set the ring up: it must look freshly initialised. */
	if (__atomic_load_n(&sring->req_prod, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&sring->rsp_prod, __ATOMIC_RELAXED))
		return -EPROTO;
	FRONT_RING_INIT(&r->front, sring, ring_bytes);
	xr_end_ring(&r->end, &sring->rsp_prod, &sring->rsp_event,
		    &r->front.rsp_cons, &sring->req_prod, &sring->req_event);
	return 0;
}

int xc_ring_submit(struct xc_ring *r, const struct xcuda_request *reqs,
		   unsigned int n)
{
	if (r->end.broken)
		return -EPROTO;
	if (r->end.dead)
		return -EPIPE;
	if (!n)
		return 0;
	/* The caller promised to stay within ring_slots; check it anyway. */
	if (n > RING_FREE_REQUESTS(&r->front))
		return -ENOBUFS;
	for (unsigned int i = 0; i < n; i++) {
		memcpy(RING_GET_REQUEST(&r->front, r->front.req_prod_pvt),
		       &reqs[i], sizeof(reqs[i]));
		r->front.req_prod_pvt++;
	}
	r->end.stats.pushed += n;
	/* The slots before req_prod; the bell only if the worker sleeps. */
	return xr_end_push(&r->end, r->front.req_prod_pvt, 0);
}

/*
 * Copies out what the worker has answered, at most @max.  rsp_prod is read
 * once; more unconsumed responses than requests outstanding (or an index
 * that went backwards, which wraps to the same thing) is a lie.
 */
static int xc_take(void *ctx, void *buf, unsigned int max)
{
	struct xcuda_response *out = buf;
	struct xc_ring *r = ctx;
	RING_IDX rp, avail, outstanding;
	unsigned int i, n;

	if (r->end.broken)
		return -EPROTO;
	rp = __atomic_load_n(&r->front.sring->rsp_prod, __ATOMIC_RELAXED);
	xen_rmb();	/* read slots only after the index that covers them */
	avail = rp - r->front.rsp_cons;
	outstanding = r->front.req_prod_pvt - r->front.rsp_cons;
	if (avail > outstanding) {
		r->end.broken = 1;
		return -EPROTO;
	}
	n = avail < max ? avail : max;
	for (i = 0; i < n; i++) {
		RING_COPY_RESPONSE(&r->front, r->front.rsp_cons, &out[i]);
		r->front.rsp_cons++;
	}
	r->end.stats.taken += n;
	return (int)n;
}

int xc_ring_receive(struct xc_ring *r, struct xcuda_response *out,
		    unsigned int max, int timeout_ms, uint64_t expect_ns)
{
	struct xr_wait w = { .timeout_ms = timeout_ms };

	if (!max)
		return 0;
	/*
	 * Spinning only pays if an answer can come at all; through a copy
	 * that we know takes long, too, since waking costs ~20 us.
	 */
	if (r->end.spin_ns && r->front.req_prod_pvt != r->front.rsp_cons)
		w.spin_ns = expect_ns > r->end.spin_ns ? expect_ns :
							 r->end.spin_ns;
	return xr_consume(&r->end, &w, xc_take, r, out, max);
}
