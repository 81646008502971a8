/* SPDX-License-Identifier: MIT */
/*
 * Graph copies to and from the arena on a relayed session (XD_CHAN_REMOTE):
 * the worker knows each executable graph's memcpy nodes and tells the
 * relay which arena bytes they read (graph_ext), so that it sends them
 * before each launch; what they write goes back as a posted copy's does.
 * See graph_remote.c.  Nothing here runs for other sessions.
 */
#ifndef XCUDAD_GRAPH_REMOTE_H
#define XCUDAD_GRAPH_REMOTE_H

#include <cuda_runtime_api.h>

#include "worker.h"

/* Before a handler: cudaErrorNotSupported for a launch it cannot serve. */
int xd_rgraph_before(struct xd_session *s, const struct xcuda_request *req);
/* After a handler that returned @status, with its result @res. */
void xd_rgraph_after(struct xd_session *s, const struct xcuda_request *req,
		     int status, const void *res);
/*
 * Node @node of exec @exec now copies as @cp, or (@child) runs a copy of
 * graph @child: the exec setters (ops_graph.c), after CUDA took them.
 */
void xd_rgraph_node_set(struct xd_session *s, uint32_t exec,
			cudaGraphNode_t node,
			const struct cudaMemcpy3DParms *cp, cudaGraph_t child);

#endif /* XCUDAD_GRAPH_REMOTE_H */
