// SPDX-License-Identifier: MIT
/*
 * Host memory the program registered with cudaHostRegister, moved by the
 * guest onto a memfd and handed to us over the `local` transport's
 * descriptor channel: we map the memfd, pin our mapping with
 * cudaHostRegister, and copy straight from and to it, as from the arena.
 *
 * HOST_REGISTER    take the memfd tagged args.tag, check it, map it (at
 *                  args.addr when that is free here), cudaHostRegister ->
 *                  {region, device_ptr}
 * HOST_UNREGISTER  wait for the devices whose asynchronous copies used
 *                  the region, cudaHostUnregister, munmap
 * HOST_MEMCPY      cudaMemcpy(Async) between [off, off + count) of the
 *                  region and a device pointer
 * HOST_MEMCPY_2D   the same with cudaMemcpy2D(Async)
 *
 * The guest is hostile.  Its memfd must be a regular file of exactly the
 * size it claims, sealed against shrinking (a truncated file would fault
 * us in the middle of a copy) and not against writing, with every page
 * resident (we never allocate memory for it: the pages are the guest's).
 * Region ids are handles of a per-session table, offsets and lengths are
 * checked against the region's size.  What the guest does to its own
 * pages afterwards (writing them, punching holes) harms only its data.
 * Every region left is unregistered and unmapped when the session ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cuda_runtime_api.h>

#include "log.h"
#include "ops.h"
#include "shm.h"

#define XD_HREG_FLAGS	(cudaHostRegisterPortable | \
			 cudaHostRegisterMapped | cudaHostRegisterReadOnly)
/* Beyond any user address space: a bound, so sizes cannot overflow. */
#define XD_HREG_MAX	(1ull << 47)
/* mincore() looks at this many pages at a time. */
#define XD_HREG_VEC	65536u

/* One region: the worker's mapping of the guest's memfd. */
struct xd_hreg {
	uint8_t *map;
	uint64_t size;
	uint64_t async_devs;	/* devices whose async copies used it */
};

/* The regions of one session (a worker serves one; tests run several). */
struct xd_hostmem {
	struct xd_session *s;
	struct xd_htab regs;	/* ptr: the mapping, meta: struct xd_hreg */
	struct xd_hostmem *next;
};

static struct xd_hostmem *xd_hostmems;

static struct xd_hostmem *xd_hm_get(struct xd_session *s)
{
	struct xd_hostmem *hm;

	for (hm = xd_hostmems; hm; hm = hm->next)
		if (hm->s == s)
			return hm;
	return NULL;
}

static struct xd_hreg *xd_hreg_get(struct xd_session *s, uint32_t region)
{
	struct xd_hostmem *hm = xd_hm_get(s);
	struct xd_hent *e = hm ? xd_htab_get(&hm->regs, region) : NULL;

	return e ? e->meta : NULL;
}

/*
 * The memfd must be what the guest says and must stay so: a regular file
 * of @size bytes, sealed against shrinking, writable through a mapping.
 */
static int xd_hreg_check_fd(int fd, uint64_t size)
{
	struct stat st;
	int seals;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uint64_t)st.st_size != size)
		return cudaErrorInvalidValue;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) ||
	    (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
		return cudaErrorInvalidValue;
	return 0;
}

/* Whether every page of @p is in memory already: we must not fault any in. */
static int xd_hreg_resident(const uint8_t *p, uint64_t size, size_t page)
{
	unsigned char *vec = malloc(XD_HREG_VEC);
	uint64_t done, n, i;
	int ok = vec != NULL;

	for (done = 0; ok && done < size; done += n * page) {
		n = (size - done) / page;
		if (n > XD_HREG_VEC)
			n = XD_HREG_VEC;
		if (mincore((void *)(p + done), n * page, vec) < 0) {
			ok = 0;
			break;
		}
		for (i = 0; i < n; i++)
			if (!(vec[i] & 1))
				ok = 0;
	}
	free(vec);
	return ok;
}

/* Our own mapping, at the guest's address when that is free here. */
static uint8_t *xd_hreg_map(int fd, uint64_t size, uint64_t addr)
{
	void *p;

	if (addr && !xd_shm_map_at(fd, 0, size, addr, &p))
		return p;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

int xd_op_host_register(struct xd_session *s,
			const struct xcuda_host_register_args *a,
			struct xcuda_host_register_res *r,
			struct xd_call *call)
{
	struct xd_hostmem *hm = xd_hm_get(s);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct xd_hreg *reg = NULL;
	uint8_t *map = NULL;
	struct xd_hent *e = NULL;
	void *dp = NULL;
	int fd = -1, err;
	uint32_t h;

	(void)call;
	/*
	 * The guest's pages are on another host: "cannot pin", which the
	 * guest library takes as its cue to stage copies from them.
	 */
	if (s->chan->flags & XD_CHAN_REMOTE)
		return cudaErrorMemoryAllocation;
	if (!s->chan->ops->take_fd)
		return cudaErrorNotSupported;
	/* Taken first, so that a refused request leaves no message behind. */
	if (a->tag) {
		fd = s->chan->ops->take_fd(s->chan, a->tag);
		if (fd == -ENOTCONN)
			return cudaErrorNotSupported;
	}
	err = cudaErrorInvalidValue;
	if (fd < 0 || (a->flags & ~XD_HREG_FLAGS) || !a->size ||
	    a->size > XD_HREG_MAX || a->size % page || a->addr % page)
		goto out;
	err = xd_hreg_check_fd(fd, a->size);
	if (err)
		goto out;
	err = cudaErrorMemoryAllocation;
	if (!hm || hm->regs.live >= XCUDA_MAX_HANDLES)
		goto out;
	map = xd_hreg_map(fd, a->size, a->addr);
	reg = calloc(1, sizeof(*reg));
	if (!map || !reg || !xd_hreg_resident(map, a->size, page))
		goto out;
	/* Under unified addressing registered memory is mapped anyway. */
	err = cudaHostRegister(map, a->size,
			       (a->flags & XD_HREG_FLAGS) |
			       cudaHostRegisterMapped);
	if (err)
		goto out;
	err = cudaHostGetDevicePointer(&dp, map, 0);
	if (!err) {
		e = xd_htab_add(&hm->regs, map, &h);
		if (!e)
			err = cudaErrorMemoryAllocation;
	}
	if (err) {
		cudaHostUnregister(map);
		goto out;
	}
	reg->map = map;
	reg->size = a->size;
	e->meta = reg;
	r->region = h;
	r->device_ptr = (uintptr_t)dp;
	close(fd);
	return 0;
out:
	if (map)
		munmap(map, a->size);
	free(reg);
	if (fd >= 0)
		close(fd);
	return err;
}

/* Waits for the devices that asynchronous copies of @reg used. */
static int xd_hreg_quiesce(struct xd_session *s, struct xd_hreg *reg)
{
	int err = 0, e, d;

	if (!reg->async_devs)
		return 0;
	for (d = 0; d < 64; d++) {
		if (!(reg->async_devs & (1ull << d)))
			continue;
		e = cudaSetDevice(d);
		if (!e)
			e = cudaDeviceSynchronize();
		if (!err)
			err = e;
	}
	cudaSetDevice(s->device);
	reg->async_devs = 0;
	return err;
}

/* Quiesces, unregisters and unmaps: the first failure. */
static int xd_hreg_drop(struct xd_session *s, struct xd_hreg *reg)
{
	int err = xd_hreg_quiesce(s, reg), e;

	e = cudaHostUnregister(reg->map);
	if (!err)
		err = e;
	munmap(reg->map, reg->size);
	free(reg);
	return err;
}

int xd_op_host_unregister(struct xd_session *s,
			  const struct xcuda_host_unregister_args *a,
			  struct xd_call *call)
{
	struct xd_hostmem *hm = xd_hm_get(s);
	struct xd_hreg *reg;

	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	reg = xd_hreg_get(s, a->region);
	if (!hm || !reg)
		return cudaErrorHostMemoryNotRegistered;
	xd_htab_del(&hm->regs, a->region);
	return xd_hreg_drop(s, reg);
}

/* Marks the current device as one whose work may still use @reg. */
static void xd_hreg_used(struct xd_session *s, struct xd_hreg *reg)
{
	reg->async_devs |= 1ull << ((unsigned int)s->device & 63);
}

int xd_op_host_memcpy(struct xd_session *s,
		      const struct xcuda_host_memcpy_args *a,
		      struct xd_call *call)
{
	struct xd_hreg *reg = xd_hreg_get(s, a->region);
	enum cudaMemcpyKind kind;
	void *d, *sp, *host;
	cudaStream_t st;
	cudaError_t err;

	(void)call;
	if (!reg || (a->flags & ~XCUDA_COPY_ASYNC)) {
		xd_log(XD_LOG_DEBUG, "host copy: region %u unknown or flags "
		       "%#x", a->region, a->flags);
		return cudaErrorInvalidValue;
	}
	if (a->dir != XCUDA_COPY_H2D && a->dir != XCUDA_COPY_D2H)
		return cudaErrorInvalidMemcpyDirection;
	if (!xcuda_extent_ok(a->off, a->count, reg->size)) {
		xd_log(XD_LOG_DEBUG, "host copy: %llu+%llu out of region %u",
		       (unsigned long long)a->off,
		       (unsigned long long)a->count, a->region);
		return cudaErrorInvalidValue;
	}
	host = reg->map + a->off;
	kind = a->dir == XCUDA_COPY_H2D ? cudaMemcpyHostToDevice :
					  cudaMemcpyDeviceToHost;
	d = kind == cudaMemcpyHostToDevice ? (void *)(uintptr_t)a->dev : host;
	sp = kind == cudaMemcpyHostToDevice ? host : (void *)(uintptr_t)a->dev;
	if (!(a->flags & XCUDA_COPY_ASYNC))
		return cudaMemcpy(d, sp, a->count, kind);
	err = xd_stream_lookup(&s->streams, a->stream, &st);
	if (err)
		return err;
	xd_hreg_used(s, reg);
	return cudaMemcpyAsync(d, sp, a->count, kind, st);
}

int xd_op_host_memcpy_2d(struct xd_session *s,
			 const struct xcuda_host_memcpy_2d_args *a,
			 struct xd_call *call)
{
	struct xd_hreg *reg = xd_hreg_get(s, a->region);
	enum cudaMemcpyKind kind;
	uint64_t span, dp, sp_pitch, dpitch;
	void *d, *sp, *host;
	cudaStream_t st;
	cudaError_t err;
	int ok;

	(void)call;
	if (!reg || (a->flags & ~XCUDA_COPY_ASYNC))
		return cudaErrorInvalidValue;
	if (a->dir != XCUDA_COPY_H2D && a->dir != XCUDA_COPY_D2H)
		return cudaErrorInvalidMemcpyDirection;
	span = xd_span_2d(a->hpitch, a->width, a->height, &ok);
	if (!ok || !xcuda_extent_ok(a->off, span, reg->size))
		return cudaErrorInvalidValue;
	host = reg->map + a->off;
	dp = a->dev;
	if (a->dir == XCUDA_COPY_H2D) {
		kind = cudaMemcpyHostToDevice;
		d = (void *)(uintptr_t)dp;
		dpitch = a->dpitch;
		sp = host;
		sp_pitch = a->hpitch;
	} else {
		kind = cudaMemcpyDeviceToHost;
		d = host;
		dpitch = a->hpitch;
		sp = (void *)(uintptr_t)dp;
		sp_pitch = a->dpitch;
	}
	if (!(a->flags & XCUDA_COPY_ASYNC))
		return cudaMemcpy2D(d, dpitch, sp, sp_pitch, a->width,
				    a->height, kind);
	err = xd_stream_lookup(&s->streams, a->stream, &st);
	if (err)
		return err;
	xd_hreg_used(s, reg);
	return cudaMemcpy2DAsync(d, dpitch, sp, sp_pitch, a->width, a->height,
				 kind, st);
}

static int xd_hostmem_init(struct xd_session *s)
{
	struct xd_hostmem *hm = calloc(1, sizeof(*hm));

	if (!hm)
		return -ENOMEM;
	hm->s = s;
	hm->next = xd_hostmems;
	xd_hostmems = hm;
	return 0;
}

/* The session is over: every region left is unregistered and unmapped. */
static void xd_hostmem_fini(struct xd_session *s)
{
	struct xd_hostmem **pp, *hm;
	uint32_t h;

	for (pp = &xd_hostmems; (hm = *pp); pp = &hm->next)
		if (hm->s == s)
			break;
	if (!hm)
		return;
	*pp = hm->next;
	for (h = 0; (h = xd_htab_next(&hm->regs, h));) {
		struct xd_hent *e = xd_htab_get(&hm->regs, h);

		/* A device reset may have dropped the registration already. */
		xd_hreg_drop(s, e->meta);
	}
	xd_htab_free(&hm->regs);
	free(hm);
}

XD_SESSION_HOOKS(hostmem, 35, xd_hostmem_init, xd_hostmem_fini);
