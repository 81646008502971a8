// SPDX-License-Identifier: MIT
/*
 * The worker end of the `local` transport (see xcuda/local.h): the back
 * half of the xcuda ring in a memfd the worker creates and shares with one
 * guest process, two eventfd doorbells, and the handshake socket kept open
 * to notice the guest going away.
 *
 * Waiting and doorbells are common/ring_wait.h's: req_event before we
 * sleep, rsp_event checked after we answer, so no wake-up is lost and no
 * bell rings while the guest spins.
 *
 * The guest is not trusted: req_prod is read once per look and checked
 * before any slot is, requests are copied out before anyone reads them,
 * and the memfd is sealed so that the guest cannot shrink it under us.
 *
 * The hello may carry the guest's end of a descriptor channel (a unix
 * SOCK_SEQPACKET socket): HOST_REGISTER's memfds come over it, and we
 * read it only from that command's handler (take_fd), never while we
 * sleep, so its messages cannot race the ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "common/fdpass.h"
#include "common/ring_wait.h"
#include "ipc_table.h"
#include "shm.h"
#include "transport_local.h"
#include "xcuda/local.h"

#define XD_LOCAL_HELLO_MS	5000
/* Room for descriptors a guest attaches beyond the one we take. */
#define XD_LOCAL_MAX_FDS	4
/* Stale descriptor messages take_fd drops, at most, looking for its own. */
#define XD_LOCAL_FD_SKIP	64
/* Waiting for the next request: the guest's next call is usually quick. */
#define XD_LOCAL_SPIN_US	20

struct xd_local {
	xcuda_back_ring_t back;
	RING_IDX req_prod;	/* guest's req_prod, last read and checked */
	/* bell: requests are waiting; peer_bell: responses are */
	struct xr_end end;
	void *base;		/* ring, then arena */
	size_t map_size;
	size_t ring_bytes;
	int memfd;		/* kept to map the arena again (arena_at) */
	void *moved;		/* the arena's own mapping once moved */
	int chan;		/* the descriptor channel, or -1 */
};

/* ------------------------------------------------------------------ */
/* Ring operations.                                                   */

/*
 * Copies the next request out, if there is one: 1, 0 or -EPROTO.  The
 * guest's req_prod is read once, and only when everything up to the last
 * value read has been taken.  It may not claim more than a ring's worth
 * of requests beyond our answers, nor fall behind what we have taken.
 */
static int xd_take(void *ctx, void *out, unsigned int max)
{
	struct xcuda_request *req = out;
	struct xd_local *l = ctx;
	xcuda_back_ring_t *b = &l->back;

	(void)max;	/* one at a time: the worker answers each in turn */

	if (l->end.broken)
		return -EPROTO;
	if (b->req_cons == l->req_prod) {
		RING_IDX rp;

		rp = __atomic_load_n(&b->sring->req_prod, __ATOMIC_RELAXED);
		xen_rmb();	/* slots only after the index covering them */
		if (RING_REQUEST_PROD_OVERFLOW(b, rp) ||
		    rp - b->rsp_prod_pvt < b->req_cons - b->rsp_prod_pvt) {
			l->end.broken = 1;
			return -EPROTO;
		}
		l->req_prod = rp;
		if (rp == b->req_cons)
			return 0;
	}
	RING_COPY_REQUEST(b, b->req_cons, req);
	b->req_cons++;
	return 1;
}

static int xd_local_next(struct xd_chan *c, struct xcuda_request *out,
			 int timeout_ms)
{
	struct xd_local *l = c->priv;
	struct xr_wait w = { .timeout_ms = timeout_ms,
			     .spin_ns = l->end.spin_ns };

	/* Answers held back by @more are rung for before we nap. */
	return xr_consume(&l->end, &w, xd_take, l, out, 1);
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

	if (l->end.broken)
		return -EPROTO;
	if (b->rsp_prod_pvt == b->req_cons)
		return -EINVAL;
	memcpy(RING_GET_RESPONSE(b, b->rsp_prod_pvt), rsp, sizeof(*rsp));
	b->rsp_prod_pvt++;
	/* Published at once so that a spinning guest sees it. */
	return xr_end_push(&l->end, b->rsp_prod_pvt, more);
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
	if (l->chan >= 0)
		close(l->chan);
	xr_end_close(&l->end);
	free(l);
	memset(c, 0, sizeof(*c));
}

static void xd_close_fds(const int *fds, int n)
{
	while (n-- > 0)
		close(fds[n]);
}

static int xd_local_take_fd(struct xd_chan *c, uint32_t tag)
{
	struct xd_local *l = c->priv;
	int tries;

	if (l->chan < 0)
		return -ENOTCONN;
	for (tries = 0; tries < XD_LOCAL_FD_SKIP; tries++) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int) * XD_LOCAL_MAX_FDS)];
		} ctl;
		struct xcuda_local_fd m;
		struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.buf,
			.msg_controllen = sizeof(ctl.buf),
		};
		int fds[XD_LOCAL_MAX_FDS], n = 0, bad;
		ssize_t r;

		r = recvmsg(l->chan, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ENOENT : -errno;
		}
		bad = xcuda_take_fds(&mh, fds, &n, XD_LOCAL_MAX_FDS);
		if (!r && !n)
			return -EPIPE;	/* the guest closed its end */
		/* Exactly our message, whole, with one descriptor. */
		if (!bad && n == 1 && r == (ssize_t)sizeof(m) &&
		    !(mh.msg_flags & MSG_TRUNC) &&
		    m.magic == XCUDA_LOCAL_FD_MAGIC && tag && m.tag == tag)
			return fds[0];
		xd_close_fds(fds, n);
	}
	return -ENOENT;
}

/* The handshake socket hangs up (or reads) only once the guest has gone. */
static int xd_local_peer_gone(struct xd_chan *c)
{
	struct xd_local *l = c->priv;
	struct pollfd p = { .fd = l->end.sock, .events = POLLIN | POLLRDHUP };

	return poll(&p, 1, 0) > 0 && p.revents;
}

static const struct xd_chan_ops xd_local_ops = {
	.name = "local",
	.next = xd_local_next,
	.reply = xd_local_reply,
	.arena_at = xd_local_arena_at,
	.close = xd_local_close,
	.take_fd = xd_local_take_fd,
	.peer_gone = xd_local_peer_gone,
};

/* ------------------------------------------------------------------ */
/* Handshake.                                                         */

/*
 * Reads exactly one hello within XD_LOCAL_HELLO_MS in all (a deadline, not
 * a per-read timeout, so a guest cannot drip bytes forever), and the
 * descriptors that came with it: *@chan is the first (or -1), *@extra is
 * set when there were more or they did not fit (those are closed).  On
 * failure nothing stays open.
 */
static int xd_recv_hello(int fd, struct xcuda_local_hello *h, int *chan,
			 int *extra)
{
	uint64_t deadline = xr_deadline(XD_LOCAL_HELLO_MS);
	int fds[1], n = 0, ret = 0;
	size_t got = 0;
	ssize_t r;

	*extra = 0;
	while (got < sizeof(*h)) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int) * XD_LOCAL_MAX_FDS)];
		} ctl;
		struct iovec iov = {
			.iov_base = (char *)h + got,
			.iov_len = sizeof(*h) - got,
		};
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.buf,
			.msg_controllen = sizeof(ctl.buf),
		};
		struct pollfd p = { .fd = fd, .events = POLLIN };

		r = poll(&p, 1, xr_poll_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ret = r ? -errno : -ETIMEDOUT;
			break;
		}
		r = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			ret = -errno;
			break;
		}
		if (xcuda_take_fds(&mh, fds, &n, 1))
			*extra = 1;
		if (!r) {
			ret = -EPIPE;
			break;
		}
		got += (size_t)r;
	}
	if (ret) {
		xd_close_fds(fds, n);
		n = 0;
	}
	*chan = n ? fds[0] : -1;
	return ret;
}

/* The channel must be the guest's end of a unix SOCK_SEQPACKET pair. */
static int xd_check_chan(int fd)
{
	int type = 0, domain = 0;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_SEQPACKET)
		return -EINVAL;
	len = sizeof(domain);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
	    domain != AF_UNIX)
		return -EINVAL;
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
	ssize_t r = xcuda_send_fds(fd, w, sizeof(*w), fds, nfds, 0);

	if (r < 0)
		return (int)r;
	/* 40 bytes into an empty socket buffer do not split. */
	return (size_t)r == sizeof(*w) ? 0 : -EIO;
}

/* The shared memory: sized, sealed, mapped, ring initialised. */
static int xd_make_shm(struct xd_local *l, size_t ring_bytes, uint64_t arena,
		       int *memfd)
{
	xcuda_sring_t *sr;
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
	sr = l->base;
	SHARED_RING_INIT(sr);
	BACK_RING_INIT(&l->back, sr, ring_bytes);
	xr_end_ring(&l->end, &sr->req_prod, &sr->req_event, &l->back.req_cons,
		    &sr->rsp_prod, &sr->rsp_event);
	*memfd = fd;
	return 0;
fail:
	err = -errno;
	l->base = NULL;
	close(fd);
	return err;
}

/* The kernel's word for who connected: the peer's uid at connect(). */
static uint64_t xd_peer_domain(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
	    len != sizeof(cr))
		return 0;
	return XD_DOMAIN_LOCAL | (uint32_t)cr.uid;
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
	int ret, chan, extra;

	memset(c, 0, sizeof(*c));
	ret = xd_recv_hello(conn_fd, &h, &chan, &extra);
	if (ret)
		return ret;	/* no one to answer */
	ret = xd_check_hello(&h, lim);
	if (!ret && (extra || (chan >= 0 && xd_check_chan(chan))))
		ret = -EINVAL;
	if (ret)
		goto refuse;

	l = calloc(1, sizeof(*l));
	if (!l) {
		ret = -ENOMEM;
		goto refuse;
	}
	l->end.sock = conn_fd;
	l->end.bell = l->end.peer_bell = l->memfd = -1;
	l->chan = chan;
	chan = -1;	/* l's now */
	ring_bytes = (size_t)XCUDA_PAGE_SIZE << h.ring_order;
	l->ring_bytes = ring_bytes;
	ret = xd_make_shm(l, ring_bytes, h.arena_size, &fds[0]);
	if (ret)
		goto refuse;
	l->end.bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->end.peer_bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->end.bell < 0 || l->end.peer_bell < 0 ||
	    fcntl(conn_fd, F_SETFD, FD_CLOEXEC) < 0) {
		ret = -errno;
		goto refuse;
	}
	fds[1] = l->end.bell;		/* the guest's request doorbell */
	fds[2] = l->end.peer_bell;	/* its response doorbell */

	w.ring_order = h.ring_order;
	w.arena_size = h.arena_size;
	w.session = session_id;
	ret = xd_send_welcome(conn_fd, &w, fds, 3);
	if (ret)
		goto fail;
	l->memfd = fds[0];

	/* Over nonsense the worker takes the default: it has no one to tell. */
	(void)xr_spin_env(XD_LOCAL_SPIN_US, &l->end.spin_ns);
	c->ops = &xd_local_ops;
	c->arena = (uint8_t *)l->base + ring_bytes;
	c->arena_size = h.arena_size;
	c->session = session_id;
	c->domain = xd_peer_domain(conn_fd);
	c->flags = XD_CHAN_SHARED_FUTEX;
	c->priv = l;
	return 0;

refuse:
	w.status = ret;
	xd_send_welcome(conn_fd, &w, NULL, 0);	/* best effort */
fail:
	if (l) {
		if (l->base)
			munmap(l->base, l->map_size);
		if (l->end.bell >= 0)
			close(l->end.bell);
		if (l->end.peer_bell >= 0)
			close(l->end.peer_bell);
		if (l->chan >= 0)
			close(l->chan);
		free(l);
	}
	if (chan >= 0)
		close(chan);
	if (fds[0] >= 0)
		close(fds[0]);
	return ret;
}
