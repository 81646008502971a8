// SPDX-License-Identifier: MIT
/*
 * common/ring_wait: the wait (an answer seen while spinning costs no
 * system call, a sleeping consumer wakes on its doorbell, timeouts, the
 * peer's hang-up and protocol breach, a session marked closed, a device
 * file as the hang-up descriptor), the doorbell suppression of the
 * producer, the counters, the drain, the reads, and XCUDA_SPIN_US.  Both ends run in
 * one process, as threads over a ring in ordinary memory, so that the
 * test also runs under ThreadSanitizer.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "common/env.h"
#include "common/ring_wait.h"
#include "check.h"

#define SLOTS	16u

/* The indexes laid out as Xen's shared ring has them, and the entries. */
struct ring {
	uint32_t req_prod, req_event;
	uint32_t rsp_prod, rsp_event;
	uint32_t slot[SLOTS];	/* responses */
};

/* A front end that consumes responses, and the back end that makes them. */
struct pair {
	struct ring ring;
	struct xr_end front, back;
	uint32_t cons;		/* the front's rsp_cons */
	uint32_t prod;		/* the back's rsp_prod_pvt */
	unsigned int takes;	/* calls of take_rsp() */
};

static void pair_open(struct pair *p, uint32_t at, uint32_t event)
{
	int sv[2];

	memset(p, 0, sizeof(*p));
	p->ring.rsp_prod = p->ring.req_prod = at;
	p->ring.rsp_event = event;
	p->ring.req_event = at + 1;
	p->cons = p->prod = at;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		perror("socketpair");
		exit(2);
	}
	p->front.sock = sv[0];
	p->back.sock = sv[1];
	p->front.bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->back.bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->front.bell < 0 || p->back.bell < 0) {
		perror("eventfd");
		exit(2);
	}
	p->front.peer_bell = p->back.bell;
	p->back.peer_bell = p->front.bell;
	xr_end_ring(&p->front, &p->ring.rsp_prod, &p->ring.rsp_event, &p->cons,
		    &p->ring.req_prod, &p->ring.req_event);
	xr_end_ring(&p->back, &p->ring.req_prod, &p->ring.req_event, NULL,
		    &p->ring.rsp_prod, &p->ring.rsp_event);
}

static void pair_close(struct pair *p)
{
	close(p->front.sock);
	if (p->back.sock >= 0)
		close(p->back.sock);
	close(p->front.bell);
	close(p->back.bell);
}

/* What the transports' take does: index once (acquire), then the slots. */
static int take_rsp(void *ctx, void *out, unsigned int max)
{
	struct pair *p = ctx;
	uint32_t rp = __atomic_load_n(&p->ring.rsp_prod, __ATOMIC_ACQUIRE);
	uint32_t *o = out;
	unsigned int n = 0;

	p->takes++;
	while (p->cons != rp && n < max)
		o[n++] = p->ring.slot[p->cons++ % SLOTS];
	return (int)n;
}

/* The back end answers @v: the slot, then the index. */
static int answer(struct pair *p, uint32_t v)
{
	p->ring.slot[p->prod % SLOTS] = v;
	p->prod++;
	return xr_publish(&p->ring.rsp_prod, &p->ring.rsp_event, p->prod);
}

static int readable(int fd)
{
	struct pollfd q = { .fd = fd, .events = POLLIN };

	return poll(&q, 1, 0) == 1 && (q.revents & POLLIN);
}

static double ms_since(uint64_t t0)
{
	return (double)(xr_now_ns() - t0) / 1e6;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* How often this thread has blocked in the kernel. */
static long blocked(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

static int consume(struct pair *p, uint64_t spin_ns, int timeout_ms,
		   uint32_t *out)
{
	struct xr_wait w = { .timeout_ms = timeout_ms, .spin_ns = spin_ns };

	return xr_consume(&p->front, &w, take_rsp, p, out, 1);
}

/* ------------------------------------------------------------------ */

static void case_clock(void)
{
	uint64_t a = xr_now_ns(), b = xr_now_ns(), now;

	CHECK(b >= a, "clock is monotonic");
	CHECK(xr_deadline(-1) == UINT64_MAX, "no timeout: no deadline");
	CHECK(xr_poll_ms(UINT64_MAX) == -1, "no deadline: poll forever");
	CHECK(xr_poll_ms(a) == 0, "past deadline: poll 0");
	now = xr_now_ns();
	CHECK(xr_poll_ms(now + 1500000) == 2, "poll ms round up");
	CHECK(xr_poll_ms(now + (uint64_t)INT32_MAX * 2000000) == INT32_MAX,
	      "poll ms capped");
	now = xr_now_ns();
	a = xr_deadline(250);
	CHECK(a >= now + 250000000 && a < now + 350000000,
	      "deadline 250 ms ahead");
}

static void case_spin(void)
{
	uint32_t word = 7;
	uint64_t t0 = xr_now_ns();

	CHECK(xr_spin(&word, 6, UINT64_MAX) == 7, "spin: moved already");
	CHECK(xr_spin(&word, 7, t0 + 2000000) == 7, "spin: times out");
	CHECK(ms_since(t0) >= 2.0, "spin: for as long as asked");
	CHECK(xr_spin(&word, 7, 0) == 7, "spin: past end returns");
}

/* The producer rings only when a push crosses the consumer's event. */
static void case_suppression(void)
{
	struct pair p;
	uint32_t v;

	pair_open(&p, 0, 1);	/* as SHARED_RING_INIT leaves it */
	CHECK(answer(&p, 1) == 1, "first push crosses the initial event");
	CHECK(answer(&p, 2) == 0, "stale event: no bell");
	CHECK(take_rsp(&p, &v, 1) == 1 && take_rsp(&p, &v, 1) == 1,
	      "took both");
	CHECK(xr_prepare_sleep(p.front.in_prod, p.front.in_event, p.cons) ==
	      0 && p.ring.rsp_event == 3, "sleep: event at cons + 1");
	CHECK(answer(&p, 3) == 1, "push reaching the event: bell");
	CHECK(answer(&p, 4) == 0, "push past it: no bell again");
	CHECK(xr_prepare_sleep(p.front.in_prod, p.front.in_event, p.cons) ==
	      1 && p.ring.rsp_event == 3, "work before sleeping: event left");
	/* A push of several crosses an event inside it. */
	p.cons = p.prod;
	xr_prepare_sleep(p.front.in_prod, p.front.in_event, p.cons);
	p.prod += 3;
	CHECK(xr_publish(&p.ring.rsp_prod, &p.ring.rsp_event, p.prod) == 1,
	      "batch crossing the event: bell");

	/* Through the end: the bell itself, held back by @more. */
	p.cons = p.prod;
	xr_prepare_sleep(p.front.in_prod, p.front.in_event, p.cons);
	p.prod++;
	CHECK(xr_end_push(&p.back, p.prod, 1) == 0 && p.back.bell_owed &&
	      !readable(p.front.bell), "more: bell owed, not rung");
	p.prod++;
	CHECK(xr_end_push(&p.back, p.prod, 0) == 0 && !p.back.bell_owed &&
	      readable(p.front.bell), "end of batch: owed bell rung");
	xr_bell_drain(p.front.bell);
	p.prod++;
	CHECK(xr_end_push(&p.back, p.prod, 0) == 0 && !readable(p.front.bell),
	      "no sleeper: no bell");
	pair_close(&p);
}

struct late {
	struct pair *p;
	unsigned int delay_ms;
	int after_sleep;	/* wait until the front says it sleeps */
	int notified;
	uint32_t *closed;	/* set, then ring, instead of answering */
};

static void *late_answer(void *arg)
{
	struct late *a = arg;
	struct pair *p = a->p;

	if (a->after_sleep)
		while (__atomic_load_n(&p->ring.rsp_event, __ATOMIC_ACQUIRE) !=
		       p->prod + 1)
			sleep_ms(1);
	sleep_ms(a->delay_ms);
	if (a->closed) {
		/* The peer's side ends the session: marks it, then rings. */
		__atomic_store_n(a->closed, 1, __ATOMIC_RELEASE);
		xr_bell_ring(p->back.peer_bell);
		return NULL;
	}
	a->notified = answer(p, 42);
	if (a->notified)
		xr_bell_ring(p->back.peer_bell);
	return NULL;
}

/* An answer that comes while we spin: no bell, no sleep, no syscall. */
static void case_wait_spin(void)
{
	struct late a;
	struct pair p;
	pthread_t th;
	uint32_t v = 0;
	long sw;
	int r;

	/* Mid-stream: the front last slept long ago, its event is stale. */
	pair_open(&p, 100, 90);
	a = (struct late){ .p = &p, .delay_ms = 2 };
	pthread_create(&th, NULL, late_answer, &a);
	sw = blocked();
	r = consume(&p, 5000000000u, -1, &v);
	sw = blocked() - sw;
	pthread_join(th, NULL);
	CHECK(r == 1 && v == 42, "spin: got the answer");
	CHECK(!a.notified && !readable(p.front.bell), "spin: no bell rung");
	CHECK(p.ring.rsp_event == 90, "spin: never asked to be woken");
#ifndef __SANITIZE_THREAD__	/* its runtime takes locks of its own */
	CHECK(sw == 0, "spin: never blocked in the kernel");
#else
	(void)sw;
#endif
	CHECK(p.takes == 2, "spin: one look before, one after");
	pair_close(&p);
}

/* A sleeping consumer wakes on its doorbell. */
static void case_wait_bell(void)
{
	struct late a;
	struct pair p;
	pthread_t th;
	uint32_t v = 0;
	uint64_t t0;
	long sw;
	int r;

	pair_open(&p, 5, 1);
	a = (struct late){ .p = &p, .delay_ms = 20, .after_sleep = 1 };
	sw = blocked();
	t0 = xr_now_ns();
	pthread_create(&th, NULL, late_answer, &a);
	r = consume(&p, 0, 10000, &v);
	sw = blocked() - sw;
	pthread_join(th, NULL);
	CHECK(r == 1 && v == 42, "sleep: got the answer");
	CHECK(a.notified, "sleep: the producer saw it must ring");
	CHECK(sw > 0 && ms_since(t0) >= 20.0, "sleep: slept until rung");
	CHECK(!readable(p.front.bell), "sleep: bell drained");

	/* Spinning first, then sleeping: the spin ends, the bell wakes. */
	a = (struct late){ .p = &p, .delay_ms = 20, .after_sleep = 1 };
	pthread_create(&th, NULL, late_answer, &a);
	r = consume(&p, 1000000, 10000, &v);
	pthread_join(th, NULL);
	CHECK(r == 1 && v == 42 && a.notified, "spin, then sleep: woken");
	pair_close(&p);
}

static void case_wait_timeout(void)
{
	struct pair p;
	uint64_t t0;
	uint32_t v;
	int r;

	pair_open(&p, 3, 1);
	t0 = xr_now_ns();
	r = consume(&p, 1000000, 50, &v);
	CHECK(r == 0 && ms_since(t0) >= 50.0 && ms_since(t0) < 5000.0,
	      "timeout: 0 after the timeout");
	CHECK(p.ring.rsp_event == 4, "timeout: asked to be woken");

	/* Timeout 0 does not spin, however long the spin asked. */
	t0 = xr_now_ns();
	r = consume(&p, 5000000000u, 0, &v);
	CHECK(r == 0 && ms_since(t0) < 1000.0, "timeout 0: no spin");

	/* A stale bell wakes us, but nothing is there: sleep on. */
	xr_bell_ring(p.front.bell);
	t0 = xr_now_ns();
	r = consume(&p, 0, 30, &v);
	CHECK(r == 0 && ms_since(t0) >= 30.0 && !readable(p.front.bell),
	      "stale bell: drained, still times out");
	pair_close(&p);
}

/* The peer answered 9 and went (@how): the answer first, then -EPIPE. */
static void left_behind(struct pair *p, const char *how)
{
	uint32_t v = 0;
	int r;

	r = consume(p, 0, 5000, &v);
	CHECKF(r == 1 && v == 9, "%s: the answer left behind first", how);
	r = consume(p, 0, 5000, &v);
	CHECKF(r == -EPIPE && p->front.dead, "%s: then -EPIPE", how);
}

static void case_wait_peer(void)
{
	struct pair p;
	uint32_t v = 0;
	int r;

	/* What the peer left comes first, then its hang-up. */
	pair_open(&p, 0, 1);
	answer(&p, 9);
	close(p.back.sock);
	p.back.sock = -1;
	left_behind(&p, "hang-up");
	pair_close(&p);

	/* The socket carries nothing after the handshake. */
	pair_open(&p, 0, 1);
	CHECK(write(p.back.sock, "x", 1) == 1, "peer writes on the socket");
	r = consume(&p, 0, 5000, &v);
	CHECK(r == -EPROTO && p.front.broken, "data on the socket: -EPROTO");
	pair_close(&p);

	/* A bell held back by @more is rung before we wait. */
	pair_open(&p, 0, 1);
	p.back.bell_owed = 1;
	p.cons = 0;
	xr_end_ring(&p.back, &p.ring.req_prod, &p.ring.req_event, &p.cons,
		    &p.ring.rsp_prod, &p.ring.rsp_event);
	{
		struct xr_wait w = { .timeout_ms = 0 };

		r = xr_wait(&p.back, &w);
	}
	CHECK(r == 0 && !p.back.bell_owed && readable(p.front.bell),
	      "owed bell rung before waiting");
	pair_close(&p);
}

/*
 * The peer's side marks the session over @delay_ms from now (once we
 * sleep, with @after_sleep) while we wait, spinning @spin_ns first.
 */
static void closed_later(unsigned int delay_ms, int after_sleep,
			 uint64_t spin_ns, const char *name)
{
	uint32_t closed = 0, v;
	struct late a;
	struct pair p;
	pthread_t th;
	uint64_t t0;
	int r;

	pair_open(&p, 0, 1);
	p.front.closed = &closed;
	a = (struct late){ .p = &p, .delay_ms = delay_ms,
			   .after_sleep = after_sleep, .closed = &closed };
	pthread_create(&th, NULL, late_answer, &a);
	t0 = xr_now_ns();
	r = consume(&p, spin_ns, 10000, &v);
	pthread_join(th, NULL);
	CHECK(r == -EPIPE && ms_since(t0) < 5000.0, name);
	pair_close(&p);
}

/*
 * `xen`'s ends: the peer's side marks the session over in shared memory
 * (@closed), then rings; the descriptor watched for the hang-up is a
 * device file (a pipe here), whose readability means nothing.
 */
static void case_wait_closed(void)
{
	uint32_t closed = 0;
	struct pair p;

	/* Marked over: what was published before comes first. */
	pair_open(&p, 0, 1);
	p.front.closed = &closed;
	answer(&p, 9);
	__atomic_store_n(&closed, 1, __ATOMIC_RELEASE);
	left_behind(&p, "closed");
	pair_close(&p);

	/* Marked while we sleep: the bell that follows wakes us. */
	closed_later(20, 1, 0, "closed while asleep: woken, -EPIPE");
	/* Marked while we spin: found at the latest when the spin ends. */
	closed_later(5, 0, 50000000, "closed while spinning: -EPIPE");
}

/*
 * Makes a pipe's read end the front's hang-up descriptor, with @hup_only,
 * and makes it readable; returns the write end.
 */
static int pipe_as_sock(struct pair *p, int hup_only)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK)) {
		perror("pipe2");
		exit(2);
	}
	close(p->front.sock);
	p->front.sock = fds[0];
	p->front.sock_hup_only = hup_only;
	CHECK(write(fds[1], "x", 1) == 1, "the file is readable");
	return fds[1];
}

/* A device file as the hang-up descriptor: only POLLHUP/POLLERR count. */
static void case_wait_hup_only(void)
{
	struct pair p;
	uint32_t v;
	int w, r;

	pair_open(&p, 0, 1);
	w = pipe_as_sock(&p, 1);
	/* Readable, yet no socket: neither data (EPROTO) nor a hang-up. */
	r = consume(&p, 0, 50, &v);
	CHECK(r == 0 && !p.front.dead && !p.front.broken,
	      "hup only: readable file ignored, timeout");
	close(w);
	r = consume(&p, 0, 5000, &v);
	CHECK(r == -EPIPE && p.front.dead, "hup only: hang-up: -EPIPE");
	pair_close(&p);

	/* Without the flag the same readable file is taken for a hang-up. */
	pair_open(&p, 0, 1);
	w = pipe_as_sock(&p, 0);
	CHECK(consume(&p, 0, 5000, &v) == -EPIPE && !p.front.broken,
	      "no flag: recv() on a file fails: dead, not broken");
	close(w);
	pair_close(&p);
}

/* The counters: pushes, bells (write()s) and sleeps (poll()s). */
static void case_stats(void)
{
	struct pair p;
	uint32_t v;
	int efd;

	pair_open(&p, 0, 1);
	CHECK(p.back.stats.bells == 0 && p.front.stats.sleeps == 0,
	      "stats: zero at first");
	p.prod++;
	xr_end_push(&p.back, p.prod, 0);	/* crosses the event: rings */
	p.prod++;
	xr_end_push(&p.back, p.prod, 0);	/* stale event: no bell */
	CHECK_EQ(p.back.stats.bells, 1, "stats: one bell for two pushes");
	p.cons = p.prod;
	CHECK(consume(&p, 0, 10, &v) == 0 && p.front.stats.sleeps >= 1,
	      "stats: a sleep counted");
	p.prod++;
	xr_end_push(&p.back, p.prod, 1);	/* owed, not rung */
	CHECK_EQ(p.back.stats.bells, 1, "stats: owed bell not counted");
	{
		struct xr_wait w = { .timeout_ms = 0 };

		p.back.in_cons = &p.cons;
		xr_wait(&p.back, &w);
	}
	CHECK_EQ(p.back.stats.bells, 2, "stats: owed bell rung, counted");
	pair_close(&p);

	/* Doorbells made in pairs; -1 both on failure. */
	{
		struct xr_end e = { 0 };

		CHECK(xr_end_bells(&e) == 0 && e.bell >= 0 &&
		      e.peer_bell >= 0 && e.bell != e.peer_bell,
		      "bells: two eventfds");
		efd = e.bell;
		CHECK(xr_bell_ring(e.peer_bell) == 0 && !readable(efd) &&
		      readable(e.peer_bell), "bells: independent");
		close(e.bell);
		close(e.peer_bell);
	}
}

static void case_bell(void)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint64_t full = UINT64_MAX - 1;

	CHECK(!readable(efd), "bell: quiet at first");
	CHECK(xr_bell_ring(efd) == 0 && xr_bell_ring(efd) == 0 &&
	      xr_bell_ring(efd) == 0 && readable(efd), "bell: rung");
	xr_bell_drain(efd);
	CHECK(!readable(efd), "drain: one read empties it");
	xr_bell_drain(efd);
	CHECK(!readable(efd), "drain: empty bell, no block");
	CHECK(write(efd, &full, sizeof(full)) == (ssize_t)sizeof(full) &&
	      xr_bell_ring(efd) == 0, "bell: full counter is no error");
	xr_bell_drain(efd);
	CHECK(!readable(efd), "drain: full counter emptied");
	close(efd);
	CHECK(xr_bell_ring(efd) == -EBADF, "bell: closed fd: -EBADF");
}

struct writer {
	int fd;
	unsigned int delay_ms;
};

static void *late_write(void *arg)
{
	struct writer *w = arg;

	sleep_ms(w->delay_ms);
	if (write(w->fd, "abcd", 4) != 4)
		perror("write");
	return NULL;
}

static void case_read(void)
{
	struct writer w;
	char buf[16];
	pthread_t th;
	uint64_t t0;
	int fds[2];
	ssize_t r;

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK)) {
		perror("pipe2");
		exit(2);
	}
	CHECK(xr_read(fds[0], buf, sizeof(buf)) == -EAGAIN,
	      "read: empty: -EAGAIN");
	t0 = xr_now_ns();
	CHECK(xr_read_wait(fds[0], buf, sizeof(buf), 30) == -EAGAIN &&
	      ms_since(t0) >= 30.0, "read_wait: times out with -EAGAIN");
	CHECK(write(fds[1], "xy", 2) == 2 &&
	      xr_read_wait(fds[0], buf, sizeof(buf), 0) == 2 &&
	      !memcmp(buf, "xy", 2), "read_wait: data at once");
	w = (struct writer){ .fd = fds[1], .delay_ms = 20 };
	pthread_create(&th, NULL, late_write, &w);
	r = xr_read_wait(fds[0], buf, sizeof(buf), -1);
	pthread_join(th, NULL);
	CHECK(r == 4 && !memcmp(buf, "abcd", 4), "read_wait: woken by data");
	close(fds[1]);
	CHECK(xr_read_wait(fds[0], buf, sizeof(buf), -1) == 0,
	      "read_wait: end of file: 0");
	close(fds[0]);
	CHECK(xr_read_wait(fds[0], buf, sizeof(buf), 10) == -EBADF,
	      "read_wait: bad fd: -EBADF");
}

static void case_spin_env(void)
{
	const char *bad[] = { "", "-1", " 5", "5us", "0x10", "1000001",
			      "99999999999999999999999" };
	cpu_set_t old, one;
	unsigned long long v = 3;
	uint64_t ns, def;
	unsigned int i;
	char name[64];
	int many;

	many = !sched_getaffinity(0, sizeof(old), &old) &&
	       CPU_COUNT(&old) > 1;
	def = many ? 20000 : 0;
	unsetenv(XR_SPIN_ENV);
	CHECK(xr_spin_env(20, &ns) == 0 && ns == def, "spin env: unset");
	setenv(XR_SPIN_ENV, "0", 1);
	CHECK(xr_spin_env(20, &ns) == 0 && ns == 0, "spin env: 0");
	setenv(XR_SPIN_ENV, "1000000", 1);
	CHECK(xr_spin_env(20, &ns) == 0 && ns == 1000000000u,
	      "spin env: the most");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(XR_SPIN_ENV, bad[i], 1);
		ns = 1;
		snprintf(name, sizeof(name), "spin env: \"%s\" refused",
			 bad[i]);
		CHECK(xr_spin_env(20, &ns) == -EINVAL && ns == def, name);
	}
	/* One CPU: the default is no spin; a set value is still obeyed. */
	if (many) {
		CPU_ZERO(&one);
		for (i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &old)) {
				CPU_SET(i, &one);
				break;
			}
		sched_setaffinity(0, sizeof(one), &one);
		unsetenv(XR_SPIN_ENV);
		CHECK(xr_spin_env(20, &ns) == 0 && ns == 0,
		      "spin env: one CPU, unset: 0");
		setenv(XR_SPIN_ENV, "7", 1);
		CHECK(xr_spin_env(20, &ns) == 0 && ns == 7000,
		      "spin env: one CPU, set: obeyed");
		sched_setaffinity(0, sizeof(old), &old);
	}
	unsetenv(XR_SPIN_ENV);

	setenv("XCUDA_TEST_UINT", "12", 1);
	CHECK(xcuda_env_uint("XCUDA_TEST_UINT", 12, &v) == 1 && v == 12,
	      "env uint: at the most");
	CHECK(xcuda_env_uint("XCUDA_TEST_UINT", 11, &v) == -EINVAL && v == 12,
	      "env uint: too large, untouched");
	unsetenv("XCUDA_TEST_UINT");
	CHECK(xcuda_env_uint("XCUDA_TEST_UINT", 11, &v) == 0 && v == 12,
	      "env uint: unset, untouched");
}

int main(void)
{
	case_clock();
	case_spin();
	case_suppression();
	case_wait_spin();
	case_wait_bell();
	case_wait_timeout();
	case_wait_peer();
	case_wait_closed();
	case_wait_hup_only();
	case_stats();
	case_bell();
	case_read();
	case_spin_env();
	return check_summary();
}
