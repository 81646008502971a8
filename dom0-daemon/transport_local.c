// SPDX-License-Identifier: MIT
/*
 * The worker end of the `local` transport (see xcuda/local.h): the back
 * half of the xcuda ring in a memfd the worker creates and shares with one
 * guest process, two eventfd doorbells, and the handshake socket kept open
 * to notice the guest going away.
 *
 * Doorbells follow Xen's hold-off scheme (RING_FINAL_CHECK_FOR_REQUESTS
 * before sleeping, RING_PUSH_RESPONSES_AND_CHECK_NOTIFY after answering),
 * which cannot lose a wake-up: each side stores its index, issues a full
 * barrier, then reads the other's.
 *
 * The guest is not trusted: req_prod is read once per look and checked
 * before any slot is, requests are copied out before anyone reads them,
 * and the memfd is sealed so that the guest cannot shrink it under us.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "shm.h"
#include "transport_local.h"
#include "xcuda/local.h"

#define XD_LOCAL_HELLO_MS	5000
#define XD_LOCAL_SPIN_US	20
#define XD_LOCAL_SPIN_MAX_US	1000000

struct xd_local {
	xcuda_back_ring_t back;
	RING_IDX req_prod;	/* guest's req_prod, last read and checked */
	int sock;		/* the handshake socket, for its hang-up */
	int req_efd;		/* we read: requests are waiting */
	int rsp_efd;		/* we write: responses are waiting */
	void *base;		/* ring, then arena */
	size_t map_size;
	size_t ring_bytes;
	int memfd;		/* kept to map the arena again (arena_at) */
	void *moved;		/* the arena's own mapping once moved */
	uint64_t spin_ns;
	int bell_owed;		/* a push needs the bell, held by @more */
	int dead;		/* the guest hung up */
	int broken;		/* the guest broke the ring protocol */
};

static uint64_t xd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t xd_deadline(int timeout_ms)
{
	if (timeout_ms < 0)
		return UINT64_MAX;
	return xd_now_ns() + (uint64_t)timeout_ms * 1000000u;
}

/* poll()'s timeout for @deadline, rounded up so that we never wake early. */
static int xd_poll_ms(uint64_t deadline)
{
	uint64_t now, ms;

	if (deadline == UINT64_MAX)
		return -1;
	now = xd_now_ns();
	if (now >= deadline)
		return 0;
	ms = (deadline - now + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static inline void xd_cpu_relax(void)
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
 * XCUDA_SPIN_US from the daemon's environment; unset or nonsense means the
 * default, which is no spinning at all when we may run on one CPU only
 * (the guest could not run while we spin).
 */
static uint64_t xd_spin_ns(void)
{
	const char *s = getenv("XCUDA_SPIN_US");
	unsigned long long v;
	cpu_set_t set;
	char *end;

	if (s && *s >= '0' && *s <= '9') {
		errno = 0;
		v = strtoull(s, &end, 10);
		if (!errno && !*end && v <= XD_LOCAL_SPIN_MAX_US)
			return v * 1000u;
	}
	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) == 1)
		return 0;
	return XD_LOCAL_SPIN_US * 1000u;
}

/* Rings a doorbell; a saturated counter is already readable, so is fine. */
static int xd_ring_bell(int efd)
{
	uint64_t one = 1;

	for (;;) {
		if (write(efd, &one, sizeof(one)) == sizeof(one))
			return 0;
		if (errno == EAGAIN)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

static void xd_drain_bell(int efd)
{
	uint64_t v;

	while (read(efd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------------ */
/* Ring operations.                                                   */

/*
 * Copies the next request out, if there is one: 1, 0 or -EPROTO.  The
 * guest's req_prod is read once, and only when everything up to the last
 * value read has been taken.  It may not claim more than a ring's worth
 * of requests beyond our answers, nor fall behind what we have taken.
 */
static int xd_take(struct xd_local *l, struct xcuda_request *out)
{
	xcuda_back_ring_t *b = &l->back;

	if (l->broken)
		return -EPROTO;
	if (b->req_cons == l->req_prod) {
		RING_IDX rp;

		rp = __atomic_load_n(&b->sring->req_prod, __ATOMIC_RELAXED);
		xen_rmb();	/* slots only after the index covering them */
		if (RING_REQUEST_PROD_OVERFLOW(b, rp) ||
		    rp - b->rsp_prod_pvt < b->req_cons - b->rsp_prod_pvt) {
			l->broken = 1;
			return -EPROTO;
		}
		l->req_prod = rp;
		if (rp == b->req_cons)
			return 0;
	}
	RING_COPY_REQUEST(b, b->req_cons, out);
	b->req_cons++;
	return 1;
}

/* Spins until req_prod moves or @end passes; true if it moved. */
static int xd_spin(struct xd_local *l, uint64_t end)
{
	RING_IDX seen = l->req_prod;
	unsigned int i;

	for (i = 1;; i++) {
		if (__atomic_load_n(&l->back.sring->req_prod,
				    __ATOMIC_RELAXED) != seen)
			return 1;
		xd_cpu_relax();
		/* The clock is cheap but not free: look every 32 pauses. */
		if (!(i & 31) && xd_now_ns() >= end)
			return 0;
	}
}

/* Sets req_event and looks once more: true if there is work after all. */
static int xd_prepare_sleep(struct xd_local *l)
{
	int work;

	RING_FINAL_CHECK_FOR_REQUESTS(&l->back, work);
	return work != 0;
}

/* The socket carries nothing after the handshake: EOF or data ends it. */
static int xd_check_sock(struct xd_local *l, short revents)
{
	char c;
	ssize_t r;

	if (revents & POLLNVAL)
		return -EBADF;
	if (revents & (POLLHUP | POLLERR)) {
		l->dead = 1;
		return 0;
	}
	r = recv(l->sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (r > 0) {
		l->broken = 1;
		return -EPROTO;
	}
	if (r == 0 || (errno != EAGAIN && errno != EINTR))
		l->dead = 1;
	return 0;
}

/* Sleeps on the doorbell and the socket: 0 on timeout, 1 to look again. */
static int xd_sleep(struct xd_local *l, uint64_t deadline)
{
	struct pollfd p[2] = {
		{ .fd = l->req_efd, .events = POLLIN },
		{ .fd = l->sock, .events = POLLIN },
	};
	int r;

	r = poll(p, 2, xd_poll_ms(deadline));
	if (r < 0)
		return errno == EINTR ? 1 : -errno;
	if (!r)
		return 0;
	if (p[0].revents & POLLNVAL)
		return -EBADF;
	if (p[0].revents & POLLIN)
		xd_drain_bell(l->req_efd);
	if (p[1].revents) {
		r = xd_check_sock(l, p[1].revents);
		if (r < 0)
			return r;
	}
	return 1;
}

static int xd_local_next(struct xd_chan *c, struct xcuda_request *out,
			 int timeout_ms)
{
	struct xd_local *l = c->priv;
	uint64_t deadline = xd_deadline(timeout_ms), end;
	int spun = 0, ret;

	for (;;) {
		ret = xd_take(l, out);
		if (ret)
			return ret;
		/* Answers held back by @more must not wait for our nap. */
		if (l->bell_owed) {
			l->bell_owed = 0;
			ret = xd_ring_bell(l->rsp_efd);
			if (ret)
				return ret;
		}
		/* Requests the guest left behind come before its death. */
		if (l->dead)
			return -EPIPE;
		if (!spun && l->spin_ns && timeout_ms) {
			spun = 1;
			end = xd_now_ns() + l->spin_ns;
			if (xd_spin(l, end < deadline ? end : deadline))
				continue;
		}
		if (xd_prepare_sleep(l))
			continue;
		ret = xd_sleep(l, deadline);
		if (ret <= 0)
			return ret;
	}
}

/*
 * Each request frees its own slot for its response, so the response ring
 * cannot fill while we answer only what we took; a guest that cheats
 * (overwrites slots, moves rsp_prod or rsp_event) only garbles what it
 * reads itself.  Answering more than we took would overwrite a request
 * not yet read: that is refused.
 */
static int xd_local_reply(struct xd_chan *c, const struct xcuda_response *rsp,
			  int more)
{
	struct xd_local *l = c->priv;
	xcuda_back_ring_t *b = &l->back;
	int notify;

	if (l->broken)
		return -EPROTO;
	if (b->rsp_prod_pvt == b->req_cons)
		return -EINVAL;
	memcpy(RING_GET_RESPONSE(b, b->rsp_prod_pvt), rsp, sizeof(*rsp));
	b->rsp_prod_pvt++;
	/*
	 * Published at once so that a spinning guest sees it; only the bell
	 * waits for the last of a batch.  The need for it is remembered: a
	 * later push in the batch may no longer cross rsp_event.
	 */
	RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(b, notify);
	l->bell_owed |= notify;
	if (more || !l->bell_owed)
		return 0;
	l->bell_owed = 0;
	return xd_ring_bell(l->rsp_efd);
}

/*
 * With the arena at the guest's own address, a device address of pinned
 * arena memory is the guest's host address too, as under CUDA's unified
 * addressing.
 */
static int xd_local_arena_at(struct xd_chan *c, uint64_t addr)
{
	struct xd_local *l = c->priv;
	void *p;
	int ret;

	if (l->moved)
		return -EINVAL;
	ret = xd_shm_map_at(l->memfd, (off_t)l->ring_bytes, c->arena_size,
			    addr, &p);
	if (ret)
		return ret;
	munmap(c->arena, c->arena_size);
	c->arena = p;
	l->moved = p;
	return 0;
}

static void xd_local_close(struct xd_chan *c)
{
	struct xd_local *l = c->priv;

	if (!l)
		return;
	if (l->moved) {
		munmap(l->base, l->ring_bytes);
		munmap(l->moved, c->arena_size);
	} else {
		munmap(l->base, l->map_size);
	}
	if (l->memfd >= 0)
		close(l->memfd);
	close(l->req_efd);
	close(l->rsp_efd);
	close(l->sock);
	free(l);
	memset(c, 0, sizeof(*c));
}

static const struct xd_chan_ops xd_local_ops = {
	.name = "local",
	.next = xd_local_next,
	.reply = xd_local_reply,
	.arena_at = xd_local_arena_at,
	.close = xd_local_close,
};

/* ------------------------------------------------------------------ */
/* Handshake.                                                         */

/*
 * Reads exactly one hello within XD_LOCAL_HELLO_MS in all (a deadline, not
 * a per-read timeout, so a guest cannot drip bytes forever).  Descriptors
 * a guest might attach are dropped by the kernel: we pass no control
 * buffer.
 */
static int xd_recv_hello(int fd, struct xcuda_local_hello *h)
{
	uint64_t deadline = xd_deadline(XD_LOCAL_HELLO_MS);
	size_t got = 0;
	ssize_t r;

	while (got < sizeof(*h)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		r = poll(&p, 1, xd_poll_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -ETIMEDOUT;
		r = recv(fd, (char *)h + got, sizeof(*h) - got, MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (!r)
			return -EPIPE;
		got += (size_t)r;
	}
	return 0;
}

/* Validates the hello and lowers it to @lim; 0 or the status to answer. */
static int xd_check_hello(struct xcuda_local_hello *h,
			  const struct xd_local_limits *lim)
{
	uint64_t max_arena = XCUDA_LOCAL_ARENA_MAX;
	unsigned int max_order = XCUDA_MAX_RING_ORDER;

	if (lim && lim->max_arena && lim->max_arena < max_arena)
		max_arena = lim->max_arena;
	if (lim && lim->max_ring_order < max_order)
		max_order = lim->max_ring_order;

	if (h->magic != XCUDA_LOCAL_MAGIC)
		return -EPROTO;
	if (h->version != XCUDA_LOCAL_VERSION)
		return -EPROTONOSUPPORT;
	/* Orders past 31 are not a wish we could lower, just garbage. */
	if (h->rsvd || h->ring_order > 31 || !h->arena_size ||
	    h->arena_size > XCUDA_LOCAL_ARENA_MAX)
		return -EINVAL;
	if (h->ring_order > max_order)
		h->ring_order = max_order;
	if (h->arena_size > max_arena)
		h->arena_size = max_arena;
	/* Whole pages: the guest maps it, and so do we. */
	h->arena_size &= ~(uint64_t)(XCUDA_PAGE_SIZE - 1);
	if (!h->arena_size)
		return -EINVAL;
	if (h->arena_size > SIZE_MAX - (XCUDA_PAGE_SIZE << h->ring_order))
		return -ENOMEM;
	return 0;
}

/* One message: the welcome, with the descriptors when @nfds is not 0. */
static int xd_send_welcome(int fd, const struct xcuda_local_welcome *w,
			   const int *fds, unsigned int nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 3)];
	} ctl;
	struct iovec iov = { .iov_base = (void *)w, .iov_len = sizeof(*w) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (nfds) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do
		r = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	/* 40 bytes into an empty socket buffer do not split. */
	return (size_t)r == sizeof(*w) ? 0 : -EIO;
}

/* The shared memory: sized, sealed, mapped, ring initialised. */
static int xd_make_shm(struct xd_local *l, size_t ring_bytes, uint64_t arena,
		       int *memfd)
{
	int fd, err;

	fd = memfd_create("xcuda-session", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	l->map_size = ring_bytes + arena;
	if (ftruncate(fd, (off_t)l->map_size) < 0 ||
	    fcntl(fd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	l->base = mmap(NULL, l->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	if (l->base == MAP_FAILED)
		goto fail;
	/* Before the guest has the memfd: it never sees the ring unset. */
	SHARED_RING_INIT((xcuda_sring_t *)l->base);
	BACK_RING_INIT(&l->back, (xcuda_sring_t *)l->base, ring_bytes);
	*memfd = fd;
	return 0;
fail:
	err = -errno;
	l->base = NULL;
	close(fd);
	return err;
}

int xd_local_accept(int conn_fd, struct xd_chan *c,
		    const struct xd_local_limits *lim, uint32_t session_id)
{
	struct xcuda_local_welcome w = {
		.magic = XCUDA_LOCAL_MAGIC,
		.version = XCUDA_LOCAL_VERSION,
	};
	struct xcuda_local_hello h;
	struct xd_local *l = NULL;
	int fds[3] = { -1, -1, -1 };
	size_t ring_bytes = 0;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = xd_recv_hello(conn_fd, &h);
	if (ret)
		return ret;	/* no one to answer */
	ret = xd_check_hello(&h, lim);
	if (ret)
		goto refuse;

	l = calloc(1, sizeof(*l));
	if (!l) {
		ret = -ENOMEM;
		goto refuse;
	}
	l->sock = conn_fd;
	l->req_efd = l->rsp_efd = l->memfd = -1;
	ring_bytes = (size_t)XCUDA_PAGE_SIZE << h.ring_order;
	l->ring_bytes = ring_bytes;
	ret = xd_make_shm(l, ring_bytes, h.arena_size, &fds[0]);
	if (ret)
		goto refuse;
	l->req_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->rsp_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->req_efd < 0 || l->rsp_efd < 0 ||
	    fcntl(conn_fd, F_SETFD, FD_CLOEXEC) < 0) {
		ret = -errno;
		goto refuse;
	}
	fds[1] = l->req_efd;
	fds[2] = l->rsp_efd;

	w.ring_order = h.ring_order;
	w.arena_size = h.arena_size;
	w.session = session_id;
	ret = xd_send_welcome(conn_fd, &w, fds, 3);
	if (ret)
		goto fail;
	l->memfd = fds[0];

	l->spin_ns = xd_spin_ns();
	c->ops = &xd_local_ops;
	c->arena = (uint8_t *)l->base + ring_bytes;
	c->arena_size = h.arena_size;
	c->session = session_id;
	c->priv = l;
	return 0;

refuse:
	w.status = ret;
	xd_send_welcome(conn_fd, &w, NULL, 0);	/* best effort */
fail:
	if (l) {
		if (l->base)
			munmap(l->base, l->map_size);
		if (l->req_efd >= 0)
			close(l->req_efd);
		if (l->rsp_efd >= 0)
			close(l->rsp_efd);
		free(l);
	}
	if (fds[0] >= 0)
		close(fds[0]);
	return ret;
}
