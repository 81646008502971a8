/* SPDX-License-Identifier: MIT */
/*
 * Host functions (cudaLaunchHostFunc, cudaStreamAddCallback, host nodes
 * of captured graphs) run in the guest: the slot area in the arena
 * through which the worker says "run the function registered under this
 * token now" and the guest says "it returned".  docs/protocol.md, "Host
 * functions", describes the rules; both ends treat the other's words as
 * hints they check.
 */
#ifndef XCUDA_HOSTFN_H
#define XCUDA_HOSTFN_H

#include <stdint.h>

#define XCUDA_HOSTFN_SLOTS	64

/* Record flags (slot.flags, written by the worker). */
#define XCUDA_HOSTFN_GRAPH	(1u << 0)	/* a graph's: fires again */

/*
 * One function running.  The worker owns a slot from publishing a record
 * until done == seq; it writes token, status and flags, then seq (never
 * 0, never the slot's previous value).  The guest runs the function and
 * stores done = seq.  A registration with a payload buffer (a log
 * message, an async notification) has its bytes there and their count
 * in arg; the guest bounds it by the buffer it gave.
 */
struct xcuda_hostfn_slot {
	uint64_t token;		/* worker: the guest's token */
	uint32_t seq;		/* worker: a new record when != done */
	uint32_t done;		/* guest: = seq once the function ran */
	int32_t status;		/* worker: the stream's status */
	uint32_t flags;		/* worker: XCUDA_HOSTFN_* */
	uint64_t arg;		/* worker: a payload's length, else 0 */
};

struct xcuda_hostfn_area {
	uint32_t wake;		/* worker: bumped after each record */
	uint32_t rsvd[15];
	struct xcuda_hostfn_slot slot[XCUDA_HOSTFN_SLOTS];
};

#endif /* XCUDA_HOSTFN_H */
