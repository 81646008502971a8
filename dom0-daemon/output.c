// SPDX-License-Identifier: MIT
/*
 * Device output: what the worker's CUDA runtime writes to stdout (kernel
 * printf) and stderr (device assert messages) belongs to the guest
 * program, not to xcudad's log.  For the whole session, fds 1 and 2 point
 * at two memfds; after each synchronous request the worker flushes its
 * stdio and flags the answer XCUDA_RSPF_OUTPUT while either holds output
 * the guest has not taken; OUTPUT_TAKE hands it over.
 *
 * Memfds, not pipes: CUDA writes from the very thread that would have to
 * drain a pipe, so a flood must never block.  Each memfd is sized once to
 * the cap and sealed against growing: the kernel itself fails writes past
 * the cap, so not even one request's flood (a huge printf buffer, wide
 * fields) can take more Dom0 memory than that.  Writers share the
 * memfd's file offset (dup2), which is how much was written; once the
 * guest has taken everything the pages are punched out and the offset
 * goes back to 0.
 *
 * The log stays on the descriptor log.c saved in xd_log_setup(), which
 * xcudad calls before any worker exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "log.h"
#include "ops.h"
#include "output.h"

struct xd_out {
	const char *name;
	int target;		/* the descriptor it replaces (1 or 2) */
	int saved;		/* what target was before; -1 if closed */
	int fd;			/* the memfd; shares target's offset */
	FILE *file;		/* stdout or stderr when target is theirs */
	uint64_t taken;		/* bytes already handed to the guest */
	uint64_t since;		/* request at which output began to wait */
	int full;		/* reached the cap since the last reset */
};

static struct xd_out xd_out[2] = {
	{ .name = "stdout", .target = -1, .saved = -1, .fd = -1 },
	{ .name = "stderr", .target = -1, .saved = -1, .fd = -1 },
};
static int xd_out_on;
static uint64_t xd_out_cap;
static uint64_t xd_out_reqs;		/* requests handled while captured */
static unsigned long long xd_out_overflows;
static int xd_out_said;

static void xd_out_close(struct xd_out *o)
{
	if (o->target >= 0) {
		if (o->saved >= 0)
			dup2(o->saved, o->target);
		else
			close(o->target);
	}
	if (o->saved >= 0)
		close(o->saved);
	if (o->fd >= 0)
		close(o->fd);
	o->target = o->saved = o->fd = -1;
	o->file = NULL;
}

static int xd_out_open(struct xd_out *o, int target, uint64_t cap)
{
	int err;

	o->fd = memfd_create(o->name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (o->fd < 0)
		return -errno;
	if (ftruncate(o->fd, (off_t)cap) ||
	    fcntl(o->fd, F_ADD_SEALS,
		  F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL))
		goto fail;
	/* A closed descriptor is closed again at the end. */
	o->saved = fcntl(target, F_DUPFD_CLOEXEC, 3);
	if (o->saved < 0 && errno != EBADF)
		goto fail;
	if (dup2(o->fd, target) < 0)
		goto fail;
	o->target = target;
	o->file = target == STDOUT_FILENO ? stdout :
		  target == STDERR_FILENO ? stderr : NULL;
	/* Failures on the old descriptor are no overflow of this one. */
	if (o->file)
		clearerr(o->file);
	o->taken = 0;
	o->since = 0;
	o->full = 0;
	return 0;
fail:
	err = -errno;
	if (o->saved >= 0)
		close(o->saved);
	close(o->fd);
	o->saved = o->fd = -1;
	return err;
}

int xd_output_capture(int out_fd, int err_fd, uint64_t cap)
{
	int err;

	if (xd_out_on)
		return -EBUSY;
	if (!cap || out_fd == err_fd)
		return -EINVAL;
	err = xd_out_open(&xd_out[0], out_fd, cap);
	if (!err) {
		err = xd_out_open(&xd_out[1], err_fd, cap);
		if (err)
			xd_out_close(&xd_out[0]);
	}
	if (err)
		return err;
	xd_out_cap = cap;
	xd_out_reqs = 0;
	xd_out_overflows = 0;
	xd_out_said = 0;
	xd_out_on = 1;
	return 0;
}

/* Where writers stand: the end of what the stream holds. */
static uint64_t xd_out_end(struct xd_out *o)
{
	off_t end = lseek(o->fd, 0, SEEK_CUR);

	if (end < 0)
		return o->taken;
	/* Someone rewound it: what lies before was taken or is lost. */
	if ((uint64_t)end < o->taken)
		o->taken = (uint64_t)end;
	return (uint64_t)end;
}

/* Everything was taken: give the pages back and start over. */
static void xd_out_reset(struct xd_out *o, uint64_t end)
{
	if (end && fallocate(o->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			     0, (off_t)end))
		(void)0;	/* the pages stay; the cap still holds */
	lseek(o->fd, 0, SEEK_SET);
	o->taken = 0;
	o->since = 0;
	o->full = 0;
	/* A write that failed at the cap must not stop later ones. */
	if (o->file)
		clearerr(o->file);
}

/* Bytes of @o waiting; notes when they began to and when it overflowed. */
static uint64_t xd_out_check(struct xd_out *o)
{
	uint64_t end = xd_out_end(o), n = end - o->taken;

	if (n && !o->since)
		o->since = xd_out_reqs;
	if (!o->full && (end >= xd_out_cap || (o->file && ferror(o->file)))) {
		o->full = 1;
		xd_out_overflows++;
		if (!xd_out_said++)
			xd_log(XD_LOG_WARN, "device output on %s reached %llu "
			       "KiB before the guest took it: the rest is "
			       "dropped", o->name,
			       (unsigned long long)(xd_out_cap >> 10));
	}
	return n;
}

/* The request at which @o's output began to wait; unknown ranks last. */
static uint64_t xd_out_age(const struct xd_out *o)
{
	return o->since ? o->since : UINT64_MAX;
}

static void xd_out_flush(void)
{
	fflush(stdout);
	fflush(stderr);
}

uint64_t xd_output_waiting(void)
{
	if (!xd_out_on)
		return 0;
	xd_out_flush();
	return xd_out_check(&xd_out[0]) + xd_out_check(&xd_out[1]);
}

unsigned long long xd_output_overflows(void)
{
	return xd_out_overflows;
}

void xd_output_after(struct xd_session *s, struct xcuda_response *rsp)
{
	(void)s;
	/*
	 * Nobody waits for a posted answer, and the next synchronous one
	 * carries the flag for all that waits: two system calls less per
	 * launch.
	 */
	if (!xd_out_on || (rsp->flags & XCUDA_RF_POSTED))
		return;
	xd_out_reqs++;
	if (xd_output_waiting())
		rsp->flags |= XCUDA_RSPF_OUTPUT;
}

int xd_op_output_take(struct xd_session *s, struct xcuda_output_take_res *r,
		      struct xd_call *call)
{
	struct xd_out *o = NULL;
	uint64_t end = 0, n;
	ssize_t got;
	int i;

	(void)s;
	if (!xd_out_on)
		return 0;
	xd_out_flush();
	/* The output that began to wait first; stdout on a tie. */
	for (i = 0; i < 2; i++) {
		struct xd_out *c = &xd_out[i];
		uint64_t e = xd_out_end(c);

		if (e > c->taken && (!o || xd_out_age(c) < xd_out_age(o))) {
			o = c;
			end = e;
		}
	}
	if (o) {
		n = end - o->taken;
		if (n > call->data_len)
			n = call->data_len;
		/* The extent is guest memory: only written, never read. */
		got = pread(o->fd, call->data, n, (off_t)o->taken);
		if (got <= 0) {
			xd_log_ratelimited(XD_LOG_WARN, "cannot read device "
					   "output (%s): dropped",
					   got ? strerror(errno) : "empty");
			xd_out_reset(o, end);
		} else {
			r->bytes = (uint32_t)got;
			r->stream = o == &xd_out[0] ? 1 : 2;
			o->taken += (uint64_t)got;
			if (o->taken == end)
				xd_out_reset(o, end);
		}
	}
	r->more = xd_out_end(&xd_out[0]) > xd_out[0].taken ||
		  xd_out_end(&xd_out[1]) > xd_out[1].taken;
	return 0;
}

void xd_output_release(void)
{
	uint64_t left;

	if (!xd_out_on)
		return;
	left = xd_output_waiting();
	xd_out_close(&xd_out[0]);
	xd_out_close(&xd_out[1]);
	xd_out_on = 0;
	if (left)
		xd_log(XD_LOG_DEBUG, "%llu bytes of device output never "
		       "taken", (unsigned long long)left);
	if (xd_out_overflows)
		xd_log(XD_LOG_INFO, "device output overflowed %llu time(s)",
		       xd_out_overflows);
}

/*
 * Only a worker's session owns the process's stdio: unit tests drive
 * sessions without a transport and keep theirs.
 */
static int xd_output_init(struct xd_session *s)
{
	int err;

	if (!s->chan || !s->chan->ops)
		return 0;
	xd_out_flush();
	err = xd_output_capture(STDOUT_FILENO, STDERR_FILENO, XD_OUTPUT_CAP);
	if (err)
		xd_log(XD_LOG_WARN, "cannot capture device output (%s): it "
		       "goes to this log", strerror(-err));
	return 0;
}

static void xd_output_fini(struct xd_session *s)
{
	(void)s;
	xd_output_release();
}

/* Last: tearing down modules and streams may still print. */
XD_SESSION_HOOKS(output, 100, xd_output_init, xd_output_fini);
