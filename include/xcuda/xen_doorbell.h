/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A session's doorbell, for xcuda-front and xcuda-back alike: one event
 * channel bridged to two eventfds of the process that maps the session's
 * data ring (xcuda/xen.h).  An event from the peer signals the "bell"
 * eventfd, which the process sleeps on; a write to the "kick" eventfd
 * sends an event to the peer from the eventfd's own wake-up, as KVM's
 * irqfd does, so ringing costs the process one write() and no ioctl.
 *
 * The kick's counter is emptied on each wake-up: it never fills, and the
 * process's writes never block.  Teardown order: xcuda_db_disarm() (no
 * event is sent any more), unbind the channel (no bell is signalled any
 * more), xcuda_db_put().
 *
 * The bell's own wait queue tells us when the process reads it: an event
 * that comes while the last one is still unread tells the process
 * nothing.  The caller acknowledges such an event as spurious, so that a
 * peer that keeps ringing is held back by the late-EOI throttle (after
 * two in a row, Linux delays the next EOI from one jiffy up to a
 * second), as xen-blkback does for a ring with nothing new.  A peer that
 * follows the ring's protocol rings once per sleep of the process, which
 * reads the bell when it wakes: its events are not spurious.
 *
 * Small enough to be inline in both modules rather than a third one.
 */
#ifndef XCUDA_XEN_DOORBELL_H
#define XCUDA_XEN_DOORBELL_H

#include <linux/err.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/poll.h>
#include <linux/wait.h>
#include <xen/events.h>

struct xcuda_db {
	struct eventfd_ctx *bell;	/* signalled on the peer's events */
	struct eventfd_ctx *kick;	/* written by the process */
	wait_queue_entry_t wait;	/* on the kick's wait queue */
	poll_table pt;
	wait_queue_entry_t read_wait;	/* on the bell's: sees it read */
	poll_table read_pt;
	int irq;			/* the bound channel, or -1 */
	bool armed;
	bool watched;			/* read_wait is queued */
	bool unread;			/* signalled, not read since */
};

/*
 * The peer rang: signals the bell.  Returns true if the last signal was
 * still unread, so that the event is spurious.  The flag is set before
 * the signal: a read between the two leaves it clear with the bell
 * pending, which errs on the side of "not spurious".
 */
static inline bool xcuda_db_signal(struct xcuda_db *db)
{
	bool spurious = READ_ONCE(db->unread);

	WRITE_ONCE(db->unread, true);
	/* Kernels from 6.8 on add one, always: the build finds out which. */
#ifdef XCUDA_EVENTFD_SIGNAL_CTX_ONLY
	eventfd_signal(db->bell);
#else
	eventfd_signal(db->bell, 1);
#endif
	return spurious;
}

/* The bell's wake-up, under its wait queue's lock: EPOLLOUT is a read. */
static inline int xcuda_db_read(wait_queue_entry_t *wait, unsigned int mode,
				int sync, void *key)
{
	struct xcuda_db *db = container_of(wait, struct xcuda_db, read_wait);

	if (key_to_poll(key) & EPOLLOUT)
		WRITE_ONCE(db->unread, false);
	return 0;
}

static inline void xcuda_db_queue_read(struct file *file,
				       wait_queue_head_t *wqh, poll_table *pt)
{
	struct xcuda_db *db = container_of(pt, struct xcuda_db, read_pt);

	add_wait_queue(wqh, &db->read_wait);
}

/* The kick's wake-up, under its wait queue's lock: ring the peer. */
static inline int xcuda_db_wake(wait_queue_entry_t *wait, unsigned int mode,
				int sync, void *key)
{
	struct xcuda_db *db = container_of(wait, struct xcuda_db, wait);
	u64 cnt;

	if (key_to_poll(key) & EPOLLIN) {
		eventfd_ctx_do_read(db->kick, &cnt);
		notify_remote_via_irq(db->irq);
	}
	return 0;
}

static inline void xcuda_db_queue(struct file *file, wait_queue_head_t *wqh,
				  poll_table *pt)
{
	struct xcuda_db *db = container_of(pt, struct xcuda_db, pt);

	add_wait_queue(wqh, &db->wait);
}

/*
 * Takes references to both eventfds and watches the bell's reads: 0,
 * -EBADF or -EINVAL (not one).
 */
static inline int xcuda_db_get(struct xcuda_db *db, int bell_fd, int kick_fd)
{
	struct eventfd_ctx *ctx;
	struct file *file;

	db->irq = -1;
	db->armed = false;
	db->watched = false;
	db->unread = false;
	db->bell = NULL;
	db->kick = NULL;
	if (bell_fd < 0 || kick_fd < 0 || bell_fd == kick_fd)
		return -EINVAL;
	file = fget(bell_fd);
	if (!file)
		return -EBADF;
	ctx = eventfd_ctx_fileget(file);
	if (IS_ERR(ctx)) {
		fput(file);
		return PTR_ERR(ctx);
	}
	db->bell = ctx;
	ctx = eventfd_ctx_fdget(kick_fd);
	if (IS_ERR(ctx)) {
		fput(file);
		eventfd_ctx_put(db->bell);
		db->bell = NULL;
		return PTR_ERR(ctx);
	}
	db->kick = ctx;
	init_waitqueue_func_entry(&db->read_wait, xcuda_db_read);
	init_poll_funcptr(&db->read_pt, xcuda_db_queue_read);
	vfs_poll(file, &db->read_pt);
	db->watched = true;
	fput(file);
	return 0;
}

/*
 * From now on a write to the kick rings the peer through db->irq, which
 * must be bound.  @kick_fd must still name the kick: a process that
 * swapped it meanwhile gets -EINVAL.
 */
static inline int xcuda_db_arm(struct xcuda_db *db, int kick_fd)
{
	struct file *file = fget(kick_fd);
	struct eventfd_ctx *ctx;

	if (!file)
		return -EBADF;
	ctx = eventfd_ctx_fileget(file);
	if (IS_ERR(ctx) || ctx != db->kick) {
		if (!IS_ERR(ctx))
			eventfd_ctx_put(ctx);
		fput(file);
		return -EINVAL;
	}
	eventfd_ctx_put(ctx);
	init_waitqueue_func_entry(&db->wait, xcuda_db_wake);
	init_poll_funcptr(&db->pt, xcuda_db_queue);
	vfs_poll(file, &db->pt);
	fput(file);
	db->armed = true;
	return 0;
}

static inline void xcuda_db_disarm(struct xcuda_db *db)
{
	u64 cnt;

	if (db->armed)
		eventfd_ctx_remove_wait_queue(db->kick, &db->wait, &cnt);
	db->armed = false;
}

static inline void xcuda_db_put(struct xcuda_db *db)
{
	u64 cnt;

	if (db->watched)
		eventfd_ctx_remove_wait_queue(db->bell, &db->read_wait, &cnt);
	db->watched = false;
	if (db->bell)
		eventfd_ctx_put(db->bell);
	if (db->kick)
		eventfd_ctx_put(db->kick);
	db->bell = NULL;
	db->kick = NULL;
}

#endif /* XCUDA_XEN_DOORBELL_H */
