/* SPDX-License-Identifier: MIT */
/*
 * GPU memory quotas per domain (docs/security.md, "Limits").
 *
 * xcudad makes one table before it forks any worker, in shared memory
 * that every worker inherits: one slot per live session, with the
 * session's domain (ipc_table.h's XD_DOMAIN_*), the quota of that
 * session's domain (the device's gpumem= node, else the daemon's
 * --gpumem) and the bytes its worker holds.  A domain's usage is the sum
 * over its sessions' slots, so it is counted across the domain's workers
 * and never across domains.  A worker charges a request before CUDA is
 * called (under a robust, process-shared lock: check and charge are one
 * step for all the domain's workers) and gives the bytes back when the
 * allocation is freed; the parent clears a session's slot when it reaps
 * the worker, however the worker ended, so a crashed worker's share
 * returns.  The guest never names a domain or touches the table: it
 * lives in Dom0's memory only.
 *
 * The table is also a file (mode 0600, beside the daemon's socket) that
 * `xcudactl status` maps read-only.
 */
#ifndef XCUDAD_GPUMEM_H
#define XCUDAD_GPUMEM_H

#include <stdint.h>
#include <stdio.h>

#define XD_GPUMEM_MAGIC		0x6d656d67u	/* "gmem" */
#define XD_GPUMEM_NONE		UINT64_MAX	/* no quota */
/* The smallest unit counted: every allocation is rounded up to it. */
#define XD_GPUMEM_PAGE		4096u
/* Row pitch that cudaMallocPitch, cudaMalloc3D and arrays may round to. */
#define XD_GPUMEM_PITCH		512u
/* The suffix of the table's file after the daemon's socket path. */
#define XD_GPUMEM_FILE_SUFFIX	".gpumem"

struct xd_gpumem_slot {
	uint64_t domain;	/* 0: free */
	uint32_t session;
	uint32_t rsvd;
	uint64_t quota;		/* bytes, XD_GPUMEM_NONE: none */
	uint64_t used;		/* bytes; atomics */
};

/*
 * Creates the table with @slots slots and makes it this process's (and
 * its children's); when @path is not NULL, in a new file there (an old
 * one is replaced), else in anonymous shared memory.  0 or -errno.
 */
int xd_gpumem_create(unsigned int slots, const char *path);
/* Unmaps this process's table (and removes its file, in the creator). */
void xd_gpumem_destroy(void);

/*
 * In a worker: takes a slot for @session of @domain with @quota bytes
 * (XD_GPUMEM_NONE: none) and counts this process's allocations there.
 * 0, -ENODEV (no table: nothing is counted), -ENOSPC.
 */
int xd_gpumem_bind(uint32_t session, uint64_t domain, uint64_t quota);
/* Whether this process counts (a table and a bound slot). */
int xd_gpumem_bound(void);

/*
 * Charges @bytes to this worker's slot if its domain's total stays
 * within the quota: 0, or -EDQUOT (nothing charged).  0 when unbound.
 */
int xd_gpumem_charge(uint64_t bytes);
/* Gives back @bytes charged before. */
void xd_gpumem_uncharge(uint64_t bytes);

/* The parent: the session's worker is gone; its slot and share too. */
void xd_gpumem_forget_session(uint32_t session);

/* Bytes @domain's sessions hold now, and the quota of its slots. */
uint64_t xd_gpumem_used(uint64_t domain);

/*
 * Prints one line per domain with live sessions of the table mapped from
 * @path (the daemon's file): "DOMAIN used BYTES quota BYTES|none
 * sessions N".  0, or -errno (no such file, not a table).
 */
int xd_gpumem_print(const char *path, FILE *out);

/*
 * Parses a size: digits with an optional K, M, G or T (powers of 1024,
 * either case), or "none"/"0" for no quota (XD_GPUMEM_NONE).  0 or -1.
 */
int xd_gpumem_parse(const char *s, uint64_t *bytes);

/* Saturating helpers for the request sizes (ops_gpumem.c). */
static inline uint64_t xd_gpumem_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t xd_gpumem_round(uint64_t n, uint64_t to)
{
	if (n > UINT64_MAX - (to - 1))
		return UINT64_MAX;
	return (n + to - 1) / to * to;
}

#endif /* XCUDAD_GPUMEM_H */
