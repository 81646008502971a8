// SPDX-License-Identifier: MIT
/*
 * The explicit graph API (spec/cudart-graph-nodes.calls): nodes, edges,
 * node parameters, executable graph updates, and stream capture queries.
 *
 * Nodes are handles of their own table (XD_H_NODE), every one "borrowed":
 * CUDA destroys a node with its graph, so the session never destroys one
 * on its own.  A node's entry remembers its graph's handle (owner); a
 * graph that a node owns (a child graph, a conditional body, a child
 * graph moved into its node) is a borrowed graph handle whose owner is
 * that node.  Destroying a graph drops its nodes' handles, and theirs
 * drop the graphs they own, so that no handle outlives its object.  The
 * graph under capture is lent (borrowed, no owner) until
 * STREAM_END_CAPTURE makes it the session's.
 *
 * Everything from the guest is copied once out of the arena and checked:
 * counts against XCUDA_GLIST_MAX and their extents, node parameters
 * (struct xcuda_gparams) field by field; host memory is the arena, named
 * by offset and checked against it; device addresses travel as they are,
 * as MEMCPY's do (CUDA checks them in this worker's own context).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "xcuda/graph.h"
#include "graph_remote.h"
#include "hostfn.h"
#include "log.h"
#include "ops.h"
#include "ops_launch.h"

_Static_assert(sizeof(struct xcuda_gparams) == 280, "gparams size");
_Static_assert(sizeof(cudaGraphEdgeData) == 8, "edge data size");
_Static_assert(sizeof(struct cudaMemAccessDesc) == XCUDA_GACC_SIZE,
	       "access descriptor size");

#define XD_GP_MAX	(sizeof(struct xcuda_gparams) + XCUDA_MAX_ARGS_BYTES)

void xd_graph_node_keep(cudaGraphNode_t node)
{
	(void)node;
}

static struct xd_htab *xd_nodes(struct xd_session *s)
{
	return &s->objects[XD_H_NODE];
}

static struct xd_htab *xd_graphs(struct xd_session *s)
{
	return &s->objects[XD_H_GRAPH];
}

/* An entry of @t for @ptr: its handle (the same object, the same handle). */
static uint32_t xd_find(struct xd_htab *t, const void *ptr)
{
	uint32_t h;

	for (h = 0; (h = xd_htab_next(t, h));)
		if (xd_htab_get(t, h)->ptr == ptr)
			return h;
	return 0;
}

/* Names node @n (of the graph with handle @owner): 0 for NULL. */
static int xd_node_name(struct xd_session *s, cudaGraphNode_t n,
			uint32_t owner, uint32_t *h)
{
	struct xd_hent *e;

	*h = 0;
	if (!n)
		return 0;
	*h = xd_find(xd_nodes(s), n);
	if (*h)
		return 0;
	e = xd_htab_add(xd_nodes(s), n, h);
	if (!e)
		return cudaErrorMemoryAllocation;
	e->device = s->device;
	e->borrowed = 1;
	e->owner = owner;
	return 0;
}

/* Lends graph @g, owned by node @owner (0: by CUDA): never destroyed. */
static int xd_graph_lend(struct xd_session *s, cudaGraph_t g, uint32_t owner,
			 uint32_t *h)
{
	struct xd_hent *e;

	*h = 0;
	if (!g)
		return 0;
	*h = xd_find(xd_graphs(s), g);
	if (*h) {
		e = xd_htab_get(xd_graphs(s), *h);
		if (owner && e->borrowed && !e->owner)
			e->owner = owner;
		return 0;
	}
	e = xd_htab_add(xd_graphs(s), g, h);
	if (!e)
		return cudaErrorMemoryAllocation;
	e->device = s->device;
	e->borrowed = 1;
	e->owner = owner;
	return 0;
}

/* Drops node @nh's handle and those of the graphs it owns. */
static void xd_node_forget(struct xd_session *s, uint32_t nh)
{
	struct xd_hent *e;
	uint32_t h;

	for (h = 0; (h = xd_htab_next(xd_graphs(s), h));) {
		e = xd_htab_get(xd_graphs(s), h);
		if (e->borrowed && e->owner == nh)
			xd_graph_forget(s, h);
	}
	xd_htab_del(xd_nodes(s), nh);
}

void xd_graph_forget(struct xd_session *s, uint32_t gh)
{
	uint32_t h;

	for (h = 0; (h = xd_htab_next(xd_nodes(s), h));)
		if (xd_htab_get(xd_nodes(s), h)->owner == gh)
			xd_node_forget(s, h);
	xd_htab_del(xd_graphs(s), gh);
}

/* The graph handle that node @nh belongs to (0 if unknown). */
static uint32_t xd_node_owner(struct xd_session *s, uint32_t nh)
{
	struct xd_hent *e = xd_htab_get(xd_nodes(s), nh);

	return e ? e->owner : 0;
}

static int xd_node_arg(struct xd_session *s, uint32_t h, cudaGraphNode_t *n)
{
	*n = xd_object_get(xd_nodes(s), h);
	return *n ? 0 : cudaErrorInvalidResourceHandle;
}

static int xd_graph_arg(struct xd_session *s, uint32_t h, cudaGraph_t *g)
{
	*g = xd_object_get(xd_graphs(s), h);
	return *g ? 0 : cudaErrorInvalidResourceHandle;
}

/* @count node handles from @e, as CUDA's nodes (NULL for none). */
static int xd_nodes_in(struct xd_session *s, const struct xcuda_extent *e,
		       uint64_t count, cudaGraphNode_t **out)
{
	uint32_t *hs;
	uint64_t i;
	int err = 0;

	*out = NULL;
	if (!count)
		return 0;
	if (count > XCUDA_GLIST_MAX || e->len < count * sizeof(uint32_t))
		return cudaErrorInvalidValue;
	hs = (uint32_t *)xd_arena_copy(s, e, e->len);
	*out = calloc(count, sizeof(**out));
	if (!hs || !*out) {
		err = cudaErrorMemoryAllocation;
		goto out;
	}
	for (i = 0; i < count && !err; i++)
		err = xd_node_arg(s, hs[i], &(*out)[i]);
out:
	free(hs);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

/* @count edge data from @e, NULL when the extent is empty. */
static int xd_edata_in(struct xd_session *s, const struct xcuda_extent *e,
		       uint64_t count, cudaGraphEdgeData **out)
{
	*out = NULL;
	if (!e->len)
		return 0;
	if (count > XCUDA_GLIST_MAX || e->len < count * sizeof(**out))
		return cudaErrorInvalidValue;
	*out = (cudaGraphEdgeData *)xd_arena_copy(s, e, e->len);
	return *out ? 0 : cudaErrorMemoryAllocation;
}

/* ---- node parameters ---- */

/* Decoded node parameters, ready for CUDA. */
struct xd_gp {
	struct xcuda_gparams w;
	uint8_t *buf;			/* the private copy */
	uint32_t len;
	void **argv;			/* kernel */
	struct cudaKernelNodeParams kp;
	struct cudaMemcpy3DParms cp;
	struct cudaMemsetParams mp;
	struct cudaMemAllocNodeParams ap;
	cudaEvent_t ev;
	cudaGraph_t g;
	struct cudaHostNodeParams hp;
	void *hf;			/* host node: its context */
	int hf_kept;			/* a node holds it now */
	struct cudaGraphNodeParams np;	/* the generic form */
};

static void xd_gp_free(struct xd_gp *p)
{
	free(p->buf);
	free(p->argv);
	if (p->hf && !p->hf_kept)
		xd_hostfn_ctx_drop(p->hf);
}

/* Bytes from a side's start to the end of what a copy touches. */
static int xd_side_span(const struct xcuda_gside *sd, const uint64_t *ext,
			uint64_t *span)
{
	unsigned __int128 rows, end;

	if (!ext[0] || !ext[1] || !ext[2]) {
		*span = 0;
		return 0;
	}
	rows = ((unsigned __int128)sd->pos[2] + ext[2] - 1) * sd->ysize +
	       sd->pos[1] + ext[1] - 1;
	end = rows * sd->pitch + sd->pos[0] + ext[0];
	if ((ext[1] > 1 || ext[2] > 1) && sd->pos[0] + ext[0] > sd->pitch)
		return cudaErrorInvalidValue;
	if (end > UINT64_MAX)
		return cudaErrorInvalidValue;
	*span = (uint64_t)end;
	return 0;
}

/* A side's address in this worker: a device address, or in the arena. */
static int xd_side_ptr(struct xd_session *s, const struct xcuda_gside *sd,
		       uint64_t span, void **p)
{
	switch (sd->where) {
	case XCUDA_GSIDE_DEV:
		*p = (void *)(uintptr_t)sd->ptr;
		return 0;
	case XCUDA_GSIDE_ARENA:
		if (!xcuda_extent_ok(sd->ptr, span, s->chan->arena_size))
			return cudaErrorInvalidValue;
		/* Relayed: its bytes travel at each launch (graph_remote.c). */
		*p = s->chan->arena + sd->ptr;
		return 0;
	}
	return cudaErrorInvalidValue;
}

/* The reverse: a worker address as a side the guest can read. */
static void xd_side_out(struct xd_session *s, const void *p,
			struct xcuda_gside *sd)
{
	int64_t off = xd_arena_off(s, p);

	if (off >= 0) {
		sd->where = XCUDA_GSIDE_ARENA;
		sd->ptr = (uint64_t)off;
	} else {
		sd->where = XCUDA_GSIDE_DEV;
		sd->ptr = (uintptr_t)p;
	}
}

/* Bytes an element of @arr takes; 0 for formats without one. */
static uint64_t xd_gp_elem(cudaArray_t arr)
{
	struct cudaChannelFormatDesc d;

	if (cudaArrayGetInfo(&d, NULL, NULL, arr))
		return 0;
	if (d.x < 0 || d.y < 0 || d.z < 0 || d.w < 0)
		return 0;
	return ((uint64_t)d.x + d.y + d.z + d.w) / 8;
}

/*
 * A copy's side @sd that names a CUDA array: the session's array in
 * *@arr (NULL when @sd is no array), and the extent in bytes for the
 * other side (@other) in @ext: CUDA counts an array copy's width in the
 * array's elements.  Both sides arrays: CUDA checks both.
 */
static int xd_gp_array(struct xd_session *s, const struct xcuda_gside *sd,
		       const struct xcuda_gside *other, cudaArray_t *arr,
		       uint64_t *ext)
{
	uint64_t elem;

	*arr = NULL;
	if (sd->where != XCUDA_GSIDE_ARRAY)
		return 0;
	if (sd->ptr > UINT32_MAX)
		return cudaErrorInvalidResourceHandle;
	*arr = xd_object_get(&s->objects[XD_H_ARRAY], (uint32_t)sd->ptr);
	if (!*arr)
		return cudaErrorInvalidResourceHandle;
	if (other->where == XCUDA_GSIDE_ARRAY)
		return 0;
	elem = xd_gp_elem(*arr);
	if (!elem || __builtin_mul_overflow(ext[0], elem, &ext[0]))
		return cudaErrorInvalidValue;
	return 0;
}

/* An array CUDA answered as a side: the session's handle for it. */
static int xd_array_out(struct xd_session *s, cudaArray_t arr,
			struct xcuda_gside *sd)
{
	if (!arr)
		return 0;
	sd->where = XCUDA_GSIDE_ARRAY;
	sd->ptr = xd_object_handle(&s->objects[XD_H_ARRAY], arr);
	return sd->ptr ? 0 : cudaErrorNotSupported;
}

/*
 * A device-address side that an explicit kind calls host memory: CUDA
 * would read or write it as this worker's own memory, so it must be
 * memory CUDA knows as device or managed (host memory of the guest is
 * the arena, by offset).  cudaMemcpyDefault is left to CUDA.
 */
static int xd_host_side_ok(const struct xcuda_gside *sd, void *ptr,
			   uint32_t kind, int src)
{
	struct cudaPointerAttributes at;
	int host;

	if (sd->where != XCUDA_GSIDE_DEV)
		return 0;
	host = kind == cudaMemcpyHostToHost ||
	       kind == (src ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
	if (!host)
		return 0;
	memset(&at, 0, sizeof(at));
	if (cudaPointerGetAttributes(&at, ptr)) {
		cudaGetLastError();
		return cudaErrorInvalidValue;
	}
	return at.type == cudaMemoryTypeDevice ||
	       at.type == cudaMemoryTypeManaged ? 0 : cudaErrorInvalidValue;
}

static int xd_gp_memcpy(struct xd_session *s, struct xd_gp *p, int one_d)
{
	struct xcuda_gparams *w = &p->w;
	uint64_t span = 0, ext[3];
	void *src = NULL, *dst = NULL;
	int err;

	if (one_d) {
		/* cudaGraphAddMemcpyNode1D: a row of extent[0] bytes. */
		w->extent[1] = w->extent[2] = 1;
		w->src.pitch = w->dst.pitch = w->extent[0];
		w->src.ysize = w->dst.ysize = 1;
		memset(w->src.pos, 0, sizeof(w->src.pos));
		memset(w->dst.pos, 0, sizeof(w->dst.pos));
	}
	memcpy(ext, w->extent, sizeof(ext));
	if (one_d && (w->src.where == XCUDA_GSIDE_ARRAY ||
		      w->dst.where == XCUDA_GSIDE_ARRAY))
		return cudaErrorInvalidValue;
	memset(&p->cp, 0, sizeof(p->cp));
	err = xd_gp_array(s, &w->src, &w->dst, &p->cp.srcArray, ext);
	if (!err)
		err = xd_gp_array(s, &w->dst, &w->src, &p->cp.dstArray, ext);
	if (!err && !p->cp.srcArray)
		err = xd_side_span(&w->src, ext, &span);
	if (!err && !p->cp.srcArray)
		err = xd_side_ptr(s, &w->src, span, &src);
	if (!err && !p->cp.dstArray)
		err = xd_side_span(&w->dst, ext, &span);
	if (!err && !p->cp.dstArray)
		err = xd_side_ptr(s, &w->dst, span, &dst);
	if (!err)
		err = xd_host_side_ok(&w->src, src, w->kind, 1);
	if (!err)
		err = xd_host_side_ok(&w->dst, dst, w->kind, 0);
	if (err)
		return err;
	p->cp.srcPtr = (struct cudaPitchedPtr){ src, w->src.pitch,
						w->src.xsize, w->src.ysize };
	p->cp.dstPtr = (struct cudaPitchedPtr){ dst, w->dst.pitch,
						w->dst.xsize, w->dst.ysize };
	p->cp.srcPos = (struct cudaPos){ w->src.pos[0], w->src.pos[1],
					 w->src.pos[2] };
	p->cp.dstPos = (struct cudaPos){ w->dst.pos[0], w->dst.pos[1],
					 w->dst.pos[2] };
	p->cp.extent = (struct cudaExtent){ w->extent[0], w->extent[1],
					    w->extent[2] };
	p->cp.kind = (enum cudaMemcpyKind)w->kind;
	return 0;
}

static int xd_gp_memset(struct xd_session *s, struct xd_gp *p)
{
	struct xcuda_gparams *w = &p->w;
	unsigned __int128 end = 0;
	void *dst;
	int err;

	if (w->elem > 4)
		return cudaErrorInvalidValue;
	if (w->extent[0] && w->extent[1])
		end = ((unsigned __int128)w->extent[1] - 1) * w->dst.pitch +
		      (unsigned __int128)w->extent[0] * w->elem;
	if (end > UINT64_MAX)
		return cudaErrorInvalidValue;
	/* Relayed, only copies move host bytes at a launch. */
	if (w->dst.where == XCUDA_GSIDE_ARENA &&
	    xd_remote_refuse(s, "a graph memset of host memory"))
		return cudaErrorNotSupported;
	err = xd_side_ptr(s, &w->dst, (uint64_t)end, &dst);
	if (err)
		return err;
	p->mp.dst = dst;
	p->mp.pitch = w->dst.pitch;
	p->mp.value = w->value;
	p->mp.elementSize = w->elem;
	p->mp.width = w->extent[0];
	p->mp.height = w->extent[1];
	return 0;
}

static int xd_gp_alloc(struct xd_gp *p)
{
	struct xcuda_gparams *w = &p->w;
	uint64_t need = (uint64_t)w->nacc * XCUDA_GACC_SIZE;

	if (w->nacc > XCUDA_GACC_MAX || need > p->len - sizeof(*w) ||
	    w->handle_types)
		return cudaErrorInvalidValue;
	memset(&p->ap, 0, sizeof(p->ap));
	p->ap.poolProps.allocType = (enum cudaMemAllocationType)w->alloc_type;
	p->ap.poolProps.location.type = (enum cudaMemLocationType)w->loc_type;
	p->ap.poolProps.location.id = (int)w->loc_id;
	p->ap.accessDescs = w->nacc ? (const struct cudaMemAccessDesc *)
		(p->buf + sizeof(*w)) : NULL;
	p->ap.accessDescCount = w->nacc;
	p->ap.bytesize = w->bytesize;
	return 0;
}

/* Decodes and checks @e's parameters for entry @entry. */
static int xd_gp_in(struct xd_session *s, const struct xcuda_extent *e,
		    uint32_t entry, struct xd_gp *p)
{
	struct xcuda_gparams *w = &p->w;
	cudaKernel_t k;
	int err;

	memset(p, 0, sizeof(*p));
	if (e->len < sizeof(*w) || e->len > XD_GP_MAX)
		return cudaErrorInvalidValue;
	p->buf = xd_arena_copy(s, e, (uint32_t)XD_GP_MAX);
	if (!p->buf)
		return cudaErrorMemoryAllocation;
	p->len = e->len;
	memcpy(w, p->buf, sizeof(*w));
	if (w->rsvd || w->src.rsvd || w->dst.rsvd)
		return cudaErrorInvalidValue;
	if (entry != XCUDA_GN_GENERIC) {
		static const uint32_t type[] = {
			[XCUDA_GN_KERNEL] = cudaGraphNodeTypeKernel,
			[XCUDA_GN_MEMCPY] = cudaGraphNodeTypeMemcpy,
			[XCUDA_GN_MEMCPY_1D] = cudaGraphNodeTypeMemcpy,
			[XCUDA_GN_MEMSET] = cudaGraphNodeTypeMemset,
			[XCUDA_GN_EVENT_RECORD] = cudaGraphNodeTypeEventRecord,
			[XCUDA_GN_EVENT_WAIT] = cudaGraphNodeTypeWaitEvent,
			[XCUDA_GN_CHILD] = cudaGraphNodeTypeGraph,
			[XCUDA_GN_EMPTY] = cudaGraphNodeTypeEmpty,
			[XCUDA_GN_MEM_ALLOC] = cudaGraphNodeTypeMemAlloc,
			[XCUDA_GN_MEM_FREE] = cudaGraphNodeTypeMemFree,
			[XCUDA_GN_GENERIC] = 0,
			[XCUDA_GN_HOST] = cudaGraphNodeTypeHost,
		};

		if (!entry || entry > XCUDA_GN_HOST || w->type != type[entry])
			return cudaErrorInvalidValue;
	}
	memset(&p->np, 0, sizeof(p->np));
	p->np.type = (enum cudaGraphNodeType)w->type;
	switch (w->type) {
	case cudaGraphNodeTypeKernel:
		if (w->args_len != p->len - sizeof(*w))
			return cudaErrorInvalidValue;
		err = xd_kernel_argv(s, w->func, p->buf + sizeof(*w),
				     w->args_len, &k, &p->argv);
		if (err)
			return err;
		p->kp.func = (void *)k;
		p->kp.gridDim = (dim3){ w->grid[0], w->grid[1], w->grid[2] };
		p->kp.blockDim = (dim3){ w->block[0], w->block[1],
					 w->block[2] };
		p->kp.sharedMemBytes = w->shmem;
		p->kp.kernelParams = p->argv;
		p->np.kernel.func = p->kp.func;
		p->np.kernel.gridDim = p->kp.gridDim;
		p->np.kernel.blockDim = p->kp.blockDim;
		p->np.kernel.sharedMemBytes = p->kp.sharedMemBytes;
		p->np.kernel.kernelParams = p->argv;
		return 0;
	case cudaGraphNodeTypeMemcpy:
		err = xd_gp_memcpy(s, p, entry == XCUDA_GN_MEMCPY_1D);
		p->np.memcpy.copyParams = p->cp;
		return err;
	case cudaGraphNodeTypeMemset:
		err = xd_gp_memset(s, p);
		memcpy(&p->np.memset, &p->mp, sizeof(p->mp));
		return err;
	case cudaGraphNodeTypeEventRecord:
	case cudaGraphNodeTypeWaitEvent:
		p->ev = xd_object_get(&s->events, w->event);
		if (!p->ev)
			return cudaErrorInvalidResourceHandle;
		p->np.eventRecord.event = p->ev;
		return 0;
	case cudaGraphNodeTypeGraph:
		err = xd_graph_arg(s, w->graph, &p->g);
		p->np.graph.graph = p->g;
		p->np.graph.ownership =
			(enum cudaGraphChildGraphNodeOwnership)w->ownership;
		return err;
	case cudaGraphNodeTypeEmpty:
		return 0;
	case cudaGraphNodeTypeMemAlloc:
		err = xd_gp_alloc(p);
		memcpy(&p->np.alloc, &p->ap, sizeof(p->ap));
		return err;
	case cudaGraphNodeTypeMemFree:
		p->np.free.dptr = (void *)(uintptr_t)w->dptr;
		return 0;
	case cudaGraphNodeTypeConditional:
		if (w->cond_size > XCUDA_GCOND_MAX ||
		    p->len < sizeof(*w) + w->cond_size * sizeof(uint32_t))
			return cudaErrorInvalidValue;
		p->np.conditional.handle = w->cond_handle;
		p->np.conditional.type =
			(enum cudaGraphConditionalNodeType)w->cond_type;
		p->np.conditional.size = w->cond_size;
		return 0;
	case cudaGraphNodeTypeHost:
		/* The guest's function, by its token: our trampoline. */
		err = xd_hostfn_ctx_new(s, w->token, XD_HOSTFN_GRAPH, &p->hf);
		if (err)
			return err;
		p->hp.fn = xd_hostfn_trampoline;
		p->hp.userData = p->hf;
		p->np.host.fn = p->hp.fn;
		p->np.host.userData = p->hp.userData;
		return 0;
	}
	/* External semaphores need what xcuda lacks. */
	return cudaErrorNotSupported;
}

int xd_op_graph_add_node(struct xd_session *s,
			 const struct xcuda_graph_add_node_args *a,
			 struct xcuda_graph_add_node_res *r,
			 struct xd_call *call)
{
	cudaGraphNode_t *deps = NULL, n = NULL;
	cudaGraphEdgeData *ed = NULL;
	struct xd_gp p;
	cudaGraph_t g;
	uint32_t i, h, *bodies;
	int err;

	(void)call;
	memset(&p, 0, sizeof(p));
	if (a->edata.len && a->entry != XCUDA_GN_GENERIC)
		return cudaErrorInvalidValue;
	err = xd_gp_in(s, &a->params, a->entry, &p);
	if (!err)
		err = xd_nodes_in(s, &a->deps, a->ndeps, &deps);
	if (!err)
		err = xd_edata_in(s, &a->edata, a->ndeps, &ed);
	if (!err)
		err = xd_graph_arg(s, a->graph, &g);
	if (err)
		goto out;
	switch (a->entry) {
	case XCUDA_GN_KERNEL:
		err = cudaGraphAddKernelNode(&n, g, deps, a->ndeps, &p.kp);
		break;
	case XCUDA_GN_MEMCPY:
		err = cudaGraphAddMemcpyNode(&n, g, deps, a->ndeps, &p.cp);
		break;
	case XCUDA_GN_MEMCPY_1D:
		err = cudaGraphAddMemcpyNode1D(&n, g, deps, a->ndeps,
					       p.cp.dstPtr.ptr,
					       p.cp.srcPtr.ptr,
					       p.w.extent[0], p.cp.kind);
		break;
	case XCUDA_GN_MEMSET:
		err = cudaGraphAddMemsetNode(&n, g, deps, a->ndeps, &p.mp);
		break;
	case XCUDA_GN_EVENT_RECORD:
		err = cudaGraphAddEventRecordNode(&n, g, deps, a->ndeps, p.ev);
		break;
	case XCUDA_GN_EVENT_WAIT:
		err = cudaGraphAddEventWaitNode(&n, g, deps, a->ndeps, p.ev);
		break;
	case XCUDA_GN_CHILD:
		err = cudaGraphAddChildGraphNode(&n, g, deps, a->ndeps, p.g);
		break;
	case XCUDA_GN_EMPTY:
		err = cudaGraphAddEmptyNode(&n, g, deps, a->ndeps);
		break;
	case XCUDA_GN_MEM_ALLOC:
		err = cudaGraphAddMemAllocNode(&n, g, deps, a->ndeps, &p.ap);
		p.np.alloc.dptr = p.ap.dptr;
		break;
	case XCUDA_GN_MEM_FREE:
		err = cudaGraphAddMemFreeNode(&n, g, deps, a->ndeps,
					      p.np.free.dptr);
		break;
	case XCUDA_GN_HOST:
		err = cudaGraphAddHostNode(&n, g, deps, a->ndeps, &p.hp);
		break;
	default:
		err = cudaGraphAddNode(&n, g, deps, ed, a->ndeps, &p.np);
		break;
	}
	if (err)
		goto out;
	/* The node holds the context now, named or not. */
	p.hf_kept = 1;
	err = xd_node_name(s, n, a->graph, &h);
	if (err)
		goto out;
	r->node = h;
	if (p.w.type == cudaGraphNodeTypeMemAlloc)
		r->dptr = (uintptr_t)p.np.alloc.dptr;
	if (p.w.type == cudaGraphNodeTypeGraph &&
	    p.w.ownership == cudaGraphChildGraphOwnershipMove &&
	    a->entry == XCUDA_GN_GENERIC) {
		/* The graph is its node's now: the session must not free it. */
		struct xd_hent *e = xd_htab_get(xd_graphs(s), p.w.graph);

		if (e) {
			e->borrowed = 1;
			e->owner = h;
		}
	}
	if (p.w.type == cudaGraphNodeTypeConditional) {
		bodies = (uint32_t *)(p.buf + sizeof(p.w));
		for (i = 0; i < p.w.cond_size && !err; i++)
			err = xd_graph_lend(s, p.np.conditional.phGraph_out[i],
					    h, &bodies[i]);
		if (!err)
			xd_arena_put(s, &a->params, p.buf);
	}
out:
	xd_gp_free(&p);
	free(deps);
	free(ed);
	return err;
}

int xd_op_graph_node_set_params(
		struct xd_session *s,
		const struct xcuda_graph_node_set_params_args *a,
		struct xd_call *call)
{
	cudaGraphExec_t x = NULL;
	cudaGraphNode_t n;
	struct xd_gp p;
	int err;

	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	err = xd_gp_in(s, &a->params, a->entry, &p);
	if (!err)
		err = xd_node_arg(s, a->node, &n);
	if (!err && a->exec) {
		x = xd_object_get(&s->objects[XD_H_GRAPHEXEC], a->exec);
		if (!x)
			err = cudaErrorInvalidResourceHandle;
	}
	if (err)
		goto out;
	switch (a->entry) {
	case XCUDA_GN_KERNEL:
		err = x ? cudaGraphExecKernelNodeSetParams(x, n, &p.kp) :
			cudaGraphKernelNodeSetParams(n, &p.kp);
		break;
	case XCUDA_GN_MEMCPY:
		err = x ? cudaGraphExecMemcpyNodeSetParams(x, n, &p.cp) :
			cudaGraphMemcpyNodeSetParams(n, &p.cp);
		break;
	case XCUDA_GN_MEMCPY_1D:
		err = x ? cudaGraphExecMemcpyNodeSetParams1D(
				x, n, p.cp.dstPtr.ptr, p.cp.srcPtr.ptr,
				p.w.extent[0], p.cp.kind) :
			cudaGraphMemcpyNodeSetParams1D(
				n, p.cp.dstPtr.ptr, p.cp.srcPtr.ptr,
				p.w.extent[0], p.cp.kind);
		break;
	case XCUDA_GN_MEMSET:
		err = x ? cudaGraphExecMemsetNodeSetParams(x, n, &p.mp) :
			cudaGraphMemsetNodeSetParams(n, &p.mp);
		break;
	case XCUDA_GN_HOST:
		err = x ? cudaGraphExecHostNodeSetParams(x, n, &p.hp) :
			cudaGraphHostNodeSetParams(n, &p.hp);
		break;
	case XCUDA_GN_GENERIC:
		if (p.w.type == cudaGraphNodeTypeConditional) {
			/* Its bodies are fixed when the node is made. */
			err = cudaErrorNotSupported;
			break;
		}
		err = x ? cudaGraphExecNodeSetParams(x, n, &p.np) :
			cudaGraphNodeSetParams(n, &p.np);
		break;
	default:
		err = cudaErrorInvalidValue;
	}
	/* What an exec's copies move over the link changed. */
	if (!err && x)
		xd_rgraph_node_set(s, a->exec, n,
				   p.w.type == cudaGraphNodeTypeMemcpy ?
				   &p.cp : NULL,
				   p.w.type == cudaGraphNodeTypeGraph ?
				   p.g : NULL);
	/*
	 * A host node holds the new context now.  The one it had stays: an
	 * executable graph or a clone made before may still run it.
	 */
	if (!err)
		p.hf_kept = 1;
out:
	xd_gp_free(&p);
	return err;
}

/*
 * The driver's entry point @name of version @ver, or NULL.  The worker
 * loads kernels with cudaLibraryLoadData, so the runtime cannot map a
 * kernel node's function back to a host stub: the driver answers.
 */
static void *xd_drv_entry(const char *name, int ver)
{
	enum cudaDriverEntryPointQueryResult q;
	void *p = NULL;

	if (cudaGetDriverEntryPointByVersion(name, &p, (unsigned int)ver,
					     cudaEnableDefault, &q) ||
	    q != cudaDriverEntryPointSuccess)
		p = NULL;
	cudaGetLastError();
	if (!p)
		xd_log(XD_LOG_DEBUG, "no %s in the driver", name);
	return p;
}

/* The session's kernel whose function in this context is @fn, or NULL. */
static const void *xd_kernel_of_function(struct xd_session *s, CUfunction fn)
{
	static PFN_cuKernelGetFunction_v12000 get;
	static int tried;
	CUfunction f;
	void *k;
	uint32_t h;

	if (!tried) {
		tried = 1;
		get = (PFN_cuKernelGetFunction_v12000)
			xd_drv_entry("cuKernelGetFunction", 12000);
	}
	if (!get || !fn)
		return NULL;
	for (h = 0; (h = xd_htab_next(&s->funcs, h));) {
		k = xd_htab_get(&s->funcs, h)->ptr;
		f = NULL;
		if (get(&f, (CUkernel)k) == CUDA_SUCCESS && f == fn)
			return k;
	}
	return NULL;
}

/*
 * A kernel node's parameters, its kernel as one the session knows where
 * it can be found: the node's CUkernel, or the kernel of its CUfunction.
 * CUresult and cudaError_t share the values of the errors that matter
 * here (invalid value, invalid handle).
 */
static int xd_kernel_node_get(struct xd_session *s, cudaGraphNode_t n,
			      struct cudaKernelNodeParams *kp)
{
	static PFN_cuGraphKernelNodeGetParams_v12000 get;
	static int tried;
	CUDA_KERNEL_NODE_PARAMS_v2 dp;
	const void *k;
	CUresult r;

	if (!tried) {
		tried = 1;
		get = (PFN_cuGraphKernelNodeGetParams_v12000)
			xd_drv_entry("cuGraphKernelNodeGetParams", 12000);
	}
	if (!get)
		return cudaGraphKernelNodeGetParams(n, kp);
	memset(&dp, 0, sizeof(dp));
	r = get((CUgraphNode)n, &dp);
	if (r != CUDA_SUCCESS)
		return (int)r;
	k = dp.kern ? (const void *)dp.kern :
		xd_kernel_of_function(s, dp.func);
	kp->func = (void *)(k ? k : (const void *)dp.func);
	kp->gridDim = (dim3){ dp.gridDimX, dp.gridDimY, dp.gridDimZ };
	kp->blockDim = (dim3){ dp.blockDimX, dp.blockDimY, dp.blockDimZ };
	kp->sharedMemBytes = dp.sharedMemBytes;
	kp->kernelParams = dp.kernelParams;
	kp->extra = dp.extra;
	return 0;
}

int xd_op_graph_node_get_params(
		struct xd_session *s,
		const struct xcuda_graph_node_get_params_args *a,
		struct xd_call *call)
{
	struct cudaKernelNodeParams kp;
	struct cudaMemcpy3DParms cp;
	struct cudaMemAllocNodeParams ap;
	struct cudaHostNodeParams hp;
	struct xcuda_gparams *w;
	cudaGraphNode_t n;
	uint8_t *buf;
	uint32_t len;
	size_t i;
	int err;

	(void)call;
	if (a->params.len < sizeof(*w) || a->params.len > XD_GP_MAX)
		return cudaErrorInvalidValue;
	err = xd_node_arg(s, a->node, &n);
	if (err)
		return err;
	buf = calloc(1, a->params.len);
	if (!buf)
		return cudaErrorMemoryAllocation;
	w = (struct xcuda_gparams *)buf;
	switch (a->entry) {
	case XCUDA_GN_KERNEL:
		memset(&kp, 0, sizeof(kp));
		err = xd_kernel_node_get(s, n, &kp);
		if (err)
			break;
		if (kp.extra) {
			err = cudaErrorNotSupported;
			break;
		}
		err = xd_kernel_pack(s, kp.func, kp.kernelParams,
				     buf + sizeof(*w),
				     a->params.len - sizeof(*w), &w->func,
				     &len);
		if (err)
			break;
		w->type = cudaGraphNodeTypeKernel;
		w->args_len = len;
		w->grid[0] = kp.gridDim.x;
		w->grid[1] = kp.gridDim.y;
		w->grid[2] = kp.gridDim.z;
		w->block[0] = kp.blockDim.x;
		w->block[1] = kp.blockDim.y;
		w->block[2] = kp.blockDim.z;
		w->shmem = kp.sharedMemBytes;
		break;
	case XCUDA_GN_MEMCPY:
		memset(&cp, 0, sizeof(cp));
		err = cudaGraphMemcpyNodeGetParams(n, &cp);
		if (err)
			break;
		w->type = cudaGraphNodeTypeMemcpy;
		xd_side_out(s, cp.srcPtr.ptr, &w->src);
		xd_side_out(s, cp.dstPtr.ptr, &w->dst);
		/* Arrays as the session's handles: one it lacks is none. */
		err = xd_array_out(s, cp.srcArray, &w->src);
		if (!err)
			err = xd_array_out(s, cp.dstArray, &w->dst);
		if (err)
			break;
		w->src.pitch = cp.srcPtr.pitch;
		w->src.xsize = cp.srcPtr.xsize;
		w->src.ysize = cp.srcPtr.ysize;
		w->src.pos[0] = cp.srcPos.x;
		w->src.pos[1] = cp.srcPos.y;
		w->src.pos[2] = cp.srcPos.z;
		w->dst.pitch = cp.dstPtr.pitch;
		w->dst.xsize = cp.dstPtr.xsize;
		w->dst.ysize = cp.dstPtr.ysize;
		w->dst.pos[0] = cp.dstPos.x;
		w->dst.pos[1] = cp.dstPos.y;
		w->dst.pos[2] = cp.dstPos.z;
		w->extent[0] = cp.extent.width;
		w->extent[1] = cp.extent.height;
		w->extent[2] = cp.extent.depth;
		w->kind = cp.kind;
		break;
	case XCUDA_GN_MEM_ALLOC:
		memset(&ap, 0, sizeof(ap));
		err = cudaGraphMemAllocNodeGetParams(n, &ap);
		if (err)
			break;
		if (ap.accessDescCount > XCUDA_GACC_MAX ||
		    ap.accessDescCount * XCUDA_GACC_SIZE >
		    a->params.len - sizeof(*w)) {
			err = cudaErrorMemoryAllocation;
			break;
		}
		w->type = cudaGraphNodeTypeMemAlloc;
		w->alloc_type = ap.poolProps.allocType;
		w->handle_types = ap.poolProps.handleTypes;
		w->loc_type = ap.poolProps.location.type;
		w->loc_id = (uint32_t)ap.poolProps.location.id;
		w->bytesize = ap.bytesize;
		w->dptr = (uintptr_t)ap.dptr;
		w->nacc = (uint32_t)ap.accessDescCount;
		for (i = 0; i < ap.accessDescCount; i++)
			memcpy(buf + sizeof(*w) + i * XCUDA_GACC_SIZE,
			       &ap.accessDescs[i], XCUDA_GACC_SIZE);
		break;
	case XCUDA_GN_HOST:
		memset(&hp, 0, sizeof(hp));
		err = cudaGraphHostNodeGetParams(n, &hp);
		if (err)
			break;
		/* Only our trampolines: their context names the token. */
		w->token = hp.fn == xd_hostfn_trampoline ?
			xd_hostfn_ctx_token(s, hp.userData) : 0;
		if (!w->token) {
			err = cudaErrorNotSupported;
			break;
		}
		w->type = cudaGraphNodeTypeHost;
		break;
	default:
		err = cudaErrorInvalidValue;
	}
	if (!err)
		xd_arena_put(s, &a->params, buf);
	free(buf);
	return err;
}

/* ---- lists and edges ---- */

int xd_op_graph_node_list(struct xd_session *s,
			  const struct xcuda_graph_node_list_args *a,
			  struct xcuda_graph_node_list_res *r,
			  struct xd_call *call)
{
	cudaGraphNode_t *from = NULL, *to = NULL, n = NULL;
	cudaGraphEdgeData *ed = NULL;
	uint32_t *hf = NULL, *ht = NULL, owner = a->obj;
	cudaGraph_t g = NULL;
	size_t cnt, i;
	int want = a->cap != UINT64_MAX, err;

	(void)call;
	if (want && (a->cap > XCUDA_GLIST_MAX ||
		     a->nodes.len < a->cap * sizeof(uint32_t) ||
		     (a->what == XCUDA_GL_EDGES &&
		      a->to.len < a->cap * sizeof(uint32_t)) ||
		     (a->edata.len && a->edata.len < a->cap * sizeof(*ed))))
		return cudaErrorInvalidValue;
	if (a->what == XCUDA_GL_DEPS || a->what == XCUDA_GL_DEPENDENTS) {
		err = xd_node_arg(s, a->obj, &n);
		owner = xd_node_owner(s, a->obj);
	} else {
		err = xd_graph_arg(s, a->obj, &g);
	}
	if (err)
		return err;
	cnt = want ? a->cap : 0;
	if (want) {
		/* One entry at least: an array of none is not NULL. */
		from = calloc(cnt + 1, sizeof(*from));
		to = calloc(cnt + 1, sizeof(*to));
		hf = calloc(cnt + 1, sizeof(*hf));
		ht = calloc(cnt + 1, sizeof(*ht));
		if (a->edata.len)
			ed = calloc(cnt + 1, sizeof(*ed));
		if (!from || !to || !hf || !ht || (a->edata.len && !ed)) {
			err = cudaErrorMemoryAllocation;
			goto out;
		}
	}
	switch (a->what) {
	case XCUDA_GL_NODES:
		err = cudaGraphGetNodes(g, want ? from : NULL, &cnt);
		break;
	case XCUDA_GL_ROOTS:
		err = cudaGraphGetRootNodes(g, want ? from : NULL, &cnt);
		break;
	case XCUDA_GL_EDGES:
		err = cudaGraphGetEdges(g, want ? from : NULL,
					want ? to : NULL, ed, &cnt);
		break;
	case XCUDA_GL_DEPS:
		err = cudaGraphNodeGetDependencies(n, want ? from : NULL, ed,
						   &cnt);
		break;
	case XCUDA_GL_DEPENDENTS:
		err = cudaGraphNodeGetDependentNodes(n, want ? from : NULL, ed,
						     &cnt);
		break;
	default:
		err = cudaErrorInvalidValue;
	}
	/* CUDA answers the count it filled, or the whole count: both kept. */
	r->count = cnt;
	if (err || !want)
		goto out;
	for (i = 0; i < a->cap && !err; i++) {
		err = xd_node_name(s, from[i], owner, &hf[i]);
		if (!err && a->what == XCUDA_GL_EDGES)
			err = xd_node_name(s, to[i], owner, &ht[i]);
	}
	if (err || !a->cap)
		goto out;
	xd_arena_put(s, &(struct xcuda_extent){ a->nodes.off,
		     (uint32_t)(a->cap * sizeof(*hf)) }, (uint8_t *)hf);
	if (a->what == XCUDA_GL_EDGES)
		xd_arena_put(s, &(struct xcuda_extent){ a->to.off,
			     (uint32_t)(a->cap * sizeof(*ht)) }, (uint8_t *)ht);
	if (ed)
		xd_arena_put(s, &(struct xcuda_extent){ a->edata.off,
			     (uint32_t)(a->cap * sizeof(*ed)) }, (uint8_t *)ed);
out:
	free(from);
	free(to);
	free(hf);
	free(ht);
	free(ed);
	return err;
}

int xd_op_graph_dependencies(struct xd_session *s,
			     const struct xcuda_graph_dependencies_args *a,
			     struct xd_call *call)
{
	cudaGraphNode_t *from = NULL, *to = NULL;
	cudaGraphEdgeData *ed = NULL;
	cudaGraph_t g;
	int err;

	(void)call;
	if (a->remove > 1)
		return cudaErrorInvalidValue;
	err = xd_graph_arg(s, a->graph, &g);
	if (!err)
		err = xd_nodes_in(s, &a->from, a->count, &from);
	if (!err)
		err = xd_nodes_in(s, &a->to, a->count, &to);
	if (!err)
		err = xd_edata_in(s, &a->edata, a->count, &ed);
	if (!err)
		err = a->remove ?
			cudaGraphRemoveDependencies(g, from, to, ed, a->count) :
			cudaGraphAddDependencies(g, from, to, ed, a->count);
	free(from);
	free(to);
	free(ed);
	return err;
}

/* ---- nodes and graphs going ---- */

int xd_op_graph_destroy_node(struct xd_session *s,
			     const struct xcuda_graph_destroy_node_args *a,
			     struct xd_call *call)
{
	cudaGraphNode_t n;
	int err;

	(void)call;
	err = xd_node_arg(s, a->node, &n);
	if (!err)
		err = cudaGraphDestroyNode(n);
	if (!err)
		xd_node_forget(s, a->node);
	return err;
}

int xd_op_graph_destroy(struct xd_session *s,
			const struct xcuda_graph_destroy_args *a,
			struct xd_call *call)
{
	struct xd_hent *e = xd_htab_get(xd_graphs(s), a->graph);
	int err;

	(void)call;
	if (!e)
		return cudaErrorInvalidResourceHandle;
	/* A node's graph, or one under capture: CUDA's to destroy. */
	if (e->borrowed)
		return cudaErrorInvalidValue;
	err = cudaGraphDestroy((cudaGraph_t)e->ptr);
	if (!err)
		xd_graph_forget(s, a->graph);
	return err;
}

/* Whether a graph under capture was lent to the session. */
static int xd_lent_any(struct xd_session *s)
{
	struct xd_hent *e;
	uint32_t h;

	for (h = 0; (h = xd_htab_next(xd_graphs(s), h));) {
		e = xd_htab_get(xd_graphs(s), h);
		if (e->borrowed && !e->owner)
			return 1;
	}
	return 0;
}

static int xd_still_capturing(cudaStream_t stream)
{
	enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;

	if (cudaStreamIsCapturing(stream, &st))
		cudaGetLastError();
	return st != cudaStreamCaptureStatusNone;
}

int xd_op_stream_end_capture(struct xd_session *s,
			     const struct xcuda_stream_end_capture_args *a,
			     struct xcuda_stream_end_capture_res *r,
			     struct xd_call *call)
{
	enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	cudaGraph_t before = NULL, g = NULL;
	struct xd_hent *e;
	cudaStream_t stream;
	uint32_t lent = 0;
	int err;

	(void)call;
	if (a->nograph > 1)
		return cudaErrorInvalidValue;
	err = xd_stream_lookup(&s->streams, a->stream, &stream);
	if (err)
		return err;
	/* Which graph was lent, if any was: only then ask CUDA. */
	if (xd_lent_any(s)) {
		if (!cudaStreamGetCaptureInfo(stream, &st, NULL, &before, NULL,
					      NULL, NULL) && before)
			lent = xd_find(xd_graphs(s), before);
		else
			cudaGetLastError();
	}
	err = cudaStreamEndCapture(stream, a->nograph ? NULL : &g);
	e = lent ? xd_htab_get(xd_graphs(s), lent) : NULL;
	if (err) {
		/*
		 * A failed capture's own graph is gone with its nodes; a graph
		 * the session or a node owns stays, and so does the lent one
		 * while the capture goes on (CUDA refused a NULL pGraph).
		 */
		if (e && e->borrowed && !e->owner && !g &&
		    !(a->nograph && xd_still_capturing(stream)))
			xd_graph_forget(s, lent);
		return err;
	}
	if (a->nograph) {
		/* The program's own graph, captured into: nothing to name. */
		if (e && e->borrowed && !e->owner)
			e->borrowed = 0;
		return 0;
	}
	r->graph = xd_find(xd_graphs(s), g);
	if (r->graph) {
		/* Lent during the capture: the session's now, same handle. */
		e = xd_htab_get(xd_graphs(s), r->graph);
		if (e->borrowed && !e->owner)
			e->borrowed = 0;
		return 0;
	}
	err = xd_object_add(xd_graphs(s), g, s->device, 0, &r->graph);
	if (err)
		cudaGraphDestroy(g);
	return err;
}

int xd_op_graph_node_find_in_clone(
		struct xd_session *s,
		const struct xcuda_graph_node_find_in_clone_args *a,
		struct xcuda_graph_node_find_in_clone_res *r,
		struct xd_call *call)
{
	cudaGraphNode_t n, out = NULL;
	cudaGraph_t g;
	int err;

	(void)call;
	err = xd_node_arg(s, a->originalNode, &n);
	if (!err)
		err = xd_graph_arg(s, a->clonedGraph, &g);
	if (!err)
		err = cudaGraphNodeFindInClone(&out, n, g);
	if (!err)
		err = xd_node_name(s, out, a->clonedGraph, &r->pNode);
	return err;
}

int xd_op_graph_child_graph_node_get_graph(
		struct xd_session *s,
		const struct xcuda_graph_child_graph_node_get_graph_args *a,
		struct xcuda_graph_child_graph_node_get_graph_res *r,
		struct xd_call *call)
{
	cudaGraphNode_t n;
	cudaGraph_t g = NULL;
	int err;

	(void)call;
	err = xd_node_arg(s, a->node, &n);
	if (!err)
		err = cudaGraphChildGraphNodeGetGraph(n, &g);
	if (!err)
		err = xd_graph_lend(s, g, a->node, &r->pGraph);
	return err;
}

int xd_op_graph_event_node_get_event(
		struct xd_session *s,
		const struct xcuda_graph_event_node_get_event_args *a,
		struct xcuda_graph_event_node_get_event_res *r,
		struct xd_call *call)
{
	cudaGraphNode_t n;
	cudaEvent_t ev = NULL;
	int err;

	(void)call;
	if (a->wait > 1)
		return cudaErrorInvalidValue;
	err = xd_node_arg(s, a->node, &n);
	if (err)
		return err;
	err = a->wait ? cudaGraphEventWaitNodeGetEvent(n, &ev) :
		cudaGraphEventRecordNodeGetEvent(n, &ev);
	if (err)
		return err;
	r->event = xd_find(&s->events, ev);
	return r->event ? 0 : cudaErrorInvalidResourceHandle;
}

/* ---- kernel node attributes ---- */

int xd_op_graph_kernel_node_attribute(
		struct xd_session *s,
		const struct xcuda_graph_kernel_node_attribute_args *a,
		struct xd_call *call)
{
	struct xcuda_launch_attr rec;
	struct xd_attrs *at = NULL;
	cudaLaunchAttributeValue v;
	cudaGraphNode_t n;
	uint8_t *buf;
	uint64_t h;
	int err;

	(void)call;
	if (a->set > 1 || a->attr.len != sizeof(rec))
		return cudaErrorInvalidValue;
	err = xd_node_arg(s, a->node, &n);
	if (err)
		return err;
	/* The one read of the guest's record. */
	buf = xd_arena_copy(s, &a->attr, sizeof(rec));
	if (!buf)
		return cudaErrorMemoryAllocation;
	memcpy(&rec, buf, sizeof(rec));
	if (a->set) {
		/* As a launch's: events are handles, the rest numbers. */
		at = malloc(sizeof(*at));
		err = at ? xd_launch_attrs(s, (const uint8_t *)&rec, 1, at) :
			cudaErrorMemoryAllocation;
		if (!err)
			err = cudaGraphKernelNodeSetAttribute(n, at->cuda[0].id,
							&at->cuda[0].val);
		free(at);
		free(buf);
		return err;
	}
	memset(&v, 0, sizeof(v));
	err = cudaGraphKernelNodeGetAttribute(n, (cudaKernelNodeAttrID)rec.id,
					      &v);
	if (!err) {
		memcpy(rec.val, &v, sizeof(rec.val));
		switch (rec.id) {
		case cudaLaunchAttributeProgrammaticEvent:
		case cudaLaunchAttributeLaunchCompletionEvent:
			/* Both keep their event first: our handle for it. */
			h = v.programmaticEvent.event ?
				xd_find(&s->events, v.programmaticEvent.event) :
				0;
			if (v.programmaticEvent.event && !h)
				err = cudaErrorInvalidResourceHandle;
			memcpy(rec.val, &h, sizeof(h));
			break;
		default:
			break;
		}
	}
	if (!err) {
		memcpy(buf, &rec, sizeof(rec));
		xd_arena_put(s, &a->attr, buf);
	}
	free(buf);
	return err;
}

/* ---- executable graphs ---- */

int xd_op_graph_instantiate_with_params(
		struct xd_session *s,
		const struct xcuda_graph_instantiate_with_params_args *a,
		struct xcuda_graph_instantiate_with_params_res *r,
		struct xd_call *call)
{
	cudaGraphInstantiateParams ip;
	cudaGraphExec_t x = NULL;
	cudaGraph_t g;
	int err, err2;

	(void)call;
	memset(&ip, 0, sizeof(ip));
	err = xd_graph_arg(s, a->graph, &g);
	if (!err)
		err = xd_stream_lookup(&s->streams, a->stream,
				       &ip.uploadStream);
	if (err)
		return err;
	ip.flags = a->flags;
	err = cudaGraphInstantiateWithParams(&x, g, &ip);
	r->result = ip.result_out;
	r->status = (uint32_t)err;
	err2 = xd_node_name(s, ip.errNode_out, a->graph, &r->err_node);
	if (err)
		return err2;
	if (!err2)
		err2 = xd_object_add(&s->objects[XD_H_GRAPHEXEC], x,
				     s->device, 0, &r->exec);
	if (err2)
		cudaGraphExecDestroy(x);
	return err2;
}

int xd_op_graph_exec_update(struct xd_session *s,
			    const struct xcuda_graph_exec_update_args *a,
			    struct xcuda_graph_exec_update_res *r,
			    struct xd_call *call)
{
	cudaGraphExecUpdateResultInfo info;
	cudaGraphExec_t x;
	cudaGraph_t g;
	int err;

	(void)call;
	memset(&info, 0, sizeof(info));
	x = xd_object_get(&s->objects[XD_H_GRAPHEXEC], a->exec);
	err = x ? xd_graph_arg(s, a->graph, &g) :
		cudaErrorInvalidResourceHandle;
	if (err)
		return err;
	r->status = (uint32_t)cudaGraphExecUpdate(x, g, &info);
	r->result = info.result;
	/* Names the guest has not seen yet belong to the graph passed. */
	err = xd_node_name(s, info.errorNode, a->graph, &r->err_node);
	if (!err)
		err = xd_node_name(s, info.errorFromNode, a->graph,
				   &r->err_from);
	return err;
}

int xd_dot_take(int fd, uint32_t room, uint8_t **buf, uint64_t *size)
{
	off_t end = lseek(fd, 0, SEEK_END);

	*buf = NULL;
	if (end < 0)
		return cudaErrorUnknown;
	if ((uint64_t)end > XCUDA_GDOT_MAX || (uint64_t)end > room)
		return cudaErrorMemoryAllocation;
	*buf = calloc(1, room ? room : 1);
	if (!*buf)
		return cudaErrorMemoryAllocation;
	if (pread(fd, *buf, (size_t)end, 0) != end) {
		free(*buf);
		*buf = NULL;
		return cudaErrorUnknown;
	}
	*size = (uint64_t)end;
	return 0;
}

int xd_op_graph_debug_dot_print(
		struct xd_session *s,
		const struct xcuda_graph_debug_dot_print_args *a,
		struct xcuda_graph_debug_dot_print_res *r,
		struct xd_call *call)
{
	char path[64];
	cudaGraph_t g;
	uint8_t *buf = NULL;
	int fd, err;

	(void)call;
	err = xd_graph_arg(s, a->graph, &g);
	if (err)
		return err;
	/* Our own file, never a path the guest names. */
	fd = memfd_create("xcuda-dot", MFD_CLOEXEC);
	if (fd < 0)
		return cudaErrorMemoryAllocation;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = cudaGraphDebugDotPrint(g, path, a->flags);
	if (!err)
		err = xd_dot_take(fd, a->out.len, &buf, &r->size);
	if (!err)
		xd_arena_put(s, &a->out, buf);
	free(buf);
	close(fd);
	return err;
}

/* ---- stream capture ---- */

int xd_op_stream_get_capture_info(
		struct xd_session *s,
		const struct xcuda_stream_get_capture_info_args *a,
		struct xcuda_stream_get_capture_info_res *r,
		struct xd_call *call)
{
	enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	const cudaGraphNode_t *deps = NULL;
	const cudaGraphEdgeData *ed = NULL;
	unsigned long long id = 0;
	cudaStream_t stream;
	cudaGraph_t g = NULL;
	uint32_t *hs = NULL;
	size_t n = 0, i;
	int err;

	(void)call;
	if (a->cap > XCUDA_GLIST_MAX ||
	    a->deps.len < a->cap * sizeof(uint32_t) ||
	    (a->edata.len && a->edata.len < a->cap * sizeof(*ed)))
		return cudaErrorInvalidValue;
	err = xd_stream_lookup(&s->streams, a->stream, &stream);
	if (err)
		return err;
	err = cudaStreamGetCaptureInfo(stream, &st, &id, &g, &deps, &ed, &n);
	if (err)
		return err;
	r->status = st;
	if (st != cudaStreamCaptureStatusActive)
		return 0;
	r->id = id;
	r->ndeps = n;
	if (n > a->cap)
		return cudaErrorMemoryAllocation;
	err = xd_graph_lend(s, g, 0, &r->graph);
	if (err || !n)
		return err;
	hs = calloc(n, sizeof(*hs));
	if (!hs)
		return cudaErrorMemoryAllocation;
	for (i = 0; i < n && !err; i++)
		err = xd_node_name(s, deps[i], r->graph, &hs[i]);
	if (!err) {
		xd_arena_put(s, &(struct xcuda_extent){ a->deps.off,
			     (uint32_t)(n * sizeof(*hs)) }, (uint8_t *)hs);
		if (a->edata.len && ed)
			xd_arena_put(s, &(struct xcuda_extent){ a->edata.off,
				     (uint32_t)(n * sizeof(*ed)) },
				     (const uint8_t *)ed);
	}
	free(hs);
	return err;
}

int xd_op_stream_update_capture_dependencies(
		struct xd_session *s,
		const struct xcuda_stream_update_capture_dependencies_args *a,
		struct xd_call *call)
{
	cudaGraphNode_t *deps = NULL;
	cudaGraphEdgeData *ed = NULL;
	cudaStream_t stream;
	int err;

	(void)call;
	err = xd_stream_lookup(&s->streams, a->stream, &stream);
	if (!err)
		err = xd_nodes_in(s, &a->deps, a->count, &deps);
	if (!err)
		err = xd_edata_in(s, &a->edata, a->count, &ed);
	if (!err)
		err = cudaStreamUpdateCaptureDependencies(stream, deps, ed,
							  a->count, a->flags);
	free(deps);
	free(ed);
	return err;
}

int xd_op_stream_begin_capture_to_graph(
		struct xd_session *s,
		const struct xcuda_stream_begin_capture_to_graph_args *a,
		struct xd_call *call)
{
	cudaGraphNode_t *deps = NULL;
	cudaGraphEdgeData *ed = NULL;
	cudaStream_t stream;
	cudaGraph_t g;
	int err;

	(void)call;
	if (a->rsvd)
		return cudaErrorInvalidValue;
	err = xd_stream_lookup(&s->streams, a->stream, &stream);
	if (!err)
		err = xd_graph_arg(s, a->graph, &g);
	if (!err)
		err = xd_nodes_in(s, &a->deps, a->count, &deps);
	if (!err)
		err = xd_edata_in(s, &a->edata, a->count, &ed);
	if (!err)
		err = cudaStreamBeginCaptureToGraph(
			stream, g, deps, ed, a->count,
			(enum cudaStreamCaptureMode)a->mode);
	free(deps);
	free(ed);
	return err;
}

/* ---- user objects ---- */

/*
 * A user object's entry counts the references the session holds (ref);
 * the session's end releases them (xd_userobj_fini), before the generic
 * teardown, which then has nothing to do.
 */
#define XD_UO_REF_MAX	(1u << 31)

void xd_user_object_keep(cudaUserObject_t object)
{
	(void)object;
}

static struct xd_htab *xd_userobjs(struct xd_session *s)
{
	return &s->objects[XD_H_USEROBJ];
}

/* Drops @count of the session's references to @h's object (CUDA's done). */
static void xd_userobj_drop(struct xd_session *s, uint32_t h, uint32_t count)
{
	struct xd_hent *e = xd_htab_get(xd_userobjs(s), h);

	e->ref -= count;
	if (!e->ref)
		xd_htab_del(xd_userobjs(s), h);
}

/* The object of handle @h of which the session holds @count references. */
static int xd_userobj_arg(struct xd_session *s, uint32_t h, uint32_t count,
			  cudaUserObject_t *o)
{
	struct xd_hent *e = xd_htab_get(xd_userobjs(s), h);

	if (!e)
		return cudaErrorInvalidResourceHandle;
	if (!count || count > e->ref)
		return cudaErrorInvalidValue;
	*o = (cudaUserObject_t)e->ptr;
	return 0;
}

int xd_op_user_object_create(struct xd_session *s,
			     const struct xcuda_user_object_create_args *a,
			     struct xcuda_user_object_create_res *r,
			     struct xd_call *call)
{
	cudaUserObject_t o = NULL;
	struct xd_hent *e;
	void *ud = NULL;
	int err;

	(void)call;
	if (!a->count || a->count > XD_UO_REF_MAX)
		return cudaErrorInvalidValue;
	err = xd_hostfn_ctx_new(s, a->token, XD_HOSTFN_ONESHOT, &ud);
	if (err)
		return err;
	err = cudaUserObjectCreate(&o, ud, xd_hostfn_trampoline, a->count,
				   a->flags);
	if (err) {
		xd_hostfn_ctx_drop(ud);
		return err;
	}
	e = xd_htab_add(xd_userobjs(s), o, &r->object);
	if (!e) {
		/* Its destructor runs in the guest: nothing is lost. */
		cudaUserObjectRelease(o, a->count);
		return cudaErrorMemoryAllocation;
	}
	e->device = s->device;
	e->ref = a->count;
	return 0;
}

int xd_op_user_object_retain(struct xd_session *s,
			     const struct xcuda_user_object_retain_args *a,
			     struct xd_call *call)
{
	struct xd_hent *e = xd_htab_get(xd_userobjs(s), a->object);
	int err;

	(void)call;
	if (!e)
		return cudaErrorInvalidResourceHandle;
	if (!a->count || a->count > XD_UO_REF_MAX - e->ref)
		return cudaErrorInvalidValue;
	err = cudaUserObjectRetain((cudaUserObject_t)e->ptr, a->count);
	if (!err)
		e->ref += a->count;
	return err;
}

int xd_op_user_object_release(struct xd_session *s,
			      const struct xcuda_user_object_release_args *a,
			      struct xd_call *call)
{
	cudaUserObject_t o;
	int err;

	(void)call;
	err = xd_userobj_arg(s, a->object, a->count, &o);
	if (!err)
		err = cudaUserObjectRelease(o, a->count);
	if (!err)
		xd_userobj_drop(s, a->object, a->count);
	return err;
}

int xd_op_graph_retain_user_object(
		struct xd_session *s,
		const struct xcuda_graph_retain_user_object_args *a,
		struct xd_call *call)
{
	struct xd_hent *e = xd_htab_get(xd_userobjs(s), a->object);
	int move = a->flags & cudaGraphUserObjectMove, err;
	cudaUserObject_t o;
	cudaGraph_t g;

	(void)call;
	if (!e)
		return cudaErrorInvalidResourceHandle;
	err = move ? xd_userobj_arg(s, a->object, a->count, &o) : 0;
	o = (cudaUserObject_t)e->ptr;
	if (!err)
		err = xd_graph_arg(s, a->graph, &g);
	if (!err)
		err = cudaGraphRetainUserObject(g, o, a->count, a->flags);
	if (!err && move)
		xd_userobj_drop(s, a->object, a->count);
	return err;
}

/* After the host functions' end (their order 1), before the objects'. */
static void xd_userobj_fini(struct xd_session *s)
{
	struct xd_hent *e;
	uint32_t h;

	for (h = 0; (h = xd_htab_next(xd_userobjs(s), h));) {
		e = xd_htab_get(xd_userobjs(s), h);
		if (e->ref)
			cudaUserObjectRelease((cudaUserObject_t)e->ptr, e->ref);
		xd_htab_del(xd_userobjs(s), h);
	}
}

XD_SESSION_HOOKS(userobj, 14, NULL, xd_userobj_fini);
