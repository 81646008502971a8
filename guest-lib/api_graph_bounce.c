// SPDX-License-Identifier: MIT
/*
 * Graph copies that name pageable memory (graph_bounce.h).
 *
 * A copy from pageable memory P to the device becomes a child graph of
 * two nodes: a host node that copies P into a bounce block B of pinned
 * arena memory, then the copy B -> dst.  A copy to P is the copy src ->
 * B, then a host node that copies B into P.  B has P's layout (pitch,
 * rows, position), so only the bytes the copy touches move, row by row,
 * and bytes of P between rows are never written.  The host node is ours
 * (xc_bounce_run, a function of this library, with our own record): the
 * worker only names it by token.
 *
 * A block lives as long as the graphs that reference it: a CUDA user
 * object retained by the graph the node was added to (and so by its
 * executable graphs and clones) has a destructor, run as a host function
 * here once the last of them is gone, that marks the block dead; the next
 * bounce block frees the dead ones (the destructor must not call CUDA).
 * Should the user object fail, the block stays for the session.  Live
 * blocks take at most half of the arena's pinned heap, so that the
 * program's own cudaMallocHost keeps the rest.  A block that does not
 * fit first frees the dead ones, then waits a little for destructors
 * CUDA may still be running (a graph or executable graph destroyed just
 * before), and only then answers cudaErrorMemoryAllocation.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostfn.h"

#include "graph_bounce.h"

struct xc_bounce {
	int out;		/* 1: B -> P, after the copy */
	int dead;		/* atomic: no graph references it */
	unsigned char *prog;	/* P, the program's side's pointer */
	unsigned char *blk;	/* B, from cudaMallocHost */
	uint64_t size;
	size_t pitch, ysize;
	size_t pos[3], ext[3];
	struct xc_bounce *next;
};

static pthread_mutex_t xc_bounce_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_bounce *xc_bounces;
static uint64_t xc_bounce_live;

unsigned long long xc_bounce_bytes(void)
{
	unsigned long long n;

	pthread_mutex_lock(&xc_bounce_lock);
	n = xc_bounce_live;
	pthread_mutex_unlock(&xc_bounce_lock);
	return n;
}

/* The host node: moves the copy's rows between P and B. */
static void CUDART_CB xc_bounce_run(void *data)
{
	const struct xc_bounce *b = data;
	size_t y, z, off;

	for (z = 0; z < b->ext[2]; z++)
		for (y = 0; y < b->ext[1]; y++) {
			off = ((b->pos[2] + z) * b->ysize + b->pos[1] + y) *
			      b->pitch + b->pos[0];
			if (b->out)
				memcpy(b->prog + off, b->blk + off, b->ext[0]);
			else
				memcpy(b->blk + off, b->prog + off, b->ext[0]);
		}
}

/* The user object's destructor: on the host function thread, no CUDA. */
static void CUDART_CB xc_bounce_dead(void *data)
{
	struct xc_bounce *b = data;

	__atomic_store_n(&b->dead, 1, __ATOMIC_RELEASE);
}

/* The thread's last error as it was before our own calls failed. */
static void xc_bounce_restore(cudaError_t saved)
{
	xc_last_error(1);
	xc_ret(saved);
}

/* Frees the blocks no graph references any more. */
static void xc_bounce_reap(void)
{
	struct xc_bounce **p, *b, *dead = NULL;
	cudaError_t saved;

	pthread_mutex_lock(&xc_bounce_lock);
	for (p = &xc_bounces; (b = *p);) {
		if (__atomic_load_n(&b->dead, __ATOMIC_ACQUIRE)) {
			*p = b->next;
			xc_bounce_live -= b->size;
			b->next = dead;
			dead = b;
		} else {
			p = &b->next;
		}
	}
	pthread_mutex_unlock(&xc_bounce_lock);
	if (!dead)
		return;
	saved = xc_last_error(0);
	while ((b = dead)) {
		dead = b->next;
		cudaFreeHost(b->blk);
		free(b);
	}
	xc_bounce_restore(saved);
}

/* Live blocks' limit: a share of the arena's pinned heap. */
static uint64_t xc_bounce_cap(void)
{
	struct xc_session *s = xc_session_peek();

	if (!s || s->t.arena_size <= s->staging_size)
		return 0;
	return (s->t.arena_size - s->staging_size) / XC_BOUNCE_HEAP_SHARE;
}

/* Whether the limit has room for @span more bytes: then they are taken. */
static int xc_bounce_reserve(uint64_t span, uint64_t cap, int *others)
{
	int ok;

	pthread_mutex_lock(&xc_bounce_lock);
	ok = span <= cap && span <= cap - xc_bounce_live;
	if (ok)
		xc_bounce_live += span;
	*others = xc_bounces != NULL;
	pthread_mutex_unlock(&xc_bounce_lock);
	return ok;
}

static void xc_bounce_unreserve(uint64_t span)
{
	pthread_mutex_lock(&xc_bounce_lock);
	xc_bounce_live -= span;
	pthread_mutex_unlock(&xc_bounce_lock);
}

/*
 * A pinned block of @span bytes, counted in the limit.  When there is no
 * room, neither under the limit nor in the heap, while other blocks
 * live, their destructors may be on their way: the dead ones are freed
 * and it tries again, for XC_BOUNCE_WAIT_MS at most.  Never on the host
 * function thread, which runs the destructors.
 */
static cudaError_t xc_bounce_alloc(uint64_t span, void **blk)
{
	cudaError_t saved = xc_last_error(0), err;
	uint64_t cap = xc_bounce_cap();
	struct timespec nap = { 0, 1000000l };
	static int said;
	unsigned int waited = 0;
	int others;

	for (;;) {
		xc_bounce_reap();
		if (!xc_bounce_reserve(span, cap, &others)) {
			err = cudaErrorMemoryAllocation;
		} else {
			err = cudaMallocHost(blk, span);
			if (!err)
				return cudaSuccess;
			xc_bounce_unreserve(span);
			xc_bounce_restore(saved);
		}
		if (err != cudaErrorMemoryAllocation || !others ||
		    span > cap || waited >= XC_BOUNCE_WAIT_MS ||
		    xc_hostfn_on_runner())
			break;
		nanosleep(&nap, NULL);
		waited++;
	}
	if (err == cudaErrorMemoryAllocation)
		xc_warn_once(&said, "graph copies of pageable memory: no room "
			     "for a bounce block of %llu bytes (live blocks "
			     "take at most %llu; a larger XCUDA_ARENA_MB "
			     "gives more)", (unsigned long long)span,
			     (unsigned long long)cap);
	return err;
}

/* Takes back a block no graph ever referenced. */
static void xc_bounce_drop(struct xc_bounce *b)
{
	__atomic_store_n(&b->dead, 1, __ATOMIC_RELEASE);
	xc_bounce_reap();
}

/* Bytes from a side's pointer to the end of what the copy touches. */
static int xc_bounce_span(const struct cudaPitchedPtr *pp,
			  const struct cudaPos *pos, struct cudaExtent ext,
			  uint64_t *span)
{
	unsigned __int128 rows, end;
	size_t ysize = pp->ysize ? pp->ysize : 1;

	if (ext.height > 1 || ext.depth > 1) {
		if (pos->x + ext.width > pp->pitch)
			return -1;
	}
	rows = ((unsigned __int128)pos->z + ext.depth - 1) * ysize +
	       pos->y + ext.height - 1;
	end = rows * pp->pitch + pos->x + ext.width;
	if (end > (1ull << 62))
		return -1;
	*span = (uint64_t)end;
	return 0;
}

/*
 * A new block for the copy @p whose side @which is pageable; the copy's
 * parameters in @q then name the block instead.
 */
static cudaError_t xc_bounce_new(const struct cudaMemcpy3DParms *p, int which,
				 struct cudaMemcpy3DParms *q,
				 struct xc_bounce **out)
{
	const struct cudaPitchedPtr *pp = which == XC_BOUNCE_SRC ?
		&p->srcPtr : &p->dstPtr;
	const struct cudaPos *pos = which == XC_BOUNCE_SRC ?
		&p->srcPos : &p->dstPos;
	struct cudaExtent ext = p->extent;
	struct cudaPitchedPtr pitched;
	struct xc_bounce *b;
	cudaError_t err;
	uint64_t span;
	void *blk;

	*q = *p;
	if (!ext.width || !ext.height || !ext.depth || !pp->ptr)
		return cudaErrorInvalidValue;
	if (which == XC_BOUNCE_SRC ? p->dstArray : p->srcArray) {
		/* The width counts the array's elements: bytes here. */
		uint64_t es;

		err = xc_array_elem_size(which == XC_BOUNCE_SRC ?
					 p->dstArray : p->srcArray, &es, NULL);
		if (err)
			return err;
		if (__builtin_mul_overflow(ext.width, es, &ext.width))
			return cudaErrorInvalidValue;
	}
	pitched = *pp;
	if (!pitched.pitch) {
		/* A single row needs no pitch. */
		if (ext.height > 1 || ext.depth > 1)
			return cudaErrorInvalidValue;
		pitched.pitch = pos->x + ext.width;
	}
	pp = &pitched;
	if (xc_bounce_span(pp, pos, ext, &span))
		return cudaErrorInvalidValue;
	b = calloc(1, sizeof(*b));
	if (!b)
		return cudaErrorMemoryAllocation;
	err = xc_bounce_alloc(span, &blk);
	if (err) {
		free(b);
		return err;
	}
	b->out = which == XC_BOUNCE_DST;
	b->prog = pp->ptr;
	b->blk = blk;
	b->size = span;
	b->pitch = pp->pitch;
	b->ysize = pp->ysize ? pp->ysize : 1;
	b->pos[0] = pos->x;
	b->pos[1] = pos->y;
	b->pos[2] = pos->z;
	b->ext[0] = ext.width;
	b->ext[1] = ext.height;
	b->ext[2] = ext.depth;
	if (which == XC_BOUNCE_SRC)
		q->srcPtr.ptr = blk;
	else
		q->dstPtr.ptr = blk;
	pthread_mutex_lock(&xc_bounce_lock);
	b->next = xc_bounces;
	xc_bounces = b;
	pthread_mutex_unlock(&xc_bounce_lock);
	*out = b;
	return cudaSuccess;
}

/* The block goes when @graph and what was made from it are gone. */
static void xc_bounce_tie(struct xc_bounce *b, cudaGraph_t graph)
{
	cudaError_t saved = xc_last_error(0);
	cudaUserObject_t uo;

	/* If the graph refuses it, the block stays: never freed too soon. */
	if (!cudaUserObjectCreate(&uo, b, xc_bounce_dead, 1,
				  cudaUserObjectNoDestructorSync))
		cudaGraphRetainUserObject(graph, uo, 1,
					  cudaGraphUserObjectMove);
	xc_bounce_restore(saved);
}

/* The child graph: the host node and the copy, in the copy's order. */
static cudaError_t xc_bounce_graph(struct xc_bounce *b,
				   const struct cudaMemcpy3DParms *q,
				   cudaGraph_t *cg)
{
	struct cudaHostNodeParams hp = { xc_bounce_run, b };
	cudaGraphNode_t nh, nc;
	cudaError_t err;

	err = cudaGraphCreate(cg, 0);
	if (err)
		return err;
	if (b->out) {
		err = cudaGraphAddMemcpyNode(&nc, *cg, NULL, 0, q);
		if (!err)
			err = cudaGraphAddHostNode(&nh, *cg, &nc, 1, &hp);
	} else {
		err = cudaGraphAddHostNode(&nh, *cg, NULL, 0, &hp);
		if (!err)
			err = cudaGraphAddMemcpyNode(&nc, *cg, &nh, 1, q);
	}
	if (err) {
		cudaGraphDestroy(*cg);
		*cg = NULL;
	}
	return err;
}

/* Adds the bounced copy to @graph as one child graph node. */
static cudaError_t xc_bounce_add(cudaGraphNode_t *pnode, cudaGraph_t graph,
				 const cudaGraphNode_t *deps,
				 const cudaGraphEdgeData *edata, size_t ndeps,
				 const struct cudaMemcpy3DParms *p, int which)
{
	struct cudaGraphNodeParams np;
	struct cudaMemcpy3DParms q;
	struct xc_bounce *b;
	cudaGraph_t cg;
	cudaError_t err;

	if (which != XC_BOUNCE_SRC && which != XC_BOUNCE_DST)
		return cudaErrorInvalidValue;
	err = xc_bounce_new(p, which, &q, &b);
	if (err)
		return err;
	err = xc_bounce_graph(b, &q, &cg);
	if (err) {
		xc_bounce_drop(b);
		return err;
	}
	memset(&np, 0, sizeof(np));
	np.type = cudaGraphNodeTypeGraph;
	np.graph.graph = cg;
	err = cudaGraphAddNode(pnode, graph, deps, edata, ndeps, &np);
	/* The node holds a clone: ours goes. */
	cudaGraphDestroy(cg);
	if (err) {
		xc_bounce_drop(b);
		return err;
	}
	xc_bounce_tie(b, graph);
	return cudaSuccess;
}

cudaError_t xc_bounce_node(cudaGraphNode_t *pnode, cudaGraph_t graph,
			   const cudaGraphNode_t *deps,
			   const cudaGraphEdgeData *edata, size_t ndeps,
			   const struct cudaMemcpy3DParms *p, int which)
{
	cudaError_t err = xc_bounce_add(pnode, graph, deps, edata, ndeps, p,
					which);

	return err ? xc_ret(err) : cudaSuccess;
}

/* Hidden by the headers without --default-stream per-thread. */
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
	enum cudaStreamCaptureStatus *captureStatus_out,
	unsigned long long *id_out, cudaGraph_t *graph_out,
	const cudaGraphNode_t **dependencies_out,
	const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out);
cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(
	cudaStream_t stream, cudaGraphNode_t *dependencies,
	const cudaGraphEdgeData *dependencyData, size_t numDependencies,
	unsigned int flags);

int xc_bounce_capture(void *dst, const void *src, size_t count,
		      enum cudaMemcpyKind kind, cudaStream_t stream,
		      int per_thread, int which, cudaError_t *err)
{
	enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
	cudaError_t saved = xc_last_error(0);
	const cudaGraphNode_t *deps = NULL;
	const cudaGraphEdgeData *ed = NULL;
	struct cudaMemcpy3DParms p;
	cudaGraphNode_t node;
	cudaGraph_t graph = NULL;
	size_t n = 0;
	cudaError_t e;

	e = per_thread ?
		cudaStreamGetCaptureInfo_ptsz(stream, &st, NULL, &graph, &deps,
					      &ed, &n) :
		cudaStreamGetCaptureInfo(stream, &st, NULL, &graph, &deps,
					 &ed, &n);
	if (e || st != cudaStreamCaptureStatusActive || !graph) {
		/* Not captured, or not legally: the usual path answers. */
		xc_bounce_restore(saved);
		return 0;
	}
	memset(&p, 0, sizeof(p));
	p.srcPtr = (struct cudaPitchedPtr){ (void *)src, count, count,
					    1 };
	p.dstPtr = (struct cudaPitchedPtr){ dst, count, count, 1 };
	p.extent = (struct cudaExtent){ count, 1, 1 };
	p.kind = kind;
	/*
	 * The bounce block is pinned memory, which a global capture would
	 * refuse to allocate: relaxed for this thread meanwhile.
	 */
	*err = cudaThreadExchangeStreamCaptureMode(&mode);
	if (*err)
		return 1;
	*err = xc_bounce_add(&node, graph, deps, ed, n, &p, which);
	cudaThreadExchangeStreamCaptureMode(&mode);
	if (!*err)
		*err = per_thread ?
			cudaStreamUpdateCaptureDependencies_ptsz(
				stream, &node, NULL, 1,
				cudaStreamSetCaptureDependencies) :
			cudaStreamUpdateCaptureDependencies(
				stream, &node, NULL, 1,
				cudaStreamSetCaptureDependencies);
	if (*err)
		*err = xc_ret(*err);
	return 1;
}
