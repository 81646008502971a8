/* SPDX-License-Identifier: MIT */
/*
 * The `xen` transport: what xcuda-front.ko, xcuda-back.ko, xcudad and the
 * guest library agree on beyond the ring format of xcuda/proto.h.
 *
 * One xenbus device (type "xcuda") connects a guest to Dom0 with one
 * control ring and one event channel, which only the kernel modules use:
 * they create and end sessions there.  Every process of the guest that
 * opens /dev/xcuda gets a session of its own; the backend hands each
 * session to one xcudad worker through /dev/xcuda-back.
 *
 * A session's requests never pass through either kernel.  They travel on
 * the session's data ring, which the guest process and its worker both
 * map, with an event channel of its own as the doorbell: the same ring,
 * records and spin-then-sleep protocol as the `local` transport
 * (common/ring_wait.h).  Each module bridges the session's event channel
 * to two eventfds of its process: an event from the peer signals the
 * "bell" eventfd, which the process sleeps on, and a write to the "kick"
 * eventfd sends an event to the peer.  While both sides spin, a call
 * makes no system call at all.
 *
 * The shared memory of a session belongs to Dom0: the worker allocates it
 * (a memfd it maps), xcuda-back pins its pages and grants them to the
 * guest, and xcuda-front maps those grants into the guest process.  It is
 * one header page (struct xcuda_data_intf), the data ring (1 << ring_order
 * pages), then the arena.  Pages of Dom0's own can be registered with
 * CUDA for DMA (cudaHostRegister), which foreign pages mapped into Dom0
 * may not be; so copies from the arena go straight to the GPU.
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
#define XCUDA_XS_UPSTREAM		"upstream"	/* toolstack */
#define XCUDA_XS_MAX_GPUMEM		"max-gpumem-bytes"	/* toolstack */

#define XCUDA_XEN_VERSION		2
#define XCUDA_XEN_DEF_SESSIONS		16
#define XCUDA_XEN_MAX_SESSIONS		256
#define XCUDA_XEN_DEF_ARENA		(64ull << 20)
/* Arena offsets on the wire are 32-bit. */
#define XCUDA_XEN_MAX_ARENA		(4ull << 30)
/* The domain's GPU memory quota: bytes, 1 to 2^50 (1 PiB). */
#define XCUDA_XEN_MAX_GPUMEM		(1ull << 50)
/* A session's data ring: 1 << order pages (xcuda/proto.h's records). */
#define XCUDA_XEN_DEF_DATA_ORDER	4

/*
 * The first page of a session's shared memory.  Only Dom0 writes it:
 * xcuda-back sets closed to 1, then sends an event, when the session is
 * over (its worker exited, xcudad or the backend went away), so that a
 * guest process sleeping on its bell or spinning on its ring learns it.
 */
struct xcuda_data_intf {
	__u32 closed;
	__u32 rsvd[1023];
};

/* Pages before the arena: the header page and the data ring. */
#define XCUDA_XEN_DATA_PAGES(order)	(1u + (1u << (order)))

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
	__u32 evtchn;		/* the session's doorbell: an unbound port */
				/* the frontend allocated for the backend */
	__u32 ring_order;	/* data ring pages, log2: 0..4, wanted */
	__u32 rsvd;
};

struct xcuda_xsession_new_res {
	__u32 session;		/* id every request of the session carries */
	__u32 dir_ref;		/* grant of the first directory page */
	__u32 nr_pages;		/* XCUDA_XEN_DATA_PAGES(ring_order) + */
				/* arena_size / 4096 */
	__u32 ring_order;	/* granted: at most the one asked for */
	__u64 arena_size;	/* granted */
};

/*
 * The shared pages' grants (header, data ring, arena) are listed in a
 * chain of directory pages, each granted read-only to the guest and laid
 * out as struct xcuda_page_directory: the grant of the next directory
 * page (0 in the last one), then those of the shared pages in order (the last page
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
 * On the control ring xcuda-back answers only the transport opcodes
 * above, with a negative errno as the status: -EINVAL (malformed, or any
 * other opcode), -ENOENT (no such session), -ENOSPC, -EDQUOT (the
 * domain's grant budget), -ENOMEM, -ESHUTDOWN (no xcudad), -ETIMEDOUT.  On a data ring a worker answers each request
 * with a cudaError_t (0 or positive).
 */

/* ------------------------------------------------------------------ */
/* /dev/xcuda (xcuda-front.ko): one session per open file.              */

struct xcuda_ioc_open {
	__u64 arena_size;	/* in: wanted (0: backend's default) */
				/* out: granted */
	__u64 map_size;		/* out: mmap() exactly this, offset 0: */
				/* header page, data ring, arena */
	__u32 session;		/* out */
	__u32 ring_order;	/* in: wanted (0: the default), out: granted */
	__u32 version;		/* out: XCUDA_XEN_VERSION */
	__s32 bell_fd;		/* in: an eventfd the driver signals */
	__s32 kick_fd;		/* in: an eventfd; a write rings Dom0 */
	__u32 rsvd;		/* in: 0 */
};

#define XCUDA_IOC_MAGIC		'X'
/*
 * Creates the session (once per open file) on an event channel of its
 * own, bridged to the two eventfds; then mmap() the shared pages.  The
 * driver keeps references to both eventfds until the file is closed.
 * poll() says EPOLLHUP once the connection to the backend is lost; the
 * header page's closed word says when Dom0 ended the session.  Nothing
 * is read from or written to the file.
 */
#define XCUDA_IOC_OPEN		_IOWR(XCUDA_IOC_MAGIC, 3, struct xcuda_ioc_open)

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
	__u32 ring_order;	/* the session's data ring: 1 << this pages */
	__u32 rsvd;
	/*
	 * SESSION: the device's upstream node (HOST:PORT), NUL-terminated;
	 * empty when the toolstack set none.  The backend checks it: at
	 * most 63 characters, only A-Z a-z 0-9 . : _ [ ] -.  xcudad relays
	 * the device's sessions there (include/xcuda/upstream.h) instead of
	 * running them on a local GPU.  GONE: empty.
	 */
	char upstream[64];
	/*
	 * SESSION: the device's max-gpumem-bytes node, the GPU memory its
	 * domain's sessions may hold together (xcudad counts it); 0 when
	 * the toolstack set none (xcudad's --gpumem then).  GONE: 0.
	 */
	__u64 gpumem;
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
 * The worker hands its shared memory: [addr, addr + size), page-aligned
 * user memory of exactly XCUDA_XEN_DATA_PAGES(ring_order) pages plus the
 * event's arena_size, which the backend pins and grants to the guest,
 * with the data ring already initialised (SHARED_RING_INIT) in its second
 * page.  The backend binds the session's event channel to the two
 * eventfds: an event from the guest signals bell_fd, a write to kick_fd
 * sends one.  That completes the guest's SESSION_NEW.
 */
struct xcuda_back_arena {
	__u64 addr;
	__u64 size;
	__s32 bell_fd;
	__s32 kick_fd;
};

#define XCUDA_BACK_IOC_MAGIC	'x'
#define XCUDA_BACK_IOC_CONTROL	_IO(XCUDA_BACK_IOC_MAGIC, 1)
#define XCUDA_BACK_IOC_ATTACH	_IOW(XCUDA_BACK_IOC_MAGIC, 2, \
				     struct xcuda_back_attach)
#define XCUDA_BACK_IOC_REFUSE	_IOW(XCUDA_BACK_IOC_MAGIC, 3, \
				     struct xcuda_back_refuse)
#define XCUDA_BACK_IOC_ARENA	_IOW(XCUDA_BACK_IOC_MAGIC, 5, \
				     struct xcuda_back_arena)
/*
 * On an attached file: poll() says EPOLLHUP once the session has ended
 * (the guest process closed it, the frontend or its domain went away);
 * the worker then exits.  Nothing is read or written.  Closing the file
 * ends the session: the backend marks the header page closed, rings the
 * guest, and ends the grants.
 */

#endif /* XCUDA_XEN_H */
