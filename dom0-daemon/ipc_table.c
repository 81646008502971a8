// SPDX-License-Identifier: MIT
/*
 * The daemon's IPC handle table (ipc_table.h): an array of entries after
 * a robust, process-shared mutex, in a MAP_SHARED mapping of a memfd that
 * xcudad makes before forking, so that every worker and the parent see
 * one table.  Each entry holds the handle's whole 64 bytes, compared
 * exactly: a guest that guesses or forges handle bytes gains nothing,
 * since the entry says which domain may open them.  Lookups scan the
 * array (4096 entries of 80 bytes); IPC calls are rare.  A worker that
 * dies holding the lock leaves it to the next locker (EOWNERDEAD), and
 * the entry being written is only marked used once complete.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ipc_table.h"

struct xd_ipc_entry {
	uint64_t domain;
	uint32_t session;
	uint8_t kind;		/* 0: free */
	uint8_t rsvd[3];
	uint8_t bytes[XD_IPC_HANDLE];
};

struct xd_ipc_table {
	pthread_mutex_t lock;
	uint32_t slots;
	uint32_t live;
	struct xd_ipc_entry e[];
};

static struct xd_ipc_table *xd_ipc;
static size_t xd_ipc_size;

int xd_ipc_table_create(unsigned int slots)
{
	pthread_mutexattr_t ma;
	struct xd_ipc_table *t;
	size_t size;
	int fd, err;

	if (!slots)
		slots = XD_IPC_SLOTS;
	size = sizeof(*t) + (size_t)slots * sizeof(t->e[0]);
	fd = memfd_create("xcuda-ipc", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size)) {
		err = -errno;
		close(fd);
		return err;
	}
	t = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = -errno;
	close(fd);	/* the mapping keeps it; workers need no descriptor */
	if (t == MAP_FAILED)
		return err;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	err = -pthread_mutex_init(&t->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	if (err) {
		munmap(t, size);
		return err;
	}
	t->slots = slots;
	xd_ipc_table_destroy();
	xd_ipc = t;
	xd_ipc_size = size;
	return 0;
}

void xd_ipc_table_destroy(void)
{
	if (!xd_ipc)
		return;
	munmap(xd_ipc, xd_ipc_size);
	xd_ipc = NULL;
	xd_ipc_size = 0;
}

static void xd_ipc_lock(void)
{
	if (pthread_mutex_lock(&xd_ipc->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&xd_ipc->lock);
}

static void xd_ipc_unlock(void)
{
	pthread_mutex_unlock(&xd_ipc->lock);
}

static struct xd_ipc_entry *xd_ipc_find(int kind, const uint8_t *bytes)
{
	uint32_t i;

	for (i = 0; i < xd_ipc->slots; i++)
		if (xd_ipc->e[i].kind == kind &&
		    !memcmp(xd_ipc->e[i].bytes, bytes, XD_IPC_HANDLE))
			return &xd_ipc->e[i];
	return NULL;
}

int xd_ipc_record(uint64_t domain, uint32_t session, int kind,
		  const uint8_t *bytes)
{
	struct xd_ipc_entry *e, *free_e = NULL;
	uint32_t i, mine = 0;
	int err = 0;

	if (!xd_ipc)
		return -ENODEV;
	xd_ipc_lock();
	e = xd_ipc_find(kind, bytes);
	if (e) {
		e->domain = domain;
		e->session = session;
		goto out;
	}
	for (i = 0; i < xd_ipc->slots; i++) {
		if (!xd_ipc->e[i].kind) {
			if (!free_e)
				free_e = &xd_ipc->e[i];
		} else if (xd_ipc->e[i].domain == domain) {
			mine++;
		}
	}
	/* No guest can take the whole table from the others. */
	if (mine >= XD_IPC_PER_DOMAIN) {
		err = -EDQUOT;
	} else if (!free_e) {
		err = -ENOSPC;
	} else {
		free_e->domain = domain;
		free_e->session = session;
		memcpy(free_e->bytes, bytes, XD_IPC_HANDLE);
		/* Used only once whole: a locker after our death sees
		 * either nothing or the complete entry. */
		__atomic_store_n(&free_e->kind, (uint8_t)kind,
				 __ATOMIC_RELEASE);
		xd_ipc->live++;
	}
out:
	xd_ipc_unlock();
	return err;
}

int xd_ipc_check(uint64_t domain, int kind, const uint8_t *bytes)
{
	struct xd_ipc_entry *e;
	int err;

	if (!xd_ipc)
		return -ENODEV;
	xd_ipc_lock();
	e = xd_ipc_find(kind, bytes);
	err = !e ? -ENOENT : e->domain != domain ? -EPERM : 0;
	xd_ipc_unlock();
	return err;
}

void xd_ipc_forget_session(uint32_t session)
{
	uint32_t i;

	if (!xd_ipc)
		return;
	xd_ipc_lock();
	for (i = 0; i < xd_ipc->slots; i++) {
		if (xd_ipc->e[i].kind && xd_ipc->e[i].session == session) {
			memset(&xd_ipc->e[i], 0, sizeof(xd_ipc->e[i]));
			xd_ipc->live--;
		}
	}
	xd_ipc_unlock();
}

unsigned int xd_ipc_live(void)
{
	unsigned int n;

	if (!xd_ipc)
		return 0;
	xd_ipc_lock();
	n = xd_ipc->live;
	xd_ipc_unlock();
	return n;
}
