// SPDX-License-Identifier: MIT
/*
 * The guest end of the `xen` transport (see xcuda/xen.h): /dev/xcuda,
 * provided by xcuda-front.ko.  Opening it gives this process a session
 * of its own on the guest's ring; the driver maps the session's arena
 * (Dom0 memory granted to the guest) into the process, posts our
 * requests on the shared ring and hands back our responses.
 *
 * The driver is part of this guest's kernel, but what it passes on comes
 * from Dom0: every response is checked again by the session layer
 * (session.c), and the sizes here before they are used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "xcuda/xen.h"
#include "common/ring_wait.h"
#include "transport.h"

#define XC_XEN_DEVICE	"/dev/xcuda"

struct xc_xen {
	int fd;
};

static void xc_xen_close(struct xc_transport *t)
{
	struct xc_xen *x = t->priv;

	if (t->arena)
		munmap(t->arena, t->arena_size);
	if (x)
		close(x->fd);
	free(x);
	memset(t, 0, sizeof(*t));
}

static int xc_xen_submit(struct xc_transport *t,
			 const struct xcuda_request *req, unsigned int n)
{
	struct xc_xen *x = t->priv;
	struct xcuda_ioc_submit s = {
		.reqs = (uintptr_t)req,
		.n = n,
	};

	while (ioctl(x->fd, XCUDA_IOC_SUBMIT, &s) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static int xc_xen_receive(struct xc_transport *t, struct xcuda_response *rsp,
			  unsigned int max, int timeout_ms)
{
	struct xc_xen *x = t->priv;
	size_t len = (size_t)max * sizeof(*rsp);
	ssize_t r = xr_read_wait(x->fd, rsp, len, timeout_ms);

	if (r == -EAGAIN)
		return 0;	/* timed out */
	if (r < 0)
		return (int)r;
	/* The driver hands whole responses, never none (that is -EAGAIN). */
	if (r == 0 || r % (ssize_t)sizeof(*rsp) || (size_t)r > len)
		return -EPROTO;
	return (int)(r / (ssize_t)sizeof(*rsp));
}

static const struct xc_transport_ops xc_xen_ops = {
	.name = "xen",
	.submit = xc_xen_submit,
	.receive = xc_xen_receive,
	.close = xc_xen_close,
};

int xc_xen_open(struct xc_transport *t, const struct xc_transport_opts *o)
{
	const char *path = o && o->path ? o->path : XC_XEN_DEVICE;
	struct xcuda_ioc_open op = { 0 };
	struct xc_xen *x;
	void *arena;
	int err;

	memset(t, 0, sizeof(*t));
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	/* O_NONBLOCK: receive() waits in poll(), with its timeout. */
	x->fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (x->fd < 0) {
		err = -errno;
		free(x);
		return err;
	}
	op.arena_size = o ? o->arena_size : 0;
	if (ioctl(x->fd, XCUDA_IOC_OPEN, &op) < 0)
		goto fail_errno;
	if (!op.session || !op.slots || !op.arena_size ||
	    op.arena_size % XCUDA_PAGE_SIZE ||
	    op.arena_size > XCUDA_XEN_MAX_ARENA ||
	    (o && o->arena_size && op.arena_size > o->arena_size)) {
		err = -EPROTO;
		goto fail;
	}
	arena = mmap(NULL, op.arena_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     x->fd, 0);
	if (arena == MAP_FAILED)
		goto fail_errno;
	t->ops = &xc_xen_ops;
	t->arena = arena;
	t->arena_size = op.arena_size;
	t->session = op.session;
	t->ring_slots = op.slots;
	t->priv = x;
	return 0;

fail_errno:
	err = -errno;
fail:
	close(x->fd);
	free(x);
	return err;
}
