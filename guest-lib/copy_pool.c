// SPDX-License-Identifier: MIT
/*
 * memcpy spread over helper threads, for the guest's side of staged
 * copies.  One thread copies pageable memory at about 10 GB/s, a fifth of
 * what the GPU takes from pinned memory; a few threads together come
 * close enough that a pipelined pageable copy beats CUDA's own.
 *
 * XCUDA_COPY_THREADS: threads per copy, the caller included (1: no
 * helpers).  The default is by measurement (docs/performance.md), fewer
 * on a small machine.  Helpers start on the first copy large enough to
 * split and live as long as the process; they block every signal.
 *
 * A round: the caller fills one job per helper, bumps @gen and copies
 * the first part itself, then waits until every helper has bumped @done.
 * Only one round runs at a time (@round_lock); a caller that finds it
 * taken copies alone rather than wait.  Helpers and a waiting caller spin
 * briefly, since rounds come back to back in a streaming copy, and then
 * sleep on a futex.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/ring_wait.h"
#include "guest.h"

#define XC_POOL_MAX		16
#define XC_POOL_DEFAULT		6
/* Below this per thread, waking a helper costs more than it saves. */
#define XC_POOL_MIN_PART	(256u << 10)
/* Helpers wait this long for the next round before they sleep. */
#define XC_POOL_SPIN_NS		200000u

struct xc_job {
	void *dst;
	const void *src;
	size_t len;
};

static struct {
	pthread_mutex_t round_lock;
	pthread_mutex_t start_lock;
	unsigned int threads;		/* per copy, caller included */
	unsigned int helpers;		/* started */
	int configured;
	int quit;
	uint32_t gen;			/* futex: a new round */
	uint32_t gen0;			/* @gen when the helpers started */
	uint32_t done;			/* futex: helpers finished this round */
	uint32_t sleepers;		/* helpers asleep on @gen */
	uint32_t waiting;		/* the caller is asleep on @done */
	struct xc_job job[XC_POOL_MAX];
	pthread_t tid[XC_POOL_MAX];
} xc_pool = {
	.round_lock = PTHREAD_MUTEX_INITIALIZER,
	.start_lock = PTHREAD_MUTEX_INITIALIZER,
};

static void xc_futex_wait(uint32_t *word, uint32_t val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void xc_futex_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/*
 * Waits until *@word differs from @old: spins for a while, then sleeps
 * with *@sleepers counting us (so that the other side knows to wake us).
 * The spin's acquire load pairs with the bump's release; sleeping is all
 * seq_cst: either the waker sees *@sleepers or we see the new value.
 */
static uint32_t xc_pool_await(uint32_t *word, uint32_t old,
			      uint32_t *sleepers)
{
	uint32_t v = xr_spin(word, old, xr_now_ns() + XC_POOL_SPIN_NS);

	if (v != old)
		return v;
	for (;;) {
		__atomic_add_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
		v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
		if (v == old)
			xc_futex_wait(word, old);
		__atomic_sub_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
		v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
		if (v != old)
			return v;
	}
}

static void xc_pool_bump(uint32_t *word, uint32_t *sleepers)
{
	__atomic_add_fetch(word, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(sleepers, __ATOMIC_SEQ_CST))
		xc_futex_wake(word);
}

static void *xc_pool_helper(void *arg)
{
	struct xc_job *job = arg;
	/* Not @gen itself: the first round may have begun already. */
	uint32_t seen = xc_pool.gen0;

	for (;;) {
		seen = xc_pool_await(&xc_pool.gen, seen, &xc_pool.sleepers);
		if (__atomic_load_n(&xc_pool.quit, __ATOMIC_ACQUIRE))
			return NULL;
		if (job->len)
			memcpy(job->dst, job->src, job->len);
		xc_pool_bump(&xc_pool.done, &xc_pool.waiting);
	}
}

static unsigned int xc_pool_default(void)
{
	cpu_set_t set;
	unsigned int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	/* Leave room for the application's own threads. */
	n = (unsigned int)CPU_COUNT(&set) / 2;
	if (n > XC_POOL_DEFAULT)
		n = XC_POOL_DEFAULT;
	return n ? n : 1;
}

static void xc_pool_configure(void)
{
	const char *v = getenv("XCUDA_COPY_THREADS");
	unsigned long n;
	char *end;

	xc_pool.threads = xc_pool_default();
	if (v && *v) {
		errno = 0;
		n = strtoul(v, &end, 10);
		if (!errno && !*end && n >= 1 && n <= XC_POOL_MAX)
			xc_pool.threads = (unsigned int)n;
		else
			xc_log("XCUDA_COPY_THREADS=%s: not 1..%d, using %u", v,
			       XC_POOL_MAX, xc_pool.threads);
	}
}

/* Starts the helpers once; returns how many threads a copy may use. */
static unsigned int xc_pool_start(void)
{
	sigset_t all, old;
	unsigned int i;

	if (__atomic_load_n(&xc_pool.configured, __ATOMIC_ACQUIRE))
		return xc_pool.helpers + 1;
	pthread_mutex_lock(&xc_pool.start_lock);
	if (xc_pool.configured)
		goto out;
	xc_pool_configure();
	/* No round runs before we are configured: @gen stays put. */
	xc_pool.gen0 = xc_pool.gen;
	/* Signals are the application's business, not our threads'. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i + 1 < xc_pool.threads; i++) {
		if (pthread_create(&xc_pool.tid[i], NULL, xc_pool_helper,
				   &xc_pool.job[i]))
			break;
		pthread_setname_np(xc_pool.tid[i], "xcuda-copy");
		xc_pool.helpers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&xc_pool.configured, 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&xc_pool.start_lock);
	return xc_pool.helpers + 1;
}

void xc_par_memcpy(void *dst, const void *src, size_t len)
{
	unsigned int parts, i;
	uint32_t want, cur;
	size_t part, off;

	if (!len)
		return;
	parts = len / XC_POOL_MIN_PART < XC_POOL_MAX ?
		(unsigned int)(len / XC_POOL_MIN_PART) : XC_POOL_MAX;
	if (parts > 1) {
		unsigned int max = xc_pool_start();

		parts = parts < max ? parts : max;
	}
	if (parts <= 1 || pthread_mutex_trylock(&xc_pool.round_lock)) {
		memcpy(dst, src, len);
		return;
	}
	/* Parts of whole cache lines; the caller takes the remainder. */
	part = (len / parts) & ~(size_t)63;
	off = len - part * (parts - 1);
	for (i = 0; i < xc_pool.helpers; i++) {
		struct xc_job *j = &xc_pool.job[i];

		if (i + 1 < parts) {
			j->dst = (uint8_t *)dst + off + i * part;
			j->src = (const uint8_t *)src + off + i * part;
			j->len = part;
		} else {
			j->len = 0;
		}
	}
	/* Every helper answers every round, busy or not. */
	want = __atomic_load_n(&xc_pool.done, __ATOMIC_SEQ_CST) +
	       xc_pool.helpers;
	/* Publishes the jobs with the new round (seq_cst orders them). */
	xc_pool_bump(&xc_pool.gen, &xc_pool.sleepers);
	memcpy(dst, src, off);
	while ((cur = __atomic_load_n(&xc_pool.done, __ATOMIC_SEQ_CST)) != want)
		xc_pool_await(&xc_pool.done, cur, &xc_pool.waiting);
	pthread_mutex_unlock(&xc_pool.round_lock);
}

/* The child of fork() has none of the helpers: it starts its own. */
static void xc_pool_atfork_child(void)
{
	pthread_mutex_init(&xc_pool.round_lock, NULL);
	pthread_mutex_init(&xc_pool.start_lock, NULL);
	xc_pool.helpers = 0;
	xc_pool.configured = 0;
	xc_pool.sleepers = 0;
	xc_pool.waiting = 0;
}

__attribute__((constructor)) static void xc_pool_init(void)
{
	pthread_atfork(NULL, NULL, xc_pool_atfork_child);
}

/* Helpers run our code: they must be gone before the library is. */
__attribute__((destructor)) static void xc_pool_fini(void)
{
	unsigned int i;

	if (!__atomic_load_n(&xc_pool.configured, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&xc_pool.quit, 1, __ATOMIC_RELEASE);
	xc_pool_bump(&xc_pool.gen, &xc_pool.sleepers);
	for (i = 0; i < xc_pool.helpers; i++)
		pthread_join(xc_pool.tid[i], NULL);
	xc_pool.helpers = 0;
}
