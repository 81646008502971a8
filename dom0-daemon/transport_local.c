// SPDX-License-Identifier: MIT
/*
 * The worker end of the `local` transport (see xcuda/local.h): the back
 * half of the xcuda ring in a memfd the worker creates and shares with one
 * guest process, two eventfd doorbells, and the handshake socket kept open
 * to notice the guest going away.
 *
 * The ring, its waiting and doorbells are ring_back.c's, and the shared
 * memory shm.c's, which the `xen` transport shares: the guest is not
 * trusted there, and the memfd is sealed so that the guest cannot shrink
 * it under us.
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
#include <sys/socket.h>

#include "common/fdpass.h"
#include "common/ring_wait.h"
#include "ipc_table.h"
#include "ring_back.h"
#include "shm.h"
#include "transport_local.h"
#include "xcuda/local.h"

#define XD_LOCAL_HELLO_MS	5000
/* Room for descriptors a guest attaches beyond the one we take. */
#define XD_LOCAL_MAX_FDS	4
/* Stale descriptor messages take_fd drops, at most, looking for its own. */
#define XD_LOCAL_FD_SKIP	64

struct xd_local {
	struct xd_ring ring;	/* end.sock: the handshake socket */
	struct xd_shm shm;	/* ring, then arena */
	int chan;		/* the descriptor channel, or -1 */
};

/* ------------------------------------------------------------------ */
/* Ring operations: ring_back.c's.                                    */

static int xd_local_next(struct xd_chan *c, struct xcuda_request *out,
			 int timeout_ms)
{
	struct xd_local *l = c->priv;

	return xd_ring_next(&l->ring, out, timeout_ms);
}

static int xd_local_spin(struct xd_chan *c, uint64_t until_ns)
{
	struct xd_local *l = c->priv;

	return xd_ring_spin(&l->ring, until_ns);
}

static int xd_local_reply(struct xd_chan *c, const struct xcuda_response *rsp,
			  int more)
{
	struct xd_local *l = c->priv;

	return xd_ring_reply(&l->ring, rsp, more);
}

static void xd_local_counters(struct xd_chan *c, char *buf, size_t len)
{
	struct xd_local *l = c->priv;

	xd_ring_counters(&l->ring, buf, len);
}

/*
 * With the arena at the guest's own address, a device address of pinned
 * arena memory is the guest's host address too, as under CUDA's unified
 * addressing.
 */
static int xd_local_arena_at(struct xd_chan *c, uint64_t addr)
{
	struct xd_local *l = c->priv;

	return xd_shm_arena_at(&l->shm, addr, &c->arena);
}

static void xd_local_close(struct xd_chan *c)
{
	struct xd_local *l = c->priv;

	if (!l)
		return;
	xd_shm_destroy(&l->shm);
	if (l->chan >= 0)
		close(l->chan);
	xr_end_close(&l->ring.end);
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

/*
 * The socket hangs up only once the guest has gone.  A message waiting
 * on it is no sign: the guest sends descriptors there (take_fd).
 */
static int xd_local_peer_gone(struct xd_chan *c)
{
	struct xd_local *l = c->priv;
	struct pollfd p = { .fd = l->ring.end.sock, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL));
}

static const struct xd_chan_ops xd_local_ops = {
	.name = "local",
	.next = xd_local_next,
	.spin = xd_local_spin,
	.reply = xd_local_reply,
	.arena_at = xd_local_arena_at,
	.close = xd_local_close,
	.take_fd = xd_local_take_fd,
	.peer_gone = xd_local_peer_gone,
	.counters = xd_local_counters,
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
	int fds[3];
	size_t ring_bytes;
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
	l->shm.memfd = -1;
	l->ring.end.sock = conn_fd;
	l->ring.end.bell = l->ring.end.peer_bell = -1;
	l->chan = chan;
	chan = -1;	/* l's now */
	ring_bytes = (size_t)XCUDA_PAGE_SIZE << h.ring_order;
	ret = xd_shm_create(&l->shm, "xcuda-session", ring_bytes,
			    h.arena_size);
	if (ret)
		goto refuse;
	/* Before the guest has the memfd: it never sees the ring unset. */
	xd_ring_init(&l->ring, (xcuda_sring_t *)l->shm.base, ring_bytes);
	ret = xr_end_bells(&l->ring.end);
	if (!ret && fcntl(conn_fd, F_SETFD, FD_CLOEXEC) < 0)
		ret = -errno;
	if (ret)
		goto refuse;
	fds[0] = l->shm.memfd;
	fds[1] = l->ring.end.bell;	/* the guest's request doorbell */
	fds[2] = l->ring.end.peer_bell;	/* its response doorbell */

	w.ring_order = h.ring_order;
	w.arena_size = h.arena_size;
	w.session = session_id;
	ret = xd_send_welcome(conn_fd, &w, fds, 3);
	if (ret)
		goto fail;

	c->ops = &xd_local_ops;
	c->arena = xd_shm_arena(&l->shm);
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
		xd_shm_destroy(&l->shm);
		if (l->ring.end.bell >= 0)
			close(l->ring.end.bell);
		if (l->ring.end.peer_bell >= 0)
			close(l->ring.end.peer_bell);
		if (l->chan >= 0)
			close(l->chan);
		free(l);
	}
	if (chan >= 0)
		close(chan);
	return ret;
}
