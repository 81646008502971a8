/* SPDX-License-Identifier: MIT */
/*
 * The relay's part of host functions over the upstream link
 * (xcuda/upstream.h, docs/protocol.md "Host functions over the link"):
 * the server's records (xrec frames) go into the guest's slot area, and
 * a watcher thread, running only while records are outstanding, sends
 * the guest's completions back (xdon frames).
 */
#ifndef XCUDAD_UP_HOSTFN_H
#define XCUDAD_UP_HOSTFN_H

#include <pthread.h>
#include <stdint.h>

#include "xcuda/hostfn.h"
#include "xcuda/upstream.h"
#include "transport.h"
#include "up_link.h"

struct xd_up_hf {
	struct xd_chan *c;		/* the guest's channel */
	/* The guest's slot area, once its HOSTFN_SETUP was answered 0. */
	struct xcuda_hostfn_area *area;
	int futex;			/* the guest waits on a shared futex */
	/* Sends one completion to the server: 0 or a negative errno. */
	int (*send_done)(void *arg, const struct xcuda_up_done *d);
	void *arg;
	pthread_mutex_t lock;		/* what follows */
	pthread_cond_t cv;
	uint64_t out;			/* bit i: slot i delivered, not done */
	uint32_t seq[XCUDA_HOSTFN_SLOTS];
	int stop, started;
	pthread_t th;
};

void xd_up_hf_init(struct xd_up_hf *h, struct xd_chan *c,
		   int (*send_done)(void *arg, const struct xcuda_up_done *d),
		   void *arg);
/*
 * The guest's HOSTFN_SETUP for [@off, @off + @len) was answered 0: the
 * area, checked as the worker checks it.  0, or -EPROTO when the server
 * accepted an area it must refuse.  A second one is ignored.
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
/* Stops watching (the session is over) and frees what init took. */
void xd_up_hf_fini(struct xd_up_hf *h);

#endif /* XCUDAD_UP_HOSTFN_H */
