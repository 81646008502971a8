/* SPDX-License-Identifier: MIT */
/*
 * Waiting for the other end of a shared ring, and waking it: what the
 * guest library and the worker both do, whichever way requests flow.
 *
 * One direction of a ring is two 32-bit indexes in shared memory: the
 * producer's @prod and the consumer's @event, as Xen's req_prod/req_event
 * and rsp_prod/rsp_event.  A consumer that found nothing spins a while
 * watching @prod (the answer usually comes sooner than a sleep and a
 * wake-up would take), then says where it wants to be woken (@event =
 * what it has consumed + 1), looks once more and sleeps on its doorbell.
 * A producer publishes @prod and rings only when that push crosses
 * @event, so nobody rings while the other side spins.  Both store their
 * index, then read the other's, in one total order: at least one of them
 * sees the other, so no wake-up is lost.
 *
 * Doorbells are non-blocking eventfds.  The hot path (both sides spinning)
 * makes no system call: everything it touches is inline here.
 */
#ifndef XCUDA_COMMON_RING_WAIT_H
#define XCUDA_COMMON_RING_WAIT_H

#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

/* XCUDA_SPIN_US: how long to spin before sleeping, in microseconds. */
#define XR_SPIN_ENV		"XCUDA_SPIN_US"
#define XR_SPIN_MAX_US		1000000u

/* CLOCK_MONOTONIC in nanoseconds: the vDSO answers, no system call. */
static inline uint64_t xr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The clock at @timeout_ms from now; UINT64_MAX (never) if negative. */
static inline uint64_t xr_deadline(int timeout_ms)
{
	if (timeout_ms < 0)
		return UINT64_MAX;
	return xr_now_ns() + (uint64_t)timeout_ms * 1000000u;
}

/* poll()'s timeout for @deadline, rounded up so that we never wake early. */
int xr_poll_ms(uint64_t deadline);

/* Tells the CPU that we spin: saves power, yields to a sibling thread. */
static inline void xr_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * Spins while *@word == @seen, until the clock passes @end; returns the
 * last value read (@seen: time ran out).  An acquire load: what the
 * writer stored before its new value is visible once we see it.
 */
static inline uint32_t xr_spin(const uint32_t *word, uint32_t seen,
			       uint64_t end)
{
	unsigned int i;
	uint32_t v;

	for (i = 1;; i++) {
		v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
		if (v != seen)
			return v;
		xr_cpu_relax();
		/* The clock is cheap but not free: look every 32 pauses. */
		if (!(i & 31) && xr_now_ns() >= end)
			return v;
	}
}

/*
 * Producer: publishes @new in *@prod (the entries written before it
 * first) and says whether the consumer must be rung, i.e. whether it asked
 * in *@event to be woken at an index this push crosses.
 */
static inline int xr_publish(uint32_t *prod, const uint32_t *event,
			     uint32_t new)
{
	uint32_t old = __atomic_load_n(prod, __ATOMIC_RELAXED);

	/* seq_cst store, then load: the mirror of xr_prepare_sleep(). */
	__atomic_store_n(prod, new, __ATOMIC_SEQ_CST);
	return (uint32_t)(new - __atomic_load_n(event, __ATOMIC_SEQ_CST)) <
	       (uint32_t)(new - old);
}

/*
 * Consumer, about to sleep with everything up to @cons consumed: asks to
 * be woken at the next entry and looks once more.  True if the producer
 * got there first (then do not sleep: it may not ring).
 */
static inline int xr_prepare_sleep(const uint32_t *prod, uint32_t *event,
				   uint32_t cons)
{
	if (__atomic_load_n(prod, __ATOMIC_RELAXED) != cons)
		return 1;
	__atomic_store_n(event, cons + 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(prod, __ATOMIC_SEQ_CST) != cons;
}

/* Rings a doorbell: 0 or a negative errno (a full counter is no error). */
int xr_bell_ring(int efd);

/* Empties a doorbell that poll() found readable; one read takes it all. */
void xr_bell_drain(int efd);

/*
 * read(), again on EINTR: the bytes read (0 at end of file), or a
 * negative errno (-EAGAIN: a non-blocking @fd has nothing yet).
 */
ssize_t xr_read(int fd, void *buf, size_t len);

/*
 * xr_read() on a non-blocking @fd that waits in poll() while there is
 * nothing to read, up to @timeout_ms (-1: forever) each time; -EAGAIN
 * when it passes.
 */
ssize_t xr_read_wait(int fd, void *buf, size_t len, int timeout_ms);

/*
 * The spin time in ns: XCUDA_SPIN_US when set and valid, else @def_us,
 * or 0 when this process may run on one CPU only (the peer could not run
 * while we spin).  Returns 0, or -EINVAL if the variable is malformed
 * (*@ns then holds the default: the caller decides whether that is fatal).
 */
int xr_spin_env(unsigned int def_us, uint64_t *ns);

/* What one end of a ring did, for statistics: each counts one thing. */
struct xr_stats {
	uint64_t pushed;	/* entries we published (copied in once each) */
	uint64_t taken;		/* entries we consumed (copied out once each) */
	uint64_t bells;		/* doorbells we rang: a write() each */
	uint64_t sleeps;	/* times we slept: a poll() each */
};

/*
 * One end of a ring shared with another process: the indexes of the
 * direction it consumes and of the one it produces, our doorbell and the
 * peer's, and a descriptor that carries nothing but says when the peer has
 * gone.  On `local` that is the handshake socket (its hang-up, or data,
 * which is a breach); on `xen` it is the device file (/dev/xcuda,
 * /dev/xcuda-back), which is no socket and says only POLLHUP or POLLERR:
 * @sock_hup_only is set, and nothing else it says is looked at.
 *
 * @closed (`xen`'s guest only, else NULL): a word of shared memory that
 * the peer's side sets, then rings our bell, once the session is over.
 *
 * Threads: an end's consumer (xr_consume(), xr_wait(), xr_sleep()) and
 * its producer (xr_end_push()) may run in two threads at once, as the
 * upstream relay's do (dom0-daemon/relay.c): each index is written by
 * one side only, and what both touch is read and written atomically:
 * @bell_owed (set by a push, taken by whichever of a push or a wait
 * rings), @broken (set by the consumer, read by the producer too) and
 * @stats.bells (both ring).  Relaxed atomics are plain loads and stores
 * on x86 and arm64: the single-threaded hot path pays nothing, and a
 * bell rung twice is harmless.
 */
struct xr_end {
	const uint32_t *in_prod;	/* shared: the peer produced up to */
	uint32_t *in_event;		/* shared: wake us at this index */
	const uint32_t *in_cons;	/* ours: consumed up to */
	uint32_t *out_prod;		/* shared: we produced up to */
	const uint32_t *out_event;	/* shared: the peer's wake-up index */
	const uint32_t *closed;		/* shared: nonzero, the peer is over */
	int sock;
	int sock_hup_only;	/* @sock is no socket: only its hang-up counts */
	int bell;		/* ours: the peer rings it, we sleep on it */
	int peer_bell;		/* the peer's: we ring it */
	int bell_owed;		/* a push of a batch crossed out_event */
	int dead;		/* the peer hung up */
	int broken;		/* the peer broke the protocol */
	uint64_t spin_ns;	/* how long to spin before sleeping */
	struct xr_stats stats;	/* ours alone: the peer's are not seen */
};

/* Tells @e where its indexes are, once the ring is mapped. */
static inline void xr_end_ring(struct xr_end *e, const uint32_t *in_prod,
			       uint32_t *in_event, const uint32_t *in_cons,
			       uint32_t *out_prod, const uint32_t *out_event)
{
	e->in_prod = in_prod;
	e->in_event = in_event;
	e->in_cons = in_cons;
	e->out_prod = out_prod;
	e->out_event = out_event;
}

/*
 * Creates our doorbell and the peer's (eventfds, non-blocking, close on
 * exec) in @e->bell and @e->peer_bell: 0, or a negative errno with both
 * -1.
 */
int xr_end_bells(struct xr_end *e);

/* Closes the three descriptors. */
void xr_end_close(struct xr_end *e);

/* Rings the peer's doorbell, counted. */
static inline int xr_end_bell(struct xr_end *e)
{
	__atomic_fetch_add(&e->stats.bells, 1, __ATOMIC_RELAXED);
	return xr_bell_ring(e->peer_bell);
}

/* Whether the peer broke the protocol; from either side's thread. */
static inline int xr_end_broken(const struct xr_end *e)
{
	return __atomic_load_n(&e->broken, __ATOMIC_RELAXED);
}

static inline void xr_end_set_broken(struct xr_end *e)
{
	__atomic_store_n(&e->broken, 1, __ATOMIC_RELAXED);
}

/*
 * Takes a bell the end owes, if any: 1 when the caller must ring it.
 * One taker wins when a push and a wait race (two threads).
 */
static inline int xr_end_take_bell(struct xr_end *e)
{
	return __atomic_load_n(&e->bell_owed, __ATOMIC_RELAXED) &&
	       __atomic_exchange_n(&e->bell_owed, 0, __ATOMIC_RELAXED);
}

/*
 * Producer: publishes @new (the entries before it written) and rings the
 * peer if it sleeps.  With @more the bell waits for the push that ends
 * the batch, or our next wait; the need for it is remembered, since a
 * later push of the batch may no longer cross the peer's event index.
 */
static inline int xr_end_push(struct xr_end *e, uint32_t new, int more)
{
	if (xr_publish(e->out_prod, e->out_event, new))
		__atomic_store_n(&e->bell_owed, 1, __ATOMIC_RELAXED);
	if (more || !xr_end_take_bell(e))
		return 0;
	return xr_end_bell(e);
}

/*
 * Sleeps on the doorbell and the socket until @deadline: 1 to look at
 * the ring again, 0 on timeout, -EPROTO if the peer wrote on the socket,
 * or another negative errno.  A hang-up sets @dead and returns 1: what
 * the peer left in the ring comes first.  With @sock_hup_only the
 * descriptor is polled for its hang-up alone.
 */
int xr_sleep(struct xr_end *e, uint64_t deadline);

/* One consumer call's wait: set .timeout_ms (-1: forever) and .spin_ns. */
struct xr_wait {
	int timeout_ms;
	int started;
	uint64_t spin_ns;	/* spin this long before the first sleep */
	uint64_t deadline;
};

/*
 * Waits for the peer to produce past what we consumed, after a look at
 * the ring found nothing: rings a bell we owe, then, the first time,
 * spins (if @w asks and the timeout is not 0), then asks to be woken and
 * sleeps.  Returns 1 to look at the ring again, 0 once the timeout has
 * passed, -EPIPE once the peer has gone (its hang-up, or @closed), or
 * another negative errno.
 */
static inline int xr_wait(struct xr_end *e, struct xr_wait *w)
{
	uint32_t cons = *e->in_cons;
	int ret;

	/* The peer may be asleep, waiting for the end of our batch. */
	if (xr_end_take_bell(e)) {
		ret = xr_end_bell(e);
		if (ret)
			return ret;
	}
	/* Only now: what the peer left in the ring came before its death. */
	if (e->dead)
		return -EPIPE;
	/*
	 * Marked over: one more look at the ring, since what the peer
	 * published before the mark may have come after our last look (the
	 * acquire load makes it visible), then -EPIPE.  Looked at before
	 * every spin and sleep: the peer's side sets the word, then rings
	 * us, so a mark that comes later wakes the sleep below.
	 */
	if (e->closed && __atomic_load_n(e->closed, __ATOMIC_ACQUIRE)) {
		e->dead = 1;
		return 1;
	}
	if (!w->started) {
		/* Not before the first empty look: one clock read serves. */
		uint64_t now = 0, end;

		w->started = 1;
		if (w->timeout_ms >= 0 || w->spin_ns)
			now = xr_now_ns();
		w->deadline = w->timeout_ms < 0 ? UINT64_MAX :
			      now + (uint64_t)w->timeout_ms * 1000000u;
		if (w->spin_ns && w->timeout_ms) {
			end = now + w->spin_ns;
			if (xr_spin(e->in_prod, cons, end < w->deadline ?
				    end : w->deadline) != cons)
				return 1;
		}
	}
	if (xr_prepare_sleep(e->in_prod, e->in_event, cons))
		return 1;
	return xr_sleep(e, w->deadline);
}

/*
 * Copies what the ring holds for us, up to @max entries, into @out:
 * returns how many (> 0), 0 if none, or a negative errno.
 */
typedef int xr_take_fn(void *ctx, void *out, unsigned int max);

/*
 * The consumer: looks with @take, waits (xr_wait()) while there is
 * nothing.  Returns what @take found, or what ended the wait.  Inline, so
 * that @take is called directly on the hot path.
 */
static inline int xr_consume(struct xr_end *e, struct xr_wait *w,
			     xr_take_fn *take, void *ctx, void *out,
			     unsigned int max)
{
	int ret;

	for (;;) {
		ret = take(ctx, out, max);
		if (ret)
			return ret;
		ret = xr_wait(e, w);
		if (ret <= 0)
			return ret;
	}
}

#endif /* XCUDA_COMMON_RING_WAIT_H */
