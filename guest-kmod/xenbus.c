// SPDX-License-Identifier: GPL-2.0
/*
 * xcuda-front: the xenbus frontend of the xcuda `xen` transport.
 *
 * Device 0 of type "xcuda" connects this guest to the backend in Dom0
 * with one shared ring and one event channel, following the xenstore
 * state machine of docs/protocol.md.  Every session of /dev/xcuda rides
 * on that ring; when the backend goes away they all fail, the ring is
 * freed, and the frontend waits for a backend to come back in InitWait.
 */
#define pr_fmt(fmt) "xcuda-front: " fmt

#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <xen/events.h>
#include <xen/page.h>
#include <xen/xen.h>

#include "common.h"

/* How long remove() lets the backend let go of the ring. */
#define XCF_CLOSE_TIMEOUT_MS	5000

struct xcf_conn xcf = {
	.mutex = __MUTEX_INITIALIZER(xcf.mutex),
	.lock = __SPIN_LOCK_UNLOCKED(xcf.lock),
	.irq = -1,
	.sessions = LIST_HEAD_INIT(xcf.sessions),
	.ends = LIST_HEAD_INIT(xcf.ends),
	.ring_wq = __WAIT_QUEUE_HEAD_INITIALIZER(xcf.ring_wq),
	.open_wq = __WAIT_QUEUE_HEAD_INITIALIZER(xcf.open_wq),
};

/*
 * Does the backend's "versions" list hold ours?  A comma-separated list,
 * which xenbus_scanf() cannot take apart: read whole, as pvcalls-front and
 * 9pfs's frontend read theirs.
 */
static bool xcf_backend_speaks_ours(struct xenbus_device *dev)
{
	char *versions, *p, *tok;
	unsigned int v;
	bool ok = false;

	versions = xenbus_read(XBT_NIL, dev->otherend, XCUDA_XS_VERSIONS, NULL);
	if (IS_ERR(versions))
		return false;
	p = versions;
	while (!ok && (tok = strsep(&p, ",")))
		ok = !kstrtouint(strim(tok), 10, &v) && v == XCUDA_XEN_VERSION;
	kfree(versions);
	return ok;
}

/*
 * Stops all use of the ring at once (the ring work ignores it
 * from now on) and fails every session.  Says if it was connected.
 * xcf.mutex held.
 */
static bool xcf_quiesce(void)
{
	bool was_connected;

	lockdep_assert_held(&xcf.mutex);
	spin_lock_irq(&xcf.lock);
	was_connected = xcf.connected;
	xcf.live = false;
	xcf.connected = false;
	xcf_fail_all_locked();
	spin_unlock_irq(&xcf.lock);
	return was_connected;
}

/*
 * Ends the grants of a ring no longer in use and frees each page whose
 * grant ended (alloc_pages_exact() left them order-0 pages).  Says
 * whether all of them did.
 */
static bool xcf_ring_end(void *va, unsigned int nr, grant_ref_t *refs)
{
	bool all = true;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (refs[i] == INVALID_GRANT_REF)
			continue;
		if (!gnttab_try_end_foreign_access(refs[i])) {
			all = false;
			continue;
		}
		refs[i] = INVALID_GRANT_REF;
		free_page((unsigned long)va + i * XEN_PAGE_SIZE);
	}
	return all;
}

/* Does the backend still map a previous ring?  Frees it if not. */
static bool xcf_stale_held(void)
{
	lockdep_assert_held(&xcf.mutex);
	if (!xcf.stale)
		return false;
	if (!xcf_ring_end(xcf.stale, xcf.stale_nr, xcf.stale_refs))
		return true;
	xcf.stale = NULL;
	return false;
}

/*
 * Hands a stale ring to the grant code, which frees each page once the
 * backend lets go: the driver is going away.  xcf.mutex held.
 */
static void xcf_stale_abandon(void)
{
	unsigned int i;

	lockdep_assert_held(&xcf.mutex);
	if (!xcf.stale)
		return;
	for (i = 0; i < xcf.stale_nr; i++) {
		if (xcf.stale_refs[i] == INVALID_GRANT_REF)
			continue;
		gnttab_end_foreign_access(xcf.stale_refs[i],
					  virt_to_page(xcf.stale +
						       i * XEN_PAGE_SIZE));
		xcf.stale_refs[i] = INVALID_GRANT_REF;
	}
	xcf.stale = NULL;
}

/*
 * Frees the control ring.  A backend that still maps it keeps it: its
 * pages stay ours until it lets go.  One that did so with every ring,
 * while it made the frontend set up the next, would pin guest memory
 * without bound; so the ring is kept aside, no new one is set up until
 * the backend lets go of it (xcf_setup()), and that counts as a failure.
 * xcf.mutex held.
 */
static void xcf_ring_free(struct xenbus_device *dev)
{
	unsigned int nr = 1u << xcf.order, i;

	lockdep_assert_held(&xcf.mutex);
	if (!xcf_ring_end(xcf.sring, nr, xcf.refs)) {
		/* Never two kept: setup waits for the first to go. */
		xcf_stale_abandon();
		xcf.stale = xcf.sring;
		xcf.stale_nr = nr;
		for (i = 0; i < nr; i++) {
			xcf.stale_refs[i] = xcf.refs[i];
			xcf.refs[i] = INVALID_GRANT_REF;
		}
		pr_warn_ratelimited("%s still maps the control ring it was given; no new ring until it lets go\n",
				    dev->otherend);
		spin_lock_irq(&xcf.lock);
		xcf.strikes++;
		spin_unlock_irq(&xcf.lock);
	}
	xcf.sring = NULL;
}

/*
 * Undoes xcf_setup(), whatever part of it was done: fails every session,
 * unbinds the event channel and ends the ring's grants (xcf_ring_free()).
 * xcf.mutex held.
 */
static void xcf_teardown(struct xenbus_device *dev)
{
	bool was_connected;

	lockdep_assert_held(&xcf.mutex);
	was_connected = xcf_quiesce();

	/* The work finds ->live false from now on, and sends no EOI. */
	cancel_work_sync(&xcf.ring_work);
	if (xcf.irq >= 0) {
		/* Waits for a running handler, which may queue the work. */
		unbind_from_irqhandler(xcf.irq, &xcf);
		cancel_work_sync(&xcf.ring_work);
		spin_lock_irq(&xcf.lock);
		xcf.irq = -1;
		spin_unlock_irq(&xcf.lock);
		xcf.has_evtchn = false;
	} else if (xcf.has_evtchn) {
		xenbus_free_evtchn(dev, xcf.evtchn);
		xcf.has_evtchn = false;
	}
	if (xcf.sring)
		xcf_ring_free(dev);
	if (was_connected)
		pr_info_ratelimited("disconnected from %s\n", dev->otherend);
}

static int xcf_write_nodes(struct xenbus_device *dev, const char **what)
{
	unsigned int nr = 1u << xcf.order, i;
	struct xenbus_transaction xbt;
	char name[16];
	int err;

again:
	*what = "starting transaction";
	err = xenbus_transaction_start(&xbt);
	if (err)
		return err;
	*what = "writing ring nodes";
	err = xenbus_printf(xbt, dev->nodename, XCUDA_XS_RING_ORDER, "%u",
			    xcf.order);
	for (i = 0; !err && i < nr; i++) {
		if (!xcf.order)
			strscpy(name, XCUDA_XS_RING_REF, sizeof(name));
		else
			snprintf(name, sizeof(name), XCUDA_XS_RING_REF "%u", i);
		err = xenbus_printf(xbt, dev->nodename, name, "%u",
				    xcf.refs[i]);
	}
	if (!err)
		err = xenbus_printf(xbt, dev->nodename, XCUDA_XS_EVTCHN, "%u",
				    xcf.evtchn);
	if (!err)
		err = xenbus_printf(xbt, dev->nodename, XCUDA_XS_VERSION, "%u",
				    XCUDA_XEN_VERSION);
	if (err) {
		xenbus_transaction_end(xbt, 1);
		return err;
	}
	*what = "completing transaction";
	err = xenbus_transaction_end(xbt, 0);
	if (err == -EAGAIN)
		goto again;
	return err;
}

/*
 * The backend waits in InitWait: set up the ring and publish it.
 * xcf.mutex held.
 */
static int xcf_setup(struct xenbus_device *dev)
{
	struct xcuda_sring *sring;
	unsigned int order;
	const char *what;
	int err, irq;

	lockdep_assert_held(&xcf.mutex);
	if (xcf_stale_held()) {
		err = -EBUSY;
		xenbus_dev_fatal(dev, err,
				 "backend still maps the previous control ring");
		return err;
	}
	if (!xcf_backend_speaks_ours(dev)) {
		err = -EPROTONOSUPPORT;
		xenbus_dev_fatal(dev, err, "backend lacks version %u",
				 XCUDA_XEN_VERSION);
		return err;
	}
	order = xenbus_read_unsigned(dev->otherend, XCUDA_XS_MAX_RING_ORDER, 0);
	order = min_t(unsigned int, order, XCUDA_MAX_RING_ORDER);

	err = xenbus_setup_ring(dev, GFP_KERNEL, (void **)&sring, 1u << order,
				xcf.refs);
	if (err) {
		what = "setting up the ring";
		goto fail;
	}
	SHARED_RING_INIT(sring);
	xcf.order = order;
	xcf.sring = sring;

	err = xenbus_alloc_evtchn(dev, &xcf.evtchn);
	if (err) {
		what = "allocating the event channel";
		goto fail;
	}
	xcf.has_evtchn = true;

	/* An EOI owed to the previous channel is void. */
	clear_bit(XCF_EOI_PENDING, &xcf.flags);
	spin_lock_irq(&xcf.lock);
	FRONT_RING_INIT(&xcf.ring, sring, XEN_PAGE_SIZE << order);
	xcf_ring_reset_locked(RING_SIZE(&xcf.ring));
	xcf.domid = dev->otherend_id;
	xcf.live = true;
	spin_unlock_irq(&xcf.lock);

	/* Late EOI: ring.c says why. */
	irq = bind_evtchn_to_irqhandler_lateeoi(xcf.evtchn, xcf_interrupt, 0,
						"xcuda-front", &xcf);
	if (irq < 0) {
		err = irq;
		what = "binding the event channel";
		goto fail;
	}
	spin_lock_irq(&xcf.lock);
	xcf.irq = irq;
	spin_unlock_irq(&xcf.lock);
	/* An event that came before the irq was known still wants its EOI. */
	schedule_work(&xcf.ring_work);

	err = xcf_write_nodes(dev, &what);
	if (err)
		goto fail;
	xenbus_switch_state(dev, XenbusStateInitialised);
	return 0;

fail:
	xenbus_dev_fatal(dev, err, "%s", what);
	xcf_teardown(dev);
	return err;
}

/*
 * The backend is Connected: so is the frontend, sessions may start.
 * xcf.mutex held.
 */
static void xcf_connect(struct xenbus_device *dev)
{
	bool ok;

	lockdep_assert_held(&xcf.mutex);
	if (dev->state != XenbusStateInitialised)
		return;
	spin_lock_irq(&xcf.lock);
	ok = xcf.live;
	xcf.connected = ok;
	spin_unlock_irq(&xcf.lock);
	if (!ok)
		return;
	xenbus_switch_state(dev, XenbusStateConnected);
	pr_info_ratelimited("connected to %s: %u ring page(s), %u slots\n",
			    dev->otherend, 1u << xcf.order, xcf.size);
}

static unsigned int xcf_strikes(void)
{
	unsigned int n;

	spin_lock_irq(&xcf.lock);
	n = xcf.strikes;
	spin_unlock_irq(&xcf.lock);
	return n;
}

static void xcf_strike(void)
{
	spin_lock_irq(&xcf.lock);
	xcf.strikes++;
	spin_unlock_irq(&xcf.lock);
}

/*
 * After XCF_MAX_STRIKES failures in a row the frontend no longer answers
 * a backend at once: each new try waits 1, 2, 4... up to 64 seconds, so
 * that a backend that keeps failing cannot keep it busy.
 */
static bool xcf_backing_off(void)
{
	unsigned int n = xcf_strikes();

	if (n < XCF_MAX_STRIKES)
		return false;
	n = min(n - XCF_MAX_STRIKES, 6u);
	if (schedule_delayed_work(&xcf.retry_work, HZ << n))
		pr_warn_ratelimited("backend keeps failing; next try in %u s\n",
				    1u << n);
	return true;
}

/* Moves on from where the backend stands now; xcf.mutex held. */
static void xcf_try(struct xenbus_device *dev, enum xenbus_state state,
		    bool retry)
{
	lockdep_assert_held(&xcf.mutex);
	switch (state) {
	case XenbusStateInitWait:
		if (dev->state != XenbusStateInitialising &&
		    dev->state != XenbusStateClosed)
			break;
		if (!retry && xcf_backing_off())
			break;
		xcf_teardown(dev);
		if (xcf_setup(dev))
			xcf_strike();
		break;
	case XenbusStateClosed:
		if (dev->state == XenbusStateInitialised)
			xcf_strike();
		xcf_teardown(dev);
		/*
		 * Be ready for the backend to return (now, or later if it
		 * keeps failing), unless the toolstack is removing the device.
		 */
		if (xenbus_read_unsigned(dev->otherend, "online", 1) &&
		    (retry || !xcf_backing_off()))
			xenbus_switch_state(dev, XenbusStateInitialising);
		else if (dev->state != XenbusStateClosed)
			xenbus_frontend_closed(dev);
		break;
	default:
		break;
	}
}

static void xcf_retry_work(struct work_struct *work)
{
	struct xenbus_device *dev;

	mutex_lock(&xcf.mutex);
	dev = xcf.xdev;
	if (dev)
		xcf_try(dev, xenbus_read_driver_state(dev->otherend), true);
	mutex_unlock(&xcf.mutex);
}

static void xcf_backend_changed(struct xenbus_device *dev,
				enum xenbus_state state)
{
	if (dev != xcf.xdev) {
		/* An unused device: only let it close. */
		if ((state == XenbusStateClosing ||
		     state == XenbusStateClosed) &&
		    dev->state != XenbusStateClosed)
			xenbus_frontend_closed(dev);
		return;
	}

	mutex_lock(&xcf.mutex);
	switch (state) {
	case XenbusStateInitWait:
	case XenbusStateClosed:
		xcf_try(dev, state, false);
		break;
	case XenbusStateConnected:
		xcf_connect(dev);
		break;
	case XenbusStateClosing:
		/* Refused before ever connecting: that counts as a failure. */
		if (dev->state == XenbusStateInitialised)
			xcf_strike();
		xcf_teardown(dev);
		if (dev->state != XenbusStateClosed)
			xenbus_frontend_closed(dev);
		break;
	case XenbusStateUnknown:
		/* The backend's nodes are gone. */
		xcf_teardown(dev);
		break;
	default:
		break;
	}
	mutex_unlock(&xcf.mutex);
}

/* After a protocol error seen by the ring work: close the device. */
static void xcf_broken_work(struct work_struct *work)
{
	struct xenbus_device *dev;

	mutex_lock(&xcf.mutex);
	dev = xcf.xdev;
	if (dev && (dev->state == XenbusStateInitialised ||
		    dev->state == XenbusStateConnected)) {
		pr_warn_ratelimited("closing %s after a protocol error\n",
				    dev->nodename);
		xenbus_switch_state(dev, XenbusStateClosing);
	}
	mutex_unlock(&xcf.mutex);
}

static int xcf_probe(struct xenbus_device *dev,
		     const struct xenbus_device_id *id)
{
	const char *tail = strrchr(dev->nodename, '/');
	unsigned int devid;

	if (!tail || kstrtouint(tail + 1, 10, &devid) || devid) {
		/* One device serves every process; others stay idle. */
		dev_info(&dev->dev, "%s unused: only device 0 backs /dev/xcuda\n",
			 dev->nodename);
		return 0;
	}
	mutex_lock(&xcf.mutex);
	xcf.xdev = dev;
	spin_lock_irq(&xcf.lock);
	xcf.strikes = 0;
	spin_unlock_irq(&xcf.lock);
	/* A previous driver may have left the device Closed. */
	xenbus_switch_state(dev, XenbusStateInitialising);
	mutex_unlock(&xcf.mutex);
	return 0;
}

static bool xcf_backend_let_go(struct xenbus_device *dev)
{
	enum xenbus_state s = xenbus_read_driver_state(dev->otherend);

	return s == XenbusStateClosing || s == XenbusStateClosed ||
	       s == XenbusStateUnknown;
}

static void xcf_remove(struct xenbus_device *dev)
{
	unsigned int waited;

	if (dev != xcf.xdev)
		return;
	cancel_work_sync(&xcf.broken_work);
	cancel_delayed_work_sync(&xcf.retry_work);
	mutex_lock(&xcf.mutex);
	if (xcf_quiesce())
		pr_info_ratelimited("closing %s\n", dev->otherend);
	if (xcf.sring && !xcf_backend_let_go(dev)) {
		/* Give the backend a chance to unmap the ring first. */
		xenbus_switch_state(dev, XenbusStateClosing);
		for (waited = 0; waited < XCF_CLOSE_TIMEOUT_MS &&
		     !xcf_backend_let_go(dev); waited += 50)
			msleep(50);
	}
	xcf_teardown(dev);
	xcf_stale_abandon();
	xcf.xdev = NULL;
	mutex_unlock(&xcf.mutex);
}

static int xcf_resume(struct xenbus_device *dev)
{
	/* A restored guest has a new backend: sessions do not survive. */
	if (dev == xcf.xdev) {
		mutex_lock(&xcf.mutex);
		xcf_teardown(dev);
		mutex_unlock(&xcf.mutex);
	}
	return 0;
}

static const struct xenbus_device_id xcf_ids[] = {
	{ XCUDA_XS_TYPE },
	{ "" }
};

static struct xenbus_driver xcf_driver = {
	.ids = xcf_ids,
	.probe = xcf_probe,
	.remove = xcf_remove,
	.resume = xcf_resume,
	.otherend_changed = xcf_backend_changed,
	.not_essential = true,
};

static int __init xcf_init(void)
{
	int err;

	if (!xen_domain())
		return -ENODEV;
	BUILD_BUG_ON(XCF_MAX_SLOTS > 256);	/* free_idx[] is u8 */
	BUILD_BUG_ON(sizeof(struct xcuda_xsession_new_res) > XCUDA_RSP_INLINE);
	INIT_WORK(&xcf.broken_work, xcf_broken_work);
	INIT_WORK(&xcf.ring_work, xcf_ring_work);
	INIT_DELAYED_WORK(&xcf.retry_work, xcf_retry_work);

	err = misc_register(&xcf_misc);
	if (err)
		return err;
	/*
	 * With THIS_MODULE as owner, as every xenbus driver: xenbus holds a
	 * module reference while a device is bound, so the devices must be
	 * unbound (sysfs) before rmmod; unbinding runs xcf_remove().
	 */
	err = xenbus_register_frontend(&xcf_driver);
	if (err) {
		misc_deregister(&xcf_misc);
		return err;
	}
	return 0;
}

static void __exit xcf_exit(void)
{
	xenbus_unregister_driver(&xcf_driver);
	misc_deregister(&xcf_misc);
	cancel_work_sync(&xcf.ring_work);
	cancel_work_sync(&xcf.broken_work);
	cancel_delayed_work_sync(&xcf.retry_work);
}

module_init(xcf_init);
module_exit(xcf_exit);

MODULE_DESCRIPTION("xcuda: CUDA for Xen guests, frontend");
MODULE_LICENSE("GPL");
MODULE_ALIAS("xen:" XCUDA_XS_TYPE);
