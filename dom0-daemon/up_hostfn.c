// SPDX-License-Identifier: MIT
/*
 * The relay's part of host functions over the upstream link (up_hostfn.h).
 *
 * The server is not trusted: a record names a slot and a payload extent
 * that are checked against the area and the arena; it can make the guest
 * run only functions the guest registered itself (the guest checks
 * tokens).  The guest is not trusted either: we only compare its done
 * word with the seq we delivered, and send it on when they match.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "xcuda/calls.h"
#include "hostfn.h"
#include "log.h"
#include "up_hostfn.h"

/* Both enqueues name the function first. */
_Static_assert(offsetof(struct xcuda_host_func_launch_args, token) == 0 &&
	       offsetof(struct xcuda_stream_add_callback_args, token) == 0,
	       "token first");

/* Polling the guest's done words while records are outstanding. */
#define XD_UP_HF_NAP_MIN_US	10
#define XD_UP_HF_NAP_MAX_US	1000

void xd_up_hf_init(struct xd_up_hf *h, struct xd_chan *c,
		   int (*send_done)(void *arg, const struct xcuda_up_done *d,
				    const struct xd_up_span *sp),
		   void *arg)
{
	memset(h, 0, sizeof(*h));
	h->c = c;
	h->futex = !!(c->flags & XD_CHAN_SHARED_FUTEX);
	h->send_done = send_done;
	h->arg = arg;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cv, NULL);
}

/* Forgets enqueue @i.  Lock held. */
static void xd_up_hf_enq_drop(struct xd_up_hf *h, unsigned int i)
{
	memmove(h->enq + i, h->enq + i + 1,
		(h->nenq - i - 1) * sizeof(*h->enq));
	h->nenq--;
	/* A copy older than every enqueue left runs before each of them. */
	while (h->ncopies &&
	       (!h->nenq || h->copies[h->chead].f < h->enq[0].f)) {
		h->chead = (h->chead + 1) % XD_UP_HF_MAX_COPIES;
		h->ncopies--;
	}
}

void xd_up_hf_forwarded(struct xd_up_hf *h, const struct xcuda_request *req,
			const struct xd_up_span *sp, unsigned int n)
{
	uint16_t op = req->hdr.op;
	uint64_t token = 0;
	unsigned int i;
	int enq = 0;

	if (!__atomic_load_n(&h->on, __ATOMIC_ACQUIRE))
		return;
	if (op == XCUDA_OP_HOST_FUNC_LAUNCH ||
	    op == XCUDA_OP_STREAM_ADD_CALLBACK) {
		if (req->hdr.len < sizeof(token))
			return;
		memcpy(&token, req->args, sizeof(token));
		/* The worker refuses token 0; 0 stands for graph launches. */
		if (!token)
			return;
		enq = 1;
	} else if (op == XCUDA_OP_GRAPH_LAUNCH) {
		enq = 2;
	} else if ((op != XCUDA_OP_MEMCPY && op != XCUDA_OP_MEMCPY_2D &&
		    op != XCUDA_OP_ARRAY_COPY) || !n) {
		return;
	}
	pthread_mutex_lock(&h->lock);
	h->fwd++;
	if (enq) {
		if (h->nenq == XD_UP_HF_MAX_ENQ)
			xd_up_hf_enq_drop(h, 0);
		h->enq[h->nenq++] = (struct xd_up_hf_enq){ h->fwd, token };
		/*
		 * A graph's own copies (@sp: the bytes its PUT sent) may read
		 * what its host nodes write: they count as after its launch.
		 */
		if (enq == 2 && n)
			h->fwd++;
		else
			n = 0;
	}
	if (h->nenq && n) {
		for (i = 0; i < n; i++) {
			if (h->ncopies == XD_UP_HF_MAX_COPIES) {
				h->chead = (h->chead + 1) %
					   XD_UP_HF_MAX_COPIES;
				h->ncopies--;
			}
			h->copies[(h->chead + h->ncopies++) %
				  XD_UP_HF_MAX_COPIES] =
				(struct xd_up_hf_copy){ h->fwd, sp[i] };
		}
	}
	pthread_mutex_unlock(&h->lock);
}

void xd_up_hf_answered(struct xd_up_hf *h, uint64_t token, int failed,
		       int graph)
{
	unsigned int i;

	if (!token)
		return;
	pthread_mutex_lock(&h->lock);
	/* Nothing will run for it as a one-shot function. */
	for (i = h->nenq; (failed || graph) && i-- > 0;) {
		if (h->enq[i].token == token) {
			xd_up_hf_enq_drop(h, i);
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
}

/*
 * The spans to refresh with the completion of a record of @token and
 * @flags, into h->sp: the copies after the enqueue that ran it (a
 * one-shot function's own, the oldest graph launch's), which it leaves.
 * Lock held.
 */
static unsigned int xd_up_hf_refresh(struct xd_up_hf *h, uint64_t token,
				     uint32_t flags)
{
	unsigned int i, k, n = 0;
	uint64_t f;

	for (i = 0; i < h->nenq; i++)
		if (h->enq[i].token == (flags & XCUDA_HOSTFN_GRAPH ? 0 : token))
			break;
	if (i == h->nenq)
		return 0;
	f = h->enq[i].f;
	for (k = 0; k < h->ncopies; k++) {
		const struct xd_up_hf_copy *cp =
			&h->copies[(h->chead + k) % XD_UP_HF_MAX_COPIES];

		if (cp->f > f)
			h->sp[n++] = cp->s;
	}
	xd_up_hf_enq_drop(h, i);
	return n;
}

int xd_up_hf_setup(struct xd_up_hf *h, uint64_t off, uint64_t len)
{
	if (h->area)
		return 0;
	if (off % 64 || len < sizeof(struct xcuda_hostfn_area) ||
	    !xcuda_extent_ok(off, len, h->c->arena_size))
		return -EPROTO;
	/* Only sessions with host functions pay for the bookkeeping. */
	h->copies = calloc(XD_UP_HF_MAX_COPIES, sizeof(*h->copies));
	h->enq = calloc(XD_UP_HF_MAX_ENQ, sizeof(*h->enq));
	h->sp = calloc(XD_UP_HF_MAX_COPIES, sizeof(*h->sp));
	if (!h->copies || !h->enq || !h->sp)
		return -ENOMEM;
	pthread_mutex_lock(&h->lock);
	h->area = (struct xcuda_hostfn_area *)(h->c->arena + off);
	pthread_mutex_unlock(&h->lock);
	__atomic_store_n(&h->on, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Waits @us for the done word @d of a shared futex to change, or naps. */
static void xd_up_hf_nap(struct xd_up_hf *h, uint32_t *d, uint32_t val,
			 unsigned int us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	if (h->futex)
		xd_futex(d, FUTEX_WAIT, val, &ts);
	else
		nanosleep(&ts, NULL);
}

/*
 * The watcher: sends each completion the guest stores, napping from
 * XD_UP_HF_NAP_MIN_US to _MAX_US between looks (on a shared futex the
 * guest wakes the done word it stored), and sleeps while nothing is
 * outstanding.
 */
static void *xd_up_hf_watch(void *arg)
{
	struct xd_up_hf *h = arg;
	unsigned int nap = XD_UP_HF_NAP_MIN_US, i, first;
	uint32_t seq[XCUDA_HOSTFN_SLOTS], d, fval = 0;
	uint64_t out, sent;
	int err = 0;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->out && !h->stop) {
			pthread_cond_wait(&h->cv, &h->lock);
			nap = XD_UP_HF_NAP_MIN_US;
		}
		if (h->stop)
			break;
		out = h->out;
		memcpy(seq, h->seq, sizeof(seq));
		pthread_mutex_unlock(&h->lock);
		sent = 0;
		first = XCUDA_HOSTFN_SLOTS;
		for (i = 0; i < XCUDA_HOSTFN_SLOTS && !err; i++) {
			if (!(out & (1ull << i)))
				continue;
			d = __atomic_load_n(&h->area->slot[i].done,
					    __ATOMIC_ACQUIRE);
			if (d == seq[i]) {
				struct xcuda_up_done f = {
					XCUDA_UP_DONE_MAGIC, i, d, 0
				};

				/* h->sp is this thread's alone. */
				pthread_mutex_lock(&h->lock);
				f.nr_ext = xd_up_hf_refresh(h, h->token[i],
							    h->flags[i]);
				pthread_mutex_unlock(&h->lock);
				err = h->send_done(h->arg, &f, h->sp);
				sent |= 1ull << i;
			} else if (first == XCUDA_HOSTFN_SLOTS) {
				first = i;
				fval = d;
			}
		}
		pthread_mutex_lock(&h->lock);
		for (i = 0; i < XCUDA_HOSTFN_SLOTS; i++)
			if ((sent & (1ull << i)) && h->seq[i] == seq[i])
				h->out &= ~(1ull << i);
		/* The link is lost: the receiving thread says so. */
		if (err)
			break;
		if (sent || first == XCUDA_HOSTFN_SLOTS) {
			nap = XD_UP_HF_NAP_MIN_US;
			continue;
		}
		pthread_mutex_unlock(&h->lock);
		xd_up_hf_nap(h, &h->area->slot[first].done, fval, nap);
		if (nap < XD_UP_HF_NAP_MAX_US)
			nap *= 2;
		pthread_mutex_lock(&h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

int xd_up_hf_record(struct xd_up_hf *h, const struct xcuda_up_rec *r,
		    struct xd_up_rd *rd)
{
	int ret = 0;

	if (!h->area || r->slot >= XCUDA_HOSTFN_SLOTS || !r->seq ||
	    r->plen > XCUDA_UP_REC_MAX ||
	    (r->plen ? !xcuda_extent_ok(r->poff, r->plen, h->c->arena_size)
		     : r->poff != 0))
		return -EPROTO;
	if (r->plen) {
		ret = xd_up_rd_read(rd, h->c->arena + r->poff, r->plen,
				    XD_UP_STALL_MS);
		if (ret)
			return ret == -EPIPE ? -EPROTO : ret;
	}
	xd_hostfn_post(h->area, r->slot, r->token, r->status, r->flags,
		       r->arg, r->seq, h->futex);
	pthread_mutex_lock(&h->lock);
	h->seq[r->slot] = r->seq;
	h->token[r->slot] = r->token;
	h->flags[r->slot] = r->flags;
	h->out |= 1ull << r->slot;
	if (!h->started && !h->stop) {
		if (pthread_create(&h->th, NULL, xd_up_hf_watch, h))
			ret = -ENOMEM;
		else
			h->started = 1;
	}
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->lock);
	return ret;
}

void xd_up_hf_fini(struct xd_up_hf *h)
{
	pthread_mutex_lock(&h->lock);
	h->stop = 1;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->lock);
	if (h->started)
		pthread_join(h->th, NULL);
	h->started = 0;
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->lock);
	free(h->copies);
	free(h->enq);
	free(h->sp);
}
