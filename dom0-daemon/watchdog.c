// SPDX-License-Identifier: MIT
/*
 * The watch over a request that does not end (watchdog.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "transport.h"
#include "validate.h"
#include "watchdog.h"

/*
 * The worker's thread counts requests and says which one runs (0:
 * none); the watch sees one that has not moved over whole naps.
 */
static uint64_t xd_wd_count;	/* atomic */
static uint16_t xd_wd_op;	/* atomic */
static uint64_t xd_wd_nap_ns;
static uint64_t xd_wd_deadline_ns;
/* The channel asked, until xd_watchdog_stop(): under xd_wd_lock. */
static pthread_mutex_t xd_wd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xd_chan *xd_wd_chan;

void xd_watchdog_note(uint16_t op)
{
	/* One writer: no read-modify-write needed. */
	__atomic_store_n(&xd_wd_count,
			 __atomic_load_n(&xd_wd_count, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&xd_wd_op, op, __ATOMIC_RELEASE);
}

static int xd_wd_guest_gone(void)
{
	struct xd_chan *c;
	int gone;

	pthread_mutex_lock(&xd_wd_lock);
	c = xd_wd_chan;
	gone = c && c->ops->peer_gone(c);
	pthread_mutex_unlock(&xd_wd_lock);
	return gone;
}

static void *xd_wd_thread(void *arg)
{
	struct timespec ts = { (time_t)(xd_wd_nap_ns / 1000000000u),
			       (long)(xd_wd_nap_ns % 1000000000u) };
	uint64_t count, seen = 0, ran = 0;
	uint16_t op;

	(void)arg;
	for (;;) {
		nanosleep(&ts, NULL);
		op = __atomic_load_n(&xd_wd_op, __ATOMIC_ACQUIRE);
		count = __atomic_load_n(&xd_wd_count, __ATOMIC_RELAXED);
		if (!op || count != seen) {
			/* Idle, or another request since the last look. */
			seen = count;
			ran = 0;
			continue;
		}
		/* The same request at two looks: it ran a whole nap. */
		ran += xd_wd_nap_ns;
		if (ran >= 1000000000u && xd_wd_guest_gone()) {
			xd_log(XD_LOG_WARN, "the guest went during a %s "
			       "request (%.0f s and more): ending the session",
			       xd_op_name(op), (double)ran / 1e9);
			_exit(XD_WATCHDOG_GONE);
		}
		if (xd_wd_deadline_ns && ran >= xd_wd_deadline_ns) {
			xd_log(XD_LOG_ERROR, "a %s request has run for %.1f s "
			       "and more, past the deadline of %llu s "
			       "(--request-deadline): ending the session",
			       xd_op_name(op), (double)ran / 1e9,
			       (unsigned long long)(xd_wd_deadline_ns /
						    1000000000u));
			_exit(XD_WATCHDOG_EXIT);
		}
	}
	return NULL;
}

int xd_watchdog_start(struct xd_chan *c, unsigned int deadline_s)
{
	pthread_t t;
	int err;

	pthread_mutex_lock(&xd_wd_lock);
	xd_wd_chan = c && c->ops && c->ops->peer_gone ? c : NULL;
	pthread_mutex_unlock(&xd_wd_lock);
	if (!deadline_s && !xd_wd_chan)
		return 0;
	xd_wd_deadline_ns = (uint64_t)deadline_s * 1000000000u;
	/* A quarter of the deadline, at most a second, between looks. */
	xd_wd_nap_ns = 1000000000u;
	if (deadline_s && xd_wd_deadline_ns / 4 < xd_wd_nap_ns)
		xd_wd_nap_ns = xd_wd_deadline_ns / 4;
	err = pthread_create(&t, NULL, xd_wd_thread, NULL);
	if (err) {
		xd_watchdog_stop();
		xd_wd_deadline_ns = 0;
		return -err;
	}
	pthread_detach(t);
	return 0;
}

void xd_watchdog_stop(void)
{
	pthread_mutex_lock(&xd_wd_lock);
	xd_wd_chan = NULL;
	pthread_mutex_unlock(&xd_wd_lock);
}
