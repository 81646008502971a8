// SPDX-License-Identifier: MIT
/*
 * Device addresses for registered memory that the worker cannot map: on
 * `xen`, behind the upstream link, or with XCUDA_MOVE_REGISTERED=0,
 * cudaHostRegister only records the range (hostmem.c), and its copies are
 * staged.  cudaHostGetDevicePointer then gives the range a twin: as many
 * bytes of page-locked arena memory, whose device address it answers.
 *
 * The library keeps the program's memory and the twin in step, exact to
 * the byte, against a shadow of what both last held (common/byte_runs.h):
 *  - before each request it sends, what the program changed goes into
 *    the twin;
 *  - after each answer it waits for, what the device changed in the twin
 *    comes back into the program's memory.
 * So a kernel that writes through the device address is seen once the
 * program has synchronised, as natively.  A byte both sides wrote between
 * two calls is a race in the program; the device's write wins.  Each
 * request and each answer costs a compare of the memory while a twin
 * lives, that is until cudaHostUnregister.
 *
 * The twins are the session's, under its lock; a fork()ed child's new
 * session has none.
 */
#include <stdlib.h>
#include <string.h>

#include "common/byte_runs.h"
#include "guest.h"

struct xc_twin {
	uintptr_t start;	/* the program's memory */
	size_t size;
	uint64_t off;		/* the twin, in the arena */
	uint8_t *shadow;
};

/* Pins the twin at @off: its device address, or 0. */
static uint64_t xc_twin_pin(struct xc_session *s, uint64_t off, uint64_t blk)
{
	struct xcuda_arena_pin_args a = { cudaHostRegisterMapped, 0 };
	struct xcuda_arena_pin_res r = { 0 };
	struct xcuda_request req;

	xc_req_arena_pin(&req, &a);
	req.hdr.data_off = (uint32_t)off;
	req.hdr.data_len = (uint32_t)blk;
	if (xc_call_locked(s, &req, &r, sizeof(r)))
		return 0;
	return r.device_ptr;
}

static void xc_twin_unpin(struct xc_session *s, const struct xc_twin *t)
{
	struct xcuda_request req;
	uint64_t start;

	xc_req_arena_unpin(&req);
	req.hdr.data_off = (uint32_t)t->off;
	req.hdr.data_len = (uint32_t)xc_arena_find(s->heap, t->off, &start);
	(void)xc_call_locked(s, &req, NULL, 0);
	xc_arena_release(s->heap, t->off);
}

cudaError_t xc_twin_devptr(struct xc_session *s, uintptr_t start, size_t size,
			   uint64_t *devptr)
{
	struct xc_twin t = { start, size, 0, NULL };
	uint64_t blk, at;

	if (!(s->info.features & XCUDA_FEAT_PINNED_ARENA))
		return cudaErrorNotSupported;
	pthread_mutex_lock(&s->lock);
	t.off = xc_arena_alloc(s->heap, size, XCUDA_PAGE_SIZE);
	if (t.off == UINT64_MAX)
		goto nomem;
	blk = xc_arena_find(s->heap, t.off, &at);
	t.shadow = malloc(size);
	if (!t.shadow || blk > UINT32_MAX)
		goto release;
	memcpy(t.shadow, (const void *)start, size);
	memcpy(xc_arena_ptr(s, t.off), t.shadow, size);
	if (s->ntwins == s->captwins) {
		unsigned int cap = s->captwins ? 2 * s->captwins : 4;
		struct xc_twin *v = realloc(s->twins, cap * sizeof(*v));

		if (!v)
			goto release;
		s->twins = v;
		s->captwins = cap;
	}
	*devptr = xc_twin_pin(s, t.off, blk);
	if (!*devptr) {
		xc_arena_release(s->heap, t.off);
		free(t.shadow);
		pthread_mutex_unlock(&s->lock);
		return cudaErrorInvalidValue;
	}
	s->twins[s->ntwins++] = t;
	pthread_mutex_unlock(&s->lock);
	return cudaSuccess;
release:
	free(t.shadow);
	xc_arena_release(s->heap, t.off);
nomem:
	pthread_mutex_unlock(&s->lock);
	return cudaErrorMemoryAllocation;
}

void xc_twin_drop(struct xc_session *s, uintptr_t start)
{
	unsigned int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->ntwins && s->twins[i].start != start; i++)
		;
	if (i < s->ntwins) {
		struct xc_twin t = s->twins[i];

		s->twins[i] = s->twins[--s->ntwins];
		xc_twin_unpin(s, &t);
		free(t.shadow);
	}
	pthread_mutex_unlock(&s->lock);
}

void xc_twin_push_locked(struct xc_session *s)
{
	unsigned int i;

	for (i = 0; i < s->ntwins; i++)
		xcuda_runs_apply((const uint8_t *)s->twins[i].start,
				 s->twins[i].shadow,
				 xc_arena_ptr(s, s->twins[i].off),
				 s->twins[i].size);
}

void xc_twin_pull_locked(struct xc_session *s)
{
	unsigned int i;

	for (i = 0; i < s->ntwins; i++)
		xcuda_runs_apply(xc_arena_ptr(s, s->twins[i].off),
				 s->twins[i].shadow,
				 (uint8_t *)s->twins[i].start,
				 s->twins[i].size);
}
