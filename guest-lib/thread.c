// SPDX-License-Identifier: MIT
/*
 * Per-thread state that CUDA keeps per host thread: the current device,
 * the launch configurations pushed by <<<>>> before a kernel stub runs,
 * and the per-thread default stream.
 */
#include "guest.h"

#define XC_CFG_DEPTH 16

static __thread int xc_device;
static __thread struct xc_launch_cfg xc_cfg[XC_CFG_DEPTH];
static __thread unsigned int xc_cfg_top;

int xc_cur_device(void)
{
	return xc_device;
}

void xc_set_cur_device(int dev)
{
	xc_device = dev;
}

int xc_cfg_push(const struct xc_launch_cfg *cfg)
{
	if (xc_cfg_top >= XC_CFG_DEPTH)
		return -1;
	xc_cfg[xc_cfg_top++] = *cfg;
	return 0;
}

int xc_cfg_pop(struct xc_launch_cfg *cfg)
{
	if (!xc_cfg_top)
		return -1;
	*cfg = xc_cfg[--xc_cfg_top];
	return 0;
}

/*
 * cudaStreamPerThread is a stream of each host thread's own.  The worker
 * serves all of a process's threads from one thread, so its per-thread
 * stream can be only one guest thread's: the first to use it on a device.
 * Every other thread gets a stream created for it, which blocks on the
 * legacy stream as a per-thread stream does, and is destroyed when the
 * thread exits.  A device reset destroys those streams in the worker;
 * a fork starts a new session.
 */
struct xc_pt_stream {
	struct xc_session *sess;	/* the session the handle is of */
	unsigned int gen;		/* xc_pt_gen[dev] when made */
	uint32_t handle;		/* 0: none yet */
	uint8_t created;		/* ours to destroy */
};

static struct xc_session *xc_pt_owner[XCUDA_MAX_DEVICES];
static unsigned int xc_pt_gen[XCUDA_MAX_DEVICES];
static __thread struct xc_pt_stream xc_pt[XCUDA_MAX_DEVICES];
static pthread_key_t xc_pt_key;
static pthread_once_t xc_pt_once = PTHREAD_ONCE_INIT;

static int xc_pt_valid(const struct xc_pt_stream *p, struct xc_session *s,
		       int dev)
{
	return p->handle && p->sess == s &&
	       p->gen == __atomic_load_n(&xc_pt_gen[dev], __ATOMIC_ACQUIRE);
}

static void xc_pt_exit(void *arg)
{
	struct xc_session *s = xc_session_peek();
	int dev;

	(void)arg;
	for (dev = 0; dev < XCUDA_MAX_DEVICES; dev++) {
		struct xc_pt_stream *p = &xc_pt[dev];
		struct xcuda_stream_destroy_args a = { .stream = p->handle };

		if (p->created && s && !s->dead && xc_pt_valid(p, s, dev))
			xc_call_stream_destroy(&a);
		p->handle = 0;
	}
}

static void xc_pt_key_init(void)
{
	pthread_key_create(&xc_pt_key, xc_pt_exit);
}

/* The wire handle of the calling thread's per-thread default stream. */
static uint32_t xc_pt_handle(void)
{
	struct xcuda_stream_create_args a = { cudaStreamDefault, 0 };
	struct xcuda_stream_create_res r;
	int dev = xc_device;
	struct xc_pt_stream *p;
	struct xc_session *s, *owner;
	cudaError_t err;

	if (dev < 0 || dev >= XCUDA_MAX_DEVICES)
		return XCUDA_STREAM_PER_THREAD;
	s = xc_session_peek();
	p = &xc_pt[dev];
	if (!s)
		return XCUDA_STREAM_PER_THREAD;
	if (xc_pt_valid(p, s, dev))
		return p->handle;
	p->sess = s;
	p->gen = __atomic_load_n(&xc_pt_gen[dev], __ATOMIC_ACQUIRE);
	p->created = 0;
	owner = __atomic_load_n(&xc_pt_owner[dev], __ATOMIC_ACQUIRE);
	if (owner != s && __atomic_compare_exchange_n(&xc_pt_owner[dev], &owner,
						      s, 0, __ATOMIC_ACQ_REL,
						      __ATOMIC_ACQUIRE)) {
		p->handle = XCUDA_STREAM_PER_THREAD;
		return p->handle;
	}
	err = xc_call_stream_create(&a, &r);
	/* Without a stream of its own, the worker's answers the call. */
	if (err || r.handle < XCUDA_HANDLE_FIRST)
		return XCUDA_STREAM_PER_THREAD;
	pthread_once(&xc_pt_once, xc_pt_key_init);
	pthread_setspecific(xc_pt_key, xc_pt);
	p->handle = r.handle;
	p->created = 1;
	return p->handle;
}

void xc_pt_streams_reset(int dev)
{
	if (dev >= 0 && dev < XCUDA_MAX_DEVICES)
		__atomic_add_fetch(&xc_pt_gen[dev], 1, __ATOMIC_RELEASE);
}

/*
 * Wire handles ride in the pointer value: 0 is the legacy default stream,
 * 1 and 2 are cudaStreamLegacy and cudaStreamPerThread, and the worker's
 * tables hand out the rest.  Anything that does not fit is not ours.
 */
int xc_stream_handle(cudaStream_t s, int per_thread, uint32_t *h)
{
	uintptr_t v = (uintptr_t)s;

	if (v > UINT32_MAX || (v > XCUDA_STREAM_PER_THREAD &&
			       v < XCUDA_HANDLE_FIRST))
		return -1;
	if (v == XCUDA_STREAM_PER_THREAD || (!v && per_thread))
		*h = xc_pt_handle();
	else
		*h = (uint32_t)v;
	return 0;
}

int xc_handle_in(const void *p, uint32_t *h)
{
	uintptr_t v = (uintptr_t)p;

	if (v > UINT32_MAX || (v && v < XCUDA_HANDLE_FIRST))
		return -1;
	*h = (uint32_t)v;
	return 0;
}

int xc_event_handle(cudaEvent_t e, uint32_t *h)
{
	uintptr_t v = (uintptr_t)e;

	if (v < XCUDA_HANDLE_FIRST || v > UINT32_MAX)
		return -1;
	*h = (uint32_t)v;
	return 0;
}
