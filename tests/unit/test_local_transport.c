// SPDX-License-Identifier: MIT
/*
 * The `local` transport end to end: a forked child plays the worker
 * (xd_local_accept on a real listening socket in a temporary directory),
 * the parent plays the guest (xc_local_open).  Besides the honest paths it
 * checks that each end survives a peer that lies about the ring indexes,
 * that a worker's death wakes the guest, and that bad hellos are refused
 * without descriptors.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "guest-lib/transport.h"
#include "dom0-daemon/transport.h"
#include "dom0-daemon/transport_local.h"
#include "xcuda/local.h"
#include "check.h"

#define SESSION		0x5e551017u
#define RING_ORDER	4
#define ROUND_TRIPS	200000
#define NOSPIN_TRIPS	20000
#define BATCHES		2000
/* Test-only request flag: the worker answers it with @more set. */
#define RF_MORE		(1u << 15)

enum wmode {
	W_ECHO,		/* answer everything until the guest goes */
	W_SLOW,		/* the same, 300 ms late */
	W_DIE,		/* take one request and exit without answering */
	W_BUMP,		/* take one request, then lie about rsp_prod */
	W_EXPECT_EPROTO,	/* once told, next() must say -EPROTO */
	W_REFUSE,	/* xd_local_accept() must fail with @expect */
	W_MOVE,		/* arena_at(): refusals, a move, then echo */
};

struct wcfg {
	enum wmode mode;
	struct xd_local_limits lim;
	int expect;
};

/*
 * Each case is one check of several steps: EXPECT() (check.h) records
 * the first step that failed and jumps to the case's cleanup at `out`.
 */
static char sock_path[128];
static int listen_fd = -1;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t req_sum(const struct xcuda_request *q, const uint8_t *arena)
{
	uint64_t h = fnv1a(0xcbf29ce484222325ull ^ q->hdr.id, q->args,
			   q->hdr.len);

	if (q->hdr.data_len)
		h = fnv1a(h, arena + q->hdr.data_off, q->hdr.data_len);
	return h;
}

static void make_req(struct xcuda_request *q, uint64_t i, uint32_t session)
{
	memset(&q->hdr, 0, sizeof(q->hdr));
	q->hdr.op = (uint16_t)(1 + i % 1000);
	q->hdr.len = (uint16_t)(i % (XCUDA_REQ_INLINE + 1));
	q->hdr.session = session;
	q->hdr.id = i * 0x9e3779b97f4a7c15ull;
	for (unsigned int k = 0; k < q->hdr.len; k++)
		q->args[k] = (uint8_t)(i * 131 + k * 7);
}

/* NULL if @r is the echo of @q, else what is wrong with it. */
static const char *check_rsp(const struct xcuda_request *q,
			     const struct xcuda_response *r,
			     const uint8_t *arena)
{
	uint64_t sum;

	if (r->id != q->hdr.id)
		return "wrong id";
	if (r->op != q->hdr.op || r->status != q->hdr.op)
		return "wrong op or status";
	if (r->len != sizeof(sum))
		return "wrong len";
	memcpy(&sum, r->out, sizeof(sum));
	if (sum != req_sum(q, arena))
		return "wrong checksum";
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The worker.                                                        */

static int send_int(int fd, int v)
{
	return send(fd, &v, sizeof(v), MSG_NOSIGNAL) == sizeof(v) ? 0 : -1;
}

static int recv_int(int fd, int *v, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	return recv(fd, v, sizeof(*v), MSG_WAITALL) == sizeof(*v) ? 0 : -1;
}

/* Answers with status = op and out = the checksum; flips a data byte. */
static int do_echo(struct xd_chan *c, int delay_ms)
{
	struct xcuda_request q;
	struct xcuda_response r;
	uint64_t sum;
	int ret;

	for (;;) {
		ret = c->ops->next(c, &q, -1);
		if (ret == -EPIPE)
			return 0;
		if (ret < 0)
			return 10;
		if (!ret)
			continue;
		if (q.hdr.len > XCUDA_REQ_INLINE ||
		    !xcuda_extent_ok(q.hdr.data_off, q.hdr.data_len,
				     c->arena_size))
			return 11;
		sum = req_sum(&q, c->arena);
		if (q.hdr.data_len)
			c->arena[q.hdr.data_off] ^= 0xff;
		memset(&r, 0, sizeof(r));
		r.id = q.hdr.id;
		r.op = q.hdr.op;
		r.flags = q.hdr.flags;
		r.status = q.hdr.op;
		r.len = sizeof(sum);
		memcpy(r.out, &sum, sizeof(sum));
		if (delay_ms)
			usleep((useconds_t)delay_ms * 1000);
		if (c->ops->reply(c, &r, !!(q.hdr.flags & RF_MORE)) < 0)
			return 12;
	}
}

/*
 * Moves the arena to an address free in this process: taken addresses,
 * unaligned ones and a second move are refused and change nothing; after
 * the move both ends still share the same memory.
 */
static int do_move(struct xd_chan *c, int side)
{
	uint8_t *old = c->arena, *free_at;
	uint64_t ring = XCUDA_PAGE_SIZE << RING_ORDER;

	if (!c->ops->arena_at)
		return 20;
	/* Over our own ring and arena: MAP_FIXED_NOREPLACE says no. */
	if (c->ops->arena_at(c, (uintptr_t)(old - ring)) != -EEXIST ||
	    c->arena != old)
		return 21;
	if (c->ops->arena_at(c, (uintptr_t)old + 1) != -EINVAL ||
	    c->ops->arena_at(c, 0) != -EINVAL)
		return 22;
	/* Reserve and release: a range nothing else holds right now. */
	free_at = mmap(NULL, c->arena_size, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (free_at == MAP_FAILED)
		return 23;
	munmap(free_at, c->arena_size);
	if (c->ops->arena_at(c, (uintptr_t)free_at) ||
	    c->arena != free_at)
		return 24;
	if (c->ops->arena_at(c, (uintptr_t)old) != -EINVAL)
		return 25;
	/* The guest checks that it sees this through its own mapping. */
	memset(c->arena + 4096, 0x5a, 4096);
	send_int(side, 0);
	return 0;
}

static int worker_main(const struct wcfg *w, int side)
{
	struct xcuda_request q;
	struct xd_chan c;
	xcuda_sring_t *sring;
	int conn, ret, v;

	conn = accept(listen_fd, NULL, NULL);
	close(listen_fd);
	if (conn < 0)
		return 2;
	ret = xd_local_accept(conn, &c, &w->lim, SESSION);
	if (w->mode == W_REFUSE) {
		send_int(side, ret);
		close(conn);
		return ret == w->expect ? 0 : 3;
	}
	if (ret)
		return 4;
	/* The test knows the layout: the ring sits right before the arena. */
	sring = (xcuda_sring_t *)(c.arena - (XCUDA_PAGE_SIZE << RING_ORDER));

	switch (w->mode) {
	case W_ECHO:
		ret = do_echo(&c, 0);
		break;
	case W_SLOW:
		ret = do_echo(&c, 300);
		break;
	case W_DIE:
		ret = c.ops->next(&c, &q, 5000) == 1 ? 0 : 5;
		_exit(ret);	/* no close: just vanish */
	case W_BUMP:
		if (c.ops->next(&c, &q, 5000) != 1) {
			ret = 6;
			break;
		}
		/* One request outstanding, five answers claimed. */
		__atomic_store_n(&sring->rsp_prod, sring->rsp_prod + 5,
				 __ATOMIC_RELEASE);
		send_int(side, 0);
		recv_int(side, &v, 5000);	/* till the guest has looked */
		ret = 0;
		break;
	case W_EXPECT_EPROTO: {
		struct xcuda_response r = { 0 };
		int r1, r2, r3;

		if (recv_int(side, &v, 5000)) {
			ret = 7;
			break;
		}
		r1 = c.ops->next(&c, &q, 2000);
		r2 = c.ops->next(&c, &q, 0);
		r3 = c.ops->reply(&c, &r, 0);
		send_int(side, r1);
		ret = r1 == -EPROTO && r2 == -EPROTO && r3 < 0 ? 0 : 8;
		break;
	}
	case W_MOVE:
		ret = do_move(&c, side);
		if (!ret)
			ret = do_echo(&c, 0);
		break;
	default:
		ret = 9;
	}
	c.ops->close(&c);
	return ret;
}

/* Forks a worker for the next connection; *side talks to it. */
static pid_t spawn(const struct wcfg *w, int *side)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(worker_main(w, sv[1]));
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	*side = sv[0];
	return pid;
}

/* The worker's exit status, or -1 if it had to be killed. */
static int reap(pid_t pid, int timeout_ms)
{
	int st;

	for (int i = 0; i < timeout_ms; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* Reaps the case's worker, which must have exited with 0. */
static void finish(pid_t pid, int side, int timeout_ms)
{
	int st;

	if (side >= 0)
		close(side);
	if (pid <= 0)
		return;
	st = reap(pid, timeout_ms);
	if (st != 0)
		CHECK_WHY("worker exit status %d", st);
}

static int guest_open(struct xc_transport *t, uint64_t arena,
		      unsigned int order)
{
	struct xc_transport_opts o = {
		.path = sock_path,
		.arena_size = arena,
		.ring_order = order,
	};

	return xc_local_open(t, &o);
}

static int round_trip(struct xc_transport *t, uint64_t i, const char **bad)
{
	struct xcuda_request q;
	struct xcuda_response r;
	int ret;

	make_req(&q, i, t->session);
	ret = t->ops->submit(t, &q, 1);
	if (ret)
		return ret;
	ret = t->ops->receive(t, &r, 1, 5000);
	if (ret != 1)
		return ret ? ret : -ETIMEDOUT;
	*bad = check_rsp(&q, &r, t->arena);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Cases.                                                             */

/*
 * A case's start: forks its worker (*pid, *side talks to it) and opens
 * the guest end @t; 0, or -1 with the reason recorded.
 */
static int open_case(const struct wcfg *w, struct xc_transport *t,
		     uint64_t arena, unsigned int order, pid_t *pid,
		     int *side)
{
	int ret;

	*pid = spawn(w, side);
	if (*pid <= 0) {
		CHECK_WHY("fork: %s", strerror(errno));
		return -1;
	}
	ret = guest_open(t, arena, order);
	if (ret) {
		CHECK_WHY("xc_local_open: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

/* A case's end: closes @t, reaps the worker and reports the case. */
static void close_case(const char *name, struct xc_transport *t, pid_t pid,
		       int side)
{
	if (t->ops)
		t->ops->close(t);
	finish(pid, side, 3000);
	check_case(name);
}

static void case_handshake(void)
{
	struct wcfg w = { W_ECHO, { 1ull << 30, RING_ORDER }, 0 };
	struct xc_transport t = { 0 };
	struct xcuda_request q;
	struct xcuda_response r;
	const char *bad;
	uint8_t *a;
	int side = -1, ret;
	pid_t pid;

	if (open_case(&w, &t, 64ull << 20, RING_ORDER, &pid, &side))
		goto out;
	EXPECT(!strcmp(t.ops->name, "local"), "name %s", t.ops->name);
	EXPECT(t.ring_slots == XCUDA_RING_SIZE(RING_ORDER),
	       "ring_slots %u", t.ring_slots);
	EXPECT(t.arena_size == 64ull << 20, "arena_size %llu",
	       (unsigned long long)t.arena_size);
	EXPECT(t.session == SESSION, "session %#x", t.session);

	/* The arena is shared both ways: the worker sums it and flips one. */
	a = t.arena;
	for (unsigned int i = 0; i < 4096; i++)
		a[t.arena_size - 4096 + i] = (uint8_t)(i * 13);
	make_req(&q, 7, t.session);
	q.hdr.data_off = (uint32_t)(t.arena_size - 4096);
	q.hdr.data_len = 4096;
	ret = t.ops->submit(&t, &q, 1);
	EXPECT(!ret, "submit: %s", strerror(-ret));
	ret = t.ops->receive(&t, &r, 1, 5000);
	EXPECT(ret == 1, "receive: %d", ret);
	a[t.arena_size - 4096] ^= 0xff;	/* as the worker did, to sum */
	bad = check_rsp(&q, &r, t.arena);
	EXPECT(!bad, "%s", bad);
	EXPECT(a[t.arena_size - 4096] == 0, "worker's write not seen");
out:
	close_case("handshake", &t, pid, side);
}

static void case_arena_move(void)
{
	struct wcfg w = { W_MOVE, { 1ull << 30, RING_ORDER }, 0 };
	struct xc_transport t = { 0 };
	const char *bad = NULL;
	int side = -1, ret, v = -1;
	unsigned int i, odd = 0;
	uint8_t *a;
	pid_t pid;

	if (open_case(&w, &t, 16ull << 20, RING_ORDER, &pid, &side))
		goto out;
	EXPECT(!recv_int(side, &v, 5000) && !v, "worker's moves failed");
	a = t.arena;
	for (i = 0; i < 4096; i++)
		odd += a[4096 + i] != 0x5a;
	EXPECT(!odd, "%u bytes of the moved arena not seen", odd);
	ret = round_trip(&t, 3, &bad);
	EXPECT(!ret && !bad, "after the move: %s", ret ? strerror(-ret) : bad);
out:
	close_case("arena_at moves the worker's arena, refuses taken addresses",
		   &t, pid, side);
}

static void run_round_trips(const char *name, unsigned int n)
{
	struct wcfg w = { W_ECHO, { 1ull << 30, RING_ORDER }, 0 };
	struct xc_transport t = { 0 };
	const char *bad = NULL;
	int side = -1, ret;
	double t0, dt;
	pid_t pid;

	if (open_case(&w, &t, 0, 0, &pid, &side))
		goto out;
	t0 = now_s();
	for (unsigned int i = 0; i < n; i++) {
		ret = round_trip(&t, i, &bad);
		EXPECT(!ret && !bad, "trip %u: %s", i,
		       ret ? strerror(-ret) : bad);
	}
	dt = now_s() - t0;
	printf("# %s: %u round trips, mean %.2f us\n", name, n,
	       dt * 1e6 / n);
out:
	close_case(name, &t, pid, side);
}

static void case_batches(void)
{
	struct wcfg w = { W_ECHO, { 1ull << 30, RING_ORDER }, 0 };
	struct xc_transport t = { 0 };
	struct xcuda_request *q = NULL;
	struct xcuda_response r[7];
	unsigned int slots = 0, got, b, k;
	const char *bad;
	int side = -1, ret;
	pid_t pid;

	if (open_case(&w, &t, 0, 0, &pid, &side))
		goto out;
	slots = t.ring_slots;
	q = calloc(slots + 1, sizeof(*q));
	EXPECT(q, "out of memory");
	for (b = 0; b < BATCHES; b++) {
		for (k = 0; k < slots; k++) {
			make_req(&q[k], (uint64_t)b * slots + k, t.session);
			/* The worker holds the bell for all but the last. */
			if (k + 1 < slots)
				q[k].hdr.flags = RF_MORE;
		}
		ret = t.ops->submit(&t, q, slots);
		EXPECT(!ret, "batch %u: submit: %s", b, strerror(-ret));
		if (!b) {
			ret = t.ops->submit(&t, &q[slots], 1);
			EXPECT(ret == -ENOBUFS, "overfull submit: %d", ret);
		}
		for (got = 0; got < slots;) {
			ret = t.ops->receive(&t, r, 7, 5000);
			EXPECT(ret > 0, "batch %u: receive: %d after %u", b,
			       ret, got);
			for (k = 0; k < (unsigned int)ret; k++, got++) {
				bad = check_rsp(&q[got], &r[k], t.arena);
				EXPECT(!bad, "batch %u slot %u: %s", b, got,
				       bad);
			}
		}
	}
out:
	free(q);
	close_case("batches", &t, pid, side);
}

static void case_timeout(void)
{
	struct wcfg w = { W_SLOW, { 1ull << 30, RING_ORDER }, 0 };
	struct xc_transport t = { 0 };
	struct xcuda_request q;
	struct xcuda_response r;
	const char *bad;
	int side = -1, ret;
	double t0, dt;
	pid_t pid;

	if (open_case(&w, &t, 0, 0, &pid, &side))
		goto out;

	ret = t.ops->receive(&t, &r, 1, 0);
	EXPECT(ret == 0, "idle receive(0): %d", ret);
	t0 = now_s();
	ret = t.ops->receive(&t, &r, 1, 100);
	dt = now_s() - t0;
	EXPECT(ret == 0, "idle receive(100): %d", ret);
	EXPECT(dt >= 0.099 && dt < 1.0, "idle receive(100) took %.3f s", dt);

	make_req(&q, 1, t.session);
	ret = t.ops->submit(&t, &q, 1);
	EXPECT(!ret, "submit: %s", strerror(-ret));
	t0 = now_s();
	ret = t.ops->receive(&t, &r, 1, 50);
	dt = now_s() - t0;
	EXPECT(ret == 0, "receive(50) from a slow worker: %d", ret);
	EXPECT(dt >= 0.049 && dt < 0.29, "receive(50) took %.3f s", dt);
	ret = t.ops->receive(&t, &r, 1, -1);
	EXPECT(ret == 1, "receive(-1): %d", ret);
	bad = check_rsp(&q, &r, t.arena);
	EXPECT(!bad, "%s", bad);
out:
	close_case("timeout", &t, pid, side);
}

static void case_worker_exit(void)
{
	struct wcfg w = { W_DIE, { 1ull << 30, RING_ORDER }, 0 };
	struct xc_transport t = { 0 };
	struct xcuda_request q;
	struct xcuda_response r;
	int side = -1, ret;
	double t0, dt;
	pid_t pid;

	if (open_case(&w, &t, 0, 0, &pid, &side))
		goto out;
	make_req(&q, 1, t.session);
	ret = t.ops->submit(&t, &q, 1);
	EXPECT(!ret, "submit: %s", strerror(-ret));
	t0 = now_s();
	ret = t.ops->receive(&t, &r, 1, -1);
	dt = now_s() - t0;
	EXPECT(ret == -EPIPE, "receive: %d", ret);
	EXPECT(dt < 1.0, "noticed after %.3f s", dt);
	ret = t.ops->submit(&t, &q, 1);
	EXPECT(ret == -EPIPE, "submit after death: %d", ret);
	printf("# worker_exit: noticed in %.1f ms\n", dt * 1e3);
out:
	close_case("worker_exit", &t, pid, side);
}

static void case_hostile_guest(void)
{
	static const RING_IDX bogus[] = {
		XCUDA_RING_SIZE(RING_ORDER) + 1, 0x80000000u, 0xffffffffu,
	};
	struct wcfg w = { W_EXPECT_EPROTO, { 1ull << 30, RING_ORDER }, 0 };

	for (unsigned int i = 0; i < sizeof(bogus) / sizeof(bogus[0]); i++) {
		struct xc_transport t = { 0 };
		xcuda_sring_t *sring;
		int side = -1, ret, v = 0;
		pid_t pid;

		pid = spawn(&w, &side);
		EXPECT(pid > 0, "fork: %s", strerror(errno));
		ret = guest_open(&t, 0, RING_ORDER);
		if (ret) {
			CHECK_WHY("xc_local_open: %s", strerror(-ret));
		} else {
			sring = (xcuda_sring_t *)((uint8_t *)t.arena -
					(XCUDA_PAGE_SIZE << RING_ORDER));
			__atomic_store_n(&sring->req_prod, bogus[i],
					 __ATOMIC_RELEASE);
			send_int(side, 1);
			if (recv_int(side, &v, 5000))
				CHECK_WHY("req_prod %#x: worker said nothing",
					  bogus[i]);
			else if (v != -EPROTO)
				CHECK_WHY("req_prod %#x: next() = %d",
					  bogus[i], v);
			t.ops->close(&t);
		}
		finish(pid, side, 5000);
		if (!check_case_ok())
			break;
	}
out:
	check_case("hostile_guest");
}

static void case_hostile_worker(void)
{
	struct wcfg w = { W_BUMP, { 1ull << 30, RING_ORDER }, 0 };
	struct xc_transport t = { 0 };
	struct xcuda_request q;
	struct xcuda_response r[4];
	int side = -1, ret, v;
	pid_t pid;

	if (open_case(&w, &t, 0, RING_ORDER, &pid, &side))
		goto out;
	make_req(&q, 1, t.session);
	ret = t.ops->submit(&t, &q, 1);
	EXPECT(!ret, "submit: %s", strerror(-ret));
	EXPECT(!recv_int(side, &v, 5000), "worker did not bump");
	ret = t.ops->receive(&t, r, 4, 1000);
	EXPECT(ret == -EPROTO, "receive: %d", ret);
	ret = t.ops->receive(&t, r, 4, 0);
	EXPECT(ret == -EPROTO, "second receive: %d", ret);
	ret = t.ops->submit(&t, &q, 1);
	EXPECT(ret == -EPROTO, "submit: %d", ret);
out:
	if (side >= 0)
		send_int(side, 0);
	close_case("hostile_worker", &t, pid, side);
}

/* Sends @len bytes of @h raw, then checks the refusal that comes back. */
static void bad_hello(const char *what, const struct xcuda_local_hello *h,
		      size_t len, int expect)
{
	struct wcfg w = { W_REFUSE, { 1ull << 30, RING_ORDER }, expect };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} ctl;
	struct xcuda_local_welcome wel;
	struct iovec iov = { .iov_base = &wel, .iov_len = sizeof(wel) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	int fd = -1, side = -1, v = 0;
	ssize_t r;
	pid_t pid;

	pid = spawn(&w, &side);
	EXPECT(pid > 0, "fork: %s", strerror(errno));
	strcpy(sa.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	EXPECT(fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)),
	       "%s: connect: %s", what, strerror(errno));
	EXPECT(send(fd, h, len, MSG_NOSIGNAL) == (ssize_t)len,
	       "%s: send: %s", what, strerror(errno));
	if (len < sizeof(*h))
		shutdown(fd, SHUT_WR);
	r = recvmsg(fd, &mh, MSG_WAITALL | MSG_CMSG_CLOEXEC);
	EXPECT(!recv_int(side, &v, 5000), "%s: worker said nothing", what);
	EXPECT(v == expect, "%s: xd_local_accept() = %d, want %d", what, v,
	       expect);
	EXPECT(!CMSG_FIRSTHDR(&mh), "%s: descriptors came back", what);
	if (len < sizeof(*h)) {
		EXPECT(r == 0, "%s: an answer to half a hello", what);
	} else {
		EXPECT(r == sizeof(wel), "%s: welcome of %zd bytes", what, r);
		EXPECT(wel.magic == XCUDA_LOCAL_MAGIC &&
		       wel.version == XCUDA_LOCAL_VERSION,
		       "%s: welcome header", what);
		EXPECT(wel.status == expect, "%s: status %d, want %d", what,
		       wel.status, expect);
	}
out:
	if (fd >= 0)
		close(fd);
	finish(pid, side, 7000);
}

static void case_bad_hello(void)
{
	const struct xcuda_local_hello good = {
		XCUDA_LOCAL_MAGIC, XCUDA_LOCAL_VERSION, RING_ORDER, 0,
		1ull << 30,
	};
	struct xcuda_local_hello h;

	h = good;
	h.magic = 0xdeadbeef;
	bad_hello("magic", &h, sizeof(h), -EPROTO);
	if (check_case_ok()) {
		h = good;
		h.arena_size = 1ull << 62;
		bad_hello("huge arena", &h, sizeof(h), -EINVAL);
	}
	if (check_case_ok()) {
		h = good;
		h.arena_size = 0;
		bad_hello("empty arena", &h, sizeof(h), -EINVAL);
	}
	if (check_case_ok()) {
		h = good;
		h.version = 99;
		bad_hello("version", &h, sizeof(h), -EPROTONOSUPPORT);
	}
	if (check_case_ok()) {
		h = good;
		h.ring_order = 1000;
		bad_hello("ring order", &h, sizeof(h), -EINVAL);
	}
	if (check_case_ok()) {
		h = good;
		h.rsvd = 1;
		bad_hello("rsvd", &h, sizeof(h), -EINVAL);
	}
	if (check_case_ok())
		bad_hello("short", &good, 8, -EPIPE);
	check_case("bad_hello");
}

/* A worker with lower limits lowers what the guest gets. */
static void case_clamp(void)
{
	struct wcfg w = { W_ECHO, { 256ull << 20, 2 }, 0 };
	struct xc_transport t = { 0 };
	const char *bad = NULL;
	int side = -1, ret;
	pid_t pid;

	if (open_case(&w, &t, 1ull << 30, 4, &pid, &side))
		goto out;
	EXPECT(t.ring_slots == XCUDA_RING_SIZE(2), "ring_slots %u",
	       t.ring_slots);
	EXPECT(t.arena_size == 256ull << 20, "arena_size %llu",
	       (unsigned long long)t.arena_size);
	ret = round_trip(&t, 3, &bad);
	EXPECT(!ret && !bad, "trip: %s", ret ? strerror(-ret) : bad);
out:
	close_case("clamp", &t, pid, side);
}

/* Defaults come from the environment; bad values are refused early. */
static void case_env(void)
{
	static const char *const bad[][2] = {
		{ "XCUDA_RING_ORDER", "5" },
		{ "XCUDA_RING_ORDER", "x" },
		{ "XCUDA_ARENA_MB", "0" },
		{ "XCUDA_ARENA_MB", "4097" },
		{ "XCUDA_ARENA_MB", "-1" },
		{ "XCUDA_SPIN_US", "1e3" },
	};
	struct wcfg w = { W_ECHO, { 1ull << 30, RING_ORDER }, 0 };
	struct xc_transport t = { 0 };
	const char *oops = NULL;
	int side = -1, ret;
	pid_t pid = -1;

	setenv(XCUDA_LOCAL_SOCKET_ENV, sock_path, 1);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(bad[i][0], bad[i][1], 1);
		ret = xc_local_open(&t, NULL);
		unsetenv(bad[i][0]);
		EXPECT(ret == -EINVAL, "%s=%s: %d", bad[i][0], bad[i][1], ret);
	}
	ret = xc_local_open(&t, &(struct xc_transport_opts){ .ring_order = 9 });
	EXPECT(ret == -EINVAL, "ring_order 9: %d", ret);
	ret = xc_local_open(&t, &(struct xc_transport_opts){
		.path = "/nonexistent/xcuda.sock" });
	EXPECT(ret == -ENOENT, "no daemon: %d", ret);

	setenv("XCUDA_RING_ORDER", "1", 1);
	setenv("XCUDA_ARENA_MB", "16", 1);
	pid = spawn(&w, &side);
	EXPECT(pid > 0, "fork: %s", strerror(errno));
	ret = xc_local_open(&t, NULL);
	EXPECT(!ret, "xc_local_open: %s", strerror(-ret));
	EXPECT(t.ring_slots == XCUDA_RING_SIZE(1), "ring_slots %u",
	       t.ring_slots);
	EXPECT(t.arena_size == 16ull << 20, "arena_size %llu",
	       (unsigned long long)t.arena_size);
	ret = round_trip(&t, 5, &oops);
	EXPECT(!ret && !oops, "trip: %s", ret ? strerror(-ret) : oops);
out:
	unsetenv("XCUDA_RING_ORDER");
	unsetenv("XCUDA_ARENA_MB");
	unsetenv(XCUDA_LOCAL_SOCKET_ENV);
	close_case("env", &t, pid, side);
}

/* Doorbells only, no spinning on either side: a lost wake-up hangs. */
static void case_no_spin(void)
{
	const char *old = getenv("XCUDA_SPIN_US");
	char *saved = old ? strdup(old) : NULL;

	setenv("XCUDA_SPIN_US", "0", 1);
	run_round_trips("round_trips_no_spin", NOSPIN_TRIPS);
	if (saved)
		setenv("XCUDA_SPIN_US", saved, 1);
	else
		unsetenv("XCUDA_SPIN_US");
	free(saved);
}

static int make_listener(char *dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(sock_path, sizeof(sock_path), "%s/xcudad.sock", dir);
	strcpy(sa.sun_path, sock_path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 ||
	    bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(listen_fd, 16) < 0)
		return -1;
	return 0;
}

int main(void)
{
	char dir[] = "/tmp/xcuda-local-XXXXXX";

	REQUIRE_MSG(mkdtemp(dir), "setup", "mkdtemp: %s", strerror(errno));
	REQUIRE_MSG(!make_listener(dir), "setup", "listening on %s: %s",
		    sock_path, strerror(errno));
	case_handshake();
	case_arena_move();
	run_round_trips("round_trips", ROUND_TRIPS);
	case_batches();
	case_timeout();
	case_worker_exit();
	case_hostile_guest();
	case_hostile_worker();
	case_bad_hello();
	case_clamp();
	case_env();
	case_no_spin();

	close(listen_fd);
	unlink(sock_path);
	rmdir(dir);
	return check_summary();
}
