/* SPDX-License-Identifier: MIT */
/*
 * Shared-memory helpers common to the worker's transports.
 */
#ifndef XCUDAD_SHM_H
#define XCUDAD_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The lowest address a guest may ask us to map its memory at: 4 GiB. */
#define XD_SHM_LOWEST	(1ull << 32)

/*
 * Maps @size bytes of @memfd from @off at exactly @addr, only if nothing
 * is mapped anywhere in that range (MAP_FIXED_NOREPLACE): the address
 * comes from the guest, so it must never replace anything of ours, and
 * it must be page aligned and at least XD_SHM_LOWEST (-EINVAL).
 * Returns 0 with the mapping in *out, or a negative errno.
 */
int xd_shm_map_at(int memfd, off_t off, size_t size, uint64_t addr,
		  void **out);

/*
 * A session's shared memory, whichever transport shares it: one memfd of
 * @head bytes (the transport's: the ring, and on `xen` the header page
 * before it) and then the arena, sealed so that it can neither shrink
 * nor grow (a guest that could truncate it would make us fault; pages
 * the Xen backend pinned and granted must stay), and mapped here whole.
 * The memfd is kept to map the arena again (xd_shm_arena_at).
 */
struct xd_shm {
	int memfd;		/* -1 until created */
	uint8_t *base;		/* the mapping of [0, head + arena) */
	size_t head;		/* bytes before the arena */
	size_t size;		/* head + arena */
	void *moved;		/* the arena's own mapping once moved */
};

/*
 * Creates, sizes, seals and maps @m: zeros, named @name.  Returns 0, or
 * a negative errno with @m empty (memfd -1, base NULL).
 */
int xd_shm_create(struct xd_shm *m, const char *name, size_t head,
		  uint64_t arena);

/* The arena, wherever it is mapped now. */
static inline uint8_t *xd_shm_arena(const struct xd_shm *m)
{
	return m->moved ? (uint8_t *)m->moved : m->base + m->head;
}

/*
 * Maps the arena again at exactly @addr (xd_shm_map_at()), once, unmaps
 * it from its old place and points *@arena at the new one.  Returns 0 or
 * a negative errno (-EINVAL: moved already; the old mapping stays).
 */
int xd_shm_arena_at(struct xd_shm *m, uint64_t addr, uint8_t **arena);

/* Unmaps everything and closes the memfd; @m is empty afterwards. */
void xd_shm_destroy(struct xd_shm *m);

#endif /* XCUDAD_SHM_H */
