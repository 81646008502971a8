// SPDX-License-Identifier: MIT
/*
 * The `xen` transport in xcudad: the control file of /dev/xcuda-back,
 * where the backend announces guest processes that want a session, and
 * the worker's attached file, which hands it the session's requests (the
 * backend has already copied them out of the shared ring and checked
 * their framing) and takes its responses, in order.
 *
 * The arena is the worker's own memory: a memfd it maps, which
 * xcuda-back pins and grants to the guest.  Being ordinary memory of
 * this process, CUDA can register it for DMA like any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "common/ring_wait.h"
#include "shm.h"
#include "ipc_table.h"
#include "transport_xen.h"

/* Requests taken from the file per read(); handed out one by one. */
#define XD_XEN_BATCH	32

struct xd_xen {
	int fd;
	int memfd;
	int ended;		/* read() said the session is over */
	int moved;		/* the arena was mapped again (arena_at) */
	unsigned int have, next;
	struct xcuda_request batch[XD_XEN_BATCH];
};

static const char *xd_xen_path(const char *path)
{
	return path ? path : XD_XEN_DEVICE;
}

int xd_xen_control_open(const char *path)
{
	int fd = open(xd_xen_path(path), O_RDWR | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, XCUDA_BACK_IOC_CONTROL) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int xd_xen_next_event(int ctl, struct xcuda_back_event *ev)
{
	ssize_t r = xr_read(ctl, ev, sizeof(*ev));

	if (r == -EAGAIN)
		return 0;
	if (r < 0)
		return (int)r;
	/* The backend hands whole events; anything else is a broken one. */
	return r == (ssize_t)sizeof(*ev) ? 1 : -EPROTO;
}

int xd_xen_refuse(int ctl, uint64_t token, int err)
{
	struct xcuda_back_refuse r = { .token = token, .err = (__u32)err };

	return ioctl(ctl, XCUDA_BACK_IOC_REFUSE, &r) < 0 ? -errno : 0;
}

int xd_xen_attach(const char *path, uint64_t token)
{
	struct xcuda_back_attach a = { .token = token };
	/* Non-blocking: next() waits in poll(), with its timeout. */
	int fd = open(xd_xen_path(path), O_RDWR | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, XCUDA_BACK_IOC_ATTACH, &a) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Refills the batch: 1 with requests, 0 on timeout, or a negative errno. */
static int xd_xen_fill(struct xd_xen *x, int timeout_ms)
{
	ssize_t r = xr_read_wait(x->fd, x->batch, sizeof(x->batch), timeout_ms);

	if (r == -EAGAIN)
		return 0;	/* timed out */
	if (r < 0)
		return (int)r;
	if (r == 0) {
		x->ended = 1;
		return -EPIPE;
	}
	if (r % (ssize_t)sizeof(x->batch[0]))
		return -EPROTO;
	x->have = (unsigned int)(r / (ssize_t)sizeof(x->batch[0]));
	x->next = 0;
	return 1;
}

static int xd_xen_next(struct xd_chan *c, struct xcuda_request *req,
		       int timeout_ms)
{
	struct xd_xen *x = c->priv;
	int ret;

	if (x->next == x->have) {
		if (x->ended)
			return -EPIPE;
		ret = xd_xen_fill(x, timeout_ms);
		if (ret <= 0)
			return ret;
	}
	*req = x->batch[x->next++];
	return 1;
}

static int xd_xen_reply(struct xd_chan *c, const struct xcuda_response *rsp,
			int more)
{
	struct xd_xen *x = c->priv;
	ssize_t r;

	(void)more;
	do
		r = write(x->fd, rsp, sizeof(*rsp));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r == (ssize_t)sizeof(*rsp) ? 0 : -EIO;
}

/*
 * The same pages at the guest's address: the backend pinned the pages,
 * not the addresses, so its grants are unaffected.
 */
static int xd_xen_arena_at(struct xd_chan *c, uint64_t addr)
{
	struct xd_xen *x = c->priv;
	void *p;
	int ret;

	if (x->moved)
		return -EINVAL;
	ret = xd_shm_map_at(x->memfd, 0, c->arena_size, addr, &p);
	if (ret)
		return ret;
	munmap(c->arena, c->arena_size);
	c->arena = p;
	x->moved = 1;
	return 0;
}

static void xd_xen_close(struct xd_chan *c)
{
	struct xd_xen *x = c->priv;

	if (!x)
		return;
	/* Closing the file ends the session before its arena goes. */
	close(x->fd);
	munmap(c->arena, c->arena_size);
	close(x->memfd);
	free(x);
	memset(c, 0, sizeof(*c));
}

/* xcuda-back says EPOLLHUP once the session is over. */
static int xd_xen_peer_gone(struct xd_chan *c)
{
	struct xd_xen *x = c->priv;
	struct pollfd p = { .fd = x->fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

static const struct xd_chan_ops xd_xen_ops = {
	.name = "xen",
	.next = xd_xen_next,
	.reply = xd_xen_reply,
	.arena_at = xd_xen_arena_at,
	.close = xd_xen_close,
	.peer_gone = xd_xen_peer_gone,
};

int xd_xen_accept(int fd, struct xd_chan *c, const struct xcuda_back_event *ev)
{
	struct xcuda_back_arena a;
	struct xd_xen *x;
	void *arena;
	int ret;

	memset(c, 0, sizeof(*c));
	if (ev->type != XCUDA_BACK_EV_SESSION || !ev->arena_size ||
	    ev->arena_size > XCUDA_XEN_MAX_ARENA ||
	    ev->arena_size % XCUDA_PAGE_SIZE)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->fd = fd;
	x->memfd = memfd_create("xcuda-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (x->memfd < 0)
		goto fail_errno;
	/* Sealed: nothing may shrink it under the pinned, granted pages. */
	if (ftruncate(x->memfd, (off_t)ev->arena_size) < 0 ||
	    fcntl(x->memfd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail_errno;
	arena = mmap(NULL, ev->arena_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     x->memfd, 0);
	if (arena == MAP_FAILED)
		goto fail_errno;
	a.addr = (uintptr_t)arena;
	a.size = ev->arena_size;
	if (ioctl(fd, XCUDA_BACK_IOC_ARENA, &a) < 0) {
		ret = -errno;
		munmap(arena, ev->arena_size);
		goto fail;
	}
	c->ops = &xd_xen_ops;
	c->arena = arena;
	c->arena_size = ev->arena_size;
	c->session = ev->session;
	/* The backend names the domain; the guest cannot. */
	c->domain = XD_DOMAIN_XEN | ev->domid;
	c->priv = x;
	return 0;

fail_errno:
	ret = -errno;
fail:
	if (x->memfd >= 0)
		close(x->memfd);
	free(x);
	return ret;
}
