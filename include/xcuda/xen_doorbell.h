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
	int irq;			/* the bound channel, or -1 */
	bool armed;
};

/* Kernels from 6.8 on add one, always: the build finds out which. */
static inline void xcuda_db_signal(struct xcuda_db *db)
{
#ifdef XCUDA_EVENTFD_SIGNAL_CTX_ONLY
	eventfd_signal(db->bell);
#else
	eventfd_signal(db->bell, 1);
#endif
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

/* Takes references to both eventfds: 0, -EBADF or -EINVAL (not one). */
static inline int xcuda_db_get(struct xcuda_db *db, int bell_fd, int kick_fd)
{
	struct eventfd_ctx *ctx;

	db->irq = -1;
	db->armed = false;
	db->bell = NULL;
	db->kick = NULL;
	if (bell_fd < 0 || kick_fd < 0 || bell_fd == kick_fd)
		return -EINVAL;
	ctx = eventfd_ctx_fdget(bell_fd);
	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	db->bell = ctx;
	ctx = eventfd_ctx_fdget(kick_fd);
	if (IS_ERR(ctx)) {
		eventfd_ctx_put(db->bell);
		db->bell = NULL;
		return PTR_ERR(ctx);
	}
	db->kick = ctx;
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
	if (db->bell)
		eventfd_ctx_put(db->bell);
	if (db->kick)
		eventfd_ctx_put(db->kick);
	db->bell = NULL;
	db->kick = NULL;
}

#endif /* XCUDA_XEN_DOORBELL_H */
