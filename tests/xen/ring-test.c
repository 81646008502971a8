// SPDX-License-Identifier: MIT
/*
 * xcuda-ring-test: what the rig asks of a session's data ring beyond
 * ordinary calls (tests/xen/README.md, scenarios 11 and 12).
 *
 *   xcuda-ring-test pingpong COUNT [SEED]
 *	COUNT round trips of a 64-byte ECHO, each checked, with random
 *	pauses between them: none (both sides spin), about the worker's
 *	spin time (it is about to sleep), or longer (it sleeps and must be
 *	rung).  Run it with XCUDA_SPIN_US=0 too, so that this side sleeps
 *	on every answer.  A call unanswered for 10 s is a lost wake-up: the
 *	program says so and exits 2.
 *
 *   xcuda-ring-test storm SECONDS
 *	A thread writes to every eventfd of the process as fast as it can
 *	for SECONDS, the worker's doorbell among them, while the main
 *	thread keeps making checked ECHO round trips: Dom0 must hold the
 *	flood back (the rig counts its interrupts meanwhile) and the calls
 *	must go on.  Prints the writes and the round trips.
 *
 *   xcuda-ring-test corrupt
 *	Answers to malformed requests on the data ring (a length past the
 *	inline arguments, an extent past the arena, a reserved field, opcode
 *	0), then a producer index beyond the ring: the worker must end the
 *	session, and this process must learn it within 10 s, not hang.
 *
 * Exit status: 0 pass, 1 fail, 2 hang, 3 no session.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guest-lib/guest.h"
#include "xcuda/calls.h"
#include "xcuda/hash.h"

#define RT_WATCHDOG_S	10
#define RT_ECHO_BYTES	64

static atomic_ulong rt_progress;
static atomic_int rt_done;
static const char *rt_what = "a call";

/* Ends the process when a call has had no answer for RT_WATCHDOG_S. */
static void *rt_watchdog(void *arg)
{
	unsigned long seen = (unsigned long)-1, now;
	int still = 0;

	(void)arg;
	while (!atomic_load(&rt_done)) {
		sleep(1);
		now = atomic_load(&rt_progress);
		still = now == seen ? still + 1 : 0;
		seen = now;
		if (still >= RT_WATCHDOG_S) {
			printf("HANG: no answer to %s for %d s after %lu round trips\n",
			       rt_what, RT_WATCHDOG_S, now);
			fflush(stdout);
			_exit(2);
		}
	}
	return NULL;
}

static uint32_t rt_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (uint32_t)(*x >> 11);
}

static uint64_t rt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Six times in ten none; else busy for 1-40 us (about the worker's spin,
 * 20 us by default) or, rarer, asleep for 50 us to 3 ms (it sleeps by
 * then): about 40 us on average, so that 10^6 fit in the rig's time.
 */
static void rt_pause(uint64_t *x)
{
	uint32_t r = rt_rand(x) % 100;
	struct timespec ts = { 0, 0 };
	uint64_t end;

	if (r < 60)
		return;
	if (r < 90) {
		end = rt_now_ns() + 1000u * (1 + rt_rand(x) % 40);
		while (rt_now_ns() < end)
			;
		return;
	}
	ts.tv_nsec = r < 99 ? 1000 * (50 + rt_rand(x) % 450) :
			      1000 * (1000 + rt_rand(x) % 2000);
	nanosleep(&ts, NULL);
}

/* One checked ECHO of @len bytes at @off: 0, 1 on a mismatch, or -1. */
static int rt_echo(struct xc_session *s, uint64_t off, uint32_t len,
		   uint32_t seed, cudaError_t *err)
{
	struct xcuda_echo_args a = { seed, 1, (uint8_t)seed, 0 };
	uint8_t *p = xc_arena_ptr(s, off);
	struct xcuda_echo_res r;
	struct xcuda_request req;
	uint64_t want;
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i);
	want = xcuda_fnv1a64(seed, p, len);
	xc_req_echo(&req, &a);
	req.hdr.data_off = (uint32_t)off;
	req.hdr.data_len = len;
	*err = xc_call(s, &req, &r, sizeof(r));
	if (*err)
		return -1;
	if (r.bytes != len || r.checksum != want)
		return 1;
	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)seed)
			return 1;
	return 0;
}

static struct xc_session *rt_session(void)
{
	struct xc_session *s;
	cudaError_t err;

	s = xc_session_get(&err);
	if (!s)
		printf("no session: %s\n", xc_error_name(err));
	return s;
}

static int rt_pingpong(unsigned long count, uint64_t seed)
{
	struct xr_stats st = { 0 };
	struct xc_session *s;
	uint64_t x = seed | 1, off, t0, t1;
	unsigned long i;
	cudaError_t err;
	int r;

	s = rt_session();
	if (!s)
		return 3;
	off = xc_arena_alloc(s->heap, RT_ECHO_BYTES, XCUDA_PAGE_SIZE);
	if (off == UINT64_MAX) {
		printf("no arena block\n");
		return 1;
	}
	rt_what = "a ping";
	t0 = rt_now_ns();
	for (i = 0; i < count; i++) {
		rt_pause(&x);
		r = rt_echo(s, off, RT_ECHO_BYTES, (uint32_t)i, &err);
		if (r) {
			printf("pingpong FAILED at round trip %lu: %s\n", i,
			       r < 0 ? xc_error_name(err) : "corrupted");
			return 1;
		}
		atomic_fetch_add(&rt_progress, 1);
	}
	t1 = rt_now_ns();
	pthread_mutex_lock(&s->lock);
	if (s->t.stats)
		st = *s->t.stats;
	pthread_mutex_unlock(&s->lock);
	printf("pingpong ok: %lu round trips in %.1f s; this side: %llu bells rung, %llu sleeps\n",
	       count, (double)(t1 - t0) / 1e9, (unsigned long long)st.bells,
	       (unsigned long long)st.sleeps);
	return 0;
}

static atomic_int rt_storming;

/* The eventfds a session's process holds, and room to spare. */
#define RT_MAX_EVENTFDS	16

/* Writes to each eventfd in @arg (-1 ended) until rt_storming is 0. */
static void *rt_storm_main(void *arg)
{
	const int *fds = arg;
	unsigned long n = 0;
	uint64_t one = 1;

	while (atomic_load(&rt_storming))
		for (int i = 0; fds[i] >= 0; i++)
			if (write(fds[i], &one, sizeof(one)) == sizeof(one))
				n++;
	return (void *)n;
}

/* The descriptors of this process's eventfds, at most @max, -1 ended. */
static int rt_eventfds(int *fds, int max)
{
	char path[300], link[64];
	struct dirent *d;
	int n = 0;
	ssize_t r;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return 0;
	while ((d = readdir(dir)) && n < max) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		r = readlink(path, link, sizeof(link) - 1);
		if (r <= 0)
			continue;
		link[r] = 0;
		if (!strcmp(link, "anon_inode:[eventfd]"))
			fds[n++] = atoi(d->d_name);
	}
	closedir(dir);
	fds[n] = -1;
	return n;
}

/*
 * Rings every eventfd this process holds: the worker's doorbell among
 * them (the transport keeps it to itself; ours only wakes us).
 */
static void rt_ring_all(void)
{
	uint64_t one = 1;
	int fds[RT_MAX_EVENTFDS + 1];

	rt_eventfds(fds, RT_MAX_EVENTFDS);
	for (int i = 0; fds[i] >= 0; i++)
		if (write(fds[i], &one, sizeof(one)) < 0)
			perror("write");
}

static int rt_storm(unsigned int secs)
{
	struct xc_session *s;
	uint64_t off, end;
	unsigned long i = 0;
	cudaError_t err;
	int fds[RT_MAX_EVENTFDS + 1], r = 0;
	pthread_t th;
	void *kicks;

	s = rt_session();
	if (!s)
		return 3;
	off = xc_arena_alloc(s->heap, RT_ECHO_BYTES, XCUDA_PAGE_SIZE);
	if (off == UINT64_MAX || !rt_eventfds(fds, RT_MAX_EVENTFDS)) {
		printf("storm FAILED: no arena block or no eventfd\n");
		return 1;
	}
	atomic_store(&rt_storming, 1);
	if (pthread_create(&th, NULL, rt_storm_main, fds)) {
		printf("storm FAILED: no thread\n");
		return 1;
	}
	printf("storming\n");
	rt_what = "a call under the storm";
	end = rt_now_ns() + (uint64_t)secs * 1000000000u;
	while (!r && rt_now_ns() < end) {
		r = rt_echo(s, off, RT_ECHO_BYTES, (uint32_t)i, &err);
		if (!r) {
			atomic_fetch_add(&rt_progress, 1);
			i++;
		}
	}
	atomic_store(&rt_storming, 0);
	pthread_join(th, &kicks);
	if (r) {
		printf("storm FAILED at round trip %lu: %s\n", i,
		       r < 0 ? xc_error_name(err) : "corrupted");
		return 1;
	}
	printf("storm ok: %lu eventfd writes, %lu round trips in %u s\n",
	       (unsigned long)kicks, i, secs);
	return 0;
}

/* A malformed copy of a good ECHO must be answered with an error. */
static int rt_bad(struct xc_session *s, const char *name,
		  const struct xcuda_request *good, int field)
{
	struct xcuda_request req = *good;
	struct xcuda_echo_res r;
	cudaError_t err;

	switch (field) {
	case 0:
		req.hdr.len = 300;
		break;
	case 1:
		req.hdr.data_off = (uint32_t)(s->t.arena_size - 4096);
		req.hdr.data_len = 2 * 4096;
		break;
	case 2:
		req.hdr.rsvd = 1;
		break;
	default:
		req.hdr.op = 0;
		break;
	}
	rt_what = name;
	err = xc_call(s, &req, &r, sizeof(r));
	atomic_fetch_add(&rt_progress, 1);
	printf("%s: %s\n", name, xc_error_name(err));
	return err == cudaSuccess;
}

static int rt_corrupt(void)
{
	static const char *const names[] = {
		"len-300", "extent-past-arena", "rsvd-nonzero", "op-zero",
	};
	struct xcuda_echo_args a = { 1, 1, 0x5a, 0 };
	struct xcuda_request good;
	xcuda_sring_t *sring;
	struct xc_session *s;
	cudaError_t err;
	unsigned int order, i;
	int bad = 0;
	uint64_t off;

	s = rt_session();
	if (!s)
		return 3;
	off = xc_arena_alloc(s->heap, RT_ECHO_BYTES, XCUDA_PAGE_SIZE);
	if (off == UINT64_MAX)
		return 1;
	xc_req_echo(&good, &a);
	good.hdr.data_off = (uint32_t)off;
	good.hdr.data_len = RT_ECHO_BYTES;
	for (i = 0; i < 4; i++)
		bad |= rt_bad(s, names[i], &good, (int)i);
	if (bad || rt_echo(s, off, RT_ECHO_BYTES, 7, &err)) {
		printf("corrupt FAILED: a malformed request was served, or the session did not survive them\n");
		return 1;
	}
	printf("malformed requests refused; the session still works\n");

	/* The ring sits right before the arena, in both transports. */
	for (order = 0; order <= XCUDA_MAX_RING_ORDER; order++)
		if (XCUDA_RING_SIZE(order) == s->t.ring_slots)
			break;
	if (order > XCUDA_MAX_RING_ORDER) {
		printf("corrupt FAILED: no ring of %u slots\n", s->t.ring_slots);
		return 1;
	}
	sring = (xcuda_sring_t *)((char *)s->t.arena -
				  (XCUDA_PAGE_SIZE << order));
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&sring->req_prod,
			 sring->req_prod + 2 * s->t.ring_slots,
			 __ATOMIC_SEQ_CST);
	rt_ring_all();
	pthread_mutex_unlock(&s->lock);
	printf("req_prod moved past the ring\n");

	/* Each call from now on must fail, none hang. */
	rt_what = "a call after the corruption";
	for (i = 0; i < 3; i++) {
		sleep(1);
		err = cudaSuccess;
		if (!rt_echo(s, off, RT_ECHO_BYTES, 8, &err)) {
			printf("corrupt FAILED: the corrupted session still answers\n");
			return 1;
		}
		atomic_fetch_add(&rt_progress, 1);
	}
	printf("corrupt ok: the session is over: %s\n", xc_error_name(err));
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t wd;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pthread_create(&wd, NULL, rt_watchdog, NULL)) {
		printf("no watchdog thread\n");
		return 1;
	}
	if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "pingpong"))
		ret = rt_pingpong(strtoul(argv[2], NULL, 10),
				  argc == 4 ? strtoull(argv[3], NULL, 0) :
					      (uint64_t)time(NULL));
	else if (argc == 2 && !strcmp(argv[1], "corrupt"))
		ret = rt_corrupt();
	else if (argc == 3 && !strcmp(argv[1], "storm"))
		ret = rt_storm((unsigned int)strtoul(argv[2], NULL, 10));
	else {
		fprintf(stderr, "usage: xcuda-ring-test pingpong COUNT [SEED] | storm SECONDS | corrupt\n");
		ret = 1;
	}
	atomic_store(&rt_done, 1);
	return ret;
}
