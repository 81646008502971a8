// SPDX-License-Identifier: MIT
/*
 * A first-fit allocator over an extent of the shared arena.  It hands out
 * offsets, never touches the memory (a hostile peer may be writing it),
 * and keeps its bookkeeping in private memory.  Blocks are kept in address
 * order so that neighbours merge on release.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guest.h"

struct xc_block {
	uint64_t off;
	uint64_t size;
	int used;
};

struct xc_arena {
	pthread_mutex_t lock;
	struct xc_block *b;
	size_t n, cap;
};

struct xc_arena *xc_arena_new(uint64_t base, uint64_t size)
{
	struct xc_arena *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->cap = 64;
	a->b = calloc(a->cap, sizeof(*a->b));
	if (!a->b) {
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	a->b[0] = (struct xc_block){ base, size, 0 };
	a->n = 1;
	return a;
}

void xc_arena_free_all(struct xc_arena *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	free(a->b);
	free(a);
}

static int xc_arena_insert(struct xc_arena *a, size_t at, struct xc_block blk)
{
	if (a->n == a->cap) {
		struct xc_block *nb = realloc(a->b, 2 * a->cap * sizeof(*nb));

		if (!nb)
			return -1;
		a->b = nb;
		a->cap *= 2;
	}
	memmove(&a->b[at + 1], &a->b[at], (a->n - at) * sizeof(*a->b));
	a->b[at] = blk;
	a->n++;
	return 0;
}

static void xc_arena_remove(struct xc_arena *a, size_t at)
{
	memmove(&a->b[at], &a->b[at + 1], (a->n - at - 1) * sizeof(*a->b));
	a->n--;
}

uint64_t xc_arena_alloc(struct xc_arena *a, uint64_t size, uint64_t align)
{
	uint64_t ret = UINT64_MAX;
	size_t i;

	if (!size || !align || (align & (align - 1)))
		return UINT64_MAX;
	size = (size + 63) & ~(uint64_t)63;
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < a->n; i++) {
		struct xc_block *b = &a->b[i];
		uint64_t start = (b->off + align - 1) & ~(align - 1);
		uint64_t pad = start - b->off;

		if (b->used || b->size < pad || b->size - pad < size)
			continue;
		/* Split off the alignment pad and the tail as free blocks. */
		if (pad) {
			struct xc_block head = { b->off, pad, 0 };

			if (xc_arena_insert(a, i, head))
				break;
			i++;
			b = &a->b[i];
			b->off += pad;
			b->size -= pad;
		}
		if (b->size > size) {
			struct xc_block tail = { b->off + size,
						 b->size - size, 0 };

			if (xc_arena_insert(a, i + 1, tail))
				break;
			b = &a->b[i];
			b->size = size;
		}
		b->used = 1;
		ret = b->off;
		break;
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

static ssize_t xc_arena_index(struct xc_arena *a, uint64_t off)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->b[mid].off + a->b[mid].size <= off)
			lo = mid + 1;
		else if (a->b[mid].off > off)
			hi = mid;
		else
			return (ssize_t)mid;
	}
	return -1;
}

uint64_t xc_arena_release(struct xc_arena *a, uint64_t off)
{
	uint64_t size = 0;
	ssize_t i;

	pthread_mutex_lock(&a->lock);
	i = xc_arena_index(a, off);
	if (i < 0 || a->b[i].off != off || !a->b[i].used)
		goto out;
	size = a->b[i].size;
	a->b[i].used = 0;
	if ((size_t)i + 1 < a->n && !a->b[i + 1].used) {
		a->b[i].size += a->b[i + 1].size;
		xc_arena_remove(a, i + 1);
	}
	if (i > 0 && !a->b[i - 1].used) {
		a->b[i - 1].size += a->b[i].size;
		xc_arena_remove(a, i);
	}
out:
	pthread_mutex_unlock(&a->lock);
	return size;
}

uint64_t xc_arena_find(struct xc_arena *a, uint64_t off, uint64_t *start)
{
	uint64_t size = 0;
	ssize_t i;

	pthread_mutex_lock(&a->lock);
	i = xc_arena_index(a, off);
	if (i >= 0 && a->b[i].used) {
		*start = a->b[i].off;
		size = a->b[i].size;
	}
	pthread_mutex_unlock(&a->lock);
	return size;
}
