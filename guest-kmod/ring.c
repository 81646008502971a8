// SPDX-License-Identifier: GPL-2.0
/*
 * xcuda-front: session requests (SESSION_NEW, SESSION_END) onto the
 * control ring, their answers off it.
 *
 * The id of every request on the ring is the driver's own tag: the index
 * of a shadow entry in the low 32 bits, that entry's generation in the
 * high ones.  The shadow remembers who posted the request.  The backend
 * is not trusted: each response is copied out of the ring once, and only
 * the copy is looked at.  A backend that breaks the protocol is
 * disconnected and every session fails.
 *
 * The event channel is bound "late EOI", as blkfront's and netfront's
 * are since XSA-391: the handler only notes that an EOI is owed and
 * queues the work, which looks at the ring and then sends the EOI,
 * flagged spurious when it found nothing, so that a backend flooding the
 * channel makes the kernel hold its next events back instead of keeping
 * this guest in its interrupt handler.
 */
#define pr_fmt(fmt) "xcuda-front: " fmt

#include <linux/interrupt.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <xen/events.h>

#include "common.h"

/* Sets up an empty shadow table for a ring of @size entries. */
void xcf_ring_reset_locked(unsigned int size)
{
	unsigned int i;

	lockdep_assert_held(&xcf.lock);
	xcf.size = size;
	xcf.nr_free = 0;
	for (i = size; i-- > 0; ) {
		xcf.shadow[i].kind = XCF_SH_FREE;
		xcf.shadow[i].waiter = NULL;
		xcf.free_idx[xcf.nr_free++] = i;
	}
}

/* How many requests may be posted now. */
unsigned int xcf_room_locked(void)
{
	lockdep_assert_held(&xcf.lock);
	if (!xcf.connected)
		return 0;
	/* Equal unless a bug: each request holds one of each. */
	return min_t(unsigned int, xcf.nr_free,
		     RING_FREE_REQUESTS(&xcf.ring));
}

/*
 * Puts @req on the ring under a fresh tag; the caller checked for room.
 * @req is the driver's own copy: its id is overwritten.
 */
void xcf_post_locked(struct xcuda_request *req, enum xcf_kind kind,
		     struct xcf_waiter *w)
{
	struct xcf_shadow *sh;
	unsigned int idx;

	lockdep_assert_held(&xcf.lock);
	idx = xcf.free_idx[--xcf.nr_free];
	sh = &xcf.shadow[idx];
	sh->gen++;
	sh->kind = kind;
	sh->op = req->hdr.op;
	sh->id = req->hdr.id;
	sh->waiter = w;
	req->hdr.id = (u64)sh->gen << 32 | idx;
	memcpy(RING_GET_REQUEST(&xcf.ring, xcf.ring.req_prod_pvt), req,
	       sizeof(*req));
	xcf.ring.req_prod_pvt++;
}

/* Publishes what was posted and rings the backend if it asked. */
void xcf_kick_locked(void)
{
	int notify;

	lockdep_assert_held(&xcf.lock);
	RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&xcf.ring, notify);
	/* Under the lock: teardown clears ->connected before unbinding. */
	if (notify)
		notify_remote_via_irq(xcf.irq);
}

static void xcf_put_shadow_locked(unsigned int idx)
{
	struct xcf_shadow *sh = &xcf.shadow[idx];

	lockdep_assert_held(&xcf.lock);
	sh->kind = XCF_SH_FREE;
	sh->waiter = NULL;
	xcf.free_idx[xcf.nr_free++] = idx;
}

static void xcf_post_end_locked(u32 session)
{
	struct xcuda_request req = {
		.hdr.op = XCUDA_XOP_SESSION_END,
		.hdr.session = session,
	};

	lockdep_assert_held(&xcf.lock);
	xcf_post_locked(&req, XCF_SH_END, NULL);
}

/*
 * Ends @session in the backend without waiting for the answer.  Without
 * room on the ring, @spare (which this takes over; may be NULL) keeps
 * the request until responses make room.
 */
void xcf_queue_end_locked(u32 session, struct xcf_end *spare)
{
	lockdep_assert_held(&xcf.lock);
	if (!xcf.connected) {
		kfree(spare);
		return;
	}
	if (xcf_room_locked()) {
		xcf_post_end_locked(session);
		xcf_kick_locked();
		kfree(spare);
		return;
	}
	if (!spare) {
		pr_warn_ratelimited("no memory to end session %u\n", session);
		return;
	}
	spare->session = session;
	list_add_tail(&spare->node, &xcf.ends);
}

static void xcf_flush_ends_locked(void)
{
	struct xcf_end *e;
	bool posted = false;

	lockdep_assert_held(&xcf.lock);
	while (!list_empty(&xcf.ends) && xcf_room_locked()) {
		e = list_first_entry(&xcf.ends, struct xcf_end, node);
		list_del(&e->node);
		xcf_post_end_locked(e->session);
		kfree(e);
		posted = true;
	}
	if (posted)
		xcf_kick_locked();
}

/* The OPEN ioctl gave up on @w: its answer, if any, is not awaited. */
void xcf_forget_waiter_locked(struct xcf_waiter *w)
{
	unsigned int i;

	lockdep_assert_held(&xcf.lock);
	for (i = 0; i < xcf.size; i++)
		if (xcf.shadow[i].kind == XCF_SH_NEW &&
		    xcf.shadow[i].waiter == w)
			xcf.shadow[i].waiter = NULL;
}

/*
 * Every session fails: its process sees EPOLLHUP, waiters wake, nothing
 * in flight will be answered.  The ring is not used again until the next
 * setup.
 */
void xcf_fail_all_locked(void)
{
	struct xcf_session *s, *tmp;
	struct xcf_end *e, *etmp;
	unsigned int i;

	lockdep_assert_held(&xcf.lock);
	xcf.epoch++;
	list_for_each_entry_safe(s, tmp, &xcf.sessions, node) {
		s->gone = true;
		list_del_init(&s->node);
		wake_up_interruptible_all(&s->rq);
	}
	for (i = 0; i < xcf.size; i++) {
		struct xcf_shadow *sh = &xcf.shadow[i];

		if (sh->kind == XCF_SH_NEW && sh->waiter) {
			sh->waiter->err = -ENODEV;
			sh->waiter->done = true;
		}
		sh->kind = XCF_SH_FREE;
		sh->waiter = NULL;
	}
	xcf.nr_free = 0;
	list_for_each_entry_safe(e, etmp, &xcf.ends, node) {
		list_del(&e->node);
		kfree(e);
	}
	wake_up_all(&xcf.open_wq);
	wake_up_all(&xcf.ring_wq);
}

/* The backend broke the protocol: stop using the ring, then close. */
static void xcf_broken_locked(void)
{
	lockdep_assert_held(&xcf.lock);
	xcf.live = false;
	xcf.connected = false;
	xcf.strikes++;
	xcf_fail_all_locked();
	schedule_work(&xcf.broken_work);
}

/* An answer to a SESSION_NEW nobody waits for: end what it created. */
static void xcf_end_orphan_locked(const struct xcuda_response *rsp)
{
	struct xcuda_xsession_new_res res;

	lockdep_assert_held(&xcf.lock);
	if (rsp->status || rsp->len < sizeof(res))
		return;
	memcpy(&res, rsp->out, sizeof(res));
	if (res.session)
		xcf_queue_end_locked(res.session,
				     kmalloc(sizeof(struct xcf_end),
					     GFP_ATOMIC));
}

/* Matches one copied response to its request; false if it is bogus. */
static bool xcf_complete_locked(const struct xcuda_response *rsp)
{
	u32 idx = lower_32_bits(rsp->id);
	struct xcf_waiter *w;
	struct xcf_shadow *sh;

	lockdep_assert_held(&xcf.lock);
	if (idx >= xcf.size)
		goto bad;
	sh = &xcf.shadow[idx];
	if (sh->kind == XCF_SH_FREE || sh->gen != upper_32_bits(rsp->id) ||
	    sh->op != rsp->op || rsp->len > XCUDA_RSP_INLINE)
		goto bad;

	xcf.strikes = 0;
	switch (sh->kind) {
	case XCF_SH_NEW:
		w = sh->waiter;
		/* Free first: ending an orphan needs the room. */
		xcf_put_shadow_locked(idx);
		if (w) {
			w->rsp = *rsp;
			w->done = true;
			wake_up_all(&xcf.open_wq);
		} else {
			xcf_end_orphan_locked(rsp);
		}
		break;
	default:
		xcf_put_shadow_locked(idx);
		break;
	}
	return true;

bad:
	pr_warn_ratelimited("bogus response (id %#llx op %#x len %u); disconnecting\n",
			    rsp->id, rsp->op, rsp->len);
	return false;
}

/* Takes every response off the ring; true if there was any. */
static bool xcf_poll_ring_locked(void)
{
	/* Bounds the loop against a backend that keeps moving rsp_prod. */
	unsigned int passes = xcf.size + 2;
	struct xcuda_response rsp;
	RING_IDX rp, cons;
	bool freed = false;
	int more;

	lockdep_assert_held(&xcf.lock);
	do {
		rp = READ_ONCE(xcf.ring.sring->rsp_prod);
		virt_rmb();	/* read responses after the producer index */
		cons = xcf.ring.rsp_cons;
		/*
		 * Never more responses than requests in flight (stricter than
		 * RING_RESPONSE_PROD_OVERFLOW(), which allows a whole ring).
		 */
		if (rp - cons > xcf.ring.req_prod_pvt - cons) {
			pr_warn_ratelimited("response producer %u beyond requests (%u..%u); disconnecting\n",
					    rp, cons, xcf.ring.req_prod_pvt);
			xcf_broken_locked();
			return true;
		}
		while (cons != rp) {
			RING_COPY_RESPONSE(&xcf.ring, cons, &rsp);
			xcf.ring.rsp_cons = ++cons;
			if (!xcf_complete_locked(&rsp)) {
				xcf_broken_locked();
				return true;
			}
			freed = true;
		}
		/* Ask for an event on the next response, then look again. */
		RING_FINAL_CHECK_FOR_RESPONSES(&xcf.ring, more);
	} while (more && --passes);
	if (freed) {
		xcf_flush_ends_locked();
		wake_up_all(&xcf.ring_wq);
	}
	return freed;
}

irqreturn_t xcf_interrupt(int irq, void *dev_id)
{
	/* The channel stays masked until the work sends the late EOI. */
	set_bit(XCF_EOI_PENDING, &xcf.flags);
	schedule_work(&xcf.ring_work);
	return IRQ_HANDLED;
}

void xcf_ring_work(struct work_struct *work)
{
	bool found;
	int irq;

	spin_lock_irq(&xcf.lock);
	irq = xcf.irq;
	/*
	 * Not live: the ring is broken (the channel stays masked) or going
	 * away, and setup clears an EOI still owed.  No irq yet: setup
	 * queues the work again once it has one.
	 */
	if (!xcf.live || irq < 0) {
		spin_unlock_irq(&xcf.lock);
		return;
	}
	found = xcf_poll_ring_locked();
	spin_unlock_irq(&xcf.lock);
	/* Teardown unbinds only after it cancelled this work. */
	if (test_and_clear_bit(XCF_EOI_PENDING, &xcf.flags))
		xen_irq_lateeoi(irq, found ? 0 : XEN_EOI_FLAG_SPURIOUS);
}
