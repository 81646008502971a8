// SPDX-License-Identifier: MIT
/*
 * The request deadline (watchdog.h).
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "common/ring_wait.h"
#include "log.h"
#include "validate.h"
#include "watchdog.h"

static uint64_t xd_wd_since;	/* atomic: the request's start, 0: idle */
static uint16_t xd_wd_op;	/* atomic: its op */
static uint64_t xd_wd_ns;

void xd_watchdog_note(uint16_t op)
{
	if (!xd_wd_ns)
		return;
	__atomic_store_n(&xd_wd_op, op, __ATOMIC_RELAXED);
	__atomic_store_n(&xd_wd_since, op ? xr_now_ns() : 0,
			 __ATOMIC_RELEASE);
}

static void *xd_wd_thread(void *arg)
{
	/* A quarter of the deadline, at most a second, between looks. */
	uint64_t nap = xd_wd_ns / 4 < 1000000000u ? xd_wd_ns / 4 : 1000000000u;
	struct timespec ts = { (time_t)(nap / 1000000000u),
			       (long)(nap % 1000000000u) };
	uint64_t since, now;

	(void)arg;
	for (;;) {
		nanosleep(&ts, NULL);
		since = __atomic_load_n(&xd_wd_since, __ATOMIC_ACQUIRE);
		now = xr_now_ns();
		if (!since || now < since || now - since <= xd_wd_ns)
			continue;
		xd_log(XD_LOG_ERROR, "a %s request has run for %.1f s, past "
		       "the deadline of %llu s (--request-deadline): ending "
		       "the session", xd_op_name(__atomic_load_n(&xd_wd_op,
							     __ATOMIC_RELAXED)),
		       (double)(now - since) / 1e9,
		       (unsigned long long)(xd_wd_ns / 1000000000u));
		_exit(XD_WATCHDOG_EXIT);
	}
	return NULL;
}

int xd_watchdog_start(unsigned int deadline_s)
{
	pthread_t t;
	int err;

	if (!deadline_s)
		return 0;
	xd_wd_ns = (uint64_t)deadline_s * 1000000000u;
	err = pthread_create(&t, NULL, xd_wd_thread, NULL);
	if (err) {
		xd_wd_ns = 0;
		return -err;
	}
	pthread_detach(t);
	return 0;
}
