// SPDX-License-Identifier: MIT
/*
 * The daemon's GPU memory table (gpumem.h): a header with a robust,
 * process-shared mutex, then one slot per session, in a MAP_SHARED
 * mapping made before any worker is forked.  Charges happen under the
 * lock (the domain's sum and the new charge are one step); a slot's
 * `used` is also written with atomics, so that a reader without the lock
 * (xcudactl, the parent's log) never sees a torn value.  A worker that
 * dies holding the lock leaves it to the next locker (EOWNERDEAD): each
 * charge is a single store, so the table is consistent at every point.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpumem.h"
#include "ipc_table.h"

struct xd_gpumem_table {
	uint32_t magic;
	uint32_t slots;
	uint64_t rsvd;
	pthread_mutex_t lock;
	struct xd_gpumem_slot s[];
};

static struct xd_gpumem_table *xd_gm;
static size_t xd_gm_size;
static char *xd_gm_path;	/* the creator's file, removed at destroy */
static pid_t xd_gm_owner;
/* This worker's slot, or NULL. */
static struct xd_gpumem_slot *xd_gm_mine;

int xd_gpumem_create(unsigned int slots, const char *path)
{
	pthread_mutexattr_t ma;
	struct xd_gpumem_table *t;
	size_t size;
	int fd, err;

	if (!slots)
		return -EINVAL;
	size = sizeof(*t) + (size_t)slots * sizeof(t->s[0]);
	if (path) {
		/* Never through a link someone left there. */
		if (unlink(path) && errno != ENOENT)
			return -errno;
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
			  O_NOFOLLOW, 0600);
	} else {
		fd = memfd_create("xcuda-gpumem", MFD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size)) {
		err = -errno;
		close(fd);
		if (path)
			unlink(path);
		return err;
	}
	t = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = -errno;
	close(fd);	/* the mapping keeps it; workers need no descriptor */
	if (t == MAP_FAILED) {
		if (path)
			unlink(path);
		return err;
	}
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	err = -pthread_mutex_init(&t->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	if (err) {
		munmap(t, size);
		if (path)
			unlink(path);
		return err;
	}
	t->slots = slots;
	__atomic_store_n(&t->magic, XD_GPUMEM_MAGIC, __ATOMIC_RELEASE);
	xd_gpumem_destroy();
	xd_gm = t;
	xd_gm_size = size;
	xd_gm_path = path ? strdup(path) : NULL;
	xd_gm_owner = getpid();
	return 0;
}

void xd_gpumem_destroy(void)
{
	if (!xd_gm)
		return;
	if (xd_gm_path && getpid() == xd_gm_owner)
		unlink(xd_gm_path);
	free(xd_gm_path);
	xd_gm_path = NULL;
	munmap(xd_gm, xd_gm_size);
	xd_gm = NULL;
	xd_gm_size = 0;
	xd_gm_mine = NULL;
}

static void xd_gm_lock(void)
{
	if (pthread_mutex_lock(&xd_gm->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&xd_gm->lock);
}

static void xd_gm_unlock(void)
{
	pthread_mutex_unlock(&xd_gm->lock);
}

int xd_gpumem_bind(uint32_t session, uint64_t domain, uint64_t quota)
{
	struct xd_gpumem_slot *e = NULL;
	uint32_t i;

	if (!xd_gm)
		return -ENODEV;
	/* Domain 0 marks a free slot: an unknown guest is one of its own. */
	if (!domain)
		domain = UINT64_MAX;
	xd_gm_lock();
	for (i = 0; i < xd_gm->slots; i++) {
		if (!xd_gm->s[i].domain) {
			e = &xd_gm->s[i];
			break;
		}
	}
	if (e) {
		e->session = session;
		e->quota = quota;
		__atomic_store_n(&e->used, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&e->domain, domain, __ATOMIC_RELEASE);
	}
	xd_gm_unlock();
	xd_gm_mine = e;
	return e ? 0 : -ENOSPC;
}

int xd_gpumem_bound(void)
{
	return xd_gm && xd_gm_mine;
}

/* Under the lock. */
static uint64_t xd_gm_sum(uint64_t domain)
{
	uint64_t sum = 0, u;
	uint32_t i;

	for (i = 0; i < xd_gm->slots; i++) {
		if (xd_gm->s[i].domain != domain)
			continue;
		u = __atomic_load_n(&xd_gm->s[i].used, __ATOMIC_RELAXED);
		sum = sum > UINT64_MAX - u ? UINT64_MAX : sum + u;
	}
	return sum;
}

int xd_gpumem_charge(uint64_t bytes)
{
	struct xd_gpumem_slot *e = xd_gm_mine;
	uint64_t sum;
	int err = 0;

	if (!xd_gm || !e || !bytes)
		return 0;
	xd_gm_lock();
	sum = xd_gm_sum(e->domain);
	if (e->quota != XD_GPUMEM_NONE &&
	    (bytes > e->quota || sum > e->quota - bytes))
		err = -EDQUOT;
	else if (e->used > UINT64_MAX - bytes)
		err = -EDQUOT;
	else
		__atomic_add_fetch(&e->used, bytes, __ATOMIC_RELAXED);
	xd_gm_unlock();
	return err;
}

void xd_gpumem_uncharge(uint64_t bytes)
{
	struct xd_gpumem_slot *e = xd_gm_mine;

	if (!xd_gm || !e || !bytes)
		return;
	xd_gm_lock();
	if (e->used < bytes)
		bytes = e->used;
	__atomic_sub_fetch(&e->used, bytes, __ATOMIC_RELAXED);
	xd_gm_unlock();
}

void xd_gpumem_forget_session(uint32_t session)
{
	uint32_t i;

	if (!xd_gm)
		return;
	xd_gm_lock();
	for (i = 0; i < xd_gm->slots; i++) {
		if (xd_gm->s[i].domain && xd_gm->s[i].session == session) {
			__atomic_store_n(&xd_gm->s[i].domain, 0,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&xd_gm->s[i].used, 0,
					 __ATOMIC_RELAXED);
			xd_gm->s[i].session = 0;
			xd_gm->s[i].quota = 0;
		}
	}
	xd_gm_unlock();
}

uint64_t xd_gpumem_used(uint64_t domain)
{
	uint64_t sum;

	if (!xd_gm)
		return 0;
	xd_gm_lock();
	sum = xd_gm_sum(domain);
	xd_gm_unlock();
	return sum;
}

static void xd_gm_domain_name(uint64_t d, char *buf, size_t size)
{
	if ((d & ~0xffffffffull) == XD_DOMAIN_XEN)
		snprintf(buf, size, "xen:%u", (unsigned int)d);
	else if ((d & ~0xffffffffull) == XD_DOMAIN_LOCAL)
		snprintf(buf, size, "local-uid:%u", (unsigned int)d);
	else if (d & XD_DOMAIN_RELAYED)
		snprintf(buf, size, "relayed:%016" PRIx64, d);
	else
		snprintf(buf, size, "unknown:%016" PRIx64, d);
}

static void xd_gm_bytes(uint64_t n, char *buf, size_t size)
{
	if (n == XD_GPUMEM_NONE)
		snprintf(buf, size, "none");
	else
		snprintf(buf, size, "%" PRIu64 " (%.1f MiB)", n,
			 (double)n / (1 << 20));
}

int xd_gpumem_print(const char *path, FILE *out)
{
	const struct xd_gpumem_table *t;
	struct stat st;
	uint64_t *seen = NULL;
	uint32_t slots, i, j, nseen = 0;
	int fd, err = 0;
	void *m;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*t)) {
		close(fd);
		return -EPROTO;
	}
	m = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	t = m;
	slots = t->slots;
	if (t->magic != XD_GPUMEM_MAGIC ||
	    slots > ((size_t)st.st_size - sizeof(*t)) / sizeof(t->s[0])) {
		err = -EPROTO;
		goto out;
	}
	seen = calloc(slots ? slots : 1, sizeof(*seen));
	if (!seen) {
		err = -ENOMEM;
		goto out;
	}
	fprintf(out, "%-24s %-28s %-28s %s\n", "domain", "gpumem-used",
		"gpumem-quota", "sessions");
	for (i = 0; i < slots; i++) {
		uint64_t d = __atomic_load_n(&t->s[i].domain,
					     __ATOMIC_ACQUIRE);
		uint64_t used = 0, quota = XD_GPUMEM_NONE;
		unsigned int n = 0;
		char name[48], ub[48], qb[48];

		if (!d)
			continue;
		for (j = 0; j < nseen && seen[j] != d; j++)
			;
		if (j < nseen)
			continue;
		seen[nseen++] = d;
		for (j = i; j < slots; j++) {
			if (__atomic_load_n(&t->s[j].domain,
					    __ATOMIC_ACQUIRE) != d)
				continue;
			used += __atomic_load_n(&t->s[j].used,
						__ATOMIC_RELAXED);
			/* The strictest quota of its sessions. */
			if (t->s[j].quota < quota)
				quota = t->s[j].quota;
			n++;
		}
		xd_gm_domain_name(d, name, sizeof(name));
		xd_gm_bytes(used, ub, sizeof(ub));
		xd_gm_bytes(quota, qb, sizeof(qb));
		fprintf(out, "%-24s %-28s %-28s %u\n", name, ub, qb, n);
	}
	if (!nseen)
		fprintf(out, "(no sessions)\n");
out:
	free(seen);
	munmap(m, st.st_size);
	return err;
}

int xd_gpumem_parse(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !*s)
		return -1;
	if (!strcmp(s, "none")) {
		*bytes = XD_GPUMEM_NONE;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	v <<= shift;
	*bytes = v ? v : XD_GPUMEM_NONE;
	return 0;
}
