// SPDX-License-Identifier: MIT
/*
 * The relay (relay.h): a session of a guest of this host, served by a
 * worker of the GPU server over the upstream link (xcuda/upstream.h).
 *
 * Two threads share the session's channel: this one takes the guest's
 * requests (c->ops->next()) and sends each at once, with the arena bytes
 * the worker will read (up_spans.h), never waiting for answers, so that
 * requests flow as they do on a ring; the receiving thread reads the
 * server's answers, puts the arena bytes that come with them in the
 * guest's arena and answers the guest (c->ops->reply()).  Nothing else
 * of the channel is used from two threads, and the ring allows exactly
 * this split (ring_back.c: each side writes its own indexes, what they
 * share is atomic).  The list of requests in flight, which the receiving
 * thread checks each answer against, is under a mutex.
 *
 * Graph copies (up_graph.h): the receiving thread keeps, per executable
 * graph, the arena spans the server announced (GEXT frames) and the
 * sending thread sends their bytes before each GRAPH_LAUNCH (a PUT
 * frame); the table is under the same mutex as the list.
 *
 * Mapped page-locked memory (up_mapped.h): the sending thread finds
 * which pinned extents requests hand to kernels and sends what the guest
 * changed in them before each request (an XMAP frame); the receiving
 * thread learns the pinned extents from the answers, and puts what the
 * server sends for them in the shadow too.
 *
 * Host functions (up_hostfn.c): the receiving thread writes the
 * server's records into the guest's slot area, which it learns from the
 * guest's HOSTFN_SETUP and its answer; a watcher thread sends the
 * guest's completions back.  It and the sending thread share the writer
 * under @wlock, each holding it over whole frames.
 *
 * The relay reads the guest's requests only as far as it must to read
 * the arena safely (the extents, each checked against the arena); the
 * server's worker validates everything as it would a local guest's.  The
 * server is not trusted either: an answer to no request, or an extent
 * outside the arena, ends the session.
 *
 * When the link breaks, or the server neither says anything nor takes
 * our bytes for XCUDA_UPSTREAM_TIMEOUT_S while requests are outstanding
 * (a busy server sends a heartbeat), every request outstanding is answered
 * cudaErrorDevicesUnavailable and the session ends: the guest library
 * then reports the lost session as it does when a worker dies.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <driver_types.h>

#include "xcuda/calls.h"
#include "common/env.h"
#include "common/ring_wait.h"
#include "log.h"
#include "relay.h"
#include "up_graph.h"
#include "up_hostfn.h"
#include "up_mapped.h"
#include "up_spans.h"
#include "worker.h"

/*
 * The arena is memory shared with the guest, another process or domain:
 * what orders our accesses to it against the guest's and against each
 * other's (the sender reads bytes the receiver wrote for an earlier
 * answer, after the guest saw that answer; the receiver writes bytes
 * the server sent after it had the request that named them) is the ring
 * and the server, which ThreadSanitizer cannot see.  The relay only
 * moves those bytes, never reads them: it tells ThreadSanitizer to look
 * away while it does (everything else of the two threads, it checks).
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define XD_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define XD_TSAN 1
#endif
#ifdef XD_TSAN
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#define XD_ARENA_IO_BEGIN()						\
	(AnnotateIgnoreReadsBegin(__FILE__, __LINE__),			\
	 AnnotateIgnoreWritesBegin(__FILE__, __LINE__))
#define XD_ARENA_IO_END()						\
	(AnnotateIgnoreWritesEnd(__FILE__, __LINE__),			\
	 AnnotateIgnoreReadsEnd(__FILE__, __LINE__))
#else
#define XD_ARENA_IO_BEGIN()	((void)0)
#define XD_ARENA_IO_END()	((void)0)
#endif

/* How often each thread looks whether the other ended the session. */
#define XD_RELAY_POLL_MS	200
/* The sender's spin for the guest's next request, at most, in a row. */
#define XD_RELAY_SPIN_MAX_NS	1000000ull
/* Requests in flight at most: more than any ring holds. */
#define XD_RELAY_MAX_Q		4096
#define XD_RELAY_RD_BUF		(256u << 10)
#define XD_RELAY_WR_BUF		(256u << 10)
#define XD_RELAY_IOV		1024
/* The largest extent of a request looked into for addresses. */
#define XD_RELAY_SCAN_MAX	4096

/* A request sent, for its answer. */
struct xd_rq {
	uint64_t id;
	uint16_t op;
	uint16_t flags;
	/* A HOSTFN_SETUP's area; an enqueue's token in hf_off. */
	uint64_t hf_off, hf_len;
	/* ARENA_PIN's and ARENA_UNPIN's extent; OPEN's arena address. */
	uint64_t moff, mlen;
};

struct xd_relay {
	struct xd_chan *c;
	const char *addr;
	int fd;
	uint32_t srv_session;
	uint64_t timeout_ns;	/* 0: wait for answers forever */
	struct xd_up_rd rd;	/* the receiving thread's */
	struct xd_up_wr wr;	/* under wlock: the sender's, the watcher's */
	pthread_mutex_t wlock;
	struct xd_up_hf hf;	/* host functions */
	struct xd_up_span spans[XD_UP_SPANS_MAX];	/* the sender's */
	pthread_mutex_t lock;	/* the list, busy_since, gtab */
	struct xd_up_gtab gtab;	/* graph copies' spans, per exec */
	struct xd_up_span *gput;	/* the sender's: XCUDA_UP_GEXT_MAX */
	struct xd_up_map map;	/* mapped page-locked memory */
	struct xd_rq *q;
	unsigned int qhead, qlen, qcap;
	uint64_t busy_since;	/* the clock when the list last filled */
	unsigned int waiting;	/* atomic: qlen, for the sender's spin */
	uint64_t answered;	/* atomic: the clock at the last answer */
	/* Atomic: how the session ends. */
	int guest_done;		/* the guest went or broke the ring */
	int link_done;		/* the link is over (the receiver says) */
	int send_err;		/* the sender could not send: this errno */
	int closed;		/* the receiver's: CLOSE was answered */
};

static int xd_flag(const int *f)
{
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static void xd_flag_set(int *f, int v)
{
	__atomic_store_n(f, v, __ATOMIC_RELEASE);
}

/* ---- the handshake ---- */

static int xd_relay_open(struct xd_relay *r, const struct xd_upstream *up)
{
	struct xcuda_up_hello h = { XCUDA_UP_MAGIC, XCUDA_UP_VERSION, { 0 } };
	struct xcuda_up_welcome w;
	struct xcuda_up_chal ch;
	struct xcuda_up_open o;
	int ret;

	r->fd = xd_up_connect(up->addr, XD_RELAY_CONNECT_MS);
	if (r->fd < 0) {
		xd_log(XD_LOG_WARN, "upstream %s: cannot connect: %s",
		       up->addr, r->fd == -ENOENT ? "no such host" :
		       strerror(-r->fd));
		return r->fd;
	}
	ret = xd_up_nonce(h.nonce);
	if (!ret)
		ret = xd_up_write_all(r->fd, &h, sizeof(h));
	if (!ret)
		ret = xd_up_read_all(r->fd, &ch, sizeof(ch),
				     xd_up_deadline(XD_UP_HANDSHAKE_MS));
	if (ret) {
		xd_log(XD_LOG_WARN, "upstream %s: %s", up->addr,
		       ret == -EPIPE ? "it closed the connection (is it at "
		       "its session limit?)" : strerror(-ret));
		return ret;
	}
	if (ch.magic != XCUDA_UP_MAGIC || ch.version != XCUDA_UP_VERSION) {
		xd_log(XD_LOG_WARN, "upstream %s: not an xcudad of upstream "
		       "version %u", up->addr, XCUDA_UP_VERSION);
		return -EPROTO;
	}
	/* A server that does not know the key gets nothing from us. */
	if (!xd_up_mac_ok(up->key, XD_UP_LABEL_SERVER, h.nonce, ch.nonce,
			  ch.mac)) {
		xd_log(XD_LOG_WARN, "upstream %s: refused: the server does not "
		       "know the key (wrong MAC)", up->addr);
		return -EACCES;
	}
	memset(&o, 0, sizeof(o));
	o.arena_size = r->c->arena_size;
	/* Where the guest's domain is not known, nothing is shared. */
	if (up->origin && r->c->domain) {
		memcpy(o.origin, up->origin, sizeof(o.origin));
		o.domain = r->c->domain;
	}
	/* Thrice within our timeout: one lost or late is no alarm. */
	o.alive_ms = r->timeout_ns ? (uint32_t)(r->timeout_ns / 3000000u) : 0;
	if (o.alive_ms > XD_UP_HEARTBEAT_MS)
		o.alive_ms = XD_UP_HEARTBEAT_MS;
	if (xd_up_mac(up->key, XD_UP_LABEL_RELAY, ch.nonce, h.nonce, o.mac))
		return -EIO;
	ret = xd_up_write_all(r->fd, &o, sizeof(o));
	if (!ret)
		ret = xd_up_read_all(r->fd, &w, sizeof(w),
				     xd_up_deadline(XD_UP_HANDSHAKE_MS));
	if (ret) {
		xd_log(XD_LOG_WARN, "upstream %s: handshake failed: %s",
		       up->addr, strerror(-ret));
		return ret;
	}
	if (w.status) {
		xd_log(XD_LOG_WARN, "upstream %s refused the session: %s%s",
		       up->addr, w.status < 0 && w.status > -4096 ?
		       strerror(-w.status) : "?", w.status == -EACCES ?
		       " (it has another key)" : "");
		return w.status < 0 && w.status > -4096 ? w.status : -EPROTO;
	}
	/* The guest's offsets are checked against the arena it has. */
	if (w.arena_size != r->c->arena_size) {
		xd_log(XD_LOG_WARN, "upstream %s grants an arena of %llu MiB, "
		       "the guest's has %llu MiB: raise the server's "
		       "--max-arena, or lower XCUDA_ARENA_MB", up->addr,
		       (unsigned long long)(w.arena_size >> 20),
		       (unsigned long long)(r->c->arena_size >> 20));
		return -ENOSPC;
	}
	r->srv_session = w.session;
	xd_log(XD_LOG_DEBUG, "upstream %s: server session %08x", up->addr,
	       w.session);
	return 0;
}

/* No server: the guest's first request learns it, then the session ends. */
static void xd_relay_refuse(struct xd_chan *c)
{
	struct xcuda_request req;
	struct xcuda_response rsp;

	if (c->ops->next(c, &req, 5000) != 1)
		return;
	memset(&rsp, 0, sizeof(rsp));
	rsp.id = req.hdr.id;
	rsp.op = req.hdr.op;
	rsp.flags = req.hdr.flags;
	rsp.status = cudaErrorDevicesUnavailable;
	c->ops->reply(c, &rsp, 0);
}

/* ---- guest -> server ---- */

static int xd_relay_queue(struct xd_relay *r, const struct xcuda_request *req)
{
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	if (r->qlen == r->qcap) {
		unsigned int cap = r->qcap ? r->qcap * 2 : 64, i;
		struct xd_rq *q;

		q = cap > XD_RELAY_MAX_Q ? NULL : malloc(cap * sizeof(*q));
		if (!q) {
			ret = -ENOBUFS;
			goto out;
		}
		for (i = 0; i < r->qlen; i++)
			q[i] = r->q[(r->qhead + i) % r->qcap];
		free(r->q);
		r->q = q;
		r->qcap = cap;
		r->qhead = 0;
	}
	if (!r->qlen)
		r->busy_since = xr_now_ns();
	r->q[(r->qhead + r->qlen) % r->qcap] = (struct xd_rq){
		req->hdr.id, req->hdr.op, req->hdr.flags, 0, 0,
		req->hdr.data_off, req->hdr.data_len };
	if (req->hdr.op == XCUDA_OP_OPEN &&
	    req->hdr.len >= sizeof(struct xcuda_open_args)) {
		struct xcuda_open_args a;

		memcpy(&a, req->args, sizeof(a));
		r->q[(r->qhead + r->qlen) % r->qcap].moff = a.arena_addr;
	}
	/* Where the slot area is, once the server accepts it. */
	if (req->hdr.op == XCUDA_OP_HOSTFN_SETUP &&
	    req->hdr.len >= sizeof(struct xcuda_hostfn_setup_args)) {
		struct xcuda_hostfn_setup_args a;

		memcpy(&a, req->args, sizeof(a));
		r->q[(r->qhead + r->qlen) % r->qcap].hf_off = a.off;
		r->q[(r->qhead + r->qlen) % r->qcap].hf_len = a.len;
	}
	if ((req->hdr.op == XCUDA_OP_HOST_FUNC_LAUNCH ||
	     req->hdr.op == XCUDA_OP_STREAM_ADD_CALLBACK) &&
	    req->hdr.len >= sizeof(uint64_t))
		memcpy(&r->q[(r->qhead + r->qlen) % r->qcap].hf_off,
		       req->args, sizeof(uint64_t));
	r->qlen++;
	__atomic_store_n(&r->waiting, r->qlen, __ATOMIC_RELAXED);
out:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/*
 * cudaHostRegister's memfd, sent beside the request on `local`: the
 * server cannot map it (it answers "cannot pin" and the guest stages
 * copies instead), so it is taken and closed here, not left queued.
 */
static void xd_relay_drop_fd(struct xd_chan *c, const struct xcuda_request *req)
{
	struct xcuda_host_register_args a;
	int fd;

	if (req->hdr.op != XCUDA_OP_HOST_REGISTER || !c->ops->take_fd ||
	    req->hdr.len < sizeof(a))
		return;
	memcpy(&a, req->args, sizeof(a));
	fd = a.tag ? c->ops->take_fd(c, a.tag) : -1;
	if (fd >= 0)
		close(fd);
}

/*
 * Before a GRAPH_LAUNCH: the bytes the exec's copies read, as the guest
 * has them now, in a PUT frame (none for an exec the server named none);
 * how many extents in *@nput (in r->gput).
 */
static int xd_relay_put(struct xd_relay *r, const struct xcuda_request *req,
			unsigned int *nput)
{
	struct xcuda_graph_launch_args a;
	const struct xd_up_gent *e;
	struct xcuda_up_put f;
	unsigned int n = 0, i;
	int ret;

	if (req->hdr.op != XCUDA_OP_GRAPH_LAUNCH || req->hdr.len < sizeof(a))
		return 0;
	memcpy(&a, req->args, sizeof(a));
	pthread_mutex_lock(&r->lock);
	e = xd_up_gtab_find(&r->gtab, a.graphExec);
	if (e && !r->gput)
		r->gput = malloc(XCUDA_UP_GEXT_MAX * sizeof(*r->gput));
	if (e && r->gput) {
		n = e->n;
		memcpy(r->gput, e->s, n * sizeof(*r->gput));
	}
	pthread_mutex_unlock(&r->lock);
	if (e && !r->gput)
		return -ENOMEM;
	*nput = n;
	if (!n)
		return 0;
	f.magic = XCUDA_UP_PUT_MAGIC;
	f.nr = n;
	ret = xd_up_wr_add(&r->wr, &f, sizeof(f));
	for (i = 0; i < n && !ret; i++)
		ret = xd_up_wr_ext(&r->wr, r->c->arena, &r->gput[i]);
	return ret;
}

/*
 * What the guest changed in its mapped page-locked memory since the
 * server and we last agreed, in XMAP frames, from the shadow.  wlock held.
 */
static int xd_relay_xmap(struct xd_relay *r)
{
	struct xcuda_up_xmap f = { XCUDA_UP_XMAP_MAGIC, 0 };

	return xd_up_map_send(&r->map, r->c->arena, &r->wr, &f, sizeof(f),
			      &f.nr);
}

/*
 * Which pinned extents @req hands to the device: the words of its
 * arguments, and of the small extents it brings (a kernel's parameters,
 * a graph node's), that hold their addresses.  A copy's bytes are data.
 */
static void xd_relay_scan(struct xd_relay *r, const struct xcuda_request *req,
			  unsigned int n)
{
	const struct xd_up_span *s;
	unsigned int i;

	if (!__atomic_load_n(&r->map.npins, __ATOMIC_ACQUIRE))
		return;
	xd_up_map_scan(&r->map, req->args, req->hdr.len < sizeof(req->args) ?
		       req->hdr.len : sizeof(req->args));
	if (req->hdr.op == XCUDA_OP_MEMCPY || req->hdr.op == XCUDA_OP_MEMCPY_2D ||
	    req->hdr.op == XCUDA_OP_ARRAY_COPY)
		return;
	for (i = 0; i < n; i++) {
		s = &r->spans[i];
		if (s->rows == 1 && s->width <= XD_RELAY_SCAN_MAX)
			xd_up_map_scan(&r->map, r->c->arena + s->off, s->width);
	}
}

/* One request and its bytes into the writer: 0 or a negative errno. */
static int xd_relay_forward(struct xd_relay *r, struct xcuda_request *req)
{
	struct xd_chan *c = r->c;
	struct xcuda_up_req f;
	uint64_t total = 0, k;
	unsigned int n, i, nput = 0;
	int ret;

	xd_relay_drop_fd(c, req);
	n = xd_up_spans(req, c->arena_size, XD_UP_IN, r->spans);
	for (i = 0; i < n; i++)
		total += xd_up_span_bytes(&r->spans[i]);
	if (total > UINT32_MAX) {
		xd_log(XD_LOG_WARN, "request id %llu op %u: %llu bytes, more "
		       "than one frame carries: ending the session",
		       (unsigned long long)req->hdr.id, req->hdr.op,
		       (unsigned long long)total);
		return -EMSGSIZE;
	}
	/* Another session's id stays wrong: the server's worker refuses it. */
	req->hdr.session = req->hdr.session == c->session ? r->srv_session : 0;
	ret = xd_relay_queue(r, req);
	if (ret) {
		xd_log(XD_LOG_WARN, "more than %u requests in flight: ending "
		       "the session", XD_RELAY_MAX_Q);
		return ret;
	}
	f.magic = XCUDA_UP_REQ_MAGIC;
	f.in_len = (uint32_t)total;
	f.req = *req;
	/* Mapped memory first: a graph's PUT must be right before its launch. */
	xd_relay_scan(r, req, n);
	ret = xd_relay_xmap(r);
	if (!ret)
		ret = xd_relay_put(r, req, &nput);
	/*
	 * What a host function's completion may have to bring again: a
	 * graph's copies read what its host nodes wrote (a bounce block).
	 */
	if (req->hdr.op == XCUDA_OP_GRAPH_LAUNCH)
		xd_up_hf_forwarded(&r->hf, req, r->gput, nput);
	else
		xd_up_hf_forwarded(&r->hf, req, r->spans, n);
	if (!ret)
		ret = xd_up_wr_add(&r->wr, &f, sizeof(f));
	for (i = 0; i < n && !ret; i++) {
		const struct xd_up_span *s = &r->spans[i];

		for (k = 0; k < s->rows && !ret; k++)
			ret = xd_up_wr_add(&r->wr, c->arena + s->off +
					   k * s->pitch, s->width);
	}
	return ret;
}

/*
 * While the server owes the guest answers, and a little after one came,
 * the guest's next request is near: the sender spins for it rather than
 * sleep, so that the guest need not ring and wake it (on a fast link a
 * wake-up costs as much as the round trip).  As long as the link spins
 * (XCUDA_LINK_SPIN_US: rd.spin_ns, set before the threads start), and
 * XD_RELAY_SPIN_MAX_NS at most in a row: the wait for a long kernel
 * sleeps.
 */
static void xd_relay_spin(struct xd_relay *r)
{
	const uint64_t spin_ns = r->rd.spin_ns;
	struct xd_chan *c = r->c;
	uint64_t now, start, until, last;

	if (!spin_ns || !c->ops->spin)
		return;
	start = now = xr_now_ns();
	while (!xd_flag(&r->link_done)) {
		last = __atomic_load_n(&r->answered, __ATOMIC_RELAXED);
		if (__atomic_load_n(&r->waiting, __ATOMIC_RELAXED))
			until = now + spin_ns;
		else
			until = last + spin_ns;
		if (until > start + XD_RELAY_SPIN_MAX_NS)
			until = start + XD_RELAY_SPIN_MAX_NS;
		if (until <= now || c->ops->spin(c, until))
			return;
		now = xr_now_ns();
	}
}

/* The sending thread: the session's own, until it ends. */
static void xd_relay_send(struct xd_relay *r)
{
	struct xd_chan *c = r->c;
	struct xcuda_request req;
	int flushed = 1, ret;

	while (!xd_flag(&r->link_done)) {
		/* A batch goes once the ring has nothing more right now. */
		if (flushed)
			xd_relay_spin(r);
		/*
		 * Whether more came: a look that does not ask the guest to
		 * ring (a wait with no time would, and cost a poll()).
		 */
		if (!flushed && c->ops->spin && !c->ops->spin(c, 0))
			ret = 0;
		else
			ret = c->ops->next(c, &req,
					   flushed ? XD_RELAY_POLL_MS : 0);
		if (!ret) {
			if (flushed)
				continue;
			flushed = 1;
			pthread_mutex_lock(&r->wlock);
			XD_ARENA_IO_BEGIN();
			ret = xd_up_wr_flush(&r->wr);
			XD_ARENA_IO_END();
			pthread_mutex_unlock(&r->wlock);
			if (ret)
				goto link;
			continue;
		}
		if (ret < 0) {
			if (ret == -EPIPE)
				xd_log(XD_LOG_DEBUG, "guest has gone");
			else
				xd_log(XD_LOG_WARN, "guest broke the ring "
				       "(%s): ending the session",
				       strerror(-ret));
			break;
		}
		flushed = 0;
		pthread_mutex_lock(&r->wlock);
		XD_ARENA_IO_BEGIN();
		ret = xd_relay_forward(r, &req);
		XD_ARENA_IO_END();
		pthread_mutex_unlock(&r->wlock);
		if (ret == -EMSGSIZE || ret == -ENOBUFS)
			break;
		if (ret)
			goto link;
	}
	/* What the guest sent before it went still goes (best effort). */
	if (!flushed && !xd_flag(&r->link_done)) {
		pthread_mutex_lock(&r->wlock);
		XD_ARENA_IO_BEGIN();
		(void)xd_up_wr_flush(&r->wr);
		XD_ARENA_IO_END();
		pthread_mutex_unlock(&r->wlock);
	}
	xd_flag_set(&r->guest_done, 1);
	shutdown(r->fd, SHUT_RDWR);
	return;
link:
	/* The receiver answers what is outstanding, and says why. */
	xd_flag_set(&r->send_err, ret);
	shutdown(r->fd, SHUT_RDWR);
}

/*
 * The watcher's: a completion the guest stored, to the server, with the
 * arena bytes of @sp as they are now.
 */
static int xd_relay_send_done(void *arg, const struct xcuda_up_done *d,
			      const struct xd_up_span *sp)
{
	struct xd_relay *r = arg;
	unsigned int i;
	int ret;

	pthread_mutex_lock(&r->wlock);
	XD_ARENA_IO_BEGIN();
	/* The function may have written mapped memory too. */
	ret = xd_relay_xmap(r);
	if (!ret)
		ret = xd_up_wr_add(&r->wr, d, sizeof(*d));
	for (i = 0; i < d->nr_ext && !ret; i++)
		ret = xd_up_wr_ext(&r->wr, r->c->arena, &sp[i]);
	if (!ret)
		ret = xd_up_wr_flush(&r->wr);
	XD_ARENA_IO_END();
	pthread_mutex_unlock(&r->wlock);
	if (ret) {
		/* The receiver answers what is outstanding, and says why. */
		xd_flag_set(&r->send_err, ret);
		shutdown(r->fd, SHUT_RDWR);
	}
	return ret;
}

/* ---- server -> guest ---- */

/*
 * The link is gone: answers every request outstanding, oldest first, so
 * that no guest thread waits for an answer that cannot come.
 */
static void xd_relay_lost(struct xd_relay *r, int err, const char *why)
{
	struct xd_chan *c = r->c;
	struct xcuda_response rsp;
	struct xd_rq *q = NULL;
	unsigned int n, i;

	if (xd_flag(&r->guest_done))
		return;		/* nobody is waiting */
	xd_flag_set(&r->link_done, 1);
	if (xd_flag(&r->send_err))
		err = xd_flag(&r->send_err);
	/* The sender may still add one: those taken now are answered. */
	pthread_mutex_lock(&r->lock);
	n = r->qlen;
	if (n)
		q = malloc(n * sizeof(*q));
	for (i = 0; q && i < n; i++)
		q[i] = r->q[(r->qhead + i) % r->qcap];
	pthread_mutex_unlock(&r->lock);
	if (!q)
		n = 0;
	xd_log(XD_LOG_WARN, "upstream %s lost (%s%s%s): ending the session, "
	       "%u request%s answered cudaErrorDevicesUnavailable", r->addr,
	       why, err ? ": " : "", err ? strerror(-err) : "", n,
	       n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		memset(&rsp, 0, sizeof(rsp));
		rsp.id = q[i].id;
		rsp.op = q[i].op;
		rsp.flags = q[i].flags;
		rsp.status = cudaErrorDevicesUnavailable;
		if (c->ops->reply(c, &rsp, i + 1 < n) < 0)
			break;
	}
	free(q);
	shutdown(r->fd, SHUT_RDWR);
}

/* Whether the frame after this one is an answer, buffered already. */
static int xd_relay_answer_next(const struct xd_relay *r)
{
	const struct xcuda_up_rsp *n = xd_up_rd_peek(&r->rd, sizeof(*n));
	uint32_t magic;

	if (!n)
		return 0;
	memcpy(&magic, &n->magic, sizeof(magic));
	return magic == XCUDA_UP_RSP_MAGIC;
}

/*
 * A GEXT frame after its first 8 bytes (@head): the spans an exec's
 * copies read, checked against the arena and the caps, into the table.
 * 0 or -EPROTO.
 */
static int xd_relay_gext(struct xd_relay *r, const void *head)
{
	struct xcuda_up_gext g;
	struct xcuda_up_ext e;
	struct xd_up_span *v = NULL;
	unsigned int i;
	int ret;

	memcpy(&g, head, 8);
	ret = xd_up_rd_read(&r->rd, (uint8_t *)&g + 8, sizeof(g) - 8,
			    XD_UP_STALL_MS);
	if (ret)
		return ret == -EPIPE ? -EPROTO : ret;
	if (g.rsvd || g.nr > XCUDA_UP_GEXT_MAX)
		return -EPROTO;
	if (g.nr) {
		v = malloc(g.nr * sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	for (i = 0; i < g.nr && !ret; i++) {
		ret = xd_up_rd_read(&r->rd, &e, sizeof(e), XD_UP_STALL_MS);
		v[i] = (struct xd_up_span){ e.off, e.width, e.pitch, e.rows };
		if (!ret && !xd_up_span_ok(&v[i], r->c->arena_size))
			ret = -EPROTO;
		/* As the server sends them: one row's pitch is its width. */
		if (!ret && v[i].rows == 1 && v[i].pitch != v[i].width)
			ret = -EPROTO;
	}
	if (!ret) {
		pthread_mutex_lock(&r->lock);
		ret = xd_up_gtab_set(&r->gtab, g.exec, v, g.nr);
		pthread_mutex_unlock(&r->lock);
		/* The server keeps within the caps: one that does not lies. */
		if (ret == -E2BIG)
			ret = -EPROTO;
	}
	free(v);
	return ret == -EPIPE ? -EPROTO : ret;
}

/*
 * What an answer says of mapped memory: where the guest's arena is, if
 * the server maps its copy at the same address (else nothing is mapped),
 * and the pinned extents.
 */
static int xd_relay_pins(struct xd_relay *r, const struct xd_rq *q,
			 const struct xcuda_response *rsp)
{
	struct xcuda_open_res o;

	if (rsp->status)
		return 0;
	switch (q->op) {
	case XCUDA_OP_OPEN:
		memcpy(&o, rsp->out, sizeof(o));
		xd_up_map_set_va(&r->map, o.features & XCUDA_FEAT_SAME_VA ?
				 q->moff : 0);
		return 0;
	case XCUDA_OP_ARENA_PIN:
		return xd_up_map_pin(&r->map, q->moff, q->mlen);
	case XCUDA_OP_ARENA_UNPIN:
		xd_up_map_unpin(&r->map, q->moff);
		return 0;
	}
	return 0;
}

/* One frame from the server: 0, or 1 once the session is over. */
static int xd_relay_frame(struct xd_relay *r)
{
	struct xd_chan *c = r->c;
	struct xcuda_up_rsp f;
	struct xcuda_up_ext e;
	struct xd_up_span s;
	unsigned int i, qlen;
	uint64_t k;
	struct xd_rq q;
	int ret, mapped;

	/* Magic and count (or slot) first: a record is shorter. */
	ret = xd_up_rd_read(&r->rd, &f, 8, XD_UP_STALL_MS);
	if (!ret && f.magic == XCUDA_UP_GEXT_MAGIC) {
		ret = xd_relay_gext(r, &f);
		if (ret)
			xd_relay_lost(r, ret, "a graph's extents");
		return !!ret;
	}
	if (ret == -EPIPE) {
		pthread_mutex_lock(&r->lock);
		qlen = r->qlen;
		pthread_mutex_unlock(&r->lock);
		/* After CLOSE the server's worker ends: nothing is lost. */
		if (!qlen && !xd_flag(&r->send_err) &&
		    (r->closed || xd_flag(&r->guest_done))) {
			xd_log(XD_LOG_DEBUG, "upstream closed the session");
			xd_flag_set(&r->link_done, 1);
			return 1;
		}
		xd_relay_lost(r, 0, "the server closed the connection");
		return 1;
	}
	if (ret) {
		xd_relay_lost(r, ret, "reading an answer");
		return 1;
	}
	if (f.magic == XCUDA_UP_REC_MAGIC) {
		struct xcuda_up_rec rec;

		memcpy(&rec, &f, 8);
		ret = xd_up_rd_read(&r->rd, (uint8_t *)&rec + 8,
				    sizeof(rec) - 8, XD_UP_STALL_MS);
		if (!ret) {
			XD_ARENA_IO_BEGIN();
			ret = xd_up_hf_record(&r->hf, &rec, &r->rd);
			XD_ARENA_IO_END();
		}
		if (ret) {
			xd_relay_lost(r, ret == -EPIPE ? -EPROTO : ret,
				      "a host function's record");
			return 1;
		}
		return 0;
	}
	if ((f.magic != XCUDA_UP_RSP_MAGIC && f.magic != XCUDA_UP_DATA_MAGIC) ||
	    f.nr_out > XCUDA_UP_MAX_OUT) {
		xd_relay_lost(r, -EPROTO, "a malformed answer");
		return 1;
	}
	ret = xd_up_rd_read(&r->rd, (uint8_t *)&f + 8, sizeof(f) - 8,
			    XD_UP_STALL_MS);
	if (ret) {
		xd_relay_lost(r, ret == -EPIPE ? -EPROTO : ret,
			      "reading an answer");
		return 1;
	}
	for (i = 0; i < f.nr_out; i++) {
		ret = xd_up_rd_read(&r->rd, &e, sizeof(e), XD_UP_STALL_MS);
		s = (struct xd_up_span){ e.off, e.width, e.pitch, e.rows };
		if (!ret && !xd_up_span_ok(&s, c->arena_size))
			ret = -EPROTO;
		/* Into the shadow too, before a diff can see them. */
		mapped = !ret && xd_up_map_any(&r->map);
		if (mapped)
			xd_up_map_lock(&r->map);
		XD_ARENA_IO_BEGIN();
		for (k = 0; k < s.rows && !ret; k++)
			ret = xd_up_rd_read(&r->rd, c->arena + s.off +
					    k * s.pitch, s.width,
					    XD_UP_STALL_MS);
		if (mapped && !ret)
			xd_up_map_mirror_locked(&r->map, c->arena, &s);
		XD_ARENA_IO_END();
		if (mapped)
			xd_up_map_unlock(&r->map);
		if (ret) {
			xd_relay_lost(r, ret == -EPIPE ? -EPROTO : ret,
				      "an answer's extents");
			return 1;
		}
	}
	if (f.magic == XCUDA_UP_DATA_MAGIC)
		return 0;
	pthread_mutex_lock(&r->lock);
	ret = -EPROTO;
	if (r->qlen) {
		q = r->q[r->qhead];
		if (q.id == f.rsp.id && q.op == f.rsp.op &&
		    (f.rsp.flags & ~XCUDA_RSPF_OUTPUT) == q.flags) {
			r->qhead = (r->qhead + 1) % r->qcap;
			r->qlen--;
			__atomic_store_n(&r->waiting, r->qlen,
					 __ATOMIC_RELAXED);
			ret = 0;
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (ret) {
		xd_relay_lost(r, ret, "an answer to no request");
		return 1;
	}
	if (q.op == XCUDA_OP_HOSTFN_SETUP && !f.rsp.status) {
		ret = xd_up_hf_setup(&r->hf, q.hf_off, q.hf_len);
		if (ret) {
			xd_relay_lost(r, ret, ret == -EPROTO ? "it accepted a "
				      "bad HOSTFN_SETUP" : "host functions");
			return 1;
		}
	}
	if (q.op == XCUDA_OP_HOST_FUNC_LAUNCH ||
	    q.op == XCUDA_OP_STREAM_ADD_CALLBACK) {
		uint32_t graph;

		memcpy(&graph, f.rsp.out, sizeof(graph));
		xd_up_hf_answered(&r->hf, q.hf_off, f.rsp.status != 0,
				  !f.rsp.status && graph);
	}
	if (f.rsp.op == XCUDA_OP_CLOSE && !f.rsp.status)
		r->closed = 1;
	ret = xd_relay_pins(r, &q, &f.rsp);
	if (ret) {
		xd_relay_lost(r, ret, "out of memory");
		return 1;
	}
	/*
	 * The guest's bell can wait for the rest of the batch, but only
	 * when its next answer is here already: a bell held back is rung
	 * by the next reply (or by the sender's next wait, which may be far).
	 */
	ret = c->ops->reply(c, &f.rsp, xd_relay_answer_next(r));
	if (r->rd.spin_ns)
		__atomic_store_n(&r->answered, xr_now_ns(), __ATOMIC_RELAXED);
	if (ret < 0) {
		if (ret != -EPIPE)
			xd_log(XD_LOG_WARN, "cannot answer the guest (%s): "
			       "ending the session", strerror(-ret));
		xd_flag_set(&r->guest_done, 1);
		shutdown(r->fd, SHUT_RDWR);
		return 1;
	}
	return 0;
}

static void *xd_relay_recv(void *arg)
{
	struct xd_relay *r = arg;
	uint64_t since, now;
	unsigned int qlen;
	int w;

	for (;;) {
		if (xd_flag(&r->guest_done))
			break;
		w = xd_up_rd_wait(&r->rd, XD_RELAY_POLL_MS);
		if (w < 0) {
			xd_relay_lost(r, w, "waiting for answers");
			break;
		}
		if (w > 0) {
			if (xd_relay_frame(r))
				break;
			continue;
		}
		if (xd_flag(&r->send_err)) {
			xd_relay_lost(r, 0, "sending a request");
			break;
		}
		if (!r->timeout_ns)
			continue;
		pthread_mutex_lock(&r->lock);
		qlen = r->qlen;
		since = r->busy_since;
		pthread_mutex_unlock(&r->lock);
		/* Bytes it sent, or took from us: the server is there. */
		if (since < r->rd.last)
			since = r->rd.last;
		now = __atomic_load_n(&r->wr.last, __ATOMIC_RELAXED);
		if (since < now)
			since = now;
		now = xr_now_ns();
		if (qlen && now > since && now - since > r->timeout_ns) {
			xd_relay_lost(r, 0, "no answer in time");
			break;
		}
	}
	return NULL;
}

/* ---- the session ---- */

/* The guest's ring and the link, for the log: requests and syscalls. */
static void xd_relay_counters(struct xd_relay *r)
{
	char buf[160];

	xd_log_counters(r->c);
	xd_up_counters(&r->rd, &r->wr, buf, sizeof(buf));
	xd_log(XD_LOG_INFO, "counters: %s", buf);
}

static uint64_t xd_relay_timeout(void)
{
	unsigned long long s = XD_RELAY_TIMEOUT_S;

	if (xcuda_env_uint(XD_RELAY_TIMEOUT_ENV, 86400, &s) < 0) {
		xd_log(XD_LOG_WARN, "bad %s: %d s", XD_RELAY_TIMEOUT_ENV,
		       XD_RELAY_TIMEOUT_S);
		s = XD_RELAY_TIMEOUT_S;
	}
	return (uint64_t)s * 1000000000u;
}

int xd_relay_run(struct xd_chan *c, const struct xd_upstream *up)
{
	struct xd_relay *r = calloc(1, sizeof(*r));
	pthread_t rx;
	int ret = 1;

	if (!r) {
		xd_log(XD_LOG_ERROR, "out of memory");
		c->ops->close(c);
		return 1;
	}
	r->c = c;
	r->fd = -1;
	r->addr = up->addr;
	r->timeout_ns = xd_relay_timeout();
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->wlock, NULL);
	xd_up_map_init(&r->map, c->arena_size);
	xd_up_hf_init(&r->hf, c, xd_relay_send_done, r);
	xd_log(XD_LOG_DEBUG, "relaying to %s, arena %llu bytes", up->addr,
	       (unsigned long long)c->arena_size);
	if (xd_relay_open(r, up)) {
		xd_relay_refuse(c);
		goto out;
	}
	if (xd_up_rd_init(&r->rd, r->fd, XD_RELAY_RD_BUF) ||
	    xd_up_wr_init(&r->wr, r->fd, XD_RELAY_WR_BUF, XD_RELAY_IOV,
			  XD_UP_STALL_MS) ||
	    pthread_create(&rx, NULL, xd_relay_recv, r)) {
		xd_log(XD_LOG_ERROR, "cannot start relaying: out of memory");
		xd_relay_refuse(c);
		goto out;
	}
	xd_relay_send(r);
	pthread_join(rx, NULL);
	ret = 0;
	xd_relay_counters(r);
out:
	/* Before the guest's arena goes: the watcher reads it. */
	xd_up_hf_fini(&r->hf);
	c->ops->close(c);
	if (r->fd >= 0)
		close(r->fd);
	xd_up_rd_fini(&r->rd);
	xd_up_wr_fini(&r->wr);
	free(r->q);
	xd_up_gtab_fini(&r->gtab);
	free(r->gput);
	xd_up_map_fini(&r->map);
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->wlock);
	free(r);
	xd_log(XD_LOG_DEBUG, "session ended");
	return ret;
}
