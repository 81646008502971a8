// SPDX-License-Identifier: GPL-2.0
/*
 * The xenbus side: probe and remove, the xenstore state machine that
 * docs/protocol.md describes, and mapping the frontend's ring.
 *
 * Every value read from the frontend's directory comes from the guest
 * and is checked before use.  The limits and the upstream in the
 * backend's own directory come from the toolstack and are checked too.
 */
#define pr_fmt(fmt) "xcuda-back: " fmt

#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <xen/events.h>
#include <xen/page.h>
#include <xen/xenbus.h>

#include "common.h"

/*
 * Reads one of the toolstack's limits from our own directory: @def when
 * the node is absent (0 for max-gpumem-bytes: xcudad's default), else a
 * number in [1, @max].
 */
static int xcb_read_limit(struct xenbus_device *xdev, const char *node,
			  u64 def, u64 max, u64 *val)
{
	int err;

	err = xenbus_scanf(XBT_NIL, xdev->nodename, node, "%llu", val);
	if (err == -ENOENT) {
		*val = def;
		return 0;
	}
	if (err == 1 && *val && *val <= max)
		return 0;
	err = err < 0 ? err : -ERANGE;
	xenbus_dev_fatal(xdev, err, "reading %s", node);
	return err;
}

/*
 * The toolstack's upstream (HOST:PORT) from our own directory, into @buf
 * of @size bytes: "" when the node is absent, else shorter than @size and
 * only of A-Z a-z 0-9 . : _ [ ] - (xcudad parses the rest).
 */
static int xcb_read_upstream(struct xenbus_device *xdev, char *buf,
			     size_t size)
{
	unsigned int len, i;
	char *s;
	int err;

	s = xenbus_read(XBT_NIL, xdev->nodename, XCUDA_XS_UPSTREAM, &len);
	if (IS_ERR(s)) {
		err = PTR_ERR(s);
		if (err == -ENOENT) {
			buf[0] = '\0';
			return 0;
		}
		goto fatal;
	}
	err = -ERANGE;
	if (len >= size || strlen(s) != len)
		goto fatal_free;
	for (i = 0; i < len; i++) {
		if (!isascii(s[i]) ||
		    !(isalnum(s[i]) || strchr(".:_[]-", s[i])))
			goto fatal_free;
	}
	strscpy(buf, s, size);
	kfree(s);
	return 0;

fatal_free:
	kfree(s);
fatal:
	xenbus_dev_fatal(xdev, err, "reading %s", XCUDA_XS_UPSTREAM);
	return err;
}

/*
 * The toolstack's limits and upstream, from our own directory; absent
 * means the default (no upstream).
 */
static int xcb_read_limits(struct xcb_dev *dev)
{
	struct xenbus_device *xdev = dev->xdev;
	u64 v;
	int err;

	err = xcb_read_limit(xdev, XCUDA_XS_MAX_SESSIONS,
			     XCUDA_XEN_DEF_SESSIONS, XCUDA_XEN_MAX_SESSIONS, &v);
	if (err)
		return err;
	dev->max_sessions = v;

	err = xcb_read_limit(xdev, XCUDA_XS_MAX_ARENA, XCUDA_XEN_DEF_ARENA,
			     XCUDA_XEN_MAX_ARENA, &v);
	if (err)
		return err;
	if (v % XCUDA_PAGE_SIZE) {
		xenbus_dev_fatal(xdev, -ERANGE, "reading %s",
				 XCUDA_XS_MAX_ARENA);
		return -ERANGE;
	}
	dev->max_arena = v;

	err = xcb_read_limit(xdev, XCUDA_XS_MAX_GPUMEM, 0,
			     XCUDA_XEN_MAX_GPUMEM, &v);
	if (err)
		return err;
	dev->max_gpumem = v;

	return xcb_read_upstream(xdev, dev->upstream, sizeof(dev->upstream));
}

/* What the frontend reads before it sets up the ring. */
static int xcb_publish(struct xcb_dev *dev)
{
	struct xenbus_device *xdev = dev->xdev;
	struct xenbus_transaction xbt;
	const char *what;
	int err;

again:
	err = xenbus_transaction_start(&xbt);
	if (err) {
		xenbus_dev_fatal(xdev, err, "starting transaction");
		return err;
	}
	what = XCUDA_XS_VERSIONS;
	err = xenbus_printf(xbt, xdev->nodename, what, "%u",
			    XCUDA_XEN_VERSION);
	if (err)
		goto abort;
	what = XCUDA_XS_MAX_RING_ORDER;
	err = xenbus_printf(xbt, xdev->nodename, what, "%u",
			    XCUDA_MAX_RING_ORDER);
	if (err)
		goto abort;
	/* The limits in force, so that the frontend can always read them. */
	what = XCUDA_XS_MAX_SESSIONS;
	if (!xenbus_exists(xbt, xdev->nodename, what)) {
		err = xenbus_printf(xbt, xdev->nodename, what, "%u",
				    dev->max_sessions);
		if (err)
			goto abort;
	}
	what = XCUDA_XS_MAX_ARENA;
	if (!xenbus_exists(xbt, xdev->nodename, what)) {
		err = xenbus_printf(xbt, xdev->nodename, what, "%llu",
				    dev->max_arena);
		if (err)
			goto abort;
	}
	err = xenbus_transaction_end(xbt, 0);
	if (err == -EAGAIN)
		goto again;
	if (err)
		xenbus_dev_fatal(xdev, err, "completing transaction");
	return err;

abort:
	xenbus_transaction_end(xbt, 1);
	xenbus_dev_fatal(xdev, err, "writing %s", what);
	return err;
}

/* The frontend's choice among our versions: only "1" exists. */
static int xcb_check_version(struct xenbus_device *xdev)
{
	unsigned int version;
	int err;

	err = xenbus_scanf(XBT_NIL, xdev->otherend, XCUDA_XS_VERSION, "%u",
			   &version);
	if (err < 0)
		return err;
	return version == XCUDA_XEN_VERSION ? 0 : -EPROTONOSUPPORT;
}

/* Reads the frontend's ring description, maps the ring, binds the channel. */
static int xcb_connect(struct xcb_dev *dev)
{
	struct xenbus_device *xdev = dev->xdev;
	grant_ref_t refs[1 << XCUDA_MAX_RING_ORDER];
	unsigned int order, nr, evtchn, i;
	struct xcuda_sring *sring;
	char node[sizeof(XCUDA_XS_RING_REF) + 3];
	void *va;
	int err, irq;

	BUILD_BUG_ON((1 << XCUDA_MAX_RING_ORDER) > XENBUS_MAX_RING_GRANTS);
	BUILD_BUG_ON(XCUDA_XEN_MAX_SESSIONS != 1 << XCB_SLOT_BITS);

	err = xcb_check_version(xdev);
	if (err) {
		xenbus_dev_fatal(xdev, err, "reading %s/%s", xdev->otherend,
				 XCUDA_XS_VERSION);
		return err;
	}
	/* Absent: one page, named ring-ref. */
	order = xenbus_read_unsigned(xdev->otherend, XCUDA_XS_RING_ORDER, 0);
	if (order > XCUDA_MAX_RING_ORDER) {
		err = -ERANGE;
		xenbus_dev_fatal(xdev, err, "%s/%s %u is above %u",
				 xdev->otherend, XCUDA_XS_RING_ORDER, order,
				 XCUDA_MAX_RING_ORDER);
		return err;
	}
	nr = 1u << order;
	for (i = 0; i < nr; i++) {
		if (order)
			snprintf(node, sizeof(node), "%s%u", XCUDA_XS_RING_REF,
				 i);
		else
			strscpy(node, XCUDA_XS_RING_REF, sizeof(node));
		err = xenbus_scanf(XBT_NIL, xdev->otherend, node, "%u",
				   &refs[i]);
		if (err != 1) {
			err = err < 0 ? err : -EINVAL;
			xenbus_dev_fatal(xdev, err, "reading %s/%s",
					 xdev->otherend, node);
			return err;
		}
	}
	err = xenbus_scanf(XBT_NIL, xdev->otherend, XCUDA_XS_EVTCHN, "%u",
			   &evtchn);
	if (err != 1) {
		err = err < 0 ? err : -EINVAL;
		xenbus_dev_fatal(xdev, err, "reading %s/%s", xdev->otherend,
				 XCUDA_XS_EVTCHN);
		return err;
	}

	mutex_lock(&dev->conn_lock);
	err = xenbus_map_ring_valloc(xdev, refs, nr, &va);
	if (err) {
		xenbus_dev_fatal(xdev, err, "mapping the ring");
		goto err_unlock;
	}
	sring = va;

	/* Nothing answers or takes requests until connected is set. */
	spin_lock(&dev->ring_lock);
	BACK_RING_INIT(&dev->ring, sring, XEN_PAGE_SIZE << order);
	dev->ring_blocked = false;
	spin_unlock(&dev->ring_lock);
	/* An EOI owed to the previous connection's channel is void. */
	clear_bit(XCB_EOI_PENDING, &dev->flags);
	dev->work_done = 0;

	irq = bind_interdomain_evtchn_to_irqhandler_lateeoi(xdev, evtchn,
							    xcb_ring_irq, 0,
							    "xcuda-back", dev);
	if (irq < 0) {
		err = irq;
		xenbus_dev_fatal(xdev, err, "binding event channel %u", evtchn);
		goto err_unmap;
	}

	mutex_lock(&xcb_ctl.lock);
	dev->gone_sent = false;
	mutex_unlock(&xcb_ctl.lock);

	dev->ring_va = va;
	spin_lock(&dev->ring_lock);
	dev->irq = irq;
	dev->conn_gen++;
	dev->connected = true;
	spin_unlock(&dev->ring_lock);
	mutex_unlock(&dev->conn_lock);

	/* Requests, and an EOI, may be waiting since the bind. */
	queue_work(xcb_wq, &dev->ring_work);
	pr_info_ratelimited("dom%u/%u: connected: ring of %u pages (%u slots), event channel %u\n",
			    dev->domid, dev->devid, nr, RING_SIZE(&dev->ring),
			    evtchn);
	return 0;

err_unmap:
	xenbus_unmap_ring_vfree(xdev, va);
err_unlock:
	mutex_unlock(&dev->conn_lock);
	return err;
}

/* Ends the connection, if any; idempotent. */
static void xcb_disconnect(struct xcb_dev *dev)
{
	mutex_lock(&dev->conn_lock);
	if (!dev->ring_va) {
		mutex_unlock(&dev->conn_lock);
		return;
	}
	/* First no more responses, then no more requests, then no events. */
	spin_lock(&dev->ring_lock);
	dev->connected = false;
	spin_unlock(&dev->ring_lock);
	cancel_work_sync(&dev->ring_work);
	unbind_from_irqhandler(dev->irq, dev);
	/* The handler may have queued it once more before the unbind. */
	cancel_work_sync(&dev->ring_work);

	xcb_dev_end_sessions(dev);

	xenbus_unmap_ring_vfree(dev->xdev, dev->ring_va);
	dev->ring_va = NULL;
	spin_lock(&dev->ring_lock);
	dev->irq = -1;
	spin_unlock(&dev->ring_lock);
	mutex_unlock(&dev->conn_lock);
	pr_info_ratelimited("dom%u/%u: disconnected\n", dev->domid,
			    dev->devid);
}

static void xcb_frontend_changed(struct xenbus_device *xdev,
				 enum xenbus_state state)
{
	struct xcb_dev *dev = dev_get_drvdata(&xdev->dev);

	switch (state) {
	case XenbusStateInitialising:
		/*
		 * The frontend starts over (reloaded, or restarted without
		 * closing): whatever we had is stale; offer a new connection.
		 */
		if (xdev->state != XenbusStateInitWait) {
			xcb_disconnect(dev);
			xenbus_switch_state(xdev, XenbusStateInitWait);
		}
		break;

	case XenbusStateInitialised:
	case XenbusStateConnected:
		/* Two watches may fire before we look: connect once. */
		if (xdev->state == XenbusStateConnected)
			break;
		xcb_disconnect(dev);
		if (!xcb_connect(dev))
			xenbus_switch_state(xdev, XenbusStateConnected);
		break;

	case XenbusStateClosing:
		xcb_disconnect(dev);
		xenbus_switch_state(xdev, XenbusStateClosing);
		break;

	case XenbusStateClosed:
		xcb_disconnect(dev);
		xenbus_switch_state(xdev, XenbusStateClosed);
		/* Detached by the toolstack (online 0): the device goes. */
		if (!xenbus_dev_is_online(xdev))
			device_unregister(&xdev->dev);
		break;

	case XenbusStateUnknown:
		/*
		 * The frontend's nodes are gone (domain destroyed), or not
		 * written yet while we wait in InitWait.  The device itself
		 * goes when the toolstack removes our nodes.
		 */
		if (xdev->state == XenbusStateInitWait)
			break;
		xcb_disconnect(dev);
		xenbus_switch_state(xdev, XenbusStateClosed);
		break;

	default:
		xenbus_dev_fatal(xdev, -EINVAL, "frontend in state %d", state);
		break;
	}
}

static int xcb_probe(struct xenbus_device *xdev,
		     const struct xenbus_device_id *id)
{
	struct xcb_dev *dev;
	const char *p;
	int err;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		xenbus_dev_fatal(xdev, -ENOMEM, "allocating backend");
		return -ENOMEM;
	}
	kref_init(&dev->kref);
	dev->xdev = xdev;
	dev->domid = xdev->otherend_id;
	dev->irq = -1;
	mutex_init(&dev->conn_lock);
	spin_lock_init(&dev->ring_lock);
	mutex_init(&dev->lock);
	INIT_WORK(&dev->ring_work, xcb_ring_work);
	atomic_set(&dev->nr_lingering, 0);

	/* backend/xcuda/<domid>/<devid> */
	p = strrchr(xdev->nodename, '/');
	err = p ? kstrtouint(p + 1, 10, &dev->devid) : -EINVAL;
	if (err) {
		xenbus_dev_fatal(xdev, err, "parsing %s", xdev->nodename);
		goto err_put;
	}
	dev->dom = xcb_domain_get(dev->domid);
	if (!dev->dom) {
		err = -ENOMEM;
		xenbus_dev_fatal(xdev, err, "allocating backend");
		goto err_put;
	}
	err = xcb_read_limits(dev);
	if (err)
		goto err_put;
	err = xcb_publish(dev);
	if (err)
		goto err_put;

	dev_set_drvdata(&xdev->dev, dev);
	err = xenbus_switch_state(xdev, XenbusStateInitWait);
	if (err)
		goto err_drvdata;

	pr_info("dom%u/%u: probed: %u sessions, arena up to %llu bytes, gpumem %llu%s%s\n",
		dev->domid, dev->devid, dev->max_sessions, dev->max_arena,
		dev->max_gpumem, dev->upstream[0] ? ", upstream " : "",
		dev->upstream);
	return 0;

err_drvdata:
	dev_set_drvdata(&xdev->dev, NULL);
err_put:
	xcb_dev_put(dev);
	return err;
}

static void xcb_remove(struct xenbus_device *xdev)
{
	struct xcb_dev *dev = dev_get_drvdata(&xdev->dev);

	xcb_disconnect(dev);
	dev_set_drvdata(&xdev->dev, NULL);
	/* Sessions may outlive the device; they never use xdev. */
	dev->xdev = NULL;
	pr_info("dom%u/%u: removed\n", dev->domid, dev->devid);
	xcb_dev_put(dev);
}

/*
 * sysfs, beside the device (xcuda-<domid>-<devid>): what the device's
 * domain holds in Dom0's grant table, against max_domain_grants, and how
 * much of it belongs to ended sessions whose pages the guest still maps.
 */
static ssize_t domain_grants_show(struct device *d,
				  struct device_attribute *attr, char *buf)
{
	struct xcb_dev *dev = dev_get_drvdata(d);
	unsigned long held, lingering;

	if (!dev)
		return -ENODEV;
	xcb_grants_read(dev->dom, &held, &lingering);
	return sysfs_emit(buf, "%lu\n", held);
}
static DEVICE_ATTR_RO(domain_grants);

static ssize_t lingering_grants_show(struct device *d,
				     struct device_attribute *attr, char *buf)
{
	struct xcb_dev *dev = dev_get_drvdata(d);
	unsigned long held, lingering;

	if (!dev)
		return -ENODEV;
	xcb_grants_read(dev->dom, &held, &lingering);
	return sysfs_emit(buf, "%lu\n", lingering);
}
static DEVICE_ATTR_RO(lingering_grants);

/* This device's ended sessions that still hold a slot for that reason. */
static ssize_t lingering_sessions_show(struct device *d,
				       struct device_attribute *attr,
				       char *buf)
{
	struct xcb_dev *dev = dev_get_drvdata(d);

	if (!dev)
		return -ENODEV;
	return sysfs_emit(buf, "%d\n", atomic_read(&dev->nr_lingering));
}
static DEVICE_ATTR_RO(lingering_sessions);

static struct attribute *xcb_dev_attrs[] = {
	&dev_attr_domain_grants.attr,
	&dev_attr_lingering_grants.attr,
	&dev_attr_lingering_sessions.attr,
	NULL
};
ATTRIBUTE_GROUPS(xcb_dev);

static const struct xenbus_device_id xcb_ids[] = {
	{ XCUDA_XS_TYPE },
	{ "" }
};

static struct xenbus_driver xcb_driver = {
	.ids = xcb_ids,
	.probe = xcb_probe,
	.otherend_changed = xcb_frontend_changed,
	.remove = xcb_remove,
	/* Added after probe(), removed before remove(): drvdata is set. */
	.driver.dev_groups = xcb_dev_groups,
};

int xcb_xenbus_register(void)
{
	/* The macro form: xenbus holds THIS_MODULE while a device is bound. */
	return xenbus_register_backend(&xcb_driver);
}

void xcb_xenbus_unregister(void)
{
	xenbus_unregister_driver(&xcb_driver);
}
