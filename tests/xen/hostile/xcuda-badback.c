// SPDX-License-Identifier: GPL-2.0
/*
 * xcuda-badback: a test-only xenbus backend of type "xcuda" for Dom0.
 *
 * It stands in for xcuda-back (which must be unloaded first) and breaks
 * the protocol in the one way its case= parameter names, so that the
 * rig can show that xcuda-front treats every byte from Dom0 as hostile:
 * the guest's kernel must not crash, hang or leak, and the guest's
 * program must get an error.
 *
 * Answers to SESSION_NEW (the session is never served: no worker, no
 * event channel bound):
 *   nr-large      nr_pages one more than the arena and ring make
 *   nr-zero       nr_pages and arena_size 0
 *   nr-huge       nr_pages 2^32 - 1, arena_size 16 TiB
 *   nr-4g         a consistent 4 GiB arena whose directory is no grant
 *   arena-more    a consistent arena larger than the one asked for
 *   order-more    a data ring larger than the one asked for
 *   session-zero  session id 0
 *   status-bad    status -600, not an errno value
 *   dir-loop      a chain of three directory pages whose second points
 *                 back to the first
 *   dir-short     a chain of one page where two are due
 *   dir-bogus     a directory grant that was never made
 *   dir-foreign   a directory page granted to another domain
 *   dir-reserved  directory grant 3 (a reserved entry)
 *   arena-bogus   the arena's grants after its first page never made
 *   arena-ro      the arena granted read-only
 *   closed        a well-formed session whose header says closed
 * Responses on the control ring:
 *   rsp-ahead     rsp_prod four past the one response owed
 *   rsp-wrap      rsp_prod moved by 2^31
 *   id-forged     the request's slot under another generation
 *   id-dup        the first request's answer twice, once a second
 *                 request is in flight (the second is never answered)
 *   op-wrong      the answer carries SESSION_END's opcode
 *   len-big       len 41, past the inline result bytes
 *   silent        never answers
 * xenstore and states:
 *   early-connect Connected at once: no versions, no ring mapped
 *   no-versions   InitWait without a versions node
 *   order-huge    max-ring-page-order 4294967295 and versions "x,2,99";
 *                 then as closed
 *   state-cycle   for cycle_ms, each ring is mapped, Connected, then
 *                 Closed at once, and kept mapped: a frontend that set
 *                 up ring after ring would pin its memory without bound
 *
 * SESSION_END is answered 0 and ends the grants of the sessions made so
 * far ("SESSION_END <id>: N grants ended, M still mapped").  On removal it
 * logs "SUMMARY case=<c> requests=N new=N end=N rings=N".
 */
#define pr_fmt(fmt) "xcuda-badback: " fmt

#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <xen/events.h>
#include <xen/grant_table.h>
#include <xen/page.h>
#include <xen/xen.h>
#include <xen/xenbus.h>

#include "xcuda/proto.h"
#include "xcuda/xen.h"

static char *xbb_case = "";
module_param_named(case, xbb_case, charp, 0444);
MODULE_PARM_DESC(case, "the misbehaviour (see the source)");

static unsigned int cycle_ms = 20000;
module_param(cycle_ms, uint, 0444);
MODULE_PARM_DESC(cycle_ms, "state-cycle: how long to cycle");

enum xbb_id {
	C_NR_LARGE, C_NR_ZERO, C_NR_HUGE, C_NR_4G, C_ARENA_MORE, C_ORDER_MORE,
	C_SESSION_ZERO, C_STATUS_BAD, C_DIR_LOOP, C_DIR_SHORT, C_DIR_BOGUS,
	C_DIR_FOREIGN, C_DIR_RESERVED, C_ARENA_BOGUS, C_ARENA_RO, C_CLOSED,
	C_RSP_AHEAD, C_RSP_WRAP, C_ID_FORGED, C_ID_DUP, C_OP_WRONG, C_LEN_BIG,
	C_SILENT, C_EARLY_CONNECT, C_NO_VERSIONS, C_ORDER_HUGE, C_STATE_CYCLE,
};

static const char *const xbb_names[] = {
	[C_NR_LARGE] = "nr-large",
	[C_NR_ZERO] = "nr-zero",
	[C_NR_HUGE] = "nr-huge",
	[C_NR_4G] = "nr-4g",
	[C_ARENA_MORE] = "arena-more",
	[C_ORDER_MORE] = "order-more",
	[C_SESSION_ZERO] = "session-zero",
	[C_STATUS_BAD] = "status-bad",
	[C_DIR_LOOP] = "dir-loop",
	[C_DIR_SHORT] = "dir-short",
	[C_DIR_BOGUS] = "dir-bogus",
	[C_DIR_FOREIGN] = "dir-foreign",
	[C_DIR_RESERVED] = "dir-reserved",
	[C_ARENA_BOGUS] = "arena-bogus",
	[C_ARENA_RO] = "arena-ro",
	[C_CLOSED] = "closed",
	[C_RSP_AHEAD] = "rsp-ahead",
	[C_RSP_WRAP] = "rsp-wrap",
	[C_ID_FORGED] = "id-forged",
	[C_ID_DUP] = "id-dup",
	[C_OP_WRONG] = "op-wrong",
	[C_LEN_BIG] = "len-big",
	[C_SILENT] = "silent",
	[C_EARLY_CONNECT] = "early-connect",
	[C_NO_VERSIONS] = "no-versions",
	[C_ORDER_HUGE] = "order-huge",
	[C_STATE_CYCLE] = "state-cycle",
};

/* Pages granted at once, all sessions together. */
#define XBB_MAX_GRANTS		64
/* state-cycle: rings kept mapped at most (Dom0's address space). */
#define XBB_MAX_HELD		256
/* A grant reference beyond any grant table here. */
#define XBB_BOGUS_REF		0x00fffff0u
/* Arena grants that are never made: distinct, above any real one. */
#define XBB_FAKE_REF(i)		(0x00800000u + (i))

static struct {
	struct mutex lock;		/* everything below */
	enum xbb_id c;
	struct xenbus_device *dev;
	void *ring_va;			/* the frontend's ring, mapped */
	struct xcuda_back_ring ring;
	int irq;
	bool eoi;			/* an EOI is owed */
	struct work_struct work;
	unsigned long cycle_end;	/* jiffies */
	void *held[XBB_MAX_HELD];	/* state-cycle's rings */
	unsigned int nr_held;
	struct page *pages[XBB_MAX_GRANTS];
	grant_ref_t refs[XBB_MAX_GRANTS];
	unsigned int nr_grants;
	u32 next_session;
	struct xcuda_response first;	/* id-dup: the answer held back */
	bool held_new;
	unsigned int requests, news, ends, rings;
} xbb = {
	.lock = __MUTEX_INITIALIZER(xbb.lock),
	.irq = -1,
	.next_session = 0x100,
};

/* ------------------------------------------------------------------ */
/* Grants                                                              */

/* Grants a fresh zeroed page to @domid; its reference, or -errno. */
static int xbb_grant(domid_t domid, bool ro, void **va)
{
	struct page *page;
	int ref;

	if (xbb.nr_grants == XBB_MAX_GRANTS)
		return -ENOSPC;
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!page)
		return -ENOMEM;
	ref = gnttab_grant_foreign_access(domid, xen_page_to_gfn(page), ro);
	if (ref < 0) {
		__free_page(page);
		return ref;
	}
	xbb.pages[xbb.nr_grants] = page;
	xbb.refs[xbb.nr_grants++] = ref;
	if (va)
		*va = page_address(page);
	return ref;
}

/*
 * Ends every grant made so far; says how many the guest still maps
 * (those pages go to the grant code, which frees them once unmapped).
 */
static unsigned int xbb_ungrant_all(void)
{
	unsigned int i, mapped = 0;

	for (i = 0; i < xbb.nr_grants; i++) {
		if (gnttab_try_end_foreign_access(xbb.refs[i])) {
			__free_page(xbb.pages[i]);
		} else {
			mapped++;
			gnttab_end_foreign_access(xbb.refs[i], xbb.pages[i]);
		}
	}
	xbb.nr_grants = 0;
	return mapped;
}

/*
 * A directory of @nr references from @refs, on one page granted
 * read-only to @to; its reference, or -errno.
 */
static int xbb_dir_page(domid_t to, const u32 *refs, unsigned int nr,
			u32 next, struct xcuda_page_directory **out)
{
	struct xcuda_page_directory *d;
	unsigned int i;
	int ref;

	ref = xbb_grant(to, true, (void **)&d);
	if (ref < 0)
		return ref;
	d->next = cpu_to_le32(next);
	for (i = 0; i < nr && i < XCUDA_DIR_REFS; i++)
		d->refs[i] = cpu_to_le32(refs[i]);
	if (out)
		*out = d;
	return ref;
}

/*
 * A small session, as xcuda-back makes one: header, a data ring of one
 * page, @arena pages; the header says closed.  The arena's grants are
 * read-only (@ro), or only the first is made (@bogus).  Fills
 * @res->dir_ref; 0 or -errno.
 */
static int xbb_small(domid_t domid, unsigned int arena, bool ro, bool bogus,
		     domid_t dir_to, struct xcuda_xsession_new_res *res)
{
	u32 refs[XCUDA_XEN_DATA_PAGES(0) + 4];
	struct xcuda_data_intf *intf;
	struct xcuda_sring *sring;
	unsigned int i, nr = XCUDA_XEN_DATA_PAGES(0) + arena;
	int ref;

	if (nr > ARRAY_SIZE(refs))
		return -EINVAL;
	ref = xbb_grant(domid, false, (void **)&intf);
	if (ref < 0)
		return ref;
	refs[0] = ref;
	intf->closed = 1;
	ref = xbb_grant(domid, false, (void **)&sring);
	if (ref < 0)
		return ref;
	refs[1] = ref;
	SHARED_RING_INIT(sring);
	for (i = 2; i < nr; i++) {
		if (bogus && i > 2) {
			refs[i] = XBB_FAKE_REF(i);
			continue;
		}
		ref = xbb_grant(domid, ro, NULL);
		if (ref < 0)
			return ref;
		refs[i] = ref;
	}
	ref = xbb_dir_page(dir_to, refs, nr, 0, NULL);
	if (ref < 0)
		return ref;
	res->dir_ref = ref;
	res->ring_order = 0;
	res->arena_size = (u64)arena * XCUDA_PAGE_SIZE;
	res->nr_pages = nr;
	return 0;
}

/*
 * A directory for @nr shared pages whose grants were never made, laid
 * out wrong: dir-loop chains three pages' worth as page 0 -> page 1 ->
 * page 0; dir-short gives one page where two are due.
 */
static int xbb_bad_chain(domid_t domid, bool loop, u32 nr,
			 struct xcuda_xsession_new_res *res)
{
	static u32 fake[XCUDA_DIR_REFS];
	struct xcuda_page_directory *d0;
	unsigned int i;
	int r0, r1;

	for (i = 0; i < XCUDA_DIR_REFS; i++)
		fake[i] = XBB_FAKE_REF(i);
	r0 = xbb_dir_page(domid, fake, XCUDA_DIR_REFS, 0, &d0);
	if (r0 < 0)
		return r0;
	if (loop) {
		r1 = xbb_dir_page(domid, fake, XCUDA_DIR_REFS, r0, NULL);
		if (r1 < 0)
			return r1;
		d0->next = cpu_to_le32(r1);
	}
	res->dir_ref = r0;
	res->ring_order = 0;
	res->nr_pages = nr;
	res->arena_size = (u64)(nr - XCUDA_XEN_DATA_PAGES(0)) *
			  XCUDA_PAGE_SIZE;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The control ring                                                    */

static void xbb_push(const struct xcuda_response *rsp)
{
	memcpy(RING_GET_RESPONSE(&xbb.ring, xbb.ring.rsp_prod_pvt), rsp,
	       sizeof(*rsp));
	xbb.ring.rsp_prod_pvt++;
	RING_PUSH_RESPONSES(&xbb.ring);
}

static void xbb_end(const struct xcuda_request *req)
{
	struct xcuda_response rsp = {
		.id = req->hdr.id,
		.op = req->hdr.op,
		.flags = req->hdr.flags,
	};
	unsigned int n = xbb.nr_grants, mapped;

	xbb.ends++;
	mapped = xbb_ungrant_all();
	pr_info("SESSION_END %u: %u grants ended, %u still mapped\n",
		req->hdr.session, n - mapped, mapped);
	xbb_push(&rsp);
}

/* SESSION_NEW, answered as the case says; xbb.lock held. */
static void xbb_new(const struct xcuda_request *req)
{
	domid_t domid = xbb.dev->otherend_id;
	struct xcuda_xsession_new_args a;
	struct xcuda_xsession_new_res res = {
		.session = xbb.next_session++,
		.dir_ref = XBB_BOGUS_REF,
		.nr_pages = XCUDA_XEN_DATA_PAGES(0) + 1,
		.arena_size = XCUDA_PAGE_SIZE,
	};
	struct xcuda_response rsp = {
		.id = req->hdr.id,
		.op = req->hdr.op,
		.flags = req->hdr.flags,
		.len = sizeof(res),
	};
	bool answer = true, twice = false;
	int err = 0;

	xbb.news++;
	memcpy(&a, req->args, sizeof(a));
	switch (xbb.c) {
	case C_NR_LARGE:
		res.nr_pages++;
		break;
	case C_NR_ZERO:
		res.nr_pages = 0;
		res.arena_size = 0;
		break;
	case C_NR_HUGE:
		res.nr_pages = U32_MAX;
		res.arena_size = 0xfffffffff000ull;
		break;
	case C_NR_4G:
		res.arena_size = XCUDA_XEN_MAX_ARENA;
		res.nr_pages = XCUDA_XEN_DATA_PAGES(0) +
			       XCUDA_XEN_MAX_ARENA / XCUDA_PAGE_SIZE;
		break;
	case C_ARENA_MORE:
		res.arena_size = (a.arena_size ? a.arena_size :
				  XCUDA_XEN_MAX_ARENA) + XCUDA_PAGE_SIZE;
		res.nr_pages = XCUDA_XEN_DATA_PAGES(0) +
			       res.arena_size / XCUDA_PAGE_SIZE;
		break;
	case C_ORDER_MORE:
		res.ring_order = a.ring_order + 1;
		res.nr_pages = XCUDA_XEN_DATA_PAGES(res.ring_order) + 1;
		break;
	case C_SESSION_ZERO:
		res.session = 0;
		break;
	case C_STATUS_BAD:
		rsp.status = -600;
		rsp.len = 0;
		break;
	case C_DIR_LOOP:
		/* Three directory pages are due; the third read is page 0. */
		err = xbb_bad_chain(domid, true, 2 * XCUDA_DIR_REFS + 54, &res);
		break;
	case C_DIR_SHORT:
		err = xbb_bad_chain(domid, false, XCUDA_DIR_REFS + 77, &res);
		break;
	case C_DIR_BOGUS:
		break;
	case C_DIR_FOREIGN:
		/* Granted to the next domain id, not to this guest. */
		err = xbb_small(domid, 1, false, false, domid + 1, &res);
		break;
	case C_DIR_RESERVED:
		res.dir_ref = 3;
		break;
	case C_ARENA_BOGUS:
		err = xbb_small(domid, 4, false, true, domid, &res);
		break;
	case C_ARENA_RO:
		err = xbb_small(domid, 1, true, false, domid, &res);
		break;
	case C_CLOSED:
	case C_ORDER_HUGE:
		err = xbb_small(domid, 1, false, false, domid, &res);
		break;
	case C_RSP_AHEAD:
		rsp.status = -ENOSPC;
		rsp.len = 0;
		xbb_push(&rsp);
		xbb.ring.sring->rsp_prod = xbb.ring.rsp_prod_pvt + 4;
		answer = false;
		break;
	case C_RSP_WRAP:
		xbb.ring.sring->rsp_prod = xbb.ring.rsp_prod_pvt + 0x80000000u;
		answer = false;
		break;
	case C_ID_FORGED:
		/* The request's slot, another generation. */
		rsp.id ^= 0x5a5aull << 32;
		rsp.status = -ENOSPC;
		rsp.len = 0;
		break;
	case C_ID_DUP:
		/*
		 * The first request's answer, twice, once a second is in
		 * flight: the count of responses then passes, the
		 * duplicate's tag does not.
		 */
		rsp.status = -ENOSPC;
		rsp.len = 0;
		if (!xbb.held_new) {
			xbb.first = rsp;
			xbb.held_new = true;
			answer = false;
			break;
		}
		rsp = xbb.first;
		xbb.held_new = false;
		twice = true;
		break;
	case C_OP_WRONG:
		rsp.op = XCUDA_XOP_SESSION_END;
		rsp.status = -ENOSPC;
		rsp.len = 0;
		break;
	case C_LEN_BIG:
		rsp.status = -ENOSPC;
		rsp.len = XCUDA_RSP_INLINE + 1;
		break;
	case C_SILENT:
	default:
		answer = false;
		break;
	}
	if (err) {
		pr_warn("%s: cannot make the session (%d)\n",
			xbb_names[xbb.c], err);
		rsp.status = err;
		rsp.len = 0;
	} else if (rsp.len) {
		memcpy(rsp.out, &res, sizeof(res));
	}
	pr_info("SESSION_NEW (arena %llu, order %u): %s\n", a.arena_size,
		a.ring_order, answer ? "answered" : "not answered");
	if (answer) {
		xbb_push(&rsp);
		if (twice)
			xbb_push(&rsp);
	}
}

static void xbb_work(struct work_struct *work)
{
	struct xcuda_request req;
	RING_IDX rp;
	int more;

	mutex_lock(&xbb.lock);
	if (!xbb.ring_va)
		goto out;
	do {
		rp = READ_ONCE(xbb.ring.sring->req_prod);
		virt_rmb();	/* requests are read after req_prod */
		if (RING_REQUEST_PROD_OVERFLOW(&xbb.ring, rp)) {
			pr_warn("bogus req_prod %u; ignoring the ring\n", rp);
			goto out;
		}
		while (xbb.ring.req_cons != rp) {
			RING_COPY_REQUEST(&xbb.ring, xbb.ring.req_cons, &req);
			xbb.ring.req_cons++;
			xbb.requests++;
			if (req.hdr.op == XCUDA_XOP_SESSION_NEW)
				xbb_new(&req);
			else if (req.hdr.op == XCUDA_XOP_SESSION_END)
				xbb_end(&req);
		}
		/* Asks for an event on the next request. */
		RING_FINAL_CHECK_FOR_REQUESTS(&xbb.ring, more);
	} while (more);
	if (xbb.irq >= 0)
		notify_remote_via_irq(xbb.irq);
out:
	if (xbb.irq >= 0 && xbb.eoi) {
		xbb.eoi = false;
		xen_irq_lateeoi(xbb.irq, 0);
	}
	mutex_unlock(&xbb.lock);
}

static irqreturn_t xbb_interrupt(int irq, void *dev_id)
{
	WRITE_ONCE(xbb.eoi, true);
	schedule_work(&xbb.work);
	return IRQ_HANDLED;
}

/* ------------------------------------------------------------------ */
/* xenbus                                                              */

/* Maps the frontend's ring and binds its channel (not state-cycle's). */
static int xbb_connect(struct xenbus_device *dev)
{
	grant_ref_t refs[1 << XCUDA_MAX_RING_ORDER];
	unsigned int order, nr, evtchn, i;
	char node[sizeof(XCUDA_XS_RING_REF) + 3];
	void *va;
	int err, irq;

	order = xenbus_read_unsigned(dev->otherend, XCUDA_XS_RING_ORDER, 0);
	if (order > XCUDA_MAX_RING_ORDER)
		return -ERANGE;
	nr = 1u << order;
	for (i = 0; i < nr; i++) {
		if (order)
			snprintf(node, sizeof(node), "%s%u", XCUDA_XS_RING_REF,
				 i);
		else
			strscpy(node, XCUDA_XS_RING_REF, sizeof(node));
		if (xenbus_scanf(XBT_NIL, dev->otherend, node, "%u",
				 &refs[i]) != 1)
			return -EINVAL;
	}
	if (xenbus_scanf(XBT_NIL, dev->otherend, XCUDA_XS_EVTCHN, "%u",
			 &evtchn) != 1)
		return -EINVAL;
	err = xenbus_map_ring_valloc(dev, refs, nr, &va);
	if (err)
		return err;

	mutex_lock(&xbb.lock);
	xbb.rings++;
	if (xbb.c == C_STATE_CYCLE) {
		if (xbb.nr_held < XBB_MAX_HELD) {
			xbb.held[xbb.nr_held++] = va;
			va = NULL;
		}
		mutex_unlock(&xbb.lock);
		if (va)
			xenbus_unmap_ring_vfree(dev, va);
		return 0;
	}
	BACK_RING_INIT(&xbb.ring, (struct xcuda_sring *)va,
		       XEN_PAGE_SIZE << order);
	xbb.ring_va = va;
	mutex_unlock(&xbb.lock);

	irq = bind_interdomain_evtchn_to_irqhandler_lateeoi(dev, evtchn,
							    xbb_interrupt, 0,
							    "xcuda-badback",
							    &xbb);
	mutex_lock(&xbb.lock);
	if (irq >= 0)
		xbb.irq = irq;
	mutex_unlock(&xbb.lock);
	if (irq < 0)
		return irq;
	pr_info("%s: ring of %u pages mapped, event channel %u\n",
		xbb_names[xbb.c], nr, evtchn);
	schedule_work(&xbb.work);
	return 0;
}

static void xbb_disconnect(struct xenbus_device *dev)
{
	void *va;
	int irq;

	mutex_lock(&xbb.lock);
	irq = xbb.irq;
	xbb.irq = -1;
	va = xbb.ring_va;
	xbb.ring_va = NULL;
	mutex_unlock(&xbb.lock);
	if (irq >= 0)
		unbind_from_irqhandler(irq, &xbb);
	cancel_work_sync(&xbb.work);
	if (va)
		xenbus_unmap_ring_vfree(dev, va);
}

static void xbb_frontend_changed(struct xenbus_device *dev,
				 enum xenbus_state state)
{
	bool cycling = xbb.c == C_STATE_CYCLE &&
		       time_before(jiffies, xbb.cycle_end);

	if (xbb.c == C_EARLY_CONNECT)
		return;
	switch (state) {
	case XenbusStateInitialising:
		if (dev->state != XenbusStateInitWait) {
			xbb_disconnect(dev);
			xenbus_switch_state(dev, XenbusStateInitWait);
		}
		break;
	case XenbusStateInitialised:
		if (dev->state != XenbusStateInitWait)
			break;
		if (xbb_connect(dev)) {
			pr_warn("%s: cannot connect\n", xbb_names[xbb.c]);
			break;
		}
		xenbus_switch_state(dev, XenbusStateConnected);
		break;
	case XenbusStateConnected:
		/* state-cycle: gone as soon as the frontend is there. */
		if (cycling && dev->state == XenbusStateConnected)
			xenbus_switch_state(dev, XenbusStateClosed);
		break;
	case XenbusStateClosing:
		xbb_disconnect(dev);
		xenbus_switch_state(dev, cycling ? XenbusStateClosed :
				   XenbusStateClosing);
		break;
	case XenbusStateClosed:
		xbb_disconnect(dev);
		xenbus_switch_state(dev, XenbusStateClosed);
		break;
	default:
		break;
	}
}

static int xbb_probe(struct xenbus_device *dev,
		     const struct xenbus_device_id *id)
{
	const char *order = "0", *versions = "2";

	mutex_lock(&xbb.lock);
	if (xbb.dev) {
		mutex_unlock(&xbb.lock);
		return -EBUSY;
	}
	xbb.dev = dev;
	xbb.cycle_end = jiffies + msecs_to_jiffies(cycle_ms);
	mutex_unlock(&xbb.lock);

	switch (xbb.c) {
	case C_EARLY_CONNECT:
		xenbus_rm(XBT_NIL, dev->nodename, XCUDA_XS_VERSIONS);
		xenbus_switch_state(dev, XenbusStateConnected);
		goto out;
	case C_NO_VERSIONS:
		xenbus_rm(XBT_NIL, dev->nodename, XCUDA_XS_VERSIONS);
		order = "x";
		versions = NULL;
		break;
	case C_ORDER_HUGE:
		order = "4294967295";
		versions = "x,2,99";
		break;
	case C_STATE_CYCLE:
		order = "4";
		break;
	default:
		break;
	}
	xenbus_printf(XBT_NIL, dev->nodename, XCUDA_XS_MAX_RING_ORDER, "%s",
		      order);
	if (versions)
		xenbus_printf(XBT_NIL, dev->nodename, XCUDA_XS_VERSIONS, "%s",
			      versions);
	xenbus_switch_state(dev, XenbusStateInitWait);
out:
	pr_info("case %s: probed %s\n", xbb_names[xbb.c], dev->nodename);
	return 0;
}

static void xbb_remove(struct xenbus_device *dev)
{
	unsigned int i, mapped;

	if (dev != xbb.dev)
		return;
	xbb_disconnect(dev);
	mutex_lock(&xbb.lock);
	for (i = 0; i < xbb.nr_held; i++)
		xenbus_unmap_ring_vfree(dev, xbb.held[i]);
	xbb.nr_held = 0;
	mapped = xbb_ungrant_all();
	pr_info("SUMMARY case=%s requests=%u new=%u end=%u rings=%u still-mapped=%u\n",
		xbb_names[xbb.c], xbb.requests, xbb.news, xbb.ends, xbb.rings,
		mapped);
	xbb.dev = NULL;
	mutex_unlock(&xbb.lock);
}

static const struct xenbus_device_id xbb_ids[] = {
	{ XCUDA_XS_TYPE },
	{ "" }
};

static struct xenbus_driver xbb_driver = {
	.name = "xcuda-badback",
	.ids = xbb_ids,
	.probe = xbb_probe,
	.otherend_changed = xbb_frontend_changed,
	.remove = xbb_remove,
};

static int __init xbb_init(void)
{
	unsigned int i;

	if (!xen_initial_domain())
		return -ENODEV;
	for (i = 0; i < ARRAY_SIZE(xbb_names); i++)
		if (xbb_names[i] && !strcmp(xbb_case, xbb_names[i]))
			break;
	if (i == ARRAY_SIZE(xbb_names)) {
		pr_err("unknown case '%s'\n", xbb_case);
		return -EINVAL;
	}
	xbb.c = i;
	INIT_WORK(&xbb.work, xbb_work);
	return xenbus_register_backend(&xbb_driver);
}

static void __exit xbb_exit(void)
{
	xenbus_unregister_driver(&xbb_driver);
	cancel_work_sync(&xbb.work);
}

module_init(xbb_init);
module_exit(xbb_exit);

MODULE_DESCRIPTION("xcuda: a backend that breaks the protocol, for tests only");
MODULE_LICENSE("GPL");
