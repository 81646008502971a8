/* SPDX-License-Identifier: MIT */
/*
 * Graph copies that name pageable memory (api_graph_bounce.c).  The worker
 * replays a graph's copies long after the call, so it cannot reach the
 * program's pageable memory: such a copy goes through a bounce block of
 * pinned arena memory, and a host node run in the guest at each launch
 * moves the bytes between the block and the program's memory.  The pair
 * is one child graph node standing for the program's copy, so that node
 * counts stay as natively.
 */
#ifndef XCUDA_GUEST_GRAPH_BOUNCE_H
#define XCUDA_GUEST_GRAPH_BOUNCE_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "guest.h"

/* Live bounce blocks take at most 1/this of the arena's pinned heap. */
#define XC_BOUNCE_HEAP_SHARE	2
/* How long a block that does not fit waits for dead ones, at most. */
#define XC_BOUNCE_WAIT_MS	200

/* Which side of a copy is pageable. */
#define XC_BOUNCE_SRC	1
#define XC_BOUNCE_DST	2

/*
 * The program's copy @p, whose side @which is pageable, as a child graph
 * node of @graph with the given dependencies.
 */
cudaError_t xc_bounce_node(cudaGraphNode_t *pnode, cudaGraph_t graph,
			   const cudaGraphNode_t *deps,
			   const cudaGraphEdgeData *edata, size_t ndeps,
			   const struct cudaMemcpy3DParms *p, int which);

/*
 * cudaMemcpyAsync of @count bytes whose side @which is pageable: when
 * @stream is being captured, adds the bounced copy to the captured graph
 * and answers 1 with *@err; 0 when it is not captured (the caller copies
 * as usual).  Weak: the library's internals link without the API files
 * in the unit tests, where it is absent.
 */
int xc_bounce_capture(void *dst, const void *src, size_t count,
		      enum cudaMemcpyKind kind, cudaStream_t stream,
		      int per_thread, int which, cudaError_t *err)
	__attribute__((weak));

/* A capture began (+1) or ended (-1) (api_graph.c). */
void xc_capture_count(int delta);
/* Whether a capture may be under way: weak, as xc_bounce_capture. */
int xc_capture_maybe(void) __attribute__((weak));

/* Bounce blocks live now (bytes), for tests. */
unsigned long long xc_bounce_bytes(void);

#endif /* XCUDA_GUEST_GRAPH_BOUNCE_H */
