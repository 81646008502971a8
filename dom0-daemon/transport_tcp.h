/* SPDX-License-Identifier: MIT */
/*
 * The worker end of the upstream link on the GPU server (xcuda/upstream.h):
 * `tcp`, a session whose guest is behind a relay on another host.
 */
#ifndef XCUDA_DAEMON_TRANSPORT_TCP_H
#define XCUDA_DAEMON_TRANSPORT_TCP_H

#include <stdint.h>

#include "transport.h"
#include "up_link.h"

struct xd_tcp_conf {
	const struct xd_up_key *key;
	uint64_t max_arena;	/* bytes: the most a relay gets */
};

/*
 * Runs the server's half of the handshake on the connected socket @fd
 * (XD_UP_HANDSHAKE_MS at most for each read), a relay that proves the
 * key getting a session @session_id with an arena of what it asked, at
 * most @conf->max_arena.  A wrong MAC is answered -EACCES and logged
 * with the peer's address.  Returns 0 with @c ready (owning @fd), or a
 * negative errno with @fd still the caller's.
 */
int xd_tcp_accept(int fd, struct xd_chan *c, const struct xd_tcp_conf *conf,
		  uint32_t session_id);

#endif /* XCUDA_DAEMON_TRANSPORT_TCP_H */
