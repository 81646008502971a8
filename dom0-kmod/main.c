// SPDX-License-Identifier: GPL-2.0
/*
 * xcuda-back: the Dom0 end of xcuda's Xen split driver.
 *
 * A guest's xcuda-front connects to one xenbus device of type "xcuda"
 * with one shared ring and one event channel.  Every guest process that
 * opens /dev/xcuda gets a session on that ring.  This module hands each
 * session to one xcudad worker through a file of /dev/xcuda-back, pins
 * the worker's arena and grants it to the guest, and carries requests
 * from the ring to the worker and its responses back.  The contract with
 * the frontend and xcudad is include/xcuda/xen.h.
 *
 * Files: xenbus.c (probe, the xenstore state machine, ring mapping),
 * ring.c (requests off the ring, responses onto it), session.c (sessions
 * and their request queues), arena.c (pinning, grants, the directory),
 * chardev.c (/dev/xcuda-back), and this file (module init, the device's
 * lifetime).
 *
 * Lifetimes
 *
 * struct xcb_dev, one per xenbus device: probe() holds a reference that
 * remove() drops, and every session holds one.  A device can thus be
 * removed while workers still hold sessions; those see a device that is
 * not connected.  xdev is used only by the xenbus callbacks and by the
 * ring work, which is cancelled before remove() returns.
 *
 * A connection (ring mapped, event channel bound) runs from connect to
 * disconnect; conn_gen numbers them.  Every request taken off the ring is
 * answered exactly once on the connection it came from, or dropped when
 * that connection ends: xcb_respond() writes only while connected and
 * only for the current generation, so a late answer never lands on a
 * newer ring, and the ring cannot overflow.
 *
 * struct xcb_session, one per accepted SESSION_NEW.  References: the
 * device's slot (until its id is freed), the attached file (ATTACH to
 * release()), the pending timeout, short lookups.  States: NEW (event
 * queued, no file) -> ATTACHED (a worker's file, no arena yet) -> LIVE ->
 * ENDED (SESSION_END: nothing new comes in; the worker drains the queue)
 * -> DEAD (nothing more reaches the ring).  A NEW session is freed as soon
 * as its SESSION_NEW is answered (REFUSE, timeout, control file closed,
 * disconnect); any other after its file's release().  Each queued
 * request (struct xcb_req) is on exactly one list of its session, queue
 * (not read yet) or handed (read, answer due in order), until the
 * worker's answer, a GONE answer from the backend, or the connection's
 * end removes it.
 *
 * A session's grants are charged to its guest domain (struct xcb_domain,
 * one per domain, shared by its devices, against max_domain_grants) from
 * SESSION_NEW until each grant has ended, which is only once the guest no
 * longer maps it.  A session whose grants the guest still maps when it
 * ends lingers: it keeps its slot (and so its device and domain) and its
 * charge, and delayed work retries until they have all ended.
 *
 * Any order of these is safe:
 *  - the worker exits: release() answers what is left with GONE, ends the
 *    grants and frees the id, or leaves both to the retries while the
 *    guest still maps some of its pages;
 *  - the frontend closes or goes away: responses stop (connected =
 *    false), the work is cancelled, the event channel unbound, every
 *    session of the device killed and its grants ended, the ring
 *    unmapped; attached files then read 0 and write EPIPE until closed;
 *  - the frontend corrupts req_prod: the same from the work itself,
 *    except that the ring stays mapped and the channel bound (and
 *    masked: no EOI) until the frontend closes or the device goes;
 *  - the device is removed: a disconnect, then probe's reference goes;
 *  - the control file closes: SESSION_NEWs still NEW get -ESHUTDOWN;
 *    attached sessions do not depend on it;
 *  - rmmod: refused while a file of /dev/xcuda-back is open (fops owner),
 *    else every device is removed as above, the lingering sessions are
 *    given 10 seconds to end, what is still mapped then goes to the grant
 *    table's own deferred list (which frees a page only once its guest
 *    has let go), and the workqueue is drained.
 *
 * Locking, outermost first:
 *   dev->conn_lock  mutex  connect vs. disconnect (xenbus callbacks only)
 *   xcb_ctl.lock    mutex  control file, events, tokens, the pending
 *                          SESSION_NEWs and every session's new_* fields
 *   dev->lock       mutex  the device's session table
 *   s->lock         spin   a session's state, request lists, arena
 *   dev->ring_lock  spin   the ring's response side, connected, conn_gen
 * The ring work takes xcb_ctl.lock and below, never conn_lock; the
 * disconnect path cancels the work before it takes xcb_ctl.lock.  Nothing
 * sleeps under a spinlock: reads copy out through a per-session bounce
 * buffer, writes through a local copy.  The ring's request side
 * (req_cons, req_event) belongs to the work alone; a work item never runs
 * on two CPUs at once.
 *
 * The event channel is bound "late EOI": the handler only notes that an
 * EOI is owed and queues the work, which sends it after looking at the
 * ring, flagged spurious when it found nothing, so that Xen throttles a
 * frontend that floods the channel.
 */
#define pr_fmt(fmt) "xcuda-back: " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <xen/xen.h>

#include "common.h"

struct workqueue_struct *xcb_wq;

static void xcb_dev_release(struct kref *kref)
{
	struct xcb_dev *dev = container_of(kref, struct xcb_dev, kref);

	if (dev->dom)
		xcb_domain_put(dev->dom);
	mutex_destroy(&dev->lock);
	mutex_destroy(&dev->conn_lock);
	kfree(dev);
}

void xcb_dev_put(struct xcb_dev *dev)
{
	kref_put(&dev->kref, xcb_dev_release);
}

static int __init xcb_init(void)
{
	int err;

	if (!xen_initial_domain())
		return -ENODEV;

	xcb_grants_init();
	/* Ring work and session timeouts; drained at exit. */
	xcb_wq = alloc_workqueue("xcuda-back", 0, 0);
	if (!xcb_wq)
		return -ENOMEM;

	err = xcb_chardev_register();
	if (err)
		goto err_wq;

	err = xcb_xenbus_register();
	if (err)
		goto err_chardev;

	pr_info("loaded\n");
	return 0;

err_chardev:
	xcb_chardev_unregister();
err_wq:
	destroy_workqueue(xcb_wq);
	return err;
}

static void __exit xcb_exit(void)
{
	/* No file is open here: each one holds a module reference. */
	xcb_xenbus_unregister();
	xcb_chardev_unregister();
	xcb_reap_exit();
	destroy_workqueue(xcb_wq);
	pr_info("unloaded\n");
}

module_init(xcb_init);
module_exit(xcb_exit);

MODULE_DESCRIPTION("xcuda backend: guest CUDA sessions served by xcudad");
MODULE_LICENSE("GPL");
MODULE_ALIAS("xen-backend:" XCUDA_XS_TYPE);
