/* SPDX-License-Identifier: MIT */
/*
 * The `local` transport: the xcuda ring and arena in one shared memory
 * object (memfd) between a guest process and its xcudad worker on the same
 * host, eventfd doorbells, and a handshake over a unix stream socket.
 *
 * Handshake: the guest connects to the socket (XCUDA_SOCKET, default
 * XCUDA_LOCAL_SOCKET_DEFAULT) and sends one struct xcuda_local_hello.  The
 * daemon forks the session's worker, which answers with one struct
 * xcuda_local_welcome and, in the same message (SCM_RIGHTS), three file
 * descriptors: the memfd, the request doorbell (guest -> worker) and the
 * response doorbell (worker -> guest).  The memfd holds the shared ring in
 * its first (PAGE << ring_order) bytes and the arena right after it.  The
 * socket then stays open and carries nothing: its hang-up tells either end
 * that the other has gone.
 *
 * The worker initialises the shared ring (SHARED_RING_INIT) before it sends
 * the memfd, so no one ever sees it half set up; the guest only attaches.
 * The worker seals the memfd against shrinking and growing (a peer that
 * could truncate it would make the other fault on access), and the guest
 * refuses one without those seals.  Both doorbells are non-blocking.
 *
 * The descriptor channel (optional): the hello may carry, by SCM_RIGHTS,
 * one end of an AF_UNIX SOCK_SEQPACKET socket pair the guest made.  A
 * worker that serves HOST_REGISTER keeps it; an older one reads the hello
 * without a control buffer, which closes it, and the guest sees its own
 * end hang up by the time the welcome comes.  Before each HOST_REGISTER
 * the guest sends on it one struct xcuda_local_fd with exactly one
 * descriptor, the memfd to register, tagged as the request is.  The
 * worker reads the channel only while it handles that request, never
 * while it sleeps on the doorbell and the socket, so the handshake
 * socket still carries nothing.
 */
#ifndef XCUDA_LOCAL_H
#define XCUDA_LOCAL_H

#include <stdint.h>

#define XCUDA_LOCAL_SOCKET_DEFAULT	"/run/xcuda/xcudad.sock"
#define XCUDA_LOCAL_SOCKET_ENV		"XCUDA_SOCKET"
#define XCUDA_LOCAL_MAGIC		0x78637564u	/* "xcud" */
#define XCUDA_LOCAL_VERSION		1
/* Requests address the arena with 32-bit offsets: it never exceeds 4 GiB. */
#define XCUDA_LOCAL_ARENA_MAX		(1ull << 32)

struct xcuda_local_hello {
	uint32_t magic;
	uint32_t version;
	uint32_t ring_order;	/* wanted; the worker may lower it */
	uint32_t rsvd;
	uint64_t arena_size;	/* wanted; the worker may lower it */
};

/* A descriptor message on the channel: this, and one fd (SCM_RIGHTS). */
#define XCUDA_LOCAL_FD_MAGIC		0x78636664u	/* "xcfd" */

struct xcuda_local_fd {
	uint32_t magic;
	uint32_t tag;		/* HOST_REGISTER's args.tag; never 0 */
};

struct xcuda_local_welcome {
	uint32_t magic;
	uint32_t version;
	int32_t status;		/* 0, or a negative errno: no fds follow */
	uint32_t ring_order;
	uint64_t arena_size;
	uint32_t session;	/* the session id requests must carry */
	uint32_t rsvd;
};

#endif /* XCUDA_LOCAL_H */
