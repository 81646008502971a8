/* SPDX-License-Identifier: MIT */
/*
 * The relay: a worker of an xcudad without a GPU, started with --upstream
 * HOST:PORT, that serves its guest's session by forwarding it over the
 * upstream link (xcuda/upstream.h) to a worker of the xcudad on the GPU
 * server.  It never loads or calls CUDA.
 */
#ifndef XCUDAD_RELAY_H
#define XCUDAD_RELAY_H

#include "transport.h"
#include "up_link.h"

/* XCUDA_UPSTREAM_TIMEOUT_S: how long outstanding requests may go unanswered. */
#define XD_RELAY_TIMEOUT_ENV	"XCUDA_UPSTREAM_TIMEOUT_S"
#define XD_RELAY_TIMEOUT_S	30
/* How long connecting to the server may take. */
#define XD_RELAY_CONNECT_MS	10000

struct xd_upstream {
	const char *addr;		/* HOST:PORT of the server */
	const struct xd_up_key *key;
	/* This daemon's random id: with a domain, whose guest a session is. */
	const uint8_t *origin;
};

/*
 * Serves the session on @c through @up until the guest goes, the guest
 * breaks the ring, or the link is lost (requests outstanding then are
 * answered cudaErrorDevicesUnavailable); closes @c.  A server that cannot
 * be reached or refuses the session is logged, and the guest's first
 * request answered cudaErrorDevicesUnavailable.  Returns the worker's
 * exit status.
 */
int xd_relay_run(struct xd_chan *c, const struct xd_upstream *up);

#endif /* XCUDAD_RELAY_H */
