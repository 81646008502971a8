// SPDX-License-Identifier: MIT
/*
 * Handle tables: a growable array indexed by handle.  Freed slots are
 * handed out again only after the search has gone round the whole table,
 * so a stale handle the guest keeps using rarely names a new object.
 */
#include <stdlib.h>
#include <string.h>

#include "xcuda/proto.h"
#include "handles.h"

#define XD_HTAB_MIN	64

static int xd_htab_grow(struct xd_htab *t)
{
	uint32_t cap = t->cap ? 2 * t->cap : XD_HTAB_MIN;
	struct xd_hent *e;

	if (cap > XCUDA_MAX_HANDLES)
		cap = XCUDA_MAX_HANDLES;
	if (cap <= t->cap)
		return -1;
	e = realloc(t->ent, cap * sizeof(*e));
	if (!e)
		return -1;
	memset(e + t->cap, 0, (cap - t->cap) * sizeof(*e));
	t->next = t->cap;
	t->ent = e;
	t->cap = cap;
	return 0;
}

struct xd_hent *xd_htab_add(struct xd_htab *t, void *ptr, uint32_t *h)
{
	struct xd_hent *e;
	uint32_t i, idx;

	if (t->live >= XCUDA_MAX_HANDLES)
		return NULL;
	if (t->live == t->cap && xd_htab_grow(t))
		return NULL;
	for (i = 0; i < t->cap; i++) {
		idx = (t->next + i) % t->cap;
		if (!t->ent[idx].used)
			break;
	}
	if (i == t->cap)
		return NULL;
	e = &t->ent[idx];
	memset(e, 0, sizeof(*e));
	e->ptr = ptr;
	e->used = 1;
	t->live++;
	t->next = (idx + 1) % t->cap;
	*h = XCUDA_HANDLE_FIRST + idx;
	return e;
}

struct xd_hent *xd_htab_get(struct xd_htab *t, uint32_t h)
{
	uint32_t idx;

	if (h < XCUDA_HANDLE_FIRST)
		return NULL;
	idx = h - XCUDA_HANDLE_FIRST;
	if (idx >= t->cap || !t->ent[idx].used)
		return NULL;
	return &t->ent[idx];
}

void xd_htab_del(struct xd_htab *t, uint32_t h)
{
	struct xd_hent *e = xd_htab_get(t, h);

	if (!e)
		return;
	memset(e, 0, sizeof(*e));
	t->live--;
}

void xd_htab_free(struct xd_htab *t)
{
	free(t->ent);
	memset(t, 0, sizeof(*t));
}

uint32_t xd_htab_next(const struct xd_htab *t, uint32_t h)
{
	uint32_t idx = h < XCUDA_HANDLE_FIRST ? 0 : h - XCUDA_HANDLE_FIRST + 1;

	for (; idx < t->cap; idx++)
		if (t->ent[idx].used)
			return XCUDA_HANDLE_FIRST + idx;
	return 0;
}

int xd_stream_lookup(struct xd_htab *t, uint32_t h, cudaStream_t *out)
{
	struct xd_hent *e;

	switch (h) {
	case 0:
		*out = NULL;
		return 0;
	case XCUDA_STREAM_LEGACY:
		*out = cudaStreamLegacy;
		return 0;
	case XCUDA_STREAM_PER_THREAD:
		*out = cudaStreamPerThread;
		return 0;
	}
	e = xd_htab_get(t, h);
	if (!e)
		return cudaErrorInvalidResourceHandle;
	*out = (cudaStream_t)e->ptr;
	return 0;
}

void *xd_object_get(struct xd_htab *t, uint32_t h)
{
	struct xd_hent *e = xd_htab_get(t, h);

	return e ? e->ptr : NULL;
}

int xd_object_add(struct xd_htab *t, void *ptr, int device, int borrowed,
		  uint32_t *h)
{
	struct xd_hent *e;
	uint32_t i;

	/*
	 * CUDA answers the same object each time (a device's pool, or one of
	 * the session's own it was set to): so do we.
	 */
	for (i = 0; borrowed && (i = xd_htab_next(t, i));) {
		e = xd_htab_get(t, i);
		if (e->ptr == ptr) {
			*h = i;
			return 0;
		}
	}
	e = xd_htab_add(t, ptr, h);
	if (!e)
		return cudaErrorMemoryAllocation;
	e->device = device;
	e->borrowed = !!borrowed;
	return 0;
}

uint32_t xd_object_handle(const struct xd_htab *t, const void *ptr)
{
	uint32_t h;

	for (h = 0; ptr && (h = xd_htab_next(t, h));)
		if (t->ent[h - XCUDA_HANDLE_FIRST].ptr == ptr)
			return h;
	return 0;
}

uint32_t xd_value_find(const struct xd_htab *t, uint64_t v)
{
	/* CUDA never hands out 0 as an object's value. */
	return v ? xd_object_handle(t, (const void *)(uintptr_t)v) : 0;
}

int xd_value_add(struct xd_htab *t, uint64_t v, int device)
{
	uint32_t h;

	return xd_object_add(t, (void *)(uintptr_t)v, device, 0, &h);
}
