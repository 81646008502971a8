// SPDX-License-Identifier: MIT
/*
 * Shared-memory helpers common to the worker's transports.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>

#include "xcuda/proto.h"
#include "shm.h"

int xd_shm_map_at(int memfd, off_t off, size_t size, uint64_t addr,
		  void **out)
{
	void *want = (void *)(uintptr_t)addr, *p;

	/*
	 * Not where the worker's own image, heap or a stray small pointer
	 * would meet guest bytes: the guest's mappings are far above.
	 */
	if (memfd < 0 || addr < XD_SHM_LOWEST || addr % XCUDA_PAGE_SIZE ||
	    !size)
		return -EINVAL;
	p = mmap(want, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, memfd, off);
	if (p == MAP_FAILED)
		return -errno;
	if (p != want) {
		/* A kernel older than 4.17 took the address as a hint. */
		munmap(p, size);
		return -EEXIST;
	}
	*out = p;
	return 0;
}

int xd_shm_create(struct xd_shm *m, const char *name, size_t head,
		  uint64_t arena)
{
	int err;

	*m = (struct xd_shm){ .memfd = -1, .head = head };
	if (arena > SIZE_MAX - head)
		return -ENOMEM;
	m->size = head + (size_t)arena;
	m->memfd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (m->memfd < 0)
		goto fail;
	if (ftruncate(m->memfd, (off_t)m->size) < 0 ||
	    fcntl(m->memfd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	m->base = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       m->memfd, 0);
	if (m->base == MAP_FAILED)
		goto fail;
	return 0;
fail:
	err = -errno;
	if (m->memfd >= 0)
		close(m->memfd);
	*m = (struct xd_shm){ .memfd = -1 };
	return err;
}

int xd_shm_arena_at(struct xd_shm *m, uint64_t addr, uint8_t **arena)
{
	size_t size = m->size - m->head;
	void *p;
	int ret;

	if (m->moved)
		return -EINVAL;
	ret = xd_shm_map_at(m->memfd, (off_t)m->head, size, addr, &p);
	if (ret)
		return ret;
	munmap(m->base + m->head, size);
	m->moved = p;
	*arena = p;
	return 0;
}

void xd_shm_destroy(struct xd_shm *m)
{
	if (m->moved) {
		munmap(m->base, m->head);
		munmap(m->moved, m->size - m->head);
	} else if (m->base) {
		munmap(m->base, m->size);
	}
	if (m->memfd >= 0)
		close(m->memfd);
	*m = (struct xd_shm){ .memfd = -1 };
}
