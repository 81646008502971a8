// SPDX-License-Identifier: MIT
/*
 * The user-space half of the `xen` transport without Xen: the worker's
 * shared memory as xd_xen_accept() lays it out (header page, data ring,
 * arena: dom0-daemon/shm.c, ring_back.c), mapped a second time as the
 * guest maps Dom0's grants, with the guest's end on it (guest-lib/
 * ring_front.c).  The kernels' part, the event channel between the
 * eventfds, is played by crossing them: the guest's kick is the worker's
 * bell and the other way round.  Each side's "device file" is a pipe
 * whose hang-up is the end of the session.
 *
 * Then the checks each transport makes before there is a ring: the
 * worker's of the backend's event, the guest's of /dev/xcuda's answer
 * (on files that are not the device), with nothing left open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "guest-lib/ring_front.h"
#include "guest-lib/transport.h"
#include "dom0-daemon/ring_back.h"
#include "dom0-daemon/shm.h"
#include "dom0-daemon/transport_xen.h"
#include "xcuda/xen.h"
#include "check.h"

#define ORDER		2
#define ARENA		(1u << 20)
#define TRIPS		20000
/* Test-only opcodes the worker thread understands. */
#define OP_ECHO		1
#define OP_CLOSE	2	/* answer, then end the session */
#define OP_DIE		3	/* end the session without answering */

struct rig {
	struct xd_shm shm;	/* the worker's */
	struct xd_ring back;
	struct xc_ring front;
	uint8_t *gbase;		/* the guest's mapping */
	int gfile[2];		/* the guest's device file: [1] closed = lost */
	int wfile[2];		/* the worker's attached file */
	pthread_t worker;
	int started, joined;	/* the worker thread */
	int worker_ret;
};

static size_t data_bytes(void)
{
	return (size_t)XCUDA_XEN_DATA_PAGES(ORDER) * XCUDA_PAGE_SIZE;
}

/* As xcuda-back does when a session ends: mark it, then ring the guest. */
static void backend_close(struct rig *r)
{
	struct xcuda_data_intf *intf = (void *)r->shm.base;

	__atomic_store_n(&intf->closed, 1, __ATOMIC_RELEASE);
	xr_bell_ring(r->back.end.peer_bell);
}

static void *worker_main(void *arg)
{
	struct rig *r = arg;
	struct xcuda_request req;
	struct xcuda_response rsp;
	int ret;

	for (;;) {
		ret = xd_ring_next(&r->back, &req, -1);
		if (ret <= 0)
			break;
		if (req.hdr.op == OP_DIE) {
			backend_close(r);
			ret = 0;
			break;
		}
		memset(&rsp, 0, sizeof(rsp));
		rsp.id = req.hdr.id;
		rsp.op = req.hdr.op;
		rsp.status = (int32_t)req.hdr.data_off;
		ret = xd_ring_reply(&r->back, &rsp, 0);
		if (ret < 0)
			break;
		if (req.hdr.op == OP_CLOSE) {
			backend_close(r);
			break;
		}
	}
	r->worker_ret = ret;
	return NULL;
}

static int rig_open(struct rig *r, uint64_t guest_spin_ns,
		    uint64_t worker_spin_ns)
{
	const struct xcuda_data_intf *intf;
	size_t ring_bytes = (size_t)XCUDA_PAGE_SIZE << ORDER;
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->gfile[0] = r->gfile[1] = r->wfile[0] = r->wfile[1] = -1;
	r->front.end.bell = r->front.end.peer_bell = r->front.end.sock = -1;
	r->back.end.bell = r->back.end.peer_bell = r->back.end.sock = -1;
	r->shm.memfd = -1;
	if (xd_shm_create(&r->shm, "xcuda-test", data_bytes(), ARENA))
		return -1;
	for (i = 0; i < XCUDA_PAGE_SIZE; i++)
		if (r->shm.base[i])
			return -1;
	xd_ring_init(&r->back, (xcuda_sring_t *)(r->shm.base +
						 XCUDA_PAGE_SIZE), ring_bytes);
	r->back.end.spin_ns = worker_spin_ns;
	if (xr_end_bells(&r->back.end) ||
	    pipe2(r->wfile, O_CLOEXEC | O_NONBLOCK) ||
	    pipe2(r->gfile, O_CLOEXEC | O_NONBLOCK))
		return -1;
	r->back.end.sock = r->wfile[0];
	r->back.end.sock_hup_only = 1;
	r->front.end.sock = r->gfile[0];
	r->front.end.sock_hup_only = 1;

	/* The guest maps what Dom0 granted: the same pages. */
	r->gbase = mmap(NULL, r->shm.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			r->shm.memfd, 0);
	if (r->gbase == MAP_FAILED) {
		r->gbase = NULL;
		return -1;
	}
	if (xc_ring_attach(&r->front, (xcuda_sring_t *)(r->gbase +
							XCUDA_PAGE_SIZE),
			   ring_bytes))
		return -1;
	intf = (const void *)r->gbase;
	r->front.end.closed = &intf->closed;
	/* The event channel: the guest's kick rings the worker's bell. */
	r->front.end.bell = dup(r->back.end.peer_bell);
	r->front.end.peer_bell = dup(r->back.end.bell);
	r->front.end.spin_ns = guest_spin_ns;
	if (r->front.end.bell < 0 || r->front.end.peer_bell < 0)
		return -1;
	if (pthread_create(&r->worker, NULL, worker_main, r))
		return -1;
	r->started = 1;
	return 0;
}

/* Waits for the worker thread to end by itself; its return value. */
static int rig_join(struct rig *r)
{
	if (r->started && !r->joined) {
		pthread_join(r->worker, NULL);
		r->joined = 1;
	}
	return r->worker_ret;
}

/* Ends the worker (its file hangs up) and frees everything. */
static void rig_close(struct rig *r)
{
	if (r->wfile[1] >= 0)
		close(r->wfile[1]);
	rig_join(r);
	if (r->gbase)
		munmap(r->gbase, r->shm.size);
	xr_end_close(&r->front.end);
	if (r->gfile[1] >= 0)
		close(r->gfile[1]);
	xr_end_close(&r->back.end);	/* wfile[0] too */
	xd_shm_destroy(&r->shm);
}

static int submit(struct rig *r, uint16_t op, uint64_t id, uint32_t tag)
{
	struct xcuda_request req;

	memset(&req, 0, sizeof(req));
	req.hdr.op = op;
	req.hdr.id = id;
	req.hdr.data_off = tag;
	return xc_ring_submit(&r->front, &req, 1);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void round_trips(const char *name, uint64_t guest_spin,
			uint64_t worker_spin, int batch)
{
	struct xcuda_response rsp[8];
	struct rig r;
	uint64_t id = 0, got = 0;
	int n, i, k;

	EXPECT(!rig_open(&r, guest_spin, worker_spin), "rig set up");
	EXPECT(xc_ring_slots(&r.front) == XCUDA_RING_SIZE(ORDER),
	       "ring of %u slots", xc_ring_slots(&r.front));
	while (got < TRIPS) {
		for (k = 0; k < batch; k++, id++)
			EXPECT(!submit(&r, OP_ECHO, id, (uint32_t)id * 3),
			       "submit %llu", (unsigned long long)id);
		for (k = 0; k < batch;) {
			n = xc_ring_receive(&r.front, rsp, 8, 5000, 0);
			EXPECT(n > 0, "answer %llu: %d",
			       (unsigned long long)got, n);
			for (i = 0; i < n; i++, k++, got++)
				EXPECT(rsp[i].id == got && rsp[i].op == OP_ECHO &&
				       rsp[i].status == (int32_t)((uint32_t)got * 3),
				       "answer %llu in order",
				       (unsigned long long)got);
		}
	}
	EXPECT(r.front.end.stats.pushed == TRIPS &&
	       r.front.end.stats.taken == TRIPS,
	       "guest counts %llu pushed, %llu taken",
	       (unsigned long long)r.front.end.stats.pushed,
	       (unsigned long long)r.front.end.stats.taken);
	/* The worker's counters are its own; it may still be answering. */
	EXPECT(r.front.end.stats.bells <= TRIPS,
	       "at most a bell a request: %llu",
	       (unsigned long long)r.front.end.stats.bells);
	if (!guest_spin)
		EXPECT(r.front.end.stats.sleeps > 0, "no spin: slept");
out:
	rig_close(&r);
	check_case(name);
}

/*
 * Dom0 ends the session (@op: after answering, or not): what it answered
 * comes first, then -EPIPE, never a hang; asleep (@guest_spin 0), the
 * mark's bell wakes the guest.
 */
static void closed(const char *name, uint16_t op, uint64_t guest_spin)
{
	struct xcuda_response rsp;
	struct rig r;
	int n;

	EXPECT(!rig_open(&r, guest_spin, 0), "rig set up");
	EXPECT(!submit(&r, op, 0, 7), "submit");
	n = xc_ring_receive(&r.front, &rsp, 1, 10000, 0);
	if (op == OP_CLOSE) {
		EXPECT(n == 1 && rsp.id == 0 && rsp.status == 7,
		       "the last answer arrives: %d", n);
		n = xc_ring_receive(&r.front, &rsp, 1, 10000, 0);
	}
	EXPECT(n == -EPIPE, "then -EPIPE: %d", n);
	EXPECT(submit(&r, OP_ECHO, 1, 0) == -EPIPE, "submit after: -EPIPE");
out:
	rig_close(&r);
	check_case(name);
}

/* The device files: readable means nothing, a hang-up ends the session. */
static void device_files(void)
{
	struct xcuda_response rsp;
	struct rig r;
	int n;

	EXPECT(!rig_open(&r, 0, 0), "rig set up");
	EXPECT(write(r.gfile[1], "x", 1) == 1, "guest's file readable");
	EXPECT(write(r.wfile[1], "x", 1) == 1, "worker's file readable");
	n = xc_ring_receive(&r.front, &rsp, 1, 50, 0);
	EXPECT(n == 0 && !r.front.end.dead && !r.front.end.broken,
	       "idle, readable file: a timeout: %d", n);
	EXPECT(!submit(&r, OP_ECHO, 0, 1), "submit");
	n = xc_ring_receive(&r.front, &rsp, 1, 5000, 0);
	EXPECT(n == 1 && rsp.status == 1, "worker unmoved by its file: %d",
	       n);
	/* The connection to the backend lost. */
	close(r.gfile[1]);
	r.gfile[1] = -1;
	n = xc_ring_receive(&r.front, &rsp, 1, 5000, 0);
	EXPECT(n == -EPIPE, "guest's file hangs up: -EPIPE: %d", n);
	/* The session over on Dom0's side: the worker's next() ends. */
	close(r.wfile[1]);
	r.wfile[1] = -1;
	n = rig_join(&r);
	EXPECT(n == -EPIPE, "worker's file hangs up: -EPIPE: %d", n);
out:
	rig_close(&r);
	check_case("xen ring: device files");
}

/* A guest that moves req_prod past the ring ends its worker. */
static void hostile_guest(void)
{
	struct xcuda_response rsp;
	xcuda_sring_t *gs;
	struct rig r;
	int n;

	EXPECT(!rig_open(&r, 0, 0), "rig set up");
	gs = r.front.front.sring;
	EXPECT(!submit(&r, OP_ECHO, 0, 5), "submit");
	n = xc_ring_receive(&r.front, &rsp, 1, 5000, 0);
	EXPECT(n == 1, "first answer: %d", n);
	__atomic_store_n(&gs->req_prod,
			 gs->req_prod + 3 * XCUDA_RING_SIZE(ORDER),
			 __ATOMIC_SEQ_CST);
	xr_bell_ring(r.front.end.peer_bell);
	n = rig_join(&r);
	EXPECT(n == -EPROTO && r.back.end.broken, "worker: -EPROTO: %d", n);
out:
	rig_close(&r);
	check_case("xen ring: req_prod past the ring ends the worker");
}

/* The worker's checks of the backend's event, before anything is made. */
static void accept_checks(void)
{
	struct xcuda_back_event good = {
		.type = XCUDA_BACK_EV_SESSION, .session = 9, .domid = 3,
		.arena_size = ARENA, .token = 1, .ring_order = ORDER,
	}, ev;
	struct xd_chan c;
	int fds[2], before, ret;

	EXPECT(!pipe2(fds, O_CLOEXEC), "pipe");
	before = open_fds();
	ev = good;
	ev.ring_order = XCUDA_MAX_RING_ORDER + 1;
	EXPECT(xd_xen_accept(fds[0], &c, &ev) == -EINVAL, "ring order 5");
	ev = good;
	ev.arena_size = 0;
	EXPECT(xd_xen_accept(fds[0], &c, &ev) == -EINVAL, "no arena");
	ev.arena_size = ARENA + 1;
	EXPECT(xd_xen_accept(fds[0], &c, &ev) == -EINVAL, "arena not pages");
	ev.arena_size = XCUDA_XEN_MAX_ARENA + XCUDA_PAGE_SIZE;
	EXPECT(xd_xen_accept(fds[0], &c, &ev) == -EINVAL, "arena too large");
	ev = good;
	ev.type = XCUDA_BACK_EV_GONE;
	EXPECT(xd_xen_accept(fds[0], &c, &ev) == -EINVAL, "not a session");
	/* A good event on a file that is not xcuda-back: its ioctl fails. */
	ret = xd_xen_accept(fds[0], &c, &good);
	EXPECT(ret == -ENOTTY, "no backend: the ioctl's error: %d", ret);
	EXPECT(fcntl(fds[0], F_GETFD) >= 0, "the file is still the caller's");
	EXPECT(open_fds() == before, "nothing left open: %d, was %d",
	       open_fds(), before);
out:
	close(fds[0]);
	close(fds[1]);
	check_case("xen worker: the event checked, nothing leaks");
}

/* The guest's checks before the device answers anything. */
static void open_checks(void)
{
	struct xc_transport_opts o = { 0 };
	struct xc_transport t;
	int before = open_fds(), ret;

	o.path = "/nonexistent/xcuda";
	EXPECT(xc_xen_open(&t, &o) == -ENOENT, "no device: -ENOENT");
	/* A file that answers no ioctl, as a driver of the old ABI would. */
	o.path = "/dev/null";
	ret = xc_xen_open(&t, &o);
	EXPECT(ret == -ENOTTY, "not the device: its ioctl fails: %d", ret);
	o.ring_order = XCUDA_MAX_RING_ORDER + 1;
	EXPECT(xc_xen_open(&t, &o) == -EINVAL, "ring order 5: -EINVAL");
	o.ring_order = 0;
	o.arena_size = XCUDA_XEN_MAX_ARENA + 1;
	EXPECT(xc_xen_open(&t, &o) == -EINVAL, "arena too large: -EINVAL");
	EXPECT(open_fds() == before, "nothing left open: %d, was %d",
	       open_fds(), before);
out:
	check_case("xen guest: open fails cleanly");
}

int main(void)
{
	round_trips("xen ring: round trips, both spinning", 1000000, 20000, 1);
	round_trips("xen ring: round trips, both sleeping", 0, 0, 1);
	round_trips("xen ring: batches of 8, sleeping", 0, 0, 8);
	closed("xen ring: closed after an answer, spinning", OP_CLOSE,
	       1000000);
	closed("xen ring: closed after an answer, asleep", OP_CLOSE, 0);
	closed("xen ring: closed, nothing answered", OP_DIE, 0);
	device_files();
	hostile_guest();
	accept_checks();
	open_checks();
	return check_summary();
}
