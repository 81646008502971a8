/* SPDX-License-Identifier: MIT */
/*
 * The relay's part of host functions over the upstream link
 * (xcuda/upstream.h, docs/protocol.md "Host functions over the link"):
 * the server's records (xrec frames) go into the guest's slot area, and
 * a watcher thread, running only while records are outstanding, sends
 * the guest's completions back (xdon frames).
 *
 * A completion carries the arena bytes that copies from the arena, sent
 * after the function was enqueued, will read when the stream goes on:
 * the server took them when the request came, and the function may have
 * written them since.  So the sending thread tells us each request it
 * forwards (xd_up_hf_forwarded()): the requests that enqueue a function
 * to run later (one-shot ones by token, graph launches) and, while some
 * are outstanding, the copies from the arena after them.
 */
#ifndef XCUDAD_UP_HOSTFN_H
#define XCUDAD_UP_HOSTFN_H

#include <pthread.h>
#include <stdint.h>

#include "xcuda/hostfn.h"
#include "xcuda/upstream.h"
#include "transport.h"
#include "up_link.h"
#include "up_spans.h"

/* Copies remembered for completions, and enqueues: the oldest go. */
#define XD_UP_HF_MAX_COPIES	XCUDA_UP_MAX_OUT
#define XD_UP_HF_MAX_ENQ	1024

/* The arena side of a copy forwarded as request number @f. */
struct xd_up_hf_copy {
	uint64_t f;
	struct xd_up_span s;
};

/* A request, number @f, that enqueued a function (@token; 0: a graph). */
struct xd_up_hf_enq {
	uint64_t f;
	uint64_t token;
};

struct xd_up_hf {
	struct xd_chan *c;		/* the guest's channel */
	/* The guest's slot area, once its HOSTFN_SETUP was answered 0. */
	struct xcuda_hostfn_area *area;
	int futex;			/* the guest waits on a shared futex */
	int on;				/* atomic: @area is set */
	/*
	 * Sends one completion to the server, @d->nr_ext spans of the
	 * guest's arena after it: 0 or a negative errno.
	 */
	int (*send_done)(void *arg, const struct xcuda_up_done *d,
			 const struct xd_up_span *sp);
	void *arg;
	pthread_mutex_t lock;		/* what follows */
	pthread_cond_t cv;
	uint64_t out;			/* bit i: slot i delivered, not done */
	uint32_t seq[XCUDA_HOSTFN_SLOTS];
	uint64_t token[XCUDA_HOSTFN_SLOTS];
	uint32_t flags[XCUDA_HOSTFN_SLOTS];
	int stop, started;
	pthread_t th;
	uint64_t fwd;			/* requests noted since the area */
	struct xd_up_hf_copy *copies;	/* a ring, oldest at @chead */
	unsigned int chead, ncopies;
	struct xd_up_hf_enq *enq;	/* oldest first */
	unsigned int nenq;
	struct xd_up_span *sp;		/* the watcher's */
};

/* Allocates nothing: that waits for the area. */
void xd_up_hf_init(struct xd_up_hf *h, struct xd_chan *c,
		  int (*send_done)(void *arg, const struct xcuda_up_done *d,
				   const struct xd_up_span *sp),
		  void *arg);
/*
 * The sending thread forwarded @req, whose in spans are @sp (@n of
 * them).  Costs one load until the guest has a slot area.
 */
void xd_up_hf_forwarded(struct xd_up_hf *h, const struct xcuda_request *req,
			const struct xd_up_span *sp, unsigned int n);
/*
 * The guest's HOSTFN_SETUP for [@off, @off + @len) was answered 0: the
 * area, checked as the worker checks it.  0, -EPROTO when the server
 * accepted an area it must refuse, or -ENOMEM.  A second one is ignored.
 */
int xd_up_hf_setup(struct xd_up_hf *h, uint64_t off, uint64_t len);
/*
 * A record whose head is *@r (read already; the receiving thread): its
 * payload from @rd into the guest's arena, then the slot, seq last, then
 * the wake word, and the slot is watched.  0, -EPROTO for a malformed
 * record, or the read's error.
 */
int xd_up_hf_record(struct xd_up_hf *h, const struct xcuda_up_rec *r,
		    struct xd_up_rd *rd);
/*
 * The server answered a request that enqueued @token: with an error, or
 * @graph (it was captured: a graph's node now, which graph launches run).
 */
void xd_up_hf_answered(struct xd_up_hf *h, uint64_t token, int failed,
		       int graph);
/* Stops watching (the session is over) and frees what init took. */
void xd_up_hf_fini(struct xd_up_hf *h);

#endif /* XCUDAD_UP_HOSTFN_H */
