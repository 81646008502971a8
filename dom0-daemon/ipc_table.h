/* SPDX-License-Identifier: MIT */
/*
 * The daemon's table of CUDA IPC handles (docs/protocol.md, "IPC
 * handles"): xcudad creates it before it forks any worker, in shared
 * memory that every worker inherits.  A worker that exports a memory or
 * event handle records its bytes with the domain its guest belongs to; a
 * worker asked to open a handle opens it only if the table records it
 * for its own domain.  The guest never names a domain: the transport
 * tells it (the peer's uid on `local`, the domain id on `xen`).
 */
#ifndef XCUDAD_IPC_TABLE_H
#define XCUDAD_IPC_TABLE_H

#include <stdint.h>

/* Domains: the transport in the high half, its identity in the low. */
#define XD_DOMAIN_LOCAL		(1ull << 32)	/* | the peer's uid */
#define XD_DOMAIN_XEN		(2ull << 32)	/* | the domain id */
#define XD_DOMAIN_RELAYED	(1ull << 63)	/* | xd_up_domain()'s hash */

#define XD_IPC_HANDLE		64	/* cudaIpc{Mem,Event}Handle_t */
#define XD_IPC_SLOTS		4096	/* entries in the daemon's table */
#define XD_IPC_PER_DOMAIN	1024	/* entries one domain may hold */

enum {
	XD_IPC_MEM = 1,
	XD_IPC_EVENT = 2,
	XD_IPC_POOL_FABRIC = 3,	/* a pool's cudaMemFabricHandle_t */
	XD_IPC_POOL_PTR = 4,	/* cudaMemPoolPtrExportData */
};

/*
 * Creates the table with @slots entries (0: XD_IPC_SLOTS) in shared
 * anonymous memory and makes it this process's (and its children's).
 * Returns 0 or a negative errno; without a table every record and every
 * open is refused.
 */
int xd_ipc_table_create(unsigned int slots);
/* Unmaps this process's table. */
void xd_ipc_table_destroy(void);

/*
 * Records @bytes of @kind as exported by @session of @domain: 0, or
 * -ENOSPC (the table is full), -EDQUOT (the domain holds
 * XD_IPC_PER_DOMAIN entries), -ENODEV (no table).  The same bytes
 * recorded again belong to the newest exporter.
 */
int xd_ipc_record(uint64_t domain, uint32_t session, int kind,
		  const uint8_t *bytes);
/*
 * Whether a worker of @domain may open @bytes of @kind: 0, -ENOENT (not
 * recorded), -EPERM (recorded for another domain), -ENODEV (no table).
 */
int xd_ipc_check(uint64_t domain, int kind, const uint8_t *bytes);
/* Drops every entry of @session (its end, or its worker's). */
void xd_ipc_forget_session(uint32_t session);
/* Live entries, for tests and the log. */
unsigned int xd_ipc_live(void);

#endif /* XCUDAD_IPC_TABLE_H */
