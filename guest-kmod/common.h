/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xcuda-front: what the parts of the module share (the module's private
 * header).
 *
 * xenbus.c  the xenbus frontend: control ring, event channel, xenstore
 * ring.c    session requests onto the control ring, answers off it
 * session.c /dev/xcuda: one session per open file, its doorbell
 * arena.c   the grant directory and the mapping of a session's shared
 *           pages (header, data ring, arena) into its process
 *
 * One connection (device 0) serves every session.  Its state lives in
 * the global struct xcf_conn; the xenbus side changes it under ->mutex,
 * everything the ring work touches is under ->lock.  A session's
 * calls never reach this driver: they go over its data ring, mapped by
 * the process and its worker, with its own event channel as doorbell.
 */
#ifndef XCUDA_FRONT_COMMON_H
#define XCUDA_FRONT_COMMON_H

#include <linux/bits.h>
#include <linux/irqreturn.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <xen/grant_table.h>
#include <xen/xenbus.h>

#include "xcuda/proto.h"
#include "xcuda/xen.h"
#include "xcuda/xen_doorbell.h"

#define XCF_MAX_RING_PAGES	BIT(XCUDA_MAX_RING_ORDER)
#define XCF_MAX_SLOTS		XCUDA_RING_SIZE(XCUDA_MAX_RING_ORDER)
#define XCF_OPEN_TIMEOUT	(60 * HZ)
/* Errors in a row after which new tries back off. */
#define XCF_MAX_STRIKES		3

enum xcf_kind {
	XCF_SH_FREE,
	XCF_SH_NEW,		/* XCUDA_XOP_SESSION_NEW */
	XCF_SH_END,		/* XCUDA_XOP_SESSION_END, answer dropped */
};

/* A SESSION_NEW in progress; lives on the stack of the OPEN ioctl. */
struct xcf_waiter {
	bool done;
	int err;			/* -ENODEV: the connection went away */
	struct xcuda_response rsp;	/* checked copy of the answer */
};

/* What the driver remembers of a request on the ring. */
struct xcf_shadow {
	u32 gen;			/* upper half of the ring tag */
	u16 op;
	u8 kind;			/* enum xcf_kind */
	struct xcf_waiter *waiter;	/* XCF_SH_NEW; NULL once given up */
	u64 id;				/* the caller's id */
};

/* An XCUDA_XOP_SESSION_END that waits for room on the ring. */
struct xcf_end {
	struct list_head node;
	u32 session;
};

struct xcf_conn {
	struct mutex mutex;		/* xenbus side: setup and teardown */
	struct xenbus_device *xdev;	/* device 0, NULL when absent */
	struct work_struct broken_work;	/* closes after a protocol error */
	struct delayed_work retry_work;	/* backs off after many errors */
	struct work_struct ring_work;	/* takes the responses off the ring */
	unsigned long flags;		/* XCF_EOI_PENDING */

	spinlock_t lock;		/* all below */
	bool live;			/* ring set up and sane */
	bool connected;			/* backend Connected: sessions post */
	unsigned int strikes;		/* setup or protocol errors in a row */
	u64 epoch;			/* bumped whenever sessions are failed */
	domid_t domid;			/* the backend's domain */
	struct xcuda_sring *sring;
	struct xcuda_front_ring ring;
	unsigned int order;
	grant_ref_t refs[XCF_MAX_RING_PAGES];
	/*
	 * A control ring the backend still mapped when it was torn down:
	 * its pages and grants, kept until the backend lets go.  No new
	 * ring is set up meanwhile.  Under ->mutex.
	 */
	void *stale;
	unsigned int stale_nr;
	grant_ref_t stale_refs[XCF_MAX_RING_PAGES];
	evtchn_port_t evtchn;
	bool has_evtchn;
	int irq;
	unsigned int size;		/* RING_SIZE, entries of shadow[] */
	struct xcf_shadow shadow[XCF_MAX_SLOTS];
	u8 free_idx[XCF_MAX_SLOTS];	/* stack of free shadow entries */
	unsigned int nr_free;
	struct list_head sessions;	/* open sessions of this epoch */
	struct list_head ends;		/* struct xcf_end waiting for room */
	wait_queue_head_t ring_wq;	/* room on the ring */
	wait_queue_head_t open_wq;	/* SESSION_NEW answers */
};

#define XCF_EOI_PENDING		0

extern struct xcf_conn xcf;

/* The arena's mapping into one process (one VMA, never split). */
struct xcf_arena {
	struct mutex lock;		/* below; the notifier takes it too */
	unsigned long start;		/* user address of page 0 */
	unsigned int vmas;		/* VMAs sharing the mapping */
	unsigned int live;		/* grants mapped now */
	bool notifier_on;
	struct mmu_interval_notifier notifier;	/* PV: unmap before zap */
	/*
	 * One unmap operation per page, filled when mapping: PV keeps the
	 * machine address of the user PTE, auto-translated guests the
	 * kernel address of pages[i].
	 */
	struct gnttab_unmap_grant_ref *unmap;
	struct page **pages;		/* auto-translated only */
};

enum xcf_state {
	XCF_S_NEW,			/* no session yet */
	XCF_S_OPEN,
};

/* One open file of /dev/xcuda. */
struct xcf_session {
	struct mutex lock;		/* state, refs, mmap */
	enum xcf_state state;
	bool mmapped;			/* mmap() is allowed once */
	u32 id;
	u64 map_size;			/* header, data ring, arena */
	unsigned int nr_pages;
	grant_ref_t *refs;		/* the shared pages' grants, in order */
	domid_t domid;
	struct xcf_arena arena;
	struct xcuda_db db;		/* the session's doorbell */

	/* Under xcf.lock. */
	struct list_head node;		/* in xcf.sessions */
	u64 epoch;
	bool gone;			/* the backend is no longer there */
	wait_queue_head_t rq;		/* poll */
};

/* ring.c */
void xcf_ring_reset_locked(unsigned int size);
unsigned int xcf_room_locked(void);
void xcf_post_locked(struct xcuda_request *req, enum xcf_kind kind,
		     struct xcf_waiter *w);
void xcf_kick_locked(void);
void xcf_queue_end_locked(u32 session, struct xcf_end *spare);
void xcf_forget_waiter_locked(struct xcf_waiter *w);
void xcf_fail_all_locked(void);
irqreturn_t xcf_interrupt(int irq, void *dev_id);
void xcf_ring_work(struct work_struct *work);

/* session.c */
extern struct miscdevice xcf_misc;

/* arena.c */
grant_ref_t *xcf_arena_fetch(domid_t domid, u32 dir_ref, u32 nr_pages);
int xcf_mmap(struct file *file, struct vm_area_struct *vma);
void xcf_arena_release(struct xcf_session *s);

#endif /* XCUDA_FRONT_COMMON_H */
