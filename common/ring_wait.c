// SPDX-License-Identifier: MIT
/*
 * The slow half of ring_wait.h: what runs only around a system call, so
 * gains nothing from being inline.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "env.h"
#include "ring_wait.h"

int xr_poll_ms(uint64_t deadline)
{
	uint64_t now, ms;

	if (deadline == UINT64_MAX)
		return -1;
	now = xr_now_ns();
	if (now >= deadline)
		return 0;
	ms = (deadline - now + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

int xr_bell_ring(int efd)
{
	uint64_t one = 1;

	for (;;) {
		if (write(efd, &one, sizeof(one)) == sizeof(one))
			return 0;
		/* The counter is full: it is readable already. */
		if (errno == EAGAIN)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

void xr_bell_drain(int efd)
{
	uint64_t v;

	/* An eventfd hands its whole count to one read: no second one. */
	(void)xr_read(efd, &v, sizeof(v));
}

ssize_t xr_read(int fd, void *buf, size_t len)
{
	ssize_t r;

	do
		r = read(fd, buf, len);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

ssize_t xr_read_wait(int fd, void *buf, size_t len, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;
	int n;

	for (;;) {
		r = xr_read(fd, buf, len);
		if (r != -EAGAIN)
			return r;
		n = poll(&p, 1, timeout_ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (!n)
			return -EAGAIN;
	}
}

int xr_spin_env(unsigned int def_us, uint64_t *ns)
{
	unsigned long long us = def_us;
	cpu_set_t set;
	int r;

	r = xcuda_env_uint(XR_SPIN_ENV, XR_SPIN_MAX_US, &us);
	/* Only the default yields to one CPU: a set value is obeyed. */
	if (r <= 0 && !sched_getaffinity(0, sizeof(set), &set) &&
	    CPU_COUNT(&set) == 1)
		us = 0;
	*ns = (uint64_t)us * 1000u;
	return r < 0 ? r : 0;
}

int xr_end_bells(struct xr_end *e)
{
	int err;

	e->bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e->peer_bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (e->bell >= 0 && e->peer_bell >= 0)
		return 0;
	err = -errno;
	if (e->bell >= 0)
		close(e->bell);
	if (e->peer_bell >= 0)
		close(e->peer_bell);
	e->bell = e->peer_bell = -1;
	return err;
}

void xr_end_close(struct xr_end *e)
{
	close(e->bell);
	close(e->peer_bell);
	close(e->sock);
}

/*
 * The socket carries nothing after the handshake: EOF or data ends it.
 * A device file (@sock_hup_only) is polled for no event, so that only its
 * POLLHUP and POLLERR come back: whatever else its driver might say is
 * not taken for data (recv() on it would fail with ENOTSOCK, which would
 * read as a hang-up).
 */
static int xr_check_sock(struct xr_end *e, short revents)
{
	char c;
	ssize_t r;

	if (revents & POLLNVAL)
		return -EBADF;
	if (revents & (POLLHUP | POLLERR)) {
		e->dead = 1;
		return 0;
	}
	if (e->sock_hup_only)
		return 0;
	r = recv(e->sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (r > 0) {
		xr_end_set_broken(e);
		return -EPROTO;
	}
	if (r == 0 || (errno != EAGAIN && errno != EINTR))
		e->dead = 1;
	return 0;
}

int xr_sleep(struct xr_end *e, uint64_t deadline)
{
	struct pollfd p[2] = {
		{ .fd = e->bell, .events = POLLIN },
		{ .fd = e->sock, .events = e->sock_hup_only ? 0 : POLLIN },
	};
	int r;

	e->stats.sleeps++;
	r = poll(p, 2, xr_poll_ms(deadline));
	if (r < 0)
		return errno == EINTR ? 1 : -errno;
	if (!r)
		return 0;
	if (p[0].revents & POLLNVAL)
		return -EBADF;
	if (p[0].revents & POLLIN)
		xr_bell_drain(e->bell);
	if (p[1].revents) {
		r = xr_check_sock(e, p[1].revents);
		if (r < 0)
			return r;
	}
	return 1;
}
