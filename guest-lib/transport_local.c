// SPDX-License-Identifier: MIT
/*
 * The guest end of the `local` transport (see xcuda/local.h): the front
 * half of the xcuda ring in a memfd shared with the session's worker, two
 * eventfd doorbells, and the handshake socket kept open to notice the
 * worker going away.
 *
 * The ring, its waiting and doorbells are ring_front.c's, which the `xen`
 * transport shares: the worker is not trusted there, and here it must
 * also seal the memfd it sends, and may not send more than it should.
 *
 * The hello carries one end of a socket pair, the descriptor channel over
 * which cudaHostRegister hands memfds to the worker (xcuda/local.h).  An
 * older worker drops it unread; we see our end hang up and do without.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "common/env.h"
#include "common/fdpass.h"
#include "common/ring_wait.h"
#include "ring_front.h"
#include "transport.h"
#include "xcuda/local.h"

#define XC_LOCAL_RING_ORDER	4
#define XC_LOCAL_ARENA		(1ull << 30)
/* The daemon forks a worker before it answers; give it time. */
#define XC_LOCAL_HANDSHAKE_MS	30000
/* Room for a worker that sends more descriptors than it should. */
#define XC_LOCAL_MAX_FDS	16

struct xc_local {
	struct xc_ring ring;
	void *base;		/* ring, then arena */
	size_t map_size;
	int chan;		/* the descriptor channel, or -1 */
};

/* ------------------------------------------------------------------ */
/* Ring operations: ring_front.c's.                                   */

static int xc_local_submit(struct xc_transport *t,
			   const struct xcuda_request *reqs, unsigned int n)
{
	struct xc_local *l = t->priv;

	return xc_ring_submit(&l->ring, reqs, n);
}

static int xc_local_receive(struct xc_transport *t,
			    struct xcuda_response *out, unsigned int max,
			    int timeout_ms)
{
	struct xc_local *l = t->priv;

	return xc_ring_receive(&l->ring, out, max, timeout_ms, t->expect_ns);
}

static void xc_local_close(struct xc_transport *t)
{
	struct xc_local *l = t->priv;

	if (!l)
		return;
	munmap(l->base, l->map_size);
	xr_end_close(&l->ring.end);
	if (l->chan >= 0)
		close(l->chan);
	free(l);
	memset(t, 0, sizeof(*t));
}

/* ------------------------------------------------------------------ */
/* Handshake.                                                         */

static int xc_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int xc_local_send_fd(struct xc_transport *t, int fd, uint32_t tag)
{
	struct xcuda_local_fd m = { XCUDA_LOCAL_FD_MAGIC, tag };
	struct xc_local *l = t->priv;
	ssize_t r;

	if (l->chan < 0)
		return -ENOTCONN;
	if (fd < 0)
		return 0;	/* only asked whether there is a channel */
	/* A worker that reads nothing must not make us wait. */
	r = xcuda_send_fds(l->chan, &m, sizeof(m), &fd, 1, MSG_DONTWAIT);
	if (r < 0)
		return (int)r;
	return r == sizeof(m) ? 0 : -EIO;
}

static int xc_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t r;

	while (len) {
		r = send(fd, p, len, MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/*
 * Reads the welcome and every descriptor that rides with it (all of them,
 * so that none leaks whatever the worker sends).  Returns 0, or a negative
 * errno with every received descriptor closed.
 */
static int xc_recv_welcome(int sock, struct xcuda_local_welcome *w,
			   int *fds, int *nfds, uint64_t deadline)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * XC_LOCAL_MAX_FDS)];
	} ctl;
	size_t got = 0;
	int err = 0;

	*nfds = 0;
	while (got < sizeof(*w)) {
		struct iovec iov = {
			.iov_base = (char *)w + got,
			.iov_len = sizeof(*w) - got,
		};
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.buf,
			.msg_controllen = sizeof(ctl.buf),
		};
		struct pollfd p = { .fd = sock, .events = POLLIN };
		ssize_t r;

		r = poll(&p, 1, xr_poll_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r ? -errno : -ETIMEDOUT;
			break;
		}
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			err = -errno;
			break;
		}
		/* Every descriptor is taken (or closed): none may leak. */
		if (xcuda_take_fds(&mh, fds, nfds, XC_LOCAL_MAX_FDS))
			err = -EPROTO;
		if (err)
			break;
		if (!r) {
			err = -EPIPE;	/* the daemon closed on us */
			break;
		}
		got += (size_t)r;
	}
	if (err) {
		for (int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
	}
	return err;
}

/* What the guest asks for: options, then environment, then defaults. */
static int xc_local_params(const struct xc_transport_opts *o,
			   const char **path, unsigned int *order,
			   uint64_t *arena, uint64_t *spin_ns)
{
	unsigned long long v;
	int r;

	*path = o && o->path ? o->path : getenv(XCUDA_LOCAL_SOCKET_ENV);
	if (!*path || !**path)
		*path = XCUDA_LOCAL_SOCKET_DEFAULT;

	if (o && o->ring_order) {
		if (o->ring_order > XCUDA_MAX_RING_ORDER)
			return -EINVAL;
		*order = o->ring_order;
	} else {
		v = XC_LOCAL_RING_ORDER;
		r = xcuda_env_uint("XCUDA_RING_ORDER", XCUDA_MAX_RING_ORDER,
				   &v);
		if (r < 0)
			return r;
		*order = (unsigned int)v;
	}

	if (o && o->arena_size) {
		if (o->arena_size > XCUDA_LOCAL_ARENA_MAX)
			return -EINVAL;
		/* Round up: the arena is mapped, and offsets page aligned. */
		*arena = (o->arena_size + XCUDA_PAGE_SIZE - 1) &
			 ~(uint64_t)(XCUDA_PAGE_SIZE - 1);
	} else {
		v = XC_LOCAL_ARENA >> 20;
		r = xcuda_env_uint("XCUDA_ARENA_MB",
				   XCUDA_LOCAL_ARENA_MAX >> 20, &v);
		if (r < 0 || !v)
			return -EINVAL;
		*arena = (uint64_t)v << 20;
	}

	return xr_spin_env(XC_RING_SPIN_US, spin_ns);
}

/* Checks the welcome against the hello; 0 if the session can start. */
static int xc_check_welcome(const struct xcuda_local_welcome *w,
			    const struct xcuda_local_hello *h, int nfds)
{
	if (w->magic != XCUDA_LOCAL_MAGIC || w->version != XCUDA_LOCAL_VERSION)
		return -EPROTO;
	if (w->status) {
		if (w->status > 0 || w->status < -4095 || nfds)
			return -EPROTO;
		return w->status;
	}
	if (nfds != 3 || w->rsvd)
		return -EPROTO;
	if (w->ring_order > h->ring_order || !w->arena_size ||
	    w->arena_size > h->arena_size ||
	    (w->arena_size & (XCUDA_PAGE_SIZE - 1)))
		return -EPROTO;
	if (w->arena_size > SIZE_MAX - (XCUDA_PAGE_SIZE << w->ring_order))
		return -EOVERFLOW;
	return 0;
}

/* The memfd must be big enough and sealed so that it cannot shrink. */
static int xc_check_memfd(int fd, size_t size)
{
	struct stat st;
	int seals;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uint64_t)st.st_size < size)
		return -EPROTO;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return -EPROTO;
	return 0;
}

/* Ours are shared file descriptions, but do not trust the worker to. */
static int xc_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* What a session gets once the handshake is through. */
static const struct xc_transport_ops xc_local_ops = {
	.name = "local",
	.submit = xc_local_submit,
	.receive = xc_local_receive,
	.close = xc_local_close,
	.send_fd = xc_local_send_fd,
};

int xc_local_open(struct xc_transport *t, const struct xc_transport_opts *o)
{
	struct xcuda_local_hello hello = {
		.magic = XCUDA_LOCAL_MAGIC,
		.version = XCUDA_LOCAL_VERSION,
	};
	struct xcuda_local_welcome w;
	int fds[XC_LOCAL_MAX_FDS], nfds = 0, sock, ret, i, chan[2];
	struct pollfd pc;
	ssize_t sent;
	uint64_t spin_ns, arena;
	size_t ring_bytes, map_size;
	struct xc_local *l;
	const char *path;
	void *base;

	memset(t, 0, sizeof(*t));
	ret = xc_local_params(o, &path, &hello.ring_order, &arena, &spin_ns);
	if (ret)
		return ret;
	hello.arena_size = arena;

	sock = xc_connect(path);
	if (sock < 0)
		return sock;
	/* Without a channel, cudaHostRegister only records its ranges. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0) {
		chan[0] = chan[1] = -1;
		ret = xc_send_all(sock, &hello, sizeof(hello));
	} else {
		sent = xcuda_send_fds(sock, &hello, sizeof(hello), &chan[1], 1,
				      0);
		close(chan[1]);
		ret = sent < 0 ? (int)sent :
		      xc_send_all(sock, (char *)&hello + sent,
				  sizeof(hello) - (size_t)sent);
	}
	if (!ret)
		ret = xc_recv_welcome(sock, &w, fds, &nfds,
				      xr_deadline(XC_LOCAL_HANDSHAKE_MS));
	if (!ret)
		ret = xc_check_welcome(&w, &hello, nfds);
	if (ret)
		goto fail;

	ring_bytes = (size_t)XCUDA_PAGE_SIZE << w.ring_order;
	ret = xc_check_memfd(fds[0], ring_bytes + w.arena_size);
	if (!ret)
		ret = xc_nonblock(fds[1]);
	if (!ret)
		ret = xc_nonblock(fds[2]);
	if (ret)
		goto fail;

	map_size = ring_bytes + w.arena_size;
	base = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fds[0], 0);
	if (base == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	close(fds[0]);	/* the mapping keeps the memory */
	fds[0] = -1;

	ret = -ENOMEM;
	l = calloc(1, sizeof(*l));
	if (!l)
		goto fail_unmap;
	ret = xc_ring_attach(&l->ring, base, ring_bytes);
	if (ret) {
		free(l);
		goto fail_unmap;
	}

	l->base = base;
	l->map_size = map_size;
	l->ring.end.sock = sock;
	l->ring.end.peer_bell = fds[1];
	l->ring.end.bell = fds[2];
	l->ring.end.spin_ns = spin_ns;
	/* A worker that did not keep the channel closed its end unread. */
	l->chan = chan[0];
	pc = (struct pollfd){ .fd = chan[0], .events = POLLIN };
	if (chan[0] >= 0 && poll(&pc, 1, 0) != 0) {
		close(chan[0]);
		l->chan = -1;
	}
	t->ops = &xc_local_ops;
	t->arena = (uint8_t *)base + ring_bytes;
	t->arena_size = w.arena_size;
	t->session = w.session;
	t->ring_slots = xc_ring_slots(&l->ring);
	t->flags = XC_TRANSPORT_SHARED_FUTEX;
	t->stats = &l->ring.end.stats;
	t->priv = l;
	return 0;

fail_unmap:
	munmap(base, map_size);
fail:
	for (i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (chan[0] >= 0)
		close(chan[0]);
	close(sock);
	return ret;
}
