// SPDX-License-Identifier: MIT
/*
 * The session loop of a worker.  Each request is copied out of the ring
 * by the transport, validated, routed to its handler through the table
 * generated from the call description, and answered exactly once, posted
 * requests included: the guest collects posted answers lazily and
 * latches their errors, and frees their staging blocks on the answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpumem.h"
#include "log.h"
#include "graph_remote.h"
#include "ops.h"
#include "output.h"
#include "validate.h"
#include "watchdog.h"
#include "worker.h"

/* The hooks the ops files registered (XD_SESSION_HOOKS). */
extern const struct xd_session_hooks __start_xd_session_hooks[];
extern const struct xd_session_hooks __stop_xd_session_hooks[];

/* The next hook after @prev by order (and address, for equal orders). */
static const struct xd_session_hooks *
xd_hook_next(const struct xd_session_hooks *prev)
{
	const struct xd_session_hooks *h, *best = NULL;

	for (h = __start_xd_session_hooks; h < __stop_xd_session_hooks; h++) {
		if (prev && (h->order < prev->order ||
			     (h->order == prev->order && h <= prev)))
			continue;
		if (!best || h->order < best->order ||
		    (h->order == best->order && h < best))
			best = h;
	}
	return best;
}

int xd_session_hooks_init(struct xd_session *s)
{
	const struct xd_session_hooks *h;
	int err;

	for (h = xd_hook_next(NULL); h; h = xd_hook_next(h)) {
		if (!h->init)
			continue;
		err = h->init(s);
		if (err)
			return err;
	}
	return 0;
}

void xd_session_hooks_fini(struct xd_session *s)
{
	const struct xd_session_hooks *h;

	for (h = xd_hook_next(NULL); h; h = xd_hook_next(h))
		if (h->fini)
			h->fini(s);
}

int xd_session_init(struct xd_session *s, struct xd_chan *c)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->chan = c;
	s->id = c->session;
	err = xd_session_hooks_init(s);
	if (err)
		xd_session_hooks_fini(s);
	return err;
}

void xd_session_fini(struct xd_session *s)
{
	xd_session_hooks_fini(s);
}

int xd_extent_ok(const struct xd_session *s, const struct xcuda_extent *e)
{
	if (!e->len)
		return !e->off;
	return xcuda_extent_ok(e->off, e->len, s->chan->arena_size);
}

int xd_remote_refuse(struct xd_session *s, const char *what)
{
	if (!(s->chan->flags & XD_CHAN_REMOTE))
		return 0;
	xd_log_ratelimited(XD_LOG_WARN, "%s: not supported over the upstream "
			   "link (it needs the guest's own memory)", what);
	return cudaErrorNotSupported;
}

int xd_remote_capturing(struct xd_session *s, cudaStream_t st)
{
	enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;

	/*
	 * The legacy stream is never captured, and asking about it while
	 * another stream captures would be an unsafe call of our own.
	 */
	if (!(s->chan->flags & XD_CHAN_REMOTE) || !st || st == cudaStreamLegacy)
		return 0;
	if (cudaStreamIsCapturing(st, &cs) || cs == cudaStreamCaptureStatusNone)
		return 0;
	if (s->chan->ops->drop_out)
		s->chan->ops->drop_out(s->chan);
	return 1;
}

int64_t xd_arena_off(const struct xd_session *s, const void *p)
{
	uintptr_t a = (uintptr_t)s->chan->arena, v = (uintptr_t)p;

	return v >= a && v - a < s->chan->arena_size ? (int64_t)(v - a) : -1;
}

uint8_t *xd_arena_copy(struct xd_session *s, const struct xcuda_extent *e,
		       uint32_t max)
{
	uint8_t *p;

	if (!e->len || e->len > max)
		return NULL;
	p = malloc(e->len);
	if (p)
		memcpy(p, s->chan->arena + e->off, e->len);
	return p;
}

void xd_arena_put(struct xd_session *s, const struct xcuda_extent *e,
		  const uint8_t *buf)
{
	if (buf && e->len)
		memcpy(s->chan->arena + e->off, buf, e->len);
}

int xd_arena_put_text(struct xd_session *s, const struct xcuda_extent *e,
		      const char *text, uint32_t *len)
{
	size_t n = strnlen(text, e->len - 1);
	uint8_t *out = calloc(1, e->len);

	if (!out)
		return -1;
	memcpy(out, text, n);
	xd_arena_put(s, e, out);
	free(out);
	*len = (uint32_t)n;
	return 0;
}

/* Answers a request that could not be routed, or the handler's status. */
static void xd_answer(const struct xcuda_request *req,
		      struct xcuda_response *rsp, int status, uint32_t len)
{
	rsp->id = req->hdr.id;
	rsp->op = req->hdr.op;
	rsp->flags = req->hdr.flags;
	rsp->status = status;
	rsp->len = len;
	rsp->rsvd = 0;
	/* A failed call's result is all zeros, never half-written. */
	if (status)
		memset(rsp->out, 0, sizeof(rsp->out));
}

int xd_handle(struct xd_session *s, struct xcuda_request *req,
	      struct xcuda_response *rsp)
{
	const struct xcuda_req_hdr *h = &req->hdr;
	const struct xcuda_call_info *d;
	struct xd_call call;
	uint64_t charged = 0;
	int err;

	memset(rsp, 0, sizeof(*rsp));
	err = xd_validate(req, s->id, s->chan->arena_size, s->opened);
	if (err) {
		xd_log_ratelimited(XD_LOG_WARN,
				   "bad request id %llu op %u (%s) len %u "
				   "extent %u+%u: error %d",
				   (unsigned long long)h->id, h->op,
				   xd_op_name(h->op), h->len, h->data_off,
				   h->data_len, err);
		xd_answer(req, rsp, err, xd_result_size(h->op));
		return 0;
	}
	d = xcuda_call(h->op);
	/* Handlers see zeros past the bytes the guest declared. */
	memset(req->args + h->len, 0, sizeof(req->args) - h->len);

	/* A host where kernels would reach our memory: no CUDA at all. */
	if (s->refused && (d->flags & XCUDA_CF_CUDA) &&
	    h->op != XCUDA_OP_OPEN) {
		xd_answer(req, rsp, s->refused, d->res_size);
		return 0;
	}
	/* The GPU memory quota, before anything reaches CUDA. */
	err = xd_gpumem_before(s, req, &charged);
	if (err) {
		xd_answer(req, rsp, err, d->res_size);
		return 0;
	}
	if ((d->flags & XCUDA_CF_CUDA) && h->device != s->device) {
		err = cudaSetDevice(h->device);
		if (err) {
			xd_gpumem_after(s, req, charged, err, rsp->out);
			xd_answer(req, rsp, err, d->res_size);
			return 0;
		}
		s->device = h->device;
	}

	memset(&call, 0, sizeof(call));
	call.req = req;
	call.data = s->chan->arena + h->data_off;
	call.data_len = h->data_len;
	call.res = rsp->out;
	call.res_len = d->res_size;
	/* A relayed session's graph launches (graph_remote.c). */
	err = s->chan->flags & XD_CHAN_REMOTE ? xd_rgraph_before(s, req) : 0;
	if (!err)
		err = xd_handlers[h->op](s, &call);
	if (s->chan->flags & XD_CHAN_REMOTE)
		xd_rgraph_after(s, req, err, rsp->out);
	xd_gpumem_after(s, req, charged, err, rsp->out);
	if (err)
		xd_log(XD_LOG_DEBUG, "id %llu %s: error %d",
		       (unsigned long long)h->id, d->name, err);
	xd_answer(req, rsp, err, d->res_size);
	/* Device output the call produced goes to the guest (output.c). */
	xd_output_after(s, rsp);
	return call.end;
}

void xd_log_counters(struct xd_chan *c)
{
	char buf[160];

	if (!c->ops || !c->ops->counters)
		return;
	c->ops->counters(c, buf, sizeof(buf));
	xd_log(XD_LOG_INFO, "counters: %s", buf);
}

int xd_worker_allow_pageable;
unsigned int xd_worker_deadline_s;

int xd_worker_run(struct xd_chan *c)
{
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct xd_session s;
	int ret, end = 0;

	if (xd_session_init(&s, c)) {
		xd_log(XD_LOG_ERROR, "out of memory");
		c->ops->close(c);
		return 1;
	}
	xd_log_set_session(c->session);
	xd_log(XD_LOG_DEBUG, "serving, arena %llu bytes",
	       (unsigned long long)c->arena_size);
	ret = xd_watchdog_start(c, xd_worker_deadline_s);
	if (ret)
		xd_log(XD_LOG_WARN, "no watch over long requests: %s",
		       strerror(-ret));
	while (!end) {
		ret = c->ops->next(c, &req, -1);
		if (ret == 0)
			continue;
		if (ret == -EPIPE) {
			xd_log(XD_LOG_DEBUG, "guest has gone");
			break;
		}
		if (ret < 0) {
			xd_log(XD_LOG_WARN, "guest broke the ring (%s): "
			       "ending the session", strerror(-ret));
			break;
		}
		xd_watchdog_note(req.hdr.op ? req.hdr.op : 0xffff);
		end = xd_handle(&s, &req, &rsp);
		ret = c->ops->reply(c, &rsp, 0);
		xd_watchdog_note(0);
		if (ret < 0) {
			if (ret != -EPIPE)
				xd_log(XD_LOG_WARN, "cannot answer (%s): "
				       "ending the session", strerror(-ret));
			break;
		}
	}
	xd_session_fini(&s);
	xd_log_counters(c);
	xd_watchdog_stop();
	c->ops->close(c);
	xd_log(XD_LOG_DEBUG, "session ended");
	return 0;
}

int xd_worker_gpumem(struct xd_chan *c, uint64_t quota)
{
	int err = xd_gpumem_bind(c->session, c->domain, quota);

	/* A table with no free slot would be a bug: count nothing, say so. */
	if (err && err != -ENODEV)
		xd_log(XD_LOG_WARN, "GPU memory not counted: %s",
		       strerror(-err));
	return xd_worker_run(c);
}
