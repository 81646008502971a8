// SPDX-License-Identifier: MIT
/*
 * The worker's end of an xcuda ring (ring_back.h).
 *
 * Waiting and doorbells are common/ring_wait.h's: req_event before we
 * sleep, rsp_event checked after we answer, so no wake-up is lost and no
 * bell rings while the guest spins.
 *
 * Two threads may share a ring, one taking requests (xd_ring_next()),
 * the other answering them (xd_ring_reply()), as the upstream relay's
 * do (relay.c): the taker alone writes req_cons and req_prod, the
 * answerer alone writes rsp_prod_pvt and the ring's rsp_prod, and each
 * reads the other's index atomically.  The answerer reads req_cons only
 * to refuse answering what was not taken (release/acquire: the request
 * was copied out before).  The taker reads rsp_prod_pvt to bound the
 * guest's req_prod: the guest produces past our answers only once it
 * has seen them, published (seq_cst) after rsp_prod_pvt was stored, and
 * the taker reads rsp_prod_pvt after req_prod (acquire), so it never
 * reads one older than the guest acted on.  What struct xr_end shares
 * between the two is atomic there (common/ring_wait.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ring_back.h"

void xd_ring_init(struct xd_ring *r, xcuda_sring_t *sring, size_t ring_bytes)
{
	SHARED_RING_INIT(sring);
	BACK_RING_INIT(&r->back, sring, ring_bytes);
	r->req_prod = r->back.req_cons;
	xr_end_ring(&r->end, &sring->req_prod, &sring->req_event,
		    &r->back.req_cons, &sring->rsp_prod, &sring->rsp_event);
	/* Over nonsense the worker takes the default: it has no one to tell. */
	(void)xr_spin_env(XD_RING_SPIN_US, &r->end.spin_ns);
}

/*
 * Copies the next request out, if there is one: 1, 0 or -EPROTO.  The
 * guest's req_prod is read once, and only when everything up to the last
 * value read has been taken.  It may not claim more than a ring's worth
 * of requests beyond our answers, nor fall behind what we have taken.
 */
static int xd_take(void *ctx, void *out, unsigned int max)
{
	struct xcuda_request *req = out;
	struct xd_ring *r = ctx;
	xcuda_back_ring_t *b = &r->back;

	(void)max;	/* one at a time: the worker answers each in turn */

	if (xr_end_broken(&r->end))
		return -EPROTO;
	if (b->req_cons == r->req_prod) {
		RING_IDX rp, answered;

		rp = __atomic_load_n(&b->sring->req_prod, __ATOMIC_RELAXED);
		xen_rmb();	/* slots only after the index covering them */
		/* The answering thread's, if another one answers. */
		answered = __atomic_load_n(&b->rsp_prod_pvt, __ATOMIC_ACQUIRE);
		/* RING_REQUEST_PROD_OVERFLOW, with that index. */
		if (rp - answered > RING_SIZE(b) ||
		    rp - answered < b->req_cons - answered) {
			xr_end_set_broken(&r->end);
			return -EPROTO;
		}
		r->req_prod = rp;
		if (rp == b->req_cons)
			return 0;
	}
	RING_COPY_REQUEST(b, b->req_cons, req);
	/* Taken: the answering thread may answer it now. */
	__atomic_store_n(&b->req_cons, b->req_cons + 1, __ATOMIC_RELEASE);
	r->end.stats.taken++;
	return 1;
}

int xd_ring_next(struct xd_ring *r, struct xcuda_request *out,
		 int timeout_ms)
{
	struct xr_wait w = { .timeout_ms = timeout_ms,
			     .spin_ns = r->end.spin_ns };

	/* Answers held back by @more are rung for before we nap. */
	return xr_consume(&r->end, &w, xd_take, r, out, 1);
}

int xd_ring_spin(struct xd_ring *r, uint64_t until_ns)
{
	uint32_t cons = *r->end.in_cons;

	if (xr_end_take_bell(&r->end))
		(void)xr_end_bell(&r->end);
	if (r->req_prod != cons)
		return 1;
	if (!until_ns)
		return __atomic_load_n(r->end.in_prod, __ATOMIC_ACQUIRE) != cons;
	return xr_spin(r->end.in_prod, cons, until_ns) != cons;
}

/*
 * Each request frees its own slot for its response, so the response ring
 * cannot fill while we answer only what we took; a guest that cheats
 * (overwrites slots, moves rsp_prod or rsp_event) only garbles what it
 * reads itself.  Answering more than we took would overwrite a request
 * not yet read: that is refused.
 */
int xd_ring_reply(struct xd_ring *r, const struct xcuda_response *rsp,
		  int more)
{
	xcuda_back_ring_t *b = &r->back;

	if (xr_end_broken(&r->end))
		return -EPROTO;
	if (b->rsp_prod_pvt == __atomic_load_n(&b->req_cons, __ATOMIC_ACQUIRE))
		return -EINVAL;
	memcpy(RING_GET_RESPONSE(b, b->rsp_prod_pvt), rsp, sizeof(*rsp));
	__atomic_store_n(&b->rsp_prod_pvt, b->rsp_prod_pvt + 1,
			 __ATOMIC_RELEASE);
	r->end.stats.pushed++;
	/* Published at once so that a spinning guest sees it. */
	return xr_end_push(&r->end, b->rsp_prod_pvt, more);
}

void xd_ring_counters(const struct xd_ring *r, char *buf, size_t len)
{
	const struct xr_stats *st = &r->end.stats;

	snprintf(buf, len, "ring: %llu requests taken, %llu responses "
		 "pushed, %llu bells rung, %llu sleeps",
		 (unsigned long long)st->taken, (unsigned long long)st->pushed,
		 (unsigned long long)__atomic_load_n(&st->bells,
						     __ATOMIC_RELAXED),
		 (unsigned long long)st->sleeps);
}
