// SPDX-License-Identifier: MIT
/*
 * The explicit graph API (spec/cudart-graph-nodes.calls): node
 * parameters become struct xcuda_gparams (kernels as handles with their
 * packed arguments, host memory as arena offsets), arrays of nodes become
 * arrays of handles, and the answers come back the other way.  Nodes and
 * graphs are the worker's handles as pointers, as streams are.
 *
 * What CUDA hands out and keeps (a conditional node's body graphs, a
 * kernel node's argument pointers, the dependencies of a capture) is kept
 * here, in memory the guest owns, as long as CUDA keeps its own.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "xcuda/graph.h"
#include "xcuda/launch.h"
#include "guest.h"
#include "graph_bounce.h"
#include "hostfn.h"

/* The per-thread default stream's entry points (no header declares them). */
cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec,
						cudaGraph_t graph,
						cudaGraphInstantiateParams *p);
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
					  enum cudaStreamCaptureStatus *status,
					  unsigned long long *id,
					  cudaGraph_t *graph,
					  const cudaGraphNode_t **deps,
					  const cudaGraphEdgeData **edata,
					  size_t *ndeps);
cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(
	cudaStream_t stream, cudaGraphNode_t *dependencies,
	const cudaGraphEdgeData *dependencyData, size_t numDependencies,
	unsigned int flags);
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream,
				      cudaGraph_t *pGraph);
cudaError_t cudaStreamBeginCaptureToGraph_ptsz(
	cudaStream_t stream, cudaGraph_t graph,
	const cudaGraphNode_t *dependencies,
	const cudaGraphEdgeData *dependencyData, size_t numDependencies,
	enum cudaStreamCaptureMode mode);

/* A node's memory we answered with: body graphs, kernel arguments. */
struct xc_gkeep {
	uint32_t node;
	int what;		/* 0: bodies, 1: kernel arguments */
	void *mem;
	struct xc_gkeep *next;
};

static pthread_mutex_t xc_gkeep_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_gkeep *xc_gkeeps;

/* Keeps @mem for @node (freeing what it replaces); 0 or -1. */
static int xc_gkeep(uint32_t node, int what, void *mem)
{
	struct xc_gkeep *k;

	pthread_mutex_lock(&xc_gkeep_lock);
	for (k = xc_gkeeps; k; k = k->next)
		if (k->node == node && k->what == what)
			break;
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (k) {
			k->node = node;
			k->what = what;
			k->next = xc_gkeeps;
			xc_gkeeps = k;
		}
	}
	if (k) {
		free(k->mem);
		k->mem = mem;
	}
	pthread_mutex_unlock(&xc_gkeep_lock);
	return k ? 0 : -1;
}

static void *xc_h2p(uint32_t h)
{
	return (void *)(uintptr_t)h;
}

/* A non-NULL handle of ours: 0 or cudaErrorInvalidValue. */
static cudaError_t xc_hin(const void *p, uint32_t *h)
{
	if (!p || xc_handle_in(p, h))
		return cudaErrorInvalidValue;
	return cudaSuccess;
}

/* @n node handles out of @nodes, in a buffer of ours (NULL for none). */
static cudaError_t xc_nodes_in(const cudaGraphNode_t *nodes, size_t n,
			       uint32_t **out)
{
	size_t i;

	*out = NULL;
	if (!n)
		return cudaSuccess;
	if (!nodes || n > XCUDA_GLIST_MAX)
		return cudaErrorInvalidValue;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return cudaErrorMemoryAllocation;
	for (i = 0; i < n; i++)
		if (xc_hin(nodes[i], &(*out)[i])) {
			free(*out);
			*out = NULL;
			return cudaErrorInvalidValue;
		}
	return cudaSuccess;
}

/* ---- node parameters ---- */

/* Whether this process maps the page of @p: then it is host memory. */
static int xc_mapped(const void *p)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	return msync((void *)((uintptr_t)p & ~(page - 1)), 1, MS_ASYNC) == 0;
}

/*
 * Whether @p, a side of a copy, is pageable (or registered) host memory:
 * not the arena, not device memory; @host: 1 a host side, 0 a device
 * side, 2 either (cudaMemcpyDefault: a pointer this process maps).
 */
static int xc_pageable(struct xc_session *s, const void *p, int host)
{
	struct xc_range r;
	uint64_t off;

	if (xc_in_arena(s, p, 1, &off))
		return 0;
	/* Managed memory is device memory whatever the kind says. */
	if (!xc_range_find((uintptr_t)p, &r) &&
	    (r.kind == XC_R_DEVICE || r.kind == XC_R_MANAGED))
		return 0;
	return host == 1 || !xc_range_find((uintptr_t)p, &r) ||
	       (host == 2 && xc_mapped(p));
}

/* A side of a copy: the arena by offset, else a device address. */
static cudaError_t xc_side(struct xc_session *s, const void *p, int host,
			   struct xcuda_gside *sd)
{
	uint64_t off;
	static int said;

	if (xc_in_arena(s, p, 1, &off)) {
		sd->where = XCUDA_GSIDE_ARENA;
		sd->ptr = off;
		return cudaSuccess;
	}
	if (xc_pageable(s, p, host)) {
		/*
		 * The worker replays the node later: it cannot see it.  New
		 * nodes go through a bounce block (api_graph_bounce.c); what
		 * reaches here is a change of an existing node's copy, or a
		 * memset of host memory.
		 */
		xc_warn_once(&said, "graph copy nodes take pageable host "
			     "memory only when they are made, not in a "
			     "change of their parameters");
		return cudaErrorInvalidValue;
	}
	/* Device memory, or unknown here (a graph allocation): CUDA checks. */
	sd->where = XCUDA_GSIDE_DEV;
	sd->ptr = (uintptr_t)p;
	return cudaSuccess;
}

/* A side that is a CUDA array: the worker's handle, as arrays are. */
static cudaError_t xc_side_array(cudaArray_const_t arr,
				 struct xcuda_gside *sd)
{
	uint32_t h;

	if (xc_handle_in(arr, &h))
		return cudaErrorInvalidValue;
	sd->where = XCUDA_GSIDE_ARRAY;
	sd->ptr = h;
	return cudaSuccess;
}

/* Host-ness of each side for @kind: 1 host, 0 device, 2 either. */
static void xc_kind_hosts(enum cudaMemcpyKind kind, int *src, int *dst)
{
	if (kind == cudaMemcpyDefault) {
		*src = *dst = 2;
		return;
	}
	*src = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost;
	*dst = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost;
}

static cudaError_t xc_gp_memcpy(struct xc_session *s,
				const struct cudaMemcpy3DParms *p,
				struct xcuda_gparams *w)
{
	cudaError_t err;
	int hs, hd;

	xc_kind_hosts(p->kind, &hs, &hd);
	err = p->srcArray ? xc_side_array(p->srcArray, &w->src) :
		xc_side(s, p->srcPtr.ptr, hs, &w->src);
	if (!err)
		err = p->dstArray ? xc_side_array(p->dstArray, &w->dst) :
			xc_side(s, p->dstPtr.ptr, hd, &w->dst);
	if (err)
		return err;
	w->type = cudaGraphNodeTypeMemcpy;
	w->src.pitch = p->srcPtr.pitch;
	w->src.xsize = p->srcPtr.xsize;
	w->src.ysize = p->srcPtr.ysize;
	w->src.pos[0] = p->srcPos.x;
	w->src.pos[1] = p->srcPos.y;
	w->src.pos[2] = p->srcPos.z;
	w->dst.pitch = p->dstPtr.pitch;
	w->dst.xsize = p->dstPtr.xsize;
	w->dst.ysize = p->dstPtr.ysize;
	w->dst.pos[0] = p->dstPos.x;
	w->dst.pos[1] = p->dstPos.y;
	w->dst.pos[2] = p->dstPos.z;
	w->extent[0] = p->extent.width;
	w->extent[1] = p->extent.height;
	w->extent[2] = p->extent.depth;
	w->kind = p->kind;
	return cudaSuccess;
}

static cudaError_t xc_gp_memcpy1d(struct xc_session *s, void *dst,
				  const void *src, size_t count,
				  enum cudaMemcpyKind kind,
				  struct xcuda_gparams *w)
{
	cudaError_t err;
	int hs, hd;

	xc_kind_hosts(kind, &hs, &hd);
	err = xc_side(s, src, hs, &w->src);
	if (!err)
		err = xc_side(s, dst, hd, &w->dst);
	w->type = cudaGraphNodeTypeMemcpy;
	w->extent[0] = count;
	w->kind = kind;
	return err;
}

static cudaError_t xc_gp_memset(struct xc_session *s,
				const struct cudaMemsetParams *p,
				struct xcuda_gparams *w)
{
	cudaError_t err = xc_side(s, p->dst, -1, &w->dst);

	w->type = cudaGraphNodeTypeMemset;
	w->dst.pitch = p->pitch;
	w->value = p->value;
	w->elem = p->elementSize;
	w->extent[0] = p->width;
	w->extent[1] = p->height;
	return err;
}

/*
 * The parameters of a kernel node, in a new buffer (*@buf, *@len): the
 * kernel's handle and its arguments packed by its layout.
 */
static cudaError_t xc_gp_kernel(const void *func, dim3 g, dim3 b,
				unsigned int shmem, void **args, void **extra,
				uint8_t **buf, uint32_t *len)
{
	static int said;
	struct xcuda_gparams *w;
	struct xc_func *f;
	uint32_t h, i;
	cudaError_t err;

	if (extra) {
		xc_warn_once(&said, "graph kernel nodes with \"extra\" "
			     "arguments are not supported");
		return cudaErrorInvalidValue;
	}
	err = xc_func_handle(func, &h, cudaErrorInvalidDeviceFunction);
	if (err)
		return err;
	f = xc_func_lookup(func);
	if (!f)
		return cudaErrorInvalidDeviceFunction;
	if (f->nparams && !args)
		return cudaErrorInvalidValue;
	*len = sizeof(*w) + f->args_size;
	*buf = calloc(1, *len);
	if (!*buf)
		return cudaErrorMemoryAllocation;
	w = (struct xcuda_gparams *)*buf;
	w->type = cudaGraphNodeTypeKernel;
	w->func = h;
	w->grid[0] = g.x; w->grid[1] = g.y; w->grid[2] = g.z;
	w->block[0] = b.x; w->block[1] = b.y; w->block[2] = b.z;
	w->shmem = shmem;
	w->args_len = f->args_size;
	for (i = 0; i < f->nparams; i++)
		memcpy(*buf + sizeof(*w) + f->params[i].offset, args[i],
		       f->params[i].size);
	return cudaSuccess;
}

static cudaError_t xc_gp_alloc(const struct cudaMemAllocNodeParams *p,
			       uint8_t **buf, uint32_t *len)
{
	struct xcuda_gparams *w;

	if (p->accessDescCount > XCUDA_GACC_MAX ||
	    (p->accessDescCount && !p->accessDescs) ||
	    p->poolProps.win32SecurityAttributes)
		return cudaErrorInvalidValue;
	*len = sizeof(*w) + p->accessDescCount * XCUDA_GACC_SIZE;
	*buf = calloc(1, *len);
	if (!*buf)
		return cudaErrorMemoryAllocation;
	w = (struct xcuda_gparams *)*buf;
	w->type = cudaGraphNodeTypeMemAlloc;
	w->alloc_type = p->poolProps.allocType;
	w->handle_types = p->poolProps.handleTypes;
	w->loc_type = p->poolProps.location.type;
	w->loc_id = (uint32_t)p->poolProps.location.id;
	w->bytesize = p->bytesize;
	w->nacc = (uint32_t)p->accessDescCount;
	if (p->accessDescCount)
		memcpy(*buf + sizeof(*w), p->accessDescs,
		       p->accessDescCount * XCUDA_GACC_SIZE);
	return cudaSuccess;
}

/*
 * A host node's function: registered under a token of ours that the
 * worker's node names, kept for the session (clones of the graph and
 * executable graphs share it).
 */
static cudaError_t xc_gp_host(struct xc_session *s, cudaHostFn_t fn,
			      void *data, struct xcuda_gparams *w)
{
	struct xc_hostfn f = { .kind = XC_HOSTFN_HOST, .fn.host = fn,
			       .data = data };
	cudaError_t err;

	w->type = cudaGraphNodeTypeHost;
	if (!fn)
		return cudaErrorInvalidValue;
	err = xc_hostfn_start(s);
	if (!err)
		err = xc_hostfn_register(&f, XC_HOSTFN_KEEP, &w->token);
	return err;
}

/* Node parameters of any kind, in a new buffer. */
struct xc_gin {
	int entry;
	const void *p;			/* the program's structure */
	/* cudaGraphAddMemcpyNode1D */
	void *dst;
	const void *src;
	size_t count;
	enum cudaMemcpyKind kind;
	cudaEvent_t ev;
	cudaGraph_t g;
	void *dptr;
};

static cudaError_t xc_gp_build(struct xc_session *s, const struct xc_gin *in,
			       uint8_t **buf, uint32_t *len)
{
	const struct cudaGraphNodeParams *np = in->p;
	const struct cudaKernelNodeParams *kp = in->p;
	struct xcuda_gparams *w;
	int entry = in->entry;

	*buf = NULL;
	if (entry == XCUDA_GN_KERNEL || entry == XCUDA_GN_MEM_ALLOC ||
	    entry == XCUDA_GN_GENERIC || entry == XCUDA_GN_MEMCPY ||
	    entry == XCUDA_GN_MEMSET || entry == XCUDA_GN_HOST)
		if (!in->p)
			return cudaErrorInvalidValue;
	if (entry == XCUDA_GN_KERNEL)
		return xc_gp_kernel(kp->func, kp->gridDim, kp->blockDim,
				    kp->sharedMemBytes, kp->kernelParams,
				    kp->extra, buf, len);
	if (entry == XCUDA_GN_MEM_ALLOC)
		return xc_gp_alloc(in->p, buf, len);
	if (entry == XCUDA_GN_GENERIC) {
		if (np->type == cudaGraphNodeTypeKernel)
			return xc_gp_kernel(np->kernel.func,
					    np->kernel.gridDim,
					    np->kernel.blockDim,
					    np->kernel.sharedMemBytes,
					    np->kernel.kernelParams,
					    np->kernel.extra, buf, len);
		if (np->type == cudaGraphNodeTypeMemAlloc)
			return xc_gp_alloc((const struct cudaMemAllocNodeParams
					    *)&np->alloc, buf, len);
	}
	*len = sizeof(*w);
	if (entry == XCUDA_GN_GENERIC &&
	    np->type == cudaGraphNodeTypeConditional) {
		if (np->conditional.size > XCUDA_GCOND_MAX)
			return cudaErrorInvalidValue;
		*len += np->conditional.size * sizeof(uint32_t);
	}
	*buf = calloc(1, *len);
	if (!*buf)
		return cudaErrorMemoryAllocation;
	w = (struct xcuda_gparams *)*buf;
	switch (entry) {
	case XCUDA_GN_MEMCPY:
		return xc_gp_memcpy(s, in->p, w);
	case XCUDA_GN_MEMCPY_1D:
		return xc_gp_memcpy1d(s, in->dst, in->src, in->count,
				      in->kind, w);
	case XCUDA_GN_MEMSET:
		return xc_gp_memset(s, in->p, w);
	case XCUDA_GN_EVENT_RECORD:
	case XCUDA_GN_EVENT_WAIT:
		w->type = entry == XCUDA_GN_EVENT_RECORD ?
			cudaGraphNodeTypeEventRecord :
			cudaGraphNodeTypeWaitEvent;
		return xc_event_handle(in->ev, &w->event) ?
			cudaErrorInvalidResourceHandle : cudaSuccess;
	case XCUDA_GN_CHILD:
		w->type = cudaGraphNodeTypeGraph;
		return xc_hin(in->g, &w->graph);
	case XCUDA_GN_EMPTY:
		w->type = cudaGraphNodeTypeEmpty;
		return cudaSuccess;
	case XCUDA_GN_MEM_FREE:
		w->type = cudaGraphNodeTypeMemFree;
		w->dptr = (uintptr_t)in->dptr;
		return cudaSuccess;
	case XCUDA_GN_HOST: {
		const struct cudaHostNodeParams *hp = in->p;

		return xc_gp_host(s, hp->fn, hp->userData, w);
	}
	}
	/* cudaGraphNodeParams of the other kinds. */
	w->type = np->type;
	switch (np->type) {
	case cudaGraphNodeTypeMemcpy:
		if (np->memcpy.flags)
			return cudaErrorInvalidValue;
		return xc_gp_memcpy(s, &np->memcpy.copyParams, w);
	case cudaGraphNodeTypeMemset:
		return xc_gp_memset(s, (const struct cudaMemsetParams *)
				    &np->memset, w);
	case cudaGraphNodeTypeEventRecord:
		return xc_event_handle(np->eventRecord.event, &w->event) ?
			cudaErrorInvalidResourceHandle : cudaSuccess;
	case cudaGraphNodeTypeWaitEvent:
		return xc_event_handle(np->eventWait.event, &w->event) ?
			cudaErrorInvalidResourceHandle : cudaSuccess;
	case cudaGraphNodeTypeGraph:
		w->ownership = np->graph.ownership;
		return xc_hin(np->graph.graph, &w->graph);
	case cudaGraphNodeTypeEmpty:
		return cudaSuccess;
	case cudaGraphNodeTypeMemFree:
		w->dptr = (uintptr_t)np->free.dptr;
		return cudaSuccess;
	case cudaGraphNodeTypeConditional:
		w->cond_handle = np->conditional.handle;
		w->cond_type = np->conditional.type;
		w->cond_size = np->conditional.size;
		return cudaSuccess;
	case cudaGraphNodeTypeHost:
		return xc_gp_host(s, np->host.fn, np->host.userData, w);
	default:
		/* External semaphores: not forwarded. */
		return cudaErrorNotSupported;
	}
}

/*
 * A new copy node's parameters as a 3D copy, and which of its sides is
 * pageable (XC_BOUNCE_*, both or neither: 0).
 */
static int xc_bounce_which(struct xc_session *s, const struct xc_gin *in,
			   struct cudaMemcpy3DParms *cp)
{
	const struct cudaGraphNodeParams *np = in->p;
	int hs, hd, ps, pd;

	memset(cp, 0, sizeof(*cp));
	if (in->entry == XCUDA_GN_MEMCPY && in->p) {
		*cp = *(const struct cudaMemcpy3DParms *)in->p;
	} else if (in->entry == XCUDA_GN_GENERIC && np &&
		   np->type == cudaGraphNodeTypeMemcpy && !np->memcpy.flags) {
		*cp = np->memcpy.copyParams;
	} else if (in->entry == XCUDA_GN_MEMCPY_1D) {
		cp->srcPtr = (struct cudaPitchedPtr){ (void *)in->src,
						      in->count, in->count, 1 };
		cp->dstPtr = (struct cudaPitchedPtr){ in->dst, in->count,
						      in->count, 1 };
		cp->extent = (struct cudaExtent){ in->count, 1, 1 };
		cp->kind = in->kind;
	} else {
		return 0;
	}
	xc_kind_hosts(cp->kind, &hs, &hd);
	/* An array is never pageable; its other side may be. */
	if (cp->srcArray && cp->dstArray)
		return 0;
	if (cp->srcArray)
		return xc_pageable(s, cp->dstPtr.ptr, hd) ? XC_BOUNCE_DST : 0;
	if (cp->dstArray)
		return xc_pageable(s, cp->srcPtr.ptr, hs) ? XC_BOUNCE_SRC : 0;
	ps = xc_pageable(s, cp->srcPtr.ptr, hs);
	pd = xc_pageable(s, cp->dstPtr.ptr, hd);
	return ps == pd ? 0 : ps ? XC_BOUNCE_SRC : XC_BOUNCE_DST;
}

static cudaError_t xc_add_node(cudaGraphNode_t *pnode, cudaGraph_t graph,
			       const cudaGraphNode_t *deps,
			       const cudaGraphEdgeData *edata, size_t ndeps,
			       const struct xc_gin *in, void **dptr_out,
			       cudaGraph_t **bodies_out)
{
	struct xcuda_graph_add_node_args a = { 0 };
	struct xcuda_graph_add_node_res r = { 0 };
	struct xcuda_gparams *w;
	struct xc_session *s;
	uint32_t *hs = NULL, *bh;
	cudaGraph_t *bodies = NULL;
	uint8_t *buf = NULL;
	uint32_t len = 0, i, type = 0, nbodies = 0;
	uint64_t token = 0;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!pnode || xc_hin(graph, &a.graph))
		return xc_ret(cudaErrorInvalidValue);
	{
		struct cudaMemcpy3DParms cp;
		int which = xc_bounce_which(s, in, &cp);

		/* Pageable memory: a bounce block and a host node. */
		if (which)
			return xc_bounce_node(pnode, graph, deps, edata, ndeps,
					      &cp, which);
	}
	err = xc_nodes_in(deps, ndeps, &hs);
	if (!err)
		err = xc_gp_build(s, in, &buf, &len);
	if (err)
		goto out;
	w = (struct xcuda_gparams *)buf;
	/* Ours, before the answer overwrites the buffer. */
	type = w->type;
	nbodies = w->cond_size;
	token = w->token;
	a.entry = (uint32_t)in->entry;
	a.ndeps = ndeps;
	{
		struct xc_xfer x[3] = {
			{ hs, ndeps * sizeof(*hs), XC_XFER_IN, &a.deps },
			{ (void *)edata, edata ? ndeps * sizeof(*edata) : 0,
			  XC_XFER_IN, &a.edata },
			{ buf, len, XC_XFER_INOUT, &a.params },
		};

		err = xc_forward_xfer(XCUDA_OP_GRAPH_ADD_NODE, &a, sizeof(a),
				      &r, sizeof(r), x, 3);
	}
	if (err && token)
		xc_hostfn_forget(token);
	if (err)
		goto out;
	if (type == cudaGraphNodeTypeConditional && bodies_out) {
		bodies = calloc(nbodies ? nbodies : 1, sizeof(*bodies));
		if (!bodies || xc_gkeep(r.node, 0, bodies)) {
			free(bodies);
			err = xc_ret(cudaErrorMemoryAllocation);
			goto out;
		}
		bh = (uint32_t *)(buf + sizeof(*w));
		for (i = 0; i < nbodies; i++)
			bodies[i] = xc_h2p(bh[i]);
		*bodies_out = bodies;
	}
	if (dptr_out)
		*dptr_out = (void *)(uintptr_t)r.dptr;
	*pnode = xc_h2p(r.node);
out:
	free(hs);
	free(buf);
	return xc_ret(err);
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode,
				   cudaGraph_t graph,
				   const cudaGraphNode_t *pDependencies,
				   size_t numDependencies,
				   const struct cudaKernelNodeParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_KERNEL, .p = p };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode,
				   cudaGraph_t graph,
				   const cudaGraphNode_t *pDependencies,
				   size_t numDependencies,
				   const struct cudaMemcpy3DParms *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEMCPY, .p = p };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode,
				     cudaGraph_t graph,
				     const cudaGraphNode_t *pDependencies,
				     size_t numDependencies, void *dst,
				     const void *src, size_t count,
				     enum cudaMemcpyKind kind)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEMCPY_1D, .dst = dst,
			     .src = src, .count = count, .kind = kind };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode,
				   cudaGraph_t graph,
				   const cudaGraphNode_t *pDependencies,
				   size_t numDependencies,
				   const struct cudaMemsetParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEMSET, .p = p };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode,
					cudaGraph_t graph,
					const cudaGraphNode_t *pDependencies,
					size_t numDependencies,
					cudaEvent_t event)
{
	struct xc_gin in = { .entry = XCUDA_GN_EVENT_RECORD, .ev = event };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode,
				      cudaGraph_t graph,
				      const cudaGraphNode_t *pDependencies,
				      size_t numDependencies,
				      cudaEvent_t event)
{
	struct xc_gin in = { .entry = XCUDA_GN_EVENT_WAIT, .ev = event };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode,
				       cudaGraph_t graph,
				       const cudaGraphNode_t *pDependencies,
				       size_t numDependencies,
				       cudaGraph_t childGraph)
{
	struct xc_gin in = { .entry = XCUDA_GN_CHILD, .g = childGraph };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode,
				  cudaGraph_t graph,
				  const cudaGraphNode_t *pDependencies,
				  size_t numDependencies)
{
	struct xc_gin in = { .entry = XCUDA_GN_EMPTY };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode,
				     cudaGraph_t graph,
				     const cudaGraphNode_t *pDependencies,
				     size_t numDependencies,
				     struct cudaMemAllocNodeParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEM_ALLOC, .p = p };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, p ? &p->dptr : NULL, NULL);
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode,
				    cudaGraph_t graph,
				    const cudaGraphNode_t *pDependencies,
				    size_t numDependencies, void *dptr)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEM_FREE, .dptr = dptr };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
			     const cudaGraphNode_t *pDependencies,
			     const cudaGraphEdgeData *dependencyData,
			     size_t numDependencies,
			     struct cudaGraphNodeParams *nodeParams)
{
	struct xc_gin in = { .entry = XCUDA_GN_GENERIC, .p = nodeParams };
	void **dptr = NULL;
	cudaGraph_t **bodies = NULL;

	if (nodeParams && nodeParams->type == cudaGraphNodeTypeMemAlloc)
		dptr = &nodeParams->alloc.dptr;
	if (nodeParams && nodeParams->type == cudaGraphNodeTypeConditional)
		bodies = &nodeParams->conditional.phGraph_out;
	return xc_add_node(pGraphNode, graph, pDependencies, dependencyData,
			   numDependencies, &in, dptr, bodies);
}

/* ---- setting and getting parameters ---- */

static cudaError_t xc_set_params(cudaGraphExec_t exec, cudaGraphNode_t node,
				 const struct xc_gin *in)
{
	struct xcuda_graph_node_set_params_args a = { 0 };
	struct xc_session *s;
	uint8_t *buf = NULL;
	uint32_t len = 0;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if ((exec && xc_hin(exec, &a.exec)) || xc_hin(node, &a.node))
		return xc_ret(cudaErrorInvalidValue);
	err = xc_gp_build(s, in, &buf, &len);
	if (!err) {
		struct xc_xfer x = { buf, len, XC_XFER_IN, &a.params };

		a.entry = (uint32_t)in->entry;
		err = xc_forward_xfer(XCUDA_OP_GRAPH_NODE_SET_PARAMS, &a,
				      sizeof(a), NULL, 0, &x, 1);
		if (err && ((struct xcuda_gparams *)buf)->token)
			xc_hostfn_forget(((struct xcuda_gparams *)buf)->token);
	}
	free(buf);
	return xc_ret(err);
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
					 const struct cudaKernelNodeParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_KERNEL, .p = p };

	return xc_set_params(NULL, node, &in);
}

cudaError_t cudaGraphExecKernelNodeSetParams(
	cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
	const struct cudaKernelNodeParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_KERNEL, .p = p };

	if (!hGraphExec)
		return xc_ret(cudaErrorInvalidValue);
	return xc_set_params(hGraphExec, node, &in);
}

cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node,
					 const struct cudaMemcpy3DParms *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEMCPY, .p = p };

	return xc_set_params(NULL, node, &in);
}

cudaError_t cudaGraphExecMemcpyNodeSetParams(
	cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
	const struct cudaMemcpy3DParms *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEMCPY, .p = p };

	if (!hGraphExec)
		return xc_ret(cudaErrorInvalidValue);
	return xc_set_params(hGraphExec, node, &in);
}

cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst,
					   const void *src, size_t count,
					   enum cudaMemcpyKind kind)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEMCPY_1D, .dst = dst,
			     .src = src, .count = count, .kind = kind };

	return xc_set_params(NULL, node, &in);
}

cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec,
					       cudaGraphNode_t node,
					       void *dst, const void *src,
					       size_t count,
					       enum cudaMemcpyKind kind)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEMCPY_1D, .dst = dst,
			     .src = src, .count = count, .kind = kind };

	if (!hGraphExec)
		return xc_ret(cudaErrorInvalidValue);
	return xc_set_params(hGraphExec, node, &in);
}

cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node,
					 const struct cudaMemsetParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEMSET, .p = p };

	return xc_set_params(NULL, node, &in);
}

cudaError_t cudaGraphExecMemsetNodeSetParams(
	cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
	const struct cudaMemsetParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_MEMSET, .p = p };

	if (!hGraphExec)
		return xc_ret(cudaErrorInvalidValue);
	return xc_set_params(hGraphExec, node, &in);
}

cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node,
				   struct cudaGraphNodeParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_GENERIC, .p = p };

	return xc_set_params(NULL, node, &in);
}

cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec,
				       cudaGraphNode_t node,
				       struct cudaGraphNodeParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_GENERIC, .p = p };

	if (!graphExec)
		return xc_ret(cudaErrorInvalidValue);
	return xc_set_params(graphExec, node, &in);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode,
				 cudaGraph_t graph,
				 const cudaGraphNode_t *pDependencies,
				 size_t numDependencies,
				 const struct cudaHostNodeParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_HOST, .p = p };

	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node,
				       const struct cudaHostNodeParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_HOST, .p = p };

	return xc_set_params(NULL, node, &in);
}

cudaError_t cudaGraphExecHostNodeSetParams(
	cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
	const struct cudaHostNodeParams *p)
{
	struct xc_gin in = { .entry = XCUDA_GN_HOST, .p = p };

	if (!hGraphExec)
		return xc_ret(cudaErrorInvalidValue);
	return xc_set_params(hGraphExec, node, &in);
}

/* GRAPH_NODE_GET_PARAMS into a new buffer of @len bytes. */
static cudaError_t xc_get_params(cudaGraphNode_t node, int entry,
				 uint32_t len, uint8_t **buf)
{
	struct xcuda_graph_node_get_params_args a = { 0 };
	cudaError_t err;

	if (xc_hin(node, &a.node))
		return cudaErrorInvalidValue;
	*buf = calloc(1, len);
	if (!*buf)
		return cudaErrorMemoryAllocation;
	a.entry = (uint32_t)entry;
	{
		struct xc_xfer x = { *buf, len, XC_XFER_OUT, &a.params };

		err = xc_forward_xfer(XCUDA_OP_GRAPH_NODE_GET_PARAMS, &a,
				      sizeof(a), NULL, 0, &x, 1);
	}
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node,
					 struct cudaKernelNodeParams *p)
{
	const uint32_t len = sizeof(struct xcuda_gparams) +
		XCUDA_MAX_ARGS_BYTES;
	struct xcuda_gparams *w;
	struct xc_func *f;
	struct xc_session *s;
	uint8_t *buf, *args;
	void **argv;
	uint32_t i, nh;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!p)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_get_params(node, XCUDA_GN_KERNEL, len, &buf);
	if (err)
		return xc_ret(err);
	w = (struct xcuda_gparams *)buf;
	f = xc_func_by_handle(w->func);
	/* Nothing the worker said is trusted: the layout is ours. */
	if (!f || w->args_len != f->args_size ||
	    w->args_len > len - sizeof(*w)) {
		free(buf);
		return xc_ret(cudaErrorNotSupported);
	}
	/* One block: the pointers, then the bytes they point into. */
	argv = calloc(1, f->nparams * sizeof(void *) + f->args_size + 1);
	if (!argv) {
		free(buf);
		return xc_ret(cudaErrorMemoryAllocation);
	}
	args = (uint8_t *)(argv + f->nparams);
	memcpy(args, buf + sizeof(*w), f->args_size);
	for (i = 0; i < f->nparams; i++)
		argv[i] = args + f->params[i].offset;
	xc_handle_in(node, &nh);
	if (xc_gkeep(nh, 1, argv)) {
		free(argv);
		free(buf);
		return xc_ret(cudaErrorMemoryAllocation);
	}
	memset(p, 0, sizeof(*p));
	p->func = (void *)f->host_fun;
	p->gridDim = (dim3){ w->grid[0], w->grid[1], w->grid[2] };
	p->blockDim = (dim3){ w->block[0], w->block[1], w->block[2] };
	p->sharedMemBytes = w->shmem;
	p->kernelParams = argv;
	free(buf);
	return cudaSuccess;
}

/* A side the worker answered, as a pointer of ours. */
static void *xc_side_out(struct xc_session *s, const struct xcuda_gside *sd)
{
	if (sd->where == XCUDA_GSIDE_ARENA &&
	    xcuda_extent_ok(sd->ptr, 0, s->t.arena_size))
		return xc_arena_ptr(s, sd->ptr);
	return (void *)(uintptr_t)sd->ptr;
}

cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node,
					 struct cudaMemcpy3DParms *p)
{
	struct xcuda_gparams *w;
	struct xc_session *s;
	uint8_t *buf;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!p)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_get_params(node, XCUDA_GN_MEMCPY, sizeof(*w), &buf);
	if (err)
		return xc_ret(err);
	w = (struct xcuda_gparams *)buf;
	memset(p, 0, sizeof(*p));
	if (w->src.where == XCUDA_GSIDE_ARRAY)
		p->srcArray = (cudaArray_t)xc_h2p((uint32_t)w->src.ptr);
	else
		p->srcPtr.ptr = xc_side_out(s, &w->src);
	if (w->dst.where == XCUDA_GSIDE_ARRAY)
		p->dstArray = (cudaArray_t)xc_h2p((uint32_t)w->dst.ptr);
	else
		p->dstPtr.ptr = xc_side_out(s, &w->dst);
	p->srcPtr.pitch = w->src.pitch;
	p->srcPtr.xsize = w->src.xsize;
	p->srcPtr.ysize = w->src.ysize;
	p->srcPos.x = w->src.pos[0];
	p->srcPos.y = w->src.pos[1];
	p->srcPos.z = w->src.pos[2];
	p->dstPtr.pitch = w->dst.pitch;
	p->dstPtr.xsize = w->dst.xsize;
	p->dstPtr.ysize = w->dst.ysize;
	p->dstPos.x = w->dst.pos[0];
	p->dstPos.y = w->dst.pos[1];
	p->dstPos.z = w->dst.pos[2];
	p->extent.width = w->extent[0];
	p->extent.height = w->extent[1];
	p->extent.depth = w->extent[2];
	p->kind = (enum cudaMemcpyKind)w->kind;
	free(buf);
	return cudaSuccess;
}

cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node,
					   struct cudaMemAllocNodeParams *p)
{
	const uint32_t len = sizeof(struct xcuda_gparams) +
		XCUDA_GACC_MAX * XCUDA_GACC_SIZE;
	struct xcuda_gparams *w;
	struct cudaMemAccessDesc *acc = NULL;
	uint8_t *buf;
	uint32_t nh;
	cudaError_t err;

	if (!p)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_get_params(node, XCUDA_GN_MEM_ALLOC, len, &buf);
	if (err)
		return xc_ret(err);
	w = (struct xcuda_gparams *)buf;
	if (w->nacc > XCUDA_GACC_MAX) {
		free(buf);
		return xc_ret(cudaErrorUnknown);
	}
	if (w->nacc) {
		acc = calloc(w->nacc, sizeof(*acc));
		xc_handle_in(node, &nh);
		if (!acc || xc_gkeep(nh, 2, acc)) {
			free(acc);
			free(buf);
			return xc_ret(cudaErrorMemoryAllocation);
		}
		memcpy(acc, buf + sizeof(*w), w->nacc * XCUDA_GACC_SIZE);
	}
	memset(p, 0, sizeof(*p));
	p->poolProps.allocType = (enum cudaMemAllocationType)w->alloc_type;
	p->poolProps.handleTypes =
		(enum cudaMemAllocationHandleType)w->handle_types;
	p->poolProps.location.type = (enum cudaMemLocationType)w->loc_type;
	p->poolProps.location.id = (int)w->loc_id;
	p->accessDescs = acc;
	p->accessDescCount = w->nacc;
	p->bytesize = w->bytesize;
	p->dptr = (void *)(uintptr_t)w->dptr;
	free(buf);
	return cudaSuccess;
}

/* ---- lists, edges ---- */

static cudaError_t xc_list(const void *obj, int what, cudaGraphNode_t *from,
			   cudaGraphNode_t *to, cudaGraphEdgeData *ed,
			   size_t *count)
{
	struct xcuda_graph_node_list_args a = { 0 };
	struct xcuda_graph_node_list_res r = { 0 };
	uint32_t *hf = NULL, *ht = NULL;
	size_t cap, i, n;
	cudaError_t err;

	if (!count || xc_hin(obj, &a.obj))
		return xc_ret(cudaErrorInvalidValue);
	/* Edges: both arrays or neither, as CUDA requires. */
	if (what == XCUDA_GL_EDGES && !from != !to)
		return xc_ret(cudaErrorInvalidValue);
	a.what = (uint32_t)what;
	cap = *count > XCUDA_GLIST_MAX ? XCUDA_GLIST_MAX : *count;
	a.cap = from ? cap : UINT64_MAX;
	if (from && cap) {
		hf = calloc(cap, sizeof(*hf));
		ht = calloc(cap, sizeof(*ht));
		if (!hf || !ht) {
			err = cudaErrorMemoryAllocation;
			goto out;
		}
	}
	{
		struct xc_xfer x[3] = {
			{ hf, from ? cap * sizeof(*hf) : 0, XC_XFER_OUT,
			  &a.nodes },
			{ what == XCUDA_GL_EDGES ? ht : NULL,
			  from ? cap * sizeof(*ht) : 0, XC_XFER_OUT, &a.to },
			{ from ? ed : NULL, from && ed ? cap * sizeof(*ed) : 0,
			  XC_XFER_OUT, &a.edata },
		};

		err = xc_forward_xfer(XCUDA_OP_GRAPH_NODE_LIST, &a, sizeof(a),
				      &r, sizeof(r), x, 3);
	}
	if (err)
		goto out;
	if (from) {
		for (i = 0; i < cap; i++) {
			from[i] = xc_h2p(hf[i]);
			if (what == XCUDA_GL_EDGES)
				to[i] = xc_h2p(ht[i]);
		}
		/* What CUDA would have cleared past the graph's nodes. */
		for (n = cap; n < *count; n++) {
			from[n] = NULL;
			if (what == XCUDA_GL_EDGES)
				to[n] = NULL;
			if (ed)
				memset(&ed[n], 0, sizeof(ed[n]));
		}
	}
	*count = r.count;
out:
	free(hf);
	free(ht);
	return xc_ret(err);
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes,
			      size_t *numNodes)
{
	return xc_list(graph, XCUDA_GL_NODES, nodes, NULL, NULL, numNodes);
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph,
				  cudaGraphNode_t *pRootNodes,
				  size_t *pNumRootNodes)
{
	return xc_list(graph, XCUDA_GL_ROOTS, pRootNodes, NULL, NULL,
		       pNumRootNodes);
}

cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from,
			      cudaGraphNode_t *to, cudaGraphEdgeData *edgeData,
			      size_t *numEdges)
{
	return xc_list(graph, XCUDA_GL_EDGES, from, to, edgeData, numEdges);
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node,
					 cudaGraphNode_t *pDependencies,
					 cudaGraphEdgeData *edgeData,
					 size_t *pNumDependencies)
{
	return xc_list(node, XCUDA_GL_DEPS, pDependencies, NULL, edgeData,
		       pNumDependencies);
}

cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node,
					   cudaGraphNode_t *pDependentNodes,
					   cudaGraphEdgeData *edgeData,
					   size_t *pNumDependentNodes)
{
	return xc_list(node, XCUDA_GL_DEPENDENTS, pDependentNodes, NULL,
		       edgeData, pNumDependentNodes);
}

static cudaError_t xc_deps(cudaGraph_t graph, const cudaGraphNode_t *from,
			   const cudaGraphNode_t *to,
			   const cudaGraphEdgeData *ed, size_t n, int remove)
{
	struct xcuda_graph_dependencies_args a = { 0 };
	uint32_t *hf = NULL, *ht = NULL;
	cudaError_t err;

	if (xc_hin(graph, &a.graph))
		return xc_ret(cudaErrorInvalidValue);
	err = xc_nodes_in(from, n, &hf);
	if (!err)
		err = xc_nodes_in(to, n, &ht);
	if (!err) {
		struct xc_xfer x[3] = {
			{ hf, n * sizeof(*hf), XC_XFER_IN, &a.from },
			{ ht, n * sizeof(*ht), XC_XFER_IN, &a.to },
			{ (void *)ed, ed ? n * sizeof(*ed) : 0, XC_XFER_IN,
			  &a.edata },
		};

		a.remove = (uint32_t)remove;
		a.count = n;
		err = xc_forward_xfer(XCUDA_OP_GRAPH_DEPENDENCIES, &a,
				      sizeof(a), NULL, 0, x, 3);
	}
	free(hf);
	free(ht);
	return xc_ret(err);
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph,
				     const cudaGraphNode_t *from,
				     const cudaGraphNode_t *to,
				     const cudaGraphEdgeData *edgeData,
				     size_t numDependencies)
{
	return xc_deps(graph, from, to, edgeData, numDependencies, 0);
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph,
					const cudaGraphNode_t *from,
					const cudaGraphNode_t *to,
					const cudaGraphEdgeData *edgeData,
					size_t numDependencies)
{
	return xc_deps(graph, from, to, edgeData, numDependencies, 1);
}

static cudaError_t xc_event_get(cudaGraphNode_t node, cudaEvent_t *out,
				int wait)
{
	struct xcuda_graph_event_node_get_event_args a = { 0 };
	struct xcuda_graph_event_node_get_event_res r = { 0 };
	cudaError_t err;

	if (!out || xc_hin(node, &a.node))
		return xc_ret(cudaErrorInvalidValue);
	a.wait = (uint32_t)wait;
	err = xc_call_graph_event_node_get_event(&a, &r);
	if (!err)
		*out = (cudaEvent_t)xc_h2p(r.event);
	return err;
}

cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node,
					     cudaEvent_t *event_out)
{
	return xc_event_get(node, event_out, 0);
}

cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node,
					   cudaEvent_t *event_out)
{
	return xc_event_get(node, event_out, 1);
}

/* ---- executable graphs ---- */

static cudaError_t xc_instantiate_params(cudaGraphExec_t *pexec,
					 cudaGraph_t graph,
					 cudaGraphInstantiateParams *ip,
					 int per_thread)
{
	struct xcuda_graph_instantiate_with_params_args a = { 0 };
	struct xcuda_graph_instantiate_with_params_res r = { 0 };
	cudaError_t err;

	if (!pexec || !ip || xc_hin(graph, &a.graph) ||
	    xc_stream_handle(ip->uploadStream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidValue);
	a.flags = ip->flags;
	err = xc_call_graph_instantiate_with_params(&a, &r);
	if (err) {
		ip->result_out = cudaGraphInstantiateError;
		ip->errNode_out = NULL;
		return err;
	}
	/* CUDA's own status travels in the result, with what it filled. */
	ip->result_out = (cudaGraphInstantiateResult)r.result;
	ip->errNode_out = xc_h2p(r.err_node);
	if (!r.status)
		*pexec = (cudaGraphExec_t)xc_h2p(r.exec);
	return xc_ret((cudaError_t)r.status);
}

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec,
					   cudaGraph_t graph,
					   cudaGraphInstantiateParams *p)
{
	return xc_instantiate_params(pGraphExec, graph, p, 0);
}

cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec,
						cudaGraph_t graph,
						cudaGraphInstantiateParams *p)
{
	return xc_instantiate_params(pGraphExec, graph, p, 1);
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec,
				cudaGraph_t hGraph,
				cudaGraphExecUpdateResultInfo *resultInfo)
{
	struct xcuda_graph_exec_update_args a = { 0 };
	struct xcuda_graph_exec_update_res r = { 0 };
	cudaError_t err;

	if (!resultInfo || xc_hin(hGraphExec, &a.exec) ||
	    xc_hin(hGraph, &a.graph))
		return xc_ret(cudaErrorInvalidValue);
	err = xc_call_graph_exec_update(&a, &r);
	if (err) {
		resultInfo->result = cudaGraphExecUpdateError;
		resultInfo->errorNode = NULL;
		resultInfo->errorFromNode = NULL;
		return err;
	}
	resultInfo->result = (enum cudaGraphExecUpdateResult)r.result;
	resultInfo->errorNode = xc_h2p(r.err_node);
	resultInfo->errorFromNode = xc_h2p(r.err_from);
	return xc_ret((cudaError_t)r.status);
}

cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path,
				   unsigned int flags)
{
	struct xcuda_graph_debug_dot_print_args a = { 0 };
	struct xcuda_graph_debug_dot_print_res r = { 0 };
	uint8_t *buf;
	uint32_t room;
	FILE *f;
	cudaError_t err;

	if (!path || xc_hin(graph, &a.graph))
		return xc_ret(cudaErrorInvalidValue);
	a.flags = flags;
	/* Small first: the arena's staging space is shared with copies. */
	for (room = 64u << 10;; room *= 4) {
		struct xc_xfer x = { NULL, room, XC_XFER_OUT, &a.out };

		buf = malloc(room);
		if (!buf)
			return xc_ret(cudaErrorMemoryAllocation);
		x.ptr = buf;
		err = xc_forward_xfer(XCUDA_OP_GRAPH_DEBUG_DOT_PRINT, &a,
				      sizeof(a), &r, sizeof(r), &x, 1);
		if (err != cudaErrorMemoryAllocation || room >= XCUDA_GDOT_MAX)
			break;
		free(buf);
		cudaGetLastError();
	}
	if (!err && r.size > room)
		err = cudaErrorUnknown;
	if (!err) {
		/* The file is the guest's: written here, at its path. */
		f = fopen(path, "w");
		if (!f || fwrite(buf, 1, r.size, f) != r.size)
			err = cudaErrorOperatingSystem;
		if (f && fclose(f))
			err = cudaErrorOperatingSystem;
	}
	free(buf);
	return xc_ret(err);
}

/* ---- stream capture ---- */

/* The arrays cudaStreamGetCaptureInfo answered, per thread. */
struct xc_capbuf {
	cudaGraphNode_t *nodes;
	cudaGraphEdgeData *edata;
	size_t room;
};

static pthread_key_t xc_cap_key;
static pthread_once_t xc_cap_once = PTHREAD_ONCE_INIT;
static int xc_cap_key_ok;

static void xc_capbuf_free(void *p)
{
	struct xc_capbuf *b = p;

	free(b->nodes);
	free(b->edata);
	free(b);
}

static void xc_cap_key_init(void)
{
	xc_cap_key_ok = !pthread_key_create(&xc_cap_key, xc_capbuf_free);
}

/* The calling thread's arrays, with room for @n entries, or NULL. */
static struct xc_capbuf *xc_capbuf(size_t n)
{
	struct xc_capbuf *b;
	cudaGraphNode_t *nodes;
	cudaGraphEdgeData *edata;

	pthread_once(&xc_cap_once, xc_cap_key_init);
	if (!xc_cap_key_ok)
		return NULL;
	b = pthread_getspecific(xc_cap_key);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b || pthread_setspecific(xc_cap_key, b)) {
			free(b);
			return NULL;
		}
	}
	if (n <= b->room)
		return b;
	nodes = realloc(b->nodes, n * sizeof(*nodes));
	if (nodes)
		b->nodes = nodes;
	edata = nodes ? realloc(b->edata, n * sizeof(*edata)) : NULL;
	if (edata)
		b->edata = edata;
	if (!nodes || !edata)
		return NULL;
	b->room = n;
	return b;
}

static cudaError_t xc_capture_info(cudaStream_t stream,
				   enum cudaStreamCaptureStatus *status,
				   unsigned long long *id, cudaGraph_t *graph,
				   const cudaGraphNode_t **deps,
				   const cudaGraphEdgeData **edata,
				   size_t *ndeps, int per_thread)
{
	struct xcuda_stream_get_capture_info_args a = { 0 };
	struct xcuda_stream_get_capture_info_res r = { 0 };
	uint32_t *hs = NULL;
	cudaGraphEdgeData *ed = NULL;
	struct xc_capbuf *b;
	uint32_t cap;
	cudaError_t err;
	size_t i;

	if (!status || xc_stream_handle(stream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidValue);
	/* Room for 256 first, more when the worker says it needs it. */
	for (cap = 256;; cap *= 4) {
		hs = calloc(cap, sizeof(*hs));
		ed = calloc(cap, sizeof(*ed));
		if (!hs || !ed) {
			err = cudaErrorMemoryAllocation;
			goto out;
		}
		a.cap = cap;
		{
			struct xc_xfer x[2] = {
				{ hs, cap * sizeof(*hs), XC_XFER_OUT,
				  &a.deps },
				{ ed, cap * sizeof(*ed), XC_XFER_OUT,
				  &a.edata },
			};

			err = xc_forward_xfer(XCUDA_OP_STREAM_GET_CAPTURE_INFO,
					      &a, sizeof(a), &r, sizeof(r),
					      x, 2);
		}
		if (err != cudaErrorMemoryAllocation ||
		    cap >= XCUDA_GLIST_MAX)
			break;
		free(hs);
		free(ed);
		hs = NULL;
		ed = NULL;
		cudaGetLastError();
	}
	if (err)
		goto out;
	if (r.ndeps > cap) {
		err = cudaErrorUnknown;
		goto out;
	}
	b = xc_capbuf(r.ndeps ? r.ndeps : 1);
	if (!b) {
		err = cudaErrorMemoryAllocation;
		goto out;
	}
	for (i = 0; i < r.ndeps; i++) {
		b->nodes[i] = xc_h2p(hs[i]);
		b->edata[i] = ed[i];
	}
	*status = (enum cudaStreamCaptureStatus)r.status;
	if (id)
		*id = r.id;
	if (graph)
		*graph = (cudaGraph_t)xc_h2p(r.graph);
	if (deps)
		*deps = r.ndeps ? b->nodes : NULL;
	if (edata)
		*edata = r.ndeps ? b->edata : NULL;
	if (ndeps)
		*ndeps = r.ndeps;
out:
	free(hs);
	free(ed);
	return xc_ret(err);
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
				     enum cudaStreamCaptureStatus *status,
				     unsigned long long *id, cudaGraph_t *graph,
				     const cudaGraphNode_t **deps,
				     const cudaGraphEdgeData **edata,
				     size_t *ndeps)
{
	return xc_capture_info(stream, status, id, graph, deps, edata, ndeps,
			       0);
}

cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
					  enum cudaStreamCaptureStatus *status,
					  unsigned long long *id,
					  cudaGraph_t *graph,
					  const cudaGraphNode_t **deps,
					  const cudaGraphEdgeData **edata,
					  size_t *ndeps)
{
	return xc_capture_info(stream, status, id, graph, deps, edata, ndeps,
			       1);
}

static cudaError_t xc_update_capture(cudaStream_t stream,
				     cudaGraphNode_t *deps,
				     const cudaGraphEdgeData *ed, size_t n,
				     unsigned int flags, int per_thread)
{
	struct xcuda_stream_update_capture_dependencies_args a = { 0 };
	uint32_t *hs = NULL;
	cudaError_t err;

	if (xc_stream_handle(stream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidValue);
	err = xc_nodes_in(deps, n, &hs);
	if (!err) {
		struct xc_xfer x[2] = {
			{ hs, n * sizeof(*hs), XC_XFER_IN, &a.deps },
			{ (void *)ed, ed ? n * sizeof(*ed) : 0, XC_XFER_IN,
			  &a.edata },
		};

		a.flags = flags;
		a.count = n;
		err = xc_forward_xfer(
			XCUDA_OP_STREAM_UPDATE_CAPTURE_DEPENDENCIES, &a,
			sizeof(a), NULL, 0, x, 2);
	}
	free(hs);
	return xc_ret(err);
}

cudaError_t cudaStreamUpdateCaptureDependencies(
	cudaStream_t stream, cudaGraphNode_t *dependencies,
	const cudaGraphEdgeData *dependencyData, size_t numDependencies,
	unsigned int flags)
{
	return xc_update_capture(stream, dependencies, dependencyData,
				 numDependencies, flags, 0);
}

cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(
	cudaStream_t stream, cudaGraphNode_t *dependencies,
	const cudaGraphEdgeData *dependencyData, size_t numDependencies,
	unsigned int flags)
{
	return xc_update_capture(stream, dependencies, dependencyData,
				 numDependencies, flags, 1);
}

static cudaError_t xc_capture_to_graph(cudaStream_t stream, cudaGraph_t graph,
				       const cudaGraphNode_t *deps,
				       const cudaGraphEdgeData *ed, size_t n,
				       enum cudaStreamCaptureMode mode,
				       int per_thread)
{
	struct xcuda_stream_begin_capture_to_graph_args a = { 0 };
	uint32_t *hs = NULL;
	cudaError_t err;

	if (xc_stream_handle(stream, per_thread, &a.stream) ||
	    xc_hin(graph, &a.graph))
		return xc_ret(cudaErrorInvalidValue);
	err = xc_nodes_in(deps, n, &hs);
	if (!err) {
		struct xc_xfer x[2] = {
			{ hs, n * sizeof(*hs), XC_XFER_IN, &a.deps },
			{ (void *)ed, ed ? n * sizeof(*ed) : 0, XC_XFER_IN,
			  &a.edata },
		};

		a.mode = mode;
		a.count = n;
		err = xc_forward_xfer(XCUDA_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH,
				      &a, sizeof(a), NULL, 0, x, 2);
	}
	free(hs);
	if (!err)
		xc_capture_count(1);
	return xc_ret(err);
}

cudaError_t cudaStreamBeginCaptureToGraph(
	cudaStream_t stream, cudaGraph_t graph,
	const cudaGraphNode_t *dependencies,
	const cudaGraphEdgeData *dependencyData, size_t numDependencies,
	enum cudaStreamCaptureMode mode)
{
	return xc_capture_to_graph(stream, graph, dependencies,
				   dependencyData, numDependencies, mode, 0);
}

cudaError_t cudaStreamBeginCaptureToGraph_ptsz(
	cudaStream_t stream, cudaGraph_t graph,
	const cudaGraphNode_t *dependencies,
	const cudaGraphEdgeData *dependencyData, size_t numDependencies,
	enum cudaStreamCaptureMode mode)
{
	return xc_capture_to_graph(stream, graph, dependencies,
				   dependencyData, numDependencies, mode, 1);
}

/* The function and data we registered under the node's token. */
cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node,
				       struct cudaHostNodeParams *p)
{
	struct xcuda_gparams *w;
	struct xc_session *s;
	struct xc_hostfn f;
	uint8_t *buf;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!p)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_get_params(node, XCUDA_GN_HOST, sizeof(*w), &buf);
	if (err)
		return xc_ret(err);
	w = (struct xcuda_gparams *)buf;
	if (xc_hostfn_get(w->token, &f) || f.kind != XC_HOSTFN_HOST) {
		err = cudaErrorNotSupported;
	} else {
		p->fn = f.fn.host;
		p->userData = f.data;
	}
	free(buf);
	return xc_ret(err);
}

/* ---- user objects ---- */

/* The destructor is ours to run, once, when the worker's trampoline asks. */
cudaError_t cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr,
				 cudaHostFn_t destroy,
				 unsigned int initialRefcount,
				 unsigned int flags)
{
	struct xcuda_user_object_create_args a = { 0 };
	struct xcuda_user_object_create_res r = { 0 };
	struct xc_hostfn f = { .kind = XC_HOSTFN_HOST, .fn.host = destroy,
			       .data = ptr };
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!object_out || !destroy)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_hostfn_start(s);
	if (!err)
		err = xc_hostfn_register(&f, 0, &a.token);
	if (err)
		return xc_ret(err);
	a.count = initialRefcount;
	a.flags = flags;
	err = xc_call_user_object_create(&a, &r);
	if (err) {
		xc_hostfn_forget(a.token);
		return err;
	}
	if (r.object < XCUDA_HANDLE_FIRST)
		return xc_ret(cudaErrorUnknown);
	*object_out = (cudaUserObject_t)(uintptr_t)r.object;
	return cudaSuccess;
}

/*
 * Captures the process began and has not ended, as far as the library
 * can tell: a pageable cudaMemcpyAsync asks whether its stream is
 * captured only while there may be one.  Never below zero; a count left
 * too high only costs that question.
 */
static unsigned int xc_captures;

void xc_capture_count(int delta)
{
	unsigned int n = __atomic_load_n(&xc_captures, __ATOMIC_RELAXED);

	while (delta > 0 || n) {
		if (__atomic_compare_exchange_n(&xc_captures, &n,
						delta > 0 ? n + 1 : n - 1, 0,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return;
	}
}

int xc_capture_maybe(void)
{
	return __atomic_load_n(&xc_captures, __ATOMIC_RELAXED) != 0;
}

static cudaError_t xc_begin_capture(cudaStream_t stream,
				    enum cudaStreamCaptureMode mode,
				    int per_thread)
{
	struct xcuda_stream_begin_capture_args a = { 0 };
	cudaError_t err;

	if (xc_stream_handle(stream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.mode = mode;
	err = xc_call_stream_begin_capture(&a);
	if (!err)
		xc_capture_count(1);
	return err;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
				   enum cudaStreamCaptureMode mode)
{
	return xc_begin_capture(stream, mode, 0);
}

cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
					enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
					enum cudaStreamCaptureMode mode)
{
	return xc_begin_capture(stream, mode, 1);
}

/* NULL @pgraph reaches CUDA: a capture into the program's graph takes it. */
static cudaError_t xc_end_capture(cudaStream_t stream, cudaGraph_t *pgraph,
				  int per_thread)
{
	struct xcuda_stream_end_capture_args a = { 0 };
	struct xcuda_stream_end_capture_res r = { 0 };
	cudaError_t err;

	if (xc_stream_handle(stream, per_thread, &a.stream))
		return xc_ret(cudaErrorInvalidResourceHandle);
	a.nograph = !pgraph;
	err = xc_call_stream_end_capture(&a, &r);
	/* The capture is over when it ended, well or not. */
	if (err == cudaSuccess || err == cudaErrorStreamCaptureInvalidated ||
	    err == cudaErrorStreamCaptureUnjoined)
		xc_capture_count(-1);
	if (err)
		return err;
	if (!pgraph)
		return cudaSuccess;
	if (r.graph < XCUDA_HANDLE_FIRST)
		return xc_ret(cudaErrorUnknown);
	*pgraph = (cudaGraph_t)(uintptr_t)r.graph;
	return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	return xc_end_capture(stream, pGraph, 0);
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
	return xc_end_capture(stream, pGraph, 1);
}

/* ---- copies to and from symbols ---- */

/*
 * A symbol copy as the 1D copy it is: the variable's device address
 * plus @offset on the symbol's side (@to: the destination).  CUDA
 * reports such a node as a memcpy node, so nothing else is needed.
 */
static cudaError_t xc_sym_gin(const void *symbol, void *other,
			      size_t count, size_t offset,
			      enum cudaMemcpyKind kind, int to,
			      struct xc_gin *in)
{
	struct xc_session *s;
	struct xc_var *v;
	void *dev;
	cudaError_t err = xc_ready(&s);

	if (err)
		return err;
	if (to ? kind != cudaMemcpyHostToDevice &&
		 kind != cudaMemcpyDeviceToDevice &&
		 kind != cudaMemcpyDefault :
	    kind != cudaMemcpyDeviceToHost &&
	    kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
		return cudaErrorInvalidMemcpyDirection;
	pthread_mutex_lock(&s->lock);
	err = xc_var_resolve(s, symbol, &v);
	pthread_mutex_unlock(&s->lock);
	if (err)
		return err;
	if (offset > v->size || count > v->size - offset)
		return cudaErrorInvalidValue;
	dev = (void *)(uintptr_t)(v->dptr + offset);
	memset(in, 0, sizeof(*in));
	in->entry = XCUDA_GN_MEMCPY_1D;
	in->dst = to ? dev : other;
	in->src = to ? other : dev;
	in->count = count;
	in->kind = kind;
	return cudaSuccess;
}

cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t *pGraphNode,
					   cudaGraph_t graph,
					   const cudaGraphNode_t *pDependencies,
					   size_t numDependencies,
					   const void *symbol, const void *src,
					   size_t count, size_t offset,
					   enum cudaMemcpyKind kind)
{
	struct xc_gin in;
	cudaError_t err = xc_sym_gin(symbol, (void *)src, count, offset, kind,
				     1, &in);

	if (err)
		return xc_ret(err);
	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphAddMemcpyNodeFromSymbol(
	cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
	const cudaGraphNode_t *pDependencies, size_t numDependencies,
	void *dst, const void *symbol, size_t count, size_t offset,
	enum cudaMemcpyKind kind)
{
	struct xc_gin in;
	cudaError_t err = xc_sym_gin(symbol, dst, count, offset, kind, 0,
				     &in);

	if (err)
		return xc_ret(err);
	return xc_add_node(pGraphNode, graph, pDependencies, NULL,
			   numDependencies, &in, NULL, NULL);
}

cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node,
						 const void *symbol,
						 const void *src, size_t count,
						 size_t offset,
						 enum cudaMemcpyKind kind)
{
	struct xc_gin in;
	cudaError_t err = xc_sym_gin(symbol, (void *)src, count, offset, kind,
				     1, &in);

	if (err)
		return xc_ret(err);
	return xc_set_params(NULL, node, &in);
}

cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node,
						   void *dst,
						   const void *symbol,
						   size_t count, size_t offset,
						   enum cudaMemcpyKind kind)
{
	struct xc_gin in;
	cudaError_t err = xc_sym_gin(symbol, dst, count, offset, kind, 0,
				     &in);

	if (err)
		return xc_ret(err);
	return xc_set_params(NULL, node, &in);
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(
	cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const void *symbol,
	const void *src, size_t count, size_t offset,
	enum cudaMemcpyKind kind)
{
	struct xc_gin in;
	cudaError_t err;

	if (!hGraphExec)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_sym_gin(symbol, (void *)src, count, offset, kind, 1, &in);
	if (err)
		return xc_ret(err);
	return xc_set_params(hGraphExec, node, &in);
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(
	cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void *dst,
	const void *symbol, size_t count, size_t offset,
	enum cudaMemcpyKind kind)
{
	struct xc_gin in;
	cudaError_t err;

	if (!hGraphExec)
		return xc_ret(cudaErrorInvalidValue);
	err = xc_sym_gin(symbol, dst, count, offset, kind, 0, &in);
	if (err)
		return xc_ret(err);
	return xc_set_params(hGraphExec, node, &in);
}

/* ---- kernel node attributes ---- */

/*
 * GRAPH_KERNEL_NODE_ATTRIBUTE: the value as a launch attribute's record,
 * events as handles both ways (as cudaLaunchKernelExC's attributes).
 */
static cudaError_t xc_knode_attr(cudaGraphNode_t node,
				 cudaKernelNodeAttrID id,
				 cudaKernelNodeAttrValue *v, int set)
{
	struct xcuda_graph_kernel_node_attribute_args a = { 0 };
	struct xcuda_launch_attr rec;
	cudaEvent_t ev;
	uint64_t h64;
	uint32_t h = 0;
	struct xc_session *s;
	cudaError_t err = xc_ready(&s);

	if (err)
		return xc_ret(err);
	if (!v || xc_hin(node, &a.node))
		return xc_ret(cudaErrorInvalidValue);
	memset(&rec, 0, sizeof(rec));
	memcpy(&rec.id, &id, sizeof(rec.id));
	if (set) {
		memcpy(rec.val, v, sizeof(rec.val));
		switch (rec.id) {
		case cudaLaunchAttributeProgrammaticEvent:
		case cudaLaunchAttributeLaunchCompletionEvent:
			/* Both keep their event first. */
			ev = v->programmaticEvent.event;
			if (ev && xc_event_handle(ev, &h))
				return xc_ret(cudaErrorInvalidResourceHandle);
			h64 = h;
			memcpy(rec.val, &h64, sizeof(h64));
			break;
		case cudaLaunchAttributeDeviceUpdatableKernelNode:
			memset(rec.val + offsetof(cudaLaunchAttributeValue,
				deviceUpdatableKernelNode.devNode), 0,
			       sizeof(void *));
			break;
		default:
			break;
		}
	}
	a.set = (uint32_t)set;
	{
		struct xc_xfer x = { &rec, sizeof(rec),
				     set ? XC_XFER_IN : XC_XFER_INOUT,
				     &a.attr };

		err = xc_forward_xfer(XCUDA_OP_GRAPH_KERNEL_NODE_ATTRIBUTE, &a,
				      sizeof(a), NULL, 0, &x, 1);
	}
	if (err || set)
		return xc_ret(err);
	memcpy(v, rec.val, sizeof(*v));
	if (id == cudaLaunchAttributeProgrammaticEvent ||
	    id == cudaLaunchAttributeLaunchCompletionEvent) {
		/* The worker's handle for the event, checked as one. */
		memcpy(&h64, rec.val, sizeof(h64));
		if (h64 > UINT32_MAX || (h64 && h64 < XCUDA_HANDLE_FIRST))
			return xc_ret(cudaErrorUnknown);
		v->programmaticEvent.event = (cudaEvent_t)xc_h2p((uint32_t)h64);
	}
	return cudaSuccess;
}

cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t hNode,
					    cudaKernelNodeAttrID attr,
					    cudaKernelNodeAttrValue *value_out)
{
	return xc_knode_attr(hNode, attr, value_out, 0);
}

cudaError_t cudaGraphKernelNodeSetAttribute(
	cudaGraphNode_t hNode, cudaKernelNodeAttrID attr,
	const cudaKernelNodeAttrValue *value)
{
	return xc_knode_attr(hNode, attr, (cudaKernelNodeAttrValue *)value, 1);
}
