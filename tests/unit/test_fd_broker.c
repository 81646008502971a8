// SPDX-License-Identifier: MIT
/*
 * xcudad's descriptor broker (dom0-daemon/fd_broker.h), without a GPU: a
 * descriptor put under a token comes back, a copy of the same file, to
 * its own domain only; tokens are unique; the broker and each domain's
 * share of it are bounded; a session's descriptors go when it ends, also
 * when the worker dies and is reaped; malformed requests break the
 * channel instead of reaching the table; a worker without a channel gets
 * an error, not a hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "dom0-daemon/fd_broker.h"
#include "dom0-daemon/ipc_table.h"
#include "dom0-daemon/rate.h"
#include "dom0-daemon/supervise.h"
#include "check.h"

#define DOM_A		(XD_DOMAIN_LOCAL | 1000)
#define DOM_B		(XD_DOMAIN_XEN | 1000)
#define SESSION_A	0xaaaa0001u
#define SESSION_B	0xbbbb0002u

/* The parent's side, served by a thread while the test asks. */
struct server {
	int chan;
	uint32_t session;
	int stop;
	int broken;	/* xd_broker_serve() gave up on the channel */
	pthread_t t;
};

static void *serve(void *arg)
{
	struct server *sv = arg;
	struct pollfd p = { .fd = sv->chan, .events = POLLIN };

	while (!__atomic_load_n(&sv->stop, __ATOMIC_SEQ_CST)) {
		if (poll(&p, 1, 20) <= 0)
			continue;
		if (xd_broker_serve(sv->chan, sv->session)) {
			__atomic_store_n(&sv->broken, 1, __ATOMIC_SEQ_CST);
			break;
		}
	}
	return NULL;
}

/* A worker's channel (returned) and the thread that answers it. */
static int server_start(struct server *sv, uint32_t session)
{
	int sp[2];

	memset(sv, 0, sizeof(*sv));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp))
		return -1;
	sv->chan = sp[0];
	sv->session = session;
	if (pthread_create(&sv->t, NULL, serve, sv)) {
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	return sp[1];
}

static void server_stop(struct server *sv, int worker_end)
{
	__atomic_store_n(&sv->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(sv->t, NULL);
	close(sv->chan);
	close(worker_end);
}

static void token(uint8_t *t, unsigned int n)
{
	memset(t, 0, XD_BROKER_TOKEN);
	memcpy(t, &n, sizeof(n));
	t[XD_BROKER_TOKEN - 1] = 0x5a;
}

/* A memfd whose first word is @v, to tell files apart. */
static int file_with(unsigned int v)
{
	int fd = memfd_create("broker-test", MFD_CLOEXEC);

	if (fd >= 0 && pwrite(fd, &v, sizeof(v), 0) != (ssize_t)sizeof(v)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static unsigned int file_word(int fd)
{
	unsigned int v = 0;

	if (pread(fd, &v, sizeof(v), 0) != (ssize_t)sizeof(v))
		return ~0u;
	return v;
}

static void test_put_get(void)
{
	uint8_t t1[XD_BROKER_TOKEN], t2[XD_BROKER_TOKEN];
	struct server sv;
	int w, f, got;

	w = server_start(&sv, SESSION_A);
	REQUIRE_MSG(w >= 0, "broker server", "cannot start");
	token(t1, 1);
	token(t2, 2);
	f = file_with(0x1234);
	REQUIRE_MSG(f >= 0, "memfd", "cannot make one");
	CHECK_EQ(xd_broker_put(w, DOM_A, t1, f), 0, "a descriptor is kept");
	close(f);	/* the broker holds its own copy */
	CHECK_EQ(xd_broker_live(), 1, "one descriptor kept");
	got = xd_broker_get(w, DOM_A, t1);
	CHECK_MSG(got >= 0 && file_word(got) == 0x1234,
		  "its domain gets a copy of the same file", "got %d", got);
	if (got >= 0)
		close(got);
	got = xd_broker_get(w, DOM_A, t1);
	CHECK_MSG(got >= 0, "a token serves more than one import",
		  "got %d", got);
	if (got >= 0)
		close(got);
	CHECK_EQ(xd_broker_get(w, DOM_B, t1), -ENOENT,
		 "another domain does not get it");
	CHECK_EQ(xd_broker_get(w, DOM_A, t2), -ENOENT,
		 "an unknown token gets nothing");
	f = file_with(7);
	CHECK_EQ(xd_broker_put(w, DOM_B, t1, f), -EEXIST,
		 "a token is never given twice");
	CHECK_EQ(xd_broker_put(w, DOM_A, t2, -1), -EBADF,
		 "no descriptor, no request");
	close(f);
	xd_broker_forget_session(SESSION_B);
	CHECK_EQ(xd_broker_live(), 1, "another session's end keeps it");
	xd_broker_forget_session(SESSION_A);
	CHECK_EQ(xd_broker_live(), 0, "the session's end drops it");
	CHECK_EQ(xd_broker_get(w, DOM_A, t1), -ENOENT,
		 "a dropped token gets nothing");
	server_stop(&sv, w);
}

static void test_bounds(void)
{
	uint8_t t[XD_BROKER_TOKEN];
	struct server sa, sb;
	int wa, wb, f, err = 0;
	unsigned int i;

	wa = server_start(&sa, SESSION_A);
	wb = server_start(&sb, SESSION_B);
	REQUIRE_MSG(wa >= 0 && wb >= 0, "broker servers", "cannot start");
	f = file_with(1);
	REQUIRE_MSG(f >= 0, "memfd", "cannot make one");
	for (i = 0; i < XD_BROKER_PER_DOMAIN && !err; i++) {
		token(t, 100 + i);
		err = xd_broker_put(wa, DOM_A, t, f);
	}
	CHECK_EQ(err, 0, "a domain keeps its share");
	token(t, 99);
	CHECK_EQ(xd_broker_put(wa, DOM_A, t, f), -EDQUOT,
		 "and not one more");
	/* Other domains fill the rest. */
	for (i = 0; i + XD_BROKER_PER_DOMAIN < XD_BROKER_SLOTS && !err; i++) {
		token(t, 1000 + i);
		err = xd_broker_put(wb, XD_DOMAIN_XEN | (1 + i / 64), t, f);
	}
	CHECK_EQ(err, 0, "the broker fills");
	token(t, 5000);
	CHECK_EQ(xd_broker_put(wb, XD_DOMAIN_XEN | 77, t, f), -ENOSPC,
		 "a full broker refuses");
	CHECK_EQ(xd_broker_live(), XD_BROKER_SLOTS, "every slot used");
	xd_broker_forget_session(SESSION_A);
	CHECK_EQ(xd_broker_live(), XD_BROKER_SLOTS - XD_BROKER_PER_DOMAIN,
		 "a session's end frees its slots");
	CHECK_EQ(xd_broker_put(wb, XD_DOMAIN_XEN | 77, t, f), 0,
		 "which others may use");
	xd_broker_forget_session(SESSION_B);
	CHECK_EQ(xd_broker_live(), 0, "all dropped");
	close(f);
	server_stop(&sa, wa);
	server_stop(&sb, wb);
}

/* Sends a raw datagram, with @fd attached unless negative. */
static void raw_send(int w, const void *p, size_t len, int fd)
{
	if (xcuda_send_fds(w, p, len, &fd, fd >= 0, 0) < 0)
		perror("sendmsg");
}

/* Whether the server gave up on its channel within a second. */
static int gave_up(struct server *sv)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (__atomic_load_n(&sv->broken, __ATOMIC_SEQ_CST))
			return 1;
		usleep(10000);
	}
	return 0;
}

static void test_malformed(void)
{
	struct {
		uint32_t op, rsvd;
		uint64_t domain;
		uint8_t token[XD_BROKER_TOKEN];
	} q;
	struct server sv;
	int w, f;

	/* Too short a request. */
	w = server_start(&sv, SESSION_A);
	REQUIRE_MSG(w >= 0, "broker server", "cannot start");
	raw_send(w, "xx", 2, -1);
	CHECK(gave_up(&sv), "a short request breaks the channel");
	server_stop(&sv, w);

	/* A put without a descriptor. */
	memset(&q, 0, sizeof(q));
	q.op = 1;
	q.domain = DOM_A;
	w = server_start(&sv, SESSION_A);
	REQUIRE_MSG(w >= 0, "broker server", "cannot start");
	raw_send(w, &q, sizeof(q), -1);
	CHECK(gave_up(&sv) && !xd_broker_live(),
	      "a put without a descriptor breaks the channel");
	server_stop(&sv, w);

	/* A get that carries one, and an unknown request. */
	f = file_with(3);
	REQUIRE_MSG(f >= 0, "memfd", "cannot make one");
	q.op = 2;
	w = server_start(&sv, SESSION_A);
	REQUIRE_MSG(w >= 0, "broker server", "cannot start");
	raw_send(w, &q, sizeof(q), f);
	CHECK(gave_up(&sv) && !xd_broker_live(),
	      "a get with a descriptor breaks the channel");
	server_stop(&sv, w);
	q.op = 9;
	w = server_start(&sv, SESSION_A);
	REQUIRE_MSG(w >= 0, "broker server", "cannot start");
	raw_send(w, &q, sizeof(q), f);
	CHECK(gave_up(&sv) && !xd_broker_live(),
	      "an unknown request breaks the channel");
	server_stop(&sv, w);

	/* No domain: the transport did not say whose it is. */
	q.op = 1;
	q.domain = 0;
	w = server_start(&sv, SESSION_A);
	REQUIRE_MSG(w >= 0, "broker server", "cannot start");
	raw_send(w, &q, sizeof(q), f);
	CHECK(gave_up(&sv) && !xd_broker_live(),
	      "a request without a domain breaks the channel");
	server_stop(&sv, w);
	close(f);

	token(q.token, 1);
	CHECK_EQ(xd_broker_get(-1, DOM_A, q.token), -EPIPE,
		 "no channel: an error, not a hang");
}

/* A worker that puts a descriptor through the supervisor's channel. */
static int body_put_and_wait(void *arg, uint32_t session)
{
	uint8_t t[XD_BROKER_TOKEN];
	int f = file_with(42);

	(void)arg;
	(void)session;
	token(t, 4242);
	if (f < 0 || xd_broker_put(xd_super_chan(), DOM_A, t, f))
		return 3;
	pause();	/* until the test kills it */
	return 0;
}

static void test_worker_channel(void)
{
	uint8_t t[XD_BROKER_TOKEN];
	struct xd_super sv;
	struct pollfd p;
	pid_t pid;
	int i;

	REQUIRE_MSG(!xd_super_init(&sv, 2), "supervisor", "no memory");
	sv.gone = xd_broker_forget_session;
	pid = xd_super_spawn(&sv, SESSION_A, body_put_and_wait, NULL);
	REQUIRE_MSG(pid > 0, "worker forked", "fork failed");
	CHECK(sv.kids[0].chan >= 0, "the worker has a channel");
	p.fd = sv.kids[0].chan;
	p.events = POLLIN;
	for (i = 0; i < 200 && !xd_broker_live(); i++)
		if (poll(&p, 1, 10) > 0)
			xd_broker_serve(sv.kids[0].chan, sv.kids[0].session);
	CHECK_EQ(xd_broker_live(), 1, "its put reaches the parent");
	token(t, 4242);
	kill(pid, SIGKILL);
	for (i = 0; i < 500 && sv.live; i++) {
		usleep(10000);
		xd_super_reap(&sv);
	}
	CHECK_MSG(!sv.live && !xd_broker_live() && sv.kids[0].chan == -1,
		  "a killed worker's descriptors and channel go when it is "
		  "reaped", "live %u, kept %u", sv.live, xd_broker_live());
	xd_super_fini(&sv);
}

/* A worker wedged for good, as one in a kernel that never ends. */
static int body_wedged(void *arg, uint32_t session)
{
	(void)arg;
	(void)session;
	for (;;)
		pause();
	return 0;
}

/*
 * A guest's device goes (the backend's GONE): its workers are killed,
 * however wedged, and the other guest's are not.
 */
static void test_kill_owner(void)
{
	const uint64_t a = 1ull << 63 | 5ull << 32, b = 1ull << 63 | 6ull << 32;
	struct xd_super sv;
	pid_t p[3];
	int i, alive;

	REQUIRE_MSG(!xd_super_init(&sv, 3), "supervisor", "no memory");
	for (i = 0; i < 3; i++) {
		p[i] = xd_super_spawn(&sv, 0x100 + i, body_wedged, NULL);
		REQUIRE_MSG(p[i] > 0, "worker forked", "fork failed");
	}
	xd_super_set_owner(&sv, p[0], a);
	xd_super_set_owner(&sv, p[1], a);
	xd_super_set_owner(&sv, p[2], b);
	CHECK_EQ(xd_super_kill_owner(&sv, 1ull << 63 | 7ull << 32), 0,
		 "a device with no workers: none killed");
	CHECK_EQ(xd_super_kill_owner(&sv, a), 2,
		 "the gone device's two workers are killed");
	for (i = 0; i < 500 && sv.live > 1; i++) {
		usleep(10000);
		xd_super_reap(&sv);
	}
	alive = !kill(p[2], 0);
	CHECK_MSG(sv.live == 1 && alive && sv.kids[2].pid == p[2],
		  "they are reaped; the other device's worker lives",
		  "live %u, other alive %d", sv.live, alive);
	CHECK_EQ(xd_super_kill_owner(&sv, a), 0,
		 "killed once: a second GONE finds none");
	xd_super_stop_all(&sv, 2000);
	xd_super_fini(&sv);
}

/* The worker's view: whether descriptor (long)@arg is open. */
static int body_fd_open(void *arg, uint32_t session)
{
	(void)session;
	return fcntl((int)(long)arg, F_GETFD) < 0;
}

/*
 * A parent's descriptor that was closed and forgotten: its number, given
 * again, is not closed in the next worker.
 */
static void test_forget_fd(void)
{
	struct xd_super sv;
	int fd, again, status = -1, i;
	pid_t pid;

	REQUIRE_MSG(!xd_super_init(&sv, 1), "supervisor", "no memory");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	REQUIRE_MSG(fd >= 0, "open", "%s", strerror(errno));
	xd_super_parent_fd(&sv, fd);
	xd_super_forget_fd(&sv, fd);
	close(fd);
	again = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid = xd_super_spawn(&sv, 0x200, body_fd_open, (void *)(long)again);
	for (i = 0; pid > 0 && i < 500; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(10000);
	}
	CHECK_MSG(again == fd && pid > 0 && WIFEXITED(status) &&
		  !WEXITSTATUS(status), "a forgotten descriptor's number, "
		  "given again, stays open in a worker",
		  "fd %d again %d status %#x", fd, again, status);
	close(again);
	xd_super_fini(&sv);
}

/* Session start rates: a burst, then so many a second, per key. */
static void test_rate(void)
{
	const uint64_t s = 1000000000ull;
	struct xd_rate r;
	unsigned int i, got;

	xd_rate_init(&r, 2, 4);
	for (i = got = 0; i < 6; i++)
		got += xd_rate_take(&r, 7, 100 * s);
	CHECK_EQ(got, 4, "rate: a burst of 4 at once, then no more");
	CHECK(xd_rate_take(&r, 8, 100 * s), "rate: another key has its own");
	CHECK(!xd_rate_take(&r, 7, 100 * s + s / 4) &&
	      xd_rate_take(&r, 7, 100 * s + s / 2) &&
	      !xd_rate_take(&r, 7, 100 * s + s / 2),
	      "rate: then one every half second at 2 a second");
	for (i = got = 0; i < 6; i++)
		got += xd_rate_take(&r, 7, 1000000 * s);
	CHECK_EQ(got, 4, "rate: a long idle refills the burst, never more");
	for (i = 0; i < 2 * XD_RATE_KEYS; i++)
		xd_rate_take(&r, 1000 + i, 2000000 * s + i);
	CHECK(xd_rate_take(&r, 9, 3000000 * s),
	      "rate: keys beyond the table take the idlest place, full");
	xd_rate_init(&r, 0, 0);
	for (i = got = 0; i < 100; i++)
		got += xd_rate_take(&r, 7, s);
	CHECK_EQ(got, 100, "rate: 0 is no limit");
}

int main(void)
{
	test_put_get();
	test_bounds();
	test_malformed();
	test_worker_channel();
	test_kill_owner();
	test_forget_fd();
	test_rate();
	return check_summary();
}
