/* SPDX-License-Identifier: MIT */
/*
 * Mapped page-locked memory over the upstream link (xcuda/upstream.h,
 * docs/protocol.md "Mapped memory over the link").
 *
 * Under unified addressing a kernel reads and writes page-locked memory
 * through its address, and no request names those bytes.  The server maps
 * its copy of the arena at the guest's address (XCUDA_FEAT_SAME_VA), so
 * such a kernel finds the copy; this keeps the two in step.  Both ends
 * keep, for each pinned extent that is mapped so, a shadow: the bytes as
 * the two ends last agreed on them.
 *  - Before each request the relay sends the bytes in which the guest's
 *    arena differs from its shadow (an XMAP frame), and with each
 *    synchronous answer (and before a host function's record) the server
 *    sends those in which its copy differs from its own shadow.
 *  - Every other exchange of those bytes (a copy's, a graph's, a host
 *    function's) updates the shadows too, so that neither end sends back
 *    what it was sent.
 *  - Differences are exact to the byte: what the other end wrote
 *    meanwhile next to them is not overwritten.
 * Which extents are mapped: the relay looks for the guest's addresses of
 * its pinned extents among the words of each request's arguments; from
 * the first one found an extent is mapped until it is unpinned.  A
 * pointer that reaches a kernel any other way (stored in device memory)
 * is not seen: the kernel then reads the server's copy as it was.
 *
 * Pinned extents are learnt, at both ends, from ARENA_PIN and
 * ARENA_UNPIN requests and their answers, never from the other end.
 * Locking: @lock is the innermost lock of either end; each function takes
 * it unless its name ends in _locked (then the caller holds it).
 */
#ifndef XCUDAD_UP_MAPPED_H
#define XCUDAD_UP_MAPPED_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "up_link.h"
#include "up_spans.h"

/* A pinned extent of the arena, and whether it is mapped. */
struct xd_up_pin {
	uint64_t off, len;
	int mapped;
	int fresh;	/* the relay's: mapped since its last diff */
};

struct xd_up_map {
	pthread_mutex_t lock;
	uint64_t size;		/* the arena's */
	uint64_t va;		/* the guest's address of it (relay); 0: none */
	uint8_t *shadow;	/* @size bytes, reserved at the first map */
	struct xd_up_pin *pin;	/* sorted by offset, disjoint */
	unsigned int npin, cap;
	int npins;		/* atomic: npin, looked at without the lock */
	int nmapped;		/* atomic: pins mapped */
	/* Where the diff goes on (diff_locked). */
	unsigned int ci;
	uint64_t cpos;
	struct xd_up_span *runs;	/* xd_up_map_send's, under @lock */
};

void xd_up_map_init(struct xd_up_map *m, uint64_t arena_size);
void xd_up_map_fini(struct xd_up_map *m);

static inline int xd_up_map_any(struct xd_up_map *m)
{
	return __atomic_load_n(&m->nmapped, __ATOMIC_ACQUIRE);
}

static inline void xd_up_map_lock(struct xd_up_map *m)
{
	pthread_mutex_lock(&m->lock);
}

static inline void xd_up_map_unlock(struct xd_up_map *m)
{
	pthread_mutex_unlock(&m->lock);
}

/* ARENA_PIN of [@off, @off + @len) was answered 0: 0 or -ENOMEM. */
int xd_up_map_pin(struct xd_up_map *m, uint64_t off, uint64_t len);
/* ARENA_UNPIN of the extent at @off was answered 0. */
void xd_up_map_unpin(struct xd_up_map *m, uint64_t off);

/*
 * The relay's: the guest's address of the arena, once the server said it
 * maps its copy there (0: it does not, and nothing is ever mapped).
 */
void xd_up_map_set_va(struct xd_up_map *m, uint64_t va);
/*
 * The relay's: the 8-byte words of @len bytes at @p that hold the guest's
 * address of a byte of a pinned extent map that extent.  How many
 * extents that mapped newly.
 */
unsigned int xd_up_map_scan(struct xd_up_map *m, const void *p, size_t len);

/*
 * The server's: the relay sent bytes for [@off, @off + @len) in an XMAP
 * frame.  It must lie within one pinned extent (else -EPROTO), which is
 * mapped from now on: its shadow starts as @arena has it.
 */
int xd_up_map_take(struct xd_up_map *m, const uint8_t *arena, uint64_t off,
		   uint64_t len);

/*
 * Bytes of @s that crossed the link just now, as @arena has them: their
 * mapped part goes into the shadow.
 */
void xd_up_map_mirror_locked(struct xd_up_map *m, const uint8_t *arena,
			     const struct xd_up_span *s);
void xd_up_map_mirror(struct xd_up_map *m, const uint8_t *arena,
		      const struct xd_up_span *s);

/*
 * The next runs of mapped bytes in which @arena differs from the shadow
 * (all of a fresh extent), at most @max of them into @out, each copied
 * into the shadow: send them from the shadow (xd_up_map_send does).  0 once
 * every mapped extent was looked at; the next call starts again.
 */
unsigned int xd_up_map_diff_locked(struct xd_up_map *m, const uint8_t *arena,
				   struct xd_up_span *out, unsigned int max);

/*
 * Every run xd_up_map_diff_locked() finds, into @w from the shadow, in
 * frames: @hlen bytes at @head, whose count *@nr (within @head) is set to
 * the runs that follow, each a struct xcuda_up_ext and its bytes.  The
 * relay's XMAP frames and the server's data frames alike.  0 or a
 * negative errno.
 */
int xd_up_map_send(struct xd_up_map *m, const uint8_t *arena,
		   struct xd_up_wr *w, const void *head, size_t hlen,
		   uint32_t *nr);

#endif /* XCUDAD_UP_MAPPED_H */
