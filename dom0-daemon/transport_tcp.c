// SPDX-License-Identifier: MIT
/*
 * The `tcp` transport: the worker's end of the upstream link on the GPU
 * server (xcuda/upstream.h).  The guest is on another host, behind a
 * relay (relay.c) that forwards its requests one frame each, with the
 * arena bytes the worker will read (up_spans.h), and takes back each
 * answer with the arena bytes the worker wrote.  The arena here is a
 * memfd of this process, as on `xen`, so that CUDA can pin it; it holds
 * the guest's bytes only where requests brought them (XD_CHAN_REMOTE).
 *
 * The relay is not trusted any more than a guest: every frame is checked
 * (magic, sizes, the extents' bytes as both ends list them), anything
 * else ends the session, and the worker validates each request as it
 * always does.
 *
 * Writes into the arena come back to the guest:
 *  - a synchronous request's with its answer;
 *  - a posted one's (an asynchronous copy into the arena) are pending
 *    until the next answer to a synchronous request: the device is
 *    waited for first, the bytes then sent with that answer, which is
 *    when the guest may look at them.  While pending, what a later
 *    request brings for those bytes is dropped: the copy's are newer.
 *  - a graph's copies' (graph_ext, up_graph.h) are a posted copy's; the
 *    bytes they read come in a PUT frame before the GRAPH_LAUNCH, and
 *    are taken as a request's are, pending ones excepted.
 *  - a failed copy's are dropped (the guest's bytes stay as they were).
 * Small answers gather in a buffer while more requests wait to be read,
 * so that a run of posted calls costs the link few segments; answers
 * held back go out before we wait for the next request.
 *
 * While a request runs longer than the relay's alive_ms (at most
 * XD_UP_HEARTBEAT_MS: a long kernel waited for), a thread of ours sends
 * an empty extents frame each time that passes, so that the relay can
 * tell a busy server from a vanished one (its XCUDA_UPSTREAM_TIMEOUT_S).
 * It writes under @wlock, which the worker's thread holds while it
 * builds and sends frames.
 *
 * Host functions (hostfn.c): the slot area here is a copy.  A trampoline
 * that publishes a record sends it to the relay (an xrec frame, under
 * @wlock), and waits for the guest's completion (an xdon frame), which
 * it must read itself when the worker's thread is blocked in CUDA on its
 * stream.  So once the session has a slot area, reading the socket takes
 * @rlock (leader/follower): the worker's thread holds it in next(); a
 * waiting trampoline that gets it reads whole frames, applies
 * completions and queues requests, with their bytes in the arena, for
 * next(), which takes those first.  Pending extents (what a request's
 * bytes must not overwrite) are then under @plock, which the worker
 * holds while it answers.  Without host functions neither lock is taken.
 * A record goes after the pending extents as they are, since the
 * function may read what a copy before it in its stream wrote; a
 * completion brings the bytes that copies queued after the function will
 * read (the relay's choice), which the function may have written.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/socket.h>

#include <cuda_runtime_api.h>

#include "xcuda/calls.h"
#include "xcuda/hostfn.h"
#include "common/ring_wait.h"
#include "hostfn.h"
#include "log.h"
#include "shm.h"
#include "transport_tcp.h"
#include "up_mapped.h"
#include "up_spans.h"

#define XD_TCP_RD_BUF	(256u << 10)
#define XD_TCP_WR_BUF	(256u << 10)
#define XD_TCP_IOV	1024
#define XD_TCP_MAX_DEVS	64
/* Requests a trampoline may queue: more than any ring holds. */
#define XD_TCP_MAX_Q	4096
/* Frames a trampoline reads in one go before it lets the worker in. */
#define XD_TCP_FOLLOW	64

/* An extent the worker wrote; @dev: the device of a posted copy. */
struct xd_tcp_out {
	struct xd_up_span s;
	uint16_t dev;
};

struct xd_tcp {
	int fd;
	int dead;		/* atomic: the error that ended the link, or 0 */
	struct xd_shm shm;
	struct xd_up_rd rd;
	struct xd_up_wr wr;
	char peer[64];
	/* The request being handled, taken by next(). */
	uint16_t op, device;
	/* Its extents the worker writes (synchronous ones go at once). */
	struct xd_tcp_out *cur;
	unsigned int ncur, capcur;
	/*
	 * The handler noted some of them (note_out): a copy's, which the
	 * device may still be doing even when the answer is not posted.
	 */
	int cur_noted;
	/* Posted requests' extents, waiting for a synchronous answer. */
	struct xd_tcp_out *pend;
	unsigned int npend, cappend;
	uint64_t pend_devs;	/* bit d: device d's copies are pending */
	struct xd_up_span spans[XD_UP_SPANS_MAX];
	/* The heartbeat: @wr is shared with it under @wlock. */
	pthread_mutex_t wlock;
	pthread_cond_t hb_cond;
	pthread_t hb;
	int hb_started;
	int hb_stop;		/* under wlock */
	int busy;		/* a request is being handled (wlock) */
	uint64_t sent_ns;	/* the clock at our last frame (wlock) */
	uint64_t hb_ns;		/* the heartbeat's period */
	/* Host functions: the slot area of the copy (atomic hf_on). */
	int hf_on;
	uint64_t hf_off;
	pthread_mutex_t rlock;	/* @rd, the queue, @fspans (hf_on) */
	int rwant;		/* atomic: the worker waits for rlock */
	pthread_mutex_t plock;	/* @pend, against a trampoline reading */
	struct xcuda_request *rq;	/* read by a trampoline, for next() */
	unsigned int rqhead, rqlen, rqcap;
	struct xd_up_span fspans[XD_UP_SPANS_MAX];	/* a trampoline's */
	int put;		/* a PUT came: its GRAPH_LAUNCH must follow */
	/* Mapped page-locked memory (up_mapped.h). */
	struct xd_up_map map;
	uint64_t doff, dlen;	/* the request's data extent */
};

static int xd_tcp_push(struct xd_tcp_out **v, unsigned int *n,
		       unsigned int *cap, const struct xd_up_span *s,
		       uint16_t dev)
{
	if (*n == *cap) {
		unsigned int c = *cap ? *cap * 2 : 16;
		struct xd_tcp_out *g = realloc(*v, c * sizeof(*g));

		if (!g)
			return -ENOMEM;
		*v = g;
		*cap = c;
	}
	(*v)[*n].s = *s;
	(*v)[(*n)++].dev = dev;
	return 0;
}

static int xd_tcp_dead(struct xd_tcp *t)
{
	return __atomic_load_n(&t->dead, __ATOMIC_ACQUIRE);
}

static int xd_tcp_hf(struct xd_tcp *t)
{
	return __atomic_load_n(&t->hf_on, __ATOMIC_ACQUIRE);
}

/* The link is over: every later call says so.  Any thread. */
static int xd_tcp_fail(struct xd_tcp *t, int err, const char *what)
{
	int none = 0;

	if (__atomic_compare_exchange_n(&t->dead, &none, err, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (err == -EPROTO)
			xd_log(XD_LOG_WARN, "relay %s sent a malformed frame "
			       "(%s): ending the session", t->peer, what);
		else if (err != -EPIPE)
			xd_log(XD_LOG_WARN, "relay %s: %s: %s", t->peer, what,
			       strerror(-err));
	}
	return err;
}

/* ---- requests ---- */

/*
 * Where [@pos, @end) first meets a pending extent's rows: [*@cs, *@ce),
 * or *@cs = *@ce = @end when it does not.
 */
static void xd_tcp_covered(const struct xd_tcp *t, uint64_t pos,
			   uint64_t end, uint64_t *cs, uint64_t *ce)
{
	unsigned int i;

	*cs = *ce = end;
	for (i = 0; i < t->npend; i++) {
		const struct xd_up_span *p = &t->pend[i].s;
		uint64_t k = pos <= p->off ? 0 : (pos - p->off) / p->pitch;
		uint64_t rs, re, s;

		if (k >= p->rows)
			continue;
		rs = p->off + k * p->pitch;
		re = rs + p->width;
		if (re <= pos) {
			if (++k >= p->rows)
				continue;
			rs += p->pitch;
			re += p->pitch;
		}
		if (rs >= end)
			continue;
		s = rs > pos ? rs : pos;
		if (re > end)
			re = end;
		if (s < *cs) {
			*cs = s;
			*ce = re;
		} else if (s == *cs && re > *ce) {
			*ce = re;
		}
	}
}

/*
 * @len bytes of the frame into the arena at @off; the mapped ones into
 * the shadow too, at once, so that no diff sends them back.
 */
static int xd_tcp_read_arena(struct xd_tcp *t, struct xd_chan *c,
			     uint64_t off, uint64_t len)
{
	struct xd_up_span s = { off, len, len, 1 };
	int ret;

	if (!xd_up_map_any(&t->map))
		return xd_up_rd_read(&t->rd, c->arena + off, len,
				     XD_UP_STALL_MS);
	xd_up_map_lock(&t->map);
	ret = xd_up_rd_read(&t->rd, c->arena + off, len, XD_UP_STALL_MS);
	if (!ret)
		xd_up_map_mirror_locked(&t->map, c->arena, &s);
	xd_up_map_unlock(&t->map);
	return ret;
}

/* @len bytes of the frame into the arena at @off, less the pending ones. */
static int xd_tcp_read_range(struct xd_tcp *t, struct xd_chan *c,
			     uint64_t off, uint64_t len)
{
	uint64_t pos = off, end = off + len, cs, ce;
	int ret;

	if (!t->npend)
		return xd_tcp_read_arena(t, c, off, len);
	while (pos < end) {
		xd_tcp_covered(t, pos, end, &cs, &ce);
		ret = cs > pos ? xd_tcp_read_arena(t, c, pos, cs - pos) : 0;
		if (!ret && ce > cs)
			ret = xd_up_rd_read(&t->rd, NULL, ce - cs,
					    XD_UP_STALL_MS);
		if (ret)
			return ret;
		pos = ce;
	}
	return 0;
}

/* Sends what is held back unless @len bytes are here to read already. */
static int xd_tcp_flush_before(struct xd_tcp *t, uint64_t len)
{
	int ret = 0;

	if (xd_up_rd_buffered(&t->rd) >= len)
		return 0;
	/*
	 * Unlocked, the writer holds only our own frames while we wait (the
	 * heartbeat writes only while we handle a request); trampolines
	 * write at any time.
	 */
	if (!xd_tcp_hf(t) && !xd_up_wr_pending(&t->wr))
		return 0;
	pthread_mutex_lock(&t->wlock);
	if (xd_up_wr_pending(&t->wr)) {
		ret = xd_up_wr_flush(&t->wr);
		t->sent_ns = xr_now_ns();
	}
	pthread_mutex_unlock(&t->wlock);
	return ret ? xd_tcp_fail(t, ret, "cannot send") : 0;
}

/*
 * @nr extents of a frame, each a struct xcuda_up_ext and its rows, into
 * the arena less the pending bytes (a trampoline, @follower, holds plock
 * for that): 0, -ERANGE for an extent outside the arena, or the read's
 * error.
 */
static int xd_tcp_read_exts(struct xd_tcp *t, struct xd_chan *c,
			    unsigned int nr, int follower)
{
	struct xcuda_up_ext e;
	struct xd_up_span s;
	unsigned int i;
	uint64_t k;
	int ret = 0;

	if (follower)
		pthread_mutex_lock(&t->plock);
	for (i = 0; i < nr && !ret; i++) {
		ret = xd_up_rd_read(&t->rd, &e, sizeof(e), XD_UP_STALL_MS);
		s = (struct xd_up_span){ e.off, e.width, e.pitch, e.rows };
		if (!ret && !xd_up_span_ok(&s, c->arena_size))
			ret = -ERANGE;
		for (k = 0; k < s.rows && !ret; k++)
			ret = xd_tcp_read_range(t, c, s.off + k * s.pitch,
						s.width);
	}
	if (follower)
		pthread_mutex_unlock(&t->plock);
	return ret;
}

/*
 * A PUT frame after its 8 bytes (@head): each extent checked against the
 * arena alone (the relay's table is not ours to trust), its rows into the
 * arena, pending bytes excepted (a trampoline, @follower, holds plock for
 * that).
 */
static int xd_tcp_put(struct xd_tcp *t, struct xd_chan *c, const void *head,
		      int follower)
{
	struct xcuda_up_put f;
	int ret;

	memcpy(&f, head, sizeof(f));
	if (!f.nr || f.nr > XCUDA_UP_GEXT_MAX)
		return xd_tcp_fail(t, -EPROTO, "a graph's bytes: bad count");
	ret = xd_tcp_read_exts(t, c, f.nr, follower);
	if (ret == -ERANGE)
		return xd_tcp_fail(t, -EPROTO, "a graph's bytes: an extent "
				   "outside the arena");
	if (ret)
		return xd_tcp_fail(t, ret == -EPIPE || ret == -ETIMEDOUT ?
				   -EPROTO : ret, "a truncated graph's bytes");
	t->put = 1;
	return 0;
}

/*
 * An XMAP frame after its 8 bytes (@head): runs of the guest's mapped
 * page-locked memory that it changed, each within one pinned extent of
 * ours (which is mapped from now on, up_mapped.h), into the arena and the
 * shadow, pending bytes excepted (a trampoline, @follower, holds plock
 * for that).
 */
static int xd_tcp_xmap(struct xd_tcp *t, struct xd_chan *c, const void *head,
		       int follower)
{
	struct xcuda_up_xmap f;
	struct xcuda_up_ext e;
	unsigned int i;
	int ret = 0;

	memcpy(&f, head, sizeof(f));
	if (!f.nr || f.nr > XCUDA_UP_MAX_OUT)
		return xd_tcp_fail(t, -EPROTO, "mapped bytes: bad count");
	if (follower)
		pthread_mutex_lock(&t->plock);
	for (i = 0; i < f.nr && !ret; i++) {
		ret = xd_up_rd_read(&t->rd, &e, sizeof(e), XD_UP_STALL_MS);
		if (!ret && (e.rows != 1 || e.pitch != e.width))
			ret = -EPROTO;
		if (!ret)
			ret = xd_up_map_take(&t->map, c->arena, e.off, e.width);
		if (!ret)
			ret = xd_tcp_read_range(t, c, e.off, e.width);
	}
	if (follower)
		pthread_mutex_unlock(&t->plock);
	if (ret == -ENOMEM)
		return xd_tcp_fail(t, ret, "no room for a shadow");
	if (ret == -EPROTO)
		return xd_tcp_fail(t, ret, "mapped bytes outside a pinned "
				   "extent");
	if (ret)
		return xd_tcp_fail(t, ret == -EPIPE || ret == -ETIMEDOUT ?
				   -EPROTO : ret, "truncated mapped bytes");
	return 0;
}

/*
 * The guest completed a record: first the arena bytes that copies queued
 * behind the function will read (less pending ones, as for a request;
 * a trampoline, @follower, holds plock for that), then the done word of
 * our copy's slot, which the trampoline compares with the seq it wrote,
 * nothing else.
 */
static int xd_tcp_done(struct xd_tcp *t, struct xd_chan *c,
		       const struct xcuda_up_done *d, int follower)
{
	struct xcuda_hostfn_area *a;
	int ret;

	if (!xd_tcp_hf(t) || d->slot >= XCUDA_HOSTFN_SLOTS ||
	    d->nr_ext > XCUDA_UP_MAX_OUT)
		return xd_tcp_fail(t, -EPROTO, "a bad completion");
	ret = xd_tcp_read_exts(t, c, d->nr_ext, follower);
	if (ret)
		return xd_tcp_fail(t, ret == -EPIPE || ret == -ETIMEDOUT ||
				   ret == -ERANGE ? -EPROTO : ret,
				   "a bad completion");
	a = (struct xcuda_hostfn_area *)(c->arena + t->hf_off);
	__atomic_store_n(&a->slot[d->slot].done, d->done, __ATOMIC_RELEASE);
	xd_futex(&a->slot[d->slot].done, FUTEX_WAKE, INT_MAX, NULL);
	return 0;
}

/*
 * One frame from the relay, by the reader (rlock held once hf_on): 1
 * with a request in *@f and its bytes in the arena, 0 for a completion
 * (applied), or a negative errno.  A trampoline (@follower) neither
 * flushes our answers nor reads while the worker answers (plock).
 */
static int xd_tcp_frame_in(struct xd_tcp *t, struct xd_chan *c,
			   struct xcuda_up_req *f, struct xd_up_span *spans,
			   int follower)
{
	const size_t head = sizeof(struct xcuda_up_put);
	uint64_t total = 0;
	unsigned int n, i, k;
	int ret;

	/* The first 8 bytes say which: a graph's PUT is no longer. */
	ret = xd_up_rd_read(&t->rd, f, head, XD_UP_STALL_MS);
	if (ret == -EPIPE)
		return xd_tcp_fail(t, ret, "closed");
	if (ret)
		return xd_tcp_fail(t, ret == -ETIMEDOUT ? -EPROTO : ret,
				   "a truncated request");
	/* A graph's bytes come right before its launch, and only then. */
	if (t->put && f->magic != XCUDA_UP_REQ_MAGIC)
		return xd_tcp_fail(t, -EPROTO, "a graph's bytes without "
				   "their launch");
	if (f->magic == XCUDA_UP_DONE_MAGIC) {
		struct xcuda_up_done d;

		memcpy(&d, f, head);
		ret = xd_up_rd_read(&t->rd, (uint8_t *)&d + head,
				    sizeof(d) - head, XD_UP_STALL_MS);
		if (ret)
			return xd_tcp_fail(t, ret == -EPIPE ||
					   ret == -ETIMEDOUT ? -EPROTO : ret,
					   "a truncated completion");
		return xd_tcp_done(t, c, &d, follower);
	}
	if (f->magic == XCUDA_UP_PUT_MAGIC)
		return xd_tcp_put(t, c, f, follower);
	if (f->magic == XCUDA_UP_XMAP_MAGIC)
		return xd_tcp_xmap(t, c, f, follower);
	if (f->magic != XCUDA_UP_REQ_MAGIC)
		return xd_tcp_fail(t, -EPROTO, "bad magic");
	ret = xd_up_rd_read(&t->rd, (uint8_t *)f + head, sizeof(*f) - head,
			    XD_UP_STALL_MS);
	if (ret)
		return xd_tcp_fail(t, ret == -EPIPE || ret == -ETIMEDOUT ?
				   -EPROTO : ret, "a truncated request");
	if (t->put && f->req.hdr.op != XCUDA_OP_GRAPH_LAUNCH)
		return xd_tcp_fail(t, -EPROTO, "a graph's bytes without "
				   "their launch");
	t->put = 0;
	n = xd_up_spans(&f->req, c->arena_size, XD_UP_IN, spans);
	for (i = 0; i < n; i++)
		total += xd_up_span_bytes(&spans[i]);
	if (f->in_len != total)
		return xd_tcp_fail(t, -EPROTO, "its bytes are not the "
				   "request's extents");
	if (!follower) {
		ret = xd_tcp_flush_before(t, total);
		if (ret)
			return ret;
	} else {
		pthread_mutex_lock(&t->plock);
	}
	for (i = 0, ret = 0; i < n && !ret; i++) {
		const struct xd_up_span *s = &spans[i];

		for (k = 0; k < s->rows && !ret; k++)
			ret = xd_tcp_read_range(t, c, s->off + k * s->pitch,
						s->width);
	}
	if (follower)
		pthread_mutex_unlock(&t->plock);
	if (ret)
		return xd_tcp_fail(t, ret == -EPIPE || ret == -ETIMEDOUT ?
				   -EPROTO : ret, "a truncated request");
	return 1;
}

/* The request the worker handles now: what it will write, the heartbeat. */
static int xd_tcp_take(struct xd_tcp *t, struct xd_chan *c,
		       const struct xcuda_request *in,
		       struct xcuda_request *req)
{
	unsigned int n, i;

	/* What it will write, as described; the handler may add more. */
	t->ncur = 0;
	n = xd_up_spans(in, c->arena_size, XD_UP_OUT, t->spans);
	for (i = 0; i < n; i++)
		if (xd_tcp_push(&t->cur, &t->ncur, &t->capcur, &t->spans[i],
				0))
			return xd_tcp_fail(t, -ENOMEM, "out of memory");
	t->op = in->hdr.op;
	t->device = in->hdr.device;
	t->doff = in->hdr.data_off;
	t->dlen = in->hdr.data_len;
	pthread_mutex_lock(&t->wlock);
	t->busy = 1;
	t->sent_ns = xr_now_ns();
	pthread_mutex_unlock(&t->wlock);
	*req = *in;
	return 1;
}

/* The reader's wait for a request; completions on the way are applied. */
static int xd_tcp_next_read(struct xd_tcp *t, struct xd_chan *c,
			    struct xcuda_up_req *f, int timeout_ms)
{
	int ret;

	for (;;) {
		ret = xd_tcp_dead(t);
		if (ret)
			return ret;
		/* Answers held back for a batch go before we wait. */
		ret = xd_tcp_flush_before(t, sizeof(struct xcuda_up_put));
		if (ret)
			return ret;
		ret = xd_up_rd_wait(&t->rd, timeout_ms);
		if (ret <= 0)
			return ret ? xd_tcp_fail(t, ret, "cannot read") : 0;
		ret = xd_tcp_frame_in(t, c, f, t->spans, 0);
		if (ret)
			return ret;
	}
}

static int xd_tcp_next(struct xd_chan *c, struct xcuda_request *req,
		       int timeout_ms)
{
	struct xd_tcp *t = c->priv;
	int lk = xd_tcp_hf(t), ret;
	struct xcuda_up_req f;

	ret = xd_tcp_dead(t);
	if (ret)
		return ret;
	if (!lk) {
		ret = xd_tcp_next_read(t, c, &f, timeout_ms);
		return ret == 1 ? xd_tcp_take(t, c, &f.req, req) : ret;
	}
	/* Trampolines leave rlock to us (a mutex is not fair). */
	__atomic_add_fetch(&t->rwant, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&t->rlock);
	__atomic_sub_fetch(&t->rwant, 1, __ATOMIC_ACQ_REL);
	/* What a trampoline read while we were in CUDA comes first. */
	if (t->rqlen) {
		f.req = t->rq[t->rqhead];
		t->rqhead = (t->rqhead + 1) % t->rqcap;
		t->rqlen--;
		ret = 1;
	} else {
		ret = xd_tcp_next_read(t, c, &f, timeout_ms);
	}
	pthread_mutex_unlock(&t->rlock);
	return ret == 1 ? xd_tcp_take(t, c, &f.req, req) : ret;
}

/* A request a trampoline read, for next().  rlock held. */
static int xd_tcp_queue(struct xd_tcp *t, const struct xcuda_request *req)
{
	if (t->rqlen == t->rqcap) {
		unsigned int cap = t->rqcap ? t->rqcap * 2 : 16, i;
		struct xcuda_request *q;

		q = cap > XD_TCP_MAX_Q ? NULL : malloc(cap * sizeof(*q));
		if (!q)
			return -ENOBUFS;
		for (i = 0; i < t->rqlen; i++)
			q[i] = t->rq[(t->rqhead + i) % t->rqcap];
		free(t->rq);
		t->rq = q;
		t->rqcap = cap;
		t->rqhead = 0;
	}
	t->rq[(t->rqhead + t->rqlen++) % t->rqcap] = *req;
	return 0;
}

static void xd_tcp_drop_out(struct xd_chan *c)
{
	struct xd_tcp *t = c->priv;

	t->ncur = 0;
	t->cur_noted = 0;
}

/* ---- host functions ---- */

/* Every payload hostfn.c publishes fits in a record. */
_Static_assert(XD_HOSTFN_PAYLOAD_MAX <= XCUDA_UP_REC_MAX, "payload");

static int xd_tcp_send_pending(struct xd_tcp *t, struct xd_chan *c,
			       int keep);
static int xd_tcp_send_mapped(struct xd_tcp *t, struct xd_chan *c);

static int xd_tcp_hf_setup(struct xd_chan *c, uint64_t off, uint64_t len)
{
	struct xd_tcp *t = c->priv;

	(void)len;
	/* As the guest zeroed its own: no old done word matches a seq. */
	memset(c->arena + off, 0, sizeof(struct xcuda_hostfn_area));
	t->hf_off = off;
	__atomic_store_n(&t->hf_on, 1, __ATOMIC_RELEASE);
	return 0;
}

/* The record in slot @slot of our copy, and its payload, to the relay. */
static int xd_tcp_hf_publish(struct xd_chan *c, unsigned int slot,
			     uint64_t poff, uint64_t plen)
{
	struct xd_tcp *t = c->priv;
	const struct xcuda_hostfn_slot *sl;
	struct xcuda_up_rec r;
	int ret = xd_tcp_dead(t);

	if (ret)
		return ret;
	if (!xd_tcp_hf(t) || slot >= XCUDA_HOSTFN_SLOTS ||
	    plen > XCUDA_UP_REC_MAX ||
	    !xcuda_extent_ok(poff, plen, c->arena_size))
		return -EINVAL;
	sl = &((const struct xcuda_hostfn_area *)(c->arena + t->hf_off))->
		slot[slot];
	memset(&r, 0, sizeof(r));
	r.magic = XCUDA_UP_REC_MAGIC;
	r.slot = slot;
	r.seq = __atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE);
	r.token = sl->token;
	r.status = sl->status;
	r.flags = sl->flags;
	r.arg = sl->arg;
	r.plen = (uint32_t)plen;
	r.poff = plen ? poff : 0;
	pthread_mutex_lock(&t->wlock);
	/*
	 * The pending extents first, as they are now: a copy into the arena
	 * before the function in its stream has landed, and the function
	 * may read it.  They stay pending, to go again once all have landed.
	 */
	ret = xd_tcp_send_pending(t, c, 1);
	/* And what kernels before it wrote into mapped memory. */
	if (!ret)
		ret = xd_tcp_send_mapped(t, c);
	if (!ret)
		ret = xd_up_wr_add(&t->wr, &r, sizeof(r));
	if (!ret && plen)
		ret = xd_up_wr_add(&t->wr, c->arena + poff, plen);
	if (!ret)
		ret = xd_up_wr_flush(&t->wr);
	t->sent_ns = xr_now_ns();
	pthread_mutex_unlock(&t->wlock);
	return ret ? xd_tcp_fail(t, ret, "cannot send a record") : 0;
}

/*
 * A trampoline waits for its completion: as the reader if nobody else
 * is (the worker may be blocked in CUDA on its stream), else on the done
 * word, which the reader wakes.
 */
static void xd_tcp_hf_wait(struct xd_chan *c, uint32_t *word, uint32_t val,
			   unsigned int us)
{
	struct xd_tcp *t = c->priv;
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };
	struct pollfd p = { .fd = t->fd, .events = POLLIN };
	struct xcuda_up_req f;
	unsigned int n;
	int ret;

	if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != val)
		return;
	/* A dead link: the caller's look at peer_gone ends the wait. */
	if (xd_tcp_dead(t)) {
		nanosleep(&ts, NULL);
		return;
	}
	/* The worker reads, or wants to: it applies our completion. */
	if (__atomic_load_n(&t->rwant, __ATOMIC_ACQUIRE) ||
	    pthread_mutex_trylock(&t->rlock)) {
		xd_futex(word, FUTEX_WAIT, val, &ts);
		return;
	}
	if (!xd_up_rd_buffered(&t->rd)) {
		t->rd.calls++;
		if (ppoll(&p, 1, &ts, NULL) <= 0)
			goto out;
	}
	for (n = 0; n < XD_TCP_FOLLOW && !xd_tcp_dead(t); n++) {
		if (n && (__atomic_load_n(&t->rwant, __ATOMIC_ACQUIRE) ||
			  !xd_up_rd_more(&t->rd)))
			break;
		ret = xd_tcp_frame_in(t, c, &f, t->fspans, 1);
		if (ret < 0)
			break;
		if (ret == 1 && xd_tcp_queue(t, &f.req)) {
			xd_tcp_fail(t, -EPROTO, "more requests in flight "
				    "than any ring holds");
			break;
		}
	}
out:
	pthread_mutex_unlock(&t->rlock);
}

/* ---- answers ---- */

static void xd_tcp_note_out(struct xd_chan *c, uint64_t off, uint64_t width,
			    uint64_t pitch, uint64_t rows)
{
	struct xd_tcp *t = c->priv;
	struct xd_up_span s = { off, width, rows == 1 ? width : pitch, rows };

	/* The handler checked them: one that is not in the arena is a bug. */
	if (!xd_up_span_ok(&s, c->arena_size)) {
		xd_log_ratelimited(XD_LOG_ERROR, "the worker wrote %llu "
				   "rows outside the arena",
				   (unsigned long long)rows);
		return;
	}
	if (xd_tcp_push(&t->cur, &t->ncur, &t->capcur, &s, 0))
		xd_tcp_fail(t, -ENOMEM, "cannot keep what the worker wrote");
	t->cur_noted = 1;
}

/*
 * The posted copies into the arena must have landed before their bytes
 * go: wait for each device that has some.  The status of this wait is
 * not the guest's answer: an asynchronous error is the worker's to
 * report, and it does, through the guest's own next call on the context
 * (CUDA's errors of that kind are sticky); nor may it linger as this
 * thread's last error for a later handler to find.
 */
static void xd_tcp_sync_devices(struct xd_tcp *t)
{
	int cur = 0, d, have = cudaGetDevice(&cur) == cudaSuccess;

	for (d = 0; d < XD_TCP_MAX_DEVS && have; d++) {
		if (!(t->pend_devs & (1ull << d)))
			continue;
		if (d == cur || cudaSetDevice(d) == cudaSuccess)
			(void)cudaDeviceSynchronize();
	}
	if (have)
		(void)cudaSetDevice(cur);
	(void)cudaGetLastError();
	t->pend_devs = 0;
}

/* A frame: @rsp (NULL: extents alone) and the @n extents of @v. */
static int xd_tcp_frame(struct xd_tcp *t, struct xd_chan *c,
			const struct xcuda_response *rsp,
			const struct xd_tcp_out *v, unsigned int n)
{
	struct xcuda_up_rsp f;
	unsigned int i;
	int ret;

	memset(&f, 0, sizeof(f));
	f.magic = rsp ? XCUDA_UP_RSP_MAGIC : XCUDA_UP_DATA_MAGIC;
	f.nr_out = n;
	if (rsp)
		f.rsp = *rsp;
	ret = xd_up_wr_add(&t->wr, &f, sizeof(f));
	for (i = 0; i < n && !ret; i++) {
		/* The relay will have these: no diff sends them again. */
		xd_up_map_mirror(&t->map, c->arena, &v[i].s);
		ret = xd_up_wr_ext(&t->wr, c->arena, &v[i].s);
	}
	return ret;
}

/*
 * The bytes of mapped page-locked memory that our copy changed since the
 * relay and we last agreed (a kernel wrote them), in frames of their own,
 * from the shadow.  wlock held.
 */
static int xd_tcp_send_mapped(struct xd_tcp *t, struct xd_chan *c)
{
	struct xcuda_up_rsp f;

	memset(&f, 0, sizeof(f));
	f.magic = XCUDA_UP_DATA_MAGIC;
	return xd_up_map_send(&t->map, c->arena, &t->wr, &f, sizeof(f),
			      &f.nr_out);
}

/* Every pending extent, in frames of their own; still pending if @keep. */
static int xd_tcp_send_pending(struct xd_tcp *t, struct xd_chan *c,
			       int keep)
{
	unsigned int i, n;
	int ret = 0;

	for (i = 0; i < t->npend && !ret; i += n) {
		n = t->npend - i;
		if (n > XCUDA_UP_MAX_OUT)
			n = XCUDA_UP_MAX_OUT;
		ret = xd_tcp_frame(t, c, NULL, t->pend + i, n);
	}
	if (!keep)
		t->npend = 0;
	return ret;
}

/*
 * Whether more requests wait to be read (the worker's thread): while a
 * trampoline reads, say yes; next() sends what is held back before it
 * waits.
 */
static int xd_tcp_more(struct xd_tcp *t)
{
	int more;

	if (!xd_tcp_hf(t))
		return xd_up_rd_more(&t->rd);
	if (pthread_mutex_trylock(&t->rlock))
		return 1;
	more = t->rqlen || xd_up_rd_more(&t->rd);
	pthread_mutex_unlock(&t->rlock);
	return more;
}

/* Whether @s of device @dev is pending already, exactly. */
static int xd_tcp_pending_has(const struct xd_tcp *t,
			      const struct xd_up_span *s, uint16_t dev)
{
	unsigned int i;

	for (i = 0; i < t->npend; i++)
		if (t->pend[i].dev == dev && !memcmp(&t->pend[i].s, s,
						      sizeof(*s)))
			return 1;
	return 0;
}

/* A stream's or event's query answered cudaErrorNotReady. */
static int xd_tcp_not_ready(const struct xd_tcp *t,
			    const struct xcuda_response *rsp)
{
	return rsp->status == cudaErrorNotReady &&
	       (t->op == XCUDA_OP_STREAM_QUERY || t->op == XCUDA_OP_EVENT_QUERY);
}

/* wlock held (and plock once hf_on); the devices were waited for. */
static int xd_tcp_reply_locked(struct xd_tcp *t, struct xd_chan *c,
			       const struct xcuda_response *rsp, int more)
{
	unsigned int i;
	int ret = 0;

	/* Pending bytes stay so: the program may rely on none of them. */
	if (xd_tcp_not_ready(t, rsp)) {
		t->ncur = 0;
		ret = xd_tcp_frame(t, c, rsp, NULL, 0);
		return ret ? ret : xd_up_wr_flush(&t->wr);
	}
	if (rsp->flags & XCUDA_RF_POSTED) {
		t->cur_noted = 0;
		for (i = 0; i < t->ncur; i++) {
			/* A graph launched again writes the same rows. */
			if (t->op == XCUDA_OP_GRAPH_LAUNCH &&
			    xd_tcp_pending_has(t, &t->cur[i].s, t->device))
				continue;
			if (xd_tcp_push(&t->pend, &t->npend, &t->cappend,
					&t->cur[i].s, t->device))
				return -ENOMEM;
			if (t->device < XD_TCP_MAX_DEVS)
				t->pend_devs |= 1ull << t->device;
		}
		t->ncur = 0;
		/*
		 * Too many to keep (the device was waited for): they go now,
		 * before a trampoline's request may land on their rows.
		 */
		if (t->npend > XCUDA_UP_MAX_OUT) {
			t->pend_devs = 0;
			ret = xd_tcp_send_pending(t, c, 0);
			more = 0;
		}
		if (!ret)
			ret = xd_tcp_frame(t, c, rsp, NULL, 0);
		/* Held back while more requests wait: next() sends it. */
		if (!ret && !more && !xd_tcp_more(t))
			ret = xd_up_wr_flush(&t->wr);
		return ret;
	}
	/* After the pending ones, this answer's own: they are newer. */
	for (i = 0; i < t->ncur && !ret; i++)
		if (xd_tcp_push(&t->pend, &t->npend, &t->cappend, &t->cur[i].s,
				0))
			ret = -ENOMEM;
	t->ncur = 0;
	/*
	 * With mapped memory, what kernels wrote there goes last, newest:
	 * the extents first, alone, then the runs, then the answer.
	 */
	if (!ret && xd_up_map_any(&t->map)) {
		ret = xd_tcp_send_pending(t, c, 0);
		if (!ret)
			ret = xd_tcp_send_mapped(t, c);
	}
	/* What does not fit beside the answer goes first, alone. */
	for (i = 0; !ret && t->npend - i > XCUDA_UP_MAX_OUT;
	     i += XCUDA_UP_MAX_OUT)
		ret = xd_tcp_frame(t, c, NULL, t->pend + i, XCUDA_UP_MAX_OUT);
	if (!ret)
		ret = xd_tcp_frame(t, c, rsp, t->pend + i, t->npend - i);
	t->npend = 0;
	/* The rows were referred to in the arena: they go now. */
	if (!ret)
		ret = xd_up_wr_flush(&t->wr);
	return ret;
}

/*
 * A GEXT frame, held back like an answer: the answer of the request being
 * handled follows it, so the relay has the spans before the guest can
 * launch the exec.
 */
static int xd_tcp_graph_ext(struct xd_chan *c, uint32_t exec,
			    const struct xd_up_span *s, unsigned int n)
{
	struct xd_tcp *t = c->priv;
	struct xcuda_up_gext g = { XCUDA_UP_GEXT_MAGIC, exec, n, 0 };
	unsigned int i;
	int ret;

	if (t->dead)
		return t->dead;
	if (n > XCUDA_UP_GEXT_MAX)
		return -E2BIG;
	pthread_mutex_lock(&t->wlock);
	ret = xd_up_wr_add(&t->wr, &g, sizeof(g));
	for (i = 0; i < n && !ret; i++) {
		struct xcuda_up_ext e = { s[i].off, s[i].width, s[i].pitch,
					  s[i].rows };

		ret = xd_up_wr_add(&t->wr, &e, sizeof(e));
	}
	pthread_mutex_unlock(&t->wlock);
	return ret ? xd_tcp_fail(t, ret, "cannot send") : 0;
}

static int xd_tcp_reply(struct xd_chan *c, const struct xcuda_response *rsp,
			int more)
{
	struct xd_tcp *t = c->priv;
	int ret = xd_tcp_dead(t), lk = xd_tcp_hf(t);

	if (ret)
		return ret;
	/* The pinned extents, as the relay learns them too. */
	if (!rsp->status && t->op == XCUDA_OP_ARENA_PIN &&
	    xd_up_map_pin(&t->map, t->doff, t->dlen))
		return xd_tcp_fail(t, -ENOMEM, "out of memory");
	if (!rsp->status && t->op == XCUDA_OP_ARENA_UNPIN)
		xd_up_map_unpin(&t->map, t->doff);
	/* A failed copy wrote nothing the guest may see. */
	if (rsp->status && (t->op == XCUDA_OP_MEMCPY ||
			    t->op == XCUDA_OP_MEMCPY_2D))
		t->ncur = 0;
	/*
	 * The devices are waited for before the locks: a host function the
	 * device waits for publishes under wlock, and may read the socket.
	 * Not for a query answered "not ready": the program may rely on no
	 * copy then, and a copy behind a host function would make the query
	 * wait for the function.
	 */
	if (xd_tcp_not_ready(t, rsp)) {
		/* Nothing to wait for, nothing sent: pending stays so. */
	} else if (!(rsp->flags & XCUDA_RF_POSTED)) {
		/*
		 * An asynchronous copy the guest waited for (cudaMemcpy3DAsync,
		 * say) is answered once it is queued: its rows must land
		 * before they go.
		 */
		if (t->cur_noted && t->ncur && t->device < XD_TCP_MAX_DEVS)
			t->pend_devs |= 1ull << t->device;
		t->cur_noted = 0;
		if (t->pend_devs)
			xd_tcp_sync_devices(t);
	} else if (t->npend + t->ncur > XCUDA_UP_MAX_OUT) {
		if (t->ncur && t->device < XD_TCP_MAX_DEVS)
			t->pend_devs |= 1ull << t->device;
		xd_tcp_sync_devices(t);
	}
	if (lk)
		pthread_mutex_lock(&t->plock);
	pthread_mutex_lock(&t->wlock);
	ret = xd_tcp_reply_locked(t, c, rsp, more);
	t->busy = 0;
	t->sent_ns = xr_now_ns();
	pthread_mutex_unlock(&t->wlock);
	if (lk)
		pthread_mutex_unlock(&t->plock);
	if (ret == -ENOMEM)
		return xd_tcp_fail(t, ret, "out of memory");
	return ret ? xd_tcp_fail(t, ret, "cannot send") : 0;
}

/* ---- the heartbeat ---- */

static void *xd_tcp_heartbeat(void *arg)
{
	struct xd_tcp *t = arg;
	struct xcuda_up_rsp f;
	struct timespec ts;
	uint64_t now, at;

	memset(&f, 0, sizeof(f));
	f.magic = XCUDA_UP_DATA_MAGIC;
	pthread_mutex_lock(&t->wlock);
	while (!t->hb_stop) {
		now = xr_now_ns();
		at = t->sent_ns + t->hb_ns;
		if (t->busy && now >= at) {
			/*
			 * Between the worker's frames (it holds the lock while
			 * it builds one): an empty frame of our own, sent at
			 * once after what is held back.
			 */
			if (xd_up_wr_add(&t->wr, &f, sizeof(f)) ||
			    xd_up_wr_flush(&t->wr))
				break;	/* the worker finds out itself */
			t->sent_ns = now;
			at = now + t->hb_ns;
		} else if (!t->busy || at < now) {
			at = now + t->hb_ns;
		}
		ts.tv_sec = (time_t)(at / 1000000000u);
		ts.tv_nsec = (long)(at % 1000000000u);
		pthread_cond_timedwait(&t->hb_cond, &t->wlock, &ts);
	}
	pthread_mutex_unlock(&t->wlock);
	return NULL;
}

static int xd_tcp_hb_start(struct xd_tcp *t)
{
	pthread_condattr_t ca;
	int err;

	pthread_condattr_init(&ca);
	/* Deadlines are xr_now_ns()'s: CLOCK_MONOTONIC. */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&t->hb_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return -err;
	err = pthread_create(&t->hb, NULL, xd_tcp_heartbeat, t);
	if (err) {
		pthread_cond_destroy(&t->hb_cond);
		return -err;
	}
	t->hb_started = 1;
	return 0;
}

static void xd_tcp_close(struct xd_chan *c)
{
	struct xd_tcp *t = c->priv;

	if (!t)
		return;
	if (t->hb_started) {
		pthread_mutex_lock(&t->wlock);
		t->hb_stop = 1;
		pthread_cond_signal(&t->hb_cond);
		pthread_mutex_unlock(&t->wlock);
		pthread_join(t->hb, NULL);
		pthread_cond_destroy(&t->hb_cond);
	}
	pthread_mutex_destroy(&t->wlock);
	pthread_mutex_destroy(&t->rlock);
	pthread_mutex_destroy(&t->plock);
	if (!t->dead && xd_up_wr_pending(&t->wr))
		xd_up_wr_flush(&t->wr);
	close(t->fd);
	xd_up_rd_fini(&t->rd);
	xd_up_wr_fini(&t->wr);
	xd_shm_destroy(&t->shm);
	free(t->cur);
	free(t->pend);
	free(t->rq);
	xd_up_map_fini(&t->map);
	free(t);
	memset(c, 0, sizeof(*c));
}

/* The relay hung up (or the link broke): never waits. */
static int xd_tcp_peer_gone(struct xd_chan *c)
{
	struct xd_tcp *t = c->priv;
	struct pollfd p = { .fd = t->fd, .events = POLLRDHUP };

	return xd_tcp_dead(t) ||
	       (poll(&p, 1, 0) > 0 &&
		(p.revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL)));
}

static void xd_tcp_counters(struct xd_chan *c, char *buf, size_t len)
{
	struct xd_tcp *t = c->priv;

	xd_up_counters(&t->rd, &t->wr, buf, len);
}

/*
 * The copy at the guest's address, where it is free here: a kernel handed
 * the guest's pointer into its page-locked memory finds the copy, which
 * up_mapped.h keeps in step.
 */
static int xd_tcp_arena_at(struct xd_chan *c, uint64_t addr)
{
	struct xd_tcp *t = c->priv;

	return xd_shm_arena_at(&t->shm, addr, &c->arena);
}

/* No take_fd: descriptors do not cross hosts. */
static const struct xd_chan_ops xd_tcp_ops = {
	.name = "tcp",
	.next = xd_tcp_next,
	.reply = xd_tcp_reply,
	.close = xd_tcp_close,
	.peer_gone = xd_tcp_peer_gone,
	.note_out = xd_tcp_note_out,
	.counters = xd_tcp_counters,
	.hostfn_setup = xd_tcp_hf_setup,
	.hostfn_publish = xd_tcp_hf_publish,
	.hostfn_wait = xd_tcp_hf_wait,
	.drop_out = xd_tcp_drop_out,
	.graph_ext = xd_tcp_graph_ext,
	.arena_at = xd_tcp_arena_at,
};

/* ---- handshake ---- */

static void xd_tcp_welcome(int fd, int status, uint32_t session,
			   uint64_t arena)
{
	struct xcuda_up_welcome w = { status, session, arena };

	/* Best effort when refusing: the relay may be gone. */
	(void)xd_up_write_all(fd, &w, sizeof(w));
}

int xd_tcp_accept(int fd, struct xd_chan *c, const struct xd_tcp_conf *conf,
		  uint32_t session_id)
{
	struct xcuda_up_hello h;
	struct xcuda_up_chal ch;
	struct xcuda_up_open o;
	struct xd_tcp *t;
	uint64_t size;
	char peer[64];
	int ret;

	memset(c, 0, sizeof(*c));
	xd_up_peer_name(fd, peer, sizeof(peer));
	xd_up_sock_setup(fd);
	ret = xd_up_read_all(fd, &h, sizeof(h),
			     xd_up_deadline(XD_UP_HANDSHAKE_MS));
	if (ret) {
		xd_log(XD_LOG_WARN, "relay %s: no hello: %s", peer,
		       strerror(-ret));
		return ret;
	}
	if (h.magic != XCUDA_UP_MAGIC || h.version != XCUDA_UP_VERSION) {
		xd_log(XD_LOG_WARN, "relay %s: not an xcuda relay of version "
		       "%u (magic %#x version %u): refused", peer,
		       XCUDA_UP_VERSION, h.magic, h.version);
		return -EPROTO;
	}
	memset(&ch, 0, sizeof(ch));
	ch.magic = XCUDA_UP_MAGIC;
	ch.version = XCUDA_UP_VERSION;
	ret = xd_up_nonce(ch.nonce);
	if (!ret && xd_up_mac(conf->key, XD_UP_LABEL_SERVER, h.nonce,
			      ch.nonce, ch.mac))
		ret = -EIO;
	if (!ret)
		ret = xd_up_write_all(fd, &ch, sizeof(ch));
	if (!ret)
		ret = xd_up_read_all(fd, &o, sizeof(o),
				     xd_up_deadline(XD_UP_HANDSHAKE_MS));
	if (ret == -EPIPE) {
		/* What a relay does that finds our MAC wrong. */
		xd_log(XD_LOG_WARN, "relay %s: refused: it hung up on our "
		       "challenge (does it have another key?)", peer);
		return ret;
	}
	if (ret) {
		xd_log(XD_LOG_WARN, "relay %s: handshake failed: %s", peer,
		       strerror(-ret));
		return ret;
	}
	if (!xd_up_mac_ok(conf->key, XD_UP_LABEL_RELAY, ch.nonce, h.nonce,
			  o.mac)) {
		xd_log(XD_LOG_WARN, "relay %s: refused: it does not know the "
		       "key (wrong MAC)", peer);
		xd_tcp_welcome(fd, -EACCES, 0, 0);
		return -EACCES;
	}
	size = o.arena_size;
	if (conf->max_arena && size > conf->max_arena)
		size = conf->max_arena;
	/* Whole pages, and offsets on the wire are 32-bit. */
	if (size > (1ull << 32))
		size = 1ull << 32;
	size &= ~(uint64_t)(XCUDA_PAGE_SIZE - 1);
	if (!size) {
		xd_log(XD_LOG_WARN, "relay %s: bad open (arena %llu bytes): "
		       "refused", peer, (unsigned long long)o.arena_size);
		xd_tcp_welcome(fd, -EINVAL, 0, 0);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		xd_tcp_welcome(fd, -ENOMEM, 0, 0);
		return -ENOMEM;
	}
	t->fd = fd;
	snprintf(t->peer, sizeof(t->peer), "%s", peer);
	pthread_mutex_init(&t->wlock, NULL);
	pthread_mutex_init(&t->rlock, NULL);
	pthread_mutex_init(&t->plock, NULL);
	xd_up_map_init(&t->map, size);
	ret = xd_shm_create(&t->shm, "xcuda-up-session", 0, size);
	if (!ret)
		ret = xd_up_rd_init(&t->rd, fd, XD_TCP_RD_BUF);
	if (!ret)
		ret = xd_up_wr_init(&t->wr, fd, XD_TCP_WR_BUF, XD_TCP_IOV,
				    XD_UP_STALL_MS);
	if (!ret && o.alive_ms) {
		if (o.alive_ms > XD_UP_HEARTBEAT_MS)
			o.alive_ms = XD_UP_HEARTBEAT_MS;
		if (o.alive_ms < XD_UP_HEARTBEAT_MIN_MS)
			o.alive_ms = XD_UP_HEARTBEAT_MIN_MS;
		t->hb_ns = (uint64_t)o.alive_ms * 1000000u;
		ret = xd_tcp_hb_start(t);
	}
	if (ret) {
		xd_tcp_welcome(fd, ret, 0, 0);
		xd_up_rd_fini(&t->rd);
		xd_up_wr_fini(&t->wr);
		xd_shm_destroy(&t->shm);
		pthread_mutex_destroy(&t->wlock);
		pthread_mutex_destroy(&t->rlock);
		pthread_mutex_destroy(&t->plock);
		xd_up_map_fini(&t->map);
		free(t);
		return ret;
	}
	xd_tcp_welcome(fd, 0, session_id, size);
	xd_log(XD_LOG_INFO, "relay %s: arena %llu bytes", peer,
	       (unsigned long long)size);
	c->ops = &xd_tcp_ops;
	c->arena = xd_shm_arena(&t->shm);
	c->arena_size = size;
	c->session = session_id;
	/*
	 * The relay proved the key, so it is trusted to say whose guest
	 * this is: its sessions for one domain share IPC handles and pool
	 * exports (ipc_table.h), and none of another relay or domain.
	 */
	c->domain = xd_up_domain(conf->key, o.origin, o.domain);
	c->flags = XD_CHAN_REMOTE;
	c->priv = t;
	return 0;
}
