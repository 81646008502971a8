// SPDX-License-Identifier: MIT
/*
 * Host functions (cudaLaunchHostFunc, cudaStreamAddCallback) run in the
 * guest through the slot area:
 *
 * - the worker's trampoline driven directly, without CUDA: records, the
 *   completion it waits for (wrong values do not release it), one-shot
 *   and graph contexts, stale and garbage user data, a full slot area,
 *   an area the guest filled with garbage, the end of the session and a
 *   guest that goes away while a trampoline waits (also over a real
 *   `local` channel, in a worker process that must then exit);
 * - HOSTFN_SETUP and the enqueue commands' checks (xd_handle());
 * - the guest's runner step: unknown tokens, one-shot and kept entries,
 *   the callback's arguments, a status out of range;
 * - over the upstream link's `tcp` channel, this test as the relay: a
 *   record goes as an xrec frame (a payload's bytes with it), the
 *   completion comes back as an xdon frame, read by the waiting
 *   trampoline itself (the worker in CUDA: a request on the way is
 *   queued for next()) or by the worker's next(); a relay that hangs up
 *   releases a waiting trampoline;
 * - through a real xcudad: hostile setups leave the worker serving; with
 *   a GPU, a worker blocked in cudaStreamSynchronize on a stream whose
 *   host function never completes exits once the guest goes away.
 */
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <linux/futex.h>

#include "daemon_harness.h"
#include "worker_harness.h"
#include "guest-lib/guest.h"
#include "guest-lib/hostfn.h"
#include "dom0-daemon/hostfn.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/transport_local.h"
#include "dom0-daemon/transport_tcp.h"
#include "dom0-daemon/up_link.h"
#include "dom0-daemon/worker.h"
#include "xcuda/hostfn.h"
#include "xcuda/local.h"

#define WSESSION	0x40c0ffeeu
#define WARENA		(1u << 20)
#define AREA_OFF	8192u
/*
 * How long something that must happen may take: waits end as soon as it
 * does, so only a failing run pays for this, and a loaded machine (or a
 * CUDA context torn down at a worker's exit) needs the room.
 */
#define SLOW_MS		TIMEOUT_MS

static int have_gpu;

/* ---- a worker session without a transport ---- */

static struct xd_chan wchan;
static struct xd_session wsess;
static int gone;	/* atomic: what the fake channel's peer_gone says */

static int fake_peer_gone(struct xd_chan *c)
{
	(void)c;
	return __atomic_load_n(&gone, __ATOMIC_ACQUIRE);
}

static const struct xd_chan_ops fake_ops = {
	.name = "fake",
	.peer_gone = fake_peer_gone,
};

static int wcall(uint16_t op, const void *args, uint16_t len, void *res,
		 size_t res_len)
{
	return call_res(&wsess, op, args, len, 0, 0, res, res_len);
}

static int wsetup(uint64_t off, uint64_t len)
{
	struct xcuda_hostfn_setup_args a = { off, len };

	return wcall(XCUDA_OP_HOSTFN_SETUP, &a, sizeof(a), NULL, 0);
}

/* A fresh session; @futex: the channel says futexes cross. */
static void wsession(int futex)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, 0, WARENA, 0 };
	struct xcuda_open_res r;

	memset(wchan.arena, 0, WARENA);
	wchan.ops = NULL;
	wchan.flags = futex ? XD_CHAN_SHARED_FUTEX : 0;
	/* No ops at init: a worker's session would take over our stdout. */
	REQUIRE_MSG(!xd_session_init(&wsess, &wchan), "worker setup",
		    "session init");
	wchan.ops = &fake_ops;
	REQUIRE_MSG(!wcall(XCUDA_OP_OPEN, &a, sizeof(a), &r, sizeof(r)),
		    "worker setup", "OPEN failed");
	__atomic_store_n(&gone, 0, __ATOMIC_RELEASE);
}

static struct xcuda_hostfn_area *warea(void)
{
	return (struct xcuda_hostfn_area *)(wchan.arena + AREA_OFF);
}

/* A trampoline on a thread of its own, as CUDA runs it. */
struct tramp {
	pthread_t th;
	void *ud;
	int callback;
	int status;
	int done;	/* atomic */
};

static void *tramp_main(void *arg)
{
	struct tramp *t = arg;

	if (t->callback)
		xd_hostfn_callback(NULL, (cudaError_t)t->status, t->ud);
	else
		xd_hostfn_trampoline(t->ud);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int tramp_start(struct tramp *t, void *ud, int callback, int status)
{
	memset(t, 0, sizeof(*t));
	t->ud = ud;
	t->callback = callback;
	t->status = status;
	return pthread_create(&t->th, NULL, tramp_main, t);
}

static int tramp_done(struct tramp *t)
{
	return __atomic_load_n(&t->done, __ATOMIC_ACQUIRE);
}

/* Joins it if it returns within @ms; 1 if it did. */
static int tramp_join(struct tramp *t, long ms)
{
	long end = now_ms() + ms;

	while (!tramp_done(t) && now_ms() < end)
		nap_ms(2);
	if (!tramp_done(t))
		return 0;
	pthread_join(t->th, NULL);
	return 1;
}

/* The slot of a record not yet completed, waiting up to @ms; or -1. */
static int pending_slot(struct xcuda_hostfn_area *a, long ms)
{
	long end = now_ms() + ms;

	do {
		for (int i = 0; i < XCUDA_HOSTFN_SLOTS; i++) {
			struct xcuda_hostfn_slot *sl = &a->slot[i];

			if (__atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE) !=
			    __atomic_load_n(&sl->done, __ATOMIC_ACQUIRE))
				return i;
		}
		nap_ms(1);
	} while (now_ms() < end);
	return -1;
}

static void complete(struct xcuda_hostfn_area *a, int slot)
{
	struct xcuda_hostfn_slot *sl = &a->slot[slot];

	__atomic_store_n(&sl->done, __atomic_load_n(&sl->seq,
						    __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	syscall(SYS_futex, &sl->done, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* ---- HOSTFN_SETUP and the enqueue commands ---- */

static void test_setup_checks(void)
{
	struct xcuda_host_func_launch_args fl = { 5, 0, 0 };
	struct xcuda_stream_add_callback_args cb = { 5, 0, 0 };
	struct xcuda_host_func_launch_res r;
	size_t need = sizeof(struct xcuda_hostfn_area);

	wsession(1);
	CHECK_EQ(wcall(XCUDA_OP_HOST_FUNC_LAUNCH, &fl, sizeof(fl), &r,
		       sizeof(r)), cudaErrorInvalidValue,
		 "setup: a host function before HOSTFN_SETUP is refused");
	CHECK_EQ(wcall(XCUDA_OP_STREAM_ADD_CALLBACK, &cb, sizeof(cb), &r,
		       sizeof(r)), cudaErrorInvalidValue,
		 "setup: a callback before HOSTFN_SETUP is refused");
	CHECK_EQ(wsetup(WARENA - need + 64, need), cudaErrorInvalidValue,
		 "setup: an area past the end of the arena");
	CHECK_EQ(wsetup(UINT64_MAX - 63, need), cudaErrorInvalidValue,
		 "setup: an offset that wraps");
	CHECK_EQ(wsetup(0, UINT64_MAX), cudaErrorInvalidValue,
		 "setup: a length larger than the arena");
	CHECK_EQ(wsetup(AREA_OFF + 4, need), cudaErrorInvalidValue,
		 "setup: a misaligned area");
	CHECK_EQ(wsetup(AREA_OFF, need - 1), cudaErrorInvalidValue,
		 "setup: an area too short for its slots");
	CHECK_EQ(wsetup(AREA_OFF, need), cudaSuccess, "setup: a good area");
	CHECK_EQ(wsetup(AREA_OFF, need), cudaErrorInvalidValue,
		 "setup: a second setup is refused");
	fl.token = 0;
	CHECK_EQ(wcall(XCUDA_OP_HOST_FUNC_LAUNCH, &fl, sizeof(fl), &r,
		       sizeof(r)), cudaErrorInvalidValue,
		 "enqueue: token 0 is refused");
	fl.token = 5;
	fl.rsvd = 1;
	CHECK_EQ(wcall(XCUDA_OP_HOST_FUNC_LAUNCH, &fl, sizeof(fl), &r,
		       sizeof(r)), cudaErrorInvalidValue,
		 "enqueue: a non-zero rsvd is refused");
	fl.rsvd = 0;
	fl.stream = 77;
	CHECK_EQ(wcall(XCUDA_OP_HOST_FUNC_LAUNCH, &fl, sizeof(fl), &r,
		       sizeof(r)), cudaErrorInvalidResourceHandle,
		 "enqueue: an unknown stream");
	cb.stream = 99;
	CHECK_EQ(wcall(XCUDA_OP_STREAM_ADD_CALLBACK, &cb, sizeof(cb), &r,
		       sizeof(r)), cudaErrorInvalidResourceHandle,
		 "enqueue: a callback on an unknown stream");
	CHECK_EQ(xd_hostfn_ctx_count(&wsess), 0,
		 "enqueue: refused enqueues hold no context");
	xd_session_fini(&wsess);
}

/* ---- the trampoline ---- */

static void test_trampoline(int futex)
{
	struct xcuda_hostfn_area *a = warea();
	struct tramp t = { 0 }, t2 = { 0 };
	int started = 0, started2 = 0, slot;
	void *ud = NULL, *g = NULL;
	uint32_t seq, wake;

	wsession(futex);
	EXPECT(!xd_hostfn_setup(&wsess, AREA_OFF, 4096), "setup");
	EXPECT(!xd_hostfn_ctx_new(&wsess, 77, XD_HOSTFN_ONESHOT, &ud),
	       "ctx_new");
	EXPECT(xd_hostfn_ctx_count(&wsess) == 1, "one context");
	EXPECT(!tramp_start(&t, ud, 0, 0), "thread");
	started = 1;
	slot = pending_slot(a, SLOW_MS);
	EXPECT(slot >= 0, "no record published");
	EXPECT(a->slot[slot].token == 77 && !a->slot[slot].flags &&
	       !a->slot[slot].status, "record: token %llu flags %u",
	       (unsigned long long)a->slot[slot].token, a->slot[slot].flags);
	/* The wake word goes up right after seq: give it the moment. */
	for (int i = 0; i < SLOW_MS && !__atomic_load_n(&a->wake,
						       __ATOMIC_ACQUIRE); i++)
		nap_ms(1);
	EXPECT(__atomic_load_n(&a->wake, __ATOMIC_ACQUIRE),
	       "wake word not bumped");
	/* Wrong completion values: it keeps waiting. */
	seq = a->slot[slot].seq;
	__atomic_store_n(&a->slot[slot].done, seq + 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &a->slot[slot].done, FUTEX_WAKE, INT_MAX, NULL,
		NULL, 0);
	a->slot[slot].token = 0xdeadbeef;
	nap_ms(120);
	EXPECT(!tramp_done(&t), "a wrong completion released it");
	__atomic_store_n(&a->slot[slot].done, 0, __ATOMIC_RELEASE);
	nap_ms(20);
	EXPECT(!tramp_done(&t), "completion 0 released it");
	__atomic_store_n(&a->slot[slot].done, seq, __ATOMIC_RELEASE);
	syscall(SYS_futex, &a->slot[slot].done, FUTEX_WAKE, INT_MAX, NULL,
		NULL, 0);
	EXPECT(tramp_join(&t, SLOW_MS), "the right completion did not release "
	       "it");
	started = 0;
	EXPECT(xd_hostfn_ctx_count(&wsess) == 0, "one-shot context kept");

	/* The same user data again: nothing, at once. */
	wake = a->wake;
	xd_hostfn_trampoline(ud);
	xd_hostfn_callback(NULL, cudaSuccess, NULL);
	xd_hostfn_trampoline((void *)(uintptr_t)0x123456789abcull);
	xd_hostfn_trampoline((void *)(uintptr_t)UINT64_MAX);
	EXPECT(a->wake == wake, "a stale or garbage context published");
	xd_hostfn_ctx_drop(ud);
	xd_hostfn_ctx_keep((void *)(uintptr_t)42);

	/* A graph's context fires every time, with the stream's status. */
	EXPECT(!xd_hostfn_ctx_new(&wsess, 88, XD_HOSTFN_GRAPH, &g), "graph");
	for (int i = 0; i < 3; i++) {
		EXPECT(!tramp_start(&t, g, 1, 700 + i), "thread");
		started = 1;
		slot = pending_slot(a, SLOW_MS);
		EXPECT(slot >= 0, "graph launch %d: no record", i);
		EXPECT(a->slot[slot].token == 88 &&
		       a->slot[slot].flags == XCUDA_HOSTFN_GRAPH &&
		       a->slot[slot].status == 700 + i,
		       "graph record %d: token %llu flags %u status %d", i,
		       (unsigned long long)a->slot[slot].token,
		       a->slot[slot].flags, a->slot[slot].status);
		complete(a, slot);
		EXPECT(tramp_join(&t, SLOW_MS), "graph launch %d stuck", i);
		started = 0;
	}
	EXPECT(xd_hostfn_ctx_count(&wsess) == 1, "graph context dropped");

	/* A guest that fills the area with garbage only delays itself. */
	memset(a, 0xa5, sizeof(*a));
	EXPECT(!tramp_start(&t, g, 0, 0), "thread");
	started = 1;
	slot = pending_slot(a, SLOW_MS);
	EXPECT(slot >= 0 && a->slot[slot].token == 88,
	       "no record after garbage");
	complete(a, slot);
	EXPECT(tramp_join(&t, SLOW_MS), "stuck after garbage");
	started = 0;

	/* The end of the session releases a waiting trampoline. */
	EXPECT(!tramp_start(&t, g, 0, 0), "thread");
	started = 1;
	EXPECT(pending_slot(a, SLOW_MS) >= 0, "no record before abort");
	xd_hostfn_abort(&wsess);
	EXPECT(tramp_join(&t, SLOW_MS), "abort did not release it");
	started = 0;
	wake = a->wake;
	EXPECT(!tramp_start(&t2, g, 0, 0), "thread");
	started2 = 1;
	EXPECT(tramp_join(&t2, SLOW_MS), "after abort a trampoline waited");
	started2 = 0;
	EXPECT(a->wake == wake, "after abort a trampoline published");
out:
	check_case(check_name("trampoline (%s): records, completion, graph, "
			      "garbage, abort", futex ? "futex" : "polling"));
	if (started || started2) {
		xd_hostfn_abort(&wsess);
		if (started)
			pthread_join(t.th, NULL);
		if (started2)
			pthread_join(t2.th, NULL);
	}
	xd_session_fini(&wsess);
}

static void test_peer_gone(int futex)
{
	struct xcuda_hostfn_area *a = warea();
	struct tramp t;
	int started = 0;
	void *g = NULL;
	long t0;

	wsession(futex);
	EXPECT(!xd_hostfn_setup(&wsess, AREA_OFF, 4096), "setup");
	EXPECT(!xd_hostfn_ctx_new(&wsess, 9, XD_HOSTFN_GRAPH, &g), "ctx");
	EXPECT(!tramp_start(&t, g, 0, 0), "thread");
	started = 1;
	EXPECT(pending_slot(a, SLOW_MS) >= 0, "no record");
	nap_ms(XD_HOSTFN_LIVENESS_MS * 2);
	EXPECT(!tramp_done(&t), "returned while the guest is there");
	t0 = now_ms();
	__atomic_store_n(&gone, 1, __ATOMIC_RELEASE);
	EXPECT(tramp_join(&t, SLOW_MS), "the guest went, the trampoline "
	       "stayed");
	started = 0;
	/* It looks every XD_HOSTFN_LIVENESS_MS; room for a loaded machine. */
	EXPECT(now_ms() - t0 < 5000, "took %ld ms", now_ms() - t0);
	/* The next launch of the graph does not wait either. */
	EXPECT(!tramp_start(&t, g, 0, 0), "thread");
	started = 1;
	EXPECT(tramp_join(&t, SLOW_MS), "a later trampoline waited");
	started = 0;
out:
	check_case(check_name("trampoline (%s): a guest that goes away "
			      "releases it", futex ? "futex" : "polling"));
	if (started) {
		xd_hostfn_abort(&wsess);
		pthread_join(t.th, NULL);
	}
	xd_session_fini(&wsess);
}

/* More functions running than slots: the last waits for a free slot. */
static void test_full(void)
{
	enum { N = XCUDA_HOSTFN_SLOTS + 1 };
	struct xcuda_hostfn_area *a = warea();
	static struct tramp t[N];
	int started = 0, n, i, slot;
	void *g = NULL;

	wsession(1);
	EXPECT(!xd_hostfn_setup(&wsess, AREA_OFF, 4096), "setup");
	EXPECT(!xd_hostfn_ctx_new(&wsess, 3, XD_HOSTFN_GRAPH, &g), "ctx");
	for (started = 0; started < N; started++)
		EXPECT(!tramp_start(&t[started], g, 0, 0), "thread %d",
		       started);
	nap_ms(100);
	for (n = 0, i = 0; i < XCUDA_HOSTFN_SLOTS; i++)
		n += __atomic_load_n(&a->slot[i].seq, __ATOMIC_ACQUIRE) !=
		     __atomic_load_n(&a->slot[i].done, __ATOMIC_ACQUIRE);
	EXPECT(n == XCUDA_HOSTFN_SLOTS, "%d records for %d slots", n,
	       XCUDA_HOSTFN_SLOTS);
	for (n = 0, i = 0; i < N; i++)
		n += tramp_done(&t[i]);
	EXPECT(!n, "%d returned early", n);
	/* Completing every record lets the last one in, then it too. */
	for (i = 0; i < 2 * N; i++) {
		slot = pending_slot(a, 200);
		if (slot < 0)
			break;
		complete(a, slot);
	}
	for (n = 0, i = 0; i < N; i++)
		n += tramp_join(&t[i], SLOW_MS);
	EXPECT(n == N, "%d of %d returned", n, N);
	started = 0;
out:
	check_case("trampoline: a full slot area makes the next one wait");
	if (started) {
		xd_hostfn_abort(&wsess);
		for (i = 0; i < started; i++)
			pthread_join(t[i].th, NULL);
	}
	xd_session_fini(&wsess);
}

/* ---- over the upstream link ---- */

static struct xd_up_key lkey;

/* The relay's half of the handshake, on another thread. */
struct lhs {
	int fd, ret;
};

static void *link_hs(void *arg)
{
	struct lhs *h = arg;
	struct xcuda_up_hello hello = { XCUDA_UP_MAGIC, XCUDA_UP_VERSION,
					{ 0 } };
	struct xcuda_up_welcome w;
	struct xcuda_up_chal ch;
	struct xcuda_up_open o;
	uint64_t dl = xd_up_deadline(5000);

	memset(&o, 0, sizeof(o));
	xd_up_nonce(hello.nonce);
	h->ret = xd_up_write_all(h->fd, &hello, sizeof(hello));
	if (!h->ret)
		h->ret = xd_up_read_all(h->fd, &ch, sizeof(ch), dl);
	if (h->ret)
		return NULL;
	xd_up_mac(&lkey, XD_UP_LABEL_RELAY, ch.nonce, hello.nonce, o.mac);
	o.arena_size = WARENA;
	h->ret = xd_up_write_all(h->fd, &o, sizeof(o));
	if (!h->ret)
		h->ret = xd_up_read_all(h->fd, &w, sizeof(w), dl);
	if (!h->ret && w.status)
		h->ret = w.status;
	return NULL;
}

/* A payload record, on a thread of its own as CUDA's log callback. */
struct ptramp {
	pthread_t th;
	void *ud;
	int done;	/* atomic */
};

static void *ptramp_main(void *arg)
{
	struct ptramp *t = arg;

	xd_hostfn_fire_data(t->ud, 2, "hello", 5);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The worker idle in next(), on a thread of its own. */
struct lnext {
	pthread_t th;
	struct xd_chan *c;
	struct xcuda_request req;
	int ret;
	int done;	/* atomic */
};

static void *lnext_main(void *arg)
{
	struct lnext *n = arg;

	n->ret = n->c->ops->next(n->c, &n->req, 5000);
	__atomic_store_n(&n->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int lrd(int fd, void *p, size_t len)
{
	return xd_up_read_all(fd, p, len, xd_up_deadline(SLOW_MS));
}

static int lsend_done(int fd, uint32_t slot, uint32_t done)
{
	struct xcuda_up_done d = { XCUDA_UP_DONE_MAGIC, slot, done, 0 };

	return xd_up_write_all(fd, &d, sizeof(d));
}

static int lsend_req(int fd, uint64_t id)
{
	struct xcuda_up_req f;

	memset(&f, 0, sizeof(f));
	f.magic = XCUDA_UP_REQ_MAGIC;
	f.req.hdr.op = XCUDA_OP_GET_DEVICE_COUNT;
	f.req.hdr.session = WSESSION;
	f.req.hdr.id = id;
	return xd_up_write_all(fd, &f, sizeof(f));
}

static void test_link(void)
{
	struct xd_tcp_conf conf = { &lkey, 0 };
	struct xcuda_open_args oa = { XCUDA_PROTO_VERSION, 0, WARENA, 0 };
	struct xcuda_hostfn_setup_args ha = { AREA_OFF, 4096 };
	struct xcuda_open_res or;
	const struct xd_chan_ops *ops;
	struct xcuda_hostfn_area *a;
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct xcuda_up_rec r;
	struct xcuda_up_rsp f;
	struct lhs h = { -1, -1 };
	struct ptramp pt = { 0 };
	struct lnext ln = { 0 };
	struct tramp t;
	struct xd_session s;
	struct xd_chan c;
	char pay[8] = "";
	pthread_t th;
	void *ud = NULL, *g = NULL;
	int sv[2], ret;

	lkey.len = 48;
	memset(lkey.bytes, 0x3d, lkey.len);
	REQUIRE_MSG(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
		    "link setup", "socketpair: %s", strerror(errno));
	h.fd = sv[1];
	pthread_create(&th, NULL, link_hs, &h);
	ret = xd_tcp_accept(sv[0], &c, &conf, WSESSION);
	pthread_join(th, NULL);
	REQUIRE_MSG(!ret && !h.ret, "link setup", "accept %d relay %d", ret,
		    h.ret);
	/* No ops at init: a worker's session would take over our stdout. */
	ops = c.ops;
	c.ops = NULL;
	REQUIRE_MSG(!xd_session_init(&s, &c), "link setup", "session init");
	c.ops = ops;
	REQUIRE_MSG(!call_res(&s, XCUDA_OP_OPEN, &oa, sizeof(oa), 0, 0, &or,
			      sizeof(or)) &&
		    !call_res(&s, XCUDA_OP_HOSTFN_SETUP, &ha, sizeof(ha), 0, 0,
			      NULL, 0), "link setup", "OPEN or HOSTFN_SETUP "
		    "failed on a `tcp` channel");
	a = (struct xcuda_hostfn_area *)(c.arena + AREA_OFF);

	/* 1. The worker in CUDA: the trampoline reads its completion. */
	EXPECT(!xd_hostfn_ctx_new(&s, 77, XD_HOSTFN_ONESHOT, &ud), "ctx");
	EXPECT(!tramp_start(&t, ud, 1, 9), "thread");
	ret = lrd(sv[1], &r, sizeof(r));
	EXPECT(!ret && r.magic == XCUDA_UP_REC_MAGIC && r.token == 77 &&
	       r.status == 9 && r.seq && r.slot < XCUDA_HOSTFN_SLOTS &&
	       !r.plen && !r.arg, "record: ret %d magic %#x token %llu "
	       "status %d", ret, r.magic, (unsigned long long)r.token,
	       r.status);
	nap_ms(50);
	EXPECT(!tramp_done(&t), "the trampoline returned before its "
	       "completion");
	EXPECT(!lsend_req(sv[1], 4242) && !lsend_done(sv[1], r.slot, r.seq),
	       "send");
	EXPECT(tramp_join(&t, SLOW_MS), "the trampoline did not return on "
	       "its completion");
	EXPECT(__atomic_load_n(&a->slot[r.slot].done, __ATOMIC_ACQUIRE) ==
	       r.seq, "the completion is not in the copy's slot");
	EXPECT(c.ops->next(&c, &req, 0) == 1 && req.hdr.id == 4242,
	       "next() did not give the request the trampoline read");
	memset(&rsp, 0, sizeof(rsp));
	rsp.id = req.hdr.id;
	rsp.op = req.hdr.op;
	EXPECT(!c.ops->reply(&c, &rsp, 0) && !lrd(sv[1], &f, sizeof(f)) &&
	       f.magic == XCUDA_UP_RSP_MAGIC && f.rsp.id == 4242,
	       "the queued request's answer");
	check_case("link: a trampoline sends its record as an xrec frame, "
		   "reads its completion itself and queues the request "
		   "before it for next()");

	/* 2. The worker idle in next(): it applies the completion. */
	EXPECT(!xd_hostfn_ctx_new(&s, 88, XD_HOSTFN_GRAPH, &g) &&
	       !xd_hostfn_ctx_payload(&s, g, 16384, 64), "ctx");
	ln.c = &c;
	EXPECT(!pthread_create(&ln.th, NULL, lnext_main, &ln), "thread");
	nap_ms(50);
	pt.ud = g;
	EXPECT(!pthread_create(&pt.th, NULL, ptramp_main, &pt), "thread");
	ret = lrd(sv[1], &r, sizeof(r));
	if (!ret)
		ret = lrd(sv[1], pay, 5);
	EXPECT(!ret && r.magic == XCUDA_UP_REC_MAGIC && r.token == 88 &&
	       r.status == 2 && r.arg == 5 && r.plen == 5 &&
	       r.poff == 16384 && r.flags == XCUDA_HOSTFN_GRAPH &&
	       !memcmp(pay, "hello", 5), "payload record: ret %d arg %llu "
	       "plen %u", ret, (unsigned long long)r.arg, r.plen);
	EXPECT(!lsend_done(sv[1], r.slot, r.seq), "send");
	{
		long end = now_ms() + SLOW_MS;

		while (!__atomic_load_n(&pt.done, __ATOMIC_ACQUIRE) &&
		       now_ms() < end)
			nap_ms(2);
	}
	EXPECT(__atomic_load_n(&pt.done, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&ln.done, __ATOMIC_ACQUIRE),
	       "the payload record did not return while next() waited");
	pthread_join(pt.th, NULL);
	pt.th = 0;
	EXPECT(!lsend_req(sv[1], 4343), "send");
	pthread_join(ln.th, NULL);
	ln.th = 0;
	EXPECT(ln.ret == 1 && ln.req.hdr.id == 4343, "next() %d", ln.ret);
	memset(&rsp, 0, sizeof(rsp));
	rsp.id = ln.req.hdr.id;
	rsp.op = ln.req.hdr.op;
	EXPECT(!c.ops->reply(&c, &rsp, 0) && !lrd(sv[1], &f, sizeof(f)) &&
	       f.rsp.id == 4343, "the answer");
	check_case("link: the worker's next() applies a completion and "
		   "goes on waiting; a payload goes with its record");

	/*
	 * 3. While a host function runs, the guest's other threads go on:
	 * the worker gets its requests although a trampoline waits.
	 */
	EXPECT(!tramp_start(&t, g, 0, 0), "thread");
	ret = lrd(sv[1], &r, sizeof(r));
	EXPECT(!ret && r.token == 88, "record: ret %d", ret);
	memset(&ln, 0, sizeof(ln));
	ln.c = &c;
	EXPECT(!pthread_create(&ln.th, NULL, lnext_main, &ln), "thread");
	nap_ms(20);
	EXPECT(!lsend_req(sv[1], 4444), "send");
	{
		long end = now_ms() + 1000;

		while (!__atomic_load_n(&ln.done, __ATOMIC_ACQUIRE) &&
		       now_ms() < end)
			nap_ms(2);
	}
	EXPECT(__atomic_load_n(&ln.done, __ATOMIC_ACQUIRE) && ln.ret == 1 &&
	       ln.req.hdr.id == 4444 && !tramp_done(&t),
	       "next() %d done %d while a trampoline waits", ln.ret,
	       __atomic_load_n(&ln.done, __ATOMIC_ACQUIRE));
	pthread_join(ln.th, NULL);
	ln.th = 0;
	memset(&rsp, 0, sizeof(rsp));
	rsp.id = ln.req.hdr.id;
	rsp.op = ln.req.hdr.op;
	EXPECT(!c.ops->reply(&c, &rsp, 0) && !lrd(sv[1], &f, sizeof(f)) &&
	       f.rsp.id == 4444, "the answer");
	EXPECT(!lsend_done(sv[1], r.slot, r.seq) && tramp_join(&t, SLOW_MS),
	       "the trampoline did not return on its completion");
	check_case("link: requests go on being served while a trampoline "
		   "waits");

	/* 4. The relay hangs up: a waiting trampoline returns. */
	EXPECT(!tramp_start(&t, g, 0, 0), "thread");
	ret = lrd(sv[1], &r, sizeof(r));
	EXPECT(!ret && r.token == 88, "record: ret %d", ret);
	close(sv[1]);
	sv[1] = -1;
	EXPECT(tramp_join(&t, SLOW_MS), "a trampoline still waits after "
	       "the relay hung up");
	check_case("link: a relay that hangs up releases a waiting "
		   "trampoline");
out:
	if (check_why_buf[0])
		check_case("link: host functions over a `tcp` channel");
	/* Trampolines still waiting return at the session's end. */
	xd_hostfn_abort(&s);
	if (pt.th)
		pthread_join(pt.th, NULL);
	if (ln.th)
		pthread_join(ln.th, NULL);
	xd_session_fini(&s);
	c.ops->close(&c);
	if (sv[1] >= 0)
		close(sv[1]);
}

/* ---- a worker process on a real `local` channel ---- */

/*
 * The worker's main thread itself runs a trampoline that the guest
 * never completes, as when it is blocked in cudaStreamSynchronize on the
 * stream: it must return once the guest goes away.  Exit status 0: it
 * did, after publishing; 2..: a setup step failed.
 */
static int blocked_worker(void)
{
	struct xd_session s;
	struct xd_chan c;
	void *g = NULL;
	int conn, ret = 0;

	conn = accept(lfd, NULL, NULL);
	if (conn < 0 || xd_local_accept(conn, &c, NULL, WSESSION))
		return 2;
	if (!(c.flags & XD_CHAN_SHARED_FUTEX))
		return 3;
	if (xd_session_init(&s, &c))
		return 4;
	if (xd_hostfn_setup(&s, AREA_OFF, 4096) ||
	    xd_hostfn_ctx_new(&s, 1234, XD_HOSTFN_GRAPH, &g))
		return 5;
	xd_hostfn_trampoline(g);
	if (((struct xcuda_hostfn_area *)(c.arena + AREA_OFF))->wake != 1)
		ret = 6;
	xd_session_fini(&s);
	c.ops->close(&c);
	return ret;
}

static void test_local_gone(void)
{
	struct xc_transport t = { 0 };
	struct xc_transport_opts o = { 0 };
	struct xcuda_hostfn_area *a;
	int open = 0, slot, st = -1;
	long end;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid)
		_exit(blocked_worker());
	EXPECT(pid > 0, "fork");
	o.path = lsock;
	o.arena_size = WARENA;
	EXPECT(!xc_local_open(&t, &o), "handshake");
	open = 1;
	EXPECT(t.flags & XC_TRANSPORT_SHARED_FUTEX, "local has no futex flag");
	a = (struct xcuda_hostfn_area *)((uint8_t *)t.arena + AREA_OFF);
	/* The record crosses the processes and the futex wakes us. */
	EXPECT(syscall(SYS_futex, &a->wake, FUTEX_WAIT, 0,
		       &(struct timespec){ SLOW_MS / 1000, 0 }, NULL,
		       0) == 0 ||
	       a->wake == 1, "no wake-up from the worker");
	slot = pending_slot(a, SLOW_MS);
	EXPECT(slot >= 0 && a->slot[slot].token == 1234, "no record");
	nap_ms(150);
	EXPECT(waitpid(pid, &st, WNOHANG) == 0, "worker returned early");
	/* The guest goes away without completing it. */
	t.ops->close(&t);
	open = 0;
	end = now_ms() + SLOW_MS;
	while (waitpid(pid, &st, WNOHANG) != pid && now_ms() < end)
		nap_ms(5);
	EXPECT(now_ms() < end, "the worker did not finish");
	pid = -1;
	EXPECT(WIFEXITED(st) && !WEXITSTATUS(st), "worker status %#x", st);
out:
	check_case("local: a worker blocked in a trampoline exits once the "
		   "guest is gone");
	if (open)
		t.ops->close(&t);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* ---- the guest's runner step ---- */

static int host_calls, cb_calls;
static void *cb_stream;
static cudaError_t cb_status;
static void *cb_data;

static void host_fn(void *data)
{
	host_calls += (int)(uintptr_t)data;
}

static void CUDART_CB stream_cb(cudaStream_t s, cudaError_t status,
				void *data)
{
	cb_calls++;
	cb_stream = s;
	cb_status = status;
	cb_data = data;
}

static void record(struct xcuda_hostfn_area *a, int slot, uint64_t token,
		   int32_t status)
{
	a->slot[slot].token = token;
	a->slot[slot].status = status;
	a->slot[slot].seq++;
	if (a->slot[slot].seq == a->slot[slot].done)
		a->slot[slot].seq++;
}

static void test_guest_scan(void)
{
	static struct xcuda_hostfn_area a;
	struct xc_hostfn h = { .kind = XC_HOSTFN_HOST, .fn.host = host_fn,
			       .data = (void *)(uintptr_t)1 };
	struct xc_hostfn c = { .kind = XC_HOSTFN_STREAM,
			       .fn.stream = stream_cb,
			       .data = (void *)&a,
			       .stream = (cudaStream_t)(uintptr_t)17 };
	uint64_t th = 0, tk = 0, tc = 0;
	unsigned int base = xc_hostfn_count();

	EXPECT(!xc_hostfn_register(&h, 0, &th) && th, "register");
	EXPECT(!xc_hostfn_register(&h, 0, &tk) && tk && tk != th,
	       "register");
	xc_hostfn_keep(tk);
	EXPECT(!xc_hostfn_register(&c, 0, &tc), "register");
	EXPECT(xc_hostfn_count() == base + 3, "count %u",
	       xc_hostfn_count());

	EXPECT(xc_hostfn_scan(&a, 0) == 0, "an empty area has records");
	/* Tokens that are not ours: completed, nothing runs. */
	record(&a, 0, 0, 0);
	record(&a, 5, 0xffffffffffffull, 0);
	record(&a, 63, tk + 1000, 0);
	EXPECT(xc_hostfn_scan(&a, 1) == 3 && !host_calls && !cb_calls,
	       "garbage tokens ran something");
	EXPECT(a.slot[0].done == a.slot[0].seq &&
	       a.slot[5].done == a.slot[5].seq &&
	       a.slot[63].done == a.slot[63].seq, "garbage left pending");
	/* A one-shot runs once, however often it is named. */
	record(&a, 1, th, 0);
	record(&a, 2, th, 0);
	EXPECT(xc_hostfn_scan(&a, 0) == 2 && host_calls == 1,
	       "one-shot ran %d times", host_calls);
	/* A kept one runs each time. */
	for (int i = 0; i < 3; i++)
		record(&a, 3, tk, 0);	/* one record: the last seq */
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && host_calls == 2, "kept: %d",
	       host_calls);
	record(&a, 3, tk, 0);
	record(&a, 4, tk, 0);
	EXPECT(xc_hostfn_scan(&a, 0) == 2 && host_calls == 4, "kept: %d",
	       host_calls);
	/* A callback gets the stream as named, the status and its data. */
	record(&a, 7, tc, cudaErrorLaunchFailure);
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && cb_calls == 1 &&
	       cb_stream == (void *)(uintptr_t)17 && cb_data == &a &&
	       cb_status == cudaErrorLaunchFailure, "callback arguments");
	EXPECT(!xc_hostfn_register(&c, 0, &tc), "register");
	record(&a, 8, tc, -5);
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && cb_status == cudaErrorUnknown,
	       "a negative status reached the program");
	EXPECT(xc_hostfn_scan(&a, 0) == 0, "records left after the scans");
	EXPECT(xc_hostfn_count() == base + 1, "count %u after the one-shots",
	       xc_hostfn_count());
	xc_hostfn_forget(tk);
	record(&a, 9, tk, 0);
	EXPECT(xc_hostfn_scan(&a, 0) == 1 && host_calls == 4,
	       "a forgotten token ran");
	EXPECT(xc_hostfn_count() == base, "count %u", xc_hostfn_count());
	EXPECT(!xc_hostfn_on_runner(), "the test thread is no runner");
out:
	check_case("guest: records name only registered functions");
}

/* ---- both halves: the worker's trampoline and the guest's runner ---- */

static pthread_t test_thread;
static int e2e_runs, e2e_elsewhere, e2e_refused, e2e_cb;	/* atomic */

static void e2e_fn(void *data)
{
	cudaError_t err = cudaSuccess;

	(void)data;
	nap_ms(30);
	if (!pthread_equal(pthread_self(), test_thread))
		__atomic_store_n(&e2e_elsewhere, 1, __ATOMIC_RELEASE);
	if (!xc_session_get(&err) && err == cudaErrorNotPermitted &&
	    xc_hostfn_on_runner())
		__atomic_store_n(&e2e_refused, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&e2e_runs, 1, __ATOMIC_ACQ_REL);
}

static void CUDART_CB e2e_cb_fn(cudaStream_t s, cudaError_t status,
				void *data)
{
	if (s == (cudaStream_t)(uintptr_t)21 && status == cudaSuccess &&
	    data == &e2e_cb)
		__atomic_add_fetch(&e2e_cb, 1, __ATOMIC_ACQ_REL);
}

/*
 * Last of the in-process cases: the runner thread serves this area for
 * the rest of the process.
 */
static void test_end_to_end(void)
{
	struct xc_hostfn h = { .kind = XC_HOSTFN_HOST, .fn.host = e2e_fn };
	struct xc_hostfn c = { .kind = XC_HOSTFN_STREAM,
			       .fn.stream = e2e_cb_fn, .data = &e2e_cb,
			       .stream = (cudaStream_t)(uintptr_t)21 };
	uint64_t th = 0, tc = 0;
	void *ud = NULL, *g = NULL;
	long t0;

	test_thread = pthread_self();
	wsession(1);
	EXPECT(!xd_hostfn_setup(&wsess, AREA_OFF, 4096), "setup");
	EXPECT(!xc_hostfn_serve(warea(), 1), "runner");
	EXPECT(!xc_hostfn_register(&h, 0, &th), "register");
	EXPECT(!xd_hostfn_ctx_new(&wsess, th, XD_HOSTFN_ONESHOT, &ud), "ctx");
	t0 = now_ms();
	/* This thread plays CUDA's: it returns once the function did. */
	xd_hostfn_trampoline(ud);
	EXPECT(__atomic_load_n(&e2e_runs, __ATOMIC_ACQUIRE) == 1,
	       "ran %d times", e2e_runs);
	EXPECT(now_ms() - t0 >= 30, "returned before the function did");
	EXPECT(__atomic_load_n(&e2e_elsewhere, __ATOMIC_ACQUIRE),
	       "ran on the caller's thread");
	EXPECT(__atomic_load_n(&e2e_refused, __ATOMIC_ACQUIRE),
	       "a CUDA call from a host function was not refused");
	EXPECT(!xc_hostfn_register(&c, XC_HOSTFN_KEEP, &tc), "register");
	EXPECT(!xd_hostfn_ctx_new(&wsess, tc, XD_HOSTFN_GRAPH, &g), "ctx");
	for (int i = 0; i < 3; i++)
		xd_hostfn_callback(NULL, cudaSuccess, g);
	EXPECT(__atomic_load_n(&e2e_cb, __ATOMIC_ACQUIRE) == 3,
	       "the graph's callback ran %d times", e2e_cb);
	xd_hostfn_trampoline(ud);
	EXPECT(__atomic_load_n(&e2e_runs, __ATOMIC_ACQUIRE) == 1,
	       "a one-shot ran again");
out:
	check_case("end to end: the trampoline waits for the guest's runner "
		   "thread, which refuses CUDA calls");
	xd_session_fini(&wsess);
}

/* ---- through a real xcudad ---- */

static int d_open(struct xc_transport *t)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, 0, ARENA, 0 };
	struct xcuda_open_res r;

	if (sess_open(t))
		return -1;
	return d_call(t, XCUDA_OP_OPEN, &a, sizeof(a), &r, sizeof(r));
}

static void test_daemon_hostile(void)
{
	struct xcuda_hostfn_setup_args s;
	struct xcuda_open_args o = { XCUDA_PROTO_VERSION, 0, ARENA, 0 };
	struct xcuda_open_res or;
	struct xc_transport t;
	int open = 0;

	EXPECT(!d_open(&t), "OPEN");
	open = 1;
	s = (struct xcuda_hostfn_setup_args){ ARENA, 4096 };
	EXPECT(d_call(&t, XCUDA_OP_HOSTFN_SETUP, &s, sizeof(s), NULL, 0) ==
	       cudaErrorInvalidValue, "setup at the arena's end");
	s = (struct xcuda_hostfn_setup_args){ UINT64_MAX & ~63ull, 1 << 20 };
	EXPECT(d_call(&t, XCUDA_OP_HOSTFN_SETUP, &s, sizeof(s), NULL, 0) ==
	       cudaErrorInvalidValue, "setup wrapping");
	s = (struct xcuda_hostfn_setup_args){ 4096, 4096 };
	EXPECT(!d_call(&t, XCUDA_OP_HOSTFN_SETUP, &s, sizeof(s), NULL, 0),
	       "a good setup");
	/* Garbage in the area: the worker never reads what we write. */
	memset((uint8_t *)t.arena + 4096, 0xff, 4096);
	EXPECT(d_call(&t, XCUDA_OP_HOSTFN_SETUP, &s, sizeof(s), NULL, 0) ==
	       cudaErrorInvalidValue, "a second setup");
	EXPECT(!d_call(&t, XCUDA_OP_OPEN, &o, sizeof(o), &or, sizeof(or)),
	       "the worker stopped serving");
out:
	check_case("xcudad: hostile setups, the worker keeps serving");
	if (open)
		t.ops->close(&t);
}

/*
 * With a GPU: the worker's main thread waits in cudaStreamSynchronize
 * for a host function that we never complete; when we go away, its
 * trampoline sees it and the worker exits.
 */
static void test_daemon_blocked_sync(void)
{
	struct xcuda_hostfn_setup_args s = { 4096, 4096 };
	struct xcuda_host_func_launch_args l = { 4242, 0, 0 };
	struct xcuda_host_func_launch_res lr;
	struct xcuda_stream_synchronize_args sy = { 0, { 0 } };
	struct xcuda_hostfn_area *a;
	struct xcuda_request req;
	struct xc_transport t;
	char needle[80], tramp[80], ended[80];
	int open = 0, slot;
	uint32_t session;
	pid_t pid;

	if (!have_gpu) {
		SKIP("xcudad: a worker blocked in a sync exits when the "
		     "guest goes", "no GPU (cudaGetDeviceCount: %d)",
		     init_status);
		return;
	}
	EXPECT(!d_open(&t), "OPEN");
	open = 1;
	EXPECT(!d_call(&t, XCUDA_OP_HOSTFN_SETUP, &s, sizeof(s), NULL, 0),
	       "setup");
	EXPECT(!d_call(&t, XCUDA_OP_HOST_FUNC_LAUNCH, &l, sizeof(l), &lr,
		       sizeof(lr)) && !lr.graph, "enqueue");
	a = (struct xcuda_hostfn_area *)((uint8_t *)t.arena + 4096);
	slot = pending_slot(a, SLOW_MS);
	EXPECT(slot >= 0 && a->slot[slot].token == 4242, "no record");
	req_init(&t, &req, XCUDA_OP_STREAM_SYNCHRONIZE, &sy, sizeof(sy));
	EXPECT(!t.ops->submit(&t, &req, 1), "submit the sync");
	/* close() clears @t: what names the worker is kept first. */
	session = t.session;
	pid = worker_pid(session);
	EXPECT(pid > 0, "no worker in the log");
	nap_ms(200);
	t.ops->close(&t);
	open = 0;
	snprintf(needle, sizeof(needle), "session %08x: worker %d exited\n",
		 session, (int)pid);
	/* Its CUDA context goes at its exit: give a loaded machine time. */
	if (!wait_log(needle, 2 * SLOW_MS)) {
		/* Which step hangs (debug lines: xcudad runs with -v). */
		snprintf(tramp, sizeof(tramp), "session %08x: host function: "
			 "the guest has gone", session);
		snprintf(ended, sizeof(ended), "session %08x: session ended",
			 session);
		EXPECT(0, "the worker did not exit (trampoline saw the guest "
		       "go: %s; sync returned and session torn down: %s)",
		       wait_log(tramp, 0) ? "yes" : "no",
		       wait_log(ended, 0) ? "yes" : "no");
	}
out:
	check_case("xcudad: a worker blocked in a sync exits when the guest "
		   "goes");
	if (open)
		t.ops->close(&t);
}

int main(void)
{
	harness_setup();
	xd_log_setup(XD_LOG_ERROR, 0);
	have_gpu = !init_status && device_count > 0;
	wchan.arena = calloc(1, WARENA);
	wchan.arena_size = WARENA;
	wchan.session = WSESSION;
	REQUIRE_MSG(wchan.arena, "setup", "out of memory");
	test_setup_checks();
	test_trampoline(1);
	test_trampoline(0);
	test_peer_gone(1);
	test_peer_gone(0);
	test_full();
	test_link();
	/* The runner serves wchan's arena from now on: never freed. */
	test_end_to_end();
	REQUIRE_MSG(!listen_on("hf.sock"), "setup", "listen: %s",
		    strerror(errno));
	test_local_gone();
	close(lfd);
	unlink(lsock);
	test_guest_scan();
	REQUIRE_MSG(!start_daemon("4"), "setup", "xcudad did not start");
	test_daemon_hostile();
	test_daemon_blocked_sync();
	check_daemon_stops("xcudad stops");
	return check_summary();
}
