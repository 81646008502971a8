// SPDX-License-Identifier: GPL-2.0
/*
 * xcuda-hostile: a test-only xenbus frontend of type "xcuda".
 *
 * It connects to xcuda-back as the real frontend does (one control ring
 * page), then, once Connected, posts malformed requests and checks that
 * each gets an error answer while the backend stays Connected: malformed
 * SESSION_NEWs (ports, ring orders, sizes), and a session's calls, which
 * belong on its data ring and never on the control ring.  The last case
 * lies about the ring's producer index: the backend must disconnect.
 * linger-loop, which runs only when named in cases=, keeps every grant
 * of its sessions mapped while it ends them and asks for new ones: the
 * backend must keep charging them and refuse more.
 * new-flood asks for sessions past max-sessions, with or without xcudad.
 * slot-race rewrites the request slots from another CPU while this one
 * posts valid requests: each must get one answer, an error.
 * Run only when named: full-ring leaves a ring's worth of SESSION_NEW
 * answers untaken, full-data-ring fills a session's data ring and leaves
 * it (both then end their sessions: everything must come back), and
 * req-prod-back and req-prod-wrap move req_prod back below what the
 * backend took (it must disconnect; one of them per load).
 * xs_bad=KIND publishes one bad xenstore node instead (ring-page-order 5,
 * a ring-ref that is no number, no ring-ref, a bad event channel, a wrong
 * protocol version, a grant ref it never granted): the backend must
 * refuse to connect, and no case runs.
 * Each case logs "xcuda-hostile: PASS <name>", "FAIL <name>: <why>" or
 * "SKIP <name>: <why>"; the run ends with "DONE <n> passed, <m> failed".
 *
 * Load it only while xcuda-front is not loaded.  cases=a,b,c runs only
 * the named cases, in the table's order.
 *
 * storm_ms=N is the exception: no frontend then; while xcuda-front runs,
 * it sends events on device 0's control channel for N ms ("STORM-DONE"
 * when it stops), so that Dom0 can be watched while the guest's own
 * processes keep using the device.
 */
#define pr_fmt(fmt) "xcuda-hostile: " fmt

#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/interrupt.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <xen/events.h>
#include <xen/interface/event_channel.h>
#include <xen/grant_table.h>
#include <xen/page.h>
#include <xen/xen.h>
#include <xen/xenbus.h>
#include <asm/xen/hypercall.h>

#include "xcuda/proto.h"
#include "xcuda/xen.h"

static char *cases;
module_param(cases, charp, 0444);
MODULE_PARM_DESC(cases, "comma-separated cases to run (default: all)");

static char *xs_bad;
module_param(xs_bad, charp, 0444);
MODULE_PARM_DESC(xs_bad, "publish one bad node: order5, ref-text, no-ref, evtchn, version or ref-guess");

static unsigned int storm_ms;
module_param(storm_ms, uint, 0444);
MODULE_PARM_DESC(storm_ms, "no frontend: storm xcuda-front's control channel this long");

#define XH_ANSWER_MS	10000
#define XH_NEW_MS	30000	/* SESSION_NEW waits for xcudad's worker */
#define XH_CLOSE_MS	10000
#define XH_FLOOD	100000
#define XH_ARENA	SZ_1M
/* xcuda-back answers by itself with a negative errno. */
#define XH_INVALID	(-EINVAL)
#define XH_ANY_ERROR	INT_MIN
/* Ports made for SESSION_NEWs, closed at teardown. */
#define XH_MAX_PORTS	16
/*
 * linger-loop: sessions asked for, at most, and how long their grants
 * stay mapped after the refusal (xcuda-back is looked at meanwhile).
 */
#define XH_LINGER_ROUNDS	40
/* new-flood: SESSION_NEWs past max-sessions, and tries once they end. */
#define XH_NEW_FLOOD_MORE	4
#define XH_NEW_FLOOD_TRIES	50
#define XH_LINGER_HOLD_MS	15000
/* req-prod-back, req-prod-wrap: requests answered before req_prod moves. */
#define XH_BACK_WARM		3
/*
 * Two commands of the wire protocol (spec/xcuda.calls, spec/cudart.calls),
 * by number: their layouts are generated for user space only.
 */
#define XH_OP_ECHO		3	/* ECHO */
#define XH_ECHO_ARGS_LEN	16	/* seed, fill, pattern, rsvd: u32 */
#define XH_OP_GET_DEVICE_COUNT	16	/* GET_DEVICE_COUNT */

static struct {
	struct mutex lock;		/* the ring, against teardown */
	struct xenbus_device *dev;	/* device 0 */
	struct xcuda_sring *sring;
	struct xcuda_front_ring ring;
	grant_ref_t ref;
	evtchn_port_t evtchn;
	bool has_evtchn;
	int irq;
	bool dead;			/* teardown started */
	bool started;			/* the script ran */
	wait_queue_head_t wq;		/* answers, teardown */
	struct work_struct work;	/* the script */
	u64 next_id;
	u32 session;			/* of valid-session, or 0 */
	u64 arena_size;
	evtchn_port_t ports[XH_MAX_PORTS];
	unsigned int nr_ports;
	unsigned int passed, failed;
} xh = {
	.lock = __MUTEX_INITIALIZER(xh.lock),
	.irq = -1,
	.wq = __WAIT_QUEUE_HEAD_INITIALIZER(xh.wq),
};

/* ------------------------------------------------------------------ */
/* Reporting                                                           */

static void xh_pass(const char *name)
{
	pr_info("PASS %s\n", name);
	xh.passed++;
}

static __printf(2, 3) void xh_fail(const char *name, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("FAIL %s: %pV\n", name, &vaf);
	va_end(args);
	xh.failed++;
}

static void xh_skip(const char *name, const char *why)
{
	pr_info("SKIP %s: %s\n", name, why);
}

static enum xenbus_state xh_backend_state(void)
{
	return xenbus_read_driver_state(xh.dev->otherend);
}

/* ------------------------------------------------------------------ */
/* The ring                                                            */

static irqreturn_t xh_interrupt(int irq, void *dev_id)
{
	wake_up_all(&xh.wq);
	return IRQ_HANDLED;
}

static bool xh_answer_ready(void)
{
	return READ_ONCE(xh.dead) ||
	       READ_ONCE(xh.sring->rsp_prod) != xh.ring.rsp_cons;
}

/*
 * The backend's indexes, rsp_prod and req_event, unless the ring has been
 * torn down (the backend closed): false then.
 */
static bool xh_indexes(RING_IDX *rsp_prod, RING_IDX *req_event)
{
	bool up;

	mutex_lock(&xh.lock);
	up = xh.sring && !xh.dead;
	if (up) {
		*rsp_prod = READ_ONCE(xh.sring->rsp_prod);
		*req_event = READ_ONCE(xh.sring->req_event);
	}
	mutex_unlock(&xh.lock);
	return up;
}

/*
 * Posts @req under a fresh id and waits for the answer with that id;
 * answers to earlier requests that timed out are skipped.
 */
static int xh_call(struct xcuda_request *req, struct xcuda_response *rsp,
		   unsigned int ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(ms);
	int notify, more, err = -ETIMEDOUT;
	RING_IDX rp;
	u64 id;

	mutex_lock(&xh.lock);
	if (xh.dead || !xh.sring) {
		err = -ENOTCONN;
		goto out;
	}
	if (RING_FULL(&xh.ring)) {
		err = -ENOSPC;
		goto out;
	}
	id = ++xh.next_id;
	req->hdr.id = id;
	memcpy(RING_GET_REQUEST(&xh.ring, xh.ring.req_prod_pvt), req,
	       sizeof(*req));
	xh.ring.req_prod_pvt++;
	RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&xh.ring, notify);
	if (notify)
		notify_remote_via_irq(xh.irq);

	for (;;) {
		rp = READ_ONCE(xh.sring->rsp_prod);
		virt_rmb();	/* responses are read after rsp_prod */
		if (RING_RESPONSE_PROD_OVERFLOW(&xh.ring, rp)) {
			err = -EPROTO;
			goto out;
		}
		while (xh.ring.rsp_cons != rp) {
			RING_COPY_RESPONSE(&xh.ring, xh.ring.rsp_cons, rsp);
			xh.ring.rsp_cons++;
			if (rsp->id == id) {
				err = 0;
				goto out;
			}
			pr_info("note: late answer id %llu op %#x status %d\n",
				rsp->id, rsp->op, rsp->status);
		}
		RING_FINAL_CHECK_FOR_RESPONSES(&xh.ring, more);
		if (more)
			continue;
		if (time_after_eq(jiffies, deadline))
			break;
		wait_event_timeout(xh.wq, xh_answer_ready(),
				   deadline - jiffies);
		if (READ_ONCE(xh.dead)) {
			err = -ENOTCONN;
			break;
		}
	}
out:
	mutex_unlock(&xh.lock);
	return err;
}

/*
 * Posts @req and checks the answer: @status exactly, or any error for
 * XH_ANY_ERROR (a negative errno: the backend answers it by itself, never
 * a worker); every bit of @flags set; the backend still Connected.
 */
static void xh_expect(const char *name, struct xcuda_request *req,
		      int status, u16 flags)
{
	struct xcuda_response rsp;
	enum xenbus_state st;
	int err;

	err = xh_call(req, &rsp, XH_ANSWER_MS);
	if (err) {
		xh_fail(name, "no answer (%d)", err);
		return;
	}
	st = xh_backend_state();
	if (status == XH_ANY_ERROR &&
	    (rsp.status >= 0 || rsp.status <= -MAX_ERRNO))
		xh_fail(name, "status %d, expected a negative errno",
			rsp.status);
	else if (status != XH_ANY_ERROR && rsp.status != status)
		xh_fail(name, "status %d, expected %d", rsp.status, status);
	else if ((rsp.flags & flags) != flags)
		xh_fail(name, "flags %#x lack %#x", rsp.flags, flags);
	else if (st != XenbusStateConnected)
		xh_fail(name, "backend left Connected (%s)",
			xenbus_strstate(st));
	else
		xh_pass(name);
}

/* A session id that is surely not ours. */
static u32 xh_foreign_session(void)
{
	u32 id;

	do {
		id = get_random_u32();
	} while (!id || id == xh.session);
	return id;
}

/* A fresh unbound port for the backend, as a session's doorbell; or 0. */
static evtchn_port_t xh_port(void)
{
	struct evtchn_alloc_unbound alloc = {
		.dom = DOMID_SELF,
		.remote_dom = xh.dev->otherend_id,
	};

	if (xh.nr_ports == XH_MAX_PORTS ||
	    HYPERVISOR_event_channel_op(EVTCHNOP_alloc_unbound, &alloc))
		return 0;
	xh.ports[xh.nr_ports++] = alloc.port;
	return alloc.port;
}

/* Closes the port of the last SESSION_NEW: the backend bound it or not. */
static void xh_drop_port(void)
{
	struct evtchn_close close;

	if (xh.nr_ports) {
		close.port = xh.ports[--xh.nr_ports];
		HYPERVISOR_event_channel_op(EVTCHNOP_close, &close);
	}
}

static void xh_close_ports(void)
{
	while (xh.nr_ports)
		xh_drop_port();
}

static void xh_new_request(struct xcuda_request *req, u64 arena_size)
{
	struct xcuda_xsession_new_args a = {
		.arena_size = arena_size,
		.evtchn = xh_port(),
		.ring_order = 0,
	};

	memset(req, 0, sizeof(*req));
	req->hdr.op = XCUDA_XOP_SESSION_NEW;
	req->hdr.len = sizeof(a);
	memcpy(req->args, &a, sizeof(a));
}

static int xh_end_session(u32 session, struct xcuda_response *rsp)
{
	struct xcuda_request req = {
		.hdr.op = XCUDA_XOP_SESSION_END,
		.hdr.session = session,
	};

	return xh_call(&req, rsp, XH_ANSWER_MS);
}

/* A well-formed request of the valid session, to be spoilt by one field. */
static bool xh_session_request(const char *name, struct xcuda_request *req)
{
	if (!xh.session) {
		xh_skip(name, "no session (valid-session did not pass)");
		return false;
	}
	memset(req, 0, sizeof(*req));
	req->hdr.op = XH_OP_ECHO;
	req->hdr.session = xh.session;
	req->hdr.len = XH_ECHO_ARGS_LEN;
	return true;
}

/* ------------------------------------------------------------------ */
/* The cases                                                           */

static void xh_unknown_op(const char *name)
{
	struct xcuda_request req = {
		.hdr.op = 0x7ff0,
		.hdr.session = xh_foreign_session(),
	};

	xh_expect(name, &req, XH_INVALID, 0);
}

static void xh_foreign(const char *name)
{
	struct xcuda_request req = {
		.hdr.op = XH_OP_GET_DEVICE_COUNT,
		.hdr.session = xh_foreign_session(),
	};

	xh_expect(name, &req, XH_ANY_ERROR, 0);
}

static void xh_new_bad_len(const char *name)
{
	struct xcuda_request req;

	xh_new_request(&req, XH_ARENA);
	req.hdr.len++;
	xh_expect(name, &req, XH_ANY_ERROR, 0);
}

/* A SESSION_NEW spoilt by @spoil: refused before any worker exists. */
static void xh_new_spoilt(const char *name,
			  void (*spoil)(struct xcuda_xsession_new_args *a))
{
	struct xcuda_xsession_new_args a;
	struct xcuda_request req;

	xh_new_request(&req, XH_ARENA);
	memcpy(&a, req.args, sizeof(a));
	spoil(&a);
	memcpy(req.args, &a, sizeof(a));
	xh_expect(name, &req, XH_INVALID, 0);
}

static void xh_spoil_port(struct xcuda_xsession_new_args *a)
{
	a->evtchn = 0;
}

static void xh_spoil_order(struct xcuda_xsession_new_args *a)
{
	a->ring_order = XCUDA_MAX_RING_ORDER + 1;
}

static void xh_spoil_flags(struct xcuda_xsession_new_args *a)
{
	a->flags = 1;
}

static void xh_new_no_port(const char *name)
{
	xh_new_spoilt(name, xh_spoil_port);
}

static void xh_new_big_ring(const char *name)
{
	xh_new_spoilt(name, xh_spoil_order);
}

static void xh_new_flags(const char *name)
{
	xh_new_spoilt(name, xh_spoil_flags);
}

/*
 * A port that is not an unbound one for Dom0 (the control ring's own,
 * bound already): the worker's bind fails and the guest is told so.
 */
static void xh_new_bound_port(const char *name)
{
	struct xcuda_xsession_new_args a;
	struct xcuda_request req;

	xh_new_request(&req, XH_ARENA);
	memcpy(&a, req.args, sizeof(a));
	a.evtchn = xh.evtchn;
	memcpy(req.args, &a, sizeof(a));
	xh_expect(name, &req, XH_ANY_ERROR, 0);
}

static void xh_new_huge(const char *name)
{
	struct xcuda_xsession_new_res res;
	struct xcuda_response rsp, end;
	struct xcuda_request req;
	u64 max;
	int err;

	if (xenbus_scanf(XBT_NIL, xh.dev->otherend, XCUDA_XS_MAX_ARENA,
			 "%llu", &max) != 1)
		max = XCUDA_XEN_DEF_ARENA;
	xh_new_request(&req, 1ull << 60);
	err = xh_call(&req, &rsp, XH_NEW_MS);
	if (err) {
		xh_fail(name, "no answer (%d)", err);
		return;
	}
	if (rsp.status < 0 && rsp.status > -MAX_ERRNO) {
		/* Refused (-EHOSTDOWN without xcudad): fine. */
		pr_info("note: %s refused with %d\n", name, rsp.status);
		xh_pass(name);
		return;
	}
	if (rsp.status) {
		xh_fail(name, "status %d is not a negative errno", rsp.status);
		return;
	}
	memcpy(&res, rsp.out, sizeof(res));
	err = xh_end_session(res.session, &end);
	if (res.arena_size > max || res.arena_size > XCUDA_XEN_MAX_ARENA)
		xh_fail(name, "granted %llu bytes, max-arena-bytes %llu",
			res.arena_size, max);
	else if (err || end.status)
		xh_fail(name, "granted %llu bytes, ending it failed (%d/%d)",
			res.arena_size, err, err ? 0 : end.status);
	else
		xh_pass(name);
}

static void xh_valid_session(const char *name)
{
	struct xcuda_xsession_new_res res;
	struct xcuda_response rsp;
	struct xcuda_request req;
	int err;

	xh_new_request(&req, XH_ARENA);
	err = xh_call(&req, &rsp, XH_NEW_MS);
	if (err) {
		xh_fail(name, "no answer (%d)", err);
		return;
	}
	if (rsp.status == -EHOSTDOWN) {
		xh_skip(name, "no xcudad in Dom0 (-EHOSTDOWN)");
		return;
	}
	memcpy(&res, rsp.out, sizeof(res));
	if (rsp.status || rsp.len < sizeof(res) || !res.session ||
	    !res.arena_size || res.arena_size > XH_ARENA ||
	    res.ring_order ||
	    res.nr_pages != XCUDA_XEN_DATA_PAGES(0) +
			    res.arena_size / XCUDA_PAGE_SIZE) {
		xh_fail(name, "status %d, session %u, %llu bytes, %u pages",
			rsp.status, res.session, res.arena_size, res.nr_pages);
		return;
	}
	xh.session = res.session;
	xh.arena_size = res.arena_size;
	xh_pass(name);
}

/* A well-formed call of a live session: its place is the data ring. */
static void xh_call_on_control(const char *name)
{
	struct xcuda_request req;

	if (!xh_session_request(name, &req))
		return;
	xh_expect(name, &req, XH_INVALID, 0);
}

static void xh_op_zero(const char *name)
{
	struct xcuda_request req = { .hdr.session = xh_foreign_session() };

	/* On the valid session if there is one, else on a foreign one. */
	if (xh.session)
		req.hdr.session = xh.session;
	xh_expect(name, &req, XH_ANY_ERROR, 0);
}

static void xh_end_valid(const char *name)
{
	struct xcuda_response rsp;
	int err;

	if (!xh.session) {
		xh_skip(name, "no session (valid-session did not pass)");
		return;
	}
	err = xh_end_session(xh.session, &rsp);
	xh.session = 0;
	if (err || rsp.status)
		xh_fail(name, "SESSION_END: %d/%d", err, err ? 0 : rsp.status);
	else
		xh_pass(name);
}

static void xh_end_foreign(const char *name)
{
	struct xcuda_request req = {
		.hdr.op = XCUDA_XOP_SESSION_END,
		.hdr.session = xh_foreign_session(),
	};

	xh_expect(name, &req, -ENOENT, 0);
}

static void xh_flood(const char *name)
{
	struct xcuda_request req = {
		.hdr.op = XCUDA_XOP_SESSION_END,
		.hdr.session = xh_foreign_session(),
	};
	unsigned int i;

	mutex_lock(&xh.lock);
	if (xh.dead || xh.irq < 0) {
		mutex_unlock(&xh.lock);
		xh_fail(name, "not connected");
		return;
	}
	for (i = 0; i < XH_FLOOD; i++) {
		notify_remote_via_irq(xh.irq);
		if (!(i % 1024))
			cond_resched();
	}
	mutex_unlock(&xh.lock);
	/* The backend must still answer, and stay Connected. */
	xh_expect(name, &req, -ENOENT, 0);
}

/*
 * slot-race: a thread on another CPU writes random bytes over the request
 * slots while this one posts valid requests and rings.  The backend must
 * copy each request once and check the copy: every request gets exactly
 * one answer, an error (no session of ours exists, so nothing succeeds),
 * and the device works afterwards.  The racer also overwrites answers
 * waiting on the ring; a field that holds the racer's last bytes for its
 * slot is not the backend's and is not judged.
 */
#define XH_RACE_MS		5000
#define XH_RACE_BATCH		4
#define XH_RACE_SLOTS		XCUDA_RING_SIZE(0)
#define XH_RACE_QUIET_MS	1000

static struct {
	bool armed;			/* the racer writes while set */
	unsigned long seq;		/* the racer's passes */
	unsigned long writes;
	bool touched[XH_RACE_SLOTS];
	struct xcuda_response last[XH_RACE_SLOTS];	/* its last bytes */
	u64 posted[XH_RACE_SLOTS];	/* the id we wrote there */
	unsigned int judged;		/* answers whose status was ours */
	unsigned int rewritten;		/* copies the racer had reached */
} xh_race;

/* The racer's request: random, or a transport op with random fields. */
static void xh_race_fill(struct xcuda_request *req)
{
	get_random_bytes(req, sizeof(*req));
	switch (get_random_u32_below(4)) {
	case 0:
		req->hdr.op = XCUDA_XOP_SESSION_END;
		break;
	case 1:
		req->hdr.op = XCUDA_XOP_SESSION_NEW;
		req->hdr.len = sizeof(struct xcuda_xsession_new_args);
		break;
	default:
		break;
	}
}

static int xh_racer(void *arg)
{
	struct xcuda_request req;
	unsigned int slot;

	while (!kthread_should_stop()) {
		if (READ_ONCE(xh_race.armed)) {
			xh_race_fill(&req);
			slot = get_random_u32_below(XH_RACE_SLOTS);
			memcpy(&xh.sring->ring[slot], &req, sizeof(req));
			memcpy(&xh_race.last[slot], &req,
			       sizeof(xh_race.last[slot]));
			xh_race.touched[slot] = true;
			xh_race.writes++;
		}
		/* Pairs with xh_race_quiet(): the pass is over, all of it. */
		smp_mb();	/* the slot's bytes before the count */
		WRITE_ONCE(xh_race.seq, xh_race.seq + 1);
		smp_mb();	/* the count before the next look at armed */
		if (!(xh_race.seq % 1024))
			cond_resched();
	}
	return 0;
}

/* Stops the racer's writes and waits until none is under way. */
static bool xh_race_quiet(void)
{
	unsigned long seq, waited = 0;

	WRITE_ONCE(xh_race.armed, false);
	smp_mb();	/* armed before the count, as the racer does */
	seq = READ_ONCE(xh_race.seq);
	/* A pass that began before the store may still write: one more. */
	while (READ_ONCE(xh_race.seq) - seq < 2) {
		if (waited++ > XH_RACE_QUIET_MS * 10)
			return false;
		usleep_range(100, 200);
	}
	smp_mb();	/* the count before the slots it covers */
	return true;
}

/* @rsp, read from @slot, as the backend may have answered: else why not. */
static const char *xh_race_check(unsigned int slot,
				 const struct xcuda_response *rsp)
{
	const struct xcuda_response *r = &xh_race.last[slot];
	bool racer = xh_race.touched[slot];

	/*
	 * Each field is the backend's or, all of it, the racer's last.  An
	 * id of the backend's that is not ours: its copy had the racer's.
	 */
	if ((!racer || rsp->id != r->id) && rsp->id != xh_race.posted[slot])
		xh_race.rewritten++;
	if (!racer || rsp->status != r->status) {
		xh_race.judged++;
		if (rsp->status >= 0 || rsp->status <= -MAX_ERRNO)
			return "status is no negative errno";
	}
	if ((!racer || rsp->len != r->len) && rsp->len)
		return "an error answer with result bytes";
	return NULL;
}

static void xh_slot_race(const char *name)
{
	unsigned int cpu, other, i, slot, rounds = 0;
	unsigned long deadline, wait_end;
	struct xcuda_response rsp;
	struct xcuda_request req;
	struct task_struct *task;
	const char *why = NULL;
	RING_IDX rp = 0;

	cpu = get_cpu();
	other = cpumask_any_but(cpu_online_mask, cpu);
	put_cpu();
	if (other >= nr_cpu_ids) {
		xh_fail(name, "one CPU online: the racer needs another");
		return;
	}
	memset(&xh_race, 0, sizeof(xh_race));
	task = kthread_create(xh_racer, NULL, "xh-racer");
	if (IS_ERR(task)) {
		xh_fail(name, "no racer thread (%ld)", PTR_ERR(task));
		return;
	}
	kthread_bind(task, other);

	mutex_lock(&xh.lock);
	if (xh.dead || !xh.sring || RING_FREE_REQUESTS(&xh.ring) !=
				     RING_SIZE(&xh.ring)) {
		why = "not connected, or requests outstanding";
		goto out_stop;
	}
	wake_up_process(task);
	deadline = jiffies + msecs_to_jiffies(XH_RACE_MS);
	while (!why && time_before(jiffies, deadline)) {
		memset(xh_race.touched, 0, sizeof(xh_race.touched));
		WRITE_ONCE(xh_race.armed, true);
		for (i = 0; i < XH_RACE_BATCH; i++) {
			memset(&req, 0, sizeof(req));
			/* Valid, harmless: answered -ENOENT and -EINVAL. */
			req.hdr.op = i % 2 ? XCUDA_XOP_SESSION_END : 0x7ff0;
			req.hdr.session = xh_foreign_session();
			req.hdr.id = ++xh.next_id;
			slot = xh.ring.req_prod_pvt & (RING_SIZE(&xh.ring) - 1);
			xh_race.posted[slot] = req.hdr.id;
			memcpy(RING_GET_REQUEST(&xh.ring, xh.ring.req_prod_pvt),
			       &req, sizeof(req));
			xh.ring.req_prod_pvt++;
		}
		RING_PUSH_REQUESTS(&xh.ring);
		notify_remote_via_irq(xh.irq);

		/* Every answer, and not one more. */
		wait_end = jiffies + msecs_to_jiffies(XH_ANSWER_MS);
		for (;;) {
			xh.sring->rsp_event = xh.ring.req_prod_pvt;
			virt_mb();	/* rsp_event out before rsp_prod is read */
			rp = READ_ONCE(xh.sring->rsp_prod);
			if (RING_RESPONSE_PROD_OVERFLOW(&xh.ring, rp) ||
			    (RING_IDX)(rp - xh.ring.rsp_cons) > XH_RACE_BATCH) {
				why = "more answers than requests";
				break;
			}
			if (rp == xh.ring.req_prod_pvt)
				break;
			if (READ_ONCE(xh.dead)) {
				why = "disconnected";
				break;
			}
			if (time_after_eq(jiffies, wait_end)) {
				why = "requests left unanswered";
				break;
			}
			wait_event_timeout(xh.wq, xh_answer_ready() &&
					   READ_ONCE(xh.sring->rsp_prod) ==
					   xh.ring.req_prod_pvt, HZ / 10);
		}
		if (!xh_race_quiet()) {
			why = "the racer did not stop";
			break;
		}
		virt_rmb();	/* answers are read after rsp_prod */
		while (!why && xh.ring.rsp_cons != rp) {
			slot = xh.ring.rsp_cons & (RING_SIZE(&xh.ring) - 1);
			RING_COPY_RESPONSE(&xh.ring, xh.ring.rsp_cons, &rsp);
			xh.ring.rsp_cons++;
			why = xh_race_check(slot, &rsp);
			if (why)
				pr_info("note: %s: round %u: id %llu op %#x status %d len %u\n",
					name, rounds, rsp.id, rsp.op,
					rsp.status, rsp.len);
		}
		rounds++;
	}
out_stop:
	WRITE_ONCE(xh_race.armed, false);
	kthread_stop(task);
	mutex_unlock(&xh.lock);
	pr_info("note: %s: %u rounds of %u requests, %lu slot writes; %u answers to copies the racer had reached, %u statuses judged\n",
		name, rounds, XH_RACE_BATCH, xh_race.writes,
		xh_race.rewritten, xh_race.judged);
	if (why) {
		xh_fail(name, "%s", why);
		return;
	}
	/* Else it proved nothing about the backend's copies. */
	if (!xh_race.judged || !xh_race.rewritten) {
		xh_fail(name, "nothing raced: %u copies reached, %u answers judged",
			xh_race.rewritten, xh_race.judged);
		return;
	}
	/* The device still works: a request in place answers as before. */
	xh_end_foreign(name);
}

/*
 * SESSION_NEW as fast as each is answered, past the device's
 * max-sessions.  With xcudad, those up to it open and the rest are
 * refused (-ENOSPC); once all are ended, one opens again.  Without
 * xcudad, every one is refused (-EHOSTDOWN).  None goes unanswered.
 */
static void xh_new_flood(const char *name)
{
	unsigned int max, i, n = 0, down = 0, nospc = 0, other = 0;
	struct xcuda_xsession_new_res res;
	struct xcuda_response rsp, end;
	struct xcuda_request req;
	int err = 0, last = 0;
	u32 *ids;

	max = xenbus_read_unsigned(xh.dev->otherend, XCUDA_XS_MAX_SESSIONS,
				   XCUDA_XEN_DEF_SESSIONS);
	ids = kcalloc(max + XH_NEW_FLOOD_MORE, sizeof(*ids), GFP_KERNEL);
	if (!ids) {
		xh_fail(name, "out of memory");
		return;
	}
	for (i = 0; i < max + XH_NEW_FLOOD_MORE; i++) {
		xh_new_request(&req, XH_ARENA);
		err = xh_call(&req, &rsp, XH_NEW_MS);
		xh_drop_port();
		if (err)
			break;
		if (!rsp.status) {
			memcpy(&res, rsp.out, sizeof(res));
			ids[n++] = res.session;
		} else if (rsp.status == -EHOSTDOWN) {
			down++;
		} else if (rsp.status == -ENOSPC) {
			nospc++;
		} else {
			other++;
			last = rsp.status;
		}
	}
	for (i = 0; i < n; i++)
		xh_end_session(ids[i], &end);
	kfree(ids);
	if (err) {
		xh_fail(name, "SESSION_NEW %u: no answer (%d)", n + down +
			nospc + other, err);
		return;
	}
	if (down == max + XH_NEW_FLOOD_MORE) {
		pr_info("note: %s: no xcudad, every SESSION_NEW refused\n",
			name);
		xh_pass(name);
		return;
	}
	if (n != max || nospc != XH_NEW_FLOOD_MORE || down || other) {
		xh_fail(name, "max-sessions %u: %u opened, %u -ENOSPC, %u -EHOSTDOWN, %u else (%d)",
			max, n, nospc, down, other, last);
		return;
	}
	/* Their places come back as their workers close them. */
	for (i = 0; i < XH_NEW_FLOOD_TRIES; i++) {
		xh_new_request(&req, XH_ARENA);
		err = xh_call(&req, &rsp, XH_NEW_MS);
		xh_drop_port();
		if (!err && !rsp.status) {
			memcpy(&res, rsp.out, sizeof(res));
			xh_end_session(res.session, &end);
			xh_pass(name);
			return;
		}
		msleep(200);
	}
	xh_fail(name, "no session opens after the flood ended (%d/%d)", err,
		err ? 0 : rsp.status);
}

/* Last: claims more requests than the ring holds. */
static void xh_req_prod(const char *name)
{
	unsigned int waited;
	enum xenbus_state st;

	mutex_lock(&xh.lock);
	if (xh.dead || !xh.sring) {
		mutex_unlock(&xh.lock);
		xh_fail(name, "not connected");
		return;
	}
	virt_wmb();	/* nothing new in the ring; only the index lies */
	WRITE_ONCE(xh.sring->req_prod,
		   xh.ring.req_prod_pvt + 2 * RING_SIZE(&xh.ring));
	virt_mb();	/* the index is out before the event */
	notify_remote_via_irq(xh.irq);
	mutex_unlock(&xh.lock);

	for (waited = 0; waited < XH_CLOSE_MS; waited += 100) {
		st = xh_backend_state();
		if (st == XenbusStateClosing || st == XenbusStateClosed) {
			xh_pass(name);
			return;
		}
		msleep(100);
	}
	xh_fail(name, "backend still %s after %u ms", xenbus_strstate(st),
		XH_CLOSE_MS);
}

/*
 * Posts @n SESSION_NEWs in the ring at once, with fresh ids, and rings
 * once; no answer is waited for.  Under xh.lock, with room for them.
 */
static void xh_post_new(unsigned int n)
{
	struct xcuda_request req;
	unsigned int i;

	lockdep_assert_held(&xh.lock);
	for (i = 0; i < n; i++) {
		xh_new_request(&req, XH_ARENA);
		req.hdr.id = ++xh.next_id;
		memcpy(RING_GET_REQUEST(&xh.ring, xh.ring.req_prod_pvt), &req,
		       sizeof(req));
		xh.ring.req_prod_pvt++;
	}
	RING_PUSH_REQUESTS(&xh.ring);
	notify_remote_via_irq(xh.irq);
}

/*
 * req_prod moved back, below what the backend has taken, while the answer
 * to a SESSION_NEW is still owed: req_prod is then at or near rsp_prod,
 * where RING_REQUEST_PROD_OVERFLOW alone sees nothing wrong, and a
 * backend that walked from req_cons to it would take 2^32 - @back stale
 * slots.  It must disconnect instead, answering no old slot again.
 */
static void xh_req_prod_moved(const char *name, RING_IDX back)
{
	RING_IDX cons, rp, was, most, ev;
	struct xcuda_response rsp;
	struct xcuda_request req;
	unsigned int i, waited;
	enum xenbus_state st;
	int err;

	/* Slots the backend has taken and answered. */
	for (i = 0; i < XH_BACK_WARM; i++) {
		memset(&req, 0, sizeof(req));
		req.hdr.op = XCUDA_XOP_SESSION_END;
		req.hdr.session = xh_foreign_session();
		err = xh_call(&req, &rsp, XH_ANSWER_MS);
		if (err || rsp.status != -ENOENT) {
			xh_fail(name, "warm-up request %u: %d/%d", i, err,
				err ? 0 : rsp.status);
			return;
		}
	}
	mutex_lock(&xh.lock);
	if (xh.dead || !xh.sring) {
		mutex_unlock(&xh.lock);
		xh_fail(name, "not connected");
		return;
	}
	/* Its answer waits for a worker: taken, not yet answered. */
	xh_post_new(1);
	cons = xh.ring.req_prod_pvt;
	mutex_unlock(&xh.lock);

	/* Taken once the backend asks for an event at the next one. */
	for (waited = 0;; waited += 20) {
		if (!xh_indexes(&was, &ev)) {
			xh_fail(name, "disconnected before req_prod moved");
			return;
		}
		if (ev == cons + 1)
			break;
		if (waited >= XH_ANSWER_MS) {
			xh_fail(name, "the backend did not take request %u (req_event %u)",
				cons - 1, ev);
			return;
		}
		msleep(20);
	}

	mutex_lock(&xh.lock);
	if (!xh.sring || xh.dead) {
		mutex_unlock(&xh.lock);
		xh_fail(name, "disconnected before req_prod moved");
		return;
	}
	was = READ_ONCE(xh.sring->rsp_prod);
	rp = cons - back;
	WRITE_ONCE(xh.sring->req_prod, rp);
	virt_mb();	/* the index is out before the event */
	notify_remote_via_irq(xh.irq);
	mutex_unlock(&xh.lock);
	pr_info("note: %s: req_prod %u, the backend's req_cons %u, rsp_prod %u\n",
		name, rp, cons, was);

	/*
	 * Answers are written only while connected, and the backend stops
	 * before it says Closing: watched until then, or until the ring goes.
	 */
	most = was;
	for (waited = 0; waited < XH_CLOSE_MS; waited += 20) {
		st = xh_backend_state();
		if (xh_indexes(&rp, &ev) &&
		    (RING_IDX)(rp - was) > (RING_IDX)(most - was))
			most = rp;
		if (st == XenbusStateClosing || st == XenbusStateClosed)
			break;
		msleep(20);
	}
	if (st != XenbusStateClosing && st != XenbusStateClosed)
		xh_fail(name, "backend still %s after %u ms",
			xenbus_strstate(st), XH_CLOSE_MS);
	else if ((RING_IDX)(most - was) > (RING_IDX)(cons - was))
		xh_fail(name, "rsp_prod went from %u to %u, past the %u requests",
			was, most, cons);
	else
		xh_pass(name);
}

/* Just behind req_cons: the old SESSION_NEW's slot is where req_prod is. */
static void xh_req_prod_back(const char *name)
{
	xh_req_prod_moved(name, 1);
}

/* Half the index space away: as far behind as ahead. */
static void xh_req_prod_wrap(const char *name)
{
	xh_req_prod_moved(name, 0x80000000u);
}

/* One session of linger-loop: its grants, mapped into pages of ours. */
struct xh_held {
	struct list_head node;
	unsigned int nr;		/* shared pages, then directory pages */
	struct page **pages;
	struct gnttab_unmap_grant_ref *unmap;
};

static void xh_held_free(struct xh_held *h)
{
	bool leak = false;
	unsigned int i;

	for (i = 0; h->unmap && i < h->nr; i++) {
		if (h->unmap[i].handle == INVALID_GRANT_HANDLE)
			continue;
		if (gnttab_unmap_refs(&h->unmap[i], NULL, &h->pages[i], 1) ||
		    h->unmap[i].status != GNTST_okay)
			leak = true;
	}
	/* A page whose grant may still be mapped is never given back. */
	if (leak)
		pr_info("note: unmapping grants failed; pages leaked\n");
	else if (h->pages && h->pages[0])
		gnttab_free_pages(h->nr, h->pages);
	kvfree(h->pages);
	kvfree(h->unmap);
	kfree(h);
}

static unsigned long xh_kaddr(struct page *page)
{
	return (unsigned long)pfn_to_kaddr(page_to_pfn(page));
}

/* Maps @nr grants of the backend's, @refs, into @h from @first on. */
static int xh_map(struct xh_held *h, unsigned int first, const u32 *refs,
		  unsigned int nr, u32 flags)
{
	struct gnttab_map_grant_ref *ops;
	unsigned int i;
	int err;

	ops = kvcalloc(nr, sizeof(*ops), GFP_KERNEL);
	if (!ops)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		gnttab_set_map_op(&ops[i], xh_kaddr(h->pages[first + i]),
				  flags, refs[i], xh.dev->otherend_id);
	err = gnttab_map_refs(ops, NULL, h->pages + first, nr);
	/* Whatever got mapped is unmapped by xh_held_free(). */
	for (i = 0; i < nr; i++) {
		if (ops[i].status != GNTST_okay) {
			err = err ?: -EIO;
			continue;
		}
		gnttab_set_unmap_op(&h->unmap[first + i],
				    xh_kaddr(h->pages[first + i]), flags,
				    ops[i].handle);
	}
	kvfree(ops);
	return err;
}

/*
 * Maps every grant of a session, the directory pages included, as a
 * guest kernel may: what the backend granted stays reachable.
 */
static struct xh_held *xh_hold(const struct xcuda_xsession_new_res *res)
{
	unsigned int ndir = DIV_ROUND_UP(res->nr_pages, XCUDA_DIR_REFS);
	const struct xcuda_page_directory *dir;
	unsigned int d, i, cnt, done = 0;
	u32 ref = res->dir_ref, *refs;
	struct xh_held *h;
	int err = -ENOMEM;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	refs = kmalloc_array(XCUDA_DIR_REFS, sizeof(*refs), GFP_KERNEL);
	if (!h || !refs) {
		kfree(h);
		kfree(refs);
		return ERR_PTR(-ENOMEM);
	}
	h->nr = res->nr_pages + ndir;
	h->pages = kvcalloc(h->nr, sizeof(*h->pages), GFP_KERNEL);
	h->unmap = kvcalloc(h->nr, sizeof(*h->unmap), GFP_KERNEL);
	if (!h->pages || !h->unmap)
		goto fail;
	for (i = 0; i < h->nr; i++)
		h->unmap[i].handle = INVALID_GRANT_HANDLE;
	err = gnttab_alloc_pages(h->nr, h->pages);
	if (err) {
		h->pages[0] = NULL;
		goto fail;
	}
	for (d = 0; d < ndir; d++) {
		err = xh_map(h, res->nr_pages + d, &ref, 1,
			     GNTMAP_host_map | GNTMAP_readonly);
		if (err)
			goto fail;
		dir = pfn_to_kaddr(page_to_pfn(h->pages[res->nr_pages + d]));
		cnt = min_t(unsigned int, res->nr_pages - done, XCUDA_DIR_REFS);
		for (i = 0; i < cnt; i++)
			refs[i] = le32_to_cpu(dir->refs[i]);
		err = xh_map(h, done, refs, cnt, GNTMAP_host_map);
		if (err)
			goto fail;
		done += cnt;
		ref = le32_to_cpu(dir->next);
	}
	kfree(refs);
	return h;

fail:
	kfree(refs);
	xh_held_free(h);
	return ERR_PTR(err);
}

/* The session's header page says closed: its worker has let go. */
static bool xh_closed(struct xh_held *h)
{
	const struct xcuda_data_intf *intf;
	unsigned int waited;

	intf = pfn_to_kaddr(page_to_pfn(h->pages[0]));
	for (waited = 0; waited < XH_CLOSE_MS; waited += 50) {
		if (READ_ONCE(intf->closed))
			return true;
		msleep(50);
	}
	return false;
}

/*
 * A guest kernel that maps its sessions' grants, ends the sessions and
 * never unmaps: xcuda-back must keep them charged (the session slot, the
 * domain's grant budget) until the grants really end, and refuse new
 * sessions once either is used up, with -ENOSPC (max-sessions) or
 * -EDQUOT (the budget).  Without that, every round succeeds and Dom0's
 * grant table fills.  Each session is ended and its worker gone (the
 * header says closed) before the next one is asked for.
 */
static void xh_linger(const char *name)
{
	struct xcuda_xsession_new_res res;
	struct xcuda_response rsp, end;
	struct xcuda_request req;
	struct xh_held *h, *tmp;
	unsigned int i, opened = 0, grants = 0;
	unsigned int max_sessions;
	LIST_HEAD(held);
	int refused = 0, err;

	max_sessions = xenbus_read_unsigned(xh.dev->otherend,
					    XCUDA_XS_MAX_SESSIONS,
					    XCUDA_XEN_DEF_SESSIONS);
	for (i = 0; i < XH_LINGER_ROUNDS && !refused; i++) {
		xh_new_request(&req, XH_ARENA);
		err = xh_call(&req, &rsp, XH_NEW_MS);
		/* Its port: the backend has it bound or is done with it. */
		xh_drop_port();
		if (err) {
			xh_fail(name, "round %u: no answer (%d)", i, err);
			goto out;
		}
		if (rsp.status == -EHOSTDOWN) {
			xh_skip(name, "no xcudad in Dom0 (-EHOSTDOWN)");
			goto out;
		}
		if (rsp.status) {
			refused = rsp.status;
			break;
		}
		memcpy(&res, rsp.out, sizeof(res));
		h = xh_hold(&res);
		if (IS_ERR(h)) {
			xh_fail(name, "round %u: mapping %u grants failed (%ld)",
				i, res.nr_pages, PTR_ERR(h));
			xh_end_session(res.session, &end);
			goto out;
		}
		list_add_tail(&h->node, &held);
		opened++;
		grants += h->nr;
		err = xh_end_session(res.session, &end);
		if (err || end.status) {
			xh_fail(name, "round %u: SESSION_END: %d/%d", i, err,
				err ? 0 : end.status);
			goto out;
		}
		if (!xh_closed(h)) {
			xh_fail(name, "round %u: the worker did not let go in %u ms",
				i, XH_CLOSE_MS);
			goto out;
		}
		/* Past the backend's release of the worker's file. */
		msleep(300);
	}
	pr_info("HOLDING %u sessions, %u grants mapped; then status %d\n",
		opened, grants, refused);
	/* Dom0 looks at what xcuda-back charges meanwhile. */
	msleep(XH_LINGER_HOLD_MS);
	if (!refused)
		xh_fail(name, "%u sessions, %u grants mapped: no bound (max-sessions %u)",
			opened, grants, max_sessions);
	else if (refused != -ENOSPC && refused != -EDQUOT)
		xh_fail(name, "refused with %d, not -ENOSPC or -EDQUOT",
			refused);
	else if (opened > max_sessions)
		xh_fail(name, "%u sessions opened, max-sessions %u", opened,
			max_sessions);
	else
		xh_pass(name);
out:
	list_for_each_entry_safe(h, tmp, &held, node) {
		list_del(&h->node);
		xh_held_free(h);
	}
	pr_info("RELEASED\n");
}

/*
 * full-ring: a ring's worth of SESSION_NEWs at once, whose answers are
 * left on the ring.  The backend takes each (its answer has a slot),
 * answers each exactly once, and writes nothing more while the ring stays
 * full and we ring it again and again (events that bring nothing); Dom0
 * measures meanwhile that nothing spins.  Then the answers are taken and
 * the sessions ended: Dom0 checks that their workers, slots and grants go.
 */
#define XH_FULL_HOLD_MS		10000

static void xh_full_ring(const char *name)
{
	unsigned int n, i, opened = 0, refused = 0, waited;
	struct xcuda_xsession_new_res res;
	u32 ids[XH_RACE_SLOTS] = { 0 };
	struct xcuda_response rsp, end;
	RING_IDX rp, now = 0, ev;
	bool held = false;
	u64 first;

	mutex_lock(&xh.lock);
	n = RING_SIZE(&xh.ring);
	if (xh.dead || !xh.sring || n > XH_RACE_SLOTS ||
	    RING_FREE_REQUESTS(&xh.ring) != n ||
	    xh.nr_ports + n > XH_MAX_PORTS) {
		mutex_unlock(&xh.lock);
		xh_fail(name, "not connected, or requests outstanding");
		return;
	}
	first = xh.next_id + 1;
	xh_post_new(n);
	mutex_unlock(&xh.lock);

	/* Every one answered, none taken off the ring. */
	for (waited = 0;; waited += 100) {
		if (!xh_indexes(&rp, &ev)) {
			xh_fail(name, "disconnected");
			goto out;
		}
		if ((RING_IDX)(rp - xh.ring.rsp_cons) > n) {
			xh_fail(name, "%u answers to %u requests",
				rp - xh.ring.rsp_cons, n);
			goto out;
		}
		if (rp - xh.ring.rsp_cons == n)
			break;
		if (waited >= 2 * XH_NEW_MS) {
			xh_fail(name, "%u of %u SESSION_NEWs answered",
				rp - xh.ring.rsp_cons, n);
			goto out;
		}
		msleep(100);
	}
	pr_info("FULL-HOLD %u answers on the ring, none taken; %u ms\n", n,
		XH_FULL_HOLD_MS);
	for (waited = 0; waited < XH_FULL_HOLD_MS; waited += 20) {
		mutex_lock(&xh.lock);
		if (xh.irq >= 0)
			notify_remote_via_irq(xh.irq);
		mutex_unlock(&xh.lock);
		msleep(20);
		if (!xh_indexes(&now, &ev) || now != rp) {
			xh_fail(name, "rsp_prod %u, then %u with the ring full",
				rp, now);
			goto out;
		}
	}
	pr_info("FULL-RELEASE\n");
	held = true;

out:
	/* Take what is there; end every session opened. */
	mutex_lock(&xh.lock);
	rp = xh.sring ? READ_ONCE(xh.sring->rsp_prod) : xh.ring.rsp_cons;
	virt_rmb();	/* answers are read after rsp_prod */
	while (!RING_RESPONSE_PROD_OVERFLOW(&xh.ring, rp) &&
	       xh.ring.rsp_cons != rp) {
		RING_COPY_RESPONSE(&xh.ring, xh.ring.rsp_cons, &rsp);
		xh.ring.rsp_cons++;
		/* Ours are first .. first + n - 1, each answered once. */
		i = rsp.id >= first && rsp.id - first < n ? rsp.id - first : n;
		memcpy(&res, rsp.out, sizeof(res));
		if (i == n || ids[i] || rsp.op != XCUDA_XOP_SESSION_NEW) {
			pr_info("note: %s: stray answer id %llu op %#x\n", name,
				rsp.id, rsp.op);
			refused = n + 1;	/* never a pass */
		} else if (!rsp.status && res.session) {
			ids[i] = res.session;
			opened++;
		} else {
			ids[i] = U32_MAX;	/* answered, refused */
			refused++;
		}
	}
	mutex_unlock(&xh.lock);
	for (i = 0; i < n; i++) {
		if (ids[i] && ids[i] != U32_MAX &&
		    (xh_end_session(ids[i], &end) || end.status)) {
			xh_fail(name, "SESSION_END of %#x failed", ids[i]);
			refused = n + 1;
		}
	}
	xh_close_ports();
	pr_info("note: %s: %u opened, %u refused\n", name, opened, refused);
	if (!held)
		return;		/* failed above */
	if (opened + refused != n)
		xh_fail(name, "%u opened, %u refused of %u", opened, refused,
			n);
	else if (!opened)
		xh_fail(name, "no session opened (is xcudad running?)");
	else
		xh_pass(name);
}

/*
 * full-data-ring: a session's data ring filled with requests and left
 * so, mapped as a guest kernel may: once with no doorbell (the worker
 * sleeps and never gets to them), once rung, with the worker's answers
 * never taken.  SESSION_END must still make the worker let go (the header
 * says closed); once unmapped, Dom0 checks that its slot and grants came
 * back.  Requests before OPEN are answered with an error, one each.
 */
static int xh_data_fill(const char *name,
			const struct xcuda_xsession_new_res *res,
			struct xh_held *h, evtchn_port_t port, bool ring)
{
	struct xcuda_front_ring fr;
	struct xcuda_sring *sring;
	struct xcuda_response rsp;
	struct xcuda_request req;
	struct evtchn_send send = { .port = port };
	unsigned int i, waited;

	sring = pfn_to_kaddr(page_to_pfn(h->pages[1]));
	if (READ_ONCE(sring->req_prod) || READ_ONCE(sring->rsp_prod)) {
		xh_fail(name, "the data ring is not fresh");
		return -EPROTO;
	}
	FRONT_RING_INIT(&fr, sring, XCUDA_PAGE_SIZE << res->ring_order);
	for (i = 0; i < RING_SIZE(&fr); i++) {
		memset(&req, 0, sizeof(req));
		req.hdr.op = XH_OP_ECHO;
		req.hdr.session = res->session;
		req.hdr.len = XH_ECHO_ARGS_LEN;
		req.hdr.id = i + 1;
		memcpy(RING_GET_REQUEST(&fr, fr.req_prod_pvt), &req,
		       sizeof(req));
		fr.req_prod_pvt++;
	}
	RING_PUSH_REQUESTS(&fr);
	if (!ring) {
		msleep(500);
		pr_info("note: %s: %u requests, not rung: %u answered\n", name,
			RING_SIZE(&fr), READ_ONCE(sring->rsp_prod));
		return 0;
	}
	if (HYPERVISOR_event_channel_op(EVTCHNOP_send, &send)) {
		xh_fail(name, "ringing port %u failed", port);
		return -EIO;
	}
	for (waited = 0; READ_ONCE(sring->rsp_prod) != fr.req_prod_pvt;
	     waited += 50) {
		if (waited >= XH_ANSWER_MS) {
			xh_fail(name, "%u of %u requests answered on the data ring",
				READ_ONCE(sring->rsp_prod), RING_SIZE(&fr));
			return -ETIMEDOUT;
		}
		msleep(50);
	}
	virt_rmb();	/* answers are read after rsp_prod */
	for (i = 0; i < RING_SIZE(&fr); i++) {
		RING_COPY_RESPONSE(&fr, i, &rsp);
		if (rsp.id != i + 1 || rsp.op != XH_OP_ECHO ||
		    rsp.len > XCUDA_RSP_INLINE) {
			xh_fail(name, "answer %u: id %llu op %#x len %u", i,
				rsp.id, rsp.op, rsp.len);
			return -EPROTO;
		}
	}
	/* Left there: the worker has nothing to take and nowhere to write. */
	msleep(500);
	if (READ_ONCE(sring->rsp_prod) != fr.req_prod_pvt) {
		xh_fail(name, "rsp_prod moved past the %u requests",
			RING_SIZE(&fr));
		return -EPROTO;
	}
	pr_info("note: %s: %u requests rung, %u answers left on the ring\n",
		name, RING_SIZE(&fr), RING_SIZE(&fr));
	return 0;
}

static void xh_full_data_ring(const char *name)
{
	struct xcuda_xsession_new_res res;
	struct xcuda_response rsp, end;
	struct xcuda_request req;
	evtchn_port_t port;
	struct xh_held *h;
	unsigned int pass;
	int err;

	for (pass = 0; pass < 2; pass++) {
		xh_new_request(&req, XH_ARENA);
		port = xh.nr_ports ? xh.ports[xh.nr_ports - 1] : 0;
		err = xh_call(&req, &rsp, XH_NEW_MS);
		if (err || rsp.status) {
			xh_drop_port();
			xh_fail(name, "SESSION_NEW: %d/%d", err,
				err ? 0 : rsp.status);
			return;
		}
		memcpy(&res, rsp.out, sizeof(res));
		h = xh_hold(&res);
		if (IS_ERR(h)) {
			xh_end_session(res.session, &end);
			xh_drop_port();
			xh_fail(name, "mapping its %u pages failed (%ld)",
				res.nr_pages, PTR_ERR(h));
			return;
		}
		err = xh_data_fill(name, &res, h, port, pass);
		if (err) {
			xh_end_session(res.session, &end);
		} else if (xh_end_session(res.session, &end) || end.status) {
			xh_fail(name, "SESSION_END failed");
			err = -EPROTO;
		} else if (!xh_closed(h)) {
			xh_fail(name, "%s ring: the worker did not let go in %u ms",
				pass ? "a rung" : "an unrung", XH_CLOSE_MS);
			err = -ETIMEDOUT;
		}
		/* Unmapped: xcuda-back's reap ends the grants. */
		xh_held_free(h);
		xh_drop_port();
		if (err)
			return;
	}
	xh_pass(name);
}

static const struct {
	const char *name;
	void (*run)(const char *name);
	bool named_only;	/* runs only when cases= names it */
} xh_cases[] = {
	{ "unknown-op-no-session", xh_unknown_op },
	{ "foreign-session", xh_foreign },
	{ "new-bad-len", xh_new_bad_len },
	{ "new-no-port", xh_new_no_port },
	{ "new-ring-order", xh_new_big_ring },
	{ "new-flags", xh_new_flags },
	{ "new-bound-port", xh_new_bound_port },
	{ "new-huge-arena", xh_new_huge },
	{ "valid-session", xh_valid_session },
	{ "call-on-control-ring", xh_call_on_control },
	{ "op-zero", xh_op_zero },
	{ "end-valid-session", xh_end_valid },
	{ "end-foreign-session", xh_end_foreign },
	{ "slot-race", xh_slot_race },
	{ "new-flood", xh_new_flood },
	{ "notify-flood", xh_flood },
	{ "req-prod-overflow", xh_req_prod },
	{ "linger-loop", xh_linger, true },
	{ "full-ring", xh_full_ring, true },
	{ "full-data-ring", xh_full_data_ring, true },
	/* Each ends the connection: one per load. */
	{ "req-prod-back", xh_req_prod_back, true },
	{ "req-prod-wrap", xh_req_prod_wrap, true },
};

static bool xh_selected(const char *name, bool named_only)
{
	size_t len = strlen(name);
	const char *p = cases;

	if (!p || !*p)
		return !named_only;
	while (p) {
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

static void xh_script(struct work_struct *work)
{
	unsigned int i;

	pr_info("START against %s\n", xh.dev->otherend);
	for (i = 0; i < ARRAY_SIZE(xh_cases); i++)
		if (xh_selected(xh_cases[i].name, xh_cases[i].named_only))
			xh_cases[i].run(xh_cases[i].name);
	pr_info("DONE %u passed, %u failed\n", xh.passed, xh.failed);
}

/* ------------------------------------------------------------------ */
/* xenbus                                                              */

static void xh_teardown(void)
{
	/* Wakes a script waiting for an answer; it lets go of the lock. */
	WRITE_ONCE(xh.dead, true);
	wake_up_all(&xh.wq);
	mutex_lock(&xh.lock);
	if (xh.irq >= 0) {
		unbind_from_irqhandler(xh.irq, &xh);
		xh.irq = -1;
		xh.has_evtchn = false;
	} else if (xh.has_evtchn) {
		xenbus_free_evtchn(xh.dev, xh.evtchn);
		xh.has_evtchn = false;
	}
	if (xh.sring)
		xenbus_teardown_ring((void **)&xh.sring, 1, &xh.ref);
	xh_close_ports();
	mutex_unlock(&xh.lock);
}

/* Whether xs_bad names @kind. */
static bool xh_bad(const char *kind)
{
	return xs_bad && !strcmp(xs_bad, kind);
}

static int xh_write_nodes(struct xenbus_device *dev)
{
	struct xenbus_transaction xbt;
	int err;

again:
	err = xenbus_transaction_start(&xbt);
	if (err)
		return err;
	err = xenbus_printf(xbt, dev->nodename, XCUDA_XS_RING_ORDER, "%u",
			    xh_bad("order5") ? 5 : 0);
	if (!err && xh_bad("ref-text"))
		err = xenbus_printf(xbt, dev->nodename, XCUDA_XS_RING_REF,
				    "x%u", xh.ref);
	else if (!err && !xh_bad("no-ref"))
		err = xenbus_printf(xbt, dev->nodename, XCUDA_XS_RING_REF, "%u",
				    xh_bad("ref-guess") ? xh.ref + 4096 :
				    xh.ref);
	if (!err)
		err = xenbus_printf(xbt, dev->nodename, XCUDA_XS_EVTCHN, "%u",
				    xh_bad("evtchn") ? 0xfffffu : xh.evtchn);
	if (!err)
		err = xenbus_printf(xbt, dev->nodename, XCUDA_XS_VERSION, "%u",
				    xh_bad("version") ? 999 :
				    XCUDA_XEN_VERSION);
	if (err) {
		xenbus_transaction_end(xbt, 1);
		return err;
	}
	err = xenbus_transaction_end(xbt, 0);
	if (err == -EAGAIN)
		goto again;
	return err;
}

static void xh_setup(struct xenbus_device *dev)
{
	void *ring;
	int err;

	xh_teardown();
	err = xenbus_setup_ring(dev, GFP_KERNEL, &ring, 1, &xh.ref);
	if (err)
		goto fail;
	mutex_lock(&xh.lock);
	xh.sring = ring;
	SHARED_RING_INIT(xh.sring);
	FRONT_RING_INIT(&xh.ring, xh.sring, XEN_PAGE_SIZE);
	mutex_unlock(&xh.lock);
	err = xenbus_alloc_evtchn(dev, &xh.evtchn);
	if (err)
		goto fail;
	xh.has_evtchn = true;
	err = bind_evtchn_to_irqhandler(xh.evtchn, xh_interrupt, 0,
					"xcuda-hostile", &xh);
	if (err < 0)
		goto fail;
	xh.irq = err;
	err = xh_write_nodes(dev);
	if (err)
		goto fail;
	WRITE_ONCE(xh.dead, false);
	xenbus_switch_state(dev, XenbusStateInitialised);
	return;

fail:
	xenbus_dev_fatal(dev, err, "setting up the ring");
	xh_teardown();
}

static void xh_backend_changed(struct xenbus_device *dev,
			       enum xenbus_state state)
{
	if (dev != xh.dev)
		return;
	switch (state) {
	case XenbusStateInitWait:
		if (dev->state == XenbusStateInitialising ||
		    dev->state == XenbusStateClosed)
			xh_setup(dev);
		break;
	case XenbusStateConnected:
		if (dev->state != XenbusStateInitialised)
			break;
		xenbus_switch_state(dev, XenbusStateConnected);
		if (!xh.started) {
			xh.started = true;
			schedule_work(&xh.work);
		}
		break;
	case XenbusStateClosed:
		/* Left Closed by the previous frontend: it will offer InitWait. */
		if (dev->state == XenbusStateInitialising)
			break;
		fallthrough;
	case XenbusStateClosing:
		xh_teardown();
		if (dev->state != XenbusStateClosed)
			xenbus_frontend_closed(dev);
		break;
	case XenbusStateUnknown:
		xh_teardown();
		break;
	default:
		break;
	}
}

static int xh_probe(struct xenbus_device *dev,
		    const struct xenbus_device_id *id)
{
	const char *tail = strrchr(dev->nodename, '/');

	if (!tail || strcmp(tail, "/0")) {
		dev_info(&dev->dev, "%s ignored: device 0 only\n",
			 dev->nodename);
		return 0;
	}
	xh.dev = dev;
	xenbus_switch_state(dev, XenbusStateInitialising);
	return 0;
}

static void xh_remove(struct xenbus_device *dev)
{
	unsigned int waited;
	enum xenbus_state st;

	if (dev != xh.dev)
		return;
	WRITE_ONCE(xh.dead, true);
	wake_up_all(&xh.wq);
	cancel_work_sync(&xh.work);
	st = xh_backend_state();
	if (xh.sring && st != XenbusStateClosing && st != XenbusStateClosed &&
	    st != XenbusStateUnknown) {
		/* Let the backend unmap the ring before it is freed. */
		xenbus_switch_state(dev, XenbusStateClosing);
		for (waited = 0; waited < XH_CLOSE_MS; waited += 100) {
			st = xh_backend_state();
			if (st == XenbusStateClosing ||
			    st == XenbusStateClosed || st == XenbusStateUnknown)
				break;
			msleep(100);
		}
	}
	xh_teardown();
	xh.dev = NULL;
}

static const struct xenbus_device_id xh_ids[] = {
	{ XCUDA_XS_TYPE },
	{ "" }
};

static struct xenbus_driver xh_driver = {
	.ids = xh_ids,
	.probe = xh_probe,
	.remove = xh_remove,
	.otherend_changed = xh_backend_changed,
	.not_essential = true,
};

/* ------------------------------------------------------------------ */
/* storm_ms=: events on xcuda-front's control channel                  */

static struct task_struct *xh_storm_task;

/*
 * Sends events on the guest's end of device 0's control channel, which
 * xcuda-front owns, for storm_ms: a guest kernel storming xcuda-back
 * while its own processes go on using the device.
 */
static int xh_storm(void *arg)
{
	struct evtchn_send send = { .port = (uintptr_t)arg };
	unsigned long start = jiffies;
	unsigned long end = start + msecs_to_jiffies(storm_ms);
	unsigned long sent = 0;
	int err = 0;

	while (time_before(jiffies, end) && !kthread_should_stop()) {
		err = HYPERVISOR_event_channel_op(EVTCHNOP_send, &send);
		if (err)
			break;
		if (!(++sent % 256))
			cond_resched();
	}
	if (err)
		pr_info("STORM-DONE: sending on port %u failed (%d) after %lu events\n",
			send.port, err, sent);
	else
		pr_info("STORM-DONE sent %lu events on port %u in %u ms\n",
			sent, send.port, jiffies_to_msecs(jiffies - start));
	/* Gone only with the module. */
	while (!kthread_should_stop())
		msleep(100);
	return 0;
}

static int xh_storm_start(void)
{
	unsigned int port;

	port = xenbus_read_unsigned("device/" XCUDA_XS_TYPE "/0",
				    XCUDA_XS_EVTCHN, 0);
	if (!port) {
		pr_info("STORM: no event channel of device 0 (is xcuda-front connected?)\n");
		return -ENODEV;
	}
	pr_info("STORM port %u for %u ms\n", port, storm_ms);
	xh_storm_task = kthread_run(xh_storm, (void *)(uintptr_t)port,
				    "xh-storm");
	return PTR_ERR_OR_ZERO(xh_storm_task);
}

static int __init xh_init(void)
{
	if (!xen_domain())
		return -ENODEV;
	if (storm_ms)
		return xh_storm_start();
	INIT_WORK(&xh.work, xh_script);
	/* Owned: the rig unbinds the device before rmmod (rig-rmmod.sh). */
	return xenbus_register_frontend(&xh_driver);
}

static void __exit xh_exit(void)
{
	if (storm_ms) {
		kthread_stop(xh_storm_task);
		return;
	}
	xenbus_unregister_driver(&xh_driver);
}

module_init(xh_init);
module_exit(xh_exit);

MODULE_DESCRIPTION("xcuda: hostile frontend, for tests only");
MODULE_LICENSE("GPL");
