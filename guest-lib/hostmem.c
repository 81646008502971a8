// SPDX-License-Identifier: MIT
/*
 * Registered host memory at pinned speed (`local` transport).
 *
 * cudaHostRegister(ptr, size) moves the pages covering [ptr, ptr + size)
 * onto a memfd without changing their address or contents: the pages are
 * copied into a new memfd through a temporary shared mapping, which
 * mremap() then puts in their place (the program's pointers stay valid,
 * and the copy's page tables come along).  The memfd, sealed against
 * shrinking, goes to the worker over the descriptor channel with
 * HOST_REGISTER; the worker maps and pins it and answers a region id.
 * Copies then name (region, offset) with HOST_MEMCPY and the worker
 * copies straight from its mapping, as from the arena.
 * cudaHostUnregister moves the pages back onto private anonymous memory,
 * so that outside a registration the program's memory is what it was
 * (fork, munmap and mlock behave as before).
 *
 * Only private anonymous read-write memory is moved (malloc's heap and
 * its mmap()ed blocks, anonymous mmap(), thread stacks), and only with
 * the VmFlags of /proc/self/smaps we know to carry over: anything else
 * (files, shared memory, MADV_DONTFORK or MADV_WIPEONFORK ranges,
 * userfaultfd, hugetlbfs, the main stack, ranges that share a page with a
 * region already moved) is only recorded, and its copies are staged.
 *
 * fork(): a child would share the memfd's pages with the parent.  Before
 * fork() returns in the parent, the child replaces every mapping of our
 * memfds with a private copy (the parent waits for it), so the child sees
 * the memory as it was at the fork, as with copy-on-write; its session is
 * new and holds no registrations.
 *
 * Locks, always taken in this order: xc_hm_serial (one registration,
 * unregistration or fork at a time), the session lock, xc_hm_lock (the
 * table).  Copies look regions up with the session lock held, and
 * HOST_UNREGISTER is sent under it too, so a copy that found a region is
 * on the ring before that region's HOST_UNREGISTER.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/env.h"
#include "guest.h"

#define XC_HM_NAME	"xcuda-hostreg"
#define XC_HM_ENV	"XCUDA_MOVE_REGISTERED"

/* smaps VmFlags a moved range keeps its meaning with; any other stays. */
static const char *const xc_hm_vmflags[] = {
	"rd", "wr", "mr", "mw", "me", "ac", "nr", "sd", "lo", "lf", "hg",
	"nh", "mg", "dd", NULL
};

static pthread_mutex_t xc_hm_serial = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t xc_hm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_hostreg *xc_hm;	/* sorted by base, never overlapping */
static size_t xc_hm_n, xc_hm_cap;
static uint32_t xc_hm_tag;
static int xc_hm_pipe[2] = { -1, -1 };	/* the child says it has copied */

static size_t xc_hm_page(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

/* XCUDA_MOVE_REGISTERED=0 keeps registered memory where it is. */
static int xc_hm_enabled(void)
{
	unsigned long long v = 1;

	if (xcuda_env_uint(XC_HM_ENV, 1, &v) < 0)
		v = 1;
	return v == 1;
}

/* ---- the table ---- */

/* Index of the entry whose pages contain @p, or -1.  Table lock held. */
static ssize_t xc_hm_index(uintptr_t p)
{
	size_t lo = 0, hi = xc_hm_n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (xc_hm[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && p - xc_hm[lo - 1].base < xc_hm[lo - 1].len)
		return (ssize_t)(lo - 1);
	return -1;
}

/* Whether [base, base + len) shares a page with an entry. */
static int xc_hm_overlaps(uintptr_t base, size_t len)
{
	size_t i;
	int hit = 0;

	pthread_mutex_lock(&xc_hm_lock);
	for (i = 0; i < xc_hm_n && !hit; i++)
		hit = xc_hm[i].base < base + len &&
		      base < xc_hm[i].base + xc_hm[i].len;
	pthread_mutex_unlock(&xc_hm_lock);
	return hit;
}

int xc_hostmem_track(const struct xc_hostreg *r)
{
	size_t i;
	int ret = -EEXIST;

	pthread_mutex_lock(&xc_hm_lock);
	/* A region id names one region: the worker's answers are checked. */
	for (i = 0; r->region && i < xc_hm_n; i++)
		if (xc_hm[i].region == r->region)
			goto out;
	ret = -ENOMEM;
	if (xc_hm_n == xc_hm_cap) {
		size_t cap = xc_hm_cap ? 2 * xc_hm_cap : 16;
		struct xc_hostreg *n = realloc(xc_hm, cap * sizeof(*n));

		if (!n)
			goto out;
		xc_hm = n;
		xc_hm_cap = cap;
	}
	for (i = 0; i < xc_hm_n && xc_hm[i].base < r->base; i++)
		;
	memmove(&xc_hm[i + 1], &xc_hm[i], (xc_hm_n - i) * sizeof(*xc_hm));
	xc_hm[i] = *r;
	xc_hm_n++;
	ret = 0;
out:
	pthread_mutex_unlock(&xc_hm_lock);
	return ret;
}

int xc_hostmem_untrack(uintptr_t ptr, struct xc_hostreg *out)
{
	ssize_t i;
	int ret = -ENOENT;

	pthread_mutex_lock(&xc_hm_lock);
	i = xc_hm_index(ptr);
	if (i >= 0 && xc_hm[i].region && xc_hm[i].ptr == ptr) {
		*out = xc_hm[i];
		memmove(&xc_hm[i], &xc_hm[i + 1],
			(xc_hm_n - (size_t)i - 1) * sizeof(*xc_hm));
		xc_hm_n--;
		ret = 0;
	}
	pthread_mutex_unlock(&xc_hm_lock);
	return ret;
}

int xc_hostmem_find(const void *p, uint64_t len, uint32_t *region,
		    uint64_t *off)
{
	uintptr_t v = (uintptr_t)p;
	ssize_t i;
	int found = 0;

	pthread_mutex_lock(&xc_hm_lock);
	i = xc_hm_index(v);
	/* Inside what the program registered, not just the same pages. */
	if (i >= 0 && xc_hm[i].region && v >= xc_hm[i].ptr &&
	    len <= xc_hm[i].size - (v - xc_hm[i].ptr)) {
		*region = xc_hm[i].region;
		*off = v - xc_hm[i].base;
		found = 1;
	}
	pthread_mutex_unlock(&xc_hm_lock);
	return found;
}

/* ---- moving pages ---- */

/*
 * Whether every page of [a, b) is private anonymous read-write memory
 * whose VmFlags all carry over: 0, or -errno.  *@locked: some is mlocked.
 */
static int xc_hm_check_maps(uintptr_t a, uintptr_t b, int *locked)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	int cur = 0, need_flags = 0, bad = 0;
	uintptr_t next = a;
	size_t cap = 0;
	char *line = NULL;

	*locked = 0;
	if (!f)
		return -errno;
	while (!bad && getline(&line, &cap, f) > 0) {
		unsigned long long off, ino;
		unsigned int maj, mnr;
		uintptr_t s, e;
		char perms[8], *path, *tok, *save;
		int n = 0;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %x:%x "
			   "%llu %n", &s, &e, perms, &off, &maj, &mnr, &ino,
			   &n) == 7 && n) {
			/* Each range we use must have shown its VmFlags. */
			if (need_flags || s >= b) {
				bad = need_flags;
				break;
			}
			cur = e > a;
			if (!cur)
				continue;
			path = line + n;
			path[strcspn(path, "\n")] = 0;
			if (s > next || strcmp(perms, "rw-p") || ino || maj ||
			    mnr || (*path && strcmp(path, "[heap]")))
				bad = 1;
			next = e;
			need_flags = 1;
			continue;
		}
		if (!cur || strncmp(line, "VmFlags:", 8))
			continue;
		need_flags = 0;
		for (tok = strtok_r(line + 8, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save)) {
			const char *const *k;

			for (k = xc_hm_vmflags; *k && strcmp(*k, tok); k++)
				;
			if (!*k)
				bad = 1;
			if (!strcmp(tok, "lo"))
				*locked = 1;
		}
	}
	free(line);
	fclose(f);
	return bad || need_flags || next < b ? -EPERM : 0;
}

/*
 * Puts @tmp, a copy of [base, base + len), in the range's place: mremap()
 * keeps the copy's page tables.  Should that fail, a fresh mapping at
 * @base (of @fd, or anonymous and filled from @tmp) does the same.
 * @tmp is gone either way.  0, or -errno with the range as it was.
 */
static int xc_hm_replace(uintptr_t base, size_t len, void *tmp, int fd)
{
	void *want = (void *)base, *p;
	int err;

	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, want) ==
	    want)
		return 0;
	err = -errno;
	p = mmap(want, len, PROT_READ | PROT_WRITE, MAP_FIXED |
		 (fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS), fd, 0);
	if (p == want && fd < 0)
		memcpy(want, tmp, len);
	munmap(tmp, len);
	if (p == want)
		return 0;
	/* A failed mremap() may have unmapped the range first. */
	if (msync(want, len, MS_ASYNC) && errno == ENOMEM) {
		xc_log("cannot put host memory back at %p: giving up", want);
		abort();
	}
	return err;
}

int xc_hostmem_move(struct xc_hostreg *r, int *memfd)
{
	struct stat st;
	void *tmp;
	int fd, ret, locked;

	ret = xc_hm_check_maps(r->base, r->base + r->len, &locked);
	if (ret)
		return ret;
	fd = memfd_create(XC_HM_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* Sealed before the worker sees it: it maps it and must not fault. */
	if (ftruncate(fd, (off_t)r->len) < 0 ||
	    fcntl(fd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
	    fstat(fd, &st) < 0)
		goto fail;
	tmp = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED)
		goto fail;
	xc_par_memcpy(tmp, (void *)r->base, r->len);
	ret = xc_hm_replace(r->base, r->len, tmp, fd);
	if (ret) {
		close(fd);
		return ret;
	}
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->locked = locked;
	/* A new mapping is not locked: lock it as the old one was. */
	if (locked)
		(void)mlock((void *)r->base, r->len);
	*memfd = fd;
	return 0;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

/* One mapping of a memfd of ours, as /proc/self/maps shows it. */
struct xc_hm_vma {
	uintptr_t start, end;
	int prot;
};

/* The whole of /proc/self/maps, read before anything changes it. */
static char *xc_hm_read_maps(void)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap), *nb;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0 || !buf)
		goto fail;
	for (;;) {
		if (cap - n < 4096) {
			nb = realloc(buf, cap * 2);
			if (!nb)
				goto fail;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/*
 * Whether a line of /proc/self/maps is a shared mapping of the memfd of
 * @r inside its range; fills @v with the part that is.
 */
static int xc_hm_ours(const char *line, const struct xc_hostreg *r,
		      struct xc_hm_vma *v)
{
	unsigned long long off, ino;
	unsigned int maj, mnr;
	uintptr_t s, e;
	char perms[8];

	if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %x:%x %llu", &s,
		   &e, perms, &off, &maj, &mnr, &ino) != 7 ||
	    perms[3] != 's' || ino != r->ino || maj != major(r->dev) ||
	    mnr != minor(r->dev) || !strstr(line, "/memfd:" XC_HM_NAME))
		return 0;
	if (s < r->base)
		s = r->base;
	if (e > r->base + r->len)
		e = r->base + r->len;
	if (s >= e)
		return 0;
	v->start = s;
	v->end = e;
	v->prot = (perms[0] == 'r' ? PROT_READ : 0) |
		  (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	return 1;
}

/* Replaces one mapping of ours by a private anonymous copy of it. */
static int xc_hm_privatize(const struct xc_hm_vma *v, int par, int locked)
{
	size_t len = v->end - v->start;
	void *tmp;
	int ret;

	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -errno;
	/* The program may have made it unreadable; we must read it. */
	if (!(v->prot & PROT_READ))
		mprotect((void *)v->start, len, v->prot | PROT_READ);
	if (par)
		xc_par_memcpy(tmp, (void *)v->start, len);
	else
		memcpy(tmp, (void *)v->start, len);
	ret = xc_hm_replace(v->start, len, tmp, -1);
	if (!ret && v->prot != (PROT_READ | PROT_WRITE))
		mprotect((void *)v->start, len, v->prot);
	if (!ret && locked)
		(void)mlock((void *)v->start, len);
	return ret;
}

/*
 * Moves what is still ours of @n entries back onto private anonymous
 * memory, with the protections the program gave it: what it unmapped or
 * mapped anew meanwhile is left alone.  0, or the first -errno.
 */
static int xc_hm_restore(const struct xc_hostreg *r, size_t n, int par,
			 int relock)
{
	char *maps = xc_hm_read_maps(), *line, *save;
	struct xc_hm_vma v;
	int ret = 0, e;
	size_t i;

	if (!maps)
		return -ENOMEM;
	for (line = strtok_r(maps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		for (i = 0; i < n; i++) {
			if (!xc_hm_ours(line, &r[i], &v))
				continue;
			e = xc_hm_privatize(&v, par, relock && r[i].locked);
			if (!ret)
				ret = e;
		}
	free(maps);
	return ret;
}

int xc_hostmem_unmove(const struct xc_hostreg *r)
{
	return xc_hm_restore(r, 1, 1, 1);
}

/* Moves @r back; what cannot be stays known, for fork's sake. */
static void xc_hm_unmove_or_keep(struct xc_hostreg *r)
{
	static int said;

	if (!xc_hostmem_unmove(r))
		return;
	/* Still shared: a child of fork() must still get a copy. */
	r->region = 0;
	xc_hostmem_track(r);
	xc_warn_once(&said, "cannot move registered memory at %p back to "
		     "private memory; it stays a shared mapping",
		     (void *)r->base);
}

/* ---- cudaHostRegister and cudaHostUnregister ---- */

cudaError_t xc_hostmem_register(struct xc_session *s, void *ptr,
				size_t size, unsigned int flags,
				uint64_t *devptr, int *moved)
{
	static int said_chan, said_where;
	struct xcuda_host_register_args a = { 0 };
	struct xcuda_host_register_res res;
	struct xcuda_response rsp;
	struct xcuda_request req;
	struct xc_hostreg r = { 0 };
	uintptr_t p = (uintptr_t)ptr;
	size_t page = xc_hm_page();
	cudaError_t err = cudaSuccess;
	uint64_t id;
	int fd, ret;

	*moved = 0;
	/* No channel (xen, an older worker): record only, as before. */
	if (!s->t.ops->send_fd || s->t.ops->send_fd(&s->t, -1, 0) ||
	    !xc_hm_enabled() || !size || p > UINTPTR_MAX - page ||
	    size > UINTPTR_MAX - page - p)
		return cudaSuccess;
	r.ptr = p;
	r.size = size;
	r.base = p & ~(uintptr_t)(page - 1);
	r.len = ((p + size + page - 1) & ~(uintptr_t)(page - 1)) - r.base;
	pthread_mutex_lock(&xc_hm_serial);
	if (xc_hm_overlaps(r.base, r.len))
		goto out;
	ret = xc_hostmem_move(&r, &fd);
	if (ret) {
		xc_warn_once(&said_where, "cudaHostRegister: %p is not private "
			     "anonymous memory xcuda can share (%s): copies "
			     "from it are staged", ptr, strerror(-ret));
		goto out;
	}
	a.size = r.len;
	a.addr = r.base;
	a.flags = flags;
	a.tag = ++xc_hm_tag ? xc_hm_tag : ++xc_hm_tag;
	xc_req_host_register(&req, &a);
	memset(&res, 0, sizeof(res));
	pthread_mutex_lock(&s->lock);
	/* The memfd is on the channel before the request is on the ring. */
	ret = s->t.ops->send_fd(&s->t, fd, a.tag);
	if (!ret) {
		/* Not xc_call_locked(): a latched error is not ours. */
		err = xc_send_locked(s, &req, UINT64_MAX, &id);
		if (!err)
			err = xc_wait_locked(s, id, &rsp);
		if (!err) {
			err = (cudaError_t)rsp.status;
			memcpy(&res, rsp.out, rsp.len < sizeof(res) ?
			       rsp.len : sizeof(res));
		}
	}
	/* The worker is not trusted: an id we cannot tell apart is no id. */
	if (!ret && !err && res.region >= XCUDA_HANDLE_FIRST) {
		r.region = res.region;
		r.devptr = res.device_ptr;
		if (xc_hostmem_track(&r))
			r.region = 0;
	}
	pthread_mutex_unlock(&s->lock);
	close(fd);
	if (!r.region) {
		xc_hm_unmove_or_keep(&r);
		if (ret)
			xc_warn_once(&said_chan, "cudaHostRegister: the worker "
				     "took no memfd (%s): copies from "
				     "registered memory are staged",
				     strerror(-ret));
		/* Where xcuda cannot pin, staging still works. */
		if (ret || err == cudaErrorMemoryAllocation)
			err = cudaSuccess;
		goto out;
	}
	*devptr = r.devptr + (p - r.base);
	*moved = 1;
out:
	pthread_mutex_unlock(&xc_hm_serial);
	return err;
}

cudaError_t xc_hostmem_unregister(struct xc_session *s, void *ptr,
				  int *found)
{
	struct xcuda_host_unregister_args a = { 0 };
	struct xcuda_request req;
	struct xc_hostreg r;
	cudaError_t err;

	*found = 0;
	pthread_mutex_lock(&xc_hm_serial);
	pthread_mutex_lock(&s->lock);
	if (xc_hostmem_untrack((uintptr_t)ptr, &r)) {
		pthread_mutex_unlock(&s->lock);
		pthread_mutex_unlock(&xc_hm_serial);
		return cudaSuccess;
	}
	*found = 1;
	a.region = r.region;
	xc_req_host_unregister(&req, &a);
	err = xc_round_trip_locked(s, &req, NULL, 0);
	pthread_mutex_unlock(&s->lock);
	xc_hm_unmove_or_keep(&r);
	pthread_mutex_unlock(&xc_hm_serial);
	return err;
}

/* ---- fork ---- */

static void xc_hm_prepare(void)
{
	pthread_mutex_lock(&xc_hm_serial);
	pthread_mutex_lock(&xc_hm_lock);
	if (xc_hm_n && pipe2(xc_hm_pipe, O_CLOEXEC))
		xc_hm_pipe[0] = xc_hm_pipe[1] = -1;
}

static void xc_hm_parent(void)
{
	char c;

	if (xc_hm_pipe[1] >= 0) {
		close(xc_hm_pipe[1]);
		/*
		 * Until the child has its copy, what we write would show in
		 * it: wait for its byte, or for its end of the pipe to close.
		 */
		while (read(xc_hm_pipe[0], &c, 1) < 0 && errno == EINTR)
			;
		close(xc_hm_pipe[0]);
		xc_hm_pipe[0] = xc_hm_pipe[1] = -1;
	}
	pthread_mutex_unlock(&xc_hm_lock);
	pthread_mutex_unlock(&xc_hm_serial);
}

static void xc_hm_child(void)
{
	if (xc_hm_pipe[0] >= 0)
		close(xc_hm_pipe[0]);
	/* Our threads are gone: a plain memcpy, no helpers. */
	if (xc_hm_n)
		xc_hm_restore(xc_hm, xc_hm_n, 0, 0);
	/* The child's session is its own: the parent's regions are not. */
	xc_hm_n = 0;
	if (xc_hm_pipe[1] >= 0) {
		if (write(xc_hm_pipe[1], "", 1) < 0)
			(void)0;	/* closing it says the same */
		close(xc_hm_pipe[1]);
	}
	xc_hm_pipe[0] = xc_hm_pipe[1] = -1;
	/* This thread took them in xc_hm_prepare(), and is the child's. */
	pthread_mutex_unlock(&xc_hm_lock);
	pthread_mutex_unlock(&xc_hm_serial);
}

__attribute__((constructor)) static void xc_hm_init(void)
{
	pthread_atfork(xc_hm_prepare, xc_hm_parent, xc_hm_child);
}
