// SPDX-License-Identifier: GPL-2.0
/*
 * The shared ring: the event channel's handler, the work item that takes
 * requests off the ring, and the one function that writes responses.
 *
 * The frontend owns req_prod and may write anything there at any time;
 * the work reads it once per pass, checks it, and copies each request out
 * of the ring exactly once before looking at it.
 */
#define pr_fmt(fmt) "xcuda-back: " fmt

#include <linux/interrupt.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <xen/events.h>
#include <xen/xenbus.h>

#include "common.h"

/* Requests per pass before the work yields the CPU to others. */
#define XCB_RING_BUDGET		128

irqreturn_t xcb_ring_irq(int irq, void *arg)
{
	struct xcb_dev *dev = arg;

	/* The channel stays masked until the work sends the late EOI. */
	set_bit(XCB_EOI_PENDING, &dev->flags);
	queue_work(xcb_wq, &dev->ring_work);
	return IRQ_HANDLED;
}

/*
 * Writes one response on the ring of connection @gen.  Once that
 * connection is gone the response is dropped: its requests went with it.
 */
void xcb_respond(struct xcb_dev *dev, u32 gen, const struct xcuda_response *rsp)
{
	struct xcuda_back_ring *ring = &dev->ring;
	bool notify;

	spin_lock(&dev->ring_lock);
	if (!dev->connected || dev->conn_gen != gen) {
		spin_unlock(&dev->ring_lock);
		return;
	}
	memcpy(RING_GET_RESPONSE(ring, ring->rsp_prod_pvt), rsp, sizeof(*rsp));
	ring->rsp_prod_pvt++;
	RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(ring, notify);
	if (notify)
		notify_remote_via_irq(dev->irq);
	/* A slot came free: requests the work left on the ring may go. */
	if (dev->ring_blocked) {
		dev->ring_blocked = false;
		queue_work(xcb_wq, &dev->ring_work);
	}
	spin_unlock(&dev->ring_lock);
}

/* Answers the request of header @h with @status and @len result bytes. */
void xcb_answer(struct xcb_dev *dev, u32 gen, const struct xcuda_req_hdr *h,
		u16 flags, s32 status, const void *out, u32 len)
{
	struct xcuda_response rsp = {
		.id = h->id,
		.op = h->op,
		.flags = h->flags | flags,
		.status = status,
		.len = len,
	};

	if (len)
		memcpy(rsp.out, out, len);
	xcb_respond(dev, gen, &rsp);
}

static void xcb_dispatch(struct xcb_dev *dev, const struct xcuda_request *req)
{
	switch (req->hdr.op) {
	case XCUDA_XOP_SESSION_NEW:
		xcb_session_new(dev, req);
		break;
	case XCUDA_XOP_SESSION_END:
		xcb_session_end_req(dev, req);
		break;
	default:
		/* A session's calls go over its data ring, never here. */
		xcb_answer(dev, dev->conn_gen, &req->hdr, 0, -EINVAL, NULL, 0);
		break;
	}
}

/*
 * The frontend claimed more requests than the ring can hold: it is broken
 * or hostile.  Stop answering, end its sessions, and close the device;
 * the rest of the teardown follows the frontend's state or remove().
 */
static void xcb_ring_broken(struct xcb_dev *dev, RING_IDX rp)
{
	pr_warn_ratelimited("dom%u/%u: bogus req_prod %u (req_cons %u), disconnecting\n",
			    dev->domid, dev->devid, rp, dev->ring.req_cons);
	spin_lock(&dev->ring_lock);
	dev->connected = false;
	spin_unlock(&dev->ring_lock);
	xcb_dev_end_sessions(dev);
	xenbus_dev_fatal(dev->xdev, -EPROTO, "bogus req_prod %u", rp);
}

/* True if the request at @rc may be taken: its response has a slot. */
static bool xcb_ring_slot(struct xcb_dev *dev, RING_IDX rc)
{
	bool full;

	spin_lock(&dev->ring_lock);
	full = RING_REQUEST_CONS_OVERFLOW(&dev->ring, rc);
	/* Set under the lock so that the next response cannot miss it. */
	if (full)
		dev->ring_blocked = true;
	spin_unlock(&dev->ring_lock);
	return !full;
}

void xcb_ring_work(struct work_struct *work)
{
	struct xcb_dev *dev = container_of(work, struct xcb_dev, ring_work);
	struct xcuda_back_ring *ring = &dev->ring;
	struct xcuda_request req;
	unsigned int budget = XCB_RING_BUDGET;
	RING_IDX rc, rp;
	bool bad;
	int more;

	/*
	 * Not connected: the ring is going away or not there yet.  An EOI
	 * still owed is kept for connect, which queues the work again.
	 */
	spin_lock(&dev->ring_lock);
	bad = !dev->connected;
	spin_unlock(&dev->ring_lock);
	if (bad)
		return;

	do {
		rp = READ_ONCE(ring->sring->req_prod);
		/* Read the requests only after the index that covers them. */
		virt_rmb();
		rc = ring->req_cons;

		spin_lock(&dev->ring_lock);
		bad = RING_REQUEST_PROD_OVERFLOW(ring, rp) ||
		      (RING_IDX)(rp - rc) > RING_SIZE(ring);
		spin_unlock(&dev->ring_lock);
		if (bad) {
			xcb_ring_broken(dev, rp);
			return;
		}

		while (rc != rp) {
			if (!xcb_ring_slot(dev, rc))
				goto eoi;
			RING_COPY_REQUEST(ring, rc, &req);
			ring->req_cons = ++rc;
			dev->work_done++;
			xcb_dispatch(dev, &req);
			if (!--budget) {
				/* The EOI waits for the pass that finishes. */
				queue_work(xcb_wq, work);
				return;
			}
		}

		/*
		 * Ask for an event at the next request, then look once more.
		 * It reads rsp_prod_pvt, which responses move under the lock.
		 * With every response slot taken it finds nothing more, but
		 * then the frontend has no room to post anything either.
		 */
		spin_lock(&dev->ring_lock);
		RING_FINAL_CHECK_FOR_REQUESTS(ring, more);
		spin_unlock(&dev->ring_lock);
	} while (more);
eoi:
	if (test_and_clear_bit(XCB_EOI_PENDING, &dev->flags)) {
		xen_irq_lateeoi(dev->irq,
				dev->work_done ? 0 : XEN_EOI_FLAG_SPURIOUS);
		dev->work_done = 0;
	}
}
