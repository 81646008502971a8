/* SPDX-License-Identifier: MIT */
/*
 * What a worker needs from a transport: the next request (already copied
 * out of the shared ring, so the worker validates a private copy), a way
 * to post a response, and the session's arena mapped in its own address
 * space.  `local` (memfd + eventfds), `xen` (/dev/xcuda-back) and `tcp`
 * (the upstream link: a relay on another host) implement it.
 */
#ifndef XCUDA_DAEMON_TRANSPORT_H
#define XCUDA_DAEMON_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "xcuda/proto.h"

struct xd_chan;
struct xd_up_span;

struct xd_chan_ops {
	const char *name;
	/*
	 * Copies the next request into @req.  Waits up to @timeout_ms (-1:
	 * forever; spins briefly first).  Returns 1 with a request, 0 on
	 * timeout, -EPIPE when the guest has gone, -EPROTO when the guest
	 * broke the ring (the session must end).
	 */
	int (*next)(struct xd_chan *c, struct xcuda_request *req,
		    int timeout_ms);
	/*
	 * Optional: spins until the guest has produced a request or the
	 * clock (xr_now_ns()) passes @until_ns (0: one look), without asking
	 * to be rung: 1 if one is there (next() takes it), else 0.
	 */
	int (*spin)(struct xd_chan *c, uint64_t until_ns);
	/* Queues one response; rings the doorbell unless @more. */
	int (*reply)(struct xd_chan *c, const struct xcuda_response *rsp,
		     int more);
	/*
	 * Optional: maps the arena again at @addr in this process, only if
	 * nothing is mapped there, and from then on uses that mapping.
	 * Returns 0 or a negative errno (the old mapping stays).
	 */
	int (*arena_at)(struct xd_chan *c, uint64_t addr);
	void (*close)(struct xd_chan *c);
	/*
	 * Optional (`local` only): the descriptor the guest sent with @tag
	 * for the request being handled, now the caller's to close.  Never
	 * waits: the guest sends it before it pushes the request.  Returns
	 * the descriptor, -ENOTCONN without a channel, -ENOENT when no such
	 * message is there (messages with other tags are dropped), or
	 * another negative errno.
	 */
	int (*take_fd)(struct xd_chan *c, uint32_t tag);
	/*
	 * Optional: 1 once the guest has gone, else 0.  Never waits; safe
	 * from any thread while the channel is open (host functions ask it
	 * while the session's thread may be blocked in CUDA).
	 */
	int (*peer_gone)(struct xd_chan *c);
	/*
	 * Optional (`tcp` only): the request being handled wrote @rows rows
	 * of @width bytes, @pitch apart, from arena offset @off (checked
	 * against the arena by the caller), beyond what its description
	 * says (up_spans.h): the transport must send them to the guest's
	 * arena with the answer (a posted request's: once the device is
	 * done).  For the few writes only the handler can place.
	 */
	void (*note_out)(struct xd_chan *c, uint64_t off, uint64_t width,
			 uint64_t pitch, uint64_t rows);
	/*
	 * Optional (`tcp` only): the request being handled writes nothing
	 * into the arena now, whatever its description says (a copy
	 * recorded into a graph under capture): none of it goes back.
	 */
	void (*drop_out)(struct xd_chan *c);
	/*
	 * Optional (`tcp` only): the arena spans executable graph @exec
	 * (the guest's handle) reads at each launch are @s[@n] from now on
	 * (@n 0: none, or it is gone), for the relay before the answer to
	 * the request being handled (up_graph.h).  0 or a negative errno.
	 */
	int (*graph_ext)(struct xd_chan *c, uint32_t exec,
			 const struct xd_up_span *s, unsigned int n);
	/*
	 * Optional: what the transport did for the session so far, as one
	 * line of text in @buf (the ring's or the link's counters), for the
	 * log when the session ends.
	 */
	void (*counters)(struct xd_chan *c, char *buf, size_t len);
	/*
	 * Optional (`tcp` only), host functions where the guest's slot area
	 * is not this arena but a copy of it (hostfn.c):
	 *  - hostfn_setup: the area is [@off, @off + @len) of the arena
	 *    (checked by the caller); the session's thread, before any
	 *    trampoline runs.  0 or a negative errno.
	 *  - hostfn_publish: a trampoline wrote a record in slot @slot of
	 *    the copy, and @plen payload bytes at @poff: the transport sends
	 *    them to the guest's area.  0 or a negative errno (then
	 *    peer_gone says so).
	 *  - hostfn_wait: waits up to @us microseconds for a completion,
	 *    reading it from the guest's side if no other thread does (the
	 *    session's thread may be blocked in CUDA); returns at once when
	 *    *@word is no longer @val.
	 * Any thread; hostfn_publish and hostfn_wait only while the session
	 * is open.
	 */
	int (*hostfn_setup)(struct xd_chan *c, uint64_t off, uint64_t len);
	int (*hostfn_publish)(struct xd_chan *c, unsigned int slot,
			      uint64_t poff, uint64_t plen);
	void (*hostfn_wait)(struct xd_chan *c, uint32_t *word, uint32_t val,
			    unsigned int us);
};

struct xd_chan {
	const struct xd_chan_ops *ops;
	uint8_t *arena;		/* the session's arena, mapped here */
	uint64_t arena_size;
	uint32_t session;
	/*
	 * Who the guest is, from the transport, never from the guest:
	 * XD_DOMAIN_LOCAL | the peer's uid, XD_DOMAIN_XEN | its domain id
	 * (ipc_table.h); 0 when unknown, which no IPC handle opens in.
	 */
	uint64_t domain;
	unsigned int flags;	/* XD_CHAN_* */
	void *priv;
};

/*
 * The guest maps the arena MAP_SHARED from the same memory on this
 * kernel: a futex on an arena word wakes across the two processes.
 */
#define XD_CHAN_SHARED_FUTEX	(1u << 0)
/*
 * The guest is on another host (`tcp`, the upstream link): the arena here
 * is a copy that holds the guest's bytes only where a request named them
 * (up_spans.h).  Host functions publish their records through the
 * transport (hostfn_publish).  Graph copies to or from the arena (run at
 * each launch, long after any request) travel through graph_ext and the
 * relay's PUT frames (graph_remote.c).  Registered host memory (a
 * descriptor that cannot cross hosts) is "cannot pin", so the guest
 * stages copies; no device address of the arena is given out, so that a
 * kernel cannot read stale host memory (the guest then makes pinned
 * memory managed memory underneath).
 */
#define XD_CHAN_REMOTE		(1u << 1)

#endif /* XCUDA_DAEMON_TRANSPORT_H */
