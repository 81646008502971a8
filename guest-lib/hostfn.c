// SPDX-License-Identifier: MIT
/*
 * Running the program's host functions in the guest (hostfn.h).  One
 * thread of the library, started at the first host function, waits for
 * the worker's records in the slot area (xcuda/hostfn.h) and runs the
 * functions one at a time, in the order it finds them, as CUDA may
 * serialise host functions of independent streams.
 *
 * Waiting: on `local` a futex on the area's wake word, which the worker
 * bumps and wakes after each record (the arena is one memfd mapped
 * shared by both processes); on `xen` no futex crosses the two kernels,
 * so the thread polls, with a growing nap, and only while a function is
 * pending or a graph holds one.
 *
 * The worker is not trusted: a record counts only if its token is in our
 * table, and a one-shot entry leaves the table before it runs, so that
 * nothing runs twice unless a graph kept it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "hostfn.h"

#define XC_HF_BUCKETS		256
/* `xen`: naps while one-shot functions are pending, and while only graphs
 * hold some; with none, the thread sleeps until one is registered. */
#define XC_HF_NAP_MIN_US	20
#define XC_HF_NAP_PENDING_US	2000
#define XC_HF_NAP_GRAPH_US	20000
/* `local`: the futex wait's limit, a safety net for a lost wake-up. */
#define XC_HF_WAIT_MS		1000

struct xc_hf_ent {
	uint64_t token;
	unsigned int flags;
	struct xc_hostfn f;
	struct xc_hf_ent *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t kick;	/* `xen`: something was registered */
	struct xc_hf_ent *bucket[XC_HF_BUCKETS];
	uint64_t next_token;
	unsigned int oneshot, kept;
	int started;
	struct xcuda_hostfn_area *area;
	int futex;
} xc_hf = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.kick = PTHREAD_COND_INITIALIZER,
};

static __thread int xc_hf_runner;
static pthread_once_t xc_hf_once = PTHREAD_ONCE_INIT;

static void xc_hf_atfork_prepare(void)
{
	pthread_mutex_lock(&xc_hf.lock);
}

static void xc_hf_atfork_parent(void)
{
	pthread_mutex_unlock(&xc_hf.lock);
}

/* The child of a fork has its own session, and no runner thread. */
static void xc_hf_atfork_child(void)
{
	unsigned int i;

	for (i = 0; i < XC_HF_BUCKETS; i++) {
		while (xc_hf.bucket[i]) {
			struct xc_hf_ent *e = xc_hf.bucket[i];

			xc_hf.bucket[i] = e->next;
			free(e);
		}
	}
	xc_hf.oneshot = xc_hf.kept = 0;
	xc_hf.started = 0;
	xc_hf.area = NULL;
	pthread_mutex_init(&xc_hf.lock, NULL);
	pthread_cond_init(&xc_hf.kick, NULL);
}

static void xc_hf_init(void)
{
	pthread_atfork(xc_hf_atfork_prepare, xc_hf_atfork_parent,
		       xc_hf_atfork_child);
}

static long xc_futex(uint32_t *word, int op, uint32_t val,
		     const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

int xc_hostfn_on_runner(void)
{
	return xc_hf_runner;
}

/* ---- the table ---- */

static struct xc_hf_ent **xc_hf_find(uint64_t token)
{
	struct xc_hf_ent **p = &xc_hf.bucket[token % XC_HF_BUCKETS];

	while (*p && (*p)->token != token)
		p = &(*p)->next;
	return p;
}

cudaError_t xc_hostfn_register(const struct xc_hostfn *f, unsigned int flags,
			       uint64_t *token)
{
	struct xc_hf_ent *e = malloc(sizeof(*e)), **p;

	if (!e)
		return cudaErrorMemoryAllocation;
	e->f = *f;
	e->flags = flags & XC_HOSTFN_KEEP;
	pthread_mutex_lock(&xc_hf.lock);
	e->token = ++xc_hf.next_token;
	p = &xc_hf.bucket[e->token % XC_HF_BUCKETS];
	e->next = *p;
	*p = e;
	if (e->flags & XC_HOSTFN_KEEP)
		xc_hf.kept++;
	else
		xc_hf.oneshot++;
	*token = e->token;
	pthread_cond_signal(&xc_hf.kick);
	pthread_mutex_unlock(&xc_hf.lock);
	return cudaSuccess;
}

void xc_hostfn_keep(uint64_t token)
{
	struct xc_hf_ent *e;

	pthread_mutex_lock(&xc_hf.lock);
	e = *xc_hf_find(token);
	if (e && !(e->flags & XC_HOSTFN_KEEP)) {
		e->flags |= XC_HOSTFN_KEEP;
		xc_hf.oneshot--;
		xc_hf.kept++;
	}
	pthread_mutex_unlock(&xc_hf.lock);
}

/* Takes the entry out of the table.  Lock held. */
static void xc_hf_unlink(struct xc_hf_ent **p)
{
	struct xc_hf_ent *e = *p;

	*p = e->next;
	if (e->flags & XC_HOSTFN_KEEP)
		xc_hf.kept--;
	else
		xc_hf.oneshot--;
	free(e);
}

void xc_hostfn_forget(uint64_t token)
{
	struct xc_hf_ent **p;

	pthread_mutex_lock(&xc_hf.lock);
	p = xc_hf_find(token);
	if (*p)
		xc_hf_unlink(p);
	pthread_mutex_unlock(&xc_hf.lock);
}

int xc_hostfn_get(uint64_t token, struct xc_hostfn *f)
{
	struct xc_hf_ent **p;
	int ret = -1;

	pthread_mutex_lock(&xc_hf.lock);
	p = xc_hf_find(token);
	if (token && *p) {
		*f = (*p)->f;
		ret = 0;
	}
	pthread_mutex_unlock(&xc_hf.lock);
	return ret;
}

unsigned int xc_hostfn_count(void)
{
	unsigned int n;

	pthread_mutex_lock(&xc_hf.lock);
	n = xc_hf.oneshot + xc_hf.kept;
	pthread_mutex_unlock(&xc_hf.lock);
	return n;
}

/* ---- running them ---- */

/* A copy of the entry for @token, taken out unless kept; 0 if found. */
static int xc_hf_take(uint64_t token, struct xc_hostfn *f)
{
	struct xc_hf_ent **p;
	int ret = -1;

	pthread_mutex_lock(&xc_hf.lock);
	p = xc_hf_find(token);
	if (token && *p) {
		*f = (*p)->f;
		if (!((*p)->flags & XC_HOSTFN_KEEP))
			xc_hf_unlink(p);
		ret = 0;
	}
	pthread_mutex_unlock(&xc_hf.lock);
	return ret;
}

/*
 * A record with a payload: the bytes are copied once out of the buffer
 * the worker may still scribble on, bounded by the buffer we gave, and
 * a message is terminated here.
 */
static void xc_hf_run_payload(const struct xc_hostfn *f, uint64_t token,
			      int32_t status, uint64_t len)
{
	if (!f->payload || !f->payload_len)
		return;
	if (f->kind == XC_HOSTFN_LOG) {
		char *msg = malloc(f->payload_len);
		cudaLogLevel level = status == cudaLogLevelWarning ?
				     cudaLogLevelWarning : cudaLogLevelError;

		if (!msg)
			return;
		if (len > f->payload_len - 1)
			len = f->payload_len - 1;
		memcpy(msg, f->payload, (size_t)len);
		msg[len] = '\0';
		f->fn.log(f->data, level, msg, strlen(msg));
		free(msg);
	} else {
		cudaAsyncNotificationInfo_t info;

		memset(&info, 0, sizeof(info));
		if (len > sizeof(info))
			len = sizeof(info);
		if (len > f->payload_len)
			len = f->payload_len;
		memcpy(&info, f->payload, (size_t)len);
		f->fn.async(&info, f->data,
			    (cudaAsyncCallbackHandle_t)(uintptr_t)token);
	}
}

int xc_hostfn_scan(struct xcuda_hostfn_area *area, int futex)
{
	static int said;
	unsigned int i;
	int n = 0;

	for (i = 0; i < XCUDA_HOSTFN_SLOTS; i++) {
		struct xcuda_hostfn_slot *sl = &area->slot[i];
		uint32_t seq = __atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE);
		struct xc_hostfn f;
		uint64_t token;
		int32_t status;

		if (seq == __atomic_load_n(&sl->done, __ATOMIC_RELAXED))
			continue;
		token = __atomic_load_n(&sl->token, __ATOMIC_RELAXED);
		status = __atomic_load_n(&sl->status, __ATOMIC_RELAXED);
		n++;
		if (xc_hf_take(token, &f)) {
			xc_warn_once(&said, "xcudad named a host function that "
				     "is not ours (token %llu): ignored",
				     (unsigned long long)token);
		} else if (f.kind == XC_HOSTFN_HOST) {
			f.fn.host(f.data);
		} else if (f.kind == XC_HOSTFN_STREAM) {
			/* A status CUDA could give, or the worker lies. */
			if (status < 0 || status > 100000)
				status = cudaErrorUnknown;
			f.fn.stream(f.stream, (cudaError_t)status, f.data);
		} else if (f.kind == XC_HOSTFN_LOG ||
			   f.kind == XC_HOSTFN_ASYNC) {
			xc_hf_run_payload(&f, token, status,
					  __atomic_load_n(&sl->arg,
							  __ATOMIC_RELAXED));
		}
		__atomic_store_n(&sl->done, seq, __ATOMIC_RELEASE);
		if (futex)
			xc_futex(&sl->done, FUTEX_WAKE, INT_MAX, NULL);
	}
	return n;
}

static void xc_hf_nap(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static void *xc_hf_main(void *arg)
{
	struct xcuda_hostfn_area *area = arg;
	unsigned int nap = XC_HF_NAP_MIN_US;

	xc_hf_runner = 1;
	for (;;) {
		uint32_t seen = __atomic_load_n(&area->wake, __ATOMIC_SEQ_CST);

		if (xc_hostfn_scan(area, xc_hf.futex)) {
			nap = XC_HF_NAP_MIN_US;
			continue;
		}
		if (xc_hf.futex) {
			struct timespec ts = { XC_HF_WAIT_MS / 1000,
					       (XC_HF_WAIT_MS % 1000) *
					       1000000l };

			xc_futex(&area->wake, FUTEX_WAIT, seen, &ts);
			continue;
		}
		pthread_mutex_lock(&xc_hf.lock);
		if (!xc_hf.oneshot && !xc_hf.kept) {
			pthread_cond_wait(&xc_hf.kick, &xc_hf.lock);
			nap = XC_HF_NAP_MIN_US;
			pthread_mutex_unlock(&xc_hf.lock);
			continue;
		}
		if (nap > (xc_hf.oneshot ? XC_HF_NAP_PENDING_US :
					   XC_HF_NAP_GRAPH_US))
			nap = XC_HF_NAP_MIN_US;
		pthread_mutex_unlock(&xc_hf.lock);
		xc_hf_nap(nap);
		nap *= 2;
	}
	return NULL;
}

/* Starts the runner thread on @area.  Lock held. */
static cudaError_t xc_hf_spawn(struct xcuda_hostfn_area *area, int futex)
{
	cudaError_t err = cudaSuccess;
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t th;

	if (xc_hf.started)
		return xc_hf.area == area ? cudaSuccess : cudaErrorUnknown;
	xc_hf.area = area;
	xc_hf.futex = futex;
	/* The program's signals are for its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &at, xc_hf_main, area))
		err = cudaErrorMemoryAllocation;
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		xc_hf.started = 1;
	return err;
}

cudaError_t xc_hostfn_serve(struct xcuda_hostfn_area *area, int futex)
{
	cudaError_t err;

	pthread_once(&xc_hf_once, xc_hf_init);
	pthread_mutex_lock(&xc_hf.lock);
	err = xc_hf_spawn(area, futex);
	pthread_mutex_unlock(&xc_hf.lock);
	return err;
}

cudaError_t xc_hostfn_start(struct xc_session *s)
{
	struct xcuda_hostfn_setup_args a;
	struct xcuda_hostfn_area *area;
	cudaError_t err = cudaSuccess;
	uint64_t off;

	pthread_once(&xc_hf_once, xc_hf_init);
	pthread_mutex_lock(&xc_hf.lock);
	if (xc_hf.started)
		goto out;
	/* After a failed thread start the worker knows the area already. */
	area = xc_hf.area;
	if (!area) {
		off = xc_arena_alloc(s->heap, XCUDA_PAGE_SIZE,
				     XCUDA_PAGE_SIZE);
		if (off == UINT64_MAX) {
			err = cudaErrorMemoryAllocation;
			goto out;
		}
		area = xc_arena_ptr(s, off);
		memset(area, 0, XCUDA_PAGE_SIZE);
		a.off = off;
		a.len = XCUDA_PAGE_SIZE;
		err = xc_call_hostfn_setup(&a);
		if (err) {
			xc_arena_release(s->heap, off);
			goto out;
		}
	}
	err = xc_hf_spawn(area, !!(s->t.flags & XC_TRANSPORT_SHARED_FUTEX));
out:
	pthread_mutex_unlock(&xc_hf.lock);
	return err;
}
