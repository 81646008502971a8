/* SPDX-License-Identifier: MIT */
/*
 * Resource limits (setrlimit) of each worker, set as it enters its
 * sandbox: before it reads a byte of its guest, and while a root daemon's
 * worker may still raise a hard limit.  Soft and hard are the same, so
 * that the worker cannot raise them again.  docs/security.md ("Session
 * limits") says why these and not the others (RLIMIT_AS, RLIMIT_NPROC,
 * RLIMIT_FSIZE, RLIMIT_MEMLOCK).
 */
#ifndef XCUDAD_RLIMITS_H
#define XCUDAD_RLIMITS_H

#include <stdint.h>

/* A limit that is not set: the worker keeps the daemon's. */
#define XD_LIMIT_NONE		UINT64_MAX

/*
 * RLIMIT_DATA counts private writable mappings (Linux 4.7 on): the heap,
 * module images, thread stacks.  Not CUDA's pinned or managed memory,
 * nor the arena (shared mappings).  A CUDA process holds about 40 MiB of
 * it after initialisation; the largest use a guest can cause is its
 * module images (1 GiB, image_budget.h).
 */
#define XD_RLIMIT_DATA_DEFAULT	(16ull << 30)
/* CUDA had 38 open with one GPU; more GPUs, IPC handles, memfds add. */
#define XD_RLIMIT_NOFILE_DEFAULT	4096u

/*
 * Sanitizers map their shadow memory private and writable, terabytes of
 * "data": such a build sets no RLIMIT_DATA (xd_rlimits_settle).
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define XD_SHADOW_BUILD	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define XD_SHADOW_BUILD	1
#endif
#endif

struct xd_rlimits {
	uint64_t data;		/* RLIMIT_DATA, bytes; XD_LIMIT_NONE: none */
	uint64_t nofile;	/* RLIMIT_NOFILE; XD_LIMIT_NONE: none */
	int core_dumps;		/* 1: the daemon's RLIMIT_CORE; 0: none */
};

void xd_rlimits_default(struct xd_rlimits *r);

/*
 * A size in bytes with an optional K, M, G or T (powers of 1024), or a
 * count when @suffix is 0; "0", "off", "none" and "max" are
 * XD_LIMIT_NONE.  0, or -1 when @s is neither.
 */
int xd_limit_parse(const char *s, int suffix, uint64_t *v);

/*
 * In the daemon, once at start: drops what this build cannot have (no
 * RLIMIT_DATA under AddressSanitizer, whose shadow memory counts as
 * data), and logs what workers get.
 */
void xd_rlimits_settle(struct xd_rlimits *r);

/*
 * In a worker, before it drops privilege: 0, or -1 (logged) when a limit
 * could not be set.  A limit above the daemon's hard limit, which an
 * unprivileged worker cannot raise, is the daemon's.
 */
int xd_rlimits_apply(const struct xd_rlimits *r);

#endif /* XCUDAD_RLIMITS_H */
