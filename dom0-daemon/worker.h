/* SPDX-License-Identifier: MIT */
/*
 * A worker serves one guest session: it takes requests off its transport,
 * validates them, runs the CUDA call and answers each exactly once.  It is
 * a process of its own (forked by xcudad), so CUDA state, crashes and
 * leaks stay within the session.
 */
#ifndef XCUDAD_WORKER_H
#define XCUDAD_WORKER_H

#include <stdint.h>
#include <string.h>

#include "xcuda/calls.h"
#include "xcuda/worker_handlers.h"
#include "handles.h"
#include "transport.h"

/* A pinned arena extent, to unpin when the session ends. */
struct xd_pin {
	uint64_t off;
	uint64_t len;
	struct xd_pin *next;
};

struct xd_hostfn;
struct xd_nvml;
struct xd_rgraph;

/* The fatbinary being uploaded by MODULE_DATA pieces. */
struct xd_upload {
	uint8_t *image;		/* NULL when no upload is under way */
	uint64_t total;
	uint64_t got;
};

struct xd_session {
	struct xd_chan *chan;
	uint32_t id;
	int opened;		/* OPEN has succeeded */
	/*
	 * Not 0: every CUDA command is answered this (a GPU here reaches
	 * pageable memory, which would give kernels this process's: see
	 * xd_worker_allow_pageable).
	 */
	int refused;
	int same_va;		/* the arena is at the guest's address */
	int device;		/* the worker's current CUDA device */
	uint32_t features;
	struct xd_htab streams;
	struct xd_htab events;
	struct xd_htab modules;	/* meta: struct xd_module */
	struct xd_htab funcs;	/* meta: struct xd_func */
	/* Objects of the kinds the description declares with "handle". */
	struct xd_htab objects[XD_OBJECT_KINDS];
	struct xd_pin *pins;
	unsigned int npins;
	struct xd_upload upload;
	/* LAUNCH builds its argument vector here. */
	uint8_t *argbuf;	/* XCUDA_MAX_ARGS_BYTES */
	void **argv;		/* XCUDA_MAX_PARAMS */
	struct xd_hostfn *hostfn;	/* host functions (hostfn.c), or NULL */
	struct xd_nvml *nvml;	/* the session's GPUs in NVML, or NULL */
	/* A relayed session's executable graphs (graph_remote.c), or NULL. */
	struct xd_rgraph *rgraph;
};

/* One request being handled: a validated private copy and its answer. */
struct xd_call {
	const struct xcuda_request *req;
	uint8_t *data;		/* arena + data_off: guest-writable memory */
	uint32_t data_len;
	void *res;		/* the response's out[], zeroed */
	uint32_t res_len;	/* the command's result size */
	int end;		/* set by a handler: end the session after it */
};

/* Sets up @s for @c; returns 0 or -ENOMEM. */
int xd_session_init(struct xd_session *s, struct xd_chan *c);
/* Releases everything the session holds in CUDA and in memory. */
void xd_session_fini(struct xd_session *s);

/* Handles one request; fills @rsp.  Returns 1 if the session must end. */
int xd_handle(struct xd_session *s, struct xcuda_request *req,
	      struct xcuda_response *rsp);

/*
 * Serves the session on @c until the guest closes it, goes away or
 * breaks the ring; closes @c.  Returns the worker's exit status.
 */
/*
 * Whether a worker may serve GPUs that reach pageable host memory
 * (cudaDevAttrPageableMemoryAccess: HMM or ATS).  There a guest's kernel
 * could read and write the worker's whole address space through plain
 * pointers, so by default the worker refuses CUDA commands on such a
 * host (xcudad --allow-pageable-memory-access).  Set before workers fork.
 */
extern int xd_worker_allow_pageable;
/* A request may run this long (s) before it ends its session; 0: forever. */
extern unsigned int xd_worker_deadline_s;

int xd_worker_run(struct xd_chan *c);
/*
 * The same, counting the session's GPU memory against its domain's
 * @quota bytes (XD_GPUMEM_NONE: none) in the daemon's table (gpumem.h).
 */
int xd_worker_gpumem(struct xd_chan *c, uint64_t quota);

/* Logs what @c's transport counted for the session, where it counts. */
void xd_log_counters(struct xd_chan *c);

#endif /* XCUDAD_WORKER_H */
