// SPDX-License-Identifier: MIT
/*
 * The guest end of the `xen` transport (see xcuda/xen.h): /dev/xcuda,
 * provided by xcuda-front.ko.  Opening it and XCUDA_IOC_OPEN give this
 * process a session of its own, with an event channel bridged to two
 * eventfds of ours, and mmap() maps the session's shared memory (Dom0's
 * pages, granted to the guest): the header page, the data ring, then the
 * arena.
 *
 * Requests and responses then travel on that ring exactly as on `local`
 * (ring_front.c): no system call while both sides spin, a write to the
 * kick eventfd to wake a sleeping worker, and a sleep on the bell eventfd,
 * which the driver signals when Dom0 rings us.  The device file itself
 * carries nothing: poll() on it says only POLLHUP or POLLERR, once the
 * connection to the backend is lost.  Dom0 marks a session it ended in the
 * header page (closed), then rings us.
 *
 * What the driver answers comes from Dom0 and the ring is Dom0's memory:
 * the ioctl's answer is checked here before it is used, the ring's indexes
 * by ring_front.c, every response again by the session layer.
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
#include "ring_front.h"
#include "transport.h"

#define XC_XEN_DEVICE	"/dev/xcuda"

struct xc_xen {
	struct xc_ring ring;	/* end.sock: the device file */
	void *base;		/* header page, data ring, arena */
	size_t map_size;
};

static int xc_xen_submit(struct xc_transport *t,
			 const struct xcuda_request *req, unsigned int n)
{
	struct xc_xen *x = t->priv;

	return xc_ring_submit(&x->ring, req, n);
}

static int xc_xen_receive(struct xc_transport *t, struct xcuda_response *rsp,
			  unsigned int max, int timeout_ms)
{
	struct xc_xen *x = t->priv;

	return xc_ring_receive(&x->ring, rsp, max, timeout_ms, t->expect_ns);
}

static void xc_xen_close(struct xc_transport *t)
{
	struct xc_xen *x = t->priv;

	if (!x)
		return;
	munmap(x->base, x->map_size);
	/* The last reference to the file ends the session. */
	xr_end_close(&x->ring.end);
	free(x);
	memset(t, 0, sizeof(*t));
}

static const struct xc_transport_ops xc_xen_ops = {
	.name = "xen",
	.submit = xc_xen_submit,
	.receive = xc_xen_receive,
	.close = xc_xen_close,
};

/*
 * Checks the driver's answer to what we asked (@ask_order, @ask_arena: 0
 * for the defaults) as if it came from Dom0 itself, which it largely
 * does.  0 if the session can be mapped.
 */
static int xc_xen_check(const struct xcuda_ioc_open *op,
			unsigned int ask_order, uint64_t ask_arena)
{
	uint64_t data;

	if (!op->session || op->version != XCUDA_XEN_VERSION)
		return -EPROTO;
	if (op->ring_order > XCUDA_MAX_RING_ORDER ||
	    (ask_order && op->ring_order > ask_order))
		return -EPROTO;
	if (!op->arena_size || op->arena_size % XCUDA_PAGE_SIZE ||
	    op->arena_size > XCUDA_XEN_MAX_ARENA ||
	    (ask_arena && op->arena_size > ask_arena))
		return -EPROTO;
	data = (uint64_t)XCUDA_XEN_DATA_PAGES(op->ring_order) *
	       XCUDA_PAGE_SIZE;
	if (op->map_size != data + op->arena_size)
		return -EPROTO;
	if (op->map_size > SIZE_MAX)
		return -EOVERFLOW;
	return 0;
}

int xc_xen_open(struct xc_transport *t, const struct xc_transport_opts *o)
{
	const char *path = o && o->path ? o->path : XC_XEN_DEVICE;
	struct xcuda_ioc_open op = { 0 };
	const struct xcuda_data_intf *intf;
	size_t data_bytes;
	uint64_t spin_ns;
	struct xc_xen *x;
	void *base;
	int fd, err;

	memset(t, 0, sizeof(*t));
	op.arena_size = o ? o->arena_size : 0;
	op.ring_order = o ? o->ring_order : 0;
	if (op.ring_order > XCUDA_MAX_RING_ORDER ||
	    op.arena_size > XCUDA_XEN_MAX_ARENA)
		return -EINVAL;
	/* A malformed XCUDA_SPIN_US fails the session, as on `local`. */
	err = xr_spin_env(XC_RING_SPIN_US, &spin_ns);
	if (err)
		return err;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	/* Nothing is read or written: O_NONBLOCK only to be sure of it. */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		free(x);
		return err;
	}
	x->ring.end.sock = fd;
	x->ring.end.sock_hup_only = 1;	/* a device file, no socket */
	/* bell: Dom0 rang us, responses wait; peer_bell: the kick. */
	err = xr_end_bells(&x->ring.end);
	if (err)
		goto fail;
	op.bell_fd = x->ring.end.bell;
	op.kick_fd = x->ring.end.peer_bell;
	if (ioctl(fd, XCUDA_IOC_OPEN, &op) < 0) {
		err = -errno;
		goto fail;
	}
	err = xc_xen_check(&op, o ? o->ring_order : 0, o ? o->arena_size : 0);
	if (err)
		goto fail;
	base = mmap(NULL, (size_t)op.map_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	x->base = base;
	x->map_size = (size_t)op.map_size;
	data_bytes = (size_t)XCUDA_XEN_DATA_PAGES(op.ring_order) *
		     XCUDA_PAGE_SIZE;
	/* Page 0 is the header; the worker initialised the ring in page 1. */
	err = xc_ring_attach(&x->ring,
			     (xcuda_sring_t *)((uint8_t *)base +
					       XCUDA_PAGE_SIZE),
			     (size_t)XCUDA_PAGE_SIZE << op.ring_order);
	if (err) {
		munmap(base, x->map_size);
		goto fail;
	}
	intf = base;
	x->ring.end.closed = &intf->closed;
	x->ring.end.spin_ns = spin_ns;

	t->ops = &xc_xen_ops;
	t->arena = (uint8_t *)base + data_bytes;
	t->arena_size = op.arena_size;
	t->session = op.session;
	t->ring_slots = xc_ring_slots(&x->ring);
	/* Two kernels: a futex in the arena wakes no one across them. */
	t->flags = 0;
	t->stats = &x->ring.end.stats;
	t->priv = x;
	return 0;

fail:
	xr_end_close(&x->ring.end);
	free(x);
	return err;
}
