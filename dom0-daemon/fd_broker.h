/* SPDX-License-Identifier: MIT */
/*
 * The daemon's descriptor broker (docs/protocol.md, "Pool export"): a
 * memory pool exported as a POSIX file descriptor lives as a descriptor
 * in the exporting worker, and the importing guest process has a worker
 * of its own.  Workers hand such descriptors to xcudad, which keeps them
 * under a random token with the exporter's domain and session, and hands
 * a copy to a worker of the same domain that names the token.  Each
 * worker talks to xcudad over a SOCK_SEQPACKET pair made when it is
 * forked (supervise.h); the parent never waits on a worker: it reads a
 * request only when poll() says one is there, and answers without
 * blocking.
 */
#ifndef XCUDAD_FD_BROKER_H
#define XCUDAD_FD_BROKER_H

#include <stdint.h>

#define XD_BROKER_TOKEN		64	/* bytes, random, made by the worker */
#define XD_BROKER_SLOTS		256	/* descriptors xcudad keeps at most */
#define XD_BROKER_PER_DOMAIN	64	/* of them, one domain's */

/* Parent side. */

/*
 * Answers one request waiting on @chan, the parent's end of the worker
 * of @session.  Returns 0, or -1 when the channel is broken (the worker
 * is gone or misbehaves): then the parent stops listening to it.
 */
int xd_broker_serve(int chan, uint32_t session);
/* Closes every descriptor @session put (its end, or its worker's). */
void xd_broker_forget_session(uint32_t session);
/* Descriptors kept, for tests and the log. */
unsigned int xd_broker_live(void);

/* Worker side: @chan is the worker's end (xd_super_chan()). */

/*
 * Gives a copy of @fd to xcudad under @token for @domain: 0, -ENOSPC
 * (the broker is full), -EDQUOT (the domain's share is used), -EEXIST
 * (the token is taken), -EPIPE (no broker), -ETIMEDOUT.
 */
int xd_broker_put(int chan, uint64_t domain,
		  const uint8_t token[XD_BROKER_TOKEN], int fd);
/*
 * A copy of the descriptor put under @token for @domain (the caller
 * closes it), or -ENOENT (no such token for that domain), -EPIPE,
 * -ETIMEDOUT.
 */
int xd_broker_get(int chan, uint64_t domain,
		  const uint8_t token[XD_BROKER_TOKEN]);

#endif /* XCUDAD_FD_BROKER_H */
