/* SPDX-License-Identifier: MIT */
/*
 * The `xen` transport: what xcuda-front.ko, xcuda-back.ko, xcudad and the
 * guest library agree on beyond the ring format of xcuda/proto.h.
 *
 * One xenbus device (type "xcuda") connects a guest to Dom0 with one
 * shared ring and one event channel.  Every process of the guest that
 * opens /dev/xcuda gets a session of its own on that ring; the backend
 * hands each session to one xcudad worker through /dev/xcuda-back.
 *
 * The arena of a session belongs to Dom0: the worker allocates it (a
 * memfd it maps), xcuda-back pins its pages and grants them to the guest,
 * and xcuda-front maps those grants into the guest process.  Pages of
 * Dom0's own can be registered with CUDA for DMA (cudaHostRegister), which
 * foreign pages mapped into Dom0 may not be; so copies from the arena go
 * straight to the GPU.
 *
 * This header compiles in the kernel and in user space.  See
 * docs/protocol.md, "The xen transport".
 */
#ifndef XCUDA_XEN_H
#define XCUDA_XEN_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* ------------------------------------------------------------------ */
/* xenstore                                                            */

#define XCUDA_XS_TYPE			"xcuda"
/* Frontend nodes (device/xcuda/N). */
#define XCUDA_XS_RING_ORDER		"ring-page-order"
#define XCUDA_XS_RING_REF		"ring-ref"	/* ring-ref, ring-ref%u */
#define XCUDA_XS_EVTCHN			"event-channel"
#define XCUDA_XS_VERSION		"version"
/* Backend nodes (backend/xcuda/<domid>/N). */
#define XCUDA_XS_VERSIONS		"versions"
#define XCUDA_XS_MAX_RING_ORDER		"max-ring-page-order"
#define XCUDA_XS_MAX_SESSIONS		"max-sessions"	/* toolstack */
#define XCUDA_XS_MAX_ARENA		"max-arena-bytes"	/* toolstack */

#define XCUDA_XEN_VERSION		1
#define XCUDA_XEN_DEF_SESSIONS		16
#define XCUDA_XEN_MAX_SESSIONS		256
#define XCUDA_XEN_DEF_ARENA		(64ull << 20)
/* Arena offsets on the wire are 32-bit. */
#define XCUDA_XEN_MAX_ARENA		(4ull << 30)

/* ------------------------------------------------------------------ */
/* Transport requests on the ring, answered by xcuda-back itself.      */

/*
 * These opcodes never reach a worker.  Their status is 0 or a negative
 * errno value (not a cudaError_t); only the frontend sees them.
 */
#define XCUDA_XOP_SESSION_NEW	0xff01	/* hdr.session 0 */
#define XCUDA_XOP_SESSION_END	0xff02	/* hdr.session: the one to end */

struct xcuda_xsession_new_args {
	__u64 arena_size;	/* wanted; the backend may lower it */
	__u32 flags;		/* none defined: 0 */
	__u32 rsvd;
};

struct xcuda_xsession_new_res {
	__u32 session;		/* id every request of the session carries */
	__u32 dir_ref;		/* grant of the first directory page */
	__u32 nr_pages;		/* arena pages, arena_size / 4096 */
	__u32 rsvd;
	__u64 arena_size;	/* granted */
};

/*
 * The arena's grants are listed in a chain of directory pages, each
 * granted read-only to the guest and laid out as struct
 * xcuda_page_directory: the grant of the next directory page (0 in the
 * last one), then those of the arena's pages in order (the last page
 * lists the rest and ends with zeros).  A chain of
 * ceil(nr_pages / XCUDA_DIR_REFS) pages.
 *
 * This is the layout of Linux's struct xen_page_directory
 * (drivers/xen/xen-front-pgdir-shbuf.c, and the page directories of
 * displif.h and sndif.h): one 4 KiB page of 32-bit grant references, the
 * next page's first, 0 (XEN_GREF_LIST_END) ending the chain, 1023
 * references per page.  Entries are little-endian.  Here the side that
 * grants the buffer (the backend) also writes and grants the directory.
 */
#define XCUDA_DIR_ENTRIES	(4096 / 4)
#define XCUDA_DIR_REFS		(XCUDA_DIR_ENTRIES - 1)

struct xcuda_page_directory {
	__le32 next;			/* next directory page's grant, or 0 */
	__le32 refs[XCUDA_DIR_REFS];	/* the arena's grants, in order */
};

/*
 * Response flags (xcuda_response.flags is the request's flags, to which
 * the backend adds these).  A request of a session the backend no longer
 * has (its worker died, or it never existed for this frontend) is
 * answered by the backend with status -ESHUTDOWN and XCUDA_RSPF_GONE;
 * the frontend then ends that session locally.
 *
 * Whatever xcuda-back answers by itself, on any opcode, carries a
 * negative errno as its status: -ESHUTDOWN (session gone, with
 * XCUDA_RSPF_GONE), -EINVAL (malformed request), -ENOMEM.  A worker's
 * answer carries a cudaError_t (0 or positive).  The guest library maps
 * the errno values to CUDA errors.
 */
#define XCUDA_RSPF_GONE		(1u << 15)

/* ------------------------------------------------------------------ */
/* /dev/xcuda (xcuda-front.ko): one session per open file.              */

struct xcuda_ioc_open {
	__u64 arena_size;	/* in: wanted (0: backend's default) */
				/* out: granted; mmap() exactly this */
	__u32 session;		/* out */
	__u32 slots;		/* out: most requests in flight at once */
	__u32 version;		/* out: XCUDA_XEN_VERSION */
	__u32 rsvd;
};

struct xcuda_ioc_submit {
	__u64 reqs;		/* user pointer to struct xcuda_request[n] */
	__u32 n;		/* 1 .. slots */
	__u32 rsvd;
};

#define XCUDA_IOC_MAGIC		'X'
/* Creates the session (once per open file); then mmap() the arena. */
#define XCUDA_IOC_OPEN		_IOWR(XCUDA_IOC_MAGIC, 1, struct xcuda_ioc_open)
/*
 * Posts n requests and rings the backend once.  hdr.session is set by
 * the driver; hdr.id is the caller's and comes back in the response.
 * Fails with EAGAIN if it would put more than slots in flight, EPIPE
 * once the session is gone.
 */
#define XCUDA_IOC_SUBMIT	_IOW(XCUDA_IOC_MAGIC, 2, struct xcuda_ioc_submit)
/*
 * read() returns whole struct xcuda_response, as many as fit and are
 * queued; it blocks for the first one unless O_NONBLOCK (EAGAIN).  poll()
 * says POLLIN when one is queued, POLLHUP once the session is gone and
 * nothing is left to read; read() then fails with EPIPE.
 */

/* ------------------------------------------------------------------ */
/* /dev/xcuda-back (xcuda-back.ko): xcudad and its workers.             */

/*
 * xcudad opens /dev/xcuda-back and makes that file the control file with
 * XCUDA_BACK_IOC_CONTROL (one at a time; the second gets EBUSY).  read()
 * on it returns whole struct xcuda_back_event (poll() for POLLIN).  For
 * each SESSION event the daemon opens /dev/xcuda-back again, binds the
 * new file with XCUDA_BACK_IOC_ATTACH, and forks a worker that keeps only
 * that file; or it refuses the session with XCUDA_BACK_IOC_REFUSE.
 */
enum xcuda_back_event_type {
	XCUDA_BACK_EV_SESSION = 1,	/* a guest process wants a session */
	XCUDA_BACK_EV_GONE = 2,		/* a frontend disconnected */
};

struct xcuda_back_event {
	__u32 type;
	__u32 session;
	__u32 domid;
	__u32 devid;
	__u64 arena_size;	/* within the backend's limits */
	__u64 token;		/* for ATTACH or REFUSE */
};

struct xcuda_back_attach {
	__u64 token;
};

struct xcuda_back_refuse {
	__u64 token;
	__u32 err;		/* positive errno; the frontend gets -err */
	__u32 rsvd;
};

/*
 * The worker hands its arena: [addr, addr + size), page-aligned user
 * memory of exactly the event's arena_size, which the backend pins and
 * grants to the guest.  That completes the guest's SESSION_NEW.
 */
struct xcuda_back_arena {
	__u64 addr;
	__u64 size;
};

#define XCUDA_BACK_IOC_MAGIC	'x'
#define XCUDA_BACK_IOC_CONTROL	_IO(XCUDA_BACK_IOC_MAGIC, 1)
#define XCUDA_BACK_IOC_ATTACH	_IOW(XCUDA_BACK_IOC_MAGIC, 2, \
				     struct xcuda_back_attach)
#define XCUDA_BACK_IOC_REFUSE	_IOW(XCUDA_BACK_IOC_MAGIC, 3, \
				     struct xcuda_back_refuse)
#define XCUDA_BACK_IOC_ARENA	_IOW(XCUDA_BACK_IOC_MAGIC, 4, \
				     struct xcuda_back_arena)
/*
 * On an attached file: read() returns whole struct xcuda_request of the
 * session, copied once out of the ring and checked (session, len, rsvd,
 * the data extent within the arena); blocks unless O_NONBLOCK; returns 0
 * once the session has ended (the guest process closed it, the frontend
 * or its domain went away): the worker then exits.  write() takes whole
 * struct xcuda_response, each answering the oldest unanswered request of
 * the session (same id and op), in order; anything else is EINVAL and
 * ends the session.  Closing the file ends the session; requests still
 * unanswered are answered -ESHUTDOWN with XCUDA_RSPF_GONE.
 */

#endif /* XCUDA_XEN_H */
