// SPDX-License-Identifier: MIT
/*
 * Mapped page-locked memory over the upstream link (up_mapped.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "xcuda/proto.h"
#include "xcuda/upstream.h"
#include "common/byte_runs.h"
#include "up_mapped.h"

/* More pinned extents than a worker keeps (XCUDA_MAX_HANDLES). */
#define XD_UP_MAP_MAX_PINS	65536

void xd_up_map_init(struct xd_up_map *m, uint64_t arena_size)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	m->size = arena_size;
}

void xd_up_map_fini(struct xd_up_map *m)
{
	if (m->shadow)
		munmap(m->shadow, m->size);
	free(m->runs);
	free(m->pin);
	pthread_mutex_destroy(&m->lock);
	memset(m, 0, sizeof(*m));
}

/* The shadow: reserved, not committed; only mapped extents touch it. */
static int xd_up_map_shadow_get(struct xd_up_map *m)
{
	void *p;

	if (m->shadow)
		return 0;
	p = mmap(NULL, m->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	m->shadow = p;
	return 0;
}

/* The index of the first pin that ends after @off (npin: none). */
static unsigned int xd_up_map_first(const struct xd_up_map *m, uint64_t off)
{
	unsigned int lo = 0, hi = m->npin, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->pin[mid].off + m->pin[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The pin that holds @off, or NULL. */
static struct xd_up_pin *xd_up_map_find(struct xd_up_map *m, uint64_t off)
{
	unsigned int i = xd_up_map_first(m, off);

	return i < m->npin && m->pin[i].off <= off ? &m->pin[i] : NULL;
}

int xd_up_map_pin(struct xd_up_map *m, uint64_t off, uint64_t len)
{
	unsigned int i;
	int ret = 0;

	if (!xcuda_extent_ok(off, len, m->size) || !len)
		return 0;	/* the worker refused it: not pinned */
	pthread_mutex_lock(&m->lock);
	i = xd_up_map_first(m, off);
	/* CUDA refuses to pin a byte twice: an overlap is not ours. */
	if (i < m->npin && m->pin[i].off < off + len)
		goto out;
	if (m->npin == m->cap) {
		unsigned int cap = m->cap ? m->cap * 2 : 16;
		struct xd_up_pin *p;

		p = cap > XD_UP_MAP_MAX_PINS ? NULL :
			realloc(m->pin, cap * sizeof(*p));
		if (!p) {
			ret = -ENOMEM;
			goto out;
		}
		m->pin = p;
		m->cap = cap;
	}
	memmove(&m->pin[i + 1], &m->pin[i], (m->npin - i) * sizeof(*m->pin));
	m->pin[i] = (struct xd_up_pin){ off, len, 0, 0 };
	m->npin++;
	__atomic_store_n(&m->npins, (int)m->npin, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&m->lock);
	return ret;
}

void xd_up_map_unpin(struct xd_up_map *m, uint64_t off)
{
	struct xd_up_pin *p;
	uint64_t a, b;
	unsigned int i;

	pthread_mutex_lock(&m->lock);
	p = xd_up_map_find(m, off);
	if (!p || p->off != off)
		goto out;
	if (p->mapped) {
		/* Its shadow pages go back; the edges may be a neighbour's. */
		a = (p->off + XCUDA_PAGE_SIZE - 1) & ~(uint64_t)(XCUDA_PAGE_SIZE - 1);
		b = (p->off + p->len) & ~(uint64_t)(XCUDA_PAGE_SIZE - 1);
		if (a < b)
			madvise(m->shadow + a, b - a, MADV_DONTNEED);
		__atomic_sub_fetch(&m->nmapped, 1, __ATOMIC_ACQ_REL);
	}
	i = (unsigned int)(p - m->pin);
	memmove(p, p + 1, (m->npin - i - 1) * sizeof(*p));
	m->npin--;
	__atomic_store_n(&m->npins, (int)m->npin, __ATOMIC_RELEASE);
	/* A diff under way starts that extent's successor afresh. */
	if (m->ci > i)
		m->ci--;
	else if (m->ci == i)
		m->cpos = 0;
out:
	pthread_mutex_unlock(&m->lock);
}

void xd_up_map_set_va(struct xd_up_map *m, uint64_t va)
{
	pthread_mutex_lock(&m->lock);
	m->va = va;
	pthread_mutex_unlock(&m->lock);
}

/* Maps @p from now on: 0, or -ENOMEM without a shadow. */
static int xd_up_map_on(struct xd_up_map *m, struct xd_up_pin *p)
{
	if (p->mapped)
		return 0;
	if (xd_up_map_shadow_get(m))
		return -ENOMEM;
	p->mapped = 1;
	__atomic_add_fetch(&m->nmapped, 1, __ATOMIC_ACQ_REL);
	return 0;
}

unsigned int xd_up_map_scan(struct xd_up_map *m, const void *p, size_t len)
{
	const uint8_t *b = p;
	struct xd_up_pin *pin;
	unsigned int n = 0;
	uint64_t v;
	size_t i;

	if (!__atomic_load_n(&m->npins, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&m->lock);
	for (i = 0; m->va && i + sizeof(v) <= len; i += sizeof(v)) {
		memcpy(&v, b + i, sizeof(v));
		if (v < m->va || v - m->va >= m->size)
			continue;
		pin = xd_up_map_find(m, v - m->va);
		if (!pin || pin->mapped || xd_up_map_on(m, pin))
			continue;
		pin->fresh = 1;
		n++;
	}
	pthread_mutex_unlock(&m->lock);
	return n;
}

int xd_up_map_take(struct xd_up_map *m, const uint8_t *arena, uint64_t off,
		   uint64_t len)
{
	struct xd_up_pin *p;
	int ret = -EPROTO;

	if (!len || !xcuda_extent_ok(off, len, m->size))
		return -EPROTO;
	pthread_mutex_lock(&m->lock);
	p = xd_up_map_find(m, off);
	if (!p || off + len > p->off + p->len)
		goto out;
	ret = 0;
	if (!p->mapped) {
		ret = xd_up_map_on(m, p);
		if (!ret)
			memcpy(m->shadow + p->off, arena + p->off, p->len);
	}
out:
	pthread_mutex_unlock(&m->lock);
	return ret;
}

/* The mapped part of [@off, @off + @len) into the shadow. */
static void xd_up_map_copy_in(struct xd_up_map *m, const uint8_t *arena,
			      uint64_t off, uint64_t len)
{
	uint64_t end = off + len, a, b;
	unsigned int i;

	for (i = xd_up_map_first(m, off);
	     i < m->npin && m->pin[i].off < end; i++) {
		if (!m->pin[i].mapped)
			continue;
		a = m->pin[i].off > off ? m->pin[i].off : off;
		b = m->pin[i].off + m->pin[i].len;
		if (b > end)
			b = end;
		memcpy(m->shadow + a, arena + a, b - a);
	}
}

void xd_up_map_mirror_locked(struct xd_up_map *m, const uint8_t *arena,
			     const struct xd_up_span *s)
{
	uint64_t k;

	if (!m->nmapped || !xd_up_span_ok(s, m->size))
		return;
	for (k = 0; k < s->rows; k++)
		xd_up_map_copy_in(m, arena, s->off + k * s->pitch, s->width);
}

void xd_up_map_mirror(struct xd_up_map *m, const uint8_t *arena,
		      const struct xd_up_span *s)
{
	if (!xd_up_map_any(m))
		return;
	pthread_mutex_lock(&m->lock);
	xd_up_map_mirror_locked(m, arena, s);
	pthread_mutex_unlock(&m->lock);
}

unsigned int xd_up_map_diff_locked(struct xd_up_map *m, const uint8_t *arena,
				   struct xd_up_span *out, unsigned int max)
{
	unsigned int n = 0;
	uint64_t end, s, e;
	struct xd_up_pin *p;

	for (; m->ci < m->npin && n < max; m->ci++, m->cpos = 0) {
		p = &m->pin[m->ci];
		if (!p->mapped)
			continue;
		if (p->fresh) {
			memcpy(m->shadow + p->off, arena + p->off, p->len);
			out[n++] = (struct xd_up_span){ p->off, p->len, p->len,
							1 };
			p->fresh = 0;
			continue;
		}
		end = p->off + p->len;
		s = m->cpos > p->off ? m->cpos : p->off;
		while (n < max) {
			s = xcuda_runs_same(arena, m->shadow, s, end);
			if (s == end)
				break;
			e = xcuda_runs_diff(arena, m->shadow, s, end);
			memcpy(m->shadow + s, arena + s, e - s);
			out[n++] = (struct xd_up_span){ s, e - s, e - s, 1 };
			s = e;
		}
		if (n == max && s < end) {
			m->cpos = s;	/* this extent goes on next time */
			return n;
		}
	}
	if (!n) {
		m->ci = 0;
		m->cpos = 0;
	}
	return n;
}

int xd_up_map_send(struct xd_up_map *m, const uint8_t *arena,
		   struct xd_up_wr *w, const void *head, size_t hlen,
		   uint32_t *nr)
{
	unsigned int n, i;
	int ret = 0;

	if (!xd_up_map_any(m))
		return 0;
	pthread_mutex_lock(&m->lock);
	if (!m->runs)
		m->runs = malloc(XCUDA_UP_MAX_OUT * sizeof(*m->runs));
	if (!m->runs)
		ret = -ENOMEM;
	while (!ret && (n = xd_up_map_diff_locked(m, arena, m->runs,
						  XCUDA_UP_MAX_OUT))) {
		*nr = n;
		ret = xd_up_wr_add(w, head, hlen);
		for (i = 0; i < n && !ret; i++)
			ret = xd_up_wr_ext(w, m->shadow, &m->runs[i]);
	}
	pthread_mutex_unlock(&m->lock);
	return ret;
}
