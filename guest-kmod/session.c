// SPDX-License-Identifier: GPL-2.0
/*
 * xcuda-front: /dev/xcuda.  Every open file is one session: XCUDA_IOC_OPEN
 * asks the backend for it, mmap() maps its arena, XCUDA_IOC_SUBMIT posts
 * requests and read() returns their answers.  Closing the file ends the
 * session in the backend.
 */
#define pr_fmt(fmt) "xcuda-front: " fmt

#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "common.h"

static int xcf_open(struct inode *inode, struct file *file)
{
	struct xcf_session *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	mutex_init(&s->lock);
	mutex_init(&s->read_lock);
	mutex_init(&s->arena.lock);
	INIT_LIST_HEAD(&s->node);
	init_waitqueue_head(&s->rq);
	s->state = XCF_S_NEW;
	file->private_data = s;
	return nonseekable_open(inode, file);
}

/*
 * Checks the answer to SESSION_NEW.  The backend answers an error with a
 * negative errno as the status, which comes back as it is; anything
 * malformed is -EPROTO, with res->session telling the caller whether the
 * backend created something to end.
 */
static int xcf_check_new(const struct xcuda_response *rsp, u64 asked,
			 struct xcuda_xsession_new_res *res)
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
	    (asked && res->arena_size > asked) ||
	    res->nr_pages != res->arena_size / XCUDA_PAGE_SIZE)
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
	domid_t domid;
	u64 epoch;
	long left;
	int err;

	if (copy_from_user(&op, arg, sizeof(op)))
		return -EFAULT;
	if (op.arena_size % XCUDA_PAGE_SIZE ||
	    op.arena_size > XCUDA_XEN_MAX_ARENA)
		return -EINVAL;

	mutex_lock(&s->lock);
	if (s->state != XCF_S_NEW) {
		err = -EBUSY;
		goto out;
	}

	a.arena_size = op.arena_size;
	req.hdr.op = XCUDA_XOP_SESSION_NEW;
	req.hdr.len = sizeof(a);
	memcpy(req.args, &a, sizeof(a));

	spin_lock_irq(&xcf.lock);
	err = wait_event_interruptible_lock_irq(xcf.ring_wq,
						!xcf.connected ||
						xcf_room_locked(),
						xcf.lock);
	if (!err && !xcf.connected)
		err = -ENODEV;
	if (err) {
		spin_unlock_irq(&xcf.lock);
		goto out;
	}
	epoch = xcf.epoch;
	domid = xcf.domid;
	xcf_post_locked(&req, XCF_SH_NEW, NULL, &w);
	xcf_kick_locked();
	left = wait_event_interruptible_lock_irq_timeout(xcf.open_wq, w.done,
							 xcf.lock,
							 XCF_OPEN_TIMEOUT);
	if (!w.done) {
		/* A late success is ended by the interrupt handler. */
		xcf_forget_waiter_locked(&w);
		spin_unlock_irq(&xcf.lock);
		err = left < 0 ? (int)left : -ETIMEDOUT;
		goto out;
	}
	spin_unlock_irq(&xcf.lock);
	if (w.err) {
		err = w.err;
		goto out;
	}

	err = xcf_check_new(&w.rsp, op.arena_size, &res);
	if (err) {
		if (err == -EPROTO) {
			pr_warn_ratelimited("malformed SESSION_NEW answer (status %d)\n",
					    w.rsp.status);
			if (res.session)
				xcf_end_unused(res.session, epoch);
		}
		goto out;
	}

	s->domid = domid;
	s->refs = xcf_arena_fetch(domid, res.dir_ref, res.nr_pages);
	if (IS_ERR(s->refs)) {
		err = PTR_ERR(s->refs);
		s->refs = NULL;
		xcf_end_unused(res.session, epoch);
		goto out;
	}
	s->nr_pages = res.nr_pages;

	spin_lock_irq(&xcf.lock);
	if (xcf.epoch != epoch) {
		/* The backend went away meanwhile, with the session. */
		spin_unlock_irq(&xcf.lock);
		xcf_arena_release(s);
		err = -ENODEV;
		goto out;
	}
	s->id = res.session;
	s->arena_size = res.arena_size;
	s->epoch = epoch;
	s->slots = max(xcf.size / 2, 1u);
	list_add_tail(&s->node, &xcf.sessions);
	s->state = XCF_S_OPEN;
	spin_unlock_irq(&xcf.lock);

	op.arena_size = s->arena_size;
	op.session = s->id;
	op.slots = s->slots;
	op.version = XCUDA_XEN_VERSION;
	op.rsvd = 0;
	mutex_unlock(&s->lock);
	/* The session stays even if this fails; release ends it. */
	if (copy_to_user(arg, &op, sizeof(op)))
		return -EFAULT;
	return 0;

out:
	mutex_unlock(&s->lock);
	return err;
}

static long xcf_ioc_submit(struct xcf_session *s, void __user *arg)
{
	struct xcuda_ioc_submit sub;
	struct xcuda_request *reqs;
	unsigned int i, slots;
	bool open;
	u32 id;
	int err;

	if (copy_from_user(&sub, arg, sizeof(sub)))
		return -EFAULT;

	spin_lock_irq(&xcf.lock);
	open = s->state == XCF_S_OPEN;
	slots = s->slots;
	id = s->id;
	spin_unlock_irq(&xcf.lock);
	if (!open || sub.rsvd || !sub.n || sub.n > slots)
		return -EINVAL;

	reqs = memdup_user(u64_to_user_ptr(sub.reqs), sub.n * sizeof(*reqs));
	if (IS_ERR(reqs))
		return PTR_ERR(reqs);
	for (i = 0; i < sub.n; i++) {
		/* Opcodes from 0xff00 on belong to the driver. */
		if (!reqs[i].hdr.op || reqs[i].hdr.op >= 0xff00) {
			err = -EINVAL;
			goto out;
		}
		reqs[i].hdr.session = id;
	}

	spin_lock_irq(&xcf.lock);
	if (s->gone) {
		err = -EPIPE;
		goto unlock;
	}
	if (s->pending + sub.n > s->slots) {
		err = -EAGAIN;
		goto unlock;
	}
	err = wait_event_interruptible_lock_irq(xcf.ring_wq,
						s->gone ||
						xcf_room_locked() >= sub.n,
						xcf.lock);
	if (err)
		goto unlock;
	if (s->gone) {
		err = -EPIPE;
		goto unlock;
	}
	/* Another thread may have posted while this one slept. */
	if (s->pending + sub.n > s->slots) {
		err = -EAGAIN;
		goto unlock;
	}
	for (i = 0; i < sub.n; i++)
		xcf_post_locked(&reqs[i], XCF_SH_USER, s, NULL);
	s->pending += sub.n;
	xcf_kick_locked();
unlock:
	spin_unlock_irq(&xcf.lock);
out:
	kfree(reqs);
	return err;
}

static long xcf_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct xcf_session *s = file->private_data;

	switch (cmd) {
	case XCUDA_IOC_OPEN:
		return xcf_ioc_open(s, (void __user *)arg);
	case XCUDA_IOC_SUBMIT:
		return xcf_ioc_submit(s, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

static ssize_t xcf_read(struct file *file, char __user *buf, size_t count,
			loff_t *ppos)
{
	struct xcf_session *s = file->private_data;
	size_t want = count / sizeof(struct xcuda_response);
	unsigned int i, n;
	int err;

	if (!want)
		return -EINVAL;
	if (mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;

	spin_lock_irq(&xcf.lock);
	if (s->state != XCF_S_OPEN) {
		err = -EINVAL;
		goto unlock;
	}
	while (!s->q_len) {
		if (s->gone) {
			err = -EPIPE;
			goto unlock;
		}
		if (file->f_flags & O_NONBLOCK) {
			err = -EAGAIN;
			goto unlock;
		}
		err = wait_event_interruptible_lock_irq(s->rq,
							s->q_len || s->gone,
							xcf.lock);
		if (err)
			goto unlock;
	}
	n = min_t(size_t, want, s->q_len);
	for (i = 0; i < n; i++) {
		s->bounce[i] = s->queue[s->q_head];
		s->q_head = (s->q_head + 1) % s->slots;
	}
	s->q_len -= n;
	s->pending -= n;
	spin_unlock_irq(&xcf.lock);

	/* bounce[] is the reader's: read_lock is still held. */
	err = copy_to_user(buf, s->bounce, n * sizeof(s->bounce[0])) ?
		-EFAULT : 0;
	mutex_unlock(&s->read_lock);
	return err ? err : n * sizeof(s->bounce[0]);

unlock:
	spin_unlock_irq(&xcf.lock);
	mutex_unlock(&s->read_lock);
	return err;
}

static __poll_t xcf_poll(struct file *file, poll_table *wait)
{
	struct xcf_session *s = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &s->rq, wait);
	spin_lock_irq(&xcf.lock);
	if (s->state != XCF_S_OPEN)
		mask = EPOLLERR;
	else if (s->q_len)
		mask = EPOLLIN | EPOLLRDNORM;
	else if (s->gone)
		mask = EPOLLHUP | EPOLLERR;
	spin_unlock_irq(&xcf.lock);
	return mask;
}

/*
 * The last reference: no VMA of the arena is left.  Its grants are all
 * unmapped (a failed mmap() may have left some) before the session ends.
 */
static int xcf_release(struct inode *inode, struct file *file)
{
	struct xcf_session *s = file->private_data;
	struct xcf_end *e = NULL;
	unsigned int i;

	xcf_arena_release(s);
	if (s->state == XCF_S_OPEN)
		e = kmalloc(sizeof(*e), GFP_KERNEL);

	spin_lock_irq(&xcf.lock);
	if (s->state == XCF_S_OPEN) {
		list_del_init(&s->node);
		/* Answers still in flight are dropped when they come. */
		for (i = 0; i < xcf.size; i++)
			if (xcf.shadow[i].sess == s)
				xcf.shadow[i].sess = NULL;
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
	.read = xcf_read,
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
