// SPDX-License-Identifier: GPL-2.0
/*
 * xcuda-front: /dev/xcuda.  Every open file is one session: XCUDA_IOC_OPEN
 * gives it an event channel of its own, bridged to the process's two
 * eventfds, and asks the backend for it; mmap() then maps its shared
 * pages (header, data ring, arena).  The session's calls go over that
 * ring, never through this driver.  Closing the file ends the session in
 * the backend.
 */
#define pr_fmt(fmt) "xcuda-front: " fmt

#include <linux/err.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <xen/events.h>
#include <xen/interface/event_channel.h>
#include <asm/xen/hypercall.h>

#include "common.h"

static int xcf_open(struct inode *inode, struct file *file)
{
	struct xcf_session *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	mutex_init(&s->lock);
	mutex_init(&s->arena.lock);
	INIT_LIST_HEAD(&s->node);
	init_waitqueue_head(&s->rq);
	s->db.irq = -1;
	s->state = XCF_S_NEW;
	file->private_data = s;
	return nonseekable_open(inode, file);
}

/*
 * Dom0 rang the session's doorbell: wake the process.  Bound late EOI
 * like the control channel; an event while the process has not read the
 * last one is spurious (xcuda/xen_doorbell.h), so that a Dom0 flooding
 * the channel is held back.
 */
static irqreturn_t xcf_session_irq(int irq, void *arg)
{
	struct xcf_session *s = arg;

	xen_irq_lateeoi(irq, xcuda_db_signal(&s->db) ?
			XEN_EOI_FLAG_SPURIOUS : 0);
	return IRQ_HANDLED;
}

/*
 * An unbound port for the backend's domain, bound here: the session's
 * doorbell.  Not xenbus_alloc_evtchn(): a failure is this session's,
 * not the device's.  Unbinding the irq closes the port.
 */
static int xcf_session_bind(struct xcf_session *s, domid_t remote,
			    evtchn_port_t *port)
{
	struct evtchn_alloc_unbound alloc = {
		.dom = DOMID_SELF,
		.remote_dom = remote,
	};
	struct evtchn_close close;
	int err, irq;

	err = HYPERVISOR_event_channel_op(EVTCHNOP_alloc_unbound, &alloc);
	if (err)
		return err;
	irq = bind_evtchn_to_irqhandler_lateeoi(alloc.port, xcf_session_irq, 0,
						"xcuda-session", s);
	if (irq < 0) {
		close.port = alloc.port;
		if (HYPERVISOR_event_channel_op(EVTCHNOP_close, &close))
			pr_warn_ratelimited("cannot close port %u\n",
					    alloc.port);
		return irq;
	}
	s->db.irq = irq;
	*port = alloc.port;
	return 0;
}

/* Undoes the doorbell: no event is sent, then none is taken. */
static void xcf_session_unbind(struct xcf_session *s)
{
	xcuda_db_disarm(&s->db);
	if (s->db.irq >= 0)
		unbind_from_irqhandler(s->db.irq, s);
	s->db.irq = -1;
	xcuda_db_put(&s->db);
}

/*
 * Checks the answer to SESSION_NEW.  The backend answers an error with a
 * negative errno as the status, which comes back as it is; anything
 * malformed is -EPROTO, with res->session telling the caller whether the
 * backend created something to end.
 */
static int xcf_check_new(const struct xcuda_response *rsp, u64 asked,
			 u32 order, struct xcuda_xsession_new_res *res)
{
	memset(res, 0, sizeof(*res));
	if (rsp->status) {
		/* Only user-visible errno values (not -ERESTARTSYS & co). */
		if (rsp->status < 0 && rsp->status > -ERESTARTSYS)
			return rsp->status;
		return -EPROTO;
	}
	if (rsp->len < sizeof(*res))
		return -EPROTO;
	memcpy(res, rsp->out, sizeof(*res));
	if (!res->session)
		return -EPROTO;
	if (!res->arena_size || res->arena_size % XCUDA_PAGE_SIZE ||
	    res->arena_size > XCUDA_XEN_MAX_ARENA ||
	    (asked && res->arena_size > asked) || res->ring_order > order ||
	    res->nr_pages != XCUDA_XEN_DATA_PAGES(res->ring_order) +
			     res->arena_size / XCUDA_PAGE_SIZE)
		return -EPROTO;
	return 0;
}

/* Ends a session the OPEN ioctl could not use. */
static void xcf_end_unused(u32 session, u64 epoch)
{
	struct xcf_end *e = kmalloc(sizeof(*e), GFP_KERNEL);

	spin_lock_irq(&xcf.lock);
	if (xcf.epoch == epoch) {
		xcf_queue_end_locked(session, e);
		e = NULL;
	}
	spin_unlock_irq(&xcf.lock);
	kfree(e);
}

static long xcf_ioc_open(struct xcf_session *s, void __user *arg)
{
	struct xcuda_xsession_new_args a = { 0 };
	struct xcuda_xsession_new_res res;
	struct xcuda_request req = { 0 };
	struct xcf_waiter w = { 0 };
	struct xcuda_ioc_open op;
	evtchn_port_t port;
	domid_t domid;
	u32 order;
	u64 epoch;
	long left;
	int err;

	if (copy_from_user(&op, arg, sizeof(op)))
		return -EFAULT;
	order = op.ring_order ? op.ring_order : XCUDA_XEN_DEF_DATA_ORDER;
	if (op.arena_size % XCUDA_PAGE_SIZE ||
	    op.arena_size > XCUDA_XEN_MAX_ARENA ||
	    order > XCUDA_MAX_RING_ORDER || op.rsvd)
		return -EINVAL;

	mutex_lock(&s->lock);
	if (s->state != XCF_S_NEW) {
		err = -EBUSY;
		goto out;
	}
	err = xcuda_db_get(&s->db, op.bell_fd, op.kick_fd);
	if (err)
		goto out;

	spin_lock_irq(&xcf.lock);
	err = xcf.connected ? 0 : -ENODEV;
	domid = xcf.domid;
	spin_unlock_irq(&xcf.lock);
	if (!err)
		err = xcf_session_bind(s, domid, &port);
	if (err)
		goto out_db;

	a.arena_size = op.arena_size;
	a.evtchn = port;
	a.ring_order = order;
	req.hdr.op = XCUDA_XOP_SESSION_NEW;
	req.hdr.len = sizeof(a);
	memcpy(req.args, &a, sizeof(a));

	/*
	 * One deadline for room and answer alike: a backend that answers
	 * nothing keeps every slot it was given, and the ring then never
	 * has room again.
	 */
	spin_lock_irq(&xcf.lock);
	left = wait_event_interruptible_lock_irq_timeout(xcf.ring_wq,
							 !xcf.connected ||
							 xcf_room_locked(),
							 xcf.lock,
							 XCF_OPEN_TIMEOUT);
	err = left < 0 ? (int)left : 0;
	if (!left) {
		pr_warn_ratelimited("no room on the control ring for %u s; is the backend answering?\n",
				    XCF_OPEN_TIMEOUT / HZ);
		err = -ETIMEDOUT;
	}
	/* A new connection may be to another domain: the port is not. */
	if (!err && (!xcf.connected || xcf.domid != domid))
		err = -ENODEV;
	if (err) {
		spin_unlock_irq(&xcf.lock);
		goto out_db;
	}
	epoch = xcf.epoch;
	xcf_post_locked(&req, XCF_SH_NEW, &w);
	xcf_kick_locked();
	left = wait_event_interruptible_lock_irq_timeout(xcf.open_wq, w.done,
							 xcf.lock, left);
	if (!w.done) {
		/* A late success is ended by the ring work. */
		xcf_forget_waiter_locked(&w);
		spin_unlock_irq(&xcf.lock);
		err = left < 0 ? (int)left : -ETIMEDOUT;
		if (err == -ETIMEDOUT)
			pr_warn_ratelimited("SESSION_NEW not answered in %u s\n",
					    XCF_OPEN_TIMEOUT / HZ);
		goto out_db;
	}
	spin_unlock_irq(&xcf.lock);
	if (w.err) {
		err = w.err;
		goto out_db;
	}

	err = xcf_check_new(&w.rsp, op.arena_size, order, &res);
	if (err) {
		if (err == -EPROTO) {
			pr_warn_ratelimited("malformed SESSION_NEW answer (status %d)\n",
					    w.rsp.status);
			if (res.session)
				goto out_end;
		}
		goto out_db;
	}

	s->domid = domid;
	s->refs = xcf_arena_fetch(domid, res.dir_ref, res.nr_pages);
	if (IS_ERR(s->refs)) {
		err = PTR_ERR(s->refs);
		s->refs = NULL;
		goto out_end;
	}
	s->nr_pages = res.nr_pages;
	/* Only now may the process ring Dom0. */
	err = xcuda_db_arm(&s->db, op.kick_fd);
	if (err) {
		xcf_arena_release(s);
		goto out_end;
	}

	spin_lock_irq(&xcf.lock);
	if (xcf.epoch != epoch) {
		/* The backend went away meanwhile, with the session. */
		spin_unlock_irq(&xcf.lock);
		xcf_arena_release(s);
		err = -ENODEV;
		goto out_db;
	}
	s->id = res.session;
	s->map_size = (u64)res.nr_pages * XCUDA_PAGE_SIZE;
	s->epoch = epoch;
	list_add_tail(&s->node, &xcf.sessions);
	s->state = XCF_S_OPEN;
	spin_unlock_irq(&xcf.lock);

	op.arena_size = res.arena_size;
	op.map_size = s->map_size;
	op.session = s->id;
	op.ring_order = res.ring_order;
	op.version = XCUDA_XEN_VERSION;
	mutex_unlock(&s->lock);
	/* The session stays even if this fails; release ends it. */
	if (copy_to_user(arg, &op, sizeof(op)))
		return -EFAULT;
	return 0;

out_end:
	xcf_end_unused(res.session, epoch);
out_db:
	xcf_session_unbind(s);
out:
	mutex_unlock(&s->lock);
	return err;
}

static long xcf_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct xcf_session *s = file->private_data;

	switch (cmd) {
	case XCUDA_IOC_OPEN:
		return xcf_ioc_open(s, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

static __poll_t xcf_poll(struct file *file, poll_table *wait)
{
	struct xcf_session *s = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &s->rq, wait);
	spin_lock_irq(&xcf.lock);
	/* Never EPOLLIN: nothing is read here; the bell says that. */
	if (s->state != XCF_S_OPEN)
		mask = EPOLLERR;
	else if (s->gone)
		mask = EPOLLHUP | EPOLLERR;
	spin_unlock_irq(&xcf.lock);
	return mask;
}

/*
 * The last reference: no VMA of the shared pages is left.  Their grants
 * are all unmapped (a failed mmap() may have left some) before the
 * session ends.
 */
static int xcf_release(struct inode *inode, struct file *file)
{
	struct xcf_session *s = file->private_data;
	struct xcf_end *e = NULL;

	xcf_session_unbind(s);
	xcf_arena_release(s);
	if (s->state == XCF_S_OPEN)
		e = kmalloc(sizeof(*e), GFP_KERNEL);

	spin_lock_irq(&xcf.lock);
	if (s->state == XCF_S_OPEN) {
		list_del_init(&s->node);
		if (xcf.epoch == s->epoch) {
			xcf_queue_end_locked(s->id, e);
			e = NULL;
		}
	}
	spin_unlock_irq(&xcf.lock);
	kfree(e);
	kfree(s);
	return 0;
}

static const struct file_operations xcf_fops = {
	.owner = THIS_MODULE,
	.open = xcf_open,
	.release = xcf_release,
	.poll = xcf_poll,
	.unlocked_ioctl = xcf_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = xcf_mmap,
	.llseek = no_llseek,
};

/* Access control is the guest administrator's, through udev or chmod. */
struct miscdevice xcf_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "xcuda",
	.fops = &xcf_fops,
	.mode = 0666,
};
