/* SPDX-License-Identifier: MIT */
/*
 * What the guest library needs from a transport: somewhere to put requests,
 * somewhere to get responses from, and a mapped arena.  The `local`
 * transport (memfd ring + eventfds) and the `xen` transport (/dev/xcuda:
 * the same ring in pages Dom0 grants) implement it, both on ring_front.h;
 * everything above is shared.
 */
#ifndef XCUDA_GUEST_TRANSPORT_H
#define XCUDA_GUEST_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "xcuda/proto.h"
#include "common/ring_wait.h"	/* struct xr_stats */

struct xc_transport;

struct xc_transport_ops {
	const char *name;
	/*
	 * Queues @n requests for the peer and rings its doorbell once.
	 * The caller guarantees that no more than ring_slots requests are
	 * outstanding.  Returns 0 or a negative errno (-EPIPE: peer gone).
	 */
	int (*submit)(struct xc_transport *t, const struct xcuda_request *req,
		      unsigned int n);
	/*
	 * Copies up to @max responses out of the ring.  Waits up to
	 * @timeout_ms for the first one (-1: forever; it spins briefly
	 * before sleeping).  Returns how many were copied, 0 on timeout,
	 * or a negative errno (-EPIPE: the peer has gone).
	 */
	int (*receive)(struct xc_transport *t, struct xcuda_response *rsp,
		       unsigned int max, int timeout_ms);
	void (*close)(struct xc_transport *t);
	/*
	 * Optional (`local` only): hands @fd to the worker over the
	 * descriptor channel, tagged @tag, for the HOST_REGISTER request
	 * about to be pushed (@fd -1: only whether there is a channel).
	 * Never blocks.  Returns 0, -ENOTCONN when the worker took no
	 * channel, or another negative errno.
	 */
	int (*send_fd)(struct xc_transport *t, int fd, uint32_t tag);
};

struct xc_transport {
	const struct xc_transport_ops *ops;
	void *arena;		/* mapped shared arena */
	uint64_t arena_size;
	uint32_t session;	/* id the peer assigned */
	unsigned int ring_slots;	/* most requests in flight */
	/*
	 * How long the answer being waited for should take, if the caller
	 * knows (a large copy): a transport that spins before it sleeps
	 * may spin that long.  Session lock.
	 */
	uint64_t expect_ns;
	unsigned int flags;	/* XC_TRANSPORT_* */
	/*
	 * What our end of the ring has done so far (common/ring_wait.h):
	 * entries pushed and taken, bells rung, sleeps; NULL if the
	 * transport keeps none.  The worker's side keeps its own, which
	 * the guest does not see.  Read under the session lock.
	 */
	const struct xr_stats *stats;
	void *priv;		/* the transport's own state */
};

/*
 * The worker maps the arena MAP_SHARED from the same memory as we do, on
 * this kernel: a futex on an arena word wakes across the two processes.
 */
#define XC_TRANSPORT_SHARED_FUTEX	(1u << 0)

/* Connect options; zero means the transport's default. */
struct xc_transport_opts {
	const char *path;	/* local: socket path; xen: device */
	uint64_t arena_size;
	unsigned int ring_order;
};

/* Each returns 0 and fills @t, or a negative errno. */
int xc_local_open(struct xc_transport *t, const struct xc_transport_opts *o);
/*
 * @o->path: the device (default /dev/xcuda); @o->ring_order and
 * @o->arena_size are asked of the backend, which may grant less.
 */
int xc_xen_open(struct xc_transport *t, const struct xc_transport_opts *o);

#endif /* XCUDA_GUEST_TRANSPORT_H */
