/* SPDX-License-Identifier: MIT */
/*
 * The worker end of the `local` transport (see xcuda/local.h).
 */
#ifndef XCUDA_DAEMON_TRANSPORT_LOCAL_H
#define XCUDA_DAEMON_TRANSPORT_LOCAL_H

#include <stdint.h>

#include "transport.h"

/* What the worker grants at most; it lowers a guest that asks for more. */
struct xd_local_limits {
	uint64_t max_arena;		/* bytes; 0: XCUDA_LOCAL_ARENA_MAX */
	unsigned int max_ring_order;	/* capped at XCUDA_MAX_RING_ORDER */
};

/*
 * Runs the worker's half of the handshake on the connected socket
 * @conn_fd: reads the hello (5 s at most), creates the ring and arena and
 * sends the welcome with the memfd and both doorbells.  A refused guest
 * gets a welcome with a negative status and no descriptors.
 *
 * Returns 0 with @c ready (and owning @conn_fd, which c->ops->close()
 * closes), or a negative errno with @conn_fd still the caller's.  @lim may
 * be NULL for the protocol's maxima.  @conn_fd must have no other copy in
 * any process, or the guest will not see the worker go away.
 */
int xd_local_accept(int conn_fd, struct xd_chan *c,
		    const struct xd_local_limits *lim, uint32_t session_id);

#endif /* XCUDA_DAEMON_TRANSPORT_LOCAL_H */
