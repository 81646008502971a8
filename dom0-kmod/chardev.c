// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/xcuda-back: xcudad's control file and its workers' session files.
 *
 * A file starts FRESH and becomes, once and for good, either the control
 * file (XCUDA_BACK_IOC_CONTROL, one at a time) or a session's file
 * (XCUDA_BACK_IOC_ATTACH).  Both need CAP_SYS_ADMIN; nothing after ATTACH
 * does, so that the worker can drop its privileges first.
 */
#define pr_fmt(fmt) "xcuda-back: " fmt

#include <linux/capability.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include "common.h"

/* GONE events kept for a daemon that does not read them, at most. */
#define XCB_MAX_GONE		1024

struct xcb_ctl xcb_ctl = {
	.lock = __MUTEX_INITIALIZER(xcb_ctl.lock),
	.events = LIST_HEAD_INIT(xcb_ctl.events),
	.pending = LIST_HEAD_INIT(xcb_ctl.pending),
	.wq = __WAIT_QUEUE_HEAD_INITIALIZER(xcb_ctl.wq),
};

/* Queues an event for the control file; xcb_ctl.lock held. */
void xcb_ctl_queue(struct xcb_event *e)
{
	lockdep_assert_held(&xcb_ctl.lock);
	if (e->ev.type == XCUDA_BACK_EV_GONE) {
		/* Bounded: a guest may connect and disconnect at will. */
		if (xcb_ctl.nr_gone >= XCB_MAX_GONE) {
			pr_warn_ratelimited("dropping a GONE event: xcudad does not read them\n");
			kfree(e);
			return;
		}
		xcb_ctl.nr_gone++;
	}
	list_add_tail(&e->node, &xcb_ctl.events);
	WRITE_ONCE(xcb_ctl.nr_events, xcb_ctl.nr_events + 1);
	wake_up_interruptible(&xcb_ctl.wq);
}

/* Unlinks @e if queued, and frees it if it is not a session's. */
void xcb_ctl_unqueue(struct xcb_event *e)
{
	lockdep_assert_held(&xcb_ctl.lock);
	if (list_empty(&e->node))
		return;
	list_del_init(&e->node);
	WRITE_ONCE(xcb_ctl.nr_events, xcb_ctl.nr_events - 1);
	if (e->ev.type == XCUDA_BACK_EV_GONE) {
		xcb_ctl.nr_gone--;
		kfree(e);
	}
}

static int xcb_ctl_claim(struct xcb_file *f)
{
	int err = 0;

	mutex_lock(&xcb_ctl.lock);
	if (f->kind != XCB_F_FRESH || xcb_ctl.claimed) {
		err = -EBUSY;
	} else {
		xcb_ctl.claimed = true;
		/* Pairs with xcb_kind(); nothing else to publish here. */
		smp_store_release(&f->kind, XCB_F_CONTROL);
	}
	mutex_unlock(&xcb_ctl.lock);
	if (!err)
		pr_info("xcudad connected\n");
	return err;
}

static void xcb_ctl_release(void)
{
	struct xcb_event *e, *tmp;

	mutex_lock(&xcb_ctl.lock);
	xcb_ctl.claimed = false;
	list_for_each_entry_safe(e, tmp, &xcb_ctl.events, node)
		xcb_ctl_unqueue(e);
	xcb_ctl_cancel_new();
	mutex_unlock(&xcb_ctl.lock);
	pr_info("xcudad disconnected\n");
}

/* Lockless: wait_event() and poll() only need a hint; read() rechecks. */
static bool xcb_ctl_readable(void)
{
	return READ_ONCE(xcb_ctl.nr_events) != 0;
}

static ssize_t xcb_ctl_read(char __user *buf, size_t count, bool nonblock)
{
	struct xcuda_back_event ev;
	struct xcb_event *e;
	size_t done = 0;
	int err;

	if (count < sizeof(ev))
		return -EINVAL;
	while (done + sizeof(ev) <= count) {
		mutex_lock(&xcb_ctl.lock);
		e = list_first_entry_or_null(&xcb_ctl.events, struct xcb_event,
					     node);
		if (e) {
			ev = e->ev;
			xcb_ctl_unqueue(e);
		}
		mutex_unlock(&xcb_ctl.lock);

		if (!e) {
			if (done)
				break;
			if (nonblock)
				return -EAGAIN;
			err = wait_event_interruptible(xcb_ctl.wq,
						       xcb_ctl_readable());
			if (err)
				return err;
			continue;
		}
		/* A lost SESSION event times out; the daemon is at fault. */
		if (copy_to_user(buf + done, &ev, sizeof(ev)))
			return done ? done : -EFAULT;
		done += sizeof(ev);
	}
	return done;
}

/* A file's kind, read without xcb_ctl.lock. */
static int xcb_kind(struct xcb_file *f)
{
	/* Pairs with the release that set it: f->sess is then visible. */
	return smp_load_acquire(&f->kind);
}

static int xcb_open(struct inode *inode, struct file *file)
{
	struct xcb_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	f->kind = XCB_F_FRESH;
	file->private_data = f;
	return stream_open(inode, file);
}

static int xcb_release(struct inode *inode, struct file *file)
{
	struct xcb_file *f = file->private_data;

	if (f->kind == XCB_F_CONTROL)
		xcb_ctl_release();
	else if (f->kind == XCB_F_SESSION)
		xcb_session_release(f->sess);
	kfree(f);
	return 0;
}

static ssize_t xcb_read(struct file *file, char __user *buf, size_t count,
			loff_t *ppos)
{
	struct xcb_file *f = file->private_data;
	bool nonblock = file->f_flags & O_NONBLOCK;

	switch (xcb_kind(f)) {
	case XCB_F_CONTROL:
		return xcb_ctl_read(buf, count, nonblock);
	default:
		/* A session's requests are on its data ring. */
		return -EINVAL;
	}
}

static __poll_t xcb_poll(struct file *file, poll_table *wait)
{
	struct xcb_file *f = file->private_data;

	switch (xcb_kind(f)) {
	case XCB_F_CONTROL:
		poll_wait(file, &xcb_ctl.wq, wait);
		return xcb_ctl_readable() ? EPOLLIN | EPOLLRDNORM : 0;
	case XCB_F_SESSION:
		return xcb_session_poll(f->sess, file, wait);
	default:
		return EPOLLERR;
	}
}

static long xcb_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct xcb_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct xcuda_back_attach at;
	struct xcuda_back_refuse rf;
	struct xcuda_back_arena ar;

	switch (cmd) {
	case XCUDA_BACK_IOC_CONTROL:
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		return xcb_ctl_claim(f);

	case XCUDA_BACK_IOC_ATTACH:
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		if (copy_from_user(&at, uarg, sizeof(at)))
			return -EFAULT;
		return xcb_session_attach(f, at.token);

	case XCUDA_BACK_IOC_REFUSE:
		/* Only xcudad's control file answers for the daemon. */
		if (xcb_kind(f) != XCB_F_CONTROL)
			return -EPERM;
		if (copy_from_user(&rf, uarg, sizeof(rf)))
			return -EFAULT;
		if (!rf.err || rf.err >= MAX_ERRNO || rf.rsvd)
			return -EINVAL;
		/* A positive errno from xcudad; negative on the ring. */
		return xcb_session_refuse(rf.token, -(int)rf.err);

	case XCUDA_BACK_IOC_ARENA:
		if (xcb_kind(f) != XCB_F_SESSION)
			return -EINVAL;
		if (copy_from_user(&ar, uarg, sizeof(ar)))
			return -EFAULT;
		return xcb_session_arena(f->sess, &ar);

	default:
		return -ENOTTY;
	}
}

static const struct file_operations xcb_fops = {
	.owner = THIS_MODULE,
	.open = xcb_open,
	.release = xcb_release,
	.read = xcb_read,
	.poll = xcb_poll,
	.unlocked_ioctl = xcb_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

/*
 * sysfs (/sys/class/misc/xcuda-back): the grants of every guest domain,
 * those of devices already removed included, and of them those of ended
 * sessions whose pages their guests still map.
 */
static ssize_t grants_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	unsigned long held, lingering;

	xcb_grants_read(NULL, &held, &lingering);
	return sysfs_emit(buf, "%lu\n", held);
}
static DEVICE_ATTR_RO(grants);

static ssize_t lingering_grants_show(struct device *d,
				     struct device_attribute *attr, char *buf)
{
	unsigned long held, lingering;

	xcb_grants_read(NULL, &held, &lingering);
	return sysfs_emit(buf, "%lu\n", lingering);
}
static DEVICE_ATTR_RO(lingering_grants);

static struct attribute *xcb_misc_attrs[] = {
	&dev_attr_grants.attr,
	&dev_attr_lingering_grants.attr,
	NULL
};
ATTRIBUTE_GROUPS(xcb_misc);

static struct miscdevice xcb_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "xcuda-back",
	.fops = &xcb_fops,
	.mode = 0600,
	.groups = xcb_misc_groups,
};

int xcb_chardev_register(void)
{
	return misc_register(&xcb_misc);
}

void xcb_chardev_unregister(void)
{
	misc_deregister(&xcb_misc);
}
