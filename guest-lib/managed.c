// SPDX-License-Identifier: MIT
/*
 * Managed memory (docs/managed-memory.md).  The worker holds real managed
 * memory at device address D; the guest maps host pages at exactly D, so
 * host code and kernels use one pointer, and keeps the two copies
 * coherent in chunks of XC_MG_CHUNK:
 *
 *   DEVICE  the program's pages PROT_NONE: the device copy is the one
 *   CLEAN   PROT_READ: the host copy equals the device copy
 *   DIRTY   PROT_READ|PROT_WRITE: the host copy is newer
 *
 * A fault on a DEVICE chunk pulls it (CLEAN), a write fault on a CLEAN one
 * makes it DIRTY.  Before a request that lets the device read managed
 * memory, DIRTY chunks are pushed (CLEAN); before one that lets it write,
 * the chunks it may write are pushed if DIRTY and become DEVICE.  The hook
 * is xc_managed_before_send(), called where every request is sent.
 *
 * The pages have two mappings of one memfd: the program's at D, whose
 * protection tracks the state, and the library's own read-write alias,
 * which pushes and pulls use, so that a pull never opens the program's
 * pages before the data is there.  On `local` the alias is registered
 * with the worker (hostmem.c), and pushes and pulls are HOST_MEMCPY at
 * pinned speed; elsewhere they are staged through the arena.
 *
 * Locks: the session lock, then xc_mg_lock.  The fault handler takes
 * both, so the library must never touch the program's managed pages
 * while it holds the session lock: copies treat managed memory as device
 * memory.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

enum { XC_MG_DEVICE, XC_MG_CLEAN, XC_MG_DIRTY };

struct xc_mg {
	uintptr_t base;		/* the program's mapping, page aligned */
	size_t maplen;
	uintptr_t start;	/* the device bytes: [start, start + size) */
	size_t size;
	uint8_t *alias;		/* the library's mapping of those pages */
	int shared;		/* the alias is registered with the worker */
	int var;		/* __managed__ variables: never cudaFree'd */
	/*
	 * Variables: each is an allocation of its own to CUDA, and one copy
	 * may not span two, so pushes and pulls go variable by variable.
	 */
	struct xc_mg_part {
		uintptr_t lo, hi;
	} *parts;
	uint32_t nparts;
	uint32_t nchunks;
	uint32_t nvalid;	/* chunks CLEAN or DIRTY */
	uint8_t *state;
};

static pthread_mutex_t xc_mg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_mg **xc_mgs;
static size_t xc_nmgs, xc_mgs_cap;
/* Chunks host-valid in all regions: 0 makes the hook one branch. */
static unsigned int xc_mg_nvalid;
/* Regions: 0 lets copies skip the managed lookup. */
static unsigned int xc_mg_count;
/* Set while a push or pull runs its own requests.  Session lock held. */
static int xc_mg_busy;

static xc_mg_copy_fn xc_mg_copy = xc_copy_managed_locked;

void xc_managed_set_copy(xc_mg_copy_fn fn)
{
	xc_mg_copy = fn ? fn : xc_copy_managed_locked;
}

int xc_managed_any(void)
{
	return __atomic_load_n(&xc_mg_count, __ATOMIC_ACQUIRE) != 0;
}

int xc_managed_is(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	size_t i;
	int hit = 0;

	if (!xc_managed_any() || !len)
		return 0;
	pthread_mutex_lock(&xc_mg_lock);
	for (i = 0; i < xc_nmgs && !hit; i++)
		hit = a < xc_mgs[i]->base + xc_mgs[i]->maplen &&
		      (a + len < a || a + len > xc_mgs[i]->base);
	pthread_mutex_unlock(&xc_mg_lock);
	return hit;
}

static size_t xc_mg_page(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

/* ---- chunks ---- */

static uintptr_t xc_mg_chunk_lo(const struct xc_mg *m, uint32_t c)
{
	return m->base + (uintptr_t)c * XC_MG_CHUNK;
}

static size_t xc_mg_chunk_len(const struct xc_mg *m, uint32_t c)
{
	size_t off = (size_t)c * XC_MG_CHUNK;

	return m->maplen - off < XC_MG_CHUNK ? m->maplen - off : XC_MG_CHUNK;
}

static void xc_mg_valid(struct xc_mg *m, int delta)
{
	m->nvalid += delta;
	__atomic_add_fetch(&xc_mg_nvalid, delta, __ATOMIC_RELEASE);
}

/*
 * Copies the device bytes of chunk @c between the alias and the device.
 * Lock held.
 */
/* Copies what of [lo, hi) lies in [start, end), one way or the other. */
static cudaError_t xc_mg_move_part(struct xc_mg *m, uintptr_t lo,
				   uintptr_t hi, uintptr_t start,
				   uintptr_t end, int to_dev)
{
	uintptr_t a = lo > start ? lo : start;
	uintptr_t b = hi < end ? hi : end;
	cudaError_t err;

	if (a >= b)
		return cudaSuccess;
	xc_mg_busy = 1;
	err = xc_mg_copy(xc_session_peek(), to_dev, m->alias + (a - m->base),
			 a, b - a);
	xc_mg_busy = 0;
	return err;
}

static cudaError_t xc_mg_move(struct xc_mg *m, uint32_t c, int to_dev)
{
	uintptr_t lo = xc_mg_chunk_lo(m, c);
	uintptr_t hi = lo + xc_mg_chunk_len(m, c);
	cudaError_t err, first = cudaSuccess;
	uint32_t i;

	if (!m->var)
		return xc_mg_move_part(m, lo, hi, m->start,
				       m->start + m->size, to_dev);
	for (i = 0; i < m->nparts; i++) {
		err = xc_mg_move_part(m, lo, hi, m->parts[i].lo,
				      m->parts[i].hi, to_dev);
		if (err && !first)
			first = err;
	}
	return first;
}

static void xc_mg_protect(struct xc_mg *m, uint32_t c, int prot)
{
	if (mprotect((void *)xc_mg_chunk_lo(m, c), xc_mg_chunk_len(m, c),
		     prot))
		xc_log("managed memory: mprotect failed (%s)",
		       strerror(errno));
}

/* DIRTY -> CLEAN: read-only first, so later writes fault and wait. */
static cudaError_t xc_mg_push(struct xc_mg *m, uint32_t c)
{
	if (m->state[c] != XC_MG_DIRTY)
		return cudaSuccess;
	xc_mg_protect(m, c, PROT_READ);
	m->state[c] = XC_MG_CLEAN;
	return xc_mg_move(m, c, 1);
}

/* DEVICE -> CLEAN. */
static cudaError_t xc_mg_pull(struct xc_mg *m, uint32_t c)
{
	static int said;
	cudaError_t err;

	if (m->state[c] != XC_MG_DEVICE)
		return cudaSuccess;
	err = xc_mg_move(m, c, 0);
	/* The program gets what the host copy last held, and a message. */
	if (err)
		xc_warn_once(&said, "cannot read managed memory back from the "
			     "device (%s): the host sees stale data",
			     xc_error_name(err));
	xc_mg_protect(m, c, PROT_READ);
	m->state[c] = XC_MG_CLEAN;
	xc_mg_valid(m, 1);
	return err;
}

/* CLEAN or DIRTY -> DEVICE, pushing a DIRTY one first. */
static cudaError_t xc_mg_drop(struct xc_mg *m, uint32_t c)
{
	cudaError_t err;

	if (m->state[c] == XC_MG_DEVICE)
		return cudaSuccess;
	err = xc_mg_push(m, c);
	xc_mg_protect(m, c, PROT_NONE);
	m->state[c] = XC_MG_DEVICE;
	xc_mg_valid(m, -1);
	return err;
}

/* The chunks of @m that [p, p + len) touches: [*c0, *c1). */
static int xc_mg_span(const struct xc_mg *m, uint64_t p, uint64_t len,
		      uint32_t *c0, uint32_t *c1)
{
	uint64_t end = m->base + m->maplen, lo, hi;
	uint64_t q = p + len < p ? UINT64_MAX : p + len;

	if (!len || p >= end || q <= m->base)
		return 0;
	lo = p > m->base ? p - m->base : 0;
	hi = q > end ? m->maplen : q - m->base;
	*c0 = (uint32_t)(lo / XC_MG_CHUNK);
	*c1 = (uint32_t)((hi + XC_MG_CHUNK - 1) / XC_MG_CHUNK);
	return 1;
}

enum { XC_MG_READ = 1, XC_MG_WRITE = 2 };

/*
 * Applies @how to the chunks that [p, p + len) touches in every region
 * (len UINT64_MAX: from p on; p 0 and len UINT64_MAX: everything).
 * xc_mg_lock held.
 */
static cudaError_t xc_mg_apply(uint64_t p, uint64_t len, int how)
{
	cudaError_t err = cudaSuccess, e;
	size_t i;
	uint32_t c, c0, c1;

	for (i = 0; i < xc_nmgs; i++) {
		struct xc_mg *m = xc_mgs[i];

		if (!m->nvalid || !xc_mg_span(m, p, len, &c0, &c1))
			continue;
		for (c = c0; c < c1 && c < m->nchunks; c++) {
			e = how & XC_MG_WRITE ? xc_mg_drop(m, c) :
						xc_mg_push(m, c);
			if (!err)
				err = e;
		}
	}
	return err;
}

/* ---- the hook ---- */

/* What a request lets the device do with managed memory. */
struct xc_mg_access {
	uint64_t p, len;
	int how;
};

static uint64_t xc_mg_2d(uint64_t pitch, uint64_t width, uint64_t height)
{
	uint64_t n = xc_extent_2d(pitch, width, height);

	/* A malformed extent is CUDA's to refuse; cover everything. */
	return n ? n : UINT64_MAX;
}

/* Fills @a (at most 2) for @req; returns how many, -1 for "all". */
static int xc_mg_accesses(const struct xcuda_request *req,
			  struct xc_mg_access *a)
{
	const void *args = req->args;

	switch (req->hdr.op) {
	case XCUDA_OP_LAUNCH:
	case XCUDA_OP_LAUNCH_COOPERATIVE:
	case XCUDA_OP_LAUNCH_EX:
	case XCUDA_OP_GRAPH_LAUNCH:
	case XCUDA_OP_DRV_LAUNCH_KERNEL:
	case XCUDA_OP_DRV_LAUNCH_KERNEL_EX:
	case XCUDA_OP_DRV_LAUNCH_COOPERATIVE:
	/* Array and 3D copies and memsets: any managed memory, to be safe. */
	case XCUDA_OP_DRV_MEMSET_D8:
	case XCUDA_OP_DRV_MEMSET_D16:
	case XCUDA_OP_DRV_MEMSET_D32:
	case XCUDA_OP_DRV_MEMSET_D8_ASYNC:
	case XCUDA_OP_DRV_MEMSET_D32_ASYNC:
	case XCUDA_OP_ARRAY_COPY:
	case XCUDA_OP_MEMSET_3D:
	case XCUDA_OP_MEMSET_3D_ASYNC:
	case XCUDA_OP_MEMCPY_PEER:
	case XCUDA_OP_MEMCPY_PEER_ASYNC:
		return -1;
	case XCUDA_OP_MEMCPY: {
		struct xcuda_memcpy_args m;
		int n = 0;

		memcpy(&m, args, sizeof(m));
		if (m.dir != XCUDA_COPY_H2D)
			a[n++] = (struct xc_mg_access){ m.src, m.count,
							XC_MG_READ };
		if (m.dir != XCUDA_COPY_D2H)
			a[n++] = (struct xc_mg_access){ m.dst, m.count,
							XC_MG_WRITE };
		return n;
	}
	case XCUDA_OP_MEMCPY_2D: {
		struct xcuda_memcpy_2d_args m;
		int n = 0;

		memcpy(&m, args, sizeof(m));
		if (m.dir != XCUDA_COPY_H2D)
			a[n++] = (struct xc_mg_access){
				m.src, xc_mg_2d(m.spitch, m.width, m.height),
				XC_MG_READ };
		if (m.dir != XCUDA_COPY_D2H)
			a[n++] = (struct xc_mg_access){
				m.dst, xc_mg_2d(m.dpitch, m.width, m.height),
				XC_MG_WRITE };
		return n;
	}
	case XCUDA_OP_HOST_MEMCPY: {
		struct xcuda_host_memcpy_args m;

		memcpy(&m, args, sizeof(m));
		a[0] = (struct xc_mg_access){ m.dev, m.count,
			m.dir == XCUDA_COPY_D2H ? XC_MG_READ : XC_MG_WRITE };
		return 1;
	}
	case XCUDA_OP_HOST_MEMCPY_2D: {
		struct xcuda_host_memcpy_2d_args m;

		memcpy(&m, args, sizeof(m));
		a[0] = (struct xc_mg_access){
			m.dev, xc_mg_2d(m.dpitch, m.width, m.height),
			m.dir == XCUDA_COPY_D2H ? XC_MG_READ : XC_MG_WRITE };
		return 1;
	}
	case XCUDA_OP_MEMSET: {
		struct xcuda_memset_args m;

		memcpy(&m, args, sizeof(m));
		a[0] = (struct xc_mg_access){ m.ptr, m.count, XC_MG_WRITE };
		return 1;
	}
	case XCUDA_OP_MEMSET_2D: {
		struct xcuda_memset_2d_args m;

		memcpy(&m, args, sizeof(m));
		a[0] = (struct xc_mg_access){
			m.ptr, xc_mg_2d(m.pitch, m.width, m.height),
			XC_MG_WRITE };
		return 1;
	}
	case XCUDA_OP_MEM_PREFETCH: {
		struct xcuda_mem_prefetch_args m;

		memcpy(&m, args, sizeof(m));
		a[0] = (struct xc_mg_access){ m.ptr, m.count, XC_MG_READ };
		return 1;
	}
	}
	return 0;
}

void xc_managed_before_send(struct xc_session *s,
			    const struct xcuda_request *req)
{
	struct xc_mg_access a[2];
	int n, i;

	(void)s;
	/* Nothing host-valid: nothing to push or to take away. */
	if (!__atomic_load_n(&xc_mg_nvalid, __ATOMIC_ACQUIRE) || xc_mg_busy)
		return;
	n = xc_mg_accesses(req, a);
	if (!n)
		return;
	pthread_mutex_lock(&xc_mg_lock);
	/*
	 * A failed push was CUDA's to report on the copy it made; the
	 * request itself then reports what the device holds.
	 */
	if (n < 0)
		xc_mg_apply(0, UINT64_MAX, XC_MG_WRITE);
	for (i = 0; i < n; i++)
		xc_mg_apply(a[i].p, a[i].len, a[i].how);
	pthread_mutex_unlock(&xc_mg_lock);
}

/* ---- the fault handler ---- */

static struct sigaction xc_mg_old;

static struct xc_mg *xc_mg_find(uintptr_t p)
{
	size_t i;

	for (i = 0; i < xc_nmgs; i++)
		if (p >= xc_mgs[i]->base &&
		    p - xc_mgs[i]->base < xc_mgs[i]->maplen)
			return xc_mgs[i];
	return NULL;
}

int xc_managed_fault(uintptr_t addr)
{
	struct xc_session *s = xc_session_peek();
	struct xc_mg *m;
	int ret = -1;
	uint32_t c;

	if (!__atomic_load_n(&xc_mg_count, __ATOMIC_ACQUIRE))
		return -1;
	if (s) {
		/* A library bug, not a deadlock to leave the program in. */
		if (s->lock.__data.__owner == (int)syscall(SYS_gettid)) {
			xc_log("internal error: managed memory at %p touched "
			       "inside the library", (void *)addr);
			abort();
		}
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_lock(&xc_mg_lock);
	m = xc_mg_find(addr);
	if (m) {
		c = (uint32_t)((addr - m->base) / XC_MG_CHUNK);
		if (m->state[c] == XC_MG_DEVICE) {
			xc_mg_pull(m, c);
		} else if (m->state[c] == XC_MG_CLEAN) {
			xc_mg_protect(m, c, PROT_READ | PROT_WRITE);
			m->state[c] = XC_MG_DIRTY;
		}
		/* DIRTY: another thread got there first; retry. */
		ret = 0;
	}
	pthread_mutex_unlock(&xc_mg_lock);
	if (s)
		pthread_mutex_unlock(&s->lock);
	return ret;
}

static void xc_mg_segv(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	if (si->si_code == SEGV_ACCERR &&
	    !xc_managed_fault((uintptr_t)si->si_addr)) {
		errno = saved;
		return;
	}
	errno = saved;
	/* Not ours: the handler that was there before, or the default. */
	if (xc_mg_old.sa_flags & SA_SIGINFO) {
		if (xc_mg_old.sa_sigaction) {
			xc_mg_old.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (xc_mg_old.sa_handler != SIG_DFL &&
		   xc_mg_old.sa_handler != SIG_IGN) {
		xc_mg_old.sa_handler(sig);
		return;
	}
	/* Returning re-runs the access, which now kills as it would. */
	signal(sig, SIG_DFL);
}

static int xc_mg_install(void)
{
	static int state;	/* 0 not yet, 1 installed, -1 failed */
	struct sigaction sa;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) > 0)
		return 0;
	pthread_mutex_lock(&xc_mg_lock);
	if (!state) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = xc_mg_segv;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		__atomic_store_n(&state, sigaction(SIGSEGV, &sa, &xc_mg_old) ?
				 -1 : 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&xc_mg_lock);
	return state > 0 ? 0 : -1;
}

/* ---- regions ---- */

static int xc_mg_add(struct xc_mg *m)
{
	if (xc_nmgs == xc_mgs_cap) {
		size_t cap = xc_mgs_cap ? 2 * xc_mgs_cap : 16;
		struct xc_mg **n = realloc(xc_mgs, cap * sizeof(*n));

		if (!n)
			return -1;
		xc_mgs = n;
		xc_mgs_cap = cap;
	}
	xc_mgs[xc_nmgs++] = m;
	__atomic_add_fetch(&xc_mg_count, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&xc_mg_nvalid, m->nvalid, __ATOMIC_RELEASE);
	return 0;
}

/* Takes the region at @base out of the table.  xc_mg_lock held. */
static struct xc_mg *xc_mg_remove(uintptr_t start, int var)
{
	size_t i;

	for (i = 0; i < xc_nmgs; i++) {
		struct xc_mg *m = xc_mgs[i];

		if (m->start != start || m->var != var)
			continue;
		xc_mgs[i] = xc_mgs[--xc_nmgs];
		__atomic_sub_fetch(&xc_mg_count, 1, __ATOMIC_RELEASE);
		__atomic_sub_fetch(&xc_mg_nvalid, m->nvalid,
				   __ATOMIC_RELEASE);
		return m;
	}
	return NULL;
}

static void xc_mg_free(struct xc_mg *m)
{
	if (!m)
		return;
	free(m->parts);
	free(m->state);
	free(m);
}

/*
 * Records the variable [start, start + size) in the variable region
 * that maps it, once.  Its chunks must be on the device (a new region's
 * are; xc_mg_widen drops them).  0, or -ENOMEM, or -ENOENT.
 */
static int xc_mg_part_add(uintptr_t start, size_t size)
{
	struct xc_mg *m = NULL;
	struct xc_mg_part *p;
	size_t i;
	int ret = -ENOENT;

	pthread_mutex_lock(&xc_mg_lock);
	for (i = 0; i < xc_nmgs && !m; i++)
		if (xc_mgs[i]->var && start >= xc_mgs[i]->base &&
		    start + size <= xc_mgs[i]->base + xc_mgs[i]->maplen)
			m = xc_mgs[i];
	for (i = 0; m && i < m->nparts; i++)
		if (m->parts[i].lo == start)
			m = NULL, ret = 0;
	if (m) {
		p = realloc(m->parts, (m->nparts + 1) * sizeof(*p));
		ret = -ENOMEM;
		if (p) {
			m->parts = p;
			p[m->nparts].lo = start;
			p[m->nparts].hi = start + size;
			m->nparts++;
			ret = 0;
		}
	}
	pthread_mutex_unlock(&xc_mg_lock);
	return ret;
}

/*
 * The library's alias of @len bytes: on `local` registered with the
 * worker (copies are HOST_MEMCPY), else a memfd of our own.  A shared
 * mapping either way, for mremap to map again at the device address.
 */
static uint8_t *xc_mg_alias(struct xc_session *s, size_t len, int *shared)
{
	uint64_t devptr;
	void *p;
	int fd, moved = 0;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (s && xc_hostmem_register(s, p, len, 0, &devptr, &moved))
		moved = 0;
	*shared = moved;
	if (moved)
		return p;
	fd = memfd_create("xcuda-managed", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)len) ||
	    mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 0) != p) {
		if (fd >= 0)
			close(fd);
		munmap(p, len);
		return NULL;
	}
	close(fd);
	return p;
}

static void xc_mg_unmap(struct xc_session *s, struct xc_mg *m)
{
	int found;

	munmap((void *)m->base, m->maplen);
	munmap(m->alias, m->maplen);
	/* Nothing is mapped any more: nothing is copied back. */
	if (m->shared && s)
		xc_hostmem_unregister(s, m->alias, &found);
}

/*
 * Variables of another module (an -rdc program's, a library's) in pages
 * that earlier variables mapped: that region's device extent grows to
 * cover them, once its chunks are back on the device.  0, or -EEXIST
 * when no variable region holds the pages.
 */
static int xc_mg_widen(struct xc_session *s, uintptr_t start, size_t size)
{
	struct xc_range rg = { 0 };
	struct xc_mg *m = NULL;
	size_t i;
	uint32_t c;

	if (s)
		pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&xc_mg_lock);
	for (i = 0; i < xc_nmgs && !m; i++)
		if (xc_mgs[i]->var && start >= xc_mgs[i]->base &&
		    start + size <= xc_mgs[i]->base + xc_mgs[i]->maplen)
			m = xc_mgs[i];
	if (m) {
		uintptr_t lo = start < m->start ? start : m->start;
		uintptr_t hi = start + size > m->start + m->size ?
			       start + size : m->start + m->size;

		for (c = 0; c < m->nchunks; c++)
			xc_mg_drop(m, c);
		m->start = lo;
		m->size = hi - lo;
	}
	pthread_mutex_unlock(&xc_mg_lock);
	if (s)
		pthread_mutex_unlock(&s->lock);
	if (!m)
		return -EEXIST;
	/* For cudaPointerGetAttributes, where it does not overlap. */
	rg.start = start;
	rg.size = size;
	rg.kind = XC_R_MANAGED;
	rg.device = xc_cur_device();
	if (xc_range_find(start, &rg) && xc_range_find(start + size - 1, &rg))
		xc_range_add(&rg);
	return 0;
}

/*
 * xc_managed_map(), where a variable region records @start..@size as one
 * variable only with @part (else the caller records its variables).
 */
static int xc_mg_map(struct xc_session *s, uintptr_t start, size_t size,
		     int var, int device, unsigned int flags, int part)
{
	size_t page = xc_mg_page();
	struct xc_range rg = { 0 };
	struct xc_mg *m;
	void *r;
	int ret = -ENOMEM;

	if (!size || start > UINTPTR_MAX - size - page)
		return -EINVAL;
	if (xc_mg_install())
		return -ENOTSUP;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->start = start;
	m->size = size;
	m->var = var;
	m->base = start & ~(uintptr_t)(page - 1);
	m->maplen = ((start + size + page - 1) & ~(uintptr_t)(page - 1)) -
		    m->base;
	m->nchunks = (uint32_t)((m->maplen + XC_MG_CHUNK - 1) / XC_MG_CHUNK);
	m->state = calloc(m->nchunks, 1);
	if (!m->state)
		goto fail;
	/* Only where nothing of ours or the program's is mapped. */
	r = mmap((void *)m->base, m->maplen, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		 MAP_FIXED_NOREPLACE, -1, 0);
	if (r != (void *)m->base) {
		if (r != MAP_FAILED)
			munmap(r, m->maplen);
		ret = var ? xc_mg_widen(s, start, size) : -EEXIST;
		if (!ret && part)
			ret = xc_mg_part_add(start, size);
		goto fail;
	}
	m->alias = xc_mg_alias(s, m->maplen, &m->shared);
	if (!m->alias) {
		munmap((void *)m->base, m->maplen);
		goto fail;
	}
	if (mremap(m->alias, 0, m->maplen, MREMAP_MAYMOVE | MREMAP_FIXED,
		   (void *)m->base) != (void *)m->base) {
		ret = -errno;
		munmap((void *)m->base, m->maplen);
		m->base = 0;
		goto unmap;
	}
	/*
	 * A new allocation reads as zeros on both sides (the worker's pages
	 * are not populated yet): CLEAN.  Variables have initial values.
	 */
	if (!var) {
		memset(m->state, XC_MG_CLEAN, m->nchunks);
		m->nvalid = m->nchunks;
	}
	mprotect((void *)m->base, m->maplen, var ? PROT_NONE : PROT_READ);
	rg.start = start;
	rg.size = size;
	rg.kind = XC_R_MANAGED;
	rg.device = device;
	rg.flags = flags;
	if (s)
		pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&xc_mg_lock);
	ret = xc_mg_add(m) ? -ENOMEM : 0;
	pthread_mutex_unlock(&xc_mg_lock);
	if (s)
		pthread_mutex_unlock(&s->lock);
	if (ret)
		goto unmap;
	if (xc_range_add(&rg) ||
	    (var && part && xc_mg_part_add(start, size))) {
		xc_managed_unmap(s, start, var);
		return -ENOMEM;
	}
	return 0;
unmap:
	if (m->base)
		munmap((void *)m->base, m->maplen);
	munmap(m->alias, m->maplen);
	if (m->shared && s) {
		int found;

		xc_hostmem_unregister(s, m->alias, &found);
	}
fail:
	xc_mg_free(m);
	return ret;
}

int xc_managed_map(struct xc_session *s, uintptr_t start, size_t size,
		   int var, int device, unsigned int flags)
{
	return xc_mg_map(s, start, size, var, device, flags, 1);
}

int xc_managed_unmap(struct xc_session *s, uintptr_t start, int var)
{
	struct xc_mg *m;

	if (s)
		pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&xc_mg_lock);
	m = xc_mg_remove(start, var);
	pthread_mutex_unlock(&xc_mg_lock);
	if (s)
		pthread_mutex_unlock(&s->lock);
	if (!m)
		return -1;
	xc_range_del(start, XC_R_MANAGED, NULL);
	xc_mg_unmap(s, m);
	xc_mg_free(m);
	return 0;
}

void xc_managed_forget_all(struct xc_session *s)
{
	for (;;) {
		struct xc_mg *m = NULL;

		if (s)
			pthread_mutex_lock(&s->lock);
		pthread_mutex_lock(&xc_mg_lock);
		if (xc_nmgs)
			m = xc_mg_remove(xc_mgs[0]->start, xc_mgs[0]->var);
		pthread_mutex_unlock(&xc_mg_lock);
		if (s)
			pthread_mutex_unlock(&s->lock);
		if (!m)
			break;
		xc_mg_unmap(s, m);
		xc_mg_free(m);
	}
	xc_range_drop_kind(XC_R_MANAGED);
}

cudaError_t xc_managed_prefetch_host(struct xc_session *s, uint64_t p,
				     uint64_t len)
{
	cudaError_t err = cudaSuccess, e;
	size_t i;
	uint32_t c, c0, c1;

	if (s)
		pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&xc_mg_lock);
	for (i = 0; i < xc_nmgs; i++) {
		struct xc_mg *m = xc_mgs[i];

		if (!xc_mg_span(m, p, len, &c0, &c1))
			continue;
		for (c = c0; c < c1 && c < m->nchunks; c++) {
			e = xc_mg_pull(m, c);
			if (!err)
				err = e;
		}
	}
	pthread_mutex_unlock(&xc_mg_lock);
	if (s)
		pthread_mutex_unlock(&s->lock);
	return err;
}

int xc_managed_state(uintptr_t p)
{
	struct xc_mg *m;
	int st = -1;

	pthread_mutex_lock(&xc_mg_lock);
	m = xc_mg_find(p);
	if (m)
		st = m->state[(p - m->base) / XC_MG_CHUNK];
	pthread_mutex_unlock(&xc_mg_lock);
	return st;
}

/* ---- __managed__ variables ---- */

struct xc_mg_var {
	void **mod;
	void **hostp;		/* where host code finds the address */
	char *name;
	uint64_t dptr;
	size_t size;
	struct xc_mg_var *next;
};

static pthread_mutex_t xc_mgv_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_mg_var *xc_mgvars;

void xc_managed_reg_var(void **mod, void **hostp, const char *name,
			size_t size)
{
	struct xc_mg_var *v = calloc(1, sizeof(*v));

	if (!v || !mod || !hostp || !name || !(v->name = strdup(name))) {
		xc_log("cannot register __managed__ variable %s",
		       name ? name : "?");
		free(v);
		return;
	}
	/* Resolved by the registry like any variable, keyed by @hostp. */
	xc_reg_var(mod, (const char *)hostp, name, size);
	v->mod = mod;
	v->hostp = hostp;
	v->size = size;
	pthread_mutex_lock(&xc_mgv_lock);
	v->next = xc_mgvars;
	xc_mgvars = v;
	pthread_mutex_unlock(&xc_mgv_lock);
}

static int xc_mgv_cmp(const void *a, const void *b)
{
	const struct xc_mg_var *x = *(struct xc_mg_var *const *)a;
	const struct xc_mg_var *y = *(struct xc_mg_var *const *)b;

	return x->dptr < y->dptr ? -1 : x->dptr > y->dptr;
}

/*
 * Maps the module's variables: those whose pages overlap share one
 * region (their hull, which the driver allocates as one block).
 */
static void xc_mgv_map(struct xc_session *s, struct xc_mg_var **v, size_t n)
{
	static int said;
	size_t page = xc_mg_page(), i = 0, j;

	qsort(v, n, sizeof(*v), xc_mgv_cmp);
	while (i < n) {
		uint64_t lo = v[i]->dptr, hi = lo + v[i]->size;
		int ret;

		for (j = i + 1; j < n; j++) {
			uint64_t end = (hi + page - 1) & ~(uint64_t)(page - 1);

			if ((v[j]->dptr & ~(uint64_t)(page - 1)) >= end)
				break;
			if (v[j]->dptr + v[j]->size > hi)
				hi = v[j]->dptr + v[j]->size;
		}
		ret = xc_mg_map(s, lo, hi - lo, 1, xc_cur_device(), 0, 0);
		if (ret)
			xc_warn_once(&said, "cannot map __managed__ variables "
				     "at %p (%s): host code cannot reach them",
				     (void *)(uintptr_t)lo, strerror(-ret));
		for (; i < j; i++) {
			if (!ret && xc_mg_part_add(v[i]->dptr, v[i]->size))
				xc_warn_once(&said, "cannot map __managed__ "
					     "variable %s", v[i]->name);
			if (ret)
				continue;
			*v[i]->hostp = (void *)(uintptr_t)v[i]->dptr;
			/*
			 * Host code names the variable by that address too
			 * (cudaMemcpyToSymbol(var, ...) takes &var).
			 */
			xc_reg_var(v[i]->mod,
				   (const char *)(uintptr_t)v[i]->dptr,
				   v[i]->name, v[i]->size);
		}
	}
}

int xc_managed_init_module(void **mod)
{
	struct xc_mg_var *v, **todo = NULL;
	struct xc_session *s;
	cudaError_t err;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&xc_mgv_lock);
	for (v = xc_mgvars; v; v = v->next) {
		if (v->mod != mod || v->dptr)
			continue;
		/* No GPU: host code finds NULL, as natively. */
		if (xc_ready(&s))
			break;
		if (n == cap) {
			struct xc_mg_var **t;

			cap = cap ? 2 * cap : 8;
			t = realloc(todo, cap * sizeof(*t));
			if (!t)
				break;
			todo = t;
		}
		{
			struct xc_var *rv;

			pthread_mutex_lock(&s->lock);
			err = xc_var_resolve(s, v->hostp, &rv);
			pthread_mutex_unlock(&s->lock);
			if (err || !rv->dptr)
				continue;
			v->dptr = rv->dptr;
			v->size = rv->size ? rv->size : 1;
		}
		todo[n++] = v;
	}
	if (n)
		xc_mgv_map(xc_session_peek(), todo, n);
	pthread_mutex_unlock(&xc_mgv_lock);
	free(todo);
	return 1;
}
