// SPDX-License-Identifier: MIT
/*
 * Host functions of the guest (hostfn.h; docs/protocol.md, "Host
 * functions").  CUDA runs xd_hostfn_trampoline() on a thread of its own
 * while the session's thread may be blocked in CUDA on the very stream
 * (cudaStreamSynchronize), so nothing here goes through the request
 * loop: the trampoline publishes a record in the slot area, wakes the
 * guest (a futex on `local`; the guest polls on `xen`; on `tcp` the area
 * is a copy and the transport sends the record to the guest's, and reads
 * the completion back: hostfn_publish, hostfn_wait) and waits for the
 * guest's completion word, looking every XD_HOSTFN_LIVENESS_MS whether
 * the guest is still there.
 *
 * The slot area is guest memory: we only ever write a record into a slot
 * our own bookkeeping says is free, and only compare its completion word
 * with the sequence number we wrote.  Garbage there makes a trampoline
 * wait (until the guest goes away), nothing else.
 *
 * CUDA's userData is an id in one table of the process (index and
 * generation), so a trampoline that runs after its context or session is
 * gone finds nothing.  One lock serves the table and every session's
 * bookkeeping: it is held only for a few stores.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "common/ring_wait.h"
#include "xcuda/hostfn.h"
#include "hostfn.h"
#include "log.h"
#include "ops.h"

/* Polling for the guest's completion where there is no shared futex. */
#define XD_HF_NAP_MIN_US	10
#define XD_HF_NAP_MAX_US	1000

struct xd_hostfn {
	struct xd_chan *chan;
	struct xcuda_hostfn_area *area;
	int futex;		/* the guest can wake us, we can wake it */
	int link;		/* the area is a copy: the transport carries */
	int abort;		/* atomic: the session is ending */
	unsigned int active;	/* trampolines inside fire() */
	unsigned int nctx;
	uint32_t seq;		/* the last sequence number written */
	uint8_t busy[XCUDA_HOSTFN_SLOTS];
};

struct xd_hf_ctx {
	uint32_t gen;		/* odd while in use */
	uint32_t flags;		/* XD_HOSTFN_* */
	uint64_t token;
	struct xd_hostfn *st;
	uint32_t next_free;
	uint32_t plen;		/* a payload buffer [poff, poff + plen) */
	uint64_t poff;
};

static pthread_mutex_t xd_hf_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * Held by a trampoline with a payload from before it looks up its
 * context until the guest completed the record: one payload record at a
 * time, so a buffer is never rewritten while the guest reads it, and
 * xd_hostfn_ctx_drop_wait() can wait for the last writer.
 */
static pthread_mutex_t xd_hf_payload_lock = PTHREAD_MUTEX_INITIALIZER;
/* A slot was freed, a trampoline left, or a session is ending. */
static pthread_cond_t xd_hf_cv;
static pthread_once_t xd_hf_once = PTHREAD_ONCE_INIT;
static struct xd_hf_ctx *xd_hf_tab;
static uint32_t xd_hf_cap, xd_hf_free = UINT32_MAX;

static void xd_hf_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&xd_hf_cv, &a);
	pthread_condattr_destroy(&a);
}

long xd_futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

void xd_hostfn_post(struct xcuda_hostfn_area *area, unsigned int i,
		    uint64_t token, int32_t status, uint32_t flags,
		    uint64_t arg, uint32_t seq, int futex)
{
	struct xcuda_hostfn_slot *sl = &area->slot[i];

	__atomic_store_n(&sl->token, token, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->status, status, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->flags, flags, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->arg, arg, __ATOMIC_RELAXED);
	/* The guest reads seq first (acquire): it goes last. */
	__atomic_store_n(&sl->seq, seq, __ATOMIC_RELEASE);
	__atomic_add_fetch(&area->wake, 1, __ATOMIC_SEQ_CST);
	if (futex)
		xd_futex(&area->wake, FUTEX_WAKE, INT_MAX, NULL);
}

/* ---- the table of contexts ---- */

static void *xd_hf_id(uint32_t idx, uint32_t gen)
{
	return (void *)(uintptr_t)(((uint64_t)gen << 32) | (idx + 1u));
}

/* The live context @user_data names, or NULL.  Lock held. */
static struct xd_hf_ctx *xd_hf_get(void *user_data)
{
	uint64_t id = (uintptr_t)user_data;
	uint32_t idx = (uint32_t)id - 1u, gen = (uint32_t)(id >> 32);

	if (idx >= xd_hf_cap || !(gen & 1) || xd_hf_tab[idx].gen != gen)
		return NULL;
	return &xd_hf_tab[idx];
}

static void xd_hf_put(struct xd_hf_ctx *c)
{
	c->st->nctx--;
	c->gen++;	/* even: free; old ids no longer match */
	c->st = NULL;
	c->next_free = xd_hf_free;
	xd_hf_free = (uint32_t)(c - xd_hf_tab);
}

int xd_hostfn_ctx_new(struct xd_session *s, uint64_t token,
		      unsigned int flags, void **user_data)
{
	struct xd_hostfn *st = s->hostfn;
	struct xd_hf_ctx *c;
	uint32_t idx;
	int err = 0;

	if (!st || !token || (flags & ~XD_HOSTFN_GRAPH))
		return cudaErrorInvalidValue;
	pthread_mutex_lock(&xd_hf_lock);
	if (st->nctx >= XD_HOSTFN_MAX_CTX) {
		err = cudaErrorMemoryAllocation;
		goto out;
	}
	if (xd_hf_free == UINT32_MAX) {
		uint32_t n = xd_hf_cap ? xd_hf_cap * 2 : 64, i;
		struct xd_hf_ctx *t;

		if (n > (UINT32_MAX >> 1)) {
			err = cudaErrorMemoryAllocation;
			goto out;
		}
		t = realloc(xd_hf_tab, (size_t)n * sizeof(*t));
		if (!t) {
			err = cudaErrorMemoryAllocation;
			goto out;
		}
		memset(t + xd_hf_cap, 0, (size_t)(n - xd_hf_cap) * sizeof(*t));
		for (i = n; i-- > xd_hf_cap;) {
			t[i].next_free = xd_hf_free;
			xd_hf_free = i;
		}
		xd_hf_tab = t;
		xd_hf_cap = n;
	}
	idx = xd_hf_free;
	c = &xd_hf_tab[idx];
	xd_hf_free = c->next_free;
	c->gen++;	/* odd: in use */
	c->flags = flags;
	c->token = token;
	c->st = st;
	c->poff = 0;
	c->plen = 0;
	st->nctx++;
	*user_data = xd_hf_id(idx, c->gen);
out:
	pthread_mutex_unlock(&xd_hf_lock);
	return err;
}

void xd_hostfn_ctx_keep(void *user_data)
{
	struct xd_hf_ctx *c;

	pthread_mutex_lock(&xd_hf_lock);
	c = xd_hf_get(user_data);
	if (c)
		c->flags |= XD_HOSTFN_GRAPH;
	pthread_mutex_unlock(&xd_hf_lock);
}

void xd_hostfn_ctx_drop(void *user_data)
{
	struct xd_hf_ctx *c;

	pthread_mutex_lock(&xd_hf_lock);
	c = xd_hf_get(user_data);
	if (c)
		xd_hf_put(c);
	pthread_mutex_unlock(&xd_hf_lock);
}

int xd_hostfn_ctx_payload(struct xd_session *s, void *user_data,
			  uint64_t off, uint32_t len)
{
	struct xd_hf_ctx *c;
	int err = cudaErrorInvalidValue;

	if (len < XD_HOSTFN_PAYLOAD_MIN || len > XD_HOSTFN_PAYLOAD_MAX ||
	    !xcuda_extent_ok(off, len, s->chan->arena_size))
		return err;
	pthread_mutex_lock(&xd_hf_lock);
	c = xd_hf_get(user_data);
	if (c && s->hostfn && c->st == s->hostfn) {
		c->poff = off;
		c->plen = len;
		err = 0;
	}
	pthread_mutex_unlock(&xd_hf_lock);
	return err;
}

void xd_hostfn_ctx_drop_wait(void *user_data)
{
	xd_hostfn_ctx_drop(user_data);
	pthread_mutex_lock(&xd_hf_payload_lock);
	pthread_mutex_unlock(&xd_hf_payload_lock);
}

uint64_t xd_hostfn_ctx_token(struct xd_session *s, void *user_data)
{
	struct xd_hf_ctx *c;
	uint64_t token = 0;

	pthread_mutex_lock(&xd_hf_lock);
	c = xd_hf_get(user_data);
	if (c && s->hostfn && c->st == s->hostfn)
		token = c->token;
	pthread_mutex_unlock(&xd_hf_lock);
	return token;
}

unsigned int xd_hostfn_ctx_count(struct xd_session *s)
{
	unsigned int n;

	pthread_mutex_lock(&xd_hf_lock);
	n = s->hostfn ? s->hostfn->nctx : 0;
	pthread_mutex_unlock(&xd_hf_lock);
	return n;
}

/* ---- running one ---- */

static int xd_hf_aborted(struct xd_hostfn *st)
{
	return __atomic_load_n(&st->abort, __ATOMIC_ACQUIRE);
}

/* The guest has gone: every trampoline of the session returns.  Lock held. */
static void xd_hf_set_abort(struct xd_hostfn *st)
{
	unsigned int i;

	if (xd_hf_aborted(st))
		return;
	__atomic_store_n(&st->abort, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&xd_hf_cv);
	if (st->futex || st->link)
		for (i = 0; i < XCUDA_HOSTFN_SLOTS; i++)
			if (st->busy[i])
				xd_futex(&st->area->slot[i].done, FUTEX_WAKE,
					 INT_MAX, NULL);
}

static int xd_hf_peer_gone(struct xd_hostfn *st)
{
	return st->chan && st->chan->ops && st->chan->ops->peer_gone &&
	       st->chan->ops->peer_gone(st->chan);
}

/*
 * Waits until the guest stores @seq in the slot's completion word, the
 * session ends or the guest goes away.  Any other value there is the
 * guest's business: we keep waiting.
 */
static void xd_hf_wait(struct xd_hostfn *st, struct xcuda_hostfn_slot *sl,
		       uint32_t seq)
{
	uint64_t next_look = xr_now_ns() + XD_HOSTFN_LIVENESS_MS * 1000000ull;
	unsigned int nap_us = XD_HF_NAP_MIN_US;

	for (;;) {
		uint32_t d = __atomic_load_n(&sl->done, __ATOMIC_ACQUIRE);
		uint64_t now;

		if (d == seq || xd_hf_aborted(st))
			return;
		now = xr_now_ns();
		if (now >= next_look) {
			if (xd_hf_peer_gone(st)) {
				xd_log(XD_LOG_DEBUG, "host function: the "
				       "guest has gone");
				pthread_mutex_lock(&xd_hf_lock);
				xd_hf_set_abort(st);
				pthread_mutex_unlock(&xd_hf_lock);
				return;
			}
			next_look = now + XD_HOSTFN_LIVENESS_MS * 1000000ull;
		}
		if (st->link) {
			st->chan->ops->hostfn_wait(st->chan, &sl->done, d,
						   nap_us);
			if (nap_us < XD_HF_NAP_MAX_US)
				nap_us *= 2;
		} else if (st->futex) {
			struct timespec ts = {
				0, XD_HOSTFN_LIVENESS_MS * 1000000l
			};

			xd_futex(&sl->done, FUTEX_WAIT, d, &ts);
		} else {
			struct timespec ts = { 0, (long)nap_us * 1000 };

			nanosleep(&ts, NULL);
			if (nap_us < XD_HF_NAP_MAX_US)
				nap_us *= 2;
		}
	}
}

/* A free slot, waiting for one (and watching the guest).  Lock held. */
static int xd_hf_slot(struct xd_hostfn *st)
{
	for (;;) {
		struct timespec ts;
		unsigned int i;

		for (i = 0; i < XCUDA_HOSTFN_SLOTS; i++)
			if (!st->busy[i])
				return (int)i;
		if (xd_hf_aborted(st))
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += XD_HOSTFN_LIVENESS_MS * 1000000l;
		if (ts.tv_nsec >= 1000000000l) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000l;
		}
		if (pthread_cond_timedwait(&xd_hf_cv, &xd_hf_lock, &ts) ==
		    ETIMEDOUT && xd_hf_peer_gone(st))
			xd_hf_set_abort(st);
	}
}

static void xd_hf_fire(void *user_data, int32_t status, const void *data,
		       size_t len)
{
	struct xcuda_hostfn_slot *sl;
	struct xd_hostfn *st;
	struct xd_hf_ctx *c;
	uint32_t flags, seq, plen;
	uint64_t token, poff, plen_out = 0;
	int slot;

	pthread_once(&xd_hf_once, xd_hf_init);
	pthread_mutex_lock(&xd_hf_lock);
	c = xd_hf_get(user_data);
	if (!c) {
		pthread_mutex_unlock(&xd_hf_lock);
		return;
	}
	st = c->st;
	token = c->token;
	flags = c->flags;
	poff = c->poff;
	plen = c->plen;
	/* A one-shot context can fire once only, whatever CUDA does. */
	if (!(flags & XD_HOSTFN_GRAPH))
		xd_hf_put(c);
	if (xd_hf_aborted(st)) {
		pthread_mutex_unlock(&xd_hf_lock);
		return;
	}
	st->active++;
	slot = xd_hf_slot(st);
	if (slot < 0)
		goto out;
	st->busy[slot] = 1;
	seq = ++st->seq;
	if (!seq)
		seq = ++st->seq;
	pthread_mutex_unlock(&xd_hf_lock);

	sl = &st->area->slot[slot];
	if (data && plen) {
		if (len > plen)
			len = plen;
		memcpy(st->chan->arena + poff, data, len);
		plen_out = len;
	}
	xd_hostfn_post(st->area, (unsigned int)slot, token, status,
		       flags & XD_HOSTFN_GRAPH ? XCUDA_HOSTFN_GRAPH : 0,
		       plen_out, seq, st->futex);
	/* A failure ends the link: the wait finds the guest gone. */
	if (st->link)
		(void)st->chan->ops->hostfn_publish(st->chan, (unsigned int)slot,
						    plen_out ? poff : 0,
						    plen_out);
	xd_hf_wait(st, sl, seq);

	pthread_mutex_lock(&xd_hf_lock);
	st->busy[slot] = 0;
out:
	st->active--;
	pthread_cond_broadcast(&xd_hf_cv);
	pthread_mutex_unlock(&xd_hf_lock);
}

void CUDART_CB xd_hostfn_trampoline(void *user_data)
{
	xd_hf_fire(user_data, cudaSuccess, NULL, 0);
}

void xd_hostfn_fire_data(void *user_data, int32_t status, const void *data,
			 size_t len)
{
	pthread_mutex_lock(&xd_hf_payload_lock);
	xd_hf_fire(user_data, status, data, len);
	pthread_mutex_unlock(&xd_hf_payload_lock);
}

void CUDART_CB xd_hostfn_callback(cudaStream_t stream, cudaError_t status,
				  void *user_data)
{
	(void)stream;
	xd_hf_fire(user_data, status, NULL, 0);
}

/* ---- the session ---- */

int xd_hostfn_setup(struct xd_session *s, uint64_t off, uint64_t len)
{
	struct xd_hostfn *st;

	pthread_once(&xd_hf_once, xd_hf_init);
	if (s->hostfn || off % 64 || len < sizeof(struct xcuda_hostfn_area) ||
	    !xcuda_extent_ok(off, len, s->chan->arena_size))
		return cudaErrorInvalidValue;
	st = calloc(1, sizeof(*st));
	if (!st)
		return cudaErrorMemoryAllocation;
	st->chan = s->chan;
	st->area = (struct xcuda_hostfn_area *)(s->chan->arena + off);
	st->futex = !!(s->chan->flags & XD_CHAN_SHARED_FUTEX);
	/* A copy of the guest's area: the transport carries the records. */
	if (s->chan->ops && s->chan->ops->hostfn_setup) {
		if (!s->chan->ops->hostfn_publish ||
		    !s->chan->ops->hostfn_wait ||
		    s->chan->ops->hostfn_setup(s->chan, off, len)) {
			free(st);
			return cudaErrorMemoryAllocation;
		}
		st->link = 1;
	}
	pthread_mutex_lock(&xd_hf_lock);
	s->hostfn = st;
	pthread_mutex_unlock(&xd_hf_lock);
	return 0;
}

void xd_hostfn_abort(struct xd_session *s)
{
	struct xd_hostfn *st = s->hostfn;

	if (!st)
		return;
	pthread_once(&xd_hf_once, xd_hf_init);
	pthread_mutex_lock(&xd_hf_lock);
	xd_hf_set_abort(st);
	while (st->active)
		pthread_cond_wait(&xd_hf_cv, &xd_hf_lock);
	pthread_mutex_unlock(&xd_hf_lock);
}

/*
 * First of the session's teardown: the streams and graphs destroyed
 * after it may still run trampolines, which then return at once.
 */
static void xd_hostfn_fini(struct xd_session *s)
{
	struct xd_hostfn *st = s->hostfn;
	uint32_t i;

	if (!st)
		return;
	xd_hostfn_abort(s);
	pthread_mutex_lock(&xd_hf_lock);
	for (i = 0; i < xd_hf_cap; i++)
		if ((xd_hf_tab[i].gen & 1) && xd_hf_tab[i].st == st)
			xd_hf_put(&xd_hf_tab[i]);
	s->hostfn = NULL;
	pthread_mutex_unlock(&xd_hf_lock);
	free(st);
}

XD_SESSION_HOOKS(hostfn, 1, NULL, xd_hostfn_fini);
