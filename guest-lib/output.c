// SPDX-License-Identifier: MIT
/*
 * Device output: what kernels printf (and device asserts report) reaches
 * this process's stdout and stderr.  The worker keeps what its CUDA
 * runtime writes and flags answers XCUDA_RSPF_OUTPUT while some waits;
 * before the synchronous call that saw the flag returns, we take it all
 * with OUTPUT_TAKE and write it through our own stdio.
 *
 * Natively CUDA writes this output through the process's stdout FILE, so
 * it lands in order with the program's own buffered printf output: hence
 * fwrite() to stdout and stderr, never write(2) to fds 1 and 2.
 *
 * Everything here runs under the session lock.  A flag is only noted
 * where answers are filed (the pump may run inside another call); the
 * round trips wait for the end of a synchronous call when no other
 * synchronous request of the caller is outstanding, so that ours take no
 * ids or slots the caller still counts on.
 */
#include <stdio.h>
#include <string.h>

#include "guest.h"

/* What one OUTPUT_TAKE asks for, and the least worth asking for. */
#define XC_OUTPUT_CHUNK	(1u << 20)
#define XC_OUTPUT_MIN	4096u

/* The session with output to take, and the one taking it now. */
static struct xc_session *xc_output_waits;
static struct xc_session *xc_output_busy;

void xc_output_note(struct xc_session *s)
{
	xc_output_waits = s;
}

/* No synchronous request of the caller is in flight or uncollected. */
static int xc_output_safe(struct xc_session *s)
{
	unsigned int i;

	for (i = 0; i < s->t.ring_slots; i++) {
		const struct xc_pending *p = &s->pending[i];

		if (p->state == XC_P_DONE ||
		    (p->state == XC_P_WAIT && !p->posted))
			return 0;
	}
	return 1;
}

/* One OUTPUT_TAKE into the staging block at @off; 1 while more waits. */
static int xc_output_take(struct xc_session *s, uint64_t off, uint64_t len)
{
	struct xcuda_output_take_res r;
	struct xcuda_response rsp;
	struct xcuda_request req;
	uint64_t id;

	xc_req_output_take(&req);
	req.hdr.data_off = (uint32_t)off;
	req.hdr.data_len = (uint32_t)len;
	if (xc_send_locked(s, &req, UINT64_MAX, &id) ||
	    xc_wait_locked(s, id, &rsp))
		return 0;		/* the session is gone */
	if (rsp.status)
		return 0;		/* refused: try again when flagged */
	memset(&r, 0, sizeof(r));
	memcpy(&r, rsp.out, rsp.len < sizeof(r) ? rsp.len : sizeof(r));
	if (r.bytes > len || (r.bytes && r.stream != 1 && r.stream != 2) ||
	    (!r.bytes && r.more)) {
		xc_log("malformed device output from xcudad (%u bytes of "
		       "%llu, stream %u, more %u)", r.bytes,
		       (unsigned long long)len, r.stream, r.more);
		s->dead = cudaErrorDevicesUnavailable;
		return 0;
	}
	if (r.bytes)
		fwrite(xc_arena_ptr(s, off), 1, r.bytes,
		       r.stream == 1 ? stdout : stderr);
	return !!r.more;
}

void xc_output_drain_locked(struct xc_session *s)
{
	uint64_t off, got;

	if (xc_output_waits != s || xc_output_busy == s || s->dead ||
	    !xc_output_safe(s))
		return;
	xc_output_busy = s;
	off = xc_staging_get(s, XC_OUTPUT_CHUNK, XC_OUTPUT_MIN, &got);
	if (off != UINT64_MAX) {
		/* Answers filed meanwhile may note the flag again. */
		while (xc_output_take(s, off, got))
			;
		xc_arena_release(s->staging, off);
		xc_output_waits = NULL;
	}
	xc_output_busy = NULL;
}

/*
 * Output flagged on a posted answer that no later synchronous call
 * collected: natively the program would have printed it before exiting.
 */
__attribute__((destructor)) static void xc_output_at_exit(void)
{
	struct xc_session *s = xc_output_waits;

	if (!s || s != xc_session_peek() || pthread_mutex_trylock(&s->lock))
		return;
	xc_output_drain_locked(s);
	pthread_mutex_unlock(&s->lock);
}
