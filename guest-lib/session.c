// SPDX-License-Identifier: MIT
/*
 * The guest process's session with its xcudad worker: opening it on first
 * use, request ids, posted and synchronous calls, and the checks applied
 * to every response (the peer is not trusted: an answer must match a
 * request in flight, with a sane size and status, or the session ends).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest.h"
#include "hostfn.h"

/* Errors CUDA reports fit well below this; anything else is garbage. */
#define XC_STATUS_MAX 100000

static pthread_mutex_t xc_open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_session *xc_sess;
static cudaError_t xc_open_err;
static int xc_opened;

static void xc_atfork_child(void)
{
	/*
	 * The child shares the parent's ring and arena: it must never use
	 * them.  It gets a session of its own on its first call.
	 */
	xc_sess = NULL;
	xc_opened = 0;
	xc_open_err = cudaSuccess;
	pthread_mutex_init(&xc_open_lock, NULL);
}

static uint64_t xc_env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || *end)
		return def;
	return x;
}

static void xc_session_dead(struct xc_session *s, int err)
{
	static int said;

	if (!s->dead)
		xc_warn_once(&said, "lost the connection to xcudad (%s)",
			     strerror(-err));
	s->dead = cudaErrorDevicesUnavailable;
}

/* Takes answers off the ring and files them.  Lock held. */
static int xc_pump_locked(struct xc_session *s, int timeout_ms)
{
	struct xcuda_response rsp[32];
	unsigned int slots = s->t.ring_slots;
	int n, i;

	if (s->dead)
		return -EPIPE;
	n = s->t.ops->receive(&s->t, rsp, 32, timeout_ms);
	if (n < 0) {
		xc_session_dead(s, n);
		return n;
	}
	for (i = 0; i < n; i++) {
		struct xcuda_response *r = &rsp[i];
		struct xc_pending *p = &s->pending[r->id % slots];

		/*
		 * A cudaError_t from the worker, or a negative errno from
		 * xcuda-back (which answers some requests by itself).
		 */
		if (p->state != XC_P_WAIT || p->id != r->id ||
		    p->op != r->op || r->len > XCUDA_RSP_INLINE ||
		    r->status <= -4096 || r->status >= XC_STATUS_MAX) {
			xc_log("malformed answer from xcudad (id %llu op %u)",
			       (unsigned long long)r->id, r->op);
			xc_session_dead(s, -EPROTO);
			return -EPROTO;
		}
		/* Taken at the end of a synchronous call (output.c). */
		if (r->flags & XCUDA_RSPF_OUTPUT)
			xc_output_note(s);
		if (r->status < 0)
			r->status = xc_errno_to_cuda(r->status);
		if (xc_error_sticky(r->status))
			s->sticky = r->status;
		if (p->staging != UINT64_MAX)
			xc_arena_release(s->staging, p->staging);
		p->staging = UINT64_MAX;
		s->inflight--;
		if (p->posted) {
			if (r->status && !s->latched)
				s->latched = r->status;
			p->state = XC_P_FREE;
		} else {
			p->rsp = *r;
			p->state = XC_P_DONE;
		}
	}
	return n;
}

cudaError_t xc_send_locked(struct xc_session *s, struct xcuda_request *req,
			   uint64_t staging, uint64_t *id)
{
	struct xc_pending *p;
	int err;

	if (s->dead)
		goto dead;
	/* Managed memory the device may read or write: one branch if none. */
	xc_managed_before_send(s, req);
	if (s->dead)
		goto dead;
	if (s->ntwins)
		xc_twin_push_locked(s);
	req->hdr.id = s->next_id;
	req->hdr.session = s->t.session;
	p = &s->pending[req->hdr.id % s->t.ring_slots];
	/* The slot's previous request must have been answered. */
	while (p->state == XC_P_WAIT)
		if (xc_pump_locked(s, -1) < 0)
			goto dead;
	if (p->state != XC_P_FREE) {
		xc_log("internal error: answer %llu never collected",
		       (unsigned long long)p->id);
		abort();
	}
	err = s->t.ops->submit(&s->t, req, 1);
	if (err) {
		xc_session_dead(s, err);
		goto dead;
	}
	s->next_id++;
	s->inflight++;
	p->id = req->hdr.id;
	p->op = req->hdr.op;
	p->posted = !!(req->hdr.flags & XCUDA_RF_POSTED);
	p->staging = staging;
	p->state = XC_P_WAIT;
	if (id)
		*id = req->hdr.id;
	return cudaSuccess;
dead:
	if (staging != UINT64_MAX)
		xc_arena_release(s->staging, staging);
	return s->dead;
}

cudaError_t xc_wait_locked(struct xc_session *s, uint64_t id,
			   struct xcuda_response *rsp)
{
	struct xc_pending *p = &s->pending[id % s->t.ring_slots];

	while (p->state == XC_P_WAIT && p->id == id)
		if (xc_pump_locked(s, -1) < 0)
			return s->dead;
	if (p->state != XC_P_DONE || p->id != id)
		return cudaErrorUnknown;
	*rsp = p->rsp;
	p->state = XC_P_FREE;
	if (s->ntwins)
		xc_twin_pull_locked(s);
	/* Device output reaches the program before the call returns. */
	xc_output_drain_locked(s);
	return cudaSuccess;
}

cudaError_t xc_take_latched(struct xc_session *s)
{
	cudaError_t err = s->latched;

	s->latched = cudaSuccess;
	return err;
}

cudaError_t xc_round_trip_locked(struct xc_session *s,
				 struct xcuda_request *req, void *res,
				 size_t res_len)
{
	struct xcuda_response rsp;
	cudaError_t err;
	uint64_t id;

	err = xc_send_locked(s, req, UINT64_MAX, &id);
	if (err)
		return err;
	err = xc_wait_locked(s, id, &rsp);
	if (err)
		return err;
	if (res && res_len) {
		/* Short answers read as zeros, never as stale bytes. */
		memset(res, 0, res_len);
		memcpy(res, rsp.out, rsp.len < res_len ? rsp.len : res_len);
	}
	return (cudaError_t)rsp.status;
}

cudaError_t xc_call_locked(struct xc_session *s, struct xcuda_request *req,
			   void *res, size_t res_len)
{
	cudaError_t err = xc_round_trip_locked(s, req, res, res_len);

	if (!err)
		err = xc_take_latched(s);
	else if (err == s->latched)
		/* A sticky error: the call reported it, once is enough. */
		s->latched = cudaSuccess;
	return err;
}

cudaError_t xc_call(struct xc_session *s, struct xcuda_request *req,
		    void *res, size_t res_len)
{
	cudaError_t err;

	pthread_mutex_lock(&s->lock);
	err = xc_call_locked(s, req, res, res_len);
	pthread_mutex_unlock(&s->lock);
	return err;
}

cudaError_t xc_post_locked(struct xc_session *s, struct xcuda_request *req,
			   uint64_t staging)
{
	/*
	 * A broken context refuses work at once, as CUDA's does: the call
	 * answers the error rather than a later synchronisation.
	 */
	if (s->sticky) {
		if (staging != UINT64_MAX)
			xc_arena_release(s->staging, staging);
		return s->sticky;
	}
	req->hdr.flags |= XCUDA_RF_POSTED;
	return xc_send_locked(s, req, staging, NULL);
}

void xc_req_init(struct xcuda_request *req, uint16_t op, uint16_t len)
{
	memset(&req->hdr, 0, sizeof(req->hdr));
	req->hdr.op = op;
	req->hdr.len = len;
	req->hdr.device = (uint16_t)xc_cur_device();
}

uint64_t xc_staging_get(struct xc_session *s, uint64_t want, uint64_t min,
			uint64_t *got)
{
	for (;;) {
		uint64_t size, off;

		for (size = want; size >= min && size; size /= 2) {
			off = xc_arena_alloc(s->staging, size, 64);
			if (off != UINT64_MAX) {
				*got = size;
				return off;
			}
			if (size == min)
				break;
			if (size / 2 < min)
				size = 2 * min;
		}
		/* Answers in flight give their staging blocks back. */
		if (!s->inflight || xc_pump_locked(s, -1) < 0)
			return UINT64_MAX;
	}
}

int xc_in_arena(struct xc_session *s, const void *p, size_t len,
		uint64_t *off)
{
	uintptr_t a = (uintptr_t)s->t.arena, v = (uintptr_t)p;

	if (v < a || !xcuda_extent_ok(v - a, len, s->t.arena_size))
		return 0;
	*off = v - a;
	return 1;
}

static int xc_transport_open(struct xc_transport *t)
{
	const char *which = getenv("XCUDA_TRANSPORT");
	struct xc_transport_opts o = { 0 };
	struct stat st;

	o.arena_size = xc_env_u64("XCUDA_ARENA_MB", 0) << 20;
	o.ring_order = (unsigned int)xc_env_u64("XCUDA_RING_ORDER", 0);
	if (!which || !*which)
		which = stat("/dev/xcuda", &st) ? "local" : "xen";
	if (!strcmp(which, "local"))
		return xc_local_open(t, &o);
	if (!strcmp(which, "xen"))
		return xc_xen_open(t, &o);
	xc_log("unknown transport '%s' (XCUDA_TRANSPORT: local or xen)",
	       which);
	return -ENOTSUP;
}

static cudaError_t xc_session_open(struct xc_session **out)
{
	struct xcuda_open_args args;
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err;
	uint64_t stage;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return cudaErrorMemoryAllocation;
	pthread_mutex_init(&s->lock, NULL);
	ret = xc_transport_open(&s->t);
	if (ret) {
		xc_log("cannot reach xcudad: %s", strerror(-ret));
		free(s);
		return cudaErrorNoDevice;
	}
	s->pending = calloc(s->t.ring_slots, sizeof(*s->pending));
	stage = xc_env_u64("XCUDA_STAGING_MB", XC_STAGING_DEFAULT >> 20) << 20;
	if (stage > s->t.arena_size / 4)
		stage = s->t.arena_size / 4;
	stage &= ~(uint64_t)(XCUDA_PAGE_SIZE - 1);
	s->staging_size = stage;
	s->chunk = xc_env_u64("XCUDA_CHUNK_KB", XC_CHUNK_DEFAULT >> 10) << 10;
	if (s->chunk > stage / 4)
		s->chunk = stage / 4;
	s->staging = xc_arena_new(0, stage);
	s->heap = xc_arena_new(stage, s->t.arena_size - stage);
	if (!s->pending || !s->staging || !s->heap || !s->chunk) {
		err = cudaErrorMemoryAllocation;
		goto fail;
	}
	for (unsigned int i = 0; i < s->t.ring_slots; i++)
		s->pending[i].staging = UINT64_MAX;

	args = (struct xcuda_open_args){ XCUDA_PROTO_VERSION,
					 XCUDA_FEATURES_ALL,
					 s->t.arena_size,
					 (uintptr_t)s->t.arena };
	xc_req_open(&req, &args);
	err = xc_call(s, &req, &s->info, sizeof(s->info));
	if (!err && (s->info.version < XCUDA_PROTO_MIN_VERSION ||
		     s->info.version > XCUDA_PROTO_VERSION ||
		     (s->info.features & ~XCUDA_FEATURES_ALL) ||
		     s->info.device_count < -1 ||
		     s->info.device_count > XCUDA_MAX_DEVICES ||
		     s->info.init_status < 0 ||
		     s->info.init_status >= XC_STATUS_MAX))
		err = cudaErrorDevicesUnavailable;
	if (err) {
		xc_log("xcudad refused the session: %s", xc_error_name(err));
		goto fail;
	}
	if (!s->info.init_status && s->info.device_count < 0)
		s->info.device_count = 0;
	if (!s->info.init_status &&
	    (s->info.features & XCUDA_FEAT_PINNED_ARENA)) {
		struct xcuda_arena_pin_args pin = { 0, 0 };

		/* Staged copies then go straight from pinned memory. */
		xc_req_arena_pin(&req, &pin);
		req.hdr.data_off = 0;
		req.hdr.data_len = (uint32_t)stage;
		xc_call(s, &req, NULL, 0);
	}
	*out = s;
	return cudaSuccess;
fail:
	s->t.ops->close(&s->t);
	xc_arena_free_all(s->staging);
	xc_arena_free_all(s->heap);
	free(s->pending);
	free(s);
	return err;
}

static struct xc_session *xc_session_any(cudaError_t *err)
{
	struct xc_session *s = __atomic_load_n(&xc_sess, __ATOMIC_ACQUIRE);
	static int atfork_done;

	/*
	 * A host function may not call CUDA: the worker may be blocked on
	 * the very stream that waits for it.
	 */
	if (xc_hostfn_on_runner()) {
		*err = cudaErrorNotPermitted;
		return NULL;
	}
	if (s) {
		*err = cudaSuccess;
		return s;
	}
	pthread_mutex_lock(&xc_open_lock);
	if (!atfork_done) {
		pthread_atfork(NULL, NULL, xc_atfork_child);
		atfork_done = 1;
	}
	if (!xc_opened) {
		xc_opened = 1;
		xc_open_err = xc_session_open(&s);
		if (!xc_open_err)
			__atomic_store_n(&xc_sess, s, __ATOMIC_RELEASE);
	}
	s = xc_sess;
	*err = s ? cudaSuccess : xc_open_err;
	pthread_mutex_unlock(&xc_open_lock);
	return s;
}

/*
 * Threads that called the runtime: natively the runtime makes its
 * device's primary context current on the thread, which the driver API
 * then sees (guest-lib/driver).  The driver's own calls do not count.
 */
static __thread unsigned int xc_rt_called;

unsigned int xc_runtime_called(void)
{
	return xc_rt_called;
}

/*
 * Epochs of the state other guest libraries keep copies of: a primary
 * context's state and flags (reset, flags set), and the streams (one
 * destroyed, whose handle a new stream may take again).
 */
static unsigned int xc_ctx_gen, xc_stream_gen;

void xc_ctx_changed(void)
{
	__atomic_add_fetch(&xc_ctx_gen, 1, __ATOMIC_RELEASE);
}

unsigned int xc_ctx_epoch(void)
{
	return __atomic_load_n(&xc_ctx_gen, __ATOMIC_ACQUIRE);
}

void xc_stream_gone(void)
{
	__atomic_add_fetch(&xc_stream_gen, 1, __ATOMIC_RELEASE);
}

unsigned int xc_stream_epoch(void)
{
	return __atomic_load_n(&xc_stream_gen, __ATOMIC_ACQUIRE);
}

struct xc_session *xc_session_get(cudaError_t *err)
{
	xc_rt_called++;
	return xc_session_any(err);
}

struct xc_session *xc_session_peek(void)
{
	return __atomic_load_n(&xc_sess, __ATOMIC_ACQUIRE);
}

/* Both sizes come from a typed wrapper; a mismatch is our own bug. */
static int xc_sizes_ok(uint16_t op, size_t args_len, size_t res_len)
{
	const struct xcuda_call_info *c = xcuda_call(op);

	if (c && args_len == c->args_size && res_len <= c->res_size)
		return 1;
	xc_log("internal error: op %u sized %zu/%zu", op, args_len, res_len);
	return 0;
}

/* The session a call of @op goes over, or NULL with *@err set. */
static struct xc_session *xc_session_for(uint16_t op, size_t args_len,
					 size_t res_len, cudaError_t *err)
{
	struct xc_session *s = xcuda_call(op) &&
			       (xcuda_call(op)->flags & XCUDA_CF_DRIVER) ?
			       xc_session_any(err) : xc_session_get(err);

	if (s && !xc_sizes_ok(op, args_len, res_len)) {
		*err = cudaErrorUnknown;
		return NULL;
	}
	return s;
}

static void xc_req_fill(struct xcuda_request *req, uint16_t op,
			const void *args, size_t args_len)
{
	xc_req_init(req, op, (uint16_t)args_len);
	if (args_len)
		memcpy(req->args, args, args_len);
}

cudaError_t xc_forward(uint16_t op, const void *args, size_t args_len,
		       void *res, size_t res_len)
{
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err;

	s = xc_session_for(op, args_len, res_len, &err);
	if (!s)
		return xc_ret(err);
	xc_req_fill(&req, op, args, args_len);
	err = xc_call(s, &req, res, res_len);
	return xc_ret(err);
}

cudaError_t xc_post(uint16_t op, const void *args, size_t args_len)
{
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err;

	s = xc_session_for(op, args_len, 0, &err);
	if (!s)
		return xc_ret(err);
	xc_req_fill(&req, op, args, args_len);
	pthread_mutex_lock(&s->lock);
	err = xc_post_locked(s, &req, UINT64_MAX);
	pthread_mutex_unlock(&s->lock);
	return xc_ret(err);
}

uint64_t xc_strsize(const char *str, uint64_t max)
{
	size_t n;

	if (!str)
		return 0;
	n = strnlen(str, max);
	return n < max ? n + 1 : UINT64_MAX;
}

uint64_t xc_bufsize(const void *p, long long len, uint64_t max)
{
	if (!p || len <= 0)
		return 0;
	return (uint64_t)len < max ? (uint64_t)len : max;
}

uint64_t xc_arraysize(const void *p, long long count, size_t size,
		      uint64_t max)
{
	if (!p || count <= 0)
		return 0;
	if ((unsigned long long)count > max / size)
		return UINT64_MAX;
	return (uint64_t)count * size;
}

/*
 * The round trip of xc_forward_xfer() and xc_drv_forward_xfer(): @own
 * answers the call's own status (the driver API's), else the runtime's
 * (an error latched by an earlier posted call comes first).  Nothing is
 * recorded as the thread's last error here.
 */
static cudaError_t xc_xfer_call(uint16_t op, void *args, size_t args_len,
				void *res, size_t res_len, struct xc_xfer *x,
				unsigned int n, int own)
{
	uint64_t off[XC_XFER_MAX], got;
	void *bounce[XC_XFER_MAX] = { 0 }, *user[XC_XFER_MAX];
	int filled[XC_XFER_MAX] = { 0 };
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err;
	unsigned int i, staged = 0;

	s = xc_session_for(op, args_len, res_len, &err);
	if (!s)
		return err;
	if (n > XC_XFER_MAX)
		return cudaErrorUnknown;
	for (i = 0; i < n; i++)
		if (x[i].len == UINT64_MAX || x[i].len > UINT32_MAX)
			return cudaErrorInvalidValue;
	/*
	 * Managed memory may fault, which must not happen under the lock
	 * (managed.c): such a buffer goes through a private copy.
	 */
	for (i = 0; i < n; i++) {
		user[i] = x[i].ptr;
		if (!x[i].ptr || !x[i].len ||
		    !xc_managed_is(x[i].ptr, x[i].len))
			continue;
		bounce[i] = malloc(x[i].len);
		if (!bounce[i]) {
			err = cudaErrorMemoryAllocation;
			goto unbounce;
		}
		if (x[i].dir & XC_XFER_IN)
			memcpy(bounce[i], x[i].ptr, x[i].len);
		x[i].ptr = bounce[i];
	}
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < n; i++, staged++) {
		*x[i].ext = (struct xcuda_extent){ 0, 0 };
		off[i] = UINT64_MAX;
		if (!x[i].ptr || !x[i].len)
			continue;
		off[i] = xc_staging_get(s, x[i].len, x[i].len, &got);
		if (off[i] == UINT64_MAX) {
			err = cudaErrorMemoryAllocation;
			goto out;
		}
		*x[i].ext = (struct xcuda_extent){ (uint32_t)off[i],
						   (uint32_t)x[i].len };
		if (x[i].dir & XC_XFER_IN)
			memcpy(xc_arena_ptr(s, off[i]), x[i].ptr, x[i].len);
		else
			memset(xc_arena_ptr(s, off[i]), 0, x[i].len);
	}
	xc_req_fill(&req, op, args, args_len);
	err = own ? xc_round_trip_locked(s, &req, res, res_len) :
		    xc_call_locked(s, &req, res, res_len);
	/* Outputs are the worker's only if it answered. */
	for (i = 0; !s->dead && i < n; i++)
		if (off[i] != UINT64_MAX && (x[i].dir & XC_XFER_OUT) &&
		    (!err || (x[i].dir & XC_XFER_KEEP))) {
			memcpy(x[i].ptr, xc_arena_ptr(s, off[i]), x[i].len);
			filled[i] = 1;
		}
out:
	for (i = 0; i < staged; i++)
		if (off[i] != UINT64_MAX)
			xc_arena_release(s->staging, off[i]);
	pthread_mutex_unlock(&s->lock);
unbounce:
	for (i = 0; i < n; i++) {
		if (!bounce[i])
			continue;
		if (filled[i])
			memcpy(user[i], bounce[i], x[i].len);
		x[i].ptr = user[i];
		free(bounce[i]);
	}
	return err;
}

cudaError_t xc_forward_xfer(uint16_t op, void *args, size_t args_len,
			    void *res, size_t res_len, struct xc_xfer *x,
			    unsigned int n)
{
	return xc_ret(xc_xfer_call(op, args, args_len, res, res_len, x, n, 0));
}

int xc_drv_forward_xfer(uint16_t op, void *args, size_t args_len,
			void *res, size_t res_len, struct xc_xfer *x,
			unsigned int n)
{
	return xc_xfer_call(op, args, args_len, res, res_len, x, n, 1);
}

int xc_drv_forward(uint16_t op, const void *args, size_t args_len,
		   void *res, size_t res_len)
{
	struct xcuda_request req;
	struct xc_session *s;
	cudaError_t err;

	s = xc_session_for(op, args_len, res_len, &err);
	if (!s)
		return err;
	xc_req_fill(&req, op, args, args_len);
	pthread_mutex_lock(&s->lock);
	err = xc_round_trip_locked(s, &req, res, res_len);
	pthread_mutex_unlock(&s->lock);
	return err;
}

void xc_poll_latched(void)
{
	struct xc_session *s = __atomic_load_n(&xc_sess, __ATOMIC_ACQUIRE);

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	while (s->inflight && xc_pump_locked(s, 0) > 0)
		;
	xc_ret(xc_take_latched(s));
	pthread_mutex_unlock(&s->lock);
}

cudaError_t xc_ready(struct xc_session **out)
{
	cudaError_t err;

	*out = xc_session_get(&err);
	if (!*out)
		return err;
	if ((*out)->dead)
		return (*out)->dead;
	return (cudaError_t)(*out)->info.init_status;
}
