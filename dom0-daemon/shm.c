// SPDX-License-Identifier: MIT
/*
 * Shared-memory helpers common to the worker's transports.
 */
#include <errno.h>
#include <sys/mman.h>

#include "xcuda/proto.h"
#include "shm.h"

int xd_shm_map_at(int memfd, off_t off, size_t size, uint64_t addr,
		  void **out)
{
	void *want = (void *)(uintptr_t)addr, *p;

	if (memfd < 0 || !addr || addr % XCUDA_PAGE_SIZE || !size)
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
