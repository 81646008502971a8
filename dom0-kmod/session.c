// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: SESSION_NEW and SESSION_END from the control ring, the
 * handover to a worker (ATTACH, REFUSE, ARENA), the session's doorbell,
 * and the worker's release().
 *
 * A session's requests never pass through here: its worker and the guest
 * process share its data ring, and the worker validates each request it
 * copies out.  This module binds the session's event channel to the
 * worker's eventfds and, when the session dies, marks the shared header
 * page closed and rings the guest.
 *
 * A session's grants are charged to its domain from SESSION_NEW on, and
 * stay charged, with the session's slot, until every one of them has
 * ended: a guest that keeps the pages of an ended session mapped keeps
 * paying for them, so it cannot get more by ending and asking again.
 * Such a session lingers on xcb_reap_list, retried from delayed work.
 */
#define pr_fmt(fmt) "xcuda-back: " fmt

#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/interrupt.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <xen/events.h>

#include "common.h"

/* Retries for sessions whose grants the guest still maps: first, at most. */
#define XCB_REAP_FIRST		(HZ / 10)
#define XCB_REAP_MAX		(8 * HZ)
/* At unload, how long to wait for guests to unmap: 100 ms steps. */
#define XCB_REAP_EXIT_TRIES	100

static void xcb_reap_work(struct work_struct *work);

static DEFINE_MUTEX(xcb_reap_lock);	/* the list and the delay */
static LIST_HEAD(xcb_reap_list);	/* sessions with ->ending */
static unsigned long xcb_reap_delay;
static DECLARE_DELAYED_WORK(xcb_reap_dwork, xcb_reap_work);

static void xcb_session_release_kref(struct kref *kref)
{
	struct xcb_session *s = container_of(kref, struct xcb_session, kref);

	/* release() ended them, or the reap, which holds a reference. */
	if (WARN_ON_ONCE(s->arena))
		xcb_arena_abandon(s->arena);
	if (WARN_ON_ONCE(s->ending))
		xcb_arena_abandon(s->ending);
	if (s->charged)
		xcb_grants_uncharge(s->dev->dom, s->charged);
	xcuda_db_put(&s->db);
	xcb_dev_put(s->dev);
	kfree(s);
}

static void xcb_session_put(struct xcb_session *s)
{
	kref_put(&s->kref, xcb_session_release_kref);
}

static void xcb_session_timeout(struct work_struct *work);

static struct xcb_session *xcb_session_alloc(struct xcb_dev *dev, u64 size)
{
	struct xcb_session *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	s->db.irq = -1;
	kref_init(&s->kref);
	kref_get(&dev->kref);
	s->dev = dev;
	s->conn_gen = dev->conn_gen;
	s->arena_size = size;
	s->state = XCB_S_NEW;
	INIT_LIST_HEAD(&s->pending_node);
	INIT_LIST_HEAD(&s->reap_node);
	INIT_LIST_HEAD(&s->ev.node);
	INIT_DELAYED_WORK(&s->timeout, xcb_session_timeout);
	spin_lock_init(&s->lock);
	init_waitqueue_head(&s->wq);
	return s;
}

/* Gives @s a free slot and its id; dev->lock held. */
static int xcb_slot_insert(struct xcb_dev *dev, struct xcb_session *s)
{
	unsigned int i, slot;

	lockdep_assert_held(&dev->lock);
	if (dev->nr_sessions >= dev->max_sessions)
		return -ENOSPC;
	/* Round robin: a freed id is not seen again soon. */
	for (i = 0; i < XCUDA_XEN_MAX_SESSIONS; i++) {
		slot = (dev->next_slot + i) % XCUDA_XEN_MAX_SESSIONS;
		if (!dev->sessions[slot])
			break;
	}
	if (WARN_ON_ONCE(i == XCUDA_XEN_MAX_SESSIONS))
		return -ENOSPC;
	dev->gen[slot] = (dev->gen[slot] + 1) & XCB_GEN_MASK;
	if (!dev->gen[slot])
		dev->gen[slot] = 1;
	s->slot = slot;
	s->id = slot | dev->gen[slot] << XCB_SLOT_BITS;
	dev->sessions[slot] = s;
	dev->nr_sessions++;
	dev->next_slot = (slot + 1) % XCUDA_XEN_MAX_SESSIONS;
	return 0;
}

/* Frees the id of @s; dev->lock held.  True if it held a slot. */
static bool xcb_slot_remove(struct xcb_dev *dev, struct xcb_session *s)
{
	lockdep_assert_held(&dev->lock);
	if (dev->sessions[s->slot] != s)
		return false;
	dev->sessions[s->slot] = NULL;
	dev->nr_sessions--;
	return true;
}

/* Frees the id of @s and drops the slot's reference. */
static void xcb_slot_free(struct xcb_session *s)
{
	struct xcb_dev *dev = s->dev;
	bool removed;

	mutex_lock(&dev->lock);
	removed = xcb_slot_remove(dev, s);
	mutex_unlock(&dev->lock);
	if (removed)
		xcb_session_put(s);
}

/* The session @id of @dev, with a reference, or NULL. */
static struct xcb_session *xcb_session_get(struct xcb_dev *dev, u32 id)
{
	struct xcb_session *s;

	mutex_lock(&dev->lock);
	s = dev->sessions[id % XCUDA_XEN_MAX_SESSIONS];
	if (s && s->id == id)
		kref_get(&s->kref);
	else
		s = NULL;
	mutex_unlock(&dev->lock);
	return s;
}

/*
 * Tells the guest process that @s is over: the header page says closed,
 * then the doorbell rings, so that it wakes whether it sleeps or spins.
 * s->lock held.
 */
static void xcb_session_tell_locked(struct xcb_session *s)
{
	struct xcuda_data_intf *intf;

	lockdep_assert_held(&s->lock);
	if (!s->arena)
		return;
	intf = kmap_local_page(s->arena->pages[0]);
	WRITE_ONCE(intf->closed, 1);
	kunmap_local(intf);
	if (s->db.irq >= 0) {
		virt_wmb();	/* closed before the event */
		notify_remote_via_irq(s->db.irq);
	}
}

/* Makes @s DEAD and tells both ends; s->lock held. */
static void xcb_session_kill_locked(struct xcb_session *s)
{
	lockdep_assert_held(&s->lock);
	xcb_session_tell_locked(s);
	s->state = XCB_S_DEAD;
	wake_up_all(&s->wq);
}

static void xcb_session_kill(struct xcb_session *s)
{
	spin_lock(&s->lock);
	if (s->state != XCB_S_DEAD)
		xcb_session_kill_locked(s);
	spin_unlock(&s->lock);
}

/* ------------------------------------------------------------------ */
/* Ending the grants                                                   */

/*
 * Every grant of @s's ending arena has ended (or the module goes, and the
 * grant table takes over those left): free it, and the slot if the
 * worker's release() left it to us.
 */
static void xcb_session_ended(struct xcb_session *s)
{
	struct xcb_arena *a;
	bool released;

	spin_lock(&s->lock);
	a = s->ending;
	s->ending = NULL;
	released = s->released;
	spin_unlock(&s->lock);
	if (a->nr_left)
		xcb_arena_abandon(a);
	else
		xcb_arena_free(a);
	if (released)
		xcb_slot_free(s);
}

/*
 * Ends the grants of @s's ending arena, here (@now) or in the reap work at
 * once.  Those the guest still maps keep the session, its slot and its
 * charge until the reap has ended them all.
 */
static void xcb_session_retire(struct xcb_session *s, bool now)
{
	struct xcb_arena *a = s->ending;
	unsigned long left;

	/* Ours alone: an arena is taken off once, under s->lock. */
	if (now) {
		left = xcb_arena_end(a);
		if (!left) {
			xcb_session_ended(s);
			return;
		}
	} else {
		/* Every grant, until the first pass counts: as many as made. */
		left = a->nr_granted + a->nr_dir;
		a->nr_left = left;
	}
	xcb_grants_linger(s->dev->dom, left);
	atomic_inc(&s->dev->nr_lingering);
	kref_get(&s->kref);
	mutex_lock(&xcb_reap_lock);
	list_add_tail(&s->reap_node, &xcb_reap_list);
	xcb_reap_delay = XCB_REAP_FIRST;
	mod_delayed_work(xcb_wq, &xcb_reap_dwork, now ? xcb_reap_delay : 0);
	mutex_unlock(&xcb_reap_lock);
	if (now)
		pr_info_ratelimited("dom%u/%u: session %#x: the guest still maps %lu of its pages; they stay charged to it\n",
				    s->dev->domid, s->dev->devid, s->id, left);
}

/* Ends the grants of @a, an arena of @s that never went live. */
static void xcb_session_drop_arena(struct xcb_session *s, struct xcb_arena *a)
{
	spin_lock(&s->lock);
	s->ending = a;
	spin_unlock(&s->lock);
	xcb_session_retire(s, true);
}

/* Ends the grants of @s, once, here (@now) or in the reap work; may sleep. */
static void xcb_session_ungrant(struct xcb_session *s, bool now)
{
	struct xcb_arena *a;

	spin_lock(&s->lock);
	a = s->arena;
	s->arena = NULL;
	/* From now on the slot stays until its grants have ended. */
	if (a)
		s->ending = a;
	spin_unlock(&s->lock);
	if (a)
		xcb_session_retire(s, now);
}

/*
 * One pass over the lingering sessions: those whose grants have all ended
 * leave.  Returns how many are left.
 */
static unsigned int xcb_reap_pass(void)
{
	struct xcb_session *s, *tmp;
	unsigned long before;
	unsigned int left = 0;
	LIST_HEAD(done);

	mutex_lock(&xcb_reap_lock);
	list_for_each_entry_safe(s, tmp, &xcb_reap_list, reap_node) {
		before = s->ending->nr_left;
		xcb_arena_end(s->ending);
		xcb_grants_linger(s->dev->dom,
				  -(long)(before - s->ending->nr_left));
		if (s->ending->nr_left)
			left++;
		else
			list_move_tail(&s->reap_node, &done);
	}
	mutex_unlock(&xcb_reap_lock);

	list_for_each_entry_safe(s, tmp, &done, reap_node) {
		list_del_init(&s->reap_node);
		atomic_dec(&s->dev->nr_lingering);
		pr_info_ratelimited("dom%u/%u: session %#x: the guest let go of its pages\n",
				    s->dev->domid, s->dev->devid, s->id);
		xcb_session_ended(s);
		xcb_session_put(s);
	}
	return left;
}

static void xcb_reap_work(struct work_struct *work)
{
	if (!xcb_reap_pass())
		return;
	/* A guest that keeps its pages is looked at less and less often. */
	mutex_lock(&xcb_reap_lock);
	xcb_reap_delay = min_t(unsigned long, xcb_reap_delay * 2,
			       XCB_REAP_MAX);
	queue_delayed_work(xcb_wq, &xcb_reap_dwork, xcb_reap_delay);
	mutex_unlock(&xcb_reap_lock);
}

/*
 * The module goes: every device and file is gone, so nothing lingers
 * anew.  Wait a while for the guests to unmap what they still map, then
 * hand the rest to the grant table, which frees each page once its guest
 * has let go (never before).
 */
void xcb_reap_exit(void)
{
	struct xcb_session *s, *tmp;
	unsigned int tries, left;
	LIST_HEAD(abandon);

	cancel_delayed_work_sync(&xcb_reap_dwork);
	for (tries = 0; (left = xcb_reap_pass()); tries++) {
		if (tries == XCB_REAP_EXIT_TRIES)
			break;
		if (!(tries % 20))
			pr_info("waiting for guests to unmap the pages of %u ended sessions\n",
				left);
		msleep(100);
	}
	if (!left)
		return;
	pr_warn("%u ended sessions are still mapped by their guests; the grant table frees their pages once unmapped\n",
		left);
	mutex_lock(&xcb_reap_lock);
	list_splice_init(&xcb_reap_list, &abandon);
	mutex_unlock(&xcb_reap_lock);
	list_for_each_entry_safe(s, tmp, &abandon, reap_node) {
		list_del_init(&s->reap_node);
		atomic_dec(&s->dev->nr_lingering);
		xcb_grants_linger(s->dev->dom, -(long)s->ending->nr_left);
		xcb_session_ended(s);
		xcb_session_put(s);
	}
}

/* ------------------------------------------------------------------ */
/* SESSION_NEW and its completion                                      */

/*
 * Answers the SESSION_NEW of @s (0 and @res, or a negative errno) and
 * takes it off the daemon's lists; xcb_ctl.lock held, new_pending set.
 */
static void xcb_new_answer(struct xcb_session *s, int err,
			   const struct xcuda_xsession_new_res *res)
{
	struct xcuda_req_hdr h = {
		.op = XCUDA_XOP_SESSION_NEW,
		.flags = s->new_flags,
		.id = s->new_id,
	};

	lockdep_assert_held(&xcb_ctl.lock);
	s->new_pending = false;
	list_del_init(&s->pending_node);
	xcb_ctl_unqueue(&s->ev);
	/* Never the last reference: the caller holds one. */
	if (cancel_delayed_work(&s->timeout))
		kref_put(&s->kref, xcb_session_release_kref);
	xcb_answer(s->dev, s->conn_gen, &h, 0, err, res,
		   res ? sizeof(*res) : 0);
}

/*
 * Fails the SESSION_NEW of @s with @err (a negative errno): a NEW session
 * is freed, an ATTACHED one dies and waits for its file's release();
 * xcb_ctl.lock held.
 */
static void xcb_session_cancel(struct xcb_session *s, int err)
{
	bool was_new;

	lockdep_assert_held(&xcb_ctl.lock);
	xcb_new_answer(s, err, NULL);
	spin_lock(&s->lock);
	was_new = s->state == XCB_S_NEW;
	s->state = XCB_S_DEAD;
	wake_up_all(&s->wq);
	spin_unlock(&s->lock);
	pr_info_ratelimited("dom%u/%u: session %#x not started: error %d\n",
			    s->dev->domid, s->dev->devid, s->id, err);
	if (was_new)
		xcb_slot_free(s);
}

static void xcb_session_timeout(struct work_struct *work)
{
	struct xcb_session *s = container_of(to_delayed_work(work),
					     struct xcb_session, timeout);

	mutex_lock(&xcb_ctl.lock);
	if (s->new_pending)
		xcb_session_cancel(s, -ETIMEDOUT);
	mutex_unlock(&xcb_ctl.lock);
	xcb_session_put(s);
}

/*
 * An attach token nobody can guess from the ones seen before: random,
 * nonzero, unlike every pending one.  Under xcb_ctl.lock.
 */
static u64 xcb_new_token(void)
{
	struct xcb_session *s;
	u64 token;

	lockdep_assert_held(&xcb_ctl.lock);
again:
	token = get_random_u64();
	if (!token)
		goto again;
	list_for_each_entry(s, &xcb_ctl.pending, pending_node)
		if (s->token == token)
			goto again;
	return token;
}

void xcb_session_new(struct xcb_dev *dev, const struct xcuda_request *req)
{
	const struct xcuda_req_hdr *h = &req->hdr;
	struct xcuda_xsession_new_args args;
	unsigned long grants;
	struct xcb_session *s;
	u64 size;
	int err;

	if (h->session || h->len != sizeof(args) || h->rsvd ||
	    h->data_off || h->data_len) {
		err = -EINVAL;
		goto answer;
	}
	memcpy(&args, req->args, sizeof(args));
	/* Port 0 is never bound; the bind checks the rest of it. */
	if (args.flags || args.rsvd || !args.evtchn ||
	    args.ring_order > XCUDA_MAX_RING_ORDER) {
		err = -EINVAL;
		goto answer;
	}
	size = args.arena_size ? args.arena_size : XCUDA_XEN_DEF_ARENA;
	size = min(size, dev->max_arena);
	size &= ~(u64)(XCUDA_PAGE_SIZE - 1);
	if (!size) {
		err = -EINVAL;
		goto answer;
	}

	s = xcb_session_alloc(dev, size);
	if (!s) {
		err = -ENOMEM;
		goto answer;
	}
	/* Every grant it may make, until they have all ended. */
	grants = xcb_arena_grants(size + XCUDA_PAGE_SIZE *
				  (u64)XCUDA_XEN_DATA_PAGES(args.ring_order));
	err = xcb_grants_charge(dev->dom, grants);
	if (err) {
		xcb_session_put(s);
		goto answer;
	}
	s->charged = grants;
	s->new_id = h->id;
	s->new_flags = h->flags;
	s->port = args.evtchn;
	s->ring_order = args.ring_order;

	mutex_lock(&xcb_ctl.lock);
	mutex_lock(&dev->lock);
	err = xcb_slot_insert(dev, s);
	if (!err && !xcb_ctl.claimed) {
		xcb_slot_remove(dev, s);
		err = -EHOSTDOWN;
	}
	mutex_unlock(&dev->lock);
	if (err) {
		mutex_unlock(&xcb_ctl.lock);
		xcb_session_put(s);
		goto answer;
	}
	/* The reference from alloc is now the slot's. */
	s->new_pending = true;
	s->token = xcb_new_token();
	list_add_tail(&s->pending_node, &xcb_ctl.pending);
	s->ev.ev = (struct xcuda_back_event) {
		.type = XCUDA_BACK_EV_SESSION,
		.session = s->id,
		.domid = dev->domid,
		.devid = dev->devid,
		.arena_size = size,
		.token = s->token,
		.ring_order = s->ring_order,
		.gpumem = dev->max_gpumem,
	};
	/* The same size, NUL-terminated and zero-padded since probe. */
	memcpy(s->ev.ev.upstream, dev->upstream, sizeof(dev->upstream));
	xcb_ctl_queue(&s->ev);
	kref_get(&s->kref);
	queue_delayed_work(xcb_wq, &s->timeout, XCB_SESSION_TIMEOUT);
	/* The daemon may end it as soon as the lock goes: log before. */
	pr_info_ratelimited("dom%u/%u: session %#x requested, arena %llu bytes\n",
			    dev->domid, dev->devid, s->id, size);
	mutex_unlock(&xcb_ctl.lock);
	return;

answer:
	xcb_answer(dev, dev->conn_gen, h, 0, err, NULL, 0);
}

int xcb_session_attach(struct xcb_file *f, u64 token)
{
	struct xcb_session *s;
	int err = -ENOENT;

	mutex_lock(&xcb_ctl.lock);
	if (f->kind != XCB_F_FRESH) {
		err = -EBUSY;
		goto out;
	}
	list_for_each_entry(s, &xcb_ctl.pending, pending_node) {
		if (s->token != token)
			continue;
		spin_lock(&s->lock);
		if (s->state == XCB_S_NEW) {
			s->state = XCB_S_ATTACHED;
			err = 0;
		} else {
			err = -EBUSY;
		}
		spin_unlock(&s->lock);
		if (err)
			break;
		/* The daemon has the event: never hand it out again. */
		xcb_ctl_unqueue(&s->ev);
		kref_get(&s->kref);
		f->sess = s;
		/* read/write/poll look at kind without the lock. */
		smp_store_release(&f->kind, XCB_F_SESSION);
		break;
	}
out:
	mutex_unlock(&xcb_ctl.lock);
	return err;
}

/* xcudad refuses a SESSION_NEW: the guest gets @err, a negative errno. */
int xcb_session_refuse(u64 token, int err)
{
	struct xcb_session *s;
	int ret = -ENOENT;

	mutex_lock(&xcb_ctl.lock);
	list_for_each_entry(s, &xcb_ctl.pending, pending_node) {
		if (s->token == token) {
			xcb_session_cancel(s, err);
			ret = 0;
			break;
		}
	}
	mutex_unlock(&xcb_ctl.lock);
	return ret;
}

/* The control file closed: nobody will attach the NEW sessions. */
void xcb_ctl_cancel_new(void)
{
	struct xcb_session *s, *tmp;

	lockdep_assert_held(&xcb_ctl.lock);
	list_for_each_entry_safe(s, tmp, &xcb_ctl.pending, pending_node) {
		/* NEW -> ATTACHED happens under xcb_ctl.lock only. */
		if (s->state == XCB_S_NEW)
			xcb_session_cancel(s, -ESHUTDOWN);
	}
}

/*
 * Dom0's end of the doorbell: the guest rang, wake the worker.  An event
 * while the worker has not read the last one is spurious, so that a
 * guest flooding its channel is held back (xcuda/xen_doorbell.h).
 */
static irqreturn_t xcb_session_irq(int irq, void *arg)
{
	struct xcb_session *s = arg;

	xen_irq_lateeoi(irq, xcuda_db_signal(&s->db) ?
			XEN_EOI_FLAG_SPURIOUS : 0);
	return IRQ_HANDLED;
}

/*
 * Binds the guest's port of @s on the connection the session came from;
 * -ESHUTDOWN if that one has ended.  The worker's eventfds are taken.
 */
static int xcb_session_bind(struct xcb_session *s)
{
	struct xcb_dev *dev = s->dev;
	int irq = -ESHUTDOWN;

	mutex_lock(&dev->conn_lock);
	if (dev->xdev && dev->ring_va && dev->conn_gen == s->conn_gen)
		irq = bind_interdomain_evtchn_to_irqhandler_lateeoi(dev->xdev,
								    s->port,
								    xcb_session_irq,
								    0,
								    "xcuda-session",
								    s);
	mutex_unlock(&dev->conn_lock);
	if (irq < 0)
		return irq;
	spin_lock(&s->lock);
	s->db.irq = irq;
	spin_unlock(&s->lock);
	return 0;
}

/* Undoes xcb_session_bind() and the eventfds: the worker is done. */
static void xcb_session_unbind(struct xcb_session *s)
{
	int irq;

	xcuda_db_disarm(&s->db);
	spin_lock(&s->lock);
	irq = s->db.irq;
	s->db.irq = -1;
	spin_unlock(&s->lock);
	if (irq >= 0)
		unbind_from_irqhandler(irq, s);
	xcuda_db_put(&s->db);
}

int xcb_session_arena(struct xcb_session *s,
		      const struct xcuda_back_arena *ar)
{
	struct xcuda_xsession_new_res res = { 0 };
	u64 size = ar->size;
	struct xcb_arena *a;
	int err = 0;

	spin_lock(&s->lock);
	if (s->state == XCB_S_DEAD)
		err = -ESHUTDOWN;
	else if (s->state != XCB_S_ATTACHED || s->arena_busy)
		err = -EBUSY;
	else if (size != s->arena_size +
			 (u64)XCUDA_XEN_DATA_PAGES(s->ring_order) *
			 XCUDA_PAGE_SIZE ||
		 !PAGE_ALIGNED(ar->addr) || ar->addr + size < ar->addr)
		err = -EINVAL;
	else
		s->arena_busy = true;
	spin_unlock(&s->lock);
	if (err)
		return err;

	/* Once: a second ARENA is -EBUSY above, whatever became of this. */
	err = xcuda_db_get(&s->db, ar->bell_fd, ar->kick_fd);
	if (err)
		goto fail_cancel;
	err = xcb_session_bind(s);
	if (err)
		goto fail_cancel;
	err = xcuda_db_arm(&s->db, ar->kick_fd);
	if (err)
		goto fail_cancel;

	/* Slow (pins and grants every page): no lock held. */
	a = xcb_arena_alloc(size);
	if (IS_ERR(a))
		err = PTR_ERR(a);
	else
		err = xcb_arena_grant(a, s->dev->domid, ar->addr);

	mutex_lock(&xcb_ctl.lock);
	if (!s->new_pending) {
		/* Timed out, refused or disconnected meanwhile. */
		mutex_unlock(&xcb_ctl.lock);
		err = -ESHUTDOWN;
		goto fail_drop;
	}
	if (err) {
		/* The guest learns why, in short. */
		xcb_session_cancel(s, err == -ENOSPC ? -ENOSPC : -ENOMEM);
		mutex_unlock(&xcb_ctl.lock);
		pr_warn_ratelimited("dom%u/%u: session %#x: %llu shared bytes failed: %d\n",
				    s->dev->domid, s->dev->devid, s->id, size,
				    err);
		goto fail_drop;
	}
	res.session = s->id;
	res.dir_ref = a->dir_refs[0];
	res.nr_pages = a->nr_pages;
	res.ring_order = s->ring_order;
	res.arena_size = s->arena_size;
	/* LIVE before the answer: the guest may ring as soon as it has it. */
	spin_lock(&s->lock);
	s->arena = a;
	s->state = XCB_S_LIVE;
	spin_unlock(&s->lock);
	xcb_new_answer(s, 0, &res);
	mutex_unlock(&xcb_ctl.lock);
	pr_info_ratelimited("dom%u/%u: session %#x started, %lu pages\n",
			    s->dev->domid, s->dev->devid, s->id, a->nr_pages);
	return 0;

fail_drop:
	/* Whatever was granted ends as a live arena's grants do. */
	if (!IS_ERR(a))
		xcb_session_drop_arena(s, a);
	return err;

fail_cancel:
	/* The guest's wait ends now; the worker's release() unbinds. */
	mutex_lock(&xcb_ctl.lock);
	if (s->new_pending)
		xcb_session_cancel(s, err == -ESHUTDOWN ? -ESHUTDOWN : -EINVAL);
	mutex_unlock(&xcb_ctl.lock);
	return err;
}

/* ------------------------------------------------------------------ */
/* Requests from the ring                                              */

void xcb_session_end_req(struct xcb_dev *dev, const struct xcuda_request *req)
{
	const struct xcuda_req_hdr *h = &req->hdr;
	struct xcb_session *s;
	int err = 0;

	if (h->rsvd) {
		xcb_answer(dev, dev->conn_gen, h, 0, -EINVAL, NULL, 0);
		return;
	}
	s = xcb_session_get(dev, h->session);
	if (s) {
		spin_lock(&s->lock);
		if (s->state == XCB_S_LIVE) {
			/* The worker sees EPOLLHUP and exits. */
			s->state = XCB_S_ENDED;
			wake_up_all(&s->wq);
		} else {
			err = -ENOENT;
		}
		spin_unlock(&s->lock);
	} else {
		err = -ENOENT;
	}
	xcb_answer(dev, dev->conn_gen, h, 0, err, NULL, 0);
	if (s) {
		if (!err)
			pr_info_ratelimited("dom%u/%u: session %#x ended by the guest\n",
					    dev->domid, dev->devid, s->id);
		xcb_session_put(s);
	}
}

/*
 * The connection of @dev ended (dev->connected is false, so nothing below
 * reaches the ring): fail the SESSION_NEWs in progress, kill every
 * session, end their grants, and tell xcudad.
 */
void xcb_dev_end_sessions(struct xcb_dev *dev)
{
	struct xcb_session *s, *tmp;
	struct xcb_event *e;
	unsigned int i;

	mutex_lock(&xcb_ctl.lock);
	list_for_each_entry_safe(s, tmp, &xcb_ctl.pending, pending_node) {
		if (s->dev == dev)
			xcb_session_cancel(s, -ESHUTDOWN);
	}

	mutex_lock(&dev->lock);
	for (i = 0; i < XCUDA_XEN_MAX_SESSIONS; i++) {
		s = dev->sessions[i];
		if (s)
			xcb_session_kill(s);
	}
	mutex_unlock(&dev->lock);

	if (xcb_ctl.claimed && !dev->gone_sent) {
		e = kzalloc(sizeof(*e), GFP_KERNEL);
		if (e) {
			INIT_LIST_HEAD(&e->node);
			e->ev.type = XCUDA_BACK_EV_GONE;
			e->ev.domid = dev->domid;
			e->ev.devid = dev->devid;
			xcb_ctl_queue(e);
		}
	}
	dev->gone_sent = true;
	mutex_unlock(&xcb_ctl.lock);

	/*
	 * The guest is gone: its grants go now, not when the worker exits,
	 * but in the reap work: this is the xenwatch thread, which every
	 * backend of Dom0 waits on, and an arena may be a million grants.
	 */
	for (i = 0; i < XCUDA_XEN_MAX_SESSIONS; i++) {
		mutex_lock(&dev->lock);
		s = dev->sessions[i];
		if (s)
			kref_get(&s->kref);
		mutex_unlock(&dev->lock);
		if (s) {
			xcb_session_ungrant(s, false);
			xcb_session_put(s);
		}
	}
}

/* ------------------------------------------------------------------ */
/* The worker's file                                                   */

__poll_t xcb_session_poll(struct xcb_session *s, struct file *file,
			  poll_table *wait)
{
	__poll_t mask = 0;

	poll_wait(file, &s->wq, wait);
	spin_lock(&s->lock);
	/* Never EPOLLIN: the worker's bell says when requests come. */
	if (s->state == XCB_S_ENDED || s->state == XCB_S_DEAD)
		mask |= EPOLLHUP;
	spin_unlock(&s->lock);
	return mask;
}

/* The worker closed its file (or died): the session is over. */
void xcb_session_release(struct xcb_session *s)
{
	bool lingering;

	mutex_lock(&xcb_ctl.lock);
	if (s->new_pending)
		xcb_session_cancel(s, -ESHUTDOWN);
	mutex_unlock(&xcb_ctl.lock);

	xcb_session_kill(s);
	xcb_session_unbind(s);
	xcb_session_ungrant(s, true);
	spin_lock(&s->lock);
	s->released = true;
	lingering = !!s->ending;
	spin_unlock(&s->lock);
	pr_info_ratelimited("dom%u/%u: session %#x closed by its worker\n",
			    s->dev->domid, s->dev->devid, s->id);
	/*
	 * Its id is free only once nothing of it is left on the ring, and
	 * its grants have ended: else the reap frees it.
	 */
	if (!lingering)
		xcb_slot_free(s);
	xcb_session_put(s);
}
