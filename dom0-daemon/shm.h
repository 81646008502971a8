/* SPDX-License-Identifier: MIT */
/*
 * Shared-memory helpers common to the worker's transports.
 */
#ifndef XCUDAD_SHM_H
#define XCUDAD_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Maps @size bytes of @memfd from @off at exactly @addr, only if nothing
 * is mapped anywhere in that range (MAP_FIXED_NOREPLACE): the address
 * comes from the guest, so it must never replace anything of ours.
 * Returns 0 with the mapping in *out, or a negative errno.
 */
int xd_shm_map_at(int memfd, off_t off, size_t size, uint64_t addr,
		  void **out);

#endif /* XCUDAD_SHM_H */
