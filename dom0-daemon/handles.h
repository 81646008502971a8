/* SPDX-License-Identifier: MIT */
/*
 * Per-session handle tables.  Streams, events, modules and kernels are
 * named on the wire by small integers (from XCUDA_HANDLE_FIRST, at most
 * XCUDA_MAX_HANDLES live per table), never by Dom0 pointers, so a guest
 * can only name objects its own session created.
 */
#ifndef XCUDAD_HANDLES_H
#define XCUDAD_HANDLES_H

#include <stdint.h>

#include <cuda_runtime_api.h>

struct xd_hent {
	void *ptr;		/* the CUDA object */
	void *meta;		/* the kind's own data, owned by its user */
	uint32_t ref;		/* modules: uploads that share it */
	uint32_t owner;		/* kernels: their module's handle */
	int device;		/* streams, events: the device they live on */
	uint8_t used;
	uint8_t borrowed;	/* not the session's to destroy */
};

struct xd_htab {
	struct xd_hent *ent;	/* ent[h - XCUDA_HANDLE_FIRST] */
	uint32_t cap;
	uint32_t live;
	uint32_t next;		/* where the search for a free slot starts */
};

/*
 * Adds @ptr; returns the new entry and its handle in *@h, or NULL when the
 * table is full or memory is short.
 */
struct xd_hent *xd_htab_add(struct xd_htab *t, void *ptr, uint32_t *h);
/* The live entry for @h, or NULL for an unknown or freed handle. */
struct xd_hent *xd_htab_get(struct xd_htab *t, uint32_t h);
void xd_htab_del(struct xd_htab *t, uint32_t h);
/* Frees the table itself; the objects and metas are the caller's. */
void xd_htab_free(struct xd_htab *t);

/* Iterates the live handles: for (h = 0; (h = xd_htab_next(t, h)); ) */
uint32_t xd_htab_next(const struct xd_htab *t, uint32_t h);

/*
 * Resolves a wire stream handle: 0 is the legacy default stream (NULL),
 * XCUDA_STREAM_LEGACY and XCUDA_STREAM_PER_THREAD are CUDA's special
 * streams, the rest must be live in @t.  Returns 0 or
 * cudaErrorInvalidResourceHandle.
 */
int xd_stream_lookup(struct xd_htab *t, uint32_t h, cudaStream_t *out);
/*
 * The CUDA object a handle of @t names (events, and the kinds the
 * description declares with "handle"), or NULL for an unknown or freed
 * handle: CUDA never hands out a NULL object.
 */
void *xd_object_get(struct xd_htab *t, uint32_t h);
/*
 * Adds @ptr: 0 or cudaErrorMemoryAllocation.  A borrowed object (one
 * CUDA owns, such as a device's default pool) keeps the handle it
 * already has.
 */
int xd_object_add(struct xd_htab *t, void *ptr, int device, int borrowed,
		  uint32_t *h);

/* The handle of @t that names @ptr, or 0 (a linear search). */
uint32_t xd_object_handle(const struct xd_htab *t, const void *ptr);
/*
 * Kinds whose objects are 64-bit values the guest holds as CUDA gave them
 * (texture and surface objects): the handle of @t that holds @v, or 0
 * when @v is not the session's; and @v added as the session's, 0 or
 * cudaErrorMemoryAllocation.
 */
uint32_t xd_value_find(const struct xd_htab *t, uint64_t v);
int xd_value_add(struct xd_htab *t, uint64_t v, int device);

#endif /* XCUDAD_HANDLES_H */
