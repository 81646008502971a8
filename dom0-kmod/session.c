// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: SESSION_NEW and SESSION_END from the ring, the handover to a
 * worker (ATTACH, REFUSE, ARENA), the session's request queue, and the
 * worker's read(), write() and release().
 *
 * A request reaches a worker only if it names a LIVE session of the
 * device it came from and passes the header checks below; everything
 * else is answered here at once.  The worker's answers must come in the
 * order it read the requests; the backend sets id, op and flags from its
 * own copy of the request.
 */
#define pr_fmt(fmt) "xcuda-back: " fmt

#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "common.h"

static void xcb_session_release_kref(struct kref *kref)
{
	struct xcb_session *s = container_of(kref, struct xcb_session, kref);

	/* Normally ended by release() or the disconnect already. */
	if (s->arena)
		xcb_arena_free(s->arena);
	kvfree(s->bounce);
	mutex_destroy(&s->read_lock);
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
	/* One response slot per request: the ring bounds what is open. */
	s->max_open = RING_SIZE(&dev->ring);
	s->bounce = kvmalloc_array(s->max_open, sizeof(*s->bounce),
				   GFP_KERNEL);
	if (!s->bounce) {
		kfree(s);
		return NULL;
	}
	kref_init(&s->kref);
	kref_get(&dev->kref);
	s->dev = dev;
	s->conn_gen = dev->conn_gen;
	s->arena_size = size;
	s->state = XCB_S_NEW;
	INIT_LIST_HEAD(&s->pending_node);
	INIT_LIST_HEAD(&s->ev.node);
	INIT_DELAYED_WORK(&s->timeout, xcb_session_timeout);
	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->queue);
	INIT_LIST_HEAD(&s->handed);
	init_waitqueue_head(&s->wq);
	mutex_init(&s->read_lock);
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
 * Answers every request still open with GONE (-ESHUTDOWN) and makes @s
 * DEAD; s->lock held.  Once the connection has ended the answers are
 * simply dropped.
 */
static void xcb_session_kill_locked(struct xcb_session *s)
{
	struct xcb_req *r, *tmp;

	lockdep_assert_held(&s->lock);
	list_splice_tail_init(&s->queue, &s->handed);
	list_for_each_entry_safe(r, tmp, &s->handed, node) {
		list_del(&r->node);
		xcb_answer(s->dev, s->conn_gen, &r->req.hdr, XCUDA_RSPF_GONE,
			   -ESHUTDOWN, NULL, 0);
		kfree(r);
	}
	s->nr_open = 0;
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

/* Ends the grants of @s, once; may sleep. */
static void xcb_session_ungrant(struct xcb_session *s)
{
	struct xcb_arena *a;

	spin_lock(&s->lock);
	a = s->arena;
	s->arena = NULL;
	spin_unlock(&s->lock);
	if (a)
		xcb_arena_free(a);
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

void xcb_session_new(struct xcb_dev *dev, const struct xcuda_request *req)
{
	const struct xcuda_req_hdr *h = &req->hdr;
	struct xcuda_xsession_new_args args;
	struct xcb_session *s;
	u64 size;
	int err;

	if (h->session || h->len != sizeof(args) || h->rsvd ||
	    h->data_off || h->data_len) {
		err = -EINVAL;
		goto answer;
	}
	memcpy(&args, req->args, sizeof(args));
	if (args.flags) {
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
	s->new_id = h->id;
	s->new_flags = h->flags;

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
	s->token = ++xcb_ctl.next_token;
	list_add_tail(&s->pending_node, &xcb_ctl.pending);
	s->ev.ev = (struct xcuda_back_event) {
		.type = XCUDA_BACK_EV_SESSION,
		.session = s->id,
		.domid = dev->domid,
		.devid = dev->devid,
		.arena_size = size,
		.token = s->token,
	};
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

int xcb_session_arena(struct xcb_session *s, u64 addr, u64 size)
{
	struct xcuda_xsession_new_res res = { 0 };
	struct xcb_arena *a;
	int err = 0;

	spin_lock(&s->lock);
	if (s->state == XCB_S_DEAD)
		err = -ESHUTDOWN;
	else if (s->state != XCB_S_ATTACHED || s->arena_busy)
		err = -EBUSY;
	else if (size != s->arena_size || !PAGE_ALIGNED(addr) ||
		 addr + size < addr)
		err = -EINVAL;
	else
		s->arena_busy = true;
	spin_unlock(&s->lock);
	if (err)
		return err;

	/* Slow (pins and grants every page): no lock held. */
	a = xcb_arena_grant(s->dev->domid, addr, size);

	mutex_lock(&xcb_ctl.lock);
	if (!s->new_pending) {
		/* Timed out, refused or disconnected meanwhile. */
		mutex_unlock(&xcb_ctl.lock);
		if (!IS_ERR(a))
			xcb_arena_free(a);
		return -ESHUTDOWN;
	}
	if (IS_ERR(a)) {
		err = PTR_ERR(a);
		/* Undone already; the guest learns why, in short. */
		xcb_session_cancel(s, err == -ENOSPC ? -ENOSPC : -ENOMEM);
		mutex_unlock(&xcb_ctl.lock);
		pr_warn_ratelimited("dom%u/%u: session %#x: arena of %llu bytes failed: %d\n",
				    s->dev->domid, s->dev->devid, s->id, size,
				    err);
		return err;
	}
	res.session = s->id;
	res.dir_ref = a->dir_refs[0];
	res.nr_pages = a->nr_pages;
	res.arena_size = size;
	/* LIVE before the answer: the guest's first request may follow it. */
	spin_lock(&s->lock);
	s->arena = a;
	s->state = XCB_S_LIVE;
	spin_unlock(&s->lock);
	xcb_new_answer(s, 0, &res);
	mutex_unlock(&xcb_ctl.lock);
	pr_info_ratelimited("dom%u/%u: session %#x started, %lu pages\n",
			    s->dev->domid, s->dev->devid, s->id, a->nr_pages);
	return 0;
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
			/* The worker drains the queue, then reads 0. */
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

static bool xcb_session_live(struct xcb_session *s)
{
	bool live;

	spin_lock(&s->lock);
	live = s->state == XCB_S_LIVE;
	spin_unlock(&s->lock);
	return live;
}

static bool xcb_req_ok(const struct xcuda_req_hdr *h, u64 arena_size)
{
	return h->len <= XCUDA_REQ_INLINE && !h->rsvd &&
	       h->op && h->op < XCB_OP_TRANSPORT &&
	       xcuda_extent_ok(h->data_off, h->data_len, arena_size);
}

/*
 * Queues a copy of @req for the worker of @s: 0, or -ESHUTDOWN (not
 * LIVE), -EINVAL (malformed) or -ENOMEM for the caller to answer.
 */
static int xcb_session_queue(struct xcb_session *s,
			     const struct xcuda_request *req)
{
	struct xcb_req *r;
	int err = 0;

	if (!xcb_session_live(s))
		return -ESHUTDOWN;
	if (!xcb_req_ok(&req->hdr, s->arena_size))
		return -EINVAL;
	r = kmalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->req = *req;

	spin_lock(&s->lock);
	if (s->state != XCB_S_LIVE)
		err = -ESHUTDOWN;	/* ended while we allocated */
	else if (s->nr_open >= s->max_open)
		err = -EINVAL;		/* the ring's own bound prevents it */
	if (!err) {
		list_add_tail(&r->node, &s->queue);
		s->nr_open++;
		wake_up(&s->wq);
	}
	spin_unlock(&s->lock);
	if (err)
		kfree(r);
	return err;
}

/*
 * Hands @req to its session's worker, or answers it here with a negative
 * errno: -ESHUTDOWN and GONE when this frontend has no such session (never
 * opened, ended, or its worker died), -EINVAL when malformed, -ENOMEM.
 */
void xcb_session_submit(struct xcb_dev *dev, const struct xcuda_request *req)
{
	const struct xcuda_req_hdr *h = &req->hdr;
	struct xcb_session *s;
	int err = -ESHUTDOWN;

	s = xcb_session_get(dev, h->session);
	if (s) {
		err = xcb_session_queue(s, req);
		xcb_session_put(s);
	}
	if (err)
		xcb_answer(dev, dev->conn_gen, h,
			   err == -ESHUTDOWN ? XCUDA_RSPF_GONE : 0, err,
			   NULL, 0);
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

	/* The guest is gone: its grants go now, not when the worker exits. */
	for (i = 0; i < XCUDA_XEN_MAX_SESSIONS; i++) {
		mutex_lock(&dev->lock);
		s = dev->sessions[i];
		if (s)
			kref_get(&s->kref);
		mutex_unlock(&dev->lock);
		if (s) {
			xcb_session_ungrant(s);
			xcb_session_put(s);
		}
	}
}

/* ------------------------------------------------------------------ */
/* The worker's file                                                   */

static bool xcb_readable(struct xcb_session *s)
{
	bool ret;

	spin_lock(&s->lock);
	ret = !list_empty(&s->queue) || s->state == XCB_S_ENDED ||
	      s->state == XCB_S_DEAD;
	spin_unlock(&s->lock);
	return ret;
}

ssize_t xcb_session_read(struct xcb_session *s, char __user *buf,
			 size_t count, bool nonblock)
{
	size_t max = count / sizeof(struct xcuda_request);
	unsigned int n = 0;
	struct xcb_req *r;
	ssize_t ret;

	if (!max)
		return -EINVAL;
	max = min_t(size_t, max, s->max_open);
	if (mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;

	spin_lock(&s->lock);
	while (list_empty(&s->queue)) {
		if (s->state == XCB_S_ENDED || s->state == XCB_S_DEAD) {
			ret = 0;
			goto unlock;
		}
		if (s->state != XCB_S_LIVE) {
			ret = -EINVAL;	/* no arena yet */
			goto unlock;
		}
		if (nonblock) {
			ret = -EAGAIN;
			goto unlock;
		}
		spin_unlock(&s->lock);
		ret = wait_event_interruptible(s->wq, xcb_readable(s));
		if (ret)
			goto out;
		spin_lock(&s->lock);
	}
	/* Handed in the order read: the answers must come in this order. */
	while (n < max && !list_empty(&s->queue)) {
		r = list_first_entry(&s->queue, struct xcb_req, node);
		s->bounce[n++] = r->req;
		list_move_tail(&r->node, &s->handed);
	}
	spin_unlock(&s->lock);

	ret = n * sizeof(struct xcuda_request);
	if (copy_to_user(buf, s->bounce, ret)) {
		/* Handed but never received: nothing can answer them now. */
		pr_warn_ratelimited("dom%u/%u: session %#x: worker read fault, ending it\n",
				    s->dev->domid, s->dev->devid, s->id);
		xcb_session_kill(s);
		ret = -EFAULT;
	}
	goto out;

unlock:
	spin_unlock(&s->lock);
out:
	mutex_unlock(&s->read_lock);
	return ret;
}

/*
 * Takes whole responses.  Each must answer the oldest handed request
 * (same id and op, len within bounds), or the session is killed.  Once
 * the session is DEAD (frontend gone, killed) writes fail with EPIPE.
 */
ssize_t xcb_session_write(struct xcb_session *s, const char __user *buf,
			  size_t count)
{
	struct xcuda_response rsp;
	struct xcb_req *r;
	size_t done = 0;

	if (!count || count % sizeof(rsp))
		return -EINVAL;
	while (done < count) {
		/* Copied once, then checked: the worker is not trusted. */
		if (copy_from_user(&rsp, buf + done, sizeof(rsp)))
			return done ? done : -EFAULT;

		spin_lock(&s->lock);
		if (s->state == XCB_S_DEAD) {
			spin_unlock(&s->lock);
			return done ? done : -EPIPE;
		}
		r = list_first_entry_or_null(&s->handed, struct xcb_req, node);
		if (!r || r->req.hdr.id != rsp.id ||
		    r->req.hdr.op != rsp.op || rsp.len > XCUDA_RSP_INLINE) {
			xcb_session_kill_locked(s);
			spin_unlock(&s->lock);
			pr_warn_ratelimited("dom%u/%u: session %#x: answer out of order, ending it\n",
					    s->dev->domid, s->dev->devid,
					    s->id);
			return -EINVAL;
		}
		list_del(&r->node);
		s->nr_open--;
		/* The request's flags, and the one a worker may add. */
		rsp.flags = r->req.hdr.flags | (rsp.flags & XCUDA_RSPF_OUTPUT);
		rsp.rsvd = 0;
		/* Under s->lock: a kill cannot answer it a second time. */
		xcb_respond(s->dev, s->conn_gen, &rsp);
		spin_unlock(&s->lock);
		kfree(r);
		done += sizeof(rsp);
	}
	return done;
}

__poll_t xcb_session_poll(struct xcb_session *s, struct file *file,
			  poll_table *wait)
{
	__poll_t mask = 0;

	poll_wait(file, &s->wq, wait);
	spin_lock(&s->lock);
	if (!list_empty(&s->queue))
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (s->state == XCB_S_ENDED || s->state == XCB_S_DEAD)
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLHUP;	/* read() says 0 */
	if (s->state != XCB_S_DEAD)
		mask |= EPOLLOUT | EPOLLWRNORM;
	spin_unlock(&s->lock);
	return mask;
}

/* The worker closed its file (or died): the session is over. */
void xcb_session_release(struct xcb_session *s)
{
	mutex_lock(&xcb_ctl.lock);
	if (s->new_pending)
		xcb_session_cancel(s, -ESHUTDOWN);
	mutex_unlock(&xcb_ctl.lock);

	xcb_session_kill(s);
	xcb_session_ungrant(s);
	pr_info_ratelimited("dom%u/%u: session %#x closed by its worker\n",
			    s->dev->domid, s->dev->devid, s->id);
	/* Its id is free only once nothing of it is left on the ring. */
	xcb_slot_free(s);
	xcb_session_put(s);
}
