// SPDX-License-Identifier: MIT
/*
 * The descriptor broker (fd_broker.h).  The parent keeps a small array of
 * descriptors; requests and answers are one datagram each, a descriptor
 * riding along as SCM_RIGHTS.  A worker is trusted with its own domain,
 * as for the IPC table: the transport told it, not the guest.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "fd_broker.h"
#include "log.h"

enum { XD_BROKER_PUT = 1, XD_BROKER_GET = 2 };

/* How long a worker waits for the parent, which never blocks. */
#define XD_BROKER_WAIT_MS	5000

struct xd_broker_req {
	uint32_t op;
	uint32_t rsvd;
	uint64_t domain;
	uint8_t token[XD_BROKER_TOKEN];
};

struct xd_broker_ans {
	int32_t status;
	uint32_t rsvd;
};

struct xd_broker_slot {
	int used;
	int fd;
	uint32_t session;
	uint64_t domain;
	uint8_t token[XD_BROKER_TOKEN];
};

static struct xd_broker_slot xd_slots[XD_BROKER_SLOTS];
static unsigned int xd_used;

/* Sends @len bytes with @fd attached unless it is negative. */
static int xd_send_fd(int chan, const void *p, size_t len, int fd, int flags)
{
	ssize_t r = xcuda_send_fds(chan, p, len, &fd, fd >= 0, flags);

	return r == (ssize_t)len ? 0 : -EPIPE;
}

/*
 * Receives one datagram into @p; *@fd gets the descriptor it carried, or
 * -1.  Returns its length, 0 at the end, or -errno: -EMSGSIZE when it
 * was cut short or carried more than one descriptor (those closed).
 */
static ssize_t xd_recv_fd(int chan, void *p, size_t len, int *fd, int flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { p, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	int n = 0, more;
	ssize_t r;

	*fd = -1;
	memset(&ctl, 0, sizeof(ctl));
	m.msg_control = ctl.buf;
	m.msg_controllen = sizeof(ctl.buf);
	r = recvmsg(chan, &m, flags | MSG_CMSG_CLOEXEC);
	if (r < 0)
		return -errno;
	more = xcuda_take_fds(&m, fd, &n, 1);
	if (more || (m.msg_flags & MSG_TRUNC))
		return -EMSGSIZE;
	return r;
}

static struct xd_broker_slot *xd_find(const uint8_t *token)
{
	unsigned int i;

	for (i = 0; i < XD_BROKER_SLOTS; i++)
		if (xd_slots[i].used &&
		    !memcmp(xd_slots[i].token, token, XD_BROKER_TOKEN))
			return &xd_slots[i];
	return NULL;
}

static int xd_put(const struct xd_broker_req *q, uint32_t session, int fd)
{
	struct xd_broker_slot *free_slot = NULL;
	unsigned int i, mine = 0;

	if (xd_find(q->token))
		return -EEXIST;
	for (i = 0; i < XD_BROKER_SLOTS; i++) {
		if (!xd_slots[i].used && !free_slot)
			free_slot = &xd_slots[i];
		else if (xd_slots[i].used && xd_slots[i].domain == q->domain)
			mine++;
	}
	if (mine >= XD_BROKER_PER_DOMAIN)
		return -EDQUOT;
	if (!free_slot)
		return -ENOSPC;
	free_slot->used = 1;
	free_slot->fd = fd;
	free_slot->session = session;
	free_slot->domain = q->domain;
	memcpy(free_slot->token, q->token, XD_BROKER_TOKEN);
	xd_used++;
	return 0;
}

int xd_broker_serve(int chan, uint32_t session)
{
	struct xd_broker_ans a = { 0, 0 };
	struct xd_broker_slot *sl;
	struct xd_broker_req q;
	int fd, give = -1;
	ssize_t n;

	n = xd_recv_fd(chan, &q, sizeof(q), &fd, MSG_DONTWAIT);
	if (n == -EAGAIN || n == -EINTR)
		return 0;
	if (n != (ssize_t)sizeof(q) || q.rsvd || !q.domain ||
	    (q.op == XD_BROKER_PUT) != (fd >= 0) ||
	    (q.op != XD_BROKER_PUT && q.op != XD_BROKER_GET)) {
		if (fd >= 0)
			close(fd);
		if (n)
			xd_log_ratelimited(XD_LOG_WARN, "session %08x: a bad "
					   "request to the descriptor broker",
					   session);
		return -1;
	}
	if (q.op == XD_BROKER_PUT) {
		a.status = xd_put(&q, session, fd);
		if (a.status)
			close(fd);
	} else {
		sl = xd_find(q.token);
		if (sl && sl->domain == q.domain)
			give = sl->fd;
		else
			a.status = -ENOENT;
	}
	/* The worker waits for this answer: its buffer has room. */
	return xd_send_fd(chan, &a, sizeof(a), give, MSG_DONTWAIT) ? -1 : 0;
}

void xd_broker_forget_session(uint32_t session)
{
	unsigned int i;

	for (i = 0; i < XD_BROKER_SLOTS; i++)
		if (xd_slots[i].used && xd_slots[i].session == session) {
			close(xd_slots[i].fd);
			memset(&xd_slots[i], 0, sizeof(xd_slots[i]));
			xd_used--;
		}
}

unsigned int xd_broker_live(void)
{
	return xd_used;
}

/* One request at a time per worker: answers come back in order. */
static pthread_mutex_t xd_ask_lock = PTHREAD_MUTEX_INITIALIZER;
static int xd_ask_broken;

static int xd_ask(int chan, int op, uint64_t domain, const uint8_t *token,
		  int fd_out, int *fd_in)
{
	struct pollfd p = { .fd = chan, .events = POLLIN };
	struct xd_broker_req q;
	struct xd_broker_ans a;
	int err, fd = -1;
	ssize_t n;

	if (chan < 0)
		return -EPIPE;
	memset(&q, 0, sizeof(q));
	q.op = op;
	q.domain = domain;
	memcpy(q.token, token, XD_BROKER_TOKEN);
	pthread_mutex_lock(&xd_ask_lock);
	err = xd_ask_broken ? -EPIPE :
	      xd_send_fd(chan, &q, sizeof(q), fd_out, 0);
	if (err)
		goto out;
	do
		n = poll(&p, 1, XD_BROKER_WAIT_MS);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		/* A late answer would be taken for the next one's. */
		xd_ask_broken = 1;
		err = -ETIMEDOUT;
		goto out;
	}
	n = xd_recv_fd(chan, &a, sizeof(a), &fd, 0);
	if (n != (ssize_t)sizeof(a) || a.rsvd || a.status > 0 ||
	    (op == XD_BROKER_GET && !a.status) != (fd >= 0)) {
		xd_ask_broken = 1;
		err = -EPIPE;
		goto out;
	}
	err = a.status;
	if (fd_in && !err) {
		*fd_in = fd;
		fd = -1;
	}
out:
	pthread_mutex_unlock(&xd_ask_lock);
	if (fd >= 0)
		close(fd);
	return err;
}

int xd_broker_put(int chan, uint64_t domain,
		  const uint8_t token[XD_BROKER_TOKEN], int fd)
{
	if (fd < 0)
		return -EBADF;
	return xd_ask(chan, XD_BROKER_PUT, domain, token, fd, NULL);
}

int xd_broker_get(int chan, uint64_t domain,
		  const uint8_t token[XD_BROKER_TOKEN])
{
	int fd = -1, err;

	err = xd_ask(chan, XD_BROKER_GET, domain, token, -1, &fd);
	return err ? err : fd;
}
