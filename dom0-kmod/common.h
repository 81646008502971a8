/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xcuda-back: private declarations shared by the module's files.  The
 * lifetimes and the lock order are described at the top of main.c.
 */
#ifndef XCUDA_BACK_COMMON_H
#define XCUDA_BACK_COMMON_H

#include <linux/atomic.h>
#include <linux/irqreturn.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <xen/grant_table.h>
#include <xen/xenbus.h>

#include "xcuda/proto.h"
#include "xcuda/xen.h"
#include "xcuda/xen_doorbell.h"

/* Opcodes from here on belong to the transport, never to a worker. */
#define XCB_OP_TRANSPORT	0xff00

/* A SESSION_NEW not completed by then is answered -ETIMEDOUT. */
#define XCB_SESSION_TIMEOUT	(30 * HZ)

/* Session ids: slot | generation << XCB_SLOT_BITS, never 0. */
#define XCB_SLOT_BITS		8
#define XCB_GEN_MASK		0xffffffu

extern struct workqueue_struct *xcb_wq;

/*
 * What one guest domain holds in Dom0's grant table through this module,
 * shared by its devices (arena.c); under xcb_grants_lock.
 */
struct xcb_domain {
	struct list_head node;
	unsigned int users;		/* its devices */
	domid_t domid;
	unsigned long grants;		/* charged: live and lingering */
	unsigned long lingering;	/* of ended sessions, still mapped */
};

/* One xenbus device: one frontend, one ring, its sessions. */
struct xcb_dev {
	struct kref kref;		/* probe's, and one per session */
	struct xenbus_device *xdev;	/* NULL once removed */
	domid_t domid;
	struct xcb_domain *dom;		/* its grant budget */
	atomic_t nr_lingering;		/* ended sessions, grants mapped */
	unsigned int devid;
	unsigned int max_sessions;
	u64 max_arena;
	/* The toolstack's upstream node, checked; "" when none. */
	char upstream[sizeof_field(struct xcuda_back_event, upstream)];

	struct mutex conn_lock;		/* connect vs. disconnect */
	void *ring_va;			/* mapped ring, under conn_lock */

	spinlock_t ring_lock;		/* responses; fields below */
	struct xcuda_back_ring ring;	/* rsp side; req side: work only */
	bool connected;			/* responses may be written */
	bool ring_blocked;		/* work waits for a free slot */
	u32 conn_gen;			/* bumped by every connect */
	int irq;

	unsigned long flags;		/* XCB_EOI_PENDING */
	struct work_struct ring_work;
	unsigned int work_done;		/* requests since last EOI (work) */

	struct mutex lock;		/* the session table below */
	struct xcb_session *sessions[XCUDA_XEN_MAX_SESSIONS];
	u32 gen[XCUDA_XEN_MAX_SESSIONS];
	unsigned int nr_sessions;
	unsigned int next_slot;
	bool gone_sent;			/* under xcb_ctl.lock */
};

#define XCB_EOI_PENDING		0

enum xcb_state {
	XCB_S_NEW,		/* event queued for xcudad; no file yet */
	XCB_S_ATTACHED,		/* a file holds it; waiting for the arena */
	XCB_S_LIVE,		/* its data ring runs */
	XCB_S_ENDED,		/* the guest ended it; the worker will exit */
	XCB_S_DEAD,		/* killed: the guest was told it is over */
};

/* The worker's pinned, granted arena and its grant directory. */
struct xcb_arena {
	unsigned long nr_pages;
	unsigned long nr_pinned;
	unsigned long nr_granted;
	struct page **pages;
	grant_ref_t *refs;
	unsigned long nr_left;		/* grants xcb_arena_end() left */
	unsigned int nr_dir;
	struct page **dir_pages;
	grant_ref_t *dir_refs;		/* 0: not granted, or ended */
};

struct xcb_event {
	struct list_head node;
	struct xcuda_back_event ev;
};

struct xcb_session {
	struct kref kref;	/* slot's, file's, timeout's, lookups' */
	struct xcb_dev *dev;	/* holds a reference */
	u32 id;
	u32 conn_gen;		/* the connection its answers belong to */
	unsigned int slot;
	u64 arena_size;
	u32 ring_order;		/* data ring: 1 << ring_order pages */
	evtchn_port_t port;	/* the frontend's end of its doorbell */
	unsigned long charged;	/* grants, charged to dev->dom */
	struct list_head reap_node;	/* xcb_reap.list while lingering */

	/* Under xcb_ctl.lock. */
	bool new_pending;	/* SESSION_NEW not answered yet */
	u64 new_id;
	u16 new_flags;
	u64 token;
	struct list_head pending_node;	/* xcb_ctl.pending */
	struct xcb_event ev;		/* SESSION, on xcb_ctl.events */
	struct delayed_work timeout;

	spinlock_t lock;	/* state, arena pointer, db.irq */
	enum xcb_state state;
	bool arena_busy;
	bool released;		/* the worker's file is closed */
	struct xcb_arena *arena;
	/* Taken off: its grants end, and the slot stays, until it is NULL. */
	struct xcb_arena *ending;
	wait_queue_head_t wq;	/* poll: the session's end */

	/* The worker's eventfds; bound from ARENA to release(). */
	struct xcuda_db db;
};

/* The daemon's side: control file, its events, unanswered SESSION_NEWs. */
struct xcb_ctl {
	struct mutex lock;		/* everything below */
	bool claimed;			/* a control file exists */
	struct list_head events;
	unsigned int nr_events;		/* also read without the lock */
	unsigned int nr_gone;
	struct list_head pending;	/* sessions with new_pending */
	wait_queue_head_t wq;
};

extern struct xcb_ctl xcb_ctl;

enum xcb_file_kind {
	XCB_F_FRESH,
	XCB_F_CONTROL,
	XCB_F_SESSION,
};

struct xcb_file {
	int kind;			/* written under xcb_ctl.lock */
	struct xcb_session *sess;	/* set before kind = SESSION */
};

/* main.c */
void xcb_dev_put(struct xcb_dev *dev);

/* ring.c */
irqreturn_t xcb_ring_irq(int irq, void *arg);
void xcb_ring_work(struct work_struct *work);
void xcb_respond(struct xcb_dev *dev, u32 gen,
		 const struct xcuda_response *rsp);
void xcb_answer(struct xcb_dev *dev, u32 gen, const struct xcuda_req_hdr *h,
		u16 flags, s32 status, const void *out, u32 len);

/* xenbus.c */
int xcb_xenbus_register(void);
void xcb_xenbus_unregister(void);

/* session.c */
void xcb_session_new(struct xcb_dev *dev, const struct xcuda_request *req);
void xcb_session_end_req(struct xcb_dev *dev,
			 const struct xcuda_request *req);
void xcb_dev_end_sessions(struct xcb_dev *dev);
int xcb_session_attach(struct xcb_file *f, u64 token);
int xcb_session_refuse(u64 token, int err);
int xcb_session_arena(struct xcb_session *s,
		      const struct xcuda_back_arena *ar);
__poll_t xcb_session_poll(struct xcb_session *s, struct file *file,
			  poll_table *wait);
void xcb_session_release(struct xcb_session *s);
void xcb_ctl_cancel_new(void);
void xcb_reap_exit(void);

/* arena.c */
void xcb_grants_init(void);
struct xcb_domain *xcb_domain_get(domid_t domid);
void xcb_domain_put(struct xcb_domain *d);
int xcb_grants_charge(struct xcb_domain *d, unsigned long n);
void xcb_grants_uncharge(struct xcb_domain *d, unsigned long n);
void xcb_grants_linger(struct xcb_domain *d, long delta);
void xcb_grants_read(struct xcb_domain *d, unsigned long *held,
		     unsigned long *lingering);
unsigned long xcb_arena_grants(u64 size);
struct xcb_arena *xcb_arena_alloc(u64 size);
int xcb_arena_grant(struct xcb_arena *a, domid_t domid, u64 addr);
unsigned long xcb_arena_end(struct xcb_arena *a);
void xcb_arena_abandon(struct xcb_arena *a);
void xcb_arena_free(struct xcb_arena *a);

/* chardev.c */
int xcb_chardev_register(void);
void xcb_chardev_unregister(void);
void xcb_ctl_queue(struct xcb_event *e);
void xcb_ctl_unqueue(struct xcb_event *e);

#endif /* XCUDA_BACK_COMMON_H */
