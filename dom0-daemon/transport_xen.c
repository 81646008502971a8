// SPDX-License-Identifier: MIT
/*
 * The `xen` transport in xcudad: the control file of /dev/xcuda-back,
 * where the backend announces guest processes that want a session, and
 * the worker's end of a session.
 *
 * The session's shared memory is the worker's own: a memfd it maps (the
 * header page, the data ring, the arena), which xcuda-back pins and
 * grants to the guest.  Being ordinary memory of this process, CUDA can
 * register the arena for DMA like any other.  Requests and responses
 * travel on the data ring exactly as on `local` (ring_back.c), with two
 * eventfds that xcuda-back bridges to the session's event channel: the
 * bell, which it signals when the guest rings us, and the kick, a write
 * to which rings the guest.  The attached file carries nothing: poll()
 * on it says POLLHUP once the session has ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "common/ring_wait.h"
#include "ring_back.h"
#include "shm.h"
#include "ipc_table.h"
#include "transport_xen.h"

struct xd_xen {
	struct xd_ring ring;	/* end.sock: the attached file */
	struct xd_shm shm;	/* header page, data ring, arena */
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
	/* Nothing is read from it: O_NONBLOCK only to be sure of that. */
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

static int xd_xen_next(struct xd_chan *c, struct xcuda_request *req,
		       int timeout_ms)
{
	struct xd_xen *x = c->priv;

	return xd_ring_next(&x->ring, req, timeout_ms);
}

static int xd_xen_spin(struct xd_chan *c, uint64_t until_ns)
{
	struct xd_xen *x = c->priv;

	return xd_ring_spin(&x->ring, until_ns);
}

static int xd_xen_reply(struct xd_chan *c, const struct xcuda_response *rsp,
			int more)
{
	struct xd_xen *x = c->priv;

	return xd_ring_reply(&x->ring, rsp, more);
}

static void xd_xen_counters(struct xd_chan *c, char *buf, size_t len)
{
	struct xd_xen *x = c->priv;

	xd_ring_counters(&x->ring, buf, len);
}

/*
 * The same pages at the guest's address: the backend pinned the pages,
 * not the addresses, so its grants are unaffected.  Only the arena moves.
 */
static int xd_xen_arena_at(struct xd_chan *c, uint64_t addr)
{
	struct xd_xen *x = c->priv;

	return xd_shm_arena_at(&x->shm, addr, &c->arena);
}

static void xd_xen_close(struct xd_chan *c)
{
	struct xd_xen *x = c->priv;

	if (!x)
		return;
	/* Closing the file ends the session before its memory goes. */
	xr_end_close(&x->ring.end);
	xd_shm_destroy(&x->shm);
	free(x);
	memset(c, 0, sizeof(*c));
}

/* xcuda-back says EPOLLHUP once the session is over. */
static int xd_xen_peer_gone(struct xd_chan *c)
{
	struct xd_xen *x = c->priv;
	struct pollfd p = { .fd = x->ring.end.sock };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

static const struct xd_chan_ops xd_xen_ops = {
	.name = "xen",
	.next = xd_xen_next,
	.spin = xd_xen_spin,
	.reply = xd_xen_reply,
	.arena_at = xd_xen_arena_at,
	.close = xd_xen_close,
	.peer_gone = xd_xen_peer_gone,
	.counters = xd_xen_counters,
};

int xd_xen_accept(int fd, struct xd_chan *c, const struct xcuda_back_event *ev)
{
	struct xcuda_back_arena a = { 0 };
	struct xd_xen *x;
	size_t data_bytes;
	int ret;

	memset(c, 0, sizeof(*c));
	if (ev->type != XCUDA_BACK_EV_SESSION || !ev->arena_size ||
	    ev->arena_size > XCUDA_XEN_MAX_ARENA ||
	    ev->arena_size % XCUDA_PAGE_SIZE ||
	    ev->ring_order > XCUDA_MAX_RING_ORDER)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->ring.end.sock = -1;	/* @fd stays the caller's until we succeed */
	x->ring.end.bell = x->ring.end.peer_bell = -1;
	data_bytes = (size_t)XCUDA_XEN_DATA_PAGES(ev->ring_order) *
		     XCUDA_PAGE_SIZE;
	/* Sealed: nothing may shrink it under the pinned, granted pages. */
	ret = xd_shm_create(&x->shm, "xcuda-session", data_bytes,
			    ev->arena_size);
	if (ret)
		goto fail;
	/*
	 * Page 0, the header (struct xcuda_data_intf), is zeros and only
	 * the backend writes it; the ring, in page 1, is set up before the
	 * backend grants it.
	 */
	xd_ring_init(&x->ring,
		     (xcuda_sring_t *)(x->shm.base + XCUDA_PAGE_SIZE),
		     (size_t)XCUDA_PAGE_SIZE << ev->ring_order);
	/* bell: the guest rang us, requests wait; peer_bell: the kick. */
	ret = xr_end_bells(&x->ring.end);
	if (ret)
		goto fail;
	a.addr = (uintptr_t)x->shm.base;
	a.size = x->shm.size;
	a.bell_fd = x->ring.end.bell;
	a.kick_fd = x->ring.end.peer_bell;
	if (ioctl(fd, XCUDA_BACK_IOC_ARENA, &a) < 0) {
		ret = -errno;
		goto fail;
	}
	x->ring.end.sock = fd;
	x->ring.end.sock_hup_only = 1;	/* a device file, no socket */
	c->ops = &xd_xen_ops;
	c->arena = xd_shm_arena(&x->shm);
	c->arena_size = ev->arena_size;
	c->session = ev->session;
	/* The backend names the domain; the guest cannot. */
	c->domain = XD_DOMAIN_XEN | ev->domid;
	/* Two kernels: a futex in the arena wakes no one across them. */
	c->flags = 0;
	c->priv = x;
	return 0;

fail:
	/* Closes the bells, if any; the socket is -1 and @fd is not ours. */
	xr_end_close(&x->ring.end);
	xd_shm_destroy(&x->shm);
	free(x);
	return ret;
}
